//! `dogana claims LEDGER [--at TIME] [--limit-days DAYS] [--window LOW HIGH] [--json]`: what a
//! ledger document claims at the reader's time (CLI-20 to CLI-28). `dogana claims --store DB
//! TABLE [...]` reads the ledger a receiver's store holds for TABLE instead ([`receiver`]), and
//! prints the same lines.
//!
//! One line per region, in ledger order, cut to the window (CLI-24, CLI-25), then the table's
//! line (CLI-26). The formats are the core's: `RegionClaim`'s `Display` and the table line of
//! `Ledger::each_claim` (`Claims::summary`).
//! This command is the edge where the clock is read: `--at` defaults to now (CLI-21).

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use dogana::{Claims, Duration, Timestamp, Wire};

use crate::cli::ClaimsArgs;
use crate::commands::receiver;
use crate::input;
use crate::output;
use crate::refusal::{refuse, Refusal, Result};
use crate::typed;
use dogana_codes as codes;

/// The current time, read once.
pub fn now() -> Result<Timestamp> {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_micros()).ok())
        .and_then(Timestamp::from_micros);
    match micros {
        Some(t) => Ok(t),
        None => refuse!(
            codes::OPTION_INVALID,
            "the system clock is outside the protocol's domain; pass --at TIME"
        ),
    }
}

/// Writes the claims lines: every region, then the table line. The table name and string
/// bounds come from a ledger someone else wrote: they are shown, never executed
/// ([`output::sender_text`]).
pub fn print(claims: &Claims, table: &str, out: &mut impl Write) -> std::io::Result<()> {
    for region in claims.regions() {
        writeln!(out, "{}", output::sender_text(&region.to_string()))?;
    }
    writeln!(out, "{}", output::sender_text(&claims.summary(table)))
}

/// The table's two dates on a line of their own: the minima over its regions (`unknown` when
/// some region has none), which stay visible when recent changes have raised every
/// completeness date but one.
pub fn dates_line(claims: &Claims, table: &str) -> String {
    let show = |t: Option<Timestamp>| t.map_or_else(|| "unknown".to_owned(), |t| t.to_string());
    format!(
        "{table}: complete as of {}; deletions as of {}",
        show(claims.complete_as_of()),
        show(claims.deletions_as_of())
    )
}

/// The `--json` document with `--dates`: the Claims document and the table's dates.
pub fn dated_json(claims: &Claims, tables: &[&str]) -> String {
    let show = |t: Option<Timestamp>| {
        t.map_or(serde_json::Value::Null, |t| {
            serde_json::Value::String(t.to_string())
        })
    };
    let mut dates = serde_json::Map::new();
    dates.insert("complete_as_of".into(), show(claims.complete_as_of()));
    dates.insert("deletions_as_of".into(), show(claims.deletions_as_of()));
    dates.insert("exact_as_of".into(), show(claims.exact_as_of()));
    dates.insert(
        "tables".into(),
        serde_json::Value::Array(tables.iter().map(|t| (*t).into()).collect()),
    );
    let mut obj = serde_json::Map::new();
    obj.insert("claims".into(), claims.to_value());
    obj.insert("dates".into(), serde_json::Value::Object(dates));
    format!(
        "{}\n",
        dogana_json::canonical(&serde_json::Value::Object(obj))
    )
}

pub fn run(a: ClaimsArgs) -> Result<()> {
    if !a.tables.is_empty() {
        return crate::commands::plan::group_claims(a);
    }
    // With --store the positional names the table (`dogana claims --store DB TABLE`).
    let (ledger, value) = match (&a.store, &a.ledger) {
        (Some(db), Some(table)) => (receiver::stored_ledger(db, table)?, None),
        (Some(_), None) => crate::cli::usage_error(
            "claims",
            "--store DB reads the ledger of a table: name it, as in dogana claims --store DB TABLE",
        ),
        (None, Some(path)) => input::ledger(path)?,
        (None, None) => crate::cli::usage_error("claims", "name the LEDGER document"),
    };
    let at = match &a.at {
        Some(text) => typed::time("--at", text)?,
        None => now()?,
    };
    // Without --limit-days nothing expires (CLI-22).
    let limit = a.limit_days.unwrap_or(Duration::MAX);
    let window = match &a.window {
        Some(bounds) if bounds.len() != 2 => crate::cli::usage_error(
            "claims",
            "--window takes two values, LOW HIGH (--window TABLE=LOW,HIGH is for several tables read together)",
        ),
        Some(bounds) => Some(typed::window(
            ledger.contract(),
            bounds,
            "drop --window to see the whole table",
        )?),
        None => None,
    };
    let cut = |e: dogana::InvalidContract| -> Refusal {
        Refusal::new(
            codes::OPTION_INVALID,
            format!("cannot cut the claims: {}; fix --window", e.problem()),
        )
    };
    if a.json || a.dates {
        let claims = ledger.claims(at, limit, window.as_ref()).map_err(cut)?;
        let table = ledger.contract().table();
        let bytes = match (a.json, a.dates) {
            (true, true) => output::json_text(&dated_json(&claims, &[table]))
                .into_owned()
                .into_bytes(),
            (true, false) => output::json_text(&format!("{}\n", claims.to_json()))
                .into_owned()
                .into_bytes(),
            _ => {
                let mut buf = Vec::with_capacity(128 * (claims.regions().len() + 2));
                print(&claims, table, &mut buf).expect("writing to memory");
                buf.extend_from_slice(output::sender_text(&dates_line(&claims, table)).as_bytes());
                buf.push(b'\n');
                buf
            }
        };
        std::mem::forget((value, ledger, claims));
        return output::stdout(&bytes);
    }
    // The lines are written as they are made, one region's claim at a time: a ledger of
    // 100,000 regions would otherwise hold its claims and 13 MB of text at once (bench/cli.md).
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut failed: Option<std::io::Error> = None;
    let table = ledger
        .each_claim(at, limit, window.as_ref(), |region| {
            if failed.is_none() {
                if let Err(e) = writeln!(out, "{}", output::sender_text(&region.to_string())) {
                    failed = Some(e);
                }
            }
        })
        .map_err(cut)?;
    let written = match failed {
        Some(e) => Err(e),
        None => writeln!(out, "{}", output::sender_text(&table)).and_then(|()| out.flush()),
    };
    // Freeing a ledger of 100,000 regions takes a good part of the command's time; the
    // process is about to end, which frees it at once.
    std::mem::forget((value, ledger));
    match written {
        Ok(()) => Ok(()),
        // A closed pipe (`dogana claims ... | head`) is not an error, as in `output::stdout`.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => refuse!(
            codes::OUTPUT_UNWRITABLE,
            "cannot write to standard output: {e}"
        ),
    }
}

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

use dogana::{Duration, Timestamp, Wire};

use crate::cli::ClaimsArgs;
use crate::commands::receiver;
use crate::input;
use crate::output;
use crate::refusal::{refuse, Refusal, Result};
use crate::typed;

/// The current time, read once.
pub fn now() -> Result<Timestamp> {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_micros()).ok())
        .and_then(Timestamp::from_micros);
    match micros {
        Some(t) => Ok(t),
        None => refuse!("the system clock is outside the protocol's domain; pass --at TIME"),
    }
}

pub fn run(a: ClaimsArgs) -> Result<()> {
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
        Some(bounds) => Some(typed::window(
            ledger.contract(),
            bounds,
            "drop --window to see the whole table",
        )?),
        None => None,
    };
    let cut = |e: dogana::InvalidContract| -> Refusal {
        Refusal::new(format!(
            "cannot cut the claims: {}; fix --window",
            e.problem()
        ))
    };
    if a.json {
        let claims = ledger.claims(at, limit, window.as_ref()).map_err(cut)?;
        let bytes = format!("{}\n", claims.to_json()).into_bytes();
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
                if let Err(e) = writeln!(out, "{region}") {
                    failed = Some(e);
                }
            }
        })
        .map_err(cut)?;
    let written = match failed {
        Some(e) => Err(e),
        None => writeln!(out, "{table}").and_then(|()| out.flush()),
    };
    // Freeing a ledger of 100,000 regions takes a good part of the command's time; the
    // process is about to end, which frees it at once.
    std::mem::forget((value, ledger));
    match written {
        Ok(()) => Ok(()),
        // A closed pipe (`dogana claims ... | head`) is not an error, as in `output::stdout`.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => refuse!("cannot write to standard output: {e}"),
    }
}

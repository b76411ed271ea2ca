//! `dogana claims LEDGER [--at TIME] [--limit-days DAYS] [--window LOW HIGH] [--json]`: what a
//! ledger document claims at the reader's time (CLI-20 to CLI-28). `dogana claims --store DB
//! TABLE [...]` reads the ledger a receiver's store holds for TABLE instead ([`receiver`]), and
//! prints the same lines.
//!
//! One line per region, in ledger order, cut to the window (CLI-24, CLI-25), then the table's
//! line (CLI-26). The formats are the core's: `RegionClaim`'s `Display` and `Claims::summary`.
//! This command is the edge where the clock is read: `--at` defaults to now (CLI-21).

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use dogana::{Claims, Duration, Timestamp, Wire};

use crate::cli::ClaimsArgs;
use crate::commands::receiver;
use crate::input;
use crate::output;
use crate::refusal::{refuse, Result};
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

/// Writes the claims lines: every region, then the table line. The table name and string
/// bounds come from a ledger someone else wrote: they are shown, never executed
/// ([`output::sender_text`]).
pub fn print(claims: &Claims, table: &str, out: &mut impl Write) -> std::io::Result<()> {
    for region in claims.regions() {
        writeln!(out, "{}", output::sender_text(&region.to_string()))?;
    }
    writeln!(out, "{}", output::sender_text(&claims.summary(table)))
}

pub fn run(a: ClaimsArgs) -> Result<()> {
    // With --store the positional names the table (`dogana claims --store DB TABLE`).
    let (ledger, value) = match (&a.store, &a.ledger) {
        (Some(db), Some(table)) => (receiver::stored_ledger(db, table)?, None),
        (Some(_), None) => crate::cli::usage_error(
            "claims",
            "--store DB reads the ledger of a table: name it, as in dogana claims --store DB TABLE",
        ),
        (None, Some(path)) => {
            let (ledger, value) = input::ledger(path)?;
            (ledger, Some(value))
        }
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
    let claims = match ledger.claims(at, limit, window.as_ref()) {
        Ok(c) => c,
        Err(e) => refuse!("cannot cut the claims: {}; fix --window", e.problem()),
    };
    let bytes = if a.json {
        format!("{}\n", claims.to_json()).into_bytes()
    } else {
        let mut buf = Vec::with_capacity(128 * (claims.regions().len() + 1));
        print(&claims, ledger.contract().table(), &mut buf).expect("writing to memory");
        buf
    };
    // Freeing a ledger of 100,000 regions, its JSON and its claims takes a fifth of a second;
    // the process is about to end, which frees them at once (bench/cli.md).
    std::mem::forget((value, ledger, claims));
    output::stdout(&bytes)
}

//! `dogana`: the command line of the dogana protocol, as a library the binary calls.
//!
//! It writes a manifest for a delivered file, checks a file against its manifest, prints what a
//! ledger claims, and turns a short TOML description into a contract. It hashes files but never
//! parses them (CLI-02): every decision is the `dogana` crate's. The receiver commands
//! (`deliver`, `receipts`, `verify`, `claims --store`) call the delivery engine of `dogana-receiver` on the store `dogana-stores` opens,
//! which reads and checks the rows.
//!
//! Exit status (CLI-29): 0 on success, 1 when dogana refuses (an invalid contract, manifest or
//! ledger, a mismatch, an unreadable file, an existing manifest, a rejected delivery), 2 when
//! the command is called wrongly (clap's usage errors), 3 when a receiver's command failed for
//! a reason retrying can fix (a lock held past the wait, a lost connection, a full disk; never
//! a decision). Every error is one line on standard error, `error[DGN-…]: ` and what is wrong
//! and what to do, or with `--json` one JSON object; its stable code is listed in
//! `docs/errors.md` (`dogana_codes`).

//!
//! The binary (`src/main.rs`) is one call to [`run`]; the modules stay private, since the
//! command line's interface is its arguments, its output and its exit status, not Rust items.
//! [`fuzz`] opens the parsers a fuzz target reaches that no library crate holds.

#![forbid(unsafe_code)]

mod cli;
mod columns;
mod columns_from;
mod commands;
mod input;
mod output;
mod progress;
mod refusal;
mod toml_contract;
mod typed;

use std::process::ExitCode;

use clap::Parser;

/// Whether the call asks for JSON (`--json` before any `--`): its errors are then one JSON
/// object on standard error, usage errors included.
fn json_requested() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// Runs the command line on the process's arguments, returning its exit status.
pub fn run() -> ExitCode {
    let json = json_requested();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            // --help and --version print and exit 0; a usage error exits 2 (clap's text, or
            // with --json one object of code DGN-001)
            if !json || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                e.exit();
            }
            let message = e.kind().as_str().unwrap_or("the command is called wrongly");
            let detail = e.render().to_string();
            let first = detail.lines().next().unwrap_or(message);
            refusal::Refusal::new(
                dogana_codes::USAGE,
                first.strip_prefix("error: ").unwrap_or(first),
            )
            .print(true);
            return ExitCode::from(dogana_codes::USAGE.kind.exit_status());
        }
    };
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(refusal) => {
            refusal.print(json);
            ExitCode::from(refusal.exit_status())
        }
    }
}

/// What the fuzz targets in `fuzz/` call: not a stable interface.
#[doc(hidden)]
pub mod fuzz {
    use std::path::Path;

    /// Reads a TOML contract description as `dogana contract` does, its relative
    /// `columns_from` paths starting from `base`; a refusal is its stable code and the message
    /// the command would print.
    pub fn toml_contract(
        text: &str,
        base: &Path,
    ) -> Result<dogana::Contract, (&'static str, String)> {
        crate::toml_contract::parse(text, "fuzz.toml", base, None)
            .map(|parsed| parsed.contract)
            .map_err(|r| (r.code().id, r.to_string()))
    }
}

//! `dogana`: the command line of the dogana protocol.
//!
//! It writes a manifest for a delivered file, checks a file against its manifest, prints what a
//! ledger claims, and turns a short TOML description into a contract. It hashes files but never
//! parses them (CLI-02): every decision is the `dogana` crate's. The receiver commands
//! (`deliver`, `receipts`, `verify`, `claims --store`) call the delivery engine of `dogana-receiver` on the store `dogana-stores` opens,
//! which reads and checks the rows.
//!
//! Exit status (CLI-29): 0 on success, 1 when dogana refuses (an invalid contract, manifest or
//! ledger, a mismatch, an unreadable file, an existing manifest), 2 when the command is called
//! wrongly (clap's usage errors). Every refusal is one line on standard error saying what is wrong
//! and what to do.

#![forbid(unsafe_code)]

mod cli;
mod columns;
mod commands;
mod input;
mod output;
mod progress;
mod refusal;
mod toml_contract;
mod typed;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Usage errors exit 2 and --help/--version exit 0, inside parse.
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(refusal) => {
            refusal.print();
            ExitCode::from(1)
        }
    }
}

//! One module per command. Each takes its parsed arguments and returns `Ok` or a
//! [`Refusal`](crate::refusal::Refusal); `main` turns the result into the exit status.
//!
//! Layout:
//! - sender side, no store: [`manifest`], [`check`], [`contract`] (its columns read from an
//!   ODCS document, a dbt manifest, a live table or a Parquet file: `columns_from`);
//! - service levels: [`sla`] (an ODCS document's slaProperties against a store's claims);
//! - reader side: [`claims`] (from a ledger document, or from a store with `--store DB TABLE`);
//! - receiver side, on any store `--store` names: [`receiver`] (`deliver`, `receipts`, `verify`,
//!   and the ledger `claims --store` reads);
//! - reading and planning from a store: [`plan`] (`ledger`, `plan`, `plan --together`, `next`);
//! - documents: [`identity`], [`canonical`]; and [`completions`];
//! - the lake store's own verbs: [`lake`] (`fold`, `collect`, `replicate`);
//! - the page: [`show`] (`dogana_show`), reading a store through [`show::load`] only.
//!
//! Shared pieces: `input` (contracts in JSON or TOML, manifests, ledgers), `typed` (option values
//! typed by the contract), `output` (standard output, atomic writes), `progress` (the spinner of a
//! long delivery).

pub mod canonical;
pub mod check;
pub mod claims;
pub mod completions;
pub mod contract;
pub mod identity;
pub mod lake;
pub mod manifest;
pub mod plan;
pub mod receiver;
pub mod serve;
pub mod show;
pub mod sla;
pub mod sync;

use crate::cli::{Cli, Command};
use crate::refusal::Result;

/// Runs the command.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Manifest(a) => manifest::run(a),
        Command::Check(a) => check::run(a),
        Command::Claims(a) => claims::run(a),
        Command::Deliver(a) => {
            // a mistyped or repeated --column-type is refused before anything is read, and a
            // missing data file is named as such (not as its missing manifest)
            crate::columns::parse_options(&a.column_types)?;
            for file in &a.files {
                crate::input::data_file(file)?;
            }
            receiver::deliver(a)
        }
        Command::Receipts(a) => receiver::receipts(a),
        Command::Verify(a) => receiver::verify(a),
        Command::Ledger(a) => plan::ledger(a),
        Command::Plan(a) => plan::plan(a),
        Command::Next(a) => plan::next(a),
        Command::Show(a) => show::run(a),
        Command::Fold(a) => lake::fold(a),
        Command::Collect(a) => lake::collect(a),
        Command::Replicate(a) => lake::replicate(a),
        Command::DuckdbSql(a) => lake::duckdb_sql(a),
        Command::Push(a) => sync::push(a),
        Command::Pull(a) => sync::pull(a),
        Command::Contract(a) => contract::run(a),
        Command::Sla(a) => sla::run(a),
        Command::Serve(a) => serve::serve(a),
        Command::Watch(a) => serve::watch(a),
        Command::Identity(a) => identity::run(a),
        Command::Canonical(a) => canonical::run(a),
        Command::Completions(a) => completions::run(a),
    }
}

/// The gate's `manifest` check of `manifest` against `contract` (GATE-03): the declarations
/// agree with each other and with the contract, schema hash included; then the `transition`
/// refusal every ledger would give it (`Gate::refused_by_every_ledger`: a read of changes
/// whose since is after its produced_at, TRANS-08), so that a sender's tools refuse what no
/// receiver can accept. Returns the check's detail when it passes, and the failure's
/// detail otherwise.
pub fn manifest_check(
    contract: &dogana::Contract,
    manifest: &dogana::Manifest,
) -> std::result::Result<String, String> {
    let ledger = dogana::Ledger::new(contract.clone());
    let checks = dogana::Gate::preflight(&ledger, manifest, manifest.produced_at());
    let check = checks
        .iter()
        .find(|c| c.name() == "manifest")
        .expect("preflight always runs the manifest check");
    if !check.passed() {
        return Err(check.detail().to_owned());
    }
    if let Some(refused) = dogana::Gate::refused_by_every_ledger(manifest) {
        return Err(refused.problem.to_string());
    }
    Ok(check.detail().to_owned())
}

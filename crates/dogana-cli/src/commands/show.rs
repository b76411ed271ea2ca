//! `dogana show --store DB TABLE [TABLE...] [--at TIME] [--limit-days DAYS] -o FILE.html` and
//! `dogana show --ledger LEDGER.json --receipts RECEIPTS.json [...] -o FILE.html`: one
//! self-contained HTML page of the tables' regions, their history replayed from the receipts,
//! their refusals and their common exact instant ([`dogana_show::render`]).
//!
//! The store is read through [`load`] alone, so that another backend needs one more function
//! here and nothing else. The page is made in memory first: a refusal writes nothing.

use std::path::Path;

use dogana::{FromWire, Ledger, Receipt};
use dogana_show::{render, Options, TableHistory};

use crate::cli::ShowArgs;
use crate::commands::{claims, receiver};
use crate::input::{self, shown};
use crate::output;
use crate::refusal::{refuse, Refusal, Result};
use crate::typed;
use dogana_codes as codes;

/// The ledger and the receipts a store of any backend holds for `table`, read without
/// changing anything: a missing path, a directory and a file that is not a dogana store are
/// refused.
pub fn load(store: &Path, table: &str) -> Result<TableHistory> {
    let failed = |what: &str, e: &dogana_receiver::StoreError| {
        Refusal::new(
            dogana_stores::code_of(e),
            format!(
                "{what} failed on store {}: {e}; nothing was written",
                receiver::shown(store)
            ),
        )
    };
    let mut db = receiver::open_reader(store)?;
    let ledger = db
        .ledger(table)
        .map_err(|e| failed("reading the ledger", &e))?;
    let receipts: Vec<Receipt> = db
        .receipts(table)
        .map_err(|e| failed("reading the receipts", &e))?
        .into_iter()
        .map(|r| r.receipt)
        .collect();
    if receipts.is_empty() {
        if ledger.is_some() {
            refuse!(codes::VERIFY_MISMATCH, "store {} holds a ledger for table {table:?} but no receipt, so there is no history to show; run dogana verify --store {} {table:?}",
                receiver::shown(store),
                receiver::shown(store)
            )
        }
        let known = db.tables().map_err(|e| failed("listing the tables", &e))?;
        let have = if known.is_empty() {
            "it holds no published table".to_owned()
        } else {
            format!("its tables: {}", known.join(", "))
        };
        refuse!(
            codes::TABLE_UNKNOWN,
            "store {} has no receipt and no ledger for table {table:?}; {have}",
            receiver::shown(store)
        )
    }
    Ok(TableHistory { ledger, receipts })
}

/// A ledger document and the receipts `dogana receipts --json` exported (a JSON array).
fn documents(ledger: &Path, receipts: &Path) -> Result<TableHistory> {
    let (ledger, _) = input::ledger(ledger)?;
    let value = input::json(receipts, "receipts")?;
    let Some(items) = value.as_array() else {
        refuse!(codes::DOCUMENT_INVALID, "receipts {} is not a JSON array; export them with dogana receipts --store DB TABLE --json",
            shown(receipts)
        )
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match Receipt::from_value(item) {
            Ok(r) => out.push(r),
            Err(e) => refuse!(
                codes::DOCUMENT_INVALID,
                "receipt {} of {} is refused: {}; export them again with dogana receipts --json",
                i + 1,
                shown(receipts),
                e.0
            ),
        }
    }
    if out.is_empty() {
        refuse!(codes::DOCUMENT_INVALID, "receipts {} is empty, so there is no history to show; name the receipts of ledger's table",
            shown(receipts)
        )
    }
    Ok(TableHistory {
        ledger: Some(ledger),
        receipts: out,
    })
}

pub fn run(a: ShowArgs) -> Result<()> {
    output::check_free(&a.output, a.force, "page")?;
    let at = match &a.at {
        Some(text) => typed::time("--at", text)?,
        None => claims::now()?,
    };
    let limit = a.limit_days.unwrap_or(dogana::Duration::MAX);
    let histories: Vec<TableHistory> = match (&a.store, &a.ledger, &a.receipts) {
        (Some(store), None, None) => {
            if a.tables.is_empty() {
                crate::cli::usage_error(
                    "show",
                    "--store DB shows tables: name them, as in dogana show --store DB TABLE -o FILE.html",
                )
            }
            a.tables
                .iter()
                .map(|t| load(store, t))
                .collect::<Result<_>>()?
        }
        (None, Some(ledger), Some(receipts)) => vec![documents(ledger, receipts)?],
        _ => crate::cli::usage_error(
            "show",
            "name a store and its tables (--store DB TABLE...) or a ledger and its receipts (--ledger PATH --receipts PATH)",
        ),
    };
    let page = match render(&histories, &Options::new(at, limit)) {
        Ok(p) => p,
        Err(e) => refuse!(codes::LEDGER_INVALID, "cannot show the tables: {e}"),
    };
    output::file(&a.output, page.as_bytes(), a.force, "page")?;
    let receipts: usize = histories.iter().map(|h| h.receipts.len()).sum();
    let regions: usize = histories
        .iter()
        .map(|h| h.ledger.as_ref().map_or(1, Ledger::region_count))
        .sum();
    output::stdout(
        format!(
            "wrote {} ({} bytes): {} table{}, {receipts} receipts, {regions} regions\n",
            shown(&a.output),
            page.len(),
            histories.len(),
            if histories.len() == 1 { "" } else { "s" },
        )
        .as_bytes(),
    )
}

//! The receiver commands, on any store `dogana-stores` opens (`--store` names it: a SQLite
//! file by default, DuckDB for a `.duckdb` path or `duckdb:PATH` in a build with that backend):
//!
//! - `dogana deliver FILE --store DB --contract PATH [--manifest PATH] [--at TIME] [--source
//!   TEXT] [--format FORMAT] [--column-type NAME=TYPE]... [--json]`: one delivery, decided and
//!   committed by `Store::deliver_with` in the protocol's order (RECV-01 to RECV-10, LOADER-01
//!   to LOADER-05). Prints the decision: the outcome, every check, the plan and the table's
//!   claims line. Exit 0 accepted or replayed, 1 rejected (the receipt is kept) or refused
//!   (nothing is stored).
//! - `dogana receipts --store DB TABLE [--json]`: every receipt kept, in order (RECV-11).
//! - `dogana verify --store DB [TABLE]`: each stored ledger against the fold of its accepted
//!   receipts (RECV-12); exit 1 when one differs.
//! - `claims --store DB TABLE` reads its ledger through [`stored_ledger`].
//!
//! The receiver parses rows; this command line only calls it. Every decision is the store's
//! and the `dogana` crate's.

use std::path::Path;

use dogana::{Duration, Ledger, Outcome, Receipt, Wire};
use dogana_receiver::{AnyStore, DeliverOptions, Delivery, Format, StoreError};
use dogana_stores::Spec;
use serde_json::Value;

use crate::cli::{DeliverArgs, FileFormat, ReceiptsArgs, VerifyArgs};
use crate::commands::claims;
use crate::commands::manifest::default_path;
use crate::input;
use crate::output;
use crate::progress::Progress;
use crate::refusal::{refuse, Refusal, Result};
use crate::typed;
use dogana_codes as codes;

/// How many hex characters of a publication id or an identity the lines show.
const SHORT: usize = 12;

fn short(id: &str) -> &str {
    id.get(..SHORT).unwrap_or(id)
}

/// `1 check`, `2 checks`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

impl From<FileFormat> for Format {
    fn from(f: FileFormat) -> Format {
        match f {
            FileFormat::Csv => Format::Csv,
            FileFormat::Ndjson => Format::Ndjson,
            FileFormat::Parquet => Format::Parquet,
        }
    }
}

/// A refusal for a failed store operation: nothing was committed (StoreError's promise). Its
/// code is the error's (`dogana_stores::code_of`): a lock held past the wait, a lost
/// connection or a full disk is transient (exit 3), anything else a refusal.
fn failed(what: &str, db: &Path, e: &StoreError) -> Refusal {
    use dogana_rows::RowsError;
    let code = dogana_stores::code_of(e);
    match e {
        StoreError::Rows(RowsError::ColumnTypesRequired(columns)) => {
            return Refusal::new(code, format!(
                "{what} failed: the column hash needs the type of every column, and the contract does not type {}; pass --column-type NAME=TYPE for each (as in --column-type amount=decimal(12,2)), or a TOML contract whose columns list them; nothing was changed",
                columns.join(", ")
            ))
        }
        StoreError::Rows(RowsError::Unsupported(m)) => {
            return Refusal::new(code, format!(
                "{what} failed: {m}; build dogana with cargo build -p dogana-cli --features parquet, or deliver CSV or NDJSON; nothing was changed"
            ))
        }
        _ => {}
    }
    let hint = match e {
        StoreError::Format(_) => "; name it with --format csv, ndjson or parquet",
        StoreError::Contract(_) => {
            "; the table's key, window, deleted column and their types are fixed: deliver under the contract the store holds"
        }
        StoreError::Corrupt(_) => "; run dogana verify --store DB to see what differs",
        _ => "",
    };
    Refusal::new(
        code,
        format!(
            "{what} failed on store {}: {e}{hint}; nothing was changed",
            shown(db)
        ),
    )
}

/// How a store is shown in messages: as the user wrote it (a `duckdb:` or `sqlite:` prefix
/// kept, so a command the message suggests opens the same store), a URL without its password.
pub fn shown(db: &Path) -> String {
    dogana_stores::without_password(&db.to_string_lossy())
}

/// The store a `--store` value names (see `dogana_stores::Spec`).
fn spec(db: &Path) -> Spec {
    Spec::parse(&db.to_string_lossy())
}

/// Opens the store at `db`: a writer creates it when missing; a reader never creates nor
/// changes anything, and refuses a missing store or a file that is not one.
fn open(db: &Path, create: bool) -> Result<dogana_stores::Opened> {
    open_with(db, create, &dogana_stores::OpenOptions::new())
}

fn open_with(
    db: &Path,
    create: bool,
    options: &dogana_stores::OpenOptions,
) -> Result<dogana_stores::Opened> {
    let spec = spec(db);
    // a command's store outlives it: no empty path, no filesystem root, no in-memory store
    if let Err(e) = spec.check(true) {
        return Err(
            Refusal::new(codes::STORE_SPEC_INVALID, format!("--store: {e}"))
                .at("--store", shown(db)),
        );
    }
    if let Some(path) = spec.path() {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => refuse!(codes::STORE_SPEC_INVALID, "store {} is a directory; name the database file",
                shown(db)
            ),
            Err(_) if !create => refuse!(codes::STORE_MISSING, "store {} does not exist; deliver a file to it first with dogana deliver FILE --store DB --contract PATH",
                shown(db)
            ),
            _ => {}
        }
    }
    dogana_stores::open_with(&spec, create, options).map_err(|e| match e {
        StoreError::Unavailable(m) => Refusal::new(codes::BACKEND_NOT_BUILT, m),
        StoreError::NotAStore(m) => Refusal::new(
            codes::NOT_A_STORE,
            format!(
                "not a dogana store: {m}; name a store made by dogana deliver{}",
                if create { ", or a new file" } else { "" }
            ),
        ),
        e => Refusal::new(
            dogana_stores::code_of(&e),
            format!(
                "cannot open the store {}: {e}; name a dogana store this user can {}",
                shown(db),
                if create { "write" } else { "read" }
            ),
        ),
    })
}

/// Opens the store at `db` for reading only (any backend): nothing in it changes.
pub fn open_reader(db: &Path) -> Result<dogana_stores::Opened> {
    open(db, false)
}

/// The tables of the store: those with a ledger or with any receipt, sorted.
fn tables(store: &mut dyn AnyStore, db: &Path) -> Result<Vec<String>> {
    store
        .tables()
        .map_err(|e| failed("listing the tables", db, &e))
}

/// Refuses a table the store knows nothing of, naming the ones it has.
fn unknown_table(db: &Path, table: &str, known: &[String]) -> Refusal {
    let have = if known.is_empty() {
        "it holds no table yet".to_owned()
    } else {
        format!("its tables: {}", known.join(", "))
    };
    Refusal::new(
        codes::TABLE_UNKNOWN,
        format!(
            "store {} has no receipt and no ledger for table {table:?}; {have}",
            shown(db)
        ),
    )
}

/// The ledger the store holds for `table`: the stored one, or, for a table with only rejected
/// receipts, the new ledger of the latest receipt's contract (nothing published yet).
pub fn stored_ledger(db: &Path, table: &Path) -> Result<Ledger> {
    let Some(table) = table.to_str() else {
        refuse!(
            codes::TABLE_UNKNOWN,
            "table {} is not UTF-8 text",
            input::shown(table)
        )
    };
    let mut store = open(db, false)?;
    if let Some(ledger) = store
        .ledger(table)
        .map_err(|e| failed("reading the ledger", db, &e))?
    {
        return Ok(ledger);
    }
    let receipts = store
        .receipts(table)
        .map_err(|e| failed("reading the receipts", db, &e))?;
    match receipts.last() {
        Some(r) => Ok(Ledger::new(r.receipt.contract().clone())),
        None => Err(unknown_table(db, table, &tables(store.as_mut(), db)?)),
    }
}

/// The options for reading FILE: its format, and the types of the columns the contract does
/// not bind (from the TOML contract's `columns`, then `--column-type`).
fn deliver_options(
    a: &DeliverArgs,
    contract: &dogana::Contract,
    columns: Vec<(String, String)>,
) -> Result<DeliverOptions> {
    let mut options = DeliverOptions::new().adopt(a.adopt);
    if let Some(format) = a.format {
        options = options.format(format.into());
    }
    // checked: a type of the protocol, no column twice, no bound column
    for (name, ty) in &crate::columns::column_list(contract, &columns, &a.column_types)? {
        options = options.column_type(name, ty.to_string());
    }
    Ok(options)
}

/// The receipt's lines: every check, indented (a replay's original checks in one line), then
/// the plan of an acceptance.
fn decision_lines(out: &mut output::Lines, receipt: &Receipt, redecided: u32) {
    if receipt.replayed() {
        out.line(format!(
            "  the original receipt: received at {}{}, {} passed",
            receipt.received_at(),
            receipt
                .source()
                .map_or(String::new(), |s| format!(" from {s}")),
            count(receipt.checks().len(), "check")
        ));
    } else {
        for check in receipt.checks() {
            out.line(format!("  {check}"));
        }
    }
    if let Some(transition) = receipt.transition() {
        let actions: Vec<String> = transition
            .plan()
            .actions()
            .iter()
            .map(|a| match a.window() {
                Some(w) => format!("{} {w}", a.kind()),
                None => a.kind().to_string(),
            })
            .collect();
        out.line(format!("  plan: {}", actions.join(", ")));
    }
    if redecided > 0 {
        out.line(format!(
            "  decided again ({}): the table moved while the rows were read (RECV-10)",
            count(redecided as usize, "time")
        ));
    }
}

/// The size of a delivered file, refusing one that cannot be read.
fn file_size(path: &Path) -> Result<u64> {
    let file = input::shown(path);
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            refuse!(
                codes::FILE_UNREADABLE,
                "cannot read {file}: it is a directory; name the delivered file"
            )
        }
        Ok(m) => Ok(m.len()),
        Err(e) => {
            refuse!(
                codes::FILE_UNREADABLE,
                "cannot read {file}: {e}; name the delivered file, readable by this user"
            )
        }
    }
}

/// `--lock-timeout SECONDS`.
pub(crate) fn lock_wait(text: &str) -> Result<std::time::Duration> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=86_400.0).contains(&s) => {
            Ok(std::time::Duration::from_secs_f64(s))
        }
        _ => refuse!(
            codes::OPTION_INVALID,
            "--lock-timeout {text:?} is not a number of seconds from 0 to 86400"
        ),
    }
}

/// The outcome line of one receipt.
fn outcome_line(file: &str, receipt: &Receipt) -> String {
    let table = receipt.table();
    let m = receipt.manifest();
    let what = format!("{table}/{} produced at {}", m.shape(), m.produced_at());
    let pid = receipt.publication_id();
    let after = match receipt.base_publication_id() {
        Some(base) => format!("after {}", short(base)),
        None => "the table's first".to_owned(),
    };
    match receipt.outcome() {
        Outcome::Accepted => format!(
            "{file}: accepted {what}; publication {}, {after}",
            short(pid)
        ),
        Outcome::Replayed => format!(
            "{file}: replayed {what}: this manifest was accepted before, as publication {}; nothing changed",
            short(pid)
        ),
        Outcome::Rejected => {
            format!("{file}: rejected {what}; nothing published, the receipt is kept")
        }
    }
}

/// A group file: `contracts = [PATH, ...]`, paths relative to it.
/// A contract with the types of the columns it does not bind (from its TOML `columns`).
type TypedContract = (dogana::Contract, Vec<(String, String)>);

fn group_contracts(path: &Path) -> Result<Vec<TypedContract>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => refuse!(
            codes::FILE_UNREADABLE,
            "cannot read the group file {}: {e}",
            input::shown(path)
        ),
    };
    let value: toml::Table = match text.parse() {
        Ok(v) => v,
        Err(e) => refuse!(
            codes::GROUP_INVALID,
            "group file {} is not TOML: {e}",
            input::shown(path)
        ),
    };
    for key in value.keys() {
        if key != "contracts" {
            refuse!(codes::GROUP_INVALID, "group file {}: unknown key {key:?}; it lists the group's contracts, as in contracts = [\"invoices.toml\", \"lines.toml\"]",
                input::shown(path)
            );
        }
    }
    let Some(toml::Value::Array(list)) = value.get("contracts") else {
        refuse!(codes::GROUP_INVALID, "group file {} lists no contracts; write contracts = [\"invoices.toml\", \"lines.toml\"]",
            input::shown(path)
        )
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for item in list {
        let Some(p) = item.as_str() else {
            refuse!(
                codes::GROUP_INVALID,
                "group file {}: contracts holds {item}, not a path",
                input::shown(path)
            )
        };
        out.push(input::contract_and_columns(&dir.join(p))?);
    }
    Ok(out)
}

pub fn deliver(a: DeliverArgs) -> Result<()> {
    if a.group.is_some() {
        return deliver_group(a);
    }
    let [file_path] = &a.files[..] else {
        refuse!(
            codes::GROUP_INVALID,
            "{} files given: deliver one FILE, or several as one group with --group GROUP.toml",
            a.files.len()
        )
    };
    let Some(contract_path) = &a.contract else {
        refuse!(
            codes::CONTRACT_INVALID,
            "name the contract with --contract PATH"
        )
    };
    let (contract, columns) = input::contract_and_columns(contract_path)?;
    let manifest_path = a
        .manifest
        .clone()
        .unwrap_or_else(|| default_path(file_path));
    let manifest = input::manifest(&manifest_path)?;
    let now = match &a.at {
        Some(text) => typed::time("--at", text)?,
        None => claims::now()?,
    };
    let options = deliver_options(&a, &contract, columns)?;
    let file = input::shown(file_path);
    let size = match std::fs::metadata(file_path) {
        Ok(m) if m.is_dir() => {
            refuse!(
                codes::FILE_UNREADABLE,
                "cannot read {file}: it is a directory; name the delivered file"
            )
        }
        Ok(m) => m.len(),
        Err(e) => {
            refuse!(
                codes::FILE_UNREADABLE,
                "cannot read {file}: {e}; name the delivered file, readable by this user"
            )
        }
    };
    let wait = lock_wait(&a.lock_timeout)?;
    let mut store = open_with(
        &a.store,
        true,
        &dogana_stores::OpenOptions::new()
            .lock_timeout(wait)
            .fold_after_delivery(a.fold),
    )?;

    let delivery: Delivery = {
        let _progress = Progress::start(format!(
            "delivering {file} ({}) to {}",
            indicatif::HumanBytes(size),
            shown(&a.store)
        ));
        store.deliver_with(
            file_path,
            &contract,
            &manifest,
            now,
            a.source.as_deref(),
            &options,
        )
    }
    .map_err(|e| failed(&format!("delivering {file}"), &a.store, &e))?;
    let receipt = &delivery.receipt;
    let table = receipt.table();

    let mut out = output::Lines::new();
    if a.json {
        output::json(&format!("{}\n", receipt.to_json()))?;
    } else {
        // The table's claims once the delivery is decided, at the receiver's now.
        let ledger = store
            .ledger(table)
            .map_err(|e| failed("reading the ledger", &a.store, &e))?
            .unwrap_or_else(|| Ledger::new(receipt.contract().clone()));
        let summary = match ledger.claims(now, Duration::MAX, None) {
            Ok(c) => c.summary(table),
            Err(e) => refuse!(
                codes::LEDGER_INVALID,
                "cannot state the claims of {table:?}: {}",
                e.problem()
            ),
        };
        out.line(outcome_line(&file, receipt));
        decision_lines(&mut out, receipt, delivery.redecided);
        out.line(summary);
        out.print()?;
    }

    if receipt.outcome() == Outcome::Rejected {
        let why: Vec<String> = receipt
            .failures()
            .map(|c| format!("{}: {}", c.name(), c.detail()))
            .collect();
        refuse!(codes::DELIVERY_REJECTED, "{file} was rejected by {}: {}; the receipt is kept (dogana receipts --store {} {table:?}); fix the file or its manifest and deliver again",
            count(why.len(), "failed check"),
            why.join("; "),
            shown(&a.store)
        )
    }
    Ok(())
}

/// One receipt's line: seq, outcome, the manifest's shape and produced_at, the publication id
/// after it (shortened), and the failed checks with their details.
fn receipt_line(seq: i64, receipt: &Receipt) -> String {
    let m = receipt.manifest();
    let pid = receipt.publication_id();
    let pid = if pid == dogana::NO_PUBLICATION {
        "none"
    } else {
        short(pid)
    };
    let mut line = format!(
        "{seq} {} {} {} publication {pid}",
        receipt.outcome(),
        m.shape(),
        m.produced_at()
    );
    let failed: Vec<String> = receipt
        .failures()
        .map(|c| format!("{}: {}", c.name(), c.detail()))
        .collect();
    if !failed.is_empty() {
        line.push_str(" failed: ");
        line.push_str(&failed.join("; "));
    }
    line
}

pub fn receipts(a: ReceiptsArgs) -> Result<()> {
    let mut store = open(&a.store, false)?;
    let receipts = store
        .receipts(&a.table)
        .map_err(|e| failed("reading the receipts", &a.store, &e))?;
    if receipts.is_empty() {
        let known = tables(store.as_mut(), &a.store)?;
        if !known.contains(&a.table) {
            return Err(unknown_table(&a.store, &a.table, &known));
        }
    }
    if a.json {
        let docs: Vec<Value> = receipts.iter().map(|r| r.receipt.to_value()).collect();
        return output::json(&format!(
            "{}\n",
            dogana_json::canonical(&Value::Array(docs))
        ));
    }
    let mut out = output::Lines::new();
    for r in &receipts {
        out.line(receipt_line(r.seq, &r.receipt));
    }
    out.print()
}

pub fn verify(a: VerifyArgs) -> Result<()> {
    let mut store = open(&a.store, false)?;
    let known = tables(store.as_mut(), &a.store)?;
    let names = match a.table {
        Some(t) if known.contains(&t) => vec![t],
        Some(t) => return Err(unknown_table(&a.store, &t, &known)),
        None => known,
    };
    let mut out = String::new();
    let mut wrong = Vec::new();
    let mut reports = Vec::new();
    if names.is_empty() && !a.json {
        out.push_str(&format!("{}: no tables yet\n", shown(&a.store)));
    }
    for table in &names {
        let report = store
            .verify(table)
            .map_err(|e| failed(&format!("verifying {table:?}"), &a.store, &e))?;
        if !report.ok() {
            wrong.push(table.clone());
        }
        if a.json {
            reports.push(serde_json::json!({
                "table": report.table,
                "ok": report.ok(),
                "receipts": report.receipts,
                "accepted": report.accepted,
                "stored_ledger": report.stored,
                "folded_ledger": report.rebuilt,
                "problems": report.problems,
            }));
            continue;
        }
        let counts = format!(
            "{}, {} accepted",
            count(report.receipts, "receipt"),
            report.accepted
        );
        if report.ok() {
            let ledger = match &report.stored {
                Some(id) => format!("ledger {} is the fold of the accepted receipts", short(id)),
                None => "no ledger: nothing accepted yet".to_owned(),
            };
            out.push_str(&format!(
                "{}: ok: {counts}; {ledger}\n",
                output::sender_text(table)
            ));
        } else {
            out.push_str(&format!(
                "{}: {}: {counts}\n",
                output::sender_text(table),
                count(report.problems.len(), "problem")
            ));
            for p in &report.problems {
                out.push_str(&format!("  {}\n", output::sender_text(p)));
            }
        }
    }
    if a.json {
        output::json(&format!("{}\n", Value::Array(reports)))?;
    } else {
        output::stdout(out.as_bytes())?;
    }
    if !wrong.is_empty() {
        refuse!(codes::VERIFY_MISMATCH, "the store {} does not match its receipts for {}; a stored ledger that differs from the fold of its accepted receipts is wrong (RECV-12), and rebuilding it recovers no rows: deliver a complete whole-table read",
            shown(&a.store),
            wrong.join(", ")
        )
    }
    Ok(())
}

/// `dogana deliver --group GROUP.toml FILE...`: one FILE per table, each manifest beside it.
fn deliver_group(a: DeliverArgs) -> Result<()> {
    let group_path = a.group.clone().expect("called with --group");
    let contracts = group_contracts(&group_path)?;
    let group = match dogana::Group::new(contracts.iter().map(|(c, _)| c.clone())) {
        Ok(g) => g,
        Err(e) => refuse!(
            codes::GROUP_INVALID,
            "group file {} is refused: {}",
            input::shown(&group_path),
            e.problem()
        ),
    };
    let now = match &a.at {
        Some(text) => typed::time("--at", text)?,
        None => claims::now()?,
    };
    let mut parts = Vec::new();
    for path in &a.files {
        file_size(path)?;
        let manifest = input::manifest(&default_path(path))?;
        let Some((contract, columns)) = contracts
            .iter()
            .find(|(c, _)| c.table().eq_ignore_ascii_case(manifest.table()))
        else {
            refuse!(
                codes::GROUP_INVALID,
                "{}'s manifest is of table {:?}, which the group {} does not hold; its tables: {}",
                input::shown(path),
                manifest.table(),
                input::shown(&group_path),
                group.tables().collect::<Vec<_>>().join(", ")
            )
        };
        let options = deliver_options(&a, contract, columns.clone())?;
        parts.push(dogana_receiver::Part {
            file: path.clone(),
            manifest,
            options,
        });
    }
    let wait = lock_wait(&a.lock_timeout)?;
    let mut store = open_with(
        &a.store,
        true,
        &dogana_stores::OpenOptions::new()
            .lock_timeout(wait)
            .fold_after_delivery(a.fold),
    )?;
    let delivery = {
        let _progress = Progress::start(format!(
            "delivering {} files as one group to {}",
            parts.len(),
            shown(&a.store)
        ));
        store.deliver_group(&group, &parts, now, a.source.as_deref())
    }
    .map_err(|e| failed("delivering the group", &a.store, &e))?;
    if a.json {
        let docs: Vec<Value> = delivery.receipts.iter().map(Wire::to_value).collect();
        output::json(&format!(
            "{}\n",
            dogana_json::canonical(&Value::Array(docs))
        ))?;
    } else {
        let mut out = output::Lines::new();
        for receipt in &delivery.receipts {
            let file = parts
                .iter()
                .find(|p| p.manifest.table().eq_ignore_ascii_case(receipt.table()))
                .map_or_else(|| receipt.table().to_owned(), |p| input::shown(&p.file));
            out.line(outcome_line(&file, receipt));
            decision_lines(&mut out, receipt, delivery.redecided);
        }
        let mut ledgers = Vec::new();
        for c in group.contracts() {
            let l = store
                .ledger(c.table())
                .map_err(|e| failed("reading the ledger", &a.store, &e))?
                .unwrap_or_else(|| Ledger::new(c.clone()));
            ledgers.push(l);
        }
        match group.claims(&ledgers, now, Duration::MAX, None) {
            Ok(c) => out.line(c.summary(&group.tables().collect::<Vec<_>>().join(" + "))),
            Err(e) => refuse!(
                codes::LEDGER_INVALID,
                "cannot state the group's claims: {}",
                e.problem()
            ),
        }
        out.print()?;
    }
    if !delivery.accepted() {
        let why: Vec<String> = delivery
            .receipts
            .iter()
            .flat_map(|r| {
                r.failures()
                    .map(move |c| format!("{} {}: {}", r.table(), c.name(), c.detail()))
            })
            .collect();
        refuse!(
            codes::DELIVERY_REJECTED,
            "the group was rejected: {}; every table's receipt is kept, nothing is published",
            why.join("; ")
        )
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids() {
        assert_eq!(short("0123456789abcdef"), "0123456789ab");
        assert_eq!(short("None"), "None");
    }

    #[test]
    fn formats_map() {
        assert_eq!(Format::from(FileFormat::Csv), Format::Csv);
        assert_eq!(Format::from(FileFormat::Ndjson), Format::Ndjson);
        assert_eq!(Format::from(FileFormat::Parquet), Format::Parquet);
    }
}

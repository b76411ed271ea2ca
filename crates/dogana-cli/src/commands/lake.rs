//! The lake store's own verbs (`dogana_lake`, the `lake` feature):
//!
//! - `dogana fold --store URL [TABLE]`: merges each table's small parts by size tier under
//!   its lease (`store.fold.tiered-merge`); rows, ledger and receipts unchanged.
//! - `dogana collect --store URL [TABLE] [--retain-generations N]`: deletes the parts only
//!   snapshots older than the newest N name (`bucket-collect`); manifests, receipts and
//!   ledgers kept.
//! - `dogana replicate --from URL --to DIR [TABLE...] [--adopt]`: pulls whole snapshots into
//!   a read-only local replica (`replica-read-whole`).
//! - `dogana duckdb-sql --store URL TABLE`: prints the DuckDB views that read the table's
//!   current snapshot and its regions (`dogana_lake::sql`).
//!
//! A build without the `lake` feature answers each with one line saying how to get it; a
//! store that is not a lake store is refused naming what it is.

use crate::cli::{CollectArgs, DuckdbSqlArgs, FoldArgs, ReplicateArgs};
#[cfg(not(feature = "lake"))]
use crate::refusal::refuse;
use crate::refusal::Result;
#[cfg(not(feature = "lake"))]
use dogana_codes as codes;

#[cfg(feature = "lake")]
mod imp {
    use std::path::Path;

    use dogana_codes as codes;
    use dogana_lake::{Lake, LakeError, LakeOptions};
    use dogana_receiver::{Open, StoreError};
    use dogana_stores::Spec;

    use crate::cli::{CollectArgs, DuckdbSqlArgs, FoldArgs, ReplicateArgs};
    use crate::commands::receiver::{lock_wait, shown};
    use crate::output;
    use crate::refusal::{refuse, Refusal, Result};

    /// The lake root a `--store` names, or a refusal naming what it is instead.
    pub fn root(store: &Path, verb: &str) -> Result<String> {
        let spec = Spec::parse(&store.to_string_lossy());
        if let Err(e) = spec.check(true) {
            return Err(
                Refusal::new(codes::STORE_SPEC_INVALID, format!("--store: {e}"))
                    .at("--store", shown(store)),
            );
        }
        match spec {
            Spec::Lake(root) => Ok(root),
            other => refuse!(codes::STORE_SPEC_INVALID, "dogana {verb} works on a lake store, and {} is a {} store; name a lake store (file:///dir, s3://bucket/prefix, gs://, az://, lake:DIR)",
                shown(store),
                other.backend().name()
            ),
        }
    }

    /// Opens an existing lake store: a missing one is refused, never created.
    pub fn open(store: &Path, root: &str, write: bool, options: &LakeOptions) -> Result<Lake> {
        let failed = |e: StoreError| match e {
            StoreError::NotAStore(m) => Refusal::new(
                codes::NOT_A_STORE,
                format!("not a dogana lake store: {m}; name a store made by dogana deliver"),
            ),
            e => Refusal::new(
                dogana_stores::code_of(&e),
                format!("cannot open the store {}: {e}", shown(store)),
            ),
        };
        // a reader first: a root without a store is refused before anything is created
        let lake = Lake::open(Path::new(root), options, false).map_err(failed)?;
        if !write {
            return Ok(lake);
        }
        drop(lake);
        Lake::open(Path::new(root), options, true).map_err(failed)
    }

    /// A refusal for a failed lake operation: nothing was published.
    pub fn failed(what: &str, store: &Path, e: &StoreError) -> Refusal {
        let hint = match LakeError::of(e) {
            Some(LakeError::LeaseHeld { .. }) => "; try again once the writer is done",
            _ => "",
        };
        Refusal::new(
            dogana_stores::code_of(e),
            format!(
                "{what} failed on store {}: {e}{hint}; nothing was published",
                shown(store)
            ),
        )
    }

    /// The tables a verb works on: `table`, refused when the store lacks it, or all.
    fn tables(lake: &Lake, store: &Path, table: Option<String>) -> Result<Vec<String>> {
        let known = lake
            .table_names()
            .map_err(|e| failed("listing the tables", store, &e))?;
        Ok(match table {
            Some(t) if known.contains(&t) => vec![t],
            Some(t) => refuse!(
                codes::TABLE_UNKNOWN,
                "store {} has no table {t:?}; its tables: {}",
                shown(store),
                if known.is_empty() {
                    "none yet".to_owned()
                } else {
                    known.join(", ")
                }
            ),
            None => known,
        })
    }

    pub fn fold(a: FoldArgs) -> Result<()> {
        let root = root(&a.store, "fold")?;
        let options = LakeOptions {
            lock_wait: lock_wait(&a.lock_timeout)?,
            ..LakeOptions::default()
        };
        let mut lake = open(&a.store, &root, true, &options)?;
        let names = tables(&lake, &a.store, a.table)?;
        let mut out = output::Lines::new();
        let mut reports = Vec::new();
        if names.is_empty() && !a.json {
            out.line(format!("{}: no tables yet", shown(&a.store)));
        }
        for table in &names {
            let r = lake
                .fold(table)
                .map_err(|e| failed(&format!("folding {table:?}"), &a.store, &e))?;
            if a.json {
                reports.push(serde_json::json!({
                    "table": r.table,
                    "folded": r.snapshot.is_some(),
                    "parts_before": r.parts_before,
                    "parts_after": r.parts_after,
                    "merges": r.merges,
                    "rewritten": r.rewritten,
                    "bytes_merged": r.bytes_merged,
                    "bytes_written": r.bytes_written,
                    "snapshot": r.snapshot,
                    "fence": r.fence,
                }));
                continue;
            }
            if r.snapshot.is_some() {
                let rewritten = if r.rewritten > 0 {
                    format!(", {} rewritten without their shadowed rows", r.rewritten)
                } else {
                    String::new()
                };
                out.line(format!(
                    "{table}: folded {} parts into {} ({} merges of 4{rewritten}; {} bytes merged, {} written), fence {}",
                    r.parts_before, r.parts_after, r.merges, r.bytes_merged, r.bytes_written, r.fence
                ));
            } else {
                out.line(format!(
                    "{table}: nothing to fold: {} parts, every size tier holds fewer than 4",
                    r.parts_before
                ));
            }
        }
        print(out, reports, a.json)
    }

    /// The command's lines, or with `json` its reports as one JSON array.
    fn print(out: output::Lines, reports: Vec<serde_json::Value>, json: bool) -> Result<()> {
        if json {
            let doc = serde_json::Value::Array(reports);
            return output::json(&format!("{doc}\n"));
        }
        out.print()
    }

    pub fn collect(a: CollectArgs) -> Result<()> {
        // rule: store.collect.retain-generations — 0 is refused at the parse
        let retain =
            dogana_lake::layout::parse_retain_generations(&a.retain_generations).map_err(|e| {
                Refusal::new(codes::CONFIG_INVALID, format!("--retain-generations: {e}"))
                    .at("--retain-generations", &a.retain_generations)
            })?;
        let root = root(&a.store, "collect")?;
        let options = LakeOptions {
            lock_wait: lock_wait(&a.lock_timeout)?,
            ..LakeOptions::default()
        };
        let mut lake = open(&a.store, &root, true, &options)?;
        let names = tables(&lake, &a.store, a.table)?;
        let mut out = output::Lines::new();
        let mut reports = Vec::new();
        if names.is_empty() && !a.json {
            out.line(format!("{}: no tables yet", shown(&a.store)));
        }
        for table in &names {
            let r = lake
                .collect(table, retain)
                .map_err(|e| failed(&format!("collecting {table:?}"), &a.store, &e))?;
            if a.json {
                reports.push(serde_json::json!({
                    "table": r.table,
                    "retained": r.retained,
                    "reclaimed": r.reclaimed,
                    "deleted": r.deleted,
                    "bytes": r.bytes,
                    "segments": r.segments,
                    "record": r.record,
                }));
                continue;
            }
            if r.record.is_some() {
                out.line(format!(
                    "{table}: kept {} snapshots whole; deleted {} parts ({} bytes) of {} older snapshots, their manifests, receipts and ledgers kept",
                    r.retained, r.deleted, r.bytes, r.reclaimed
                ));
            } else {
                out.line(format!(
                    "{table}: nothing to collect: every part is named by one of the {} snapshots kept",
                    r.retained
                ));
            }
        }
        print(out, reports, a.json)
    }

    pub fn duckdb_sql(a: DuckdbSqlArgs) -> Result<()> {
        let root = root(&a.store, "duckdb-sql")?;
        let lake = open(&a.store, &root, false, &LakeOptions::default())?;
        let names = tables(&lake, &a.store, Some(a.table))?;
        let table = names.first().cloned().unwrap_or_default();
        // a lazily pulled store brings the head's parts home first: DuckDB reads their files
        // (read.cache.lazy-hydration)
        if lake.root().part_source().is_some() {
            if let Some(head) = lake
                .head(&table)
                .map_err(|e| failed(&format!("reading {table:?}"), &a.store, &e))?
            {
                let parts: Vec<(String, u64)> = lake
                    .snapshot(&head)
                    .map_err(|e| failed(&format!("reading {table:?}"), &a.store, &e))?
                    .parts
                    .iter()
                    .map(|p| (p.path.clone(), p.bytes))
                    .collect();
                lake.root().hydrate(&table, &parts).map_err(|e| {
                    Refusal::new(e.code(), format!("bringing {table:?}'s parts home: {e}"))
                })?;
            }
        }
        let sql = dogana_lake::sql::current_snapshot_sql(&lake, &table)
            .map_err(|e| failed(&format!("reading {table:?}"), &a.store, &e))?;
        match sql {
            Some(sql) => output::stdout(sql.as_bytes())?,
            None => refuse!(
                codes::TABLE_UNKNOWN,
                "table {table:?} of store {} has nothing published yet",
                shown(&a.store)
            ),
        }
        Ok(())
    }

    pub fn replicate(a: ReplicateArgs) -> Result<()> {
        let from = root(&a.from, "replicate")?;
        let lake = open(&a.from, &from, false, &LakeOptions::default())?;
        let to_spec = Spec::parse(&a.to.to_string_lossy());
        if let Err(e) = to_spec.check(true) {
            return Err(
                Refusal::new(codes::STORE_SPEC_INVALID, format!("--to: {e}"))
                    .at("--to", shown(&a.to)),
            );
        }
        let to = match to_spec {
            Spec::Lake(r) if r.starts_with("file://") || !r.contains("://") => r,
            Spec::Sqlite(p) => p.to_string_lossy().into_owned(),
            _ => refuse!(
                codes::STORE_SPEC_INVALID,
                "--to {} is not a local directory; a replica is a directory on this machine",
                shown(&a.to)
            ),
        };
        let target = dogana_lake::objects::Root::open(&to).map_err(|e| {
            Refusal::new(
                e.code(),
                format!("cannot open the replica {}: {e}", shown(&a.to)),
            )
        })?;
        let known = lake
            .table_names()
            .map_err(|e| failed("listing the tables", &a.from, &e))?;
        for t in &a.tables {
            if !known.contains(t) {
                refuse!(
                    codes::TABLE_UNKNOWN,
                    "store {} has no table {t:?}; its tables: {}",
                    shown(&a.from),
                    known.join(", ")
                );
            }
        }
        let reports =
            dogana_lake::replica::pull(&lake, &shown(&a.from), &target, &a.tables, a.adopt)
                .map_err(|e| {
                    Refusal::new(
                        dogana_stores::code_of(&e),
                        format!(
                            "replicating {} into {} failed: {e}; no table's pointer was moved",
                            shown(&a.from),
                            shown(&a.to)
                        ),
                    )
                })?;
        if a.json {
            let docs = reports
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "table": r.table, "from": r.from, "to": r.to,
                        "parts": r.parts, "bytes": r.bytes,
                    })
                })
                .collect();
            return print(output::Lines::new(), docs, true);
        }
        let mut out = output::Lines::new();
        for r in &reports {
            let short = |k: &Option<String>| {
                k.as_deref()
                    .and_then(|k| k.rsplit('/').next())
                    .map(|k| k.trim_end_matches(".json").to_owned())
                    .unwrap_or_else(|| "nothing".into())
            };
            if r.from == r.to {
                out.line(format!("{}: up to date at {}", r.table, short(&r.to)));
            } else {
                out.line(format!(
                    "{}: {} -> {} ({} parts, {} bytes copied)",
                    r.table,
                    short(&r.from),
                    short(&r.to),
                    r.parts,
                    r.bytes
                ));
            }
        }
        if reports.is_empty() {
            out.line(format!("{}: no tables yet", shown(&a.from)));
        }
        out.print()
    }
}

#[cfg(not(feature = "lake"))]
pub(crate) fn no_lake(verb: &str) -> Result<()> {
    refuse!(codes::BACKEND_NOT_BUILT, "dogana {verb} needs the lake store, which this build does not have; build dogana with cargo build -p dogana-cli --features lake"
    )
}

/// `dogana fold --store URL [TABLE]`.
pub fn fold(a: FoldArgs) -> Result<()> {
    #[cfg(feature = "lake")]
    {
        imp::fold(a)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = a;
        no_lake("fold")
    }
}

/// `dogana collect --store URL [TABLE] [--retain-generations N]`.
pub fn collect(a: CollectArgs) -> Result<()> {
    #[cfg(feature = "lake")]
    {
        imp::collect(a)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = a;
        no_lake("collect")
    }
}

/// `dogana duckdb-sql --store URL TABLE`: on a store of Delta tables, the `delta_scan` view
/// and the regions view (the `delta` feature).
pub fn duckdb_sql(a: DuckdbSqlArgs) -> Result<()> {
    if let dogana_stores::Spec::Delta(spec) = dogana_stores::Spec::parse(&a.store.to_string_lossy())
    {
        return delta_sql(&spec, a);
    }
    #[cfg(feature = "lake")]
    {
        imp::duckdb_sql(a)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = a;
        no_lake("duckdb-sql")
    }
}

/// `dogana replicate --from URL --to DIR [TABLE...] [--adopt]`.
pub fn replicate(a: ReplicateArgs) -> Result<()> {
    #[cfg(feature = "lake")]
    {
        imp::replicate(a)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = a;
        no_lake("replicate")
    }
}

#[cfg(feature = "delta")]
fn delta_sql(spec: &str, a: DuckdbSqlArgs) -> Result<()> {
    use crate::commands::receiver::shown;
    use crate::refusal::Refusal;
    let failed = |e: dogana_receiver::StoreError| {
        Refusal::new(
            dogana_stores::code_of(&e),
            format!("reading {}: {e}", shown(&a.store)),
        )
    };
    let mut store = dogana_delta::Delta::open_url(spec, false).map_err(failed)?;
    match store.duckdb_sql(&a.table).map_err(failed)? {
        Some(sql) => crate::output::stdout(sql.as_bytes())?,
        None => crate::refusal::refuse!(
            dogana_codes::TABLE_UNKNOWN,
            "store {} has no dogana table {:?}",
            shown(&a.store),
            a.table
        ),
    }
    Ok(())
}

#[cfg(not(feature = "delta"))]
fn delta_sql(_spec: &str, _a: DuckdbSqlArgs) -> Result<()> {
    crate::refusal::refuse!(
        dogana_codes::BACKEND_NOT_BUILT,
        "dogana duckdb-sql on a store of Delta tables needs the delta backend, which this build does not have; build dogana with cargo build -p dogana-cli --features delta"
    )
}

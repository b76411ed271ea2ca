//! `dogana_rs.push` and `dogana_rs.pull`: a local lake store and a shared bucket
//! (`dogana_lake::sync`, the `lake` feature; `docs/store-decisions.md`, part 2). Each answers
//! a dict of what it did, its warnings as `{"code", "message"}` dicts; a refusal is a
//! `ReceiverError` carrying the stable `code`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;

#[cfg(feature = "lake")]
fn failed(py: Python<'_>, e: dogana_lake::LakeError) -> PyErr {
    crate::errors::store(py, &dogana_receiver::StoreError::from(e))
}

#[cfg(feature = "lake")]
fn warnings<'py>(
    py: Python<'py>,
    ws: &[dogana_lake::sync::SyncWarning],
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    ws.iter()
        .map(|w| {
            let d = PyDict::new(py);
            d.set_item("code", w.code())?;
            d.set_item("message", w.to_string())?;
            Ok(d)
        })
        .collect()
}

#[cfg(feature = "lake")]
fn config(
    py: Python<'_>,
    store: &str,
    file: Option<PathBuf>,
) -> PyResult<dogana_lake::sync::SyncConfig> {
    use dogana_lake::sync::SyncConfig;
    match file {
        Some(f) => {
            let text = std::fs::read_to_string(&f).map_err(|e| {
                failed(
                    py,
                    dogana_lake::LakeError::Root(format!("{}: {e}", f.display())),
                )
            })?;
            SyncConfig::parse(&text).map_err(|e| failed(py, e))
        }
        None => {
            let dir = store.strip_prefix("file://").unwrap_or(store);
            SyncConfig::of_store(std::path::Path::new(dir)).map_err(|e| failed(py, e))
        }
    }
}

#[cfg(not(feature = "lake"))]
fn not_built(py: Python<'_>, verb: &str) -> PyErr {
    crate::errors::store(
        py,
        &dogana_receiver::StoreError::Unavailable(format!(
            "dogana_rs.{verb} needs the lake store, which this build of the package lacks (the lake feature)"
        )),
    )
}

/// Pushes the local lake store `store` (a directory, or `file:///dir`) to the bucket `to`
/// (`s3://bucket/prefix`, `gs://`, `az://`, `file:///`), as `dogana push` does. `config` names
/// a store configuration file whose `[sync]` section to use (default: the store's own
/// `store.toml`).
#[pyfunction]
#[pyo3(signature = (store, to, *, config=None))]
pub fn push<'py>(
    py: Python<'py>,
    store: PathBuf,
    to: &str,
    config: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    #[cfg(feature = "lake")]
    {
        let store = store.to_string_lossy().into_owned();
        let c = self::config(py, &store, config)?;
        let to = to.to_owned();
        let r = py
            .allow_threads(|| dogana_lake::sync::push(&store, &to, &c))
            .map_err(|e| failed(py, e))?;
        let d = PyDict::new(py);
        d.set_item("node", &r.node)?;
        d.set_item("advanced", &r.advanced)?;
        d.set_item("unchanged", &r.unchanged)?;
        d.set_item("behind", &r.behind)?;
        d.set_item("uploaded", r.uploaded.len())?;
        d.set_item("uploaded_bytes", r.uploaded_bytes)?;
        d.set_item("tombstoned", &r.tombstoned)?;
        d.set_item("generation", r.generation)?;
        d.set_item("rounds", r.rounds)?;
        d.set_item("warnings", warnings(py, &r.warnings)?)?;
        Ok(d)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = (store, to, config);
        Err(not_built(py, "push"))
    }
}

/// Pulls the bucket `from_` into the local lake store `store` (an empty directory is made a
/// store of the bucket's), as `dogana pull` does: `lazy` leaves Parquet parts in the bucket
/// for their first read; `tables` pulls only those; `adopt` replaces those tables' local
/// heads off the bucket's chain.
#[pyfunction]
#[pyo3(signature = (store, from_, *, lazy=false, tables=None, adopt=None, config=None))]
pub fn pull<'py>(
    py: Python<'py>,
    store: PathBuf,
    from_: &str,
    lazy: bool,
    tables: Option<Vec<String>>,
    adopt: Option<Vec<String>>,
    config: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    #[cfg(feature = "lake")]
    {
        let store = store.to_string_lossy().into_owned();
        let given = config.is_some();
        let c = self::config(py, &store, config)?;
        let opts = dogana_lake::sync::PullOptions {
            lazy: lazy || c.lazy_parts,
            tables: tables.unwrap_or_default(),
            adopt: adopt.unwrap_or_default(),
            part_cache_bytes: given.then_some(c.part_cache_bytes),
        };
        let from = from_.to_owned();
        let r = py
            .allow_threads(|| dogana_lake::sync::pull(&store, &from, &opts))
            .map_err(|e| failed(py, e))?;
        let d = PyDict::new(py);
        let advanced: Vec<(String, String)> = r.advanced.clone();
        d.set_item("advanced", advanced)?;
        d.set_item("unchanged", &r.unchanged)?;
        d.set_item("downloaded", r.downloaded.len())?;
        d.set_item("downloaded_bytes", r.downloaded_bytes)?;
        d.set_item("skipped_parts", r.skipped_parts)?;
        d.set_item("skipped_runs", r.skipped_runs)?;
        d.set_item("deleted", &r.deleted)?;
        d.set_item("moved_aside", &r.moved_aside)?;
        d.set_item("generation", r.generation)?;
        d.set_item("warnings", warnings(py, &r.warnings)?)?;
        Ok(d)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = (store, from_, lazy, tables, adopt, config);
        Err(not_built(py, "pull"))
    }
}

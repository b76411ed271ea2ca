//! The receiver from Python: a SQLite store (`dogana_sqlite::Store`) and the row checks of a
//! delivered file (`dogana_rows::check_file`). Both release the GIL while they read files
//! and write the database.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use dogana_receiver::{Datum, DeliverOptions, StoreError};
use dogana_rows::{Format, Options, RowReport};

/// The store of any backend `dogana_stores` opens from a path or spec.
type Store = dogana_stores::Opened;
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::convert as cv;
use crate::errors;
use crate::kinds::{PyCheck, PyClaims, PyContract, PyLedger, PyManifest, PyReceipt};

fn format_of(py: Python<'_>, format: Option<&str>) -> PyResult<Option<Format>> {
    match format {
        None => Ok(None),
        Some(f) => f
            .parse::<Format>()
            .map(Some)
            .map_err(|e| errors::store(py, &StoreError::Format(e.to_string()))),
    }
}

fn delimiter_of(delimiter: &str) -> PyResult<u8> {
    match delimiter.as_bytes() {
        [b] => Ok(*b),
        _ => Err(PyTypeError::new_err(
            "delimiter: expected one ASCII character",
        )),
    }
}

fn column_types_of(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let d = obj.downcast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(
            "column_types: expected a dict of column to type name, in the data contract's order",
        )
    })?;
    let mut out = Vec::new();
    for (k, v) in d.iter() {
        let k: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("column_types: columns are str"))?;
        let v: String = v.extract().map_err(|_| {
            PyTypeError::new_err(format!("column_types[{k:?}]: expected a type name (str)"))
        })?;
        out.push((k, v));
    }
    Ok(out)
}

/// What checking a delivered file's rows found: `checks` (one per row check, in order: pass
/// them to `Gate.evaluate` as outcomes; the report itself iterates over them), the content's
/// SHA-256, the columns, the column hash and the counts.
#[pyclass(frozen, module = "dogana_rs", name = "RowReport")]
pub struct PyRowReport {
    inner: RowReport,
}

#[pymethods]
impl PyRowReport {
    /// Every check, in order.
    #[getter]
    fn checks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            self.inner
                .checks
                .iter()
                .map(|c| PyCheck { inner: c.clone() }),
        )
    }

    /// Whether every check passed.
    #[getter]
    fn passed(&self) -> bool {
        self.inner.passed()
    }

    /// The checks that failed.
    #[getter]
    fn failures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            self.inner
                .failed()
                .map(|c| PyCheck { inner: c.clone() })
                .collect::<Vec<_>>(),
        )
    }

    /// The check of that name, or None.
    fn check(&self, name: &str) -> Option<PyCheck> {
        self.inner.check(name).map(|c| PyCheck { inner: c.clone() })
    }

    /// The lowercase hex SHA-256 of every byte of the file.
    #[getter]
    fn content_sha256(&self) -> &str {
        &self.inner.content_sha256
    }

    /// The file's size in bytes.
    #[getter]
    fn bytes(&self) -> u64 {
        self.inner.bytes
    }

    /// The file's columns, in file order.
    #[getter]
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.columns)
    }

    /// The column hash of the loaded columns, when every column's type is known.
    #[getter]
    fn column_hash(&self) -> Option<&str> {
        self.inner.column_hash.as_deref()
    }

    /// Data rows read.
    #[getter]
    fn records(&self) -> u64 {
        self.inner.records
    }

    /// Live rows.
    #[getter]
    fn live(&self) -> u64 {
        self.inner.live
    }

    /// Tombstones.
    #[getter]
    fn tombstones(&self) -> u64 {
        self.inner.tombstones
    }

    /// Distinct non-null keys.
    #[getter]
    fn distinct_keys(&self) -> u64 {
        self.inner.distinct_keys
    }

    fn __len__(&self) -> usize {
        self.inner.checks.len()
    }

    fn __getitem__(&self, i: isize) -> PyResult<PyCheck> {
        let n = self.inner.checks.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if !(0..n).contains(&j) {
            return Err(PyIndexError::new_err("check index out of range"));
        }
        Ok(PyCheck {
            inner: self.inner.checks[j as usize].clone(),
        })
    }

    fn __repr__(&self) -> String {
        let failed: Vec<&str> = self.inner.failed().map(|c| c.name()).collect();
        format!(
            "<RowReport records={} live={} tombstones={} failed={:?}>",
            self.inner.records, self.inner.live, self.inner.tombstones, failed
        )
    }
}

/// Checks a delivered file's rows against `manifest` and `contract` in one streaming pass
/// that also hashes the bytes (the GIL is released meanwhile). Run it after
/// `Gate.preflight` passed. `format` is `"csv"`, `"ndjson"` or `"parquet"` (default: from
/// the extension); `column_types` types the columns the contract does not bind, in the data
/// contract's order, for the column hash.
#[pyfunction]
#[pyo3(signature = (path, contract, manifest, *, format=None, delimiter=",", column_types=None, hash_in_thread=true))]
#[allow(clippy::too_many_arguments)]
pub fn check_rows(
    py: Python<'_>,
    path: PathBuf,
    contract: &PyContract,
    manifest: &PyManifest,
    format: Option<&str>,
    delimiter: &str,
    column_types: Option<&Bound<'_, PyAny>>,
    hash_in_thread: bool,
) -> PyResult<PyRowReport> {
    let format = format_of(py, format)?;
    let options = Options::new()
        .delimiter(delimiter_of(delimiter)?)
        .hash_in_thread(hash_in_thread)
        .column_types(column_types_of(column_types)?);
    let (c, m) = (&contract.inner, &manifest.inner);
    py.allow_threads(|| dogana_rows::check_file(&path, format, c, m, &options))
        .map(|inner| PyRowReport { inner })
        .map_err(|e| errors::rows(py, &e))
}

/// What one delivery to a store came to: the receipt (accepted, rejected or a replay of the
/// original acceptance), how often the decision was made again, and the row report when the
/// rows were read.
#[pyclass(frozen, module = "dogana_rs", name = "Delivery")]
pub struct PyDelivery {
    receipt: PyReceipt,
    redecided: u32,
    report: Option<Py<PyRowReport>>,
}

#[pymethods]
impl PyDelivery {
    /// The receipt.
    #[getter]
    fn receipt(&self) -> PyReceipt {
        self.receipt.clone()
    }

    /// Whether the rows are published (accepted now, or a replay of an acceptance).
    #[getter]
    fn accepted(&self) -> bool {
        self.receipt.inner.accepted()
    }

    /// Whether this was a replay.
    #[getter]
    fn replayed(&self) -> bool {
        self.receipt.inner.replayed()
    }

    /// How many times the decision was made again because the chain head moved.
    #[getter]
    fn redecided(&self) -> u32 {
        self.redecided
    }

    /// What reading the rows found, or None (a replay, a preflight refusal).
    #[getter]
    fn report(&self, py: Python<'_>) -> Option<Py<PyRowReport>> {
        self.report.as_ref().map(|r| r.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "<Delivery {} of {:?} redecided={}>",
            self.receipt.inner.outcome(),
            self.receipt.inner.table(),
            self.redecided
        )
    }
}

/// What `Store.verify` found: the receipts counted, the stored and rebuilt ledger
/// identities, and every problem (`ok` when there is none).
#[pyclass(frozen, module = "dogana_rs", name = "VerifyReport", get_all)]
pub struct PyVerifyReport {
    /// The table.
    table: String,
    /// How many receipts are stored.
    receipts: usize,
    /// How many of them are acceptances.
    accepted: usize,
    /// The identity of the stored ledger, or None.
    stored: Option<String>,
    /// The identity of the ledger folded from the accepted receipts, or None.
    rebuilt: Option<String>,
    /// Every difference found.
    problems: Vec<String>,
}

#[pymethods]
impl PyVerifyReport {
    /// Whether nothing was found wrong.
    #[getter]
    fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    fn __repr__(&self) -> String {
        format!(
            "<VerifyReport {:?} receipts={} accepted={} problems={:?}>",
            self.table, self.receipts, self.accepted, self.problems
        )
    }
}

/// A published table read with its ledger from one committed state: `ledger` (None before
/// the first acceptance), `columns`, and `rows` as tuples in rowid order.
#[pyclass(frozen, module = "dogana_rs", name = "Snapshot", get_all)]
pub struct PySnapshot {
    /// The ledger the rows were published under, or None.
    ledger: Option<Py<PyLedger>>,
    /// The published columns.
    columns: Py<PyTuple>,
    /// Every row, a tuple per row.
    rows: Py<PyAny>,
}

fn sql_value(py: Python<'_>, v: &Datum) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Datum::Null => py.None(),
        Datum::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Datum::Real(f) => f.into_pyobject(py)?.into_any().unbind(),
        Datum::Bool(b) => i64::from(*b).into_pyobject(py)?.into_any().unbind(),
        Datum::Text(s) => s.into_pyobject(py)?.into_any().unbind(),
        Datum::Date(_) | Datum::Datetime(_) => v
            .render()
            .unwrap_or_default()
            .into_pyobject(py)?
            .into_any()
            .unbind(),
    })
}

/// A dogana receiver on one store (a SQLite or DuckDB file, a Postgres schema, a lake root):
/// delivers files with their manifests (replay lookup, preflight, row checks, decision and one
/// transaction for rows, ledger and receipt), and reads receipts, ledgers, claims and
/// consistent snapshots back.
#[pyclass(frozen, module = "dogana_rs", name = "Store")]
pub struct PyStore {
    inner: Mutex<Store>,
    /// The store as the caller named it, a URL's password masked: never shown in clear.
    shown: String,
}

fn locked<'a>(m: &'a Mutex<Store>) -> Result<MutexGuard<'a, Store>, String> {
    m.lock()
        .map_err(|_| "the store handle was poisoned by a panic".to_owned())
}

enum Failure {
    Store(StoreError),
    Poisoned(String),
}

fn failure(py: Python<'_>, f: Failure) -> PyErr {
    match f {
        Failure::Store(e) => errors::store(py, &e),
        Failure::Poisoned(m) => PyRuntimeError::new_err(m),
    }
}

impl PyStore {
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send,
    ) -> PyResult<T> {
        let m = &self.inner;
        py.allow_threads(|| {
            let mut store = locked(m).map_err(Failure::Poisoned)?;
            f(&mut store).map_err(Failure::Store)
        })
        .map_err(|e| failure(py, e))
    }
}

#[pymethods]
impl PyStore {
    /// Opens (or creates) the store `path` names, as the command line's `--store` does: a
    /// file path (SQLite; DuckDB for `.duckdb` or `duckdb:PATH`), `postgres://…?schema=NAME`,
    /// or a lake root (`file://`, `memory://`, `s3://`, `gs://`, `az://`). With
    /// `read_only=True` an existing store is opened for reading only: nothing in it is
    /// created or changed, so a copy the user can only read (a read-only directory or mount)
    /// answers every reader; `deliver` is then refused.
    #[new]
    #[pyo3(signature = (path, *, read_only=false))]
    fn new(py: Python<'_>, path: PathBuf, read_only: bool) -> PyResult<Self> {
        let spec = path.to_string_lossy().into_owned();
        let store = py
            .allow_threads(|| dogana_stores::open(&dogana_stores::Spec::parse(&spec), !read_only))
            .map_err(|e| errors::store(py, &e))?;
        Ok(PyStore {
            inner: Mutex::new(store),
            shown: dogana_stores::without_password(&spec),
        })
    }

    /// Opens (or creates) the store at `path`; see `Store(path, read_only=...)`.
    #[staticmethod]
    #[pyo3(signature = (path, *, read_only=false))]
    fn open(py: Python<'_>, path: PathBuf, read_only: bool) -> PyResult<Self> {
        PyStore::new(py, path, read_only)
    }

    /// The store as it was named (a file path or URL), a URL's password shown as `***`.
    #[getter]
    fn path(&self) -> String {
        self.shown.clone()
    }

    /// Delivers one file with its manifest at the receiver's `now`, in the protocol's order;
    /// the GIL is released meanwhile. A delivery contradicting its manifest is a rejected
    /// receipt, not an error; a receiver failure raises `ReceiverError`.
    #[pyo3(signature = (file, contract, manifest, *, now, source=None, format=None, delimiter=",", column_types=None))]
    #[allow(clippy::too_many_arguments)]
    fn deliver(
        &self,
        py: Python<'_>,
        file: PathBuf,
        contract: &PyContract,
        manifest: &PyManifest,
        now: &Bound<'_, PyAny>,
        source: Option<&Bound<'_, PyAny>>,
        format: Option<&str>,
        delimiter: &str,
        column_types: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDelivery> {
        let now = cv::timestamp(now, "now")?;
        let source = cv::opt_string(source, "source")?;
        let mut options = DeliverOptions::new().delimiter(delimiter_of(delimiter)?);
        if let Some(f) = format_of(py, format)? {
            options = options.format(f);
        }
        for (c, t) in column_types_of(column_types)? {
            options = options.column_type(c, t);
        }
        let (c, m) = (&contract.inner, &manifest.inner);
        let delivery = self.with(py, |s| {
            s.deliver_with(&file, c, m, now, source.as_deref(), &options)
        })?;
        let report = match delivery.report {
            None => None,
            Some(r) => Some(Py::new(py, PyRowReport { inner: r })?),
        };
        Ok(PyDelivery {
            receipt: PyReceipt {
                inner: delivery.receipt,
            },
            redecided: delivery.redecided,
            report,
        })
    }

    /// Every receipt of `table`, in the order they were stored.
    fn receipts<'py>(&self, py: Python<'py>, table: String) -> PyResult<Bound<'py, PyTuple>> {
        let stored = self.with(py, |s| s.receipts(&table))?;
        PyTuple::new(
            py,
            stored.into_iter().map(|r| PyReceipt { inner: r.receipt }),
        )
    }

    /// The stored ledger of `table`, or None before its first acceptance.
    fn ledger(&self, py: Python<'_>, table: String) -> PyResult<Option<PyLedger>> {
        Ok(self
            .with(py, |s| s.ledger(&table))?
            .map(|inner| PyLedger { inner }))
    }

    /// The tables with a stored ledger.
    fn tables(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |s| s.tables())
    }

    /// The claims of the stored ledger of `table` at the reader's `now` (see
    /// `Ledger.claims`); None before its first acceptance.
    #[pyo3(signature = (table, now, *, limit, window=None))]
    fn claims(
        &self,
        py: Python<'_>,
        table: String,
        now: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        window: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<PyClaims>> {
        let now = cv::timestamp(now, "now")?;
        let limit = cv::duration(limit, "limit")?;
        let window = cv::opt_window(window, "window")?;
        let Some(ledger) = self.with(py, |s| s.ledger(&table))? else {
            return Ok(None);
        };
        ledger
            .claims(now, limit, window.as_ref())
            .map(|inner| Some(PyClaims { inner }))
            .map_err(|e| errors::invalid_contract(py, &e))
    }

    /// Rebuilds the ledger of `table` from its accepted receipts and compares it with the
    /// stored one (rows cannot be checked: a rebuilt ledger recovers no rows).
    fn verify(&self, py: Python<'_>, table: String) -> PyResult<PyVerifyReport> {
        let r = self.with(py, |s| s.verify(&table))?;
        Ok(PyVerifyReport {
            table: r.table,
            receipts: r.receipts,
            accepted: r.accepted,
            stored: r.stored,
            rebuilt: r.rebuilt,
            problems: r.problems,
        })
    }

    /// Every published row of `table` with its ledger, read in one transaction.
    fn read_consistent_rows(&self, py: Python<'_>, table: String) -> PyResult<PySnapshot> {
        let snap = self.with(py, |s| s.read_consistent_rows(&table))?;
        let rows = snap
            .rows
            .iter()
            .map(|r| {
                let cells = r
                    .iter()
                    .map(|v| sql_value(py, v))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(PyTuple::new(py, cells)?.into_any().unbind())
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PySnapshot {
            ledger: match snap.ledger {
                None => None,
                Some(l) => Some(Py::new(py, PyLedger { inner: l })?),
            },
            columns: PyTuple::new(py, &snap.columns)?.unbind(),
            rows: pyo3::types::PyList::new(py, rows)?.into_any().unbind(),
        })
    }

    fn __repr__(&self) -> String {
        format!("Store({:?})", self.shown)
    }
}

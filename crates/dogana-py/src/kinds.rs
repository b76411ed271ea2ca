//! The fourteen wire kinds as Python classes, each an immutable wrapper of the Rust value,
//! with the protocol's constructors, properties and the wire methods every kind shares
//! (`to_json`, `from_json`, `to_dict`, `from_dict`, `identity`, `identity_dict`,
//! `identity_json`), plus `Gate`, `Group` and the planning functions.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use dogana::{
    Action, ActionKind, ApplyPlan, Check, Checkpoint, Claims, Contract, Coverage, Deletions,
    Extraction, FromWire, Gate, Group, Ledger, LogicalType, Manifest, ManifestBuilder, Receipt,
    Region, RegionClaim, Requirement, Shape, State, Transition, Wire,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

use crate::convert::{self as cv};
use crate::errors;

/// The canonical JSON text, or Python's `json.dumps` of it with `indent` (for people).
fn json_text(py: Python<'_>, canonical: String, indent: Option<usize>) -> PyResult<String> {
    match indent {
        None => Ok(canonical),
        Some(n) => {
            let json = py.import("json")?;
            let value = json.call_method1("loads", (canonical,))?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("sort_keys", true)?;
            kwargs.set_item("ensure_ascii", true)?;
            kwargs.set_item("indent", n)?;
            json.call_method("dumps", (value,), Some(&kwargs))?
                .extract()
        }
    }
}

/// A wire document given as `str` or `bytes`.
fn document_text(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    Err(errors::serialization(
        obj.py(),
        "$",
        "a wire document is a str (or UTF-8 bytes)",
    ))
}

fn hash_of(identity: &str) -> u64 {
    u64::from_str_radix(&identity[..16], 16).unwrap_or(0)
}

macro_rules! plain_from {
    ($($py:ident: $rs:ty),*) => {$(
        impl From<$rs> for $py {
            fn from(inner: $rs) -> Self {
                $py { inner }
            }
        }
    )*};
}

plain_from!(PyShape: Shape, PyManifest: Manifest, PyRegion: Region, PyLedger: Ledger, PyCheck: Check, PyAction: Action, PyApplyPlan: ApplyPlan, PyTransition: Transition, PyReceipt: Receipt, PyRegionClaim: RegionClaim, PyClaims: Claims, PyRequirement: Requirement, PyExtraction: Extraction);

/// The methods every wire kind has. `$extra` holds the kind's own methods.
macro_rules! wire_kind {
    ($py:ident, $rs:ty, { $($extra:tt)* }) => {
        #[pymethods]
        impl $py {
            $($extra)*

            /// The canonical JSON document: sorted keys, compact separators, ASCII escapes;
            /// every field present, defaults included, with `version` and `kind`. With
            /// `indent`, the same document indented for people (not canonical).
            #[pyo3(signature = (*, indent=None))]
            fn to_json(&self, py: Python<'_>, indent: Option<usize>) -> PyResult<String> {
                json_text(py, self.inner.to_json(), indent)
            }

            /// Reads a wire document (str or UTF-8 bytes) strictly: a missing or unknown
            /// field, a wrong type, an unknown version or kind or a tag outside its grammar
            /// raises `SerializationError` naming the JSON path.
            #[staticmethod]
            fn from_json(document: &Bound<'_, PyAny>) -> PyResult<Self> {
                let bytes = document_text(document)?;
                <$rs as FromWire>::from_slice(&bytes)
                    .map(<$py>::from)
                    .map_err(|e| errors::serialization_error(document.py(), &e))
            }

            /// The wire form as plain Python values (dicts, lists, str, int, float, bool,
            /// None), tags included (`{"$date": ...}`): `json.dumps` of it is the document.
            fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
                cv::py_json(py, &self.inner.to_value())
            }

            /// Reads the wire form from plain Python values, as `from_json` reads a document.
            #[staticmethod]
            fn from_dict(value: &Bound<'_, PyAny>) -> PyResult<Self> {
                if value.downcast::<PyDict>().is_err() {
                    return Err(errors::serialization(value.py(), "$", "a wire value is a dict"));
                }
                let json = cv::json(value, "$", 0)?;
                <$rs as FromWire>::from_value(&json)
                    .map(<$py>::from)
                    .map_err(|e| errors::serialization_error(value.py(), &e))
            }

            /// The identity form: the kind and every field not at its default, recursively,
            /// without `version`; datetimes in UTC.
            fn identity_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
                cv::py_json(py, &self.inner.identity_dict())
            }

            /// The RFC 8785 (JCS) text of the identity form.
            fn identity_json(&self) -> String {
                self.inner.identity_json()
            }

            /// SHA-256 of `identity_json()`, 64 lowercase hex characters.
            #[getter]
            fn identity(&self) -> String {
                self.inner.identity()
            }

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other
                    .downcast::<$py>()
                    .map(|o| o.get().inner == self.inner)
                    .unwrap_or(false)
            }

            fn __hash__(&self) -> u64 {
                hash_of(&self.inner.identity())
            }

            fn __repr__(&self) -> String {
                let doc = self.inner.to_json();
                let kind = <$rs as Wire>::KIND;
                if doc.len() <= 240 {
                    format!("{kind}.from_json({doc:?})")
                } else {
                    format!("<{kind} identity={}>", &self.inner.identity()[..16])
                }
            }

            fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<(Py<PyAny>, (String,))> {
                let f = slf.get_type().getattr("from_json")?;
                Ok((f.unbind(), (slf.get().inner.to_json(),)))
            }
        }
    };
}

fn name_of<T: Copy>(
    py: Python<'_>,
    field: &str,
    name: &str,
    parse: fn(&str) -> Option<T>,
    names: &[&str],
) -> PyResult<T> {
    parse(name).ok_or_else(|| {
        errors::invalid(
            py,
            field,
            &format!("{name:?}"),
            "CONTRACT-44",
            &format!("one of {}", names.join(", ")),
        )
    })
}

// ---------------------------------------------------------------- Shape

/// One kind of read the receiver accepts: coverage (`table` or `window`), checkpoint
/// (`none`, `timestamp`, `generation`, `sequence`), deletions (`absence`, `none`,
/// `tombstone`), with a planning `cost` (default 1), an optional `window_size` (window shapes)
/// and `lookback` (timestamp shapes of keyed contracts).
///
/// The ten shapes: `Shape.full()`, `Shape.window()`, and with `deletions="none"` or
/// `"tombstone"`: `Shape.changes()`, `Shape.window_changes()`, `Shape.generations()`,
/// `Shape.sequence()`. A keyless append is `Shape.changes()` (or `Shape.append()`).
#[pyclass(frozen, module = "dogana_rs", name = "Shape")]
#[derive(Clone)]
pub struct PyShape {
    pub inner: Shape,
}

fn shape_with(
    py: Python<'_>,
    shape: Shape,
    cost: &Bound<'_, PyAny>,
    size: Option<&Bound<'_, PyAny>>,
    lookback: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyShape> {
    if cost.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err("cost: expected a number, got bool"));
    }
    let cost: f64 = cost.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "cost: expected a number, got {}",
            cost.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    if !cost.is_finite() || cost < 0.0 {
        return Err(errors::invalid(
            py,
            "cost",
            &cost.to_string(),
            "CONTRACT-33",
            "cost is a finite nonnegative number",
        ));
    }
    let mut shape = shape.cost(cost);
    if let Some(s) = cv::opt_duration(size, "size")? {
        shape = shape.size(s);
    }
    if let Some(l) = cv::opt_duration(lookback, "lookback")? {
        shape = shape.lookback(l);
    }
    Ok(PyShape { inner: shape })
}

fn deletions_of(py: Python<'_>, name: &str) -> PyResult<Deletions> {
    name_of(
        py,
        "deletions",
        name,
        Deletions::from_name,
        Deletions::NAMES,
    )
}

wire_kind!(PyShape, Shape, {
    /// A shape from its three properties (see the class documentation); refuses the
    /// combinations the protocol does not have.
    #[new]
    #[pyo3(signature = (coverage, checkpoint, deletions, *, cost=None, window_size=None, lookback=None))]
    fn new(
        py: Python<'_>,
        coverage: &str,
        checkpoint: &str,
        deletions: &str,
        cost: Option<&Bound<'_, PyAny>>,
        window_size: Option<&Bound<'_, PyAny>>,
        lookback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let shape = Shape::new(
            name_of(
                py,
                "coverage",
                coverage,
                Coverage::from_name,
                Coverage::NAMES,
            )?,
            name_of(
                py,
                "checkpoint",
                checkpoint,
                Checkpoint::from_name,
                Checkpoint::NAMES,
            )?,
            deletions_of(py, deletions)?,
        )
        .map_err(|e| errors::invalid_contract(py, &e))?;
        let one = 1i64.into_pyobject(py)?.into_any();
        shape_with(py, shape, cost.unwrap_or(&one), window_size, lookback)
    }

    /// A complete read of the whole table, such as a full dump.
    #[staticmethod]
    #[pyo3(signature = (*, cost=None))]
    fn full(py: Python<'_>, cost: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let one = 1i64.into_pyobject(py)?.into_any();
        shape_with(py, Shape::full(), cost.unwrap_or(&one), None, None)
    }

    /// A complete read of one closed window of the window column; `size` is the rolling
    /// window's width (a planning hint).
    #[staticmethod]
    #[pyo3(signature = (*, size=None, cost=None))]
    fn window(
        py: Python<'_>,
        size: Option<&Bound<'_, PyAny>>,
        cost: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let one = 1i64.into_pyobject(py)?.into_any();
        shape_with(py, Shape::window(), cost.unwrap_or(&one), size, None)
    }

    /// The rows changed since a timestamp, over the whole table, with `deletions` `"none"` or
    /// `"tombstone"`; on a keyless contract with `"none"`, an append.
    #[staticmethod]
    #[pyo3(signature = (*, deletions="none", cost=None, lookback=None))]
    fn changes(
        py: Python<'_>,
        deletions: &str,
        cost: Option<&Bound<'_, PyAny>>,
        lookback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let one = 1i64.into_pyobject(py)?.into_any();
        shape_with(
            py,
            Shape::changes(deletions_of(py, deletions)?),
            cost.unwrap_or(&one),
            None,
            lookback,
        )
    }

    /// A keyless append: `Shape.changes(deletions="none")`.
    #[staticmethod]
    #[pyo3(signature = (*, cost=None))]
    fn append(py: Python<'_>, cost: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let one = 1i64.into_pyobject(py)?.into_any();
        shape_with(
            py,
            Shape::changes(Deletions::None),
            cost.unwrap_or(&one),
            None,
            None,
        )
    }

    /// The rows changed since a timestamp within one window.
    #[staticmethod]
    #[pyo3(signature = (*, deletions="none", size=None, cost=None, lookback=None))]
    fn window_changes(
        py: Python<'_>,
        deletions: &str,
        size: Option<&Bound<'_, PyAny>>,
        cost: Option<&Bound<'_, PyAny>>,
        lookback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let one = 1i64.into_pyobject(py)?.into_any();
        shape_with(
            py,
            Shape::window_changes(deletions_of(py, deletions)?),
            cost.unwrap_or(&one),
            size,
            lookback,
        )
    }

    /// A generation feed: the changes since the held generation token.
    #[staticmethod]
    #[pyo3(signature = (*, deletions="none", cost=None))]
    fn generations(
        py: Python<'_>,
        deletions: &str,
        cost: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let one = 1i64.into_pyobject(py)?.into_any();
        shape_with(
            py,
            Shape::generations(deletions_of(py, deletions)?),
            cost.unwrap_or(&one),
            None,
            None,
        )
    }

    /// A sequence feed: the changes in `(since, generation]` of an integer log position.
    #[staticmethod]
    #[pyo3(signature = (*, deletions="none", cost=None))]
    fn sequence(
        py: Python<'_>,
        deletions: &str,
        cost: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let one = 1i64.into_pyobject(py)?.into_any();
        shape_with(
            py,
            Shape::sequence(deletions_of(py, deletions)?),
            cost.unwrap_or(&one),
            None,
            None,
        )
    }

    /// `"table"` or `"window"`.
    #[getter]
    fn coverage(&self) -> &'static str {
        self.inner.coverage().name()
    }

    /// `"none"`, `"timestamp"`, `"generation"` or `"sequence"`.
    #[getter]
    fn checkpoint(&self) -> &'static str {
        self.inner.checkpoint().name()
    }

    /// `"absence"`, `"none"` or `"tombstone"`.
    #[getter]
    fn deletions(&self) -> &'static str {
        self.inner.deletions().name()
    }

    /// How expensive the read is to ask for (only the planner reads it).
    #[getter]
    fn cost(&self) -> f64 {
        self.inner.cost_value()
    }

    /// The rolling window's width, or None.
    #[getter]
    fn window_size(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_duration(py, self.inner.window_size())
    }

    /// How much earlier than the covered complete_as_of a planned read starts, or None.
    #[getter]
    fn lookback(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_duration(py, self.inner.lookback_value())
    }

    /// Whether the shape is a complete read (deletions by absence).
    #[getter]
    fn complete(&self) -> bool {
        self.inner.is_complete()
    }

    /// Whether the shape delivers tombstones.
    #[getter]
    fn delivers_tombstones(&self) -> bool {
        self.inner.delivers_tombstones()
    }

    /// The closed rolling window of `window_size` ending at `end`, as `(low, high)`: whole UTC
    /// days including both ends for a `"date"` column, elapsed time for `"datetime"`.
    #[pyo3(signature = (end, logical_type="datetime"))]
    fn window_ending_at(
        &self,
        py: Python<'_>,
        end: &Bound<'_, PyAny>,
        logical_type: &str,
    ) -> PyResult<Py<PyAny>> {
        let end = cv::timestamp(end, "end")?;
        let ty = name_of(
            py,
            "logical_type",
            logical_type,
            LogicalType::from_name,
            &["date", "datetime"],
        )?;
        let w = self
            .inner
            .window_ending_at(end, ty)
            .map_err(|e| errors::invalid_contract(py, &e))?;
        cv::py_window(py, &w)
    }
});

// ---------------------------------------------------------------- Contract

/// The receiver's description of one table: its key, the named shapes it accepts, the
/// optional window, cursor and deleted columns, the types of those columns, an optional
/// schema_hash and start_at. Built and validated once: a Contract is always valid.
///
/// `Contract("orders", key=("id",), shapes={"full": Shape.full()}, types={"id": "int"})`
#[pyclass(frozen, module = "dogana_rs", name = "Contract")]
#[derive(Clone)]
pub struct PyContract {
    pub inner: Contract,
    /// The untouched ledger of this contract, made on first use: `manifest` runs the gate's
    /// `manifest` check against it.
    untouched: OnceLock<Ledger>,
}

impl From<Contract> for PyContract {
    fn from(inner: Contract) -> Self {
        PyContract {
            inner,
            untouched: OnceLock::new(),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn build_manifest(
    py: Python<'_>,
    mut b: ManifestBuilder,
    window: Option<&Bound<'_, PyAny>>,
    since: Option<&Bound<'_, PyAny>>,
    generation: Option<&Bound<'_, PyAny>>,
    rows: &Bound<'_, PyAny>,
    tombstones: Option<&Bound<'_, PyAny>>,
    schema_hash: Option<&Bound<'_, PyAny>>,
    content_hash: Option<&Bound<'_, PyAny>>,
) -> PyResult<Manifest> {
    if let Some(w) = cv::opt_window(window, "window")? {
        b = b.window(w);
    }
    if let Some(s) = since.filter(|s| !s.is_none()) {
        b = b.since(cv::since(s, "since")?);
    }
    if let Some(g) = generation.filter(|g| !g.is_none()) {
        b = b.generation(cv::position(g, "generation")?);
    }
    b = b.rows(cv::count(rows, "rows")?);
    if let Some(t) = tombstones {
        b = b.tombstones(cv::count(t, "tombstones")?);
    }
    if let Some(h) = cv::opt_string(schema_hash, "schema_hash")? {
        b = b.schema_hash(h);
    }
    if let Some(h) = cv::opt_string(content_hash, "content_hash")? {
        b = b.content_hash(h);
    }
    b.build().map_err(|e| errors::invalid_contract(py, &e))
}

wire_kind!(PyContract, Contract, {
    #[new]
    #[pyo3(signature = (table, key, shapes, *, window_column=None, cursor_column=None, deleted_column=None, types=None, schema_hash=None, start_at=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        table: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        shapes: &Bound<'_, PyAny>,
        window_column: Option<&Bound<'_, PyAny>>,
        cursor_column: Option<&Bound<'_, PyAny>>,
        deleted_column: Option<&Bound<'_, PyAny>>,
        types: Option<&Bound<'_, PyAny>>,
        schema_hash: Option<&Bound<'_, PyAny>>,
        start_at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let table: String = table
            .downcast::<PyString>()
            .map_err(|_| PyTypeError::new_err("table: expected a str"))?
            .to_cow()?
            .into_owned();
        let mut b = Contract::builder(table, cv::strings(key, "key")?);
        let shapes = shapes
            .downcast::<PyDict>()
            .map_err(|_| PyTypeError::new_err("shapes: expected a dict of name to Shape"))?;
        for (name, shape) in shapes.iter() {
            let name: String = name
                .extract()
                .map_err(|_| PyTypeError::new_err("shapes: names are str"))?;
            let shape = shape
                .downcast::<PyShape>()
                .map_err(|_| PyTypeError::new_err(format!("shapes[{name:?}]: expected a Shape")))?;
            b = b.shape(name, shape.get().inner.clone());
        }
        if let Some(c) = cv::opt_string(window_column, "window_column")? {
            b = b.window_column(c);
        }
        if let Some(c) = cv::opt_string(cursor_column, "cursor_column")? {
            b = b.cursor_column(c);
        }
        if let Some(c) = cv::opt_string(deleted_column, "deleted_column")? {
            b = b.deleted_column(c);
        }
        if let Some(types) = types.filter(|t| !t.is_none()) {
            let types = types.downcast::<PyDict>().map_err(|_| {
                PyTypeError::new_err("types: expected a dict of column to type name")
            })?;
            for (column, ty) in types.iter() {
                let column: String = column
                    .extract()
                    .map_err(|_| PyTypeError::new_err("types: columns are str"))?;
                let name: String = ty.extract().map_err(|_| {
                    PyTypeError::new_err(format!("types[{column:?}]: expected a type name (str)"))
                })?;
                let ty = LogicalType::from_name(&name).ok_or_else(|| {
                    errors::invalid(
                        py,
                        &format!("types.{column}"),
                        &format!("{name:?}"),
                        "DOMAIN-05",
                        "the logical type names are int, float, str, bool, date and datetime",
                    )
                })?;
                b = b.column(column, ty);
            }
        }
        if let Some(h) = cv::opt_string(schema_hash, "schema_hash")? {
            b = b.schema_hash(h);
        }
        if let Some(t) = cv::opt_timestamp(start_at, "start_at")? {
            b = b.start_at(t);
        }
        b.build()
            .map(PyContract::from)
            .map_err(|e| errors::invalid_contract(py, &e))
    }

    /// The table's name.
    #[getter]
    fn table(&self) -> &str {
        self.inner.table()
    }

    /// The key columns (empty for a keyless table).
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.key())
    }

    /// The named shapes, as a new dict.
    #[getter]
    fn shapes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, s) in self.inner.shapes() {
            d.set_item(k, PyShape { inner: s.clone() })?;
        }
        Ok(d)
    }

    /// The shape of that name.
    fn shape(&self, py: Python<'_>, name: &str) -> PyResult<PyShape> {
        self.inner
            .shape(name)
            .map(|s| PyShape { inner: s.clone() })
            .ok_or_else(|| {
                errors::invalid(
                    py,
                    "shape",
                    &format!("{name:?}"),
                    "MAN-05",
                    "the contract has no such shape",
                )
            })
    }

    /// The window column, or None.
    #[getter]
    fn window_column(&self) -> Option<&str> {
        self.inner.window_column()
    }

    /// The cursor column, or None.
    #[getter]
    fn cursor_column(&self) -> Option<&str> {
        self.inner.cursor_column()
    }

    /// The deleted column, or None.
    #[getter]
    fn deleted_column(&self) -> Option<&str> {
        self.inner.deleted_column()
    }

    /// The types of the bound columns, as a new dict of column to type name.
    #[getter]
    fn types<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, t) in self.inner.types() {
            d.set_item(k, t.name())?;
        }
        Ok(d)
    }

    /// The column hash, or None.
    #[getter]
    fn schema_hash(&self) -> Option<&str> {
        self.inner.schema_hash()
    }

    /// The start of the history the source keeps (first keyless append), or None.
    #[getter]
    fn start_at(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_timestamp(py, self.inner.start_at())
    }

    /// The manifest of one read through `shape`, with the contract's table and schema hash
    /// filled in; validated against the contract's fields.
    #[pyo3(signature = (shape, produced_at, *, window=None, since=None, generation=None, rows, tombstones=None, content_hash=None, schema_hash=None))]
    #[allow(clippy::too_many_arguments)]
    fn manifest(
        &self,
        py: Python<'_>,
        shape: &str,
        produced_at: &Bound<'_, PyAny>,
        window: Option<&Bound<'_, PyAny>>,
        since: Option<&Bound<'_, PyAny>>,
        generation: Option<&Bound<'_, PyAny>>,
        rows: &Bound<'_, PyAny>,
        tombstones: Option<&Bound<'_, PyAny>>,
        content_hash: Option<&Bound<'_, PyAny>>,
        schema_hash: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyManifest> {
        let at = cv::timestamp(produced_at, "produced_at")?;
        let b = self.inner.manifest(shape, at);
        let m = build_manifest(
            py,
            b,
            window,
            since,
            generation,
            rows,
            tombstones,
            schema_hash,
            content_hash,
        )?;
        // The relational check the gate runs first (GATE-03): a manifest this contract
        // could never admit is refused here, as the Python reference's Contract.manifest does.
        let untouched = self
            .untouched
            .get_or_init(|| Ledger::new(self.inner.clone()));
        let checks = Gate::preflight(untouched, &m, at);
        match checks.first() {
            Some(c) if !c.passed() => {
                let rule = c
                    .detail()
                    .rsplit_once('(')
                    .and_then(|(_, r)| r.strip_suffix(')'))
                    .unwrap_or("GATE-03");
                Err(crate::errors::invalid_owned(py, c.detail(), rule))
            }
            _ => Ok(PyManifest { inner: m }),
        }
    }
});

// ---------------------------------------------------------------- Manifest

/// The sender's declaration of one read: table, shape, produced_at (the instant of the
/// source the read shows), window (window shapes), since (changed-only shapes), generation
/// (feeds), rows, tombstones, schema_hash and content_hash.
#[pyclass(frozen, module = "dogana_rs", name = "Manifest")]
#[derive(Clone)]
pub struct PyManifest {
    pub inner: Manifest,
}

wire_kind!(PyManifest, Manifest, {
    #[new]
    #[pyo3(signature = (table, shape, produced_at, *, window=None, since=None, generation=None, rows, schema_hash=None, tombstones=None, content_hash=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        table: &str,
        shape: &str,
        produced_at: &Bound<'_, PyAny>,
        window: Option<&Bound<'_, PyAny>>,
        since: Option<&Bound<'_, PyAny>>,
        generation: Option<&Bound<'_, PyAny>>,
        rows: &Bound<'_, PyAny>,
        schema_hash: Option<&Bound<'_, PyAny>>,
        tombstones: Option<&Bound<'_, PyAny>>,
        content_hash: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let b = Manifest::builder(table, shape, cv::timestamp(produced_at, "produced_at")?);
        build_manifest(
            py,
            b,
            window,
            since,
            generation,
            rows,
            tombstones,
            schema_hash,
            content_hash,
        )
        .map(|inner| PyManifest { inner })
    }

    /// The table read.
    #[getter]
    fn table(&self) -> &str {
        self.inner.table()
    }

    /// The contract's shape the read went through.
    #[getter]
    fn shape(&self) -> &str {
        self.inner.shape()
    }

    /// The read boundary: the instant of the source the read shows (UTC).
    #[getter]
    fn produced_at(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_timestamp(py, self.inner.produced_at())
    }

    /// The closed window `(low, high)` of a window read, or None.
    #[getter]
    fn window(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_window(py, self.inner.window())
    }

    /// Where a read of changes starts (a datetime, or a position), or None.
    #[getter]
    fn since(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.inner.since() {
            None => Ok(py.None()),
            Some(s) => cv::py_since(py, s),
        }
    }

    /// The position a feed (or a complete read) issues, or None.
    #[getter]
    fn generation(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.inner.generation() {
            None => Ok(py.None()),
            Some(p) => cv::py_position(py, p),
        }
    }

    /// Live rows in the read.
    #[getter]
    fn rows(&self) -> u64 {
        self.inner.rows()
    }

    /// Tombstones in the read.
    #[getter]
    fn tombstones(&self) -> u64 {
        self.inner.tombstones()
    }

    /// The column hash declared, or None.
    #[getter]
    fn schema_hash(&self) -> Option<&str> {
        self.inner.schema_hash()
    }

    /// The SHA-256 of the delivered bytes, or None.
    #[getter]
    fn content_hash(&self) -> Option<&str> {
        self.inner.content_hash()
    }
});

// ---------------------------------------------------------------- Region

/// A range of the window column with its two dates: `low`/`high` (None: unbounded), the
/// open-endpoint flags, `complete_as_of` and `deletions_as_of` (both None: unknown).
#[pyclass(frozen, module = "dogana_rs", name = "Region")]
#[derive(Clone)]
pub struct PyRegion {
    pub inner: Region,
}

fn opt_value(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<dogana::Value>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => cv::value(o, field).map(Some),
    }
}

wire_kind!(PyRegion, Region, {
    #[new]
    #[pyo3(signature = (low=None, high=None, low_open=true, high_open=true, complete_as_of=None, deletions_as_of=None))]
    fn new(
        py: Python<'_>,
        low: Option<&Bound<'_, PyAny>>,
        high: Option<&Bound<'_, PyAny>>,
        low_open: bool,
        high_open: bool,
        complete_as_of: Option<&Bound<'_, PyAny>>,
        deletions_as_of: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Region::new(
            opt_value(low, "low")?,
            opt_value(high, "high")?,
            low_open,
            high_open,
            cv::opt_timestamp(complete_as_of, "complete_as_of")?,
            cv::opt_timestamp(deletions_as_of, "deletions_as_of")?,
        )
        .map(|inner| PyRegion { inner })
        .map_err(|e| errors::invalid_contract(py, &e))
    }

    /// The low end, None when unbounded.
    #[getter]
    fn low(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_value(py, self.inner.low())
    }

    /// The high end, None when unbounded.
    #[getter]
    fn high(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_value(py, self.inner.high())
    }

    /// Whether the low end is excluded.
    #[getter]
    fn low_open(&self) -> bool {
        self.inner.low_open()
    }

    /// Whether the high end is excluded.
    #[getter]
    fn high_open(&self) -> bool {
        self.inner.high_open()
    }

    /// Every row the source had then is here (None: unknown).
    #[getter]
    fn complete_as_of(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_timestamp(py, self.inner.complete_as_of())
    }

    /// No row the source deleted before then is still here (None: unknown).
    #[getter]
    fn deletions_as_of(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_timestamp(py, self.inner.deletions_as_of())
    }

    /// Whether nothing has been proven here.
    #[getter]
    fn unknown(&self) -> bool {
        self.inner.is_unknown()
    }

    /// Whether the region holds the value.
    fn contains(&self, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.contains(&cv::value(value, "value")?))
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }
});

fn regions_tuple<'py>(py: Python<'py>, regions: &[Region]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, regions.iter().map(|r| PyRegion { inner: r.clone() }))
}

fn extract_list<
    T: Clone + Send + Sync + 'static,
    P: pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync,
>(
    obj: &Bound<'_, PyAny>,
    field: &str,
    what: &str,
    get: fn(&P) -> &T,
) -> PyResult<Vec<T>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(format!(
            "{field}: expected a sequence of {what}"
        )));
    }
    let iter = obj
        .try_iter()
        .map_err(|_| PyTypeError::new_err(format!("{field}: expected a sequence of {what}")))?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item?;
        let p = item.downcast::<P>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{field}[{i}]: expected a {what}, got {}",
                item.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        out.push(get(p.get()).clone());
    }
    Ok(out)
}

// ---------------------------------------------------------------- Ledger

/// What has been proven about one table: its contract, disjoint regions covering the
/// domain, the held generation and the publication chain's head. Immutable: `apply`,
/// `follow` and `with_contract` return new ledgers. A new ledger is one unknown region.
#[pyclass(frozen, module = "dogana_rs", name = "Ledger")]
#[derive(Clone)]
pub struct PyLedger {
    pub inner: Ledger,
}

wire_kind!(PyLedger, Ledger, {
    /// The untouched ledger of `contract`, or one from its parts (regions in the canonical
    /// spelling, the held generation and the publication id).
    #[new]
    #[pyo3(signature = (contract, regions=None, generation=None, publication_id=None))]
    fn new(
        py: Python<'_>,
        contract: &PyContract,
        regions: Option<&Bound<'_, PyAny>>,
        generation: Option<&Bound<'_, PyAny>>,
        publication_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let generation = match generation.filter(|g| !g.is_none()) {
            None => None,
            Some(g) => Some(cv::position(g, "generation")?),
        };
        let publication_id = cv::opt_string(publication_id, "publication_id")?;
        match regions.filter(|r| !r.is_none()) {
            None if generation.is_none() && publication_id.is_none() => Ok(PyLedger {
                inner: Ledger::new(contract.inner.clone()),
            }),
            regions => {
                let regions = match regions {
                    Some(r) => {
                        extract_list::<Region, PyRegion>(r, "regions", "Region", |p| &p.inner)?
                    }
                    None => Ledger::new(contract.inner.clone()).regions(),
                };
                Ledger::from_parts(contract.inner.clone(), regions, generation, publication_id)
                    .map(|inner| PyLedger { inner })
                    .map_err(|e| errors::invalid_contract(py, &e))
            }
        }
    }

    /// The contract in force.
    #[getter]
    fn contract(&self) -> PyContract {
        PyContract::from(self.inner.contract().clone())
    }

    /// The regions, in order, covering the whole domain.
    #[getter]
    fn regions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        regions_tuple(py, &self.inner.regions())
    }

    /// The held position (generation token or sequence position), or None.
    #[getter]
    fn generation(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.inner.generation() {
            None => Ok(py.None()),
            Some(p) => cv::py_position(py, p),
        }
    }

    /// The head of the publication chain, or None before the first acceptance.
    #[getter]
    fn publication_id(&self) -> Option<&str> {
        self.inner.publication_id()
    }

    /// Applies one manifest (accounting only: no rows, no receiver clock). Raises
    /// `RejectedDelivery` naming the failed check (`manifest` or `transition`) and the rule.
    fn apply(&self, py: Python<'_>, manifest: &PyManifest) -> PyResult<PyLedger> {
        self.inner
            .apply(&manifest.inner)
            .map(|inner| PyLedger { inner })
            .map_err(|e| errors::rejected(py, &e))
    }

    /// Like `apply`, also returning the Transition: `(ledger, transition)`.
    fn transition(
        &self,
        py: Python<'_>,
        manifest: &PyManifest,
    ) -> PyResult<(PyLedger, PyTransition)> {
        self.inner
            .transition(&manifest.inner)
            .map(|(l, t)| (PyLedger { inner: l }, PyTransition { inner: t }))
            .map_err(|e| errors::rejected(py, &e))
    }

    /// Applies one accepted receipt, checking that it continues the chain and leaves the
    /// ledger it names; raises `InconsistentPublication` otherwise.
    fn follow(&self, py: Python<'_>, receipt: &PyReceipt) -> PyResult<PyLedger> {
        self.inner
            .follow(&receipt.inner)
            .map(|inner| PyLedger { inner })
            .map_err(|e| errors::inconsistent(py, &e))
    }

    /// Folds the accepted receipts in order (rejections and replays skipped); refuses
    /// missing, reordered or foreign ones with `InconsistentPublication`.
    #[staticmethod]
    fn from_receipts(
        py: Python<'_>,
        contract: &PyContract,
        receipts: &Bound<'_, PyAny>,
    ) -> PyResult<PyLedger> {
        let receipts =
            extract_list::<Receipt, PyReceipt>(receipts, "receipts", "Receipt", |p| &p.inner)?;
        Ledger::from_receipts(contract.inner.clone(), &receipts)
            .map(|inner| PyLedger { inner })
            .map_err(|e| errors::inconsistent(py, &e))
    }

    /// The same evidence under another compatible contract; raises `InvalidContract` naming
    /// a fixed field that changed (once the table has history).
    fn with_contract(&self, py: Python<'_>, contract: &PyContract) -> PyResult<PyLedger> {
        self.inner
            .with_contract(contract.inner.clone())
            .map(|inner| PyLedger { inner })
            .map_err(|e| errors::invalid_contract(py, &e))
    }

    /// The claims at the reader's `now`: every region (cut to `window` if given) with its
    /// state; `limit` (a timedelta; `timedelta.max` expires nothing) expires a region whose
    /// complete_as_of is older than `limit` at `now`.
    #[pyo3(signature = (now, *, limit, window=None))]
    fn claims(
        &self,
        py: Python<'_>,
        now: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        window: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClaims> {
        let now = cv::timestamp(now, "now")?;
        let limit = cv::duration(limit, "limit")?;
        let window = cv::opt_window(window, "window")?;
        self.inner
            .claims(now, limit, window.as_ref())
            .map(|inner| PyClaims { inner })
            .map_err(|e| errors::invalid_contract(py, &e))
    }
});

// ---------------------------------------------------------------- Check, Action, plans

/// A receiver's check result: `name`, `passed`, `detail`. dogana names no check and runs
/// none; the gate records what the receiver reports.
#[pyclass(frozen, module = "dogana_rs", name = "Check")]
#[derive(Clone)]
pub struct PyCheck {
    pub inner: Check,
}

wire_kind!(PyCheck, Check, {
    #[new]
    #[pyo3(signature = (name, passed, detail=String::new()))]
    fn new(name: String, passed: bool, detail: String) -> Self {
        PyCheck {
            inner: Check::new(name, passed, detail),
        }
    }

    /// The check's name.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// Whether it passed.
    #[getter]
    fn passed(&self) -> bool {
        self.inner.passed()
    }

    /// What was found.
    #[getter]
    fn detail(&self) -> &str {
        self.inner.detail()
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }
});

/// One row operation of a plan: `action` (`replace_all`, `replace_window`, `upsert`,
/// `tombstone`, `append`), its `window` (replace_window only) and the `key` columns rows are
/// matched on.
#[pyclass(frozen, module = "dogana_rs", name = "Action")]
#[derive(Clone)]
pub struct PyAction {
    pub inner: Action,
}

wire_kind!(PyAction, Action, {
    #[new]
    #[pyo3(signature = (action, window=None, key=None))]
    fn new(
        py: Python<'_>,
        action: &str,
        window: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let kind = name_of(
            py,
            "action",
            action,
            ActionKind::from_name,
            ActionKind::NAMES,
        )?;
        let key = match key {
            None => Vec::new(),
            Some(k) => cv::strings(k, "key")?,
        };
        Ok(PyAction {
            inner: Action::new(kind, cv::opt_window(window, "window")?, key),
        })
    }

    /// The operation's name.
    #[getter]
    fn action(&self) -> &'static str {
        self.inner.kind().name()
    }

    /// The closed window of a replace_window, or None.
    #[getter]
    fn window(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_window(py, self.inner.window())
    }

    /// The columns rows are matched on (empty: keyless).
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.key())
    }
});

/// The ordered row operations an acceptance implies; the core never reads rows.
#[pyclass(frozen, module = "dogana_rs", name = "ApplyPlan")]
#[derive(Clone)]
pub struct PyApplyPlan {
    pub inner: ApplyPlan,
}

wire_kind!(PyApplyPlan, ApplyPlan, {
    #[new]
    fn new(actions: &Bound<'_, PyAny>) -> PyResult<Self> {
        let actions = extract_list::<Action, PyAction>(actions, "actions", "Action", |p| &p.inner)?;
        Ok(PyApplyPlan {
            inner: ApplyPlan::new(actions),
        })
    }

    /// The actions, in order.
    #[getter]
    fn actions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            self.inner
                .actions()
                .iter()
                .map(|a| PyAction { inner: a.clone() }),
        )
    }
});

/// What an acceptance does: the plan, and the regions over the coverage afterwards.
#[pyclass(frozen, module = "dogana_rs", name = "Transition")]
#[derive(Clone)]
pub struct PyTransition {
    pub inner: Transition,
}

wire_kind!(PyTransition, Transition, {
    #[new]
    fn new(plan: &PyApplyPlan, regions: &Bound<'_, PyAny>) -> PyResult<Self> {
        let regions = extract_list::<Region, PyRegion>(regions, "regions", "Region", |p| &p.inner)?;
        Ok(PyTransition {
            inner: Transition::new(plan.inner.clone(), regions),
        })
    }

    /// The row operations.
    #[getter]
    fn plan(&self) -> PyApplyPlan {
        PyApplyPlan {
            inner: self.inner.plan().clone(),
        }
    }

    /// The regions over the coverage after the delivery.
    #[getter]
    fn regions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        regions_tuple(py, self.inner.regions())
    }
});

// ---------------------------------------------------------------- Receipt

/// The record of one decision: the manifest, the contract in force, the checks, the
/// outcome (`accepted`, `rejected`, `replayed`), received_at, source, base_publication_id,
/// publication_id, ledger_identity and, for an acceptance or a replay, the transition.
/// Receipts are made by `Gate.evaluate`, `Gate.reject`, `Group.apply`, read back with
/// `Receipt.from_json`, or built from their fields with `Receipt(...)`, which checks them as
/// `from_json` does (a rejection keeps the publication and has no transition; an acceptance
/// or a replay names its new chain head and carries its transition).
#[pyclass(frozen, module = "dogana_rs", name = "Receipt")]
#[derive(Clone)]
pub struct PyReceipt {
    pub inner: Receipt,
}

fn wire_datetime(t: dogana::Timestamp) -> serde_json::Value {
    serde_json::json!({ "$datetime": t.to_string() })
}

wire_kind!(PyReceipt, Receipt, {
    /// A receipt from its fields, in the wire order (the field names are the keywords).
    /// `outcome` is `"accepted"`, `"rejected"` or `"replayed"`; `received_at` an aware
    /// datetime. Fields that contradict each other raise `SerializationError` (an
    /// `InvalidContract`) naming the field.
    #[new]
    #[pyo3(signature = (manifest, contract, checks, outcome, received_at, source, base_publication_id, publication_id, ledger_identity, transition=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        manifest: &PyManifest,
        contract: &PyContract,
        checks: &Bound<'_, PyAny>,
        outcome: &str,
        received_at: &Bound<'_, PyAny>,
        source: Option<String>,
        base_publication_id: Option<String>,
        publication_id: String,
        ledger_identity: String,
        transition: Option<&PyTransition>,
    ) -> PyResult<Self> {
        let checks = extract_list::<Check, PyCheck>(checks, "checks", "Check", |p| &p.inner)?;
        let received_at = cv::timestamp(received_at, "received_at")?;
        let value = serde_json::json!({
            "version": dogana::wire::VERSION,
            "kind": Receipt::KIND,
            "manifest": manifest.inner.to_value(),
            "contract": contract.inner.to_value(),
            "checks": checks.iter().map(Wire::to_value).collect::<Vec<_>>(),
            "outcome": outcome,
            "received_at": wire_datetime(received_at),
            "source": source,
            "base_publication_id": base_publication_id,
            "publication_id": publication_id,
            "ledger_identity": ledger_identity,
            "transition": transition.map(|t| t.inner.to_value()),
        });
        <Receipt as FromWire>::from_value(&value)
            .map(|inner| PyReceipt { inner })
            .map_err(|e| errors::serialization_error(py, &e))
    }

    /// The manifest decided.
    #[getter]
    fn manifest(&self) -> PyManifest {
        PyManifest {
            inner: self.inner.manifest().clone(),
        }
    }

    /// The contract in force.
    #[getter]
    fn contract(&self) -> PyContract {
        PyContract::from(self.inner.contract().clone())
    }

    /// The table (the contract's).
    #[getter]
    fn table(&self) -> &str {
        self.inner.table()
    }

    /// Every check, core checks first.
    #[getter]
    fn checks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            self.inner
                .checks()
                .iter()
                .map(|c| PyCheck { inner: c.clone() }),
        )
    }

    /// The checks that failed.
    #[getter]
    fn failures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            self.inner
                .failures()
                .map(|c| PyCheck { inner: c.clone() })
                .collect::<Vec<_>>(),
        )
    }

    /// `"accepted"`, `"rejected"` or `"replayed"`.
    #[getter]
    fn outcome(&self) -> &'static str {
        self.inner.outcome().name()
    }

    /// True for accepted and replayed receipts.
    #[getter]
    fn accepted(&self) -> bool {
        self.inner.accepted()
    }

    /// True only for a replay.
    #[getter]
    fn replayed(&self) -> bool {
        self.inner.replayed()
    }

    /// The receiver's `now` when it decided.
    #[getter]
    fn received_at(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_timestamp(py, self.inner.received_at())
    }

    /// Where the delivery came from, or None.
    #[getter]
    fn source(&self) -> Option<&str> {
        self.inner.source()
    }

    /// The chain head the decision was made against, or None.
    #[getter]
    fn base_publication_id(&self) -> Option<&str> {
        self.inner.base_publication_id()
    }

    /// The chain head after the decision (`"None"` for a rejection before any publication).
    #[getter]
    fn publication_id(&self) -> &str {
        self.inner.publication_id()
    }

    /// The identity of the ledger the decision leaves.
    #[getter]
    fn ledger_identity(&self) -> &str {
        self.inner.ledger_identity()
    }

    /// The plan and the regions after, for an acceptance or a replay; None for a rejection.
    #[getter]
    fn transition(&self) -> Option<PyTransition> {
        self.inner
            .transition()
            .map(|t| PyTransition { inner: t.clone() })
    }

    /// This accepted receipt answered again as a replay.
    fn as_replay(&self, py: Python<'_>) -> PyResult<PyReceipt> {
        self.inner
            .as_replay()
            .map(|inner| PyReceipt { inner })
            .map_err(|e| errors::inconsistent(py, &e))
    }
});

// ---------------------------------------------------------------- Claims

/// One region of one table with its state at the reader's time.
#[pyclass(frozen, module = "dogana_rs", name = "RegionClaim")]
#[derive(Clone)]
pub struct PyRegionClaim {
    pub inner: RegionClaim,
}

wire_kind!(PyRegionClaim, RegionClaim, {
    #[new]
    fn new(py: Python<'_>, table: String, region: &PyRegion, state: &str) -> PyResult<Self> {
        let state = name_of(
            py,
            "state",
            state,
            State::from_name,
            &["unknown", "expired", "patched", "complete"],
        )?;
        Ok(PyRegionClaim {
            inner: RegionClaim::new(table, region.inner.clone(), state),
        })
    }

    /// The table.
    #[getter]
    fn table(&self) -> &str {
        self.inner.table()
    }

    /// The region.
    #[getter]
    fn region(&self) -> PyRegion {
        PyRegion {
            inner: self.inner.region().clone(),
        }
    }

    /// `"unknown"`, `"expired"`, `"patched"` or `"complete"`.
    #[getter]
    fn state(&self) -> &'static str {
        self.inner.state().name()
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }
});

/// What a reader may trust at its time `at` under freshness `limit`: every region's claim;
/// the table's state (its worst region's), the minima of each date (None if any region is
/// unknown) and `exact_as_of`, the instant p at which every region is (p, p), or None.
#[pyclass(frozen, module = "dogana_rs", name = "Claims")]
#[derive(Clone)]
pub struct PyClaims {
    pub inner: Claims,
}

wire_kind!(PyClaims, Claims, {
    #[new]
    fn new(
        at: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        regions: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let regions =
            extract_list::<RegionClaim, PyRegionClaim>(regions, "regions", "RegionClaim", |p| {
                &p.inner
            })?;
        Ok(PyClaims {
            inner: Claims::new(
                cv::timestamp(at, "at")?,
                cv::duration(limit, "limit")?,
                regions,
            ),
        })
    }

    /// The reader's time.
    #[getter]
    fn at(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_timestamp(py, self.inner.at())
    }

    /// The freshness limit (`timedelta.max`: none expires).
    #[getter]
    fn limit(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_duration(py, self.inner.limit())
    }

    /// Every region's claim.
    #[getter]
    fn regions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            self.inner
                .regions()
                .iter()
                .map(|r| PyRegionClaim { inner: r.clone() }),
        )
    }

    /// The worst region's state, in the order unknown, expired, patched, complete.
    #[getter]
    fn state(&self) -> &'static str {
        self.inner.state().name()
    }

    /// The minimum complete_as_of, or None if any region is unknown.
    #[getter]
    fn complete_as_of(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_timestamp(py, self.inner.complete_as_of())
    }

    /// The minimum deletions_as_of, or None if any region is unknown.
    #[getter]
    fn deletions_as_of(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_timestamp(py, self.inner.deletions_as_of())
    }

    /// The instant p at which every region is exact, (p, p), or None.
    #[getter]
    fn exact_as_of(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_timestamp(py, self.inner.exact_as_of())
    }

    /// The command line's table line: `<table>: <state>; exact at <p>`.
    fn summary(&self, table: &str) -> String {
        self.inner.summary(table)
    }
});

// ---------------------------------------------------------------- planning

/// What a reader needs of a table: a minimum complete_as_of, an optional minimum
/// deletions_as_of, over an optional window.
#[pyclass(frozen, module = "dogana_rs", name = "Requirement")]
#[derive(Clone)]
pub struct PyRequirement {
    pub inner: Requirement,
}

wire_kind!(PyRequirement, Requirement, {
    #[new]
    #[pyo3(signature = (table, complete_as_of, deletions_as_of=None, window=None))]
    fn new(
        table: String,
        complete_as_of: &Bound<'_, PyAny>,
        deletions_as_of: Option<&Bound<'_, PyAny>>,
        window: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut r = Requirement::new(table, cv::timestamp(complete_as_of, "complete_as_of")?);
        if let Some(d) = cv::opt_timestamp(deletions_as_of, "deletions_as_of")? {
            r = r.with_deletions_as_of(d);
        }
        if let Some(w) = cv::opt_window(window, "window")? {
            r = r.with_window(w);
        }
        Ok(PyRequirement { inner: r })
    }

    /// Both dates at `p`: the table exact at p.
    #[staticmethod]
    #[pyo3(signature = (table, p, *, window=None))]
    fn exact(
        table: String,
        p: &Bound<'_, PyAny>,
        window: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut r = Requirement::exact(table, cv::timestamp(p, "p")?);
        if let Some(w) = cv::opt_window(window, "window")? {
            r = r.with_window(w);
        }
        Ok(PyRequirement { inner: r })
    }

    /// The table.
    #[getter]
    fn table(&self) -> &str {
        self.inner.table()
    }

    /// The minimum complete_as_of.
    #[getter]
    fn complete_as_of(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_timestamp(py, self.inner.complete_as_of())
    }

    /// The minimum deletions_as_of, or None.
    #[getter]
    fn deletions_as_of(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_timestamp(py, self.inner.deletions_as_of())
    }

    /// The window, or None (the whole table).
    #[getter]
    fn window(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_window(py, self.inner.window())
    }
});

/// A read to ask the source for: table, shape, `until` (to declare as produced_at only if
/// the read saw the source then), the window of a window shape and where a read of changes
/// starts.
#[pyclass(frozen, module = "dogana_rs", name = "Extraction")]
#[derive(Clone)]
pub struct PyExtraction {
    pub inner: Extraction,
}

wire_kind!(PyExtraction, Extraction, {
    #[new]
    #[pyo3(signature = (table, shape, until, window=None, since=None))]
    fn new(
        table: String,
        shape: String,
        until: &Bound<'_, PyAny>,
        window: Option<&Bound<'_, PyAny>>,
        since: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let since = match since.filter(|s| !s.is_none()) {
            None => None,
            Some(s) => Some(cv::since(s, "since")?),
        };
        Ok(PyExtraction {
            inner: Extraction::new(
                table,
                shape,
                cv::timestamp(until, "until")?,
                cv::opt_window(window, "window")?,
                since,
            ),
        })
    }

    /// The table to read.
    #[getter]
    fn table(&self) -> &str {
        self.inner.table()
    }

    /// The shape to read through.
    #[getter]
    fn shape(&self) -> &str {
        self.inner.shape()
    }

    /// The read boundary.
    #[getter]
    fn until(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_timestamp(py, self.inner.until())
    }

    /// The window of a window shape, or None.
    #[getter]
    fn window(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        cv::py_opt_window(py, self.inner.window())
    }

    /// Where a read of changes starts, or None.
    #[getter]
    fn since(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.inner.since() {
            None => Ok(py.None()),
            Some(s) => cv::py_since(py, s),
        }
    }

    /// The manifest of the read this asks for, stamped at `until`, with what only the read
    /// knows given here.
    #[pyo3(signature = (contract, *, rows, tombstones=None, generation=None, content_hash=None))]
    fn manifest(
        &self,
        py: Python<'_>,
        contract: &PyContract,
        rows: &Bound<'_, PyAny>,
        tombstones: Option<&Bound<'_, PyAny>>,
        generation: Option<&Bound<'_, PyAny>>,
        content_hash: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyManifest> {
        let b = self
            .inner
            .manifest(&contract.inner, cv::count(rows, "rows")?);
        build_manifest(
            py,
            b,
            None,
            None,
            generation,
            rows,
            tombstones,
            None,
            content_hash,
        )
        .map(|inner| PyManifest { inner })
    }
});

/// Nothing if the ledger's claims meet `requirement`; else the cheapest admitted read that
/// establishes it (ties broken by shape name). Raises `PlanningError` when no shape can.
#[pyfunction]
pub fn plan_delivery(
    py: Python<'_>,
    ledger: &PyLedger,
    requirement: &PyRequirement,
) -> PyResult<Option<PyExtraction>> {
    dogana::plan_delivery(&ledger.inner, &requirement.inner)
        .map(|x| x.map(|inner| PyExtraction { inner }))
        .map_err(|e| errors::planning(py, &e))
}

/// The next read through `shape_name` at `until`: a rolling window from the shape's
/// window_size extended back to meet the last complete evidence, `since` from the evidence
/// (less lookback) or the held position.
#[pyfunction]
#[pyo3(signature = (ledger, shape_name, until, *, window=None))]
pub fn next_extraction(
    py: Python<'_>,
    ledger: &PyLedger,
    shape_name: &str,
    until: &Bound<'_, PyAny>,
    window: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyExtraction> {
    let until = cv::timestamp(until, "until")?;
    let window = cv::opt_window(window, "window")?;
    dogana::next_extraction(&ledger.inner, shape_name, until, window.as_ref())
        .map(|inner| PyExtraction { inner })
        .map_err(|e| errors::planning(py, &e))
}

/// The column hash of `[name, type]` pairs: SHA-256 of their compact ASCII JSON.
#[pyfunction]
pub fn column_hash(pairs: Vec<(String, String)>) -> String {
    dogana::column_hash(&pairs)
}

// ---------------------------------------------------------------- Gate

fn checks_of(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Vec<Check>> {
    match obj {
        None => Ok(Vec::new()),
        Some(o) if o.is_none() => Ok(Vec::new()),
        Some(o) => extract_list::<Check, PyCheck>(o, field, "Check", |p| &p.inner),
    }
}

/// The decision of one delivery. `preflight` gives the three core checks (`manifest`,
/// `receiver_time`, `transition`); `evaluate` decides from them, the receiver's outcomes and
/// a group's joint checks; `reject` records a failure the receiver found.
#[pyclass(frozen, module = "dogana_rs", name = "Gate")]
pub struct PyGate;

#[pymethods]
impl PyGate {
    /// The three core checks, in order; `transition` is not evaluated when `manifest` fails.
    #[staticmethod]
    fn preflight<'py>(
        py: Python<'py>,
        ledger: &PyLedger,
        manifest: &PyManifest,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let checks = Gate::preflight(&ledger.inner, &manifest.inner, cv::timestamp(now, "now")?);
        PyTuple::new(py, checks.into_iter().map(|c| PyCheck { inner: c }))
    }

    /// Decides one delivery: the core checks, then `outcomes` (the receiver's checks of the
    /// rows, such as `check_rows`' report), then `joint`. Any failed check rejects.
    #[staticmethod]
    #[pyo3(signature = (ledger, manifest, outcomes=None, *, now, source=None, joint=None))]
    fn evaluate(
        ledger: &PyLedger,
        manifest: &PyManifest,
        outcomes: Option<&Bound<'_, PyAny>>,
        now: &Bound<'_, PyAny>,
        source: Option<&Bound<'_, PyAny>>,
        joint: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyReceipt> {
        let outcomes = checks_of(outcomes, "outcomes")?;
        let joint = checks_of(joint, "joint")?;
        let now = cv::timestamp(now, "now")?;
        let source = cv::opt_string(source, "source")?;
        Ok(PyReceipt {
            inner: Gate::evaluate(
                &ledger.inner,
                &manifest.inner,
                &outcomes,
                now,
                source.as_deref(),
                &joint,
            ),
        })
    }

    /// A rejection recording `checks`, the core checks first; one without any failed check
    /// gets a failed `receiver` check.
    #[staticmethod]
    #[pyo3(signature = (ledger, manifest, checks=None, now=None, source=None))]
    fn reject(
        ledger: &PyLedger,
        manifest: &PyManifest,
        checks: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        source: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyReceipt> {
        let checks = checks_of(checks, "checks")?;
        let now = match now {
            Some(n) => cv::timestamp(n, "now")?,
            None => {
                return Err(PyTypeError::new_err(
                    "Gate.reject() missing required argument: 'now'",
                ))
            }
        };
        let source = cv::opt_string(source, "source")?;
        Ok(PyReceipt {
            inner: Gate::reject(
                &ledger.inner,
                &manifest.inner,
                &checks,
                now,
                source.as_deref(),
            ),
        })
    }
}

// ---------------------------------------------------------------- Group

/// Tables read together, each named once whatever its letter case. `claims` states every
/// table's regions together; `apply` decides one delivery per table as one (all accepted or
/// all rejected, with the `together` check); `replay` answers a repeated group.
#[pyclass(frozen, module = "dogana_rs", name = "Group")]
#[derive(Clone)]
pub struct PyGroup {
    pub inner: Group,
}

fn ledgers_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Ledger>> {
    extract_list::<Ledger, PyLedger>(obj, "ledgers", "Ledger", |p| &p.inner)
}

fn manifests_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Manifest>> {
    extract_list::<Manifest, PyManifest>(obj, "manifests", "Manifest", |p| &p.inner)
}

fn windows_of(
    obj: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<BTreeMap<String, dogana::Window>>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let d = obj
        .downcast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("windows: expected a dict of table to (low, high)"))?;
    let mut out = BTreeMap::new();
    for (k, v) in d.iter() {
        let k: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("windows: tables are str"))?;
        let w = cv::window(&v, &format!("windows[{k:?}]"))?;
        out.insert(k, w);
    }
    Ok(Some(out))
}

#[pymethods]
impl PyGroup {
    #[new]
    fn new(py: Python<'_>, contracts: &Bound<'_, PyAny>) -> PyResult<Self> {
        let contracts =
            extract_list::<Contract, PyContract>(contracts, "contracts", "Contract", |p| &p.inner)?;
        Group::new(contracts)
            .map(|inner| PyGroup { inner })
            .map_err(|e| errors::invalid_contract(py, &e))
    }

    /// The contracts, in the group's order.
    #[getter]
    fn contracts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            self.inner
                .contracts()
                .iter()
                .map(|c| PyContract::from(c.clone())),
        )
    }

    /// The tables as their contracts spell them.
    #[getter]
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.tables().collect::<Vec<_>>())
    }

    /// The contract of `table`, matched case-insensitively, or None.
    fn contract(&self, table: &str) -> Option<PyContract> {
        self.inner
            .contract(table)
            .map(|c| PyContract::from(c.clone()))
    }

    /// Every table's claims together (minima and exact_as_of across tables), each table cut
    /// to its window in `windows` (keyed by table).
    #[pyo3(signature = (ledgers, now, *, limit, windows=None))]
    fn claims(
        &self,
        py: Python<'_>,
        ledgers: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        windows: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClaims> {
        let ledgers = ledgers_of(ledgers)?;
        let windows = windows_of(windows)?;
        self.inner
            .claims(
                &ledgers,
                cv::timestamp(now, "now")?,
                cv::duration(limit, "limit")?,
                windows.as_ref(),
            )
            .map(|inner| PyClaims { inner })
            .map_err(|e| errors::invalid_contract(py, &e))
    }

    /// The together digest of one manifest per table.
    fn together_digest(&self, py: Python<'_>, manifests: &Bound<'_, PyAny>) -> PyResult<String> {
        self.inner
            .together_digest(&manifests_of(manifests)?)
            .map_err(|e| errors::invalid_contract(py, &e))
    }

    /// Decides one delivery per table as one; returns the receipts in the group's order.
    /// `outcomes` maps a table to its receiver checks, `sources` a table to its source.
    #[pyo3(signature = (ledgers, manifests, *, now, outcomes=None, sources=None))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        ledgers: &Bound<'_, PyAny>,
        manifests: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
        outcomes: Option<&Bound<'_, PyAny>>,
        sources: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ledgers = ledgers_of(ledgers)?;
        let manifests = manifests_of(manifests)?;
        let outcomes = match outcomes.filter(|o| !o.is_none()) {
            None => None,
            Some(o) => {
                let d = o.downcast::<PyDict>().map_err(|_| {
                    PyTypeError::new_err("outcomes: expected a dict of table to checks")
                })?;
                let mut m = BTreeMap::new();
                for (k, v) in d.iter() {
                    let k: String = k
                        .extract()
                        .map_err(|_| PyTypeError::new_err("outcomes: tables are str"))?;
                    let checks = checks_of(Some(&v), &format!("outcomes[{k:?}]"))?;
                    m.insert(k, checks);
                }
                Some(m)
            }
        };
        let sources: Option<BTreeMap<String, String>> =
            match sources.filter(|o| !o.is_none()) {
                None => None,
                Some(s) => Some(s.extract().map_err(|_| {
                    PyTypeError::new_err("sources: expected a dict of table to str")
                })?),
            };
        let receipts = self
            .inner
            .apply(
                &ledgers,
                &manifests,
                cv::timestamp(now, "now")?,
                outcomes.as_ref(),
                sources.as_ref(),
            )
            .map_err(|e| errors::invalid_contract(py, &e))?;
        PyTuple::new(py, receipts.into_iter().map(|r| PyReceipt { inner: r }))
    }

    /// The recorded receipts replayed when every table's manifest was accepted together with
    /// exactly these manifests, in the group's order; None otherwise (a new decision).
    fn replay<'py>(
        &self,
        py: Python<'py>,
        manifests: &Bound<'_, PyAny>,
        recorded: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let manifests = manifests_of(manifests)?;
        let recorded =
            extract_list::<Receipt, PyReceipt>(recorded, "recorded", "Receipt", |p| &p.inner)?;
        match self.inner.replay(&manifests, &recorded) {
            Ok(None) => Ok(None),
            Ok(Some(rs)) => Ok(Some(PyTuple::new(
                py,
                rs.into_iter().map(|r| PyReceipt { inner: r }),
            )?)),
            Err(e) => Err(errors::invalid_contract(py, &e)),
        }
    }

    fn __repr__(&self) -> String {
        format!("Group({:?})", self.inner.tables().collect::<Vec<_>>())
    }
}

/// None when the group is already exact at an instant no earlier than `at_least`; otherwise
/// one read per table with one `until`, each the cheapest establishing (until, until) over
/// its window. Raises `PlanningError` naming every table that cannot.
#[pyfunction]
#[pyo3(signature = (group, ledgers, at_least, *, windows=None))]
pub fn plan_together<'py>(
    py: Python<'py>,
    group: &PyGroup,
    ledgers: &Bound<'_, PyAny>,
    at_least: &Bound<'_, PyAny>,
    windows: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let ledgers = ledgers_of(ledgers)?;
    let windows = windows_of(windows)?;
    match dogana::plan_together(
        &group.inner,
        &ledgers,
        cv::timestamp(at_least, "at_least")?,
        windows.as_ref(),
    ) {
        Ok(None) => Ok(None),
        Ok(Some(xs)) => Ok(Some(PyTuple::new(
            py,
            xs.into_iter().map(|x| PyExtraction { inner: x }),
        )?)),
        Err(e) => Err(errors::planning(py, &e)),
    }
}

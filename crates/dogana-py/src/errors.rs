//! The error tree, raised as the Python classes of `dogana_rs.errors` (defined in Python so
//! that `InvalidContract` can also be a `ValueError`, as in the Python reference):
//!
//! ```text
//! DoganaError
//! ├── InvalidContract          (also ValueError)
//! │   └── SerializationError
//! ├── RejectedDelivery         (also ValueError)
//! ├── PlanningError            (also ValueError)
//! └── InconsistentPublication
//! ReceiverError                a receiver's own failure (SQLite, I/O, configuration)
//! ```
//!
//! Every protocol error carries the Rust [`Problem`]'s parts as attributes: `field`, `value`,
//! `rule` and `reason` (and `check` for a rejected delivery, `goal` and `problems` for a
//! planning error).

use dogana::{
    InconsistentPublication, InvalidContract, PlanningError, Problem, RejectedDelivery,
    SerializationError,
};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyType;

static INVALID: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static SERIALIZATION: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static REJECTED: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static PLANNING: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static INCONSISTENT: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static RECEIVER: GILOnceCell<Py<PyType>> = GILOnceCell::new();

const MODULE: &str = "dogana_rs.errors";

fn raise(
    py: Python<'_>,
    cell: &'static GILOnceCell<Py<PyType>>,
    name: &str,
    message: String,
    attrs: &[(&str, Py<PyAny>)],
) -> PyErr {
    let ty = match cell.import(py, MODULE, name) {
        Ok(t) => t.clone(),
        Err(e) => {
            return PyRuntimeError::new_err(format!(
                "{message} (and {MODULE}.{name} could not be imported: {e})"
            ))
        }
    };
    let err = PyErr::from_type(ty, (message,));
    let value = err.value(py);
    for (k, v) in attrs {
        if let Err(e) = value.setattr(*k, v) {
            return e;
        }
    }
    err
}

fn problem_attrs(py: Python<'_>, p: &Problem) -> Vec<(&'static str, Py<PyAny>)> {
    let s = |x: &str| -> Py<PyAny> {
        x.into_pyobject(py)
            .map(|o| o.into_any().unbind())
            .unwrap_or_else(|_| py.None())
    };
    vec![
        ("field", s(&p.field)),
        ("value", s(&p.value)),
        ("rule", s(p.rule)),
        ("reason", s(&p.reason)),
    ]
}

/// An `InvalidContract` for a Python argument the protocol refuses.
pub fn invalid(
    py: Python<'_>,
    field: &str,
    value: &str,
    rule: &'static str,
    reason: &str,
) -> PyErr {
    invalid_contract(
        py,
        &InvalidContract::Declaration(Problem::new(field, value, rule, reason)),
    )
}

/// An `InvalidContract` from a failed `manifest` check's detail (`field = value: reason
/// (RULE)`), with its rule.
pub fn invalid_owned(py: Python<'_>, detail: &str, rule: &str) -> PyErr {
    let field = detail.split([' ', ':']).next().unwrap_or("manifest");
    let rule = pyo3::types::PyString::new(py, rule).into_any().unbind();
    let field = pyo3::types::PyString::new(py, field).into_any().unbind();
    let reason = pyo3::types::PyString::new(py, detail).into_any().unbind();
    raise(
        py,
        &INVALID,
        "InvalidContract",
        format!("invalid declaration: {detail}"),
        &[("rule", rule), ("field", field), ("reason", reason)],
    )
}

/// A `SerializationError` for a document the binding refuses before the core reads it.
pub fn serialization(py: Python<'_>, path: &str, reason: &str) -> PyErr {
    serialization_error(
        py,
        &SerializationError(Problem::new(path, "", "WIRE-07", reason)),
    )
}

/// The core's `InvalidContract` (or its `SerializationError` subclass).
pub fn invalid_contract(py: Python<'_>, e: &InvalidContract) -> PyErr {
    match e {
        InvalidContract::Declaration(p) => raise(
            py,
            &INVALID,
            "InvalidContract",
            e.to_string(),
            &problem_attrs(py, p),
        ),
        InvalidContract::Serialization(s) => serialization_error(py, s),
    }
}

/// The core's `SerializationError`.
pub fn serialization_error(py: Python<'_>, e: &SerializationError) -> PyErr {
    raise(
        py,
        &SERIALIZATION,
        "SerializationError",
        e.to_string(),
        &problem_attrs(py, &e.0),
    )
}

/// The core's `RejectedDelivery`.
pub fn rejected(py: Python<'_>, e: &RejectedDelivery) -> PyErr {
    let mut attrs = problem_attrs(py, &e.problem);
    attrs.push((
        "check",
        e.check
            .into_pyobject(py)
            .map(|o| o.into_any().unbind())
            .unwrap_or_else(|_| py.None()),
    ));
    raise(py, &REJECTED, "RejectedDelivery", e.to_string(), &attrs)
}

/// The core's `PlanningError`: `goal`, and `problems` as `(field, value, rule, reason)` tuples.
pub fn planning(py: Python<'_>, e: &PlanningError) -> PyErr {
    let mut attrs = e
        .reasons
        .first()
        .map(|p| problem_attrs(py, p))
        .unwrap_or_default();
    let problems: Vec<(String, String, String, String)> = e
        .reasons
        .iter()
        .map(|p| {
            (
                p.field.clone(),
                p.value.clone(),
                p.rule.to_owned(),
                p.reason.clone(),
            )
        })
        .collect();
    if let Ok(list) = problems.into_pyobject(py) {
        attrs.push(("problems", list.into_any().unbind()));
    }
    attrs.push((
        "goal",
        pyo3::types::PyString::new(py, &e.goal).into_any().unbind(),
    ));
    raise(py, &PLANNING, "PlanningError", e.to_string(), &attrs)
}

/// The core's `InconsistentPublication`.
pub fn inconsistent(py: Python<'_>, e: &InconsistentPublication) -> PyErr {
    raise(
        py,
        &INCONSISTENT,
        "InconsistentPublication",
        e.to_string(),
        &problem_attrs(py, &e.0),
    )
}

/// A receiver's own failure: SQLite, reading the file, its configuration. A contract that
/// cannot follow the stored history is the protocol's `InvalidContract`.
pub fn store(py: Python<'_>, e: &dogana_receiver::StoreError) -> PyErr {
    match e {
        dogana_receiver::StoreError::Contract(c) => invalid_contract(py, c),
        other => {
            // the stable code (docs/errors.md), and whether retrying later can help
            let code = dogana_stores::code_of(other);
            let attrs = [
                (
                    "code",
                    pyo3::types::PyString::new(py, code.id).into_any().unbind(),
                ),
                (
                    "transient",
                    pyo3::types::PyBool::new(py, code.kind == dogana_codes::Kind::Transient)
                        .to_owned()
                        .into_any()
                        .unbind(),
                ),
            ];
            raise(py, &RECEIVER, "ReceiverError", other.to_string(), &attrs)
        }
    }
}

/// A failure to check rows that is not the delivery's fault (reading the file, a manifest the
/// preflight refuses, missing column types).
pub fn rows(py: Python<'_>, e: &dogana_rows::RowsError) -> PyErr {
    raise(py, &RECEIVER, "ReceiverError", e.to_string(), &[])
}

//! Python values in and out: aware `datetime`, `date`, `timedelta`, key and bound values,
//! windows, positions, and JSON values as Python objects.
//!
//! Every refusal names the argument at fault: a value of the wrong Python type is a
//! `TypeError`; a value of the right type that the protocol refuses (a naive datetime, a float
//! or bool key, an integer outside the portable range, a negative duration) is an
//! `InvalidContract` naming the rule.

use dogana::{Date, Duration, Position, Since, Timestamp, Value, Window};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use serde_json::{Map, Value as Json};

use crate::errors::{invalid, serialization};

static DATETIME: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static DATE: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static TIMEDELTA: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static UTC: GILOnceCell<Py<PyAny>> = GILOnceCell::new();
static TIMEDELTA_MAX: GILOnceCell<Py<PyAny>> = GILOnceCell::new();

fn datetime_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DATETIME.import(py, "datetime", "datetime")
}

fn date_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DATE.import(py, "datetime", "date")
}

fn timedelta_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    TIMEDELTA.import(py, "datetime", "timedelta")
}

fn utc(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    Ok(UTC
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py
                .import("datetime")?
                .getattr("timezone")?
                .getattr("utc")?
                .unbind())
        })?
        .bind(py))
}

fn timedelta_max(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    Ok(TIMEDELTA_MAX
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(timedelta_type(py)?.getattr("max")?.unbind())
        })?
        .bind(py))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn wrong_type(field: &str, expected: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "{field}: expected {expected}, got {} {}",
        type_name(obj),
        obj.repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "?".into())
    ))
}

fn int_attr(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<i64> {
    obj.getattr(name)?.extract()
}

/// Whether `obj` is a `datetime.datetime`.
pub fn is_datetime(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.is_instance(datetime_type(obj.py())?)
}

/// An aware `datetime` as a UTC instant. A naive one is refused (TRUST-09).
pub fn timestamp(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Timestamp> {
    let py = obj.py();
    if !is_datetime(obj)? {
        return Err(wrong_type(field, "an aware datetime", obj));
    }
    let offset = obj.call_method0("utcoffset")?;
    if offset.is_none() {
        return Err(invalid(
            py,
            field,
            &obj.repr()?.to_string(),
            "TRUST-09",
            "a datetime carries its UTC offset or is refused: this one is naive (give it a tzinfo, such as timezone.utc)",
        ));
    }
    let day = Date::from_ymd(
        int_attr(obj, "year")? as i32,
        int_attr(obj, "month")? as u32,
        int_attr(obj, "day")? as u32,
    )
    .map_err(|e| {
        invalid(
            py,
            field,
            &e.to_string(),
            "WIRE-14",
            "outside the date domain",
        )
    })?;
    let local = day.days_since_epoch() as i128 * 86_400_000_000
        + (int_attr(obj, "hour")? as i128 * 3600
            + int_attr(obj, "minute")? as i128 * 60
            + int_attr(obj, "second")? as i128)
            * 1_000_000
        + int_attr(obj, "microsecond")? as i128;
    let micros = local - timedelta_micros(&offset)?;
    i64::try_from(micros)
        .ok()
        .and_then(Timestamp::from_micros)
        .ok_or_else(|| {
            invalid(
                py,
                field,
                &obj.repr().map(|r| r.to_string()).unwrap_or_default(),
                "WIRE-14",
                "outside the datetime domain once converted to UTC (years 1 to 9999)",
            )
        })
}

fn timedelta_micros(obj: &Bound<'_, PyAny>) -> PyResult<i128> {
    Ok(int_attr(obj, "days")? as i128 * 86_400_000_000
        + int_attr(obj, "seconds")? as i128 * 1_000_000
        + int_attr(obj, "microseconds")? as i128)
}

/// An optional aware datetime (`None` passes through).
pub fn opt_timestamp(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<Timestamp>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => timestamp(o, field).map(Some),
    }
}

/// A UTC instant as an aware `datetime` in UTC.
pub fn py_timestamp(py: Python<'_>, t: Timestamp) -> PyResult<Py<PyAny>> {
    let micros = t.as_micros();
    let (y, m, d) = t.date().ymd();
    let in_day = micros.rem_euclid(86_400_000_000);
    let (secs, us) = (in_day / 1_000_000, in_day % 1_000_000);
    Ok(datetime_type(py)?
        .call1((
            y,
            m,
            d,
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            us,
            utc(py)?,
        ))?
        .unbind())
}

/// An optional instant as a datetime or `None`.
pub fn py_opt_timestamp(py: Python<'_>, t: Option<Timestamp>) -> PyResult<Py<PyAny>> {
    match t {
        None => Ok(py.None()),
        Some(t) => py_timestamp(py, t),
    }
}

/// A `date` (not a `datetime`) as a calendar date.
pub fn date(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Date> {
    if is_datetime(obj)? || !obj.is_instance(date_type(obj.py())?)? {
        return Err(wrong_type(field, "a date", obj));
    }
    Date::from_ymd(
        int_attr(obj, "year")? as i32,
        int_attr(obj, "month")? as u32,
        int_attr(obj, "day")? as u32,
    )
    .map_err(|e| {
        invalid(
            obj.py(),
            field,
            &e.to_string(),
            "WIRE-14",
            "outside the date domain",
        )
    })
}

/// A calendar date as a `date`.
pub fn py_date(py: Python<'_>, d: Date) -> PyResult<Py<PyAny>> {
    let (y, m, dd) = d.ymd();
    Ok(date_type(py)?.call1((y, m, dd))?.unbind())
}

/// A nonnegative `timedelta`. `timedelta.max` (and anything beyond [`Duration::MAX`]) is the
/// unlimited duration, which expires nothing as a claims limit (CLAIMS-05).
pub fn duration(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Duration> {
    if !obj.is_instance(timedelta_type(obj.py())?)? {
        return Err(wrong_type(field, "a timedelta", obj));
    }
    let micros = timedelta_micros(obj)?;
    if micros > Duration::MAX.as_micros() {
        return Ok(Duration::MAX);
    }
    Duration::from_micros(micros).map_err(|e| {
        invalid(
            obj.py(),
            field,
            &obj.repr().map(|r| r.to_string()).unwrap_or_default(),
            "WIRE-12",
            &e.to_string(),
        )
    })
}

/// An optional duration.
pub fn opt_duration(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<Duration>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => duration(o, field).map(Some),
    }
}

/// A duration as a `timedelta`; [`Duration::MAX`] comes back as `timedelta.max`.
pub fn py_duration(py: Python<'_>, d: Duration) -> PyResult<Py<PyAny>> {
    if d == Duration::MAX {
        return Ok(timedelta_max(py)?.clone().unbind());
    }
    let micros = d.as_micros();
    let days = micros / 86_400_000_000;
    let rest = micros % 86_400_000_000;
    Ok(timedelta_type(py)?
        .call1((
            days as i64,
            (rest / 1_000_000) as i64,
            (rest % 1_000_000) as i64,
        ))?
        .unbind())
}

/// An optional duration as a `timedelta` or `None`.
pub fn py_opt_duration(py: Python<'_>, d: Option<Duration>) -> PyResult<Py<PyAny>> {
    match d {
        None => Ok(py.None()),
        Some(d) => py_duration(py, d),
    }
}

/// A key or bound value: `int`, `str`, `date` or aware `datetime`. Floats and bools are
/// refused (DOMAIN-07); so is an integer outside ±(2^53−1) (DOMAIN-14).
pub fn value(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Value> {
    let py = obj.py();
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyFloat>() {
        return Err(invalid(
            py,
            field,
            &obj.repr()?.to_string(),
            "DOMAIN-07",
            "keys and window values are str, int, date or datetime; floats and bools have no successor and are refused",
        ));
    }
    if obj.is_instance_of::<PyInt>() {
        return match obj.extract::<i64>() {
            Ok(i) if (Value::INT_MIN..=Value::INT_MAX).contains(&i) => Ok(Value::Int(i)),
            _ => Err(invalid(
                py,
                field,
                &obj.repr()?.to_string(),
                "DOMAIN-14",
                "integers stay within ±(2^53−1); type larger keys as str",
            )),
        };
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::Str(s.to_cow()?.into_owned()));
    }
    if is_datetime(obj)? {
        return timestamp(obj, field).map(Value::Datetime);
    }
    if obj.is_instance(date_type(py)?)? {
        return date(obj, field).map(Value::Date);
    }
    Err(wrong_type(
        field,
        "an int, str, date or aware datetime",
        obj,
    ))
}

/// A value as the Python object it stands for.
pub fn py_value(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Date(d) => py_date(py, *d)?,
        Value::Datetime(t) => py_timestamp(py, *t)?,
    })
}

/// An optional value (`None`: unbounded).
pub fn py_opt_value(py: Python<'_>, v: Option<&Value>) -> PyResult<Py<PyAny>> {
    match v {
        None => Ok(py.None()),
        Some(v) => py_value(py, v),
    }
}

/// A closed window: a pair `(low, high)` (a tuple or a list).
pub fn window(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Window> {
    let items: Vec<Bound<'_, PyAny>> =
        if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
            obj.try_iter()?.collect::<PyResult<_>>()?
        } else {
            return Err(wrong_type(field, "a (low, high) pair", obj));
        };
    if items.len() != 2 {
        return Err(wrong_type(field, "a (low, high) pair", obj));
    }
    Ok(Window::new(
        value(&items[0], &format!("{field}[0]"))?,
        value(&items[1], &format!("{field}[1]"))?,
    ))
}

/// An optional window.
pub fn opt_window(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<Window>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => window(o, field).map(Some),
    }
}

/// A window as a `(low, high)` tuple.
pub fn py_window(py: Python<'_>, w: &Window) -> PyResult<Py<PyAny>> {
    Ok(
        PyTuple::new(py, [py_value(py, &w.low)?, py_value(py, &w.high)?])?
            .into_any()
            .unbind(),
    )
}

/// An optional window as a tuple or `None`.
pub fn py_opt_window(py: Python<'_>, w: Option<&Window>) -> PyResult<Py<PyAny>> {
    match w {
        None => Ok(py.None()),
        Some(w) => py_window(py, w),
    }
}

/// A position: a generation token (`str`) or a sequence position (`int`).
pub fn position(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Position> {
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyFloat>() {
        return Err(wrong_type(field, "a str token or an int position", obj));
    }
    if obj.is_instance_of::<PyInt>() {
        let n: i64 = obj.extract().map_err(|_| {
            invalid(
                obj.py(),
                field,
                &obj.repr().map(|r| r.to_string()).unwrap_or_default(),
                "DOMAIN-14",
                "positions stay within ±(2^53−1)",
            )
        })?;
        return Ok(Position::Sequence(n));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Position::Token(s.to_cow()?.into_owned()));
    }
    Err(wrong_type(field, "a str token or an int position", obj))
}

/// A position as `str` or `int`.
pub fn py_position(py: Python<'_>, p: &Position) -> PyResult<Py<PyAny>> {
    Ok(match p {
        Position::Token(t) => t.into_pyobject(py)?.into_any().unbind(),
        Position::Sequence(n) => n.into_pyobject(py)?.into_any().unbind(),
    })
}

/// Where a read of changes starts: an aware datetime, or a position.
pub fn since(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Since> {
    if is_datetime(obj)? {
        return timestamp(obj, field).map(Since::Time);
    }
    position(obj, field).map(Since::Position).map_err(|_| {
        wrong_type(
            field,
            "an aware datetime, a str token or an int position",
            obj,
        )
    })
}

/// `since` as a Python value.
pub fn py_since(py: Python<'_>, s: &Since) -> PyResult<Py<PyAny>> {
    match s {
        Since::Time(t) => py_timestamp(py, *t),
        Since::Position(p) => py_position(py, p),
    }
}

/// A count: a nonnegative `int` (not a bool).
pub fn count(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(wrong_type(field, "a nonnegative int", obj));
    }
    obj.extract::<u64>().map_err(|_| {
        invalid(
            obj.py(),
            field,
            &obj.repr().map(|r| r.to_string()).unwrap_or_default(),
            "MAN-02",
            "a count is a nonnegative integer within 2^53−1",
        )
    })
}

/// A sequence of strings (a `str` itself is refused: `key=("id",)`, not `key="id"`).
pub fn strings(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<String>> {
    if obj.is_instance_of::<PyString>() {
        return Err(wrong_type(
            field,
            "a sequence of str (write (\"id\",), not \"id\")",
            obj,
        ));
    }
    let iter = obj
        .try_iter()
        .map_err(|_| wrong_type(field, "a sequence of str", obj))?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item?;
        match item.downcast::<PyString>() {
            Ok(s) => out.push(s.to_cow()?.into_owned()),
            Err(_) => return Err(wrong_type(&format!("{field}[{i}]"), "a str", &item)),
        }
    }
    Ok(out)
}

/// An optional `str`.
pub fn opt_string(obj: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<String>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => match o.downcast::<PyString>() {
            Ok(s) => Ok(Some(s.to_cow()?.into_owned())),
            Err(_) => Err(wrong_type(field, "a str or None", o)),
        },
    }
}

/// A JSON value as plain Python objects (dict, list, str, int, float, bool, None).
pub fn py_json(py: Python<'_>, v: &Json) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Json::Null => py.None(),
        Json::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any().unbind()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any().unbind()
            } else {
                n.as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
        }
        Json::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Json::Array(xs) => {
            let items = xs
                .iter()
                .map(|x| py_json(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        Json::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, py_json(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// Plain Python objects as a JSON value. Dict keys must be strings and floats finite; an
/// integer beyond 64 bits, a set or any other object is refused with the path at fault.
pub fn json(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<Json> {
    if depth > 128 {
        return Err(serialization(obj.py(), path, "nested more than 128 levels"));
    }
    if obj.is_none() {
        return Ok(Json::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Json::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Json::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Json::from(u));
        }
        return Err(serialization(
            obj.py(),
            path,
            &format!("integer {} is out of range", obj.repr()?),
        ));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return serde_json::Number::from_f64(f.value())
            .map(Json::Number)
            .ok_or_else(|| serialization(obj.py(), path, "numbers are finite"));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Json::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let Ok(k) = k.downcast::<PyString>() else {
                return Err(serialization(
                    obj.py(),
                    path,
                    &format!("an object's keys are strings, not {}", type_name(&k)),
                ));
            };
            let k = k.to_cow()?.into_owned();
            let sub = format!("{path}.{k}");
            m.insert(k, json(&v, &sub, depth + 1)?);
        }
        return Ok(Json::Object(m));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut xs = Vec::new();
        for (i, x) in obj.try_iter()?.enumerate() {
            xs.push(json(&x?, &format!("{path}[{i}]"), depth + 1)?);
        }
        return Ok(Json::Array(xs));
    }
    Err(serialization(
        obj.py(),
        path,
        &format!("{} is not a JSON value", type_name(obj)),
    ))
}

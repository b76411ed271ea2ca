//! Nested and variant values in a part (`store.reconcile.nested-landing`,
//! `store.reconcile.variant`): a column typed `struct<…>`, `list<…>` or `map<str,…>` takes
//! JSON objects and arrays (the text of one, as a delivery hands an NDJSON object or array to
//! the backend) and lands as an Arrow Struct, List or Map column, field by field and item by
//! item in the types the lattice holds; a `variant` column lands as one Struct of `kind` and a
//! field per kind (`str` Utf8, `int` Int64, `float` Float64, `bool` Boolean, `binary`
//! Binary).
//!
//! A value that does not fit its type is refused naming its path (`s.a` a struct field, `l[]`
//! a list's items, `m{}` a map's values), the type there and what arrived: a struct key
//! outside the struct's fields, a scalar where an object or array belongs, a list where a map
//! does. Read back, a nested value is its canonical JSON text: a struct with every field
//! (a field its part lacks reads null), a list an array, a map an object; the items as JSON
//! has them (dates, datetimes and decimals as strings, bytes as padded base64, a variant's
//! binary as the tagged object `{"binary":"…","kind":"binary"}`).

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, FixedSizeBinaryArray,
    FixedSizeListArray, Float16Array, Float32Array, Float64Array, Int64Array, ListArray, MapArray,
    StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use base64::Engine as _;
use dogana::{Date, Timestamp};
use dogana_receiver::{Datum, StoreError};
use serde_json::{Map, Number, Value};

use crate::lattice::LakeType;
use crate::LakeError;

/// The variant struct's fields after `kind`, one per scalar kind it keeps.
pub(crate) const VARIANT_KINDS: [&str; 5] = ["str", "int", "float", "bool", "binary"];

/// Why a value does not fit its type: the path, the type there, what arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Misfit {
    path: String,
    stored: String,
    arriving: String,
}

impl Misfit {
    fn new(path: &str, ty: &LakeType, arriving: String) -> Misfit {
        Misfit {
            path: path.to_owned(),
            stored: ty.to_string(),
            arriving,
        }
    }

    /// `StoreSchemaIncompatible` of `table`, each text cut to 80 characters.
    pub(crate) fn error(self, table: &str) -> StoreError {
        let cut = |s: &str| -> String {
            if s.chars().count() <= 80 {
                s.to_owned()
            } else {
                format!("{}…", s.chars().take(79).collect::<String>())
            }
        };
        LakeError::StoreSchemaIncompatible {
            table: table.to_owned(),
            column: cut(&self.path),
            stored: cut(&self.stored),
            arriving: cut(&self.arriving),
        }
        .into()
    }
}

/// What a JSON value is, for an error: its kind and at most 40 characters of its text.
fn describe(v: &Value) -> String {
    let text = v.to_string();
    let shown: String = if text.chars().count() <= 40 {
        text
    } else {
        format!("{}…", text.chars().take(39).collect::<String>())
    };
    let kind = match v {
        Value::Null => return "null".into(),
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("{kind} {shown}")
}

/// Whether values of this type land through this module.
pub(crate) fn is_nested(t: &LakeType) -> bool {
    matches!(
        t,
        LakeType::Struct(_) | LakeType::List(_) | LakeType::Map(_) | LakeType::Variant
    )
}

fn item_field(t: &LakeType) -> Arc<Field> {
    Arc::new(Field::new("item", arrow_type(t), true))
}

fn entries_field(t: &LakeType) -> Arc<Field> {
    Arc::new(Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", arrow_type(t), true),
        ])),
        false,
    ))
}

fn variant_fields() -> Fields {
    let mut f = vec![Field::new("kind", DataType::Utf8, true)];
    f.extend(VARIANT_KINDS.iter().map(|k| {
        Field::new(
            *k,
            match *k {
                "str" => DataType::Utf8,
                "int" => DataType::Int64,
                "float" => DataType::Float64,
                "bool" => DataType::Boolean,
                _ => DataType::Binary,
            },
            true,
        )
    }));
    Fields::from(f)
}

/// The Arrow type a lattice type lands as (a decimal, `str` and `json` as Utf8).
pub(crate) fn arrow_type(t: &LakeType) -> DataType {
    match t {
        LakeType::Int => DataType::Int64,
        LakeType::Float => DataType::Float64,
        LakeType::Str | LakeType::Json | LakeType::Decimal(_) => DataType::Utf8,
        LakeType::Bool => DataType::Boolean,
        LakeType::Date => DataType::Date32,
        LakeType::Datetime => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        LakeType::Binary => DataType::Binary,
        LakeType::FixedBinary(n) => DataType::FixedSizeBinary((*n).min(i32::MAX as u32) as i32),
        LakeType::Vector { dim, half } => DataType::FixedSizeList(
            Arc::new(Field::new(
                "item",
                if *half {
                    DataType::Float16
                } else {
                    DataType::Float32
                },
                true,
            )),
            (*dim).min(i32::MAX as u32) as i32,
        ),
        LakeType::Struct(fields) => DataType::Struct(Fields::from(
            fields
                .iter()
                .map(|(n, t)| Field::new(n, arrow_type(t), true))
                .collect::<Vec<_>>(),
        )),
        LakeType::List(t) => DataType::List(item_field(t)),
        LakeType::Map(t) => DataType::Map(entries_field(t), false),
        LakeType::Variant => DataType::Struct(variant_fields()),
    }
}

/// One row's value of a nested or variant column as JSON: a text is parsed (an NDJSON object
/// or array reaches the backend as its text), other scalars are themselves. A variant column
/// takes a text that is not a tagged object as a string.
fn json_of(d: &Datum, ty: &LakeType, path: &str) -> Result<Option<Value>, Misfit> {
    Ok(Some(match d {
        Datum::Null => return Ok(None),
        Datum::Int(i) => Value::from(*i),
        Datum::Real(x) => Number::from_f64(*x).map_or(Value::Null, Value::Number),
        Datum::Bool(b) => Value::Bool(*b),
        Datum::Date(x) => Value::String(x.to_string()),
        Datum::Datetime(x) => Value::String(x.to_string()),
        Datum::Text(s) if *ty == LakeType::Variant => match serde_json::from_str(s) {
            Ok(Value::Object(o)) if tagged(&o) => Value::Object(o),
            _ => Value::String(s.clone()),
        },
        Datum::Text(s) => serde_json::from_str(s).map_err(|_| {
            let shown: String = s.chars().take(40).collect();
            Misfit::new(path, ty, format!("{shown:?}, not JSON"))
        })?,
    }))
}

/// Whether an object is shaped as a tagged variant: a `kind` naming one of the five kinds,
/// and no key but `kind` and the kinds' fields.
fn tagged(o: &Map<String, Value>) -> bool {
    o.get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| VARIANT_KINDS.contains(&k))
        && o.keys()
            .all(|k| k == "kind" || VARIANT_KINDS.contains(&k.as_str()))
}

/// The column `i` of `rows`, of nested or variant type `ty`, as one Arrow array.
pub(crate) fn column(
    table: &str,
    name: &str,
    ty: &LakeType,
    rows: &[Vec<Datum>],
    i: usize,
) -> Result<ArrayRef, StoreError> {
    let values: Vec<Option<Value>> = rows
        .iter()
        .map(|r| json_of(&r[i], ty, name))
        .collect::<Result<_, _>>()
        .map_err(|m| m.error(table))?;
    let refs: Vec<Option<&Value>> = values
        .iter()
        .map(|v| v.as_ref().filter(|v| !v.is_null()))
        .collect();
    build(ty, name, &refs).map_err(|m| m.error(table))
}

fn nulls(values: &[Option<&Value>]) -> Option<NullBuffer> {
    let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
    valid.iter().any(|v| !v).then(|| NullBuffer::from(valid))
}

fn arrow_err(path: &str, ty: &LakeType, e: arrow_schema::ArrowError) -> Misfit {
    Misfit::new(path, ty, format!("values Arrow refuses ({e})"))
}

/// The values at `path`, of type `ty` (None: null or absent), as one Arrow array.
pub(crate) fn build(
    ty: &LakeType,
    path: &str,
    values: &[Option<&Value>],
) -> Result<ArrayRef, Misfit> {
    let bad = |v: &Value| Misfit::new(path, ty, describe(v));
    let b64 = base64::engine::general_purpose::STANDARD;
    Ok(match ty {
        LakeType::Int => {
            let mut b = Int64Builder::with_capacity(values.len());
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(v) => b.append_value(v.as_i64().ok_or_else(|| bad(v))?),
                }
            }
            Arc::new(b.finish())
        }
        LakeType::Float => {
            let mut b = Float64Builder::with_capacity(values.len());
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(v) => b.append_value(v.as_f64().ok_or_else(|| bad(v))?),
                }
            }
            Arc::new(b.finish())
        }
        LakeType::Bool => {
            let mut b = BooleanBuilder::with_capacity(values.len());
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(v) => b.append_value(v.as_bool().ok_or_else(|| bad(v))?),
                }
            }
            Arc::new(b.finish())
        }
        LakeType::Str | LakeType::Json | LakeType::Decimal(_) => {
            let mut b = StringBuilder::with_capacity(values.len(), values.len() * 8);
            for v in values {
                match (v, ty) {
                    (None, _) => b.append_null(),
                    (Some(v), LakeType::Json) => b.append_value(v.to_string()),
                    (Some(Value::String(s)), LakeType::Str) => b.append_value(s),
                    // a decimal keeps its exact text, from a string or a number
                    (Some(Value::String(s)), LakeType::Decimal(_)) => b.append_value(s),
                    (Some(Value::Number(n)), LakeType::Decimal(_)) => b.append_value(n.to_string()),
                    (Some(v), _) => return Err(bad(v)),
                }
            }
            Arc::new(b.finish())
        }
        LakeType::Date => {
            let mut b = Date32Builder::with_capacity(values.len());
            for v in values {
                let Some(v) = v else {
                    b.append_null();
                    continue;
                };
                let d: Date = v
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad(v))?;
                b.append_value(i32::try_from(d.days_since_epoch()).map_err(|_| bad(v))?);
            }
            Arc::new(b.finish())
        }
        LakeType::Datetime => {
            let mut b =
                TimestampMicrosecondBuilder::with_capacity(values.len()).with_timezone("UTC");
            for v in values {
                let Some(v) = v else {
                    b.append_null();
                    continue;
                };
                let t: Timestamp = v
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad(v))?;
                b.append_value(t.as_micros());
            }
            Arc::new(b.finish())
        }
        LakeType::Binary | LakeType::FixedBinary(_) => {
            let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(values.len());
            for v in values {
                let Some(v) = v else {
                    out.push(None);
                    continue;
                };
                let bytes = v
                    .as_str()
                    .and_then(|s| b64.decode(s.as_bytes()).ok())
                    .ok_or_else(|| bad(v))?;
                if let LakeType::FixedBinary(n) = ty {
                    if bytes.len() != *n as usize {
                        return Err(Misfit::new(path, ty, format!("{} bytes", bytes.len())));
                    }
                }
                out.push(Some(bytes));
            }
            match ty {
                LakeType::FixedBinary(n) => Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                        out.iter().map(|v| v.as_deref()),
                        (*n).min(i32::MAX as u32) as i32,
                    )
                    .map_err(|e| arrow_err(path, ty, e))?,
                ),
                _ => Arc::new(BinaryArray::from_iter(out.iter().map(|v| v.as_deref()))),
            }
        }
        LakeType::Vector { dim, half } => {
            let n = *dim as usize;
            let mut items: Vec<f32> = Vec::with_capacity(values.len() * n);
            for v in values {
                let Some(v) = v else {
                    items.extend(std::iter::repeat_n(0.0, n));
                    continue;
                };
                let xs: Vec<f64> = v
                    .as_array()
                    .and_then(|a| a.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>())
                    .ok_or_else(|| bad(v))?;
                if xs.len() != n {
                    return Err(Misfit::new(
                        path,
                        ty,
                        format!("an array of {} numbers", xs.len()),
                    ));
                }
                items.extend(xs.iter().map(|x| *x as f32));
            }
            let DataType::FixedSizeList(field, size) = arrow_type(ty) else {
                unreachable!("a vector is a fixed-size list")
            };
            let child: ArrayRef = if *half {
                Arc::new(Float16Array::from(
                    items
                        .iter()
                        .map(|x| half::f16::from_f32(*x))
                        .collect::<Vec<_>>(),
                ))
            } else {
                Arc::new(Float32Array::from(items))
            };
            Arc::new(
                FixedSizeListArray::try_new(field, size, child, nulls(values))
                    .map_err(|e| arrow_err(path, ty, e))?,
            )
        }
        LakeType::Struct(fields) => {
            let mut objects: Vec<Option<&Map<String, Value>>> = Vec::with_capacity(values.len());
            for v in values {
                let Some(v) = v else {
                    objects.push(None);
                    continue;
                };
                let o = v.as_object().ok_or_else(|| bad(v))?;
                // rule: store.reconcile.nested-landing — a struct key outside its fields
                // meets incompatible (the struct gains it only by a type that names it)
                if let Some(k) = o.keys().find(|k| !fields.iter().any(|(n, _)| n == *k)) {
                    return Err(Misfit::new(
                        &format!("{path}.{k}"),
                        ty,
                        format!("an object with key {k:?} outside its fields"),
                    ));
                }
                objects.push(Some(o));
            }
            let mut children: Vec<ArrayRef> = Vec::with_capacity(fields.len());
            for (n, t) in fields {
                let column: Vec<Option<&Value>> = objects
                    .iter()
                    .map(|o| o.and_then(|o| o.get(n)).filter(|v| !v.is_null()))
                    .collect();
                children.push(build(t, &format!("{path}.{n}"), &column)?);
            }
            let DataType::Struct(arrow_fields) = arrow_type(ty) else {
                unreachable!("a struct is a struct")
            };
            Arc::new(
                StructArray::try_new(arrow_fields, children, nulls(values))
                    .map_err(|e| arrow_err(path, ty, e))?,
            )
        }
        LakeType::List(t) => {
            let mut lengths = Vec::with_capacity(values.len());
            let mut items: Vec<Option<&Value>> = Vec::new();
            for v in values {
                let Some(v) = v else {
                    lengths.push(0);
                    continue;
                };
                let a = v.as_array().ok_or_else(|| bad(v))?;
                lengths.push(a.len());
                items.extend(a.iter().map(|x| Some(x).filter(|x| !x.is_null())));
            }
            let child = build(t, &format!("{path}[]"), &items)?;
            Arc::new(
                ListArray::try_new(
                    item_field(t),
                    OffsetBuffer::from_lengths(lengths),
                    child,
                    nulls(values),
                )
                .map_err(|e| arrow_err(path, ty, e))?,
            )
        }
        LakeType::Map(t) => {
            let mut lengths = Vec::with_capacity(values.len());
            let mut keys = StringBuilder::new();
            let mut items: Vec<Option<&Value>> = Vec::new();
            for v in values {
                let Some(v) = v else {
                    lengths.push(0);
                    continue;
                };
                let o = v.as_object().ok_or_else(|| bad(v))?;
                lengths.push(o.len());
                for (k, x) in o {
                    keys.append_value(k);
                    items.push(Some(x).filter(|x| !x.is_null()));
                }
            }
            let child = build(t, &format!("{path}{{}}"), &items)?;
            let DataType::Struct(entry_fields) = entries_field(t).data_type().clone() else {
                unreachable!("a map's entries are a struct")
            };
            let entries =
                StructArray::try_new(entry_fields, vec![Arc::new(keys.finish()), child], None)
                    .map_err(|e| arrow_err(path, ty, e))?;
            Arc::new(
                MapArray::try_new(
                    entries_field(t),
                    OffsetBuffer::from_lengths(lengths),
                    entries,
                    nulls(values),
                    false,
                )
                .map_err(|e| arrow_err(path, ty, e))?,
            )
        }
        LakeType::Variant => variant(path, values)?,
    })
}

/// One variant value: its kind and the value of that kind.
enum Scalar {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Binary(Vec<u8>),
}

/// A variant's value from JSON (`store.reconcile.variant`): a string, an integer, another
/// number or a boolean lands as its kind; a tagged object `{"kind": k, k: value}` (`k` one
/// of the five kinds, bytes as padded base64) as kind `k`. A tagged object with another
/// non-null field, a value not of its kind, an unknown kind, an array or an untagged object
/// meets incompatible. Null (or a tagged null) is a null variant.
fn scalar(path: &str, v: &Value) -> Result<Option<Scalar>, Misfit> {
    let bad = |what: String| Misfit::new(path, &LakeType::Variant, what);
    Ok(Some(match v {
        Value::Null => return Ok(None),
        Value::String(s) => Scalar::Str(s.clone()),
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Scalar::Int(i),
            None => Scalar::Float(n.as_f64().ok_or_else(|| bad(describe(v)))?),
        },
        Value::Object(o) => {
            let kind = o
                .get("kind")
                .and_then(Value::as_str)
                .filter(|k| VARIANT_KINDS.contains(k))
                .ok_or_else(|| bad(format!("{}, not tagged with a kind", describe(v))))?;
            // rule: store.reconcile.variant — conflicting non-null fields meet incompatible
            if let Some((k, _)) = o
                .iter()
                .find(|(k, x)| k.as_str() != "kind" && k.as_str() != kind && !x.is_null())
            {
                return Err(bad(format!("a tagged {kind} with a non-null {k:?}")));
            }
            let x = match o.get(kind) {
                None | Some(Value::Null) => return Ok(None),
                Some(x) => x,
            };
            let wrong = || bad(format!("a tagged {kind} holding {}", describe(x)));
            match kind {
                "str" => Scalar::Str(x.as_str().ok_or_else(wrong)?.to_owned()),
                "int" => Scalar::Int(x.as_i64().ok_or_else(wrong)?),
                "float" => Scalar::Float(x.as_f64().ok_or_else(wrong)?),
                "bool" => Scalar::Bool(x.as_bool().ok_or_else(wrong)?),
                _ => Scalar::Binary(
                    x.as_str()
                        .and_then(|s| {
                            base64::engine::general_purpose::STANDARD
                                .decode(s.as_bytes())
                                .ok()
                        })
                        .ok_or_else(wrong)?,
                ),
            }
        }
        Value::Array(_) => return Err(bad(describe(v))),
    }))
}

fn variant(path: &str, values: &[Option<&Value>]) -> Result<ArrayRef, Misfit> {
    let n = values.len();
    let mut kind = StringBuilder::with_capacity(n, n * 4);
    let mut s = StringBuilder::with_capacity(n, n * 8);
    let mut int = Int64Builder::with_capacity(n);
    let mut float = Float64Builder::with_capacity(n);
    let mut boolean = BooleanBuilder::with_capacity(n);
    let mut binary = BinaryBuilder::with_capacity(n, n);
    let mut valid = Vec::with_capacity(n);
    for v in values {
        let x = match v {
            None => None,
            Some(v) => scalar(path, v)?,
        };
        valid.push(x.is_some());
        kind.append_option(x.as_ref().map(|x| match x {
            Scalar::Str(_) => "str",
            Scalar::Int(_) => "int",
            Scalar::Float(_) => "float",
            Scalar::Bool(_) => "bool",
            Scalar::Binary(_) => "binary",
        }));
        s.append_option(match &x {
            Some(Scalar::Str(t)) => Some(t.as_str()),
            _ => None,
        });
        int.append_option(match &x {
            Some(Scalar::Int(i)) => Some(*i),
            _ => None,
        });
        float.append_option(match &x {
            Some(Scalar::Float(f)) => Some(*f),
            _ => None,
        });
        boolean.append_option(match &x {
            Some(Scalar::Bool(b)) => Some(*b),
            _ => None,
        });
        binary.append_option(match &x {
            Some(Scalar::Binary(b)) => Some(b.as_slice()),
            _ => None,
        });
    }
    let children: Vec<ArrayRef> = vec![
        Arc::new(kind.finish()),
        Arc::new(s.finish()),
        Arc::new(int.finish()),
        Arc::new(float.finish()),
        Arc::new(boolean.finish()),
        Arc::new(binary.finish()),
    ];
    let nulls = valid.iter().any(|v| !v).then(|| NullBuffer::from(valid));
    Ok(Arc::new(
        StructArray::try_new(variant_fields(), children, nulls)
            .map_err(|e| arrow_err(path, &LakeType::Variant, e))?,
    ))
}

fn corrupt(ty: &LakeType, a: &dyn Array) -> StoreError {
    StoreError::Corrupt(format!(
        "a part's {} array is not of type {ty}",
        a.data_type()
    ))
}

fn float_value(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// The value at row `i` of `a`, read as type `ty`, as JSON (None: null). A struct field the
/// array lacks (a part written before the struct gained it) reads null; an Int64 array of a
/// `float` reads as Float64 (`store.reconcile.lattice`).
pub(crate) fn json_at(a: &dyn Array, ty: &LakeType, i: usize) -> Result<Value, StoreError> {
    if a.is_null(i) {
        return Ok(Value::Null);
    }
    let any = a.as_any();
    let wrong = || corrupt(ty, a);
    let b64 = base64::engine::general_purpose::STANDARD;
    Ok(match ty {
        LakeType::Int => Value::from(any.downcast_ref::<Int64Array>().ok_or_else(wrong)?.value(i)),
        LakeType::Float => match any.downcast_ref::<Float64Array>() {
            Some(f) => float_value(f.value(i)),
            None => {
                float_value(any.downcast_ref::<Int64Array>().ok_or_else(wrong)?.value(i) as f64)
            }
        },
        LakeType::Bool => Value::Bool(
            any.downcast_ref::<BooleanArray>()
                .ok_or_else(wrong)?
                .value(i),
        ),
        LakeType::Str | LakeType::Decimal(_) => Value::String(
            any.downcast_ref::<StringArray>()
                .ok_or_else(wrong)?
                .value(i)
                .to_owned(),
        ),
        LakeType::Json => {
            let text = any
                .downcast_ref::<StringArray>()
                .ok_or_else(wrong)?
                .value(i);
            // a json item is the JSON text it arrived as; a str before json absorbed it is
            // the string it was
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
        }
        LakeType::Date => {
            let d = any
                .downcast_ref::<Date32Array>()
                .ok_or_else(wrong)?
                .value(i);
            Value::String(
                Date::from_days_since_epoch(i64::from(d))
                    .ok_or_else(wrong)?
                    .to_string(),
            )
        }
        LakeType::Datetime => {
            let t = any
                .downcast_ref::<TimestampMicrosecondArray>()
                .ok_or_else(wrong)?
                .value(i);
            Value::String(Timestamp::from_micros(t).ok_or_else(wrong)?.to_string())
        }
        LakeType::Binary => Value::String(
            b64.encode(
                any.downcast_ref::<BinaryArray>()
                    .ok_or_else(wrong)?
                    .value(i),
            ),
        ),
        LakeType::FixedBinary(_) => Value::String(
            b64.encode(
                any.downcast_ref::<FixedSizeBinaryArray>()
                    .ok_or_else(wrong)?
                    .value(i),
            ),
        ),
        LakeType::Vector { half, .. } => {
            let list = any
                .downcast_ref::<FixedSizeListArray>()
                .ok_or_else(wrong)?
                .value(i);
            let xs: Vec<Value> = if *half {
                let f = list
                    .as_any()
                    .downcast_ref::<Float16Array>()
                    .ok_or_else(wrong)?;
                f.values()
                    .iter()
                    .map(|x| float_value(f64::from(x.to_f32())))
                    .collect()
            } else {
                let f = list
                    .as_any()
                    .downcast_ref::<Float32Array>()
                    .ok_or_else(wrong)?;
                f.values()
                    .iter()
                    .map(|x| float_value(f64::from(*x)))
                    .collect()
            };
            Value::Array(xs)
        }
        LakeType::Struct(fields) => {
            let s = any.downcast_ref::<StructArray>().ok_or_else(wrong)?;
            let mut o = Map::new();
            for (n, t) in fields {
                // rule: store.reconcile.nested-lattice — a field the part lacks reads null
                let v = match s.column_by_name(n) {
                    None => Value::Null,
                    Some(c) => json_at(c.as_ref(), t, i)?,
                };
                o.insert(n.clone(), v);
            }
            Value::Object(o)
        }
        LakeType::List(t) => {
            let items = any.downcast_ref::<ListArray>().ok_or_else(wrong)?.value(i);
            (0..items.len())
                .map(|j| json_at(items.as_ref(), t, j))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)?
        }
        LakeType::Map(t) => {
            let entries = any.downcast_ref::<MapArray>().ok_or_else(wrong)?.value(i);
            let keys = entries
                .column(0)
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(wrong)?;
            let values = entries.column(1);
            let mut o = Map::new();
            for j in 0..entries.len() {
                o.insert(keys.value(j).to_owned(), json_at(values.as_ref(), t, j)?);
            }
            Value::Object(o)
        }
        LakeType::Variant => match variant_at(a, i)? {
            None => Value::Null,
            Some(Scalar::Str(s)) => Value::String(s),
            Some(Scalar::Int(x)) => Value::from(x),
            Some(Scalar::Float(x)) => float_value(x),
            Some(Scalar::Bool(b)) => Value::Bool(b),
            Some(Scalar::Binary(b)) => tagged_binary(&b),
        },
    })
}

fn tagged_binary(b: &[u8]) -> Value {
    let mut o = Map::new();
    o.insert(
        "binary".into(),
        Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
    );
    o.insert("kind".into(), Value::String("binary".into()));
    Value::Object(o)
}

/// The variant at row `i`: from its Struct, or from a scalar array of a part written before
/// the column became a variant (`store.reconcile.variant`: it absorbed that kind).
fn variant_at(a: &dyn Array, i: usize) -> Result<Option<Scalar>, StoreError> {
    let wrong = || corrupt(&LakeType::Variant, a);
    if a.is_null(i) {
        return Ok(None);
    }
    let any = a.as_any();
    if let Some(x) = any.downcast_ref::<StringArray>() {
        return Ok(Some(Scalar::Str(x.value(i).to_owned())));
    }
    if let Some(x) = any.downcast_ref::<Int64Array>() {
        return Ok(Some(Scalar::Int(x.value(i))));
    }
    if let Some(x) = any.downcast_ref::<Float64Array>() {
        return Ok(Some(Scalar::Float(x.value(i))));
    }
    if let Some(x) = any.downcast_ref::<BooleanArray>() {
        return Ok(Some(Scalar::Bool(x.value(i))));
    }
    if let Some(x) = any.downcast_ref::<BinaryArray>() {
        return Ok(Some(Scalar::Binary(x.value(i).to_vec())));
    }
    let s = any.downcast_ref::<StructArray>().ok_or_else(wrong)?;
    let field = |n: &str| s.column_by_name(n).filter(|c| !c.is_null(i));
    let kind = field("kind")
        .and_then(|c| {
            c.as_any()
                .downcast_ref::<StringArray>()
                .map(|k| k.value(i).to_owned())
        })
        .ok_or_else(wrong)?;
    let Some(c) = field(&kind) else {
        return Ok(None);
    };
    let c = c.as_any();
    Ok(Some(match kind.as_str() {
        "str" => Scalar::Str(
            c.downcast_ref::<StringArray>()
                .ok_or_else(wrong)?
                .value(i)
                .to_owned(),
        ),
        "int" => Scalar::Int(c.downcast_ref::<Int64Array>().ok_or_else(wrong)?.value(i)),
        "float" => Scalar::Float(c.downcast_ref::<Float64Array>().ok_or_else(wrong)?.value(i)),
        "bool" => Scalar::Bool(c.downcast_ref::<BooleanArray>().ok_or_else(wrong)?.value(i)),
        "binary" => Scalar::Binary(
            c.downcast_ref::<BinaryArray>()
                .ok_or_else(wrong)?
                .value(i)
                .to_vec(),
        ),
        _ => return Err(wrong()),
    }))
}

/// The value at row `i` of a nested or variant column as the datum a reader gets: a struct,
/// list or map as its canonical JSON text; a variant as its kind's datum (`str` text, `int`,
/// `float`, `bool`), its bytes as the tagged object's text.
pub(crate) fn datum_at(a: &dyn Array, ty: &LakeType, i: usize) -> Result<Datum, StoreError> {
    if *ty == LakeType::Variant {
        return Ok(match variant_at(a, i)? {
            None => Datum::Null,
            Some(Scalar::Str(s)) => Datum::Text(s),
            Some(Scalar::Int(x)) => Datum::Int(x),
            Some(Scalar::Float(x)) => Datum::Real(x),
            Some(Scalar::Bool(b)) => Datum::Bool(b),
            Some(Scalar::Binary(b)) => Datum::Text(tagged_binary(&b).to_string()),
        });
    }
    // a part written before nested values landed holds the column as its text: it reads as
    // that text (a fold rewrites it in the column's type)
    if let Some(text) = a.as_any().downcast_ref::<StringArray>() {
        return Ok(if text.is_null(i) {
            Datum::Null
        } else {
            Datum::Text(text.value(i).to_owned())
        });
    }
    Ok(match json_at(a, ty, i)? {
        Value::Null => Datum::Null,
        v => Datum::Text(v.to_string()),
    })
}

/// The DuckDB type a lattice type reads as (nested types spelled out, names quoted).
pub(crate) fn duck_type(t: &LakeType) -> String {
    let q = |n: &str| format!("\"{}\"", n.replace('"', "\"\""));
    match t {
        LakeType::Int => "BIGINT".into(),
        LakeType::Float => "DOUBLE".into(),
        LakeType::Str | LakeType::Json | LakeType::Decimal(_) => "VARCHAR".into(),
        LakeType::Bool => "BOOLEAN".into(),
        LakeType::Date => "DATE".into(),
        LakeType::Datetime => "TIMESTAMPTZ".into(),
        LakeType::Binary | LakeType::FixedBinary(_) => "BLOB".into(),
        LakeType::Vector { dim, .. } => format!("FLOAT[{dim}]"),
        LakeType::Struct(fields) => format!(
            "STRUCT({})",
            fields
                .iter()
                .map(|(n, t)| format!("{} {}", q(n), duck_type(t)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        LakeType::List(t) => format!("{}[]", duck_type(t)),
        LakeType::Map(t) => format!("MAP(VARCHAR, {})", duck_type(t)),
        LakeType::Variant => "STRUCT(\"kind\" VARCHAR, \"str\" VARCHAR, \"int\" BIGINT, \
                              \"float\" DOUBLE, \"bool\" BOOLEAN, \"binary\" BLOB)"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ColumnDef;
    use crate::parts::{decode, encode};
    use bytes::Bytes;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    fn col(name: &str, ty: &str) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty: Some(ty.into()),
            key: false,
        }
    }

    fn text(s: &str) -> Datum {
        Datum::Text(s.into())
    }

    /// The Arrow type of each column of a part, as Parquet's reader gives it back.
    fn part_types(bytes: &Bytes) -> Vec<DataType> {
        let b = ParquetRecordBatchReaderBuilder::try_new(bytes.clone()).unwrap();
        b.schema()
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect()
    }

    /// The `StoreSchemaIncompatible` of an encode: (column path, stored, arriving).
    fn refused(cols: &[ColumnDef], row: Vec<Datum>) -> (String, String, String) {
        let e = encode("t", cols, &[row]).unwrap_err();
        match LakeError::of(&e) {
            Some(LakeError::StoreSchemaIncompatible {
                table,
                column,
                stored,
                arriving,
            }) => {
                assert_eq!(table, "t");
                (column.clone(), stored.clone(), arriving.clone())
            }
            other => panic!("not StoreSchemaIncompatible: {other:?} ({e})"),
        }
    }

    #[test]
    fn objects_and_arrays_land_as_struct_list_and_map_columns() {
        // rule: store.reconcile.nested-landing
        let cols = [
            col("s", "struct<a:int,b:list<str>>"),
            col("l", "list<struct<x:float>>"),
            col("m", "map<str,list<int>>"),
        ];
        let ty = |c: &ColumnDef| LakeType::parse(c.ty.as_deref().unwrap()).unwrap();
        let rows = vec![
            vec![
                text(r#"{"a":1,"b":["x","y"]}"#),
                text(r#"[{"x":1.5},null,{"x":-2}]"#),
                text(r#"{"k":[1,2],"j":[]}"#),
            ],
            vec![text(r#"{"a":null}"#), text("[]"), Datum::Null],
            vec![Datum::Null, Datum::Null, text("{}")],
        ];
        let bytes = encode("t", &cols, &rows).unwrap();
        assert_eq!(
            part_types(&bytes),
            cols.iter().map(|c| arrow_type(&ty(c))).collect::<Vec<_>>()
        );
        assert!(matches!(part_types(&bytes)[0], DataType::Struct(_)));
        assert!(matches!(part_types(&bytes)[1], DataType::List(_)));
        assert!(matches!(part_types(&bytes)[2], DataType::Map(_, _)));
        assert_eq!(
            decode(&cols, bytes).unwrap(),
            vec![
                vec![
                    text(r#"{"a":1,"b":["x","y"]}"#),
                    text(r#"[{"x":1.5},null,{"x":-2.0}]"#),
                    text(r#"{"j":[],"k":[1,2]}"#),
                ],
                vec![text(r#"{"a":null,"b":null}"#), text("[]"), Datum::Null],
                vec![Datum::Null, Datum::Null, text("{}")],
            ],
            "each value reads back as its canonical JSON, every struct field present"
        );
    }

    #[test]
    fn a_struct_key_outside_its_fields_meets_incompatible() {
        // rule: store.reconcile.nested-landing — naming the path of the key, the struct's
        // type and what arrived
        let cols = [col("s", "struct<a:int,n:struct<b:str>>")];
        assert_eq!(
            refused(&cols, vec![text(r#"{"a":1,"c":2}"#)]),
            (
                "s.c".into(),
                "struct<a:int,n:struct<b:str>>".into(),
                "an object with key \"c\" outside its fields".into()
            )
        );
        assert_eq!(
            refused(&cols, vec![text(r#"{"n":{"b":"x","z":null}}"#)]).0,
            "s.n.z",
            "a nested struct names the full path"
        );
    }

    #[test]
    fn a_value_of_another_kind_meets_incompatible_naming_its_path() {
        // rule: store.reconcile.nested-landing — a scalar where an object belongs, an object
        // where a list belongs, an item or value of another type
        let cols = [
            col("s", "struct<a:int>"),
            col("l", "list<int>"),
            col("m", "map<str,bool>"),
        ];
        let null = || Datum::Null;
        for (row, want) in [
            (
                vec![text("[1]"), null(), null()],
                ("s", "struct<a:int>", "an array [1]"),
            ),
            (
                vec![Datum::Int(3), null(), null()],
                ("s", "struct<a:int>", "an integer 3"),
            ),
            (
                vec![text("not json"), null(), null()],
                ("s", "struct<a:int>", "\"not json\", not JSON"),
            ),
            (
                vec![text(r#"{"a":"1"}"#), null(), null()],
                ("s.a", "int", "a string \"1\""),
            ),
            (
                vec![null(), text(r#"{"0":1}"#), null()],
                ("l", "list<int>", "an object {\"0\":1}"),
            ),
            (
                vec![null(), text("[1,2.5]"), null()],
                ("l[]", "int", "a number 2.5"),
            ),
            (
                vec![null(), null(), text("[true]")],
                ("m", "map<str,bool>", "an array [true]"),
            ),
            (
                vec![null(), null(), text(r#"{"k":1}"#)],
                ("m{}", "bool", "an integer 1"),
            ),
        ] {
            let (path, stored, arriving) = refused(&cols, row);
            assert_eq!((path.as_str(), stored.as_str(), arriving.as_str()), want);
        }
    }

    #[test]
    fn a_part_written_before_a_struct_gained_a_field_reads_it_null() {
        // rule: store.reconcile.nested-lattice — structs gain fields, which parts lacking them
        // read as null; list items reconcile (an Int64 item reads as a float)
        let old = [col("s", "struct<a:int>"), col("l", "list<int>")];
        let bytes = encode("t", &old, &[vec![text(r#"{"a":7}"#), text("[1,2]")]]).unwrap();
        let new = [col("s", "struct<a:int,b:str>"), col("l", "list<float>")];
        assert_eq!(
            decode(&new, bytes).unwrap(),
            vec![vec![text(r#"{"a":7,"b":null}"#), text("[1.0,2.0]")]]
        );
    }

    #[test]
    fn a_part_holding_a_nested_column_as_text_reads_that_text() {
        // rule: store.reconcile.nested-landing — parts written before nested values landed
        // (the column as Utf8 text) stay readable, and a fold's encoding lands them nested
        let text_part = encode("t", &[col("s", "str")], &[vec![text(r#"{"a":1}"#)]]).unwrap();
        let cols = [col("s", "struct<a:int,b:int>")];
        let rows = decode(&cols, text_part).unwrap();
        assert_eq!(rows, vec![vec![text(r#"{"a":1}"#)]]);
        let folded = encode("t", &cols, &rows).unwrap();
        assert!(matches!(part_types(&folded)[0], DataType::Struct(_)));
        assert_eq!(
            decode(&cols, folded).unwrap(),
            vec![vec![text(r#"{"a":1,"b":null}"#)]]
        );
    }

    #[test]
    fn a_variant_keeps_each_scalar_kind_in_one_struct() {
        // rule: store.reconcile.variant — string, Int64, Float64, boolean and bytes values in
        // one Struct of kind and a matching field, scalar or tagged inputs, losslessly
        let cols = [col("v", "variant")];
        let rows: Vec<Vec<Datum>> = [
            Datum::Int(5),
            Datum::Real(2.5),
            Datum::Bool(true),
            text("five"),
            text(r#"{"kind":"int","int":6}"#),
            text(r#"{"binary":"aGk=","kind":"binary"}"#),
            text(r#"{"not":"tagged"}"#),
            Datum::Null,
        ]
        .into_iter()
        .map(|d| vec![d])
        .collect();
        let bytes = encode("t", &cols, &rows).unwrap();
        assert_eq!(part_types(&bytes), vec![DataType::Struct(variant_fields())]);
        assert_eq!(
            decode(&cols, bytes).unwrap(),
            [
                Datum::Int(5),
                Datum::Real(2.5),
                Datum::Bool(true),
                text("five"),
                Datum::Int(6),
                text(r#"{"binary":"aGk=","kind":"binary"}"#),
                text(r#"{"not":"tagged"}"#),
                Datum::Null,
            ]
            .into_iter()
            .map(|d| vec![d])
            .collect::<Vec<_>>()
        );
        // inside a nested column too, each item keeps its kind
        let cols = [col("l", "list<variant>")];
        let bytes = encode("t", &cols, &[vec![text(r#"[1,"1",1.5,false]"#)]]).unwrap();
        assert_eq!(
            decode(&cols, bytes).unwrap(),
            vec![vec![text(r#"[1,"1",1.5,false]"#)]]
        );
    }

    #[test]
    fn conflicting_non_null_variant_fields_meet_incompatible() {
        // rule: store.reconcile.variant
        let cols = [col("v", "variant")];
        assert_eq!(
            refused(&cols, vec![text(r#"{"int":1,"kind":"int","str":"1"}"#)]),
            (
                "v".into(),
                "variant".into(),
                "a tagged int with a non-null \"str\"".into()
            )
        );
        assert_eq!(
            refused(&cols, vec![text(r#"{"int":"x","kind":"int"}"#)]).2,
            "a tagged int holding a string \"x\""
        );
        // a list is no scalar kind
        let cols = [col("l", "list<variant>")];
        assert_eq!(
            refused(&cols, vec![text("[[1]]")]),
            ("l[]".into(), "variant".into(), "an array [1]".into())
        );
    }

    #[test]
    fn a_part_written_before_a_column_became_a_variant_reads_each_value_in_its_kind() {
        // rule: store.reconcile.variant — a variant absorbs the scalar column it was
        let bytes = encode("t", &[col("v", "int")], &[vec![Datum::Int(4)]]).unwrap();
        assert_eq!(
            decode(&[col("v", "variant")], bytes).unwrap(),
            vec![vec![Datum::Int(4)]]
        );
    }

    #[test]
    fn nested_types_read_in_duckdb_as_struct_list_and_map() {
        // rule: store.reconcile.nested-landing — the view of a snapshot without parts
        let t = |s: &str| duck_type(&LakeType::parse(s).unwrap());
        assert_eq!(
            t("struct<a:int,b:list<str>>"),
            "STRUCT(\"a\" BIGINT, \"b\" VARCHAR[])"
        );
        assert_eq!(t("map<str,float>"), "MAP(VARCHAR, DOUBLE)");
        assert!(t("variant").starts_with("STRUCT(\"kind\" VARCHAR"));
    }
}

//! NDJSON: one JSON object per line. The columns are the keys in order of first appearance; a
//! key a line lacks is null there, except the deleted column, whose absence makes the row live
//! (CHECK-04). Dates and datetimes are strings (or `{"$date": ..}` / `{"$datetime": ..}` tags).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};

use dogana::{quoted, LogicalType, NAME_MAX, SHOWN};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::cell::{parse_date, parse_datetime, show, Cell, Typed};
use crate::checker::{Checker, Slot};
use crate::error::RowsError;
use crate::hash::BUFFER_SIZE;
use crate::row::{Raw, Row};
use crate::RowCallback;

/// A key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A JSON object's entries in the order the line writes them.
struct Entries<'de>(Vec<(Cow<'de, str>, Value)>);

impl<'de> de::Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'de>, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
                    out.push((k, map.next_value::<Value>()?));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A JSON value as a bound column of type `ty`.
fn typed(v: &Value, ty: LogicalType) -> Result<Typed, String> {
    let tagged = |tag: &str| match v {
        Value::Object(o) if o.len() == 1 => o.get(tag).and_then(Value::as_str),
        _ => None,
    };
    let bad = || {
        let text = v.to_string();
        format!("{} is not {}", show(text.as_bytes()), article(ty))
    };
    Ok(match (ty, v) {
        (_, Value::Null) => Typed::Null,
        (LogicalType::Int, Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Typed::Int(i),
            // a number with a zero fraction is the integer it spells (as WIRE reads JSON)
            (None, Some(x)) if x.fract() == 0.0 && x.abs() < 9.2e18 => Typed::Int(x as i64),
            _ => return Err(bad()),
        },
        (LogicalType::Float, Value::Number(n)) => Typed::Float(n.as_f64().ok_or_else(bad)?),
        (LogicalType::Str, Value::String(_)) => Typed::Text,
        (LogicalType::Bool, Value::Bool(b)) => Typed::Bool(*b),
        (LogicalType::Date, _) => {
            let s = v.as_str().or_else(|| tagged("$date")).ok_or_else(bad)?;
            Typed::Date(
                parse_date(s.as_bytes())
                    .ok_or_else(|| format!("{} is not a date (YYYY-MM-DD)", show(s.as_bytes())))?,
            )
        }
        (LogicalType::Datetime, _) => {
            let s = v.as_str().or_else(|| tagged("$datetime")).ok_or_else(bad)?;
            Typed::Datetime(parse_datetime(s.as_bytes()).map_err(|naive| {
                if naive {
                    format!(
                        "{} has no UTC offset; a datetime in a read carries Z or ±HH:MM (CHECK-17)",
                        show(s.as_bytes())
                    )
                } else {
                    format!(
                        "{} is not an RFC 3339 datetime with a UTC offset",
                        show(s.as_bytes())
                    )
                }
            })?)
        }
        _ => return Err(bad()),
    })
}

/// The problem of an NDJSON line that starts with a byte order mark.
const BOM: &str = "the line starts with a byte order mark (U+FEFF, the bytes EF BB BF), which \
                   JSON text does not have (RFC 8259 section 8.1): write the file without one";

/// Whether a JSON number is an integer (an integer literal, or a float with no fraction).
fn integral(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|x| x.fract() == 0.0)
}

/// The problem of an integer beyond the range of an `int` (shared by CSV and NDJSON).
pub(crate) fn int_out_of_range(written: &[u8]) -> String {
    format!(
        "{} is an integer outside the 64-bit range of an int ({} to {}); type larger keys as str \
         (WIRE-25)",
        show(written),
        i64::MIN,
        i64::MAX
    )
}

/// The number token the line writes for member `key`, as written: `"key"`, then `:` and the
/// token (a key with escapes is not found, and the caller shows the number as JSON reads it).
fn raw_number<'a>(line: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let needle = format!("\"{key}\"");
    let mut from = 0;
    while let Some(p) = memchr::memmem::find(&line[from..], needle.as_bytes()) {
        let mut at = from + p + needle.len();
        from = at;
        while line.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        if line.get(at) != Some(&b':') {
            continue;
        }
        at += 1;
        while line.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        let end = at
            + line[at..]
                .iter()
                .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                .count();
        if end > at {
            return Some(&line[at..end]);
        }
    }
    None
}

fn article(ty: LogicalType) -> String {
    match ty {
        LogicalType::Int => "an int".into(),
        other => format!("a {other}"),
    }
}

/// An unbound value as its JSON type gives it.
pub(crate) fn natural(v: &Value) -> Cell<'_> {
    match v {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Cell::Int(i),
            (None, Some(u), _) => Cell::Str(Cow::Owned(u.to_string())),
            (_, _, Some(x)) => Cell::Float(x),
            _ => Cell::Str(Cow::Owned(n.to_string())),
        },
        Value::String(s) => Cell::Str(Cow::Borrowed(s)),
        other => Cell::Str(Cow::Owned(other.to_string())),
    }
}

/// The top-level keys of one JSON object, values skipped.
struct KeysOnly<'de>(Vec<Cow<'de, str>>);

impl<'de> de::Deserialize<'de> for KeysOnly<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeysOnly<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeysOnly<'de>, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
                    map.next_value::<de::IgnoredAny>()?;
                    out.push(k);
                }
                Ok(KeysOnly(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The union of the file's top-level keys, in order of first appearance (`ndjson_keys`).
pub(crate) fn keys<R: Read>(input: R) -> std::io::Result<Vec<String>> {
    let mut reader = BufReader::with_capacity(BUFFER_SIZE, input);
    let mut columns: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut buf: Vec<u8> = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            return Ok(columns);
        }
        let text = buf.trim_ascii();
        let mut de = serde_json::Deserializer::from_slice(text);
        // a line that is not one object is the check's to report
        if let Ok(KeysOnly(keys)) = de::Deserialize::deserialize(&mut de) {
            for k in keys {
                if k.len() <= NAME_MAX && !seen.contains(k.as_ref()) {
                    seen.insert(k.to_string());
                    columns.push(k.into_owned());
                }
            }
        }
    }
}

/// Reads an NDJSON delivery from `input`, feeding `checker`; returns the columns: `seed`
/// first (every row has them, null where a line lacks one), then each other key in order of
/// first appearance.
pub(crate) fn run<R: Read>(
    input: R,
    checker: &mut Checker,
    seed: &[String],
    on_row: &mut RowCallback<'_>,
) -> Result<(Vec<String>, R), RowsError> {
    let mut reader = BufReader::with_capacity(BUFFER_SIZE, input);
    let mut columns: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for c in seed {
        if !index.contains_key(c) {
            index.insert(c.clone(), columns.len());
            columns.push(c.clone());
        }
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut slots: Vec<usize> = Vec::new();
    let mut typed_cols: Vec<Option<Typed>> = Vec::new();
    let spec_keys = checker.spec.key_cols.clone();
    let window = checker.spec.window_col.clone();
    let cursor = checker.spec.cursor_col.clone();
    let deleted = checker.spec.deleted_col.clone();
    let mut line: u64 = 0;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line += 1;
        let text = buf.trim_ascii();
        if text.is_empty() {
            continue;
        }
        if text.starts_with(b"\xef\xbb\xbf") {
            checker.unreadable(line, || BOM.into());
            continue;
        }
        let mut de = serde_json::Deserializer::from_slice(text);
        let entries = match de::Deserialize::deserialize(&mut de).and_then(|e| de.end().map(|()| e))
        {
            Ok(Entries(e)) => e,
            Err(e) => {
                let why = if e.is_eof() && buf.last() != Some(&b'\n') {
                    format!("{e} (a truncated last line)")
                } else {
                    e.to_string()
                };
                checker.unreadable(line, || format!("not one JSON object: {why}"));
                continue;
            }
        };
        if let Some((k, _)) = entries.iter().find(|(k, _)| k.len() > NAME_MAX) {
            checker.unreadable(line, || {
                format!(
                    "key {} is not a column name: a column name is at most {NAME_MAX} bytes \
                     (CONTRACT-48)",
                    quoted(k, SHOWN)
                )
            });
            continue;
        }
        // place each entry in its column
        for (k, _) in &entries {
            if !index.contains_key(k.as_ref()) {
                index.insert(k.to_string(), columns.len());
                columns.push(k.to_string());
            }
        }
        slots.clear();
        slots.resize(columns.len(), usize::MAX);
        let mut repeated = None;
        for (at, (k, _)) in entries.iter().enumerate() {
            let c = index[k.as_ref()];
            if slots[c] != usize::MAX {
                repeated = Some(k.to_string());
            }
            slots[c] = at;
        }
        if let Some(k) = repeated {
            checker.unreadable(line, || {
                format!("key {} appears twice in the object", quoted(&k, SHOWN))
            });
            continue;
        }
        typed_cols.clear();
        typed_cols.resize(columns.len(), None);
        let mut error: Option<String> = None;
        for (c, name) in columns.iter().enumerate() {
            let Some(ty) = checker.spec.bound_type(name) else {
                continue;
            };
            let t = match entries.get(slots[c]) {
                None => Typed::Null,
                Some((_, v)) => typed(v, ty).unwrap_or_else(|why| {
                    error.get_or_insert_with(|| {
                        let why = match (ty, v) {
                            // an integer beyond 64 bits, quoted as the line writes it
                            (LogicalType::Int, Value::Number(n)) if integral(n) => {
                                let written = raw_number(text, name);
                                int_out_of_range(written.unwrap_or(n.to_string().as_bytes()))
                            }
                            _ => why,
                        };
                        format!("column {name}: {why}")
                    });
                    Typed::Bad
                }),
            };
            typed_cols[c] = Some(t);
        }
        let slot_of = |name: Option<&str>, absent_is_null: bool| -> Slot<'_> {
            let Some(name) = name else {
                return Slot::Absent;
            };
            let Some(&c) = index.get(name) else {
                return if absent_is_null {
                    Slot::Val(Cell::Null)
                } else {
                    Slot::Absent
                };
            };
            if slots[c] == usize::MAX && !absent_is_null {
                return Slot::Absent;
            }
            match typed_cols[c] {
                None | Some(Typed::Bad) => Slot::Bad,
                Some(Typed::Text) => Slot::Val(Cell::Str(Cow::Borrowed(
                    entries[slots[c]].1.as_str().unwrap_or_default(),
                ))),
                Some(t) => Slot::Val(t.to_cell("")),
            }
        };
        checker.key_start();
        for (k, name) in spec_keys.iter().enumerate() {
            let s = slot_of(Some(name), true);
            checker.key_part(k, &s);
        }
        let ok = error.is_none();
        let d = slot_of(deleted.as_deref(), false);
        let w = slot_of(window.as_ref().map(|(c, _)| c.as_str()), true);
        let cu = slot_of(cursor.as_ref().map(|(c, _)| c.as_str()), true);
        let tomb = checker.row(line, d, w, cu, error);
        if let (true, Some(tombstone)) = (ok, tomb) {
            on_row(&Row {
                columns: &columns,
                typed: &typed_cols,
                raw: Raw::Json {
                    entries: &entries,
                    slots: &slots,
                },
                line,
                tombstone,
            })?;
        }
    }
    Ok((columns, reader.into_inner()))
}

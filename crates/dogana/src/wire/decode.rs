//! Reading wire documents: every refusal is a [`SerializationError`] naming the JSON path.
//!
//! Reading happens in two steps. First the document's structure: the version (exactly 4,
//! WIRE-02), the kind expected at that position (WIRE-08), every field present and no other
//! (WIRE-04, WIRE-07), the JSON type of each field (WIRE-06, WIRE-07) and the tags (WIRE-09 to
//! WIRE-14). Then the value is built through the type's own constructor (the contract builder,
//! [`Shape::new`], the manifest builder, [`Region::new`], [`Ledger::from_parts`]), so a document
//! can spell nothing the API could not build; a rule those constructors refuse comes back as a
//! [`SerializationError`] whose field is the JSON path, with the rule and reason kept.
//!
//! Paths use the notation of `dogana_json`: `$` is the document, `.name` an object member whose
//! key is an identifier, `["any key"]` any other member and `[3]` an array element, as in
//! `$.shapes.last3.window_size` or `$.regions[2].low`.

use std::fmt;

use serde_json::{Map, Value as Json};

use super::{Wire, VERSION};
use crate::claims::{Claims, RegionClaim, State};
use crate::contract::{is_sha256_hex, Contract};
use crate::error::{InvalidContract, Problem, SerializationError};
use crate::gate::{Check, Outcome, Receipt, NO_PUBLICATION};
use crate::ledger::{Ledger, Region};
use crate::manifest::{Manifest, Position, Since};
use crate::plan::{Action, ActionKind, ApplyPlan, Transition};
use crate::shape::{Checkpoint, Coverage, Deletions, Shape};
use crate::time::{Date, Duration, TimeError, Timestamp};
use crate::value::{LogicalType, Value, Window};

type Result<T> = std::result::Result<T, SerializationError>;

/// A kind that can be read back from its wire form.
///
/// Reading is strict: a document is refused unless it is exactly what [`Wire::to_json`] could
/// have written for some valid value, up to whitespace, key order, number spelling (`4.0` is
/// `4`) and datetime offsets. Every refusal names the JSON path at fault.
///
/// ```
/// use dogana::{Contract, FromWire, LogicalType, Shape, Wire};
/// let c = Contract::builder("orders", ["id"]).shape("full", Shape::full())
///     .column("id", LogicalType::Int).build().unwrap();
/// assert_eq!(Contract::from_json(&c.to_json()).unwrap(), c);
///
/// // the first "version" in canonical order is the shape's
/// let e = Contract::from_json(&c.to_json().replacen(r#""version":4"#, r#""version":3"#, 1)).unwrap_err();
/// assert_eq!((e.0.field.as_str(), e.0.rule), ("$.shapes.full.version", "WIRE-02"));
/// ```
pub trait FromWire: Sized {
    /// Reads the full wire form of a value (a `serde_json` value, as from [`Wire::to_value`]).
    fn from_value(value: &Json) -> Result<Self>;

    /// Reads a wire document from bytes: strict JSON (UTF-8, no duplicate keys, no lone
    /// surrogates, bounded nesting, finite numbers; WIRE-16, WIRE-31), then [`from_value`].
    ///
    /// [`from_value`]: FromWire::from_value
    fn from_slice(bytes: &[u8]) -> Result<Self> {
        let value = dogana_json::parse(bytes).map_err(json_error)?;
        Self::from_value(&value)
    }

    /// Reads a wire document from text; see [`FromWire::from_slice`].
    fn from_json(text: &str) -> Result<Self> {
        Self::from_slice(text.as_bytes())
    }
}

/// How much of an offending value an error message shows.
const SHOWN_CHARS: usize = 64;

fn fail(
    path: impl Into<String>,
    value: impl fmt::Display,
    rule: &'static str,
    reason: impl Into<String>,
) -> SerializationError {
    SerializationError(Problem::new(path, value, rule, reason))
}

/// The JSON parser's refusal, with its path kept.
fn json_error(e: dogana_json::JsonError) -> SerializationError {
    use dogana_json::JsonErrorKind as K;
    let rule = match e.kind() {
        K::LoneSurrogate => "WIRE-16",
        K::NumberOutOfRange => "WIRE-31",
        K::InexactInteger => "WIRE-24",
        _ => "WIRE-07",
    };
    let reason = match (e.line(), e.column()) {
        (Some(l), Some(c)) => format!("{} (line {l}, column {c})", e.message()),
        _ => e.message().to_owned(),
    };
    fail(e.path(), "", rule, reason)
}

/// A short, ASCII rendering of a JSON value for messages: long strings and containers are cut,
/// so a megabyte where a hash belongs gives a one-line error.
fn show(v: &Json) -> String {
    match v {
        // cut, with its length, as every value a sender wrote is shown
        Json::String(s) if s.char_indices().nth(SHOWN_CHARS).is_some() => {
            dogana_json::quoted(s, SHOWN_CHARS)
        }
        _ => {
            let text = dogana_json::canonical(v);
            if text.len() > 2 * SHOWN_CHARS {
                // canonical JSON is ASCII, so any byte index is a character boundary
                format!("{}... ({} bytes)", &text[..2 * SHOWN_CHARS], text.len())
            } else {
                text
            }
        }
    }
}

fn describe(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(n) if n.is_f64() => "a number",
        Json::Number(_) => "an integer",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn wrong_type(v: &Json, path: &str, expected: &str) -> SerializationError {
    fail(
        path,
        show(v),
        "WIRE-07",
        format!("expected {expected}, found {}", describe(v)),
    )
}

/// Whether a member name is written `.name` in a path.
fn is_identifier(key: &str) -> bool {
    let mut bytes = key.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'A'..=b'Z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The path of member `key` of the object at `base`.
fn member(base: &str, key: &str) -> String {
    if key.char_indices().nth(SHOWN_CHARS).is_some() {
        // a sender's key of megabytes: its start, and its length
        format!("{base}[{}]", dogana_json::quoted(key, SHOWN_CHARS))
    } else if is_identifier(key) {
        format!("{base}.{key}")
    } else {
        let mut out = format!("{base}[");
        dogana_json::write_python_ascii_string(&mut out, key);
        out.push(']');
        out
    }
}

/// The path of element `i` of the array at `base`.
fn element(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// A relative field name of a constructor's problem (`shapes.x.cost`, `regions[2].low`, or
/// empty for the value itself) under the path `base`.
fn join(base: &str, field: &str) -> String {
    if field.is_empty() || field == "$" {
        base.to_owned()
    } else if let Some(rest) = field.strip_prefix('$') {
        format!("{base}{rest}")
    } else if field.starts_with('[') {
        format!("{base}{field}")
    } else {
        format!("{base}.{field}")
    }
}

/// A constructor's refusal of a value read from `base`: the field becomes a JSON path, and a
/// long offending value is cut.
fn declaration(e: InvalidContract, base: &str) -> SerializationError {
    let mut p = e.problem().clone();
    p.field = join(base, &p.field);
    if p.value.chars().count() > 2 * SHOWN_CHARS {
        let n = p.value.chars().count();
        p.value = format!(
            "{}... ({n} characters)",
            p.value.chars().take(2 * SHOWN_CHARS).collect::<String>()
        );
    }
    SerializationError(p)
}

/// Reads a nested value of kind `T` at `path` (WIRE-03: it carries its own version and kind).
fn nested<T: FromWire>(v: &Json, path: &str) -> Result<T> {
    T::from_value(v).map_err(|SerializationError(mut p)| {
        p.field = join(path, &p.field);
        SerializationError(p)
    })
}

fn check_version(v: &Json, path: &str) -> Result<()> {
    let Json::Number(n) = v else {
        return Err(wrong_type(v, path, "the integer 4"));
    };
    // Every version number that matters is small, so binary64 compares it exactly.
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.fract() != 0.0 {
        return Err(fail(
            path,
            show(v),
            "WIRE-06",
            "a version is an integer, and a number with a fraction is not one",
        ));
    }
    let why = if f == VERSION as f64 {
        return Ok(());
    } else if f == 1.0 {
        "version 1 is the format of dogana 0.1, whose manifests listed keys"
    } else if f == 2.0 {
        "version 2 is the format of dogana 0.2 and 0.3, whose receipts carried ledgers"
    } else if f == 3.0 {
        "version 3 is the format of dogana 0.4 to 0.6, whose contracts carried a shrink limit"
    } else {
        "no dogana release wrote this version"
    };
    Err(fail(
        path,
        show(v),
        "WIRE-02",
        format!("{why}; this reader reads only version {VERSION}, and earlier versions need a migration"),
    ))
}

/// One object of a kind: version, kind, exactly the given fields.
struct Obj<'a> {
    map: &'a Map<String, Json>,
    path: &'a str,
}

impl<'a> Obj<'a> {
    fn open(v: &'a Json, path: &'a str, kind: &str, fields: &[&str]) -> Result<Obj<'a>> {
        let Json::Object(map) = v else {
            return Err(wrong_type(v, path, &format!("a {kind} object")));
        };
        let missing = |field: &str| {
            fail(
                member(path, field),
                "missing",
                "WIRE-07",
                format!("every field of a {kind} is present, defaults included (WIRE-04)"),
            )
        };
        check_version(
            map.get("version").ok_or_else(|| missing("version"))?,
            &member(path, "version"),
        )?;
        let kind_path = member(path, "kind");
        match map.get("kind") {
            None => return Err(missing("kind")),
            Some(Json::String(k)) if k == kind => {}
            Some(k @ Json::String(_)) => {
                return Err(fail(
                    kind_path,
                    show(k),
                    "WIRE-08",
                    format!("a {kind} is expected here"),
                ))
            }
            Some(k) => return Err(wrong_type(k, &kind_path, &format!("the string {kind:?}"))),
        }
        if let Some(extra) = map
            .keys()
            .find(|k| *k != "version" && *k != "kind" && !fields.contains(&k.as_str()))
        {
            return Err(fail(
                member(path, extra),
                show(&map[extra]),
                "WIRE-07",
                format!(
                    "a {kind} has no field {}; its fields are version, kind, {}",
                    dogana_json::quoted(extra, SHOWN_CHARS),
                    fields.join(", ")
                ),
            ));
        }
        if let Some(absent) = fields.iter().find(|f| !map.contains_key(**f)) {
            return Err(missing(absent));
        }
        Ok(Obj { map, path })
    }

    /// A field's value and path.
    fn get(&self, name: &str) -> (&'a Json, String) {
        (&self.map[name], member(self.path, name))
    }

    fn with<T>(&self, name: &str, read: impl FnOnce(&'a Json, &str) -> Result<T>) -> Result<T> {
        let (v, path) = self.get(name);
        read(v, &path)
    }

    fn nullable<T>(
        &self,
        name: &str,
        read: impl FnOnce(&'a Json, &str) -> Result<T>,
    ) -> Result<Option<T>> {
        let (v, path) = self.get(name);
        match v {
            Json::Null => Ok(None),
            _ => read(v, &path).map(Some),
        }
    }
}

fn string<'a>(v: &'a Json, path: &str) -> Result<&'a str> {
    match v {
        Json::String(s) => Ok(s),
        _ => Err(wrong_type(v, path, "a string")),
    }
}

fn owned(v: &Json, path: &str) -> Result<String> {
    string(v, path).map(str::to_owned)
}

fn boolean(v: &Json, path: &str) -> Result<bool> {
    match v {
        Json::Bool(b) => Ok(*b),
        _ => Err(wrong_type(v, path, "true or false")),
    }
}

fn array<'a>(v: &'a Json, path: &str) -> Result<&'a [Json]> {
    match v {
        Json::Array(xs) => Ok(xs),
        _ => Err(wrong_type(v, path, "an array")),
    }
}

fn object<'a>(v: &'a Json, path: &str) -> Result<&'a Map<String, Json>> {
    match v {
        Json::Object(m) => Ok(m),
        _ => Err(wrong_type(v, path, "an object")),
    }
}

fn list<T>(v: &Json, path: &str, read: impl Fn(&Json, &str) -> Result<T>) -> Result<Vec<T>> {
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| read(x, &element(path, i)))
        .collect()
}

/// An integer within the protocol's range, ±(2^53-1): an integer number, or a number with a
/// zero fraction (`4.0`, `-0.0`), as JSON Schema reads it (WIRE-06). Out of range is refused
/// with `range_rule`.
fn integer(v: &Json, path: &str, range_rule: &'static str) -> Result<i64> {
    let Json::Number(n) = v else {
        return Err(wrong_type(v, path, "an integer"));
    };
    let exact: Option<i128> = if let Some(i) = n.as_i64() {
        Some(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Some(i128::from(u))
    } else {
        let f = n.as_f64().unwrap_or(f64::NAN);
        if f.fract() != 0.0 {
            return Err(fail(
                path,
                show(v),
                "WIRE-06",
                "an integer is expected, and a number with a fraction is not one",
            ));
        }
        // Beyond 2^53 a binary64 number stands for no exact integer the protocol carries.
        (f.abs() <= Value::INT_MAX as f64).then_some(f as i128)
    };
    match exact {
        Some(i) if (i128::from(Value::INT_MIN)..=i128::from(Value::INT_MAX)).contains(&i) => {
            Ok(i as i64)
        }
        _ => Err(fail(
            path,
            show(v),
            range_rule,
            "integers lie within [-(2^53-1), 2^53-1], where binary64 holds them exactly; type larger keys as str",
        )),
    }
}

/// A count: a nonnegative integer within 2^53-1.
fn count(v: &Json, path: &str) -> Result<u64> {
    let n = integer(v, path, "WIRE-24")?;
    u64::try_from(n).map_err(|_| fail(path, show(v), "WIRE-07", "a count is a nonnegative integer"))
}

/// Any number, as binary64; an integer must be exact in binary64 (WIRE-24). `-0` reads as `0`.
fn number(v: &Json, path: &str) -> Result<f64> {
    let Json::Number(n) = v else {
        return Err(wrong_type(v, path, "a number"));
    };
    let f = n.as_f64().unwrap_or(f64::NAN);
    let exact = match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => f as i128 == i128::from(i),
        (_, Some(u)) => f as i128 == i128::from(u),
        _ => true,
    };
    if !exact || !f.is_finite() {
        return Err(fail(
            path,
            show(v),
            "WIRE-24",
            "a number must be exact in binary64, never rounded",
        ));
    }
    Ok(f + 0.0)
}

/// A SHA-256 written as 64 lowercase hex characters.
fn hash(v: &Json, path: &str, rule: &'static str) -> Result<String> {
    let s = string(v, path)?;
    if !is_sha256_hex(s) {
        return Err(fail(
            path,
            show(v),
            rule,
            "a SHA-256 is written as 64 lowercase hexadecimal characters",
        ));
    }
    Ok(s.to_owned())
}

/// A wire enum: one of `names`.
fn named<T>(
    v: &Json,
    path: &str,
    from_name: impl Fn(&str) -> Option<T>,
    names: &[&str],
    rule: &'static str,
) -> Result<T> {
    let s = string(v, path)?;
    from_name(s).ok_or_else(|| {
        fail(
            path,
            show(v),
            rule,
            format!("expected one of {}", names.join(", ")),
        )
    })
}

const TAGS: [&str; 3] = ["$date", "$datetime", "$seconds"];

/// The tag of a tag object, `{"$date": ...}`, `{"$datetime": ...}` or `{"$seconds": ...}`, if
/// `v` is one. A tag object has exactly one key (WIRE-15).
fn tag<'a>(v: &'a Json, path: &str) -> Result<Option<(&'a str, &'a Json)>> {
    let Json::Object(m) = v else {
        return Ok(None);
    };
    let Some((name, inner)) = m.iter().find(|(k, _)| TAGS.contains(&k.as_str())) else {
        return Ok(None);
    };
    if let Some(extra) = m.keys().find(|k| *k != name) {
        return Err(fail(
            member(path, extra),
            show(&m[extra]),
            "WIRE-13",
            format!("a {name} tag is an object with that one key"),
        ));
    }
    Ok(Some((name, inner)))
}

/// The rule a time value's refusal breaks. `TimeError` has no kind; its messages name the rule
/// they break (see time.rs), and the domain's ends are the tags' overflow (WIRE-14).
fn time_rule(e: &TimeError) -> &'static str {
    let m = e.to_string();
    if m.contains("(WIRE-14)") || m.contains("(DOMAIN-12)") {
        "WIRE-14"
    } else if m.contains("(TRUST-09)") {
        "WIRE-10"
    } else if m.contains("(WIRE-12)") {
        "WIRE-12"
    } else {
        "WIRE-13"
    }
}

fn tagged<'a>(v: &'a Json, path: &str, want: &str, example: &str) -> Result<&'a Json> {
    match tag(v, path)? {
        Some((name, inner)) if name == want => Ok(inner),
        _ => Err(wrong_type(
            v,
            path,
            &format!("a {want} tag such as {example}"),
        )),
    }
}

fn tag_text<'a>(inner: &'a Json, v: &Json, path: &str, name: &str) -> Result<&'a str> {
    match inner {
        Json::String(s) => Ok(s),
        _ => Err(fail(
            path,
            show(v),
            "WIRE-13",
            format!("the value of a {name} tag is a string"),
        )),
    }
}

fn parse_date(inner: &Json, v: &Json, path: &str) -> Result<Date> {
    let text = tag_text(inner, v, path, "$date")?;
    text.parse::<Date>()
        .map_err(|e| fail(path, show(v), time_rule(&e), e.to_string()))
}

fn parse_datetime(inner: &Json, v: &Json, path: &str) -> Result<Timestamp> {
    let text = tag_text(inner, v, path, "$datetime")?;
    text.parse::<Timestamp>()
        .map_err(|e| fail(path, show(v), time_rule(&e), e.to_string()))
}

/// `{"$datetime": "2026-10-18T00:00:00+00:00"}` (WIRE-10).
fn datetime(v: &Json, path: &str) -> Result<Timestamp> {
    let inner = tagged(
        v,
        path,
        "$datetime",
        r#"{"$datetime":"2026-10-18T00:00:00+00:00"}"#,
    )?;
    parse_datetime(inner, v, path)
}

/// `{"$seconds": 604800}` (WIRE-12): nonnegative, integral or with exactly representable
/// microseconds; a number that would round is refused (WIRE-13).
fn seconds(v: &Json, path: &str) -> Result<Duration> {
    let inner = tagged(v, path, "$seconds", r#"{"$seconds":604800}"#)?;
    let Json::Number(n) = inner else {
        return Err(fail(
            path,
            show(v),
            "WIRE-13",
            "the value of a $seconds tag is a number",
        ));
    };
    let read = if let Some(i) = n.as_i64() {
        Duration::from_seconds(i)
    } else if n.is_u64() {
        return Err(fail(
            path,
            show(v),
            "WIRE-14",
            "exceeds the largest duration, 999999999 days 23:59:59",
        ));
    } else {
        Duration::from_seconds_f64(n.as_f64().unwrap_or(f64::NAN))
    };
    read.map_err(|e| fail(path, show(v), time_rule(&e), e.to_string()))
}

/// A key or window value: an integer, a string, a `$date` or a `$datetime` tag.
fn value(v: &Json, path: &str) -> Result<Value> {
    let expected = "an integer, a string, a $date tag or a $datetime tag";
    match v {
        Json::String(s) => Ok(Value::Str(s.clone())),
        Json::Number(_) => integer(v, path, "DOMAIN-14").map(Value::Int),
        Json::Object(_) => match tag(v, path)? {
            Some(("$date", inner)) => parse_date(inner, v, path).map(Value::Date),
            Some(("$datetime", inner)) => parse_datetime(inner, v, path).map(Value::Datetime),
            _ => Err(wrong_type(v, path, expected)),
        },
        _ => Err(wrong_type(v, path, expected)),
    }
}

/// A closed window, `[low, high]` (WIRE-05).
fn window(v: &Json, path: &str) -> Result<Window> {
    match array(v, path)? {
        [low, high] => Ok(Window::new(
            value(low, &element(path, 0))?,
            value(high, &element(path, 1))?,
        )),
        _ => Err(fail(
            path,
            show(v),
            "WIRE-05",
            "a window is an array of two values, [low, high]",
        )),
    }
}

/// A generation token (a string) or a sequence position (an integer).
fn position(v: &Json, path: &str) -> Result<Position> {
    match v {
        Json::String(s) => Ok(Position::Token(s.clone())),
        Json::Number(_) => integer(v, path, "WIRE-24").map(Position::Sequence),
        _ => Err(wrong_type(
            v,
            path,
            "a generation token (a string) or a sequence position (an integer)",
        )),
    }
}

/// A `$datetime` tag for a timestamp checkpoint, or a position.
fn since(v: &Json, path: &str) -> Result<Since> {
    match v {
        Json::Object(_) => datetime(v, path).map(Since::Time),
        Json::String(_) | Json::Number(_) => position(v, path).map(Since::Position),
        _ => Err(wrong_type(
            v,
            path,
            "a $datetime tag, a generation token (a string) or a sequence position (an integer)",
        )),
    }
}

fn strings(v: &Json, path: &str) -> Result<Vec<String>> {
    list(v, path, owned)
}

impl FromWire for Shape {
    fn from_value(v: &Json) -> Result<Shape> {
        let o = Obj::open(
            v,
            "$",
            Shape::KIND,
            &[
                "coverage",
                "checkpoint",
                "deletions",
                "cost",
                "window_size",
                "lookback",
            ],
        )?;
        let coverage = o.with("coverage", |v, p| {
            named(v, p, Coverage::from_name, Coverage::NAMES, "WIRE-32")
        })?;
        let checkpoint = o.with("checkpoint", |v, p| {
            named(v, p, Checkpoint::from_name, Checkpoint::NAMES, "WIRE-32")
        })?;
        let deletions = o.with("deletions", |v, p| {
            named(v, p, Deletions::from_name, Deletions::NAMES, "WIRE-32")
        })?;
        let cost = o.with("cost", number)?;
        if cost < 0.0 {
            return Err(fail(
                "$.cost",
                cost,
                "CONTRACT-33",
                "cost is a finite nonnegative number",
            ));
        }
        let window_size = o.nullable("window_size", seconds)?;
        if window_size == Some(Duration::ZERO) {
            return Err(fail(
                "$.window_size",
                "0s",
                "CONTRACT-35",
                "window_size is strictly positive",
            ));
        }
        let lookback = o.nullable("lookback", seconds)?;
        let mut shape = Shape::new(coverage, checkpoint, deletions).map_err(|e| {
            let mut e = declaration(e, "$");
            e.0.field = "$".into();
            e
        })?;
        shape = shape.cost(cost);
        if let Some(size) = window_size {
            shape = shape.size(size);
        }
        if let Some(lookback) = lookback {
            shape = shape.lookback(lookback);
        }
        Ok(shape)
    }
}

/// `field` of a contract problem under `base`, with the shape or column name in `section`
/// (`shapes.NAME.rest`, `types.NAME`) written as a proper path segment.
fn named_field<'n>(
    base: &str,
    field: &str,
    section: &str,
    names: impl Iterator<Item = &'n String>,
) -> Option<String> {
    let rest = field.strip_prefix(section)?.strip_prefix('.')?;
    let name = names
        .filter(|n| rest == n.as_str() || rest.starts_with(&format!("{n}.")))
        .max_by_key(|n| n.len())?;
    let path = member(&member(base, section), name);
    Some(join(&path, rest[name.len()..].trim_start_matches('.')))
}

impl FromWire for Contract {
    fn from_value(v: &Json) -> Result<Contract> {
        let o = Obj::open(
            v,
            "$",
            Contract::KIND,
            &[
                "table",
                "key",
                "shapes",
                "window_column",
                "cursor_column",
                "deleted_column",
                "types",
                "schema_hash",
                "start_at",
            ],
        )?;
        let table = o.with("table", owned)?;
        let key = o.with("key", strings)?;
        let mut builder = Contract::builder(table, key);
        let (shapes, shapes_path) = o.get("shapes");
        let shapes = object(shapes, &shapes_path)?;
        for (name, shape) in shapes {
            builder = builder.shape(name.clone(), nested(shape, &member(&shapes_path, name))?);
        }
        if let Some(c) = o.nullable("window_column", owned)? {
            builder = builder.window_column(c);
        }
        if let Some(c) = o.nullable("cursor_column", owned)? {
            builder = builder.cursor_column(c);
        }
        if let Some(c) = o.nullable("deleted_column", owned)? {
            builder = builder.deleted_column(c);
        }
        let (types, types_path) = o.get("types");
        let types = object(types, &types_path)?;
        let type_names = LogicalType::ALL.map(LogicalType::name);
        for (column, ty) in types {
            let ty = named(
                ty,
                &member(&types_path, column),
                LogicalType::from_name,
                &type_names,
                "DOMAIN-05",
            )?;
            builder = builder.column(column.clone(), ty);
        }
        if let Some(h) = o.nullable("schema_hash", |v, p| hash(v, p, "CONTRACT-21"))? {
            builder = builder.schema_hash(h);
        }
        if let Some(t) = o.nullable("start_at", datetime)? {
            builder = builder.start_at(t);
        }
        builder.build().map_err(|e| {
            let field = e.problem().field.clone();
            let path = named_field("$", &field, "shapes", shapes.keys())
                .or_else(|| named_field("$", &field, "types", types.keys()));
            let mut e = declaration(e, "$");
            if let Some(path) = path {
                e.0.field = path;
            }
            e
        })
    }
}

impl FromWire for Manifest {
    fn from_value(v: &Json) -> Result<Manifest> {
        let o = Obj::open(
            v,
            "$",
            Manifest::KIND,
            &[
                "table",
                "shape",
                "produced_at",
                "window",
                "since",
                "generation",
                "rows",
                "schema_hash",
                "tombstones",
                "content_hash",
            ],
        )?;
        let mut b = Manifest::builder(
            o.with("table", owned)?,
            o.with("shape", owned)?,
            o.with("produced_at", datetime)?,
        );
        if let Some(w) = o.nullable("window", window)? {
            b = b.window(w);
        }
        if let Some(s) = o.nullable("since", since)? {
            b = b.since(s);
        }
        if let Some(g) = o.nullable("generation", position)? {
            b = b.generation(g);
        }
        b = b.rows(o.with("rows", count)?);
        if let Some(h) = o.nullable("schema_hash", |v, p| hash(v, p, "CONTRACT-21"))? {
            b = b.schema_hash(h);
        }
        b = b.tombstones(o.with("tombstones", count)?);
        if let Some(h) = o.nullable("content_hash", |v, p| hash(v, p, "MAN-23"))? {
            b = b.content_hash(h);
        }
        b.build().map_err(|e| declaration(e, "$"))
    }
}

impl FromWire for Region {
    fn from_value(v: &Json) -> Result<Region> {
        let o = Obj::open(
            v,
            "$",
            Region::KIND,
            &[
                "low",
                "high",
                "low_open",
                "high_open",
                "complete_as_of",
                "deletions_as_of",
            ],
        )?;
        let low = o.nullable("low", value)?;
        let high = o.nullable("high", value)?;
        let low_open = o.with("low_open", boolean)?;
        let high_open = o.with("high_open", boolean)?;
        if let (Some(l), Some(h)) = (&low, &high) {
            if l.logical_type() != h.logical_type() {
                return Err(fail(
                    "$.high",
                    h,
                    "LEDGER-03",
                    format!(
                        "a region's bounds are values of one column, and low is {}",
                        l.logical_type()
                    ),
                ));
            }
            if l > h || (l == h && (low_open || high_open)) {
                return Err(fail(
                    "$.high",
                    h,
                    "DOMAIN-18",
                    format!("a region is not empty, and this one ends before its low end, {l}"),
                ));
            }
        }
        Region::new(
            low,
            high,
            low_open,
            high_open,
            o.nullable("complete_as_of", datetime)?,
            o.nullable("deletions_as_of", datetime)?,
        )
        .map_err(|e| declaration(e, "$"))
    }
}

impl Ledger {
    /// Reads a ledger document in one pass over its bytes, without building a JSON tree, or
    /// gives `None` when only [`FromWire::from_slice`] can say: a document it refuses, or one
    /// spelled in a way this reader leaves to it (escaped keys, numbers like `4.0`, the
    /// regions before the contract). It never accepts a document `from_slice` refuses, and
    /// gives the same ledger; `from_slice` tries it first.
    pub fn from_slice_fast(bytes: &[u8]) -> Option<Ledger> {
        super::fast::ledger(bytes)
    }
}

impl FromWire for Ledger {
    fn from_slice(bytes: &[u8]) -> Result<Ledger> {
        if let Some(ledger) = Ledger::from_slice_fast(bytes) {
            return Ok(ledger);
        }
        let value = dogana_json::parse(bytes).map_err(json_error)?;
        Ledger::from_value(&value)
    }

    fn from_value(v: &Json) -> Result<Ledger> {
        let o = Obj::open(
            v,
            "$",
            Ledger::KIND,
            &["contract", "regions", "generation", "publication_id"],
        )?;
        let contract = o.with("contract", nested)?;
        let regions = o.with("regions", |v, p| list(v, p, nested))?;
        let generation = o.nullable("generation", |v, p| {
            let g = position(v, p)?;
            if g == Position::Token(String::new()) {
                return Err(fail(
                    p,
                    "\"\"",
                    "MAN-09",
                    "a generation token is a nonempty string",
                ));
            }
            Ok(g)
        })?;
        let publication_id = o.nullable("publication_id", |v, p| hash(v, p, "RECV-15"))?;
        Ledger::from_parts(contract, regions, generation, publication_id)
            .map_err(|e| declaration(e, "$"))
    }
}

impl FromWire for Check {
    fn from_value(v: &Json) -> Result<Check> {
        let o = Obj::open(v, "$", Check::KIND, &["name", "passed", "detail"])?;
        Ok(Check::new(
            o.with("name", owned)?,
            o.with("passed", boolean)?,
            o.with("detail", owned)?,
        ))
    }
}

impl FromWire for Action {
    fn from_value(v: &Json) -> Result<Action> {
        let o = Obj::open(v, "$", Action::KIND, &["action", "window", "key"])?;
        let kind = o.with("action", |v, p| {
            named(v, p, ActionKind::from_name, ActionKind::NAMES, "WIRE-32")
        })?;
        let w = o.nullable("window", window)?;
        match (&w, kind) {
            (None, ActionKind::ReplaceWindow) => {
                return Err(fail(
                    "$.window",
                    "null",
                    "PLAN-04",
                    "a replace_window action names the closed window it replaces",
                ))
            }
            (Some(w), ActionKind::ReplaceWindow) => {
                if w.low.logical_type() != w.high.logical_type() || w.low > w.high {
                    return Err(fail(
                        "$.window",
                        w,
                        "DOMAIN-18",
                        "a window's ends have one type and its low end is not after its high end",
                    ));
                }
            }
            (Some(w), k) => {
                return Err(fail(
                    "$.window",
                    w,
                    "PLAN-04",
                    format!("only a replace_window action has a window, not {k}"),
                ))
            }
            (None, _) => {}
        }
        Ok(Action::new(kind, w, o.with("key", strings)?))
    }
}

impl FromWire for ApplyPlan {
    fn from_value(v: &Json) -> Result<ApplyPlan> {
        let o = Obj::open(v, "$", ApplyPlan::KIND, &["actions"])?;
        Ok(ApplyPlan::new(
            o.with("actions", |v, p| list(v, p, nested))?,
        ))
    }
}

impl FromWire for Transition {
    fn from_value(v: &Json) -> Result<Transition> {
        let o = Obj::open(v, "$", Transition::KIND, &["plan", "regions"])?;
        Ok(Transition::new(
            o.with("plan", nested)?,
            o.with("regions", |v, p| list(v, p, nested))?,
        ))
    }
}

impl FromWire for Receipt {
    fn from_value(v: &Json) -> Result<Receipt> {
        let o = Obj::open(
            v,
            "$",
            Receipt::KIND,
            &[
                "manifest",
                "contract",
                "checks",
                "outcome",
                "received_at",
                "source",
                "base_publication_id",
                "publication_id",
                "ledger_identity",
                "transition",
            ],
        )?;
        let manifest = o.with("manifest", nested)?;
        let contract = o.with("contract", nested)?;
        let checks = o.with("checks", |v, p| list(v, p, nested))?;
        let outcome = o.with("outcome", |v, p| {
            named(
                v,
                p,
                Outcome::from_name,
                &["accepted", "rejected", "replayed"],
                "WIRE-32",
            )
        })?;
        let received_at = o.with("received_at", datetime)?;
        let source = o.nullable("source", owned)?;
        let base_publication_id =
            o.nullable("base_publication_id", |v, p| hash(v, p, "RECV-15"))?;
        let (id, id_path) = o.get("publication_id");
        let publication_id = owned(id, &id_path)?;
        let ledger_identity = o.with("ledger_identity", |v, p| hash(v, p, "GATE-19"))?;
        let transition: Option<Transition> = o.nullable("transition", nested)?;
        if outcome == Outcome::Rejected {
            let expected = base_publication_id.as_deref().unwrap_or(NO_PUBLICATION);
            if publication_id != expected {
                return Err(fail(
                    id_path,
                    show(id),
                    "GATE-18",
                    format!("a rejection leaves the publication as it was, {expected:?}"),
                ));
            }
            if let Some(t) = &transition {
                return Err(fail(
                    "$.transition",
                    format!("{} actions", t.plan().actions().len()),
                    "GATE-15",
                    "a rejected receipt carries no transition",
                ));
            }
        } else {
            if !is_sha256_hex(&publication_id) {
                return Err(fail(
                    id_path,
                    show(id),
                    "GATE-19",
                    "an acceptance names the new chain head, 64 lowercase hexadecimal characters",
                ));
            }
            if transition.is_none() {
                return Err(fail(
                    "$.transition",
                    "null",
                    "GATE-15",
                    format!("an {outcome} receipt carries its transition"),
                ));
            }
        }
        Ok(Receipt {
            manifest,
            contract,
            checks,
            outcome,
            received_at,
            source,
            base_publication_id,
            publication_id,
            ledger_identity,
            transition,
            decided: Default::default(),
            identity: Default::default(),
        })
    }
}

impl FromWire for RegionClaim {
    fn from_value(v: &Json) -> Result<RegionClaim> {
        let o = Obj::open(v, "$", RegionClaim::KIND, &["table", "region", "state"])?;
        let state_names = ["unknown", "expired", "patched", "complete"];
        Ok(RegionClaim::new(
            o.with("table", owned)?,
            o.with("region", nested)?,
            o.with("state", |v, p| {
                named(v, p, State::from_name, &state_names, "WIRE-32")
            })?,
        ))
    }
}

impl FromWire for Claims {
    fn from_value(v: &Json) -> Result<Claims> {
        let o = Obj::open(v, "$", Claims::KIND, &["at", "limit", "regions"])?;
        let at = o.with("at", datetime)?;
        let limit = o.with("limit", seconds)?;
        let regions: Vec<RegionClaim> = o.with("regions", |v, p| list(v, p, nested))?;
        for (i, r) in regions.iter().enumerate() {
            let state = State::of(r.region(), at, limit);
            if r.state() != state {
                return Err(fail(
                    format!("$.regions[{i}].state"),
                    r.state(),
                    "CLAIMS-06",
                    format!("at {at} with limit {limit}, this region is {state}"),
                ));
            }
        }
        Ok(Claims::new(at, limit, regions))
    }
}

impl FromWire for crate::planning::Requirement {
    fn from_value(v: &Json) -> Result<Self> {
        let o = Obj::open(
            v,
            "$",
            Self::KIND,
            &["table", "complete_as_of", "deletions_as_of", "window"],
        )?;
        let mut r = crate::planning::Requirement::new(
            o.with("table", owned)?,
            o.with("complete_as_of", datetime)?,
        );
        if let Some(d) = o.nullable("deletions_as_of", datetime)? {
            r = r.with_deletions_as_of(d);
        }
        if let Some(w) = o.nullable("window", window)? {
            r = r.with_window(w);
        }
        Ok(r)
    }
}

impl FromWire for crate::planning::Extraction {
    fn from_value(v: &Json) -> Result<Self> {
        let o = Obj::open(
            v,
            "$",
            Self::KIND,
            &["table", "shape", "until", "window", "since"],
        )?;
        Ok(crate::planning::Extraction::new(
            o.with("table", owned)?,
            o.with("shape", owned)?,
            o.with("until", datetime)?,
            o.nullable("window", window)?,
            o.nullable("since", since)?,
        ))
    }
}

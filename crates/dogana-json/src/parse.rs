//! Strict parsing into `serde_json::Value`, with JSON paths in every error.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::{format_path, JsonError, JsonErrorKind, Segment};

/// The deepest nesting of arrays and objects that [`parse`] accepts.
///
/// A document may have up to `MAX_DEPTH` arrays/objects open at once; the
/// next opening `[` or `{` is refused with [`JsonErrorKind::TooDeep`]. The
/// parser never recurses deeper than this, so hostile input cannot overflow
/// the stack.
pub const MAX_DEPTH: usize = 128;

/// Parses one JSON document strictly.
///
/// Accepts exactly one RFC 8259 JSON value, with optional surrounding
/// whitespace, and refuses, with a [`JsonError`] naming the JSON path and
/// (where it applies) the line and column:
///
/// - invalid UTF-8 ([`JsonErrorKind::InvalidUtf8`]),
/// - syntax errors, including an input that ends early ([`JsonErrorKind::Syntax`]),
/// - content after the value ([`JsonErrorKind::TrailingContent`]),
/// - an object key that appears twice ([`JsonErrorKind::DuplicateKey`]),
/// - a string with an unpaired surrogate escape such as `"\ud800"`
///   ([`JsonErrorKind::LoneSurrogate`]),
/// - nesting deeper than [`MAX_DEPTH`] ([`JsonErrorKind::TooDeep`]),
/// - a number that overflows binary64, such as `1e400`
///   ([`JsonErrorKind::NumberOutOfRange`]),
/// - an integer literal outside the i64/u64 range that binary64 would round,
///   such as `18446744073709551617` ([`JsonErrorKind::InexactInteger`]). Such a
///   literal is accepted (as a float) when it is the exact value of a binary64
///   number or its ECMAScript shortest form (as [`crate::canonical`] and
///   [`crate::jcs`] write large floats, e.g. `100000000000000000000` for `1e20`).
///
/// Integers that fit i64 or u64 become integer [`Number`]s, exactly; every
/// other number becomes the nearest binary64 (correctly rounded). `-0` reads
/// as the float `-0.0`, as serde_json does. Memory use is proportional to the
/// input size.
///
/// ```
/// use serde_json::json;
///
/// let v = dogana_json::parse(br#"{"regions":[{"low":1}]}"#).unwrap();
/// assert_eq!(v, json!({"regions": [{"low": 1}]}));
///
/// let err = dogana_json::parse(br#"{"regions":[{"low":1e400}]}"#).unwrap_err();
/// assert_eq!(err.path(), "$.regions[0].low");
/// ```
pub fn parse(input: &[u8]) -> Result<Value, JsonError> {
    if let Err(utf8) = std::str::from_utf8(input) {
        let offset = utf8.valid_up_to();
        let (line, column) = line_column(input, offset);
        let message = format!("invalid UTF-8 at byte offset {offset}");
        // Parse the valid prefix: an error before the bad byte comes first;
        // otherwise the prefix ends early right where the bad byte is, and
        // the path of that early end is the path of the bad byte.
        return Err(match parse_tracked(&input[..offset]) {
            Err(failure) if !failure.eof => failure.error,
            Err(failure) => JsonError::new(
                JsonErrorKind::InvalidUtf8,
                failure.error.path().to_string(),
                message,
            )
            .at(line, column),
            Ok(_) => {
                JsonError::new(JsonErrorKind::InvalidUtf8, "$".into(), message).at(line, column)
            }
        });
    }
    if input.starts_with(b"\xef\xbb\xbf") {
        return Err(JsonError::new(
            JsonErrorKind::Syntax,
            "$".into(),
            "the document starts with a byte order mark (U+FEFF, the bytes EF BB BF), which \
             JSON text does not have (RFC 8259 section 8.1); write it without one",
        )
        .at(1, 1));
    }
    let parsed = parse_tracked(input).map_err(|failure| match failure.error.kind() {
        JsonErrorKind::LoneSurrogate => surrogate_error(input, failure.error),
        _ => failure.error,
    })?;
    if parsed.saw_large_integral_float {
        check_large_integer_literals(input)?;
    }
    Ok(parsed.value)
}

struct Parsed {
    value: Value,
    /// Whether some float was integral with magnitude >= 2^63, i.e. could have
    /// come from an integer literal outside the i64/u64 range.
    saw_large_integral_float: bool,
}

struct Failure {
    error: JsonError,
    /// The input ended early (serde_json's EOF category).
    eof: bool,
}

/// What a failed visitor wants to report, beyond serde_json's own message.
struct Refusal {
    kind: JsonErrorKind,
    message: String,
}

struct State {
    /// One segment per open array/object: where inside it the parser is.
    path: Vec<Segment>,
    refusal: Option<Refusal>,
    saw_large_integral_float: bool,
}

impl State {
    fn refuse<E: de::Error>(&mut self, kind: JsonErrorKind, message: String) -> E {
        let err = E::custom(&message);
        self.refusal = Some(Refusal { kind, message });
        err
    }

    fn set_last(&mut self, segment: Segment) {
        if let Some(last) = self.path.last_mut() {
            *last = segment;
        }
    }

    fn enter<E: de::Error>(&mut self, first: Segment) -> Result<(), E> {
        if self.path.len() >= crate::MAX_DEPTH {
            return Err(self.refuse(
                JsonErrorKind::TooDeep,
                format!("nesting deeper than {} arrays/objects", crate::MAX_DEPTH),
            ));
        }
        self.path.push(first);
        Ok(())
    }
}

fn parse_tracked(input: &[u8]) -> Result<Parsed, Failure> {
    let mut state = State {
        path: Vec::new(),
        refusal: None,
        saw_large_integral_float: false,
    };
    let mut de = serde_json::Deserializer::from_slice(input);
    // Depth is bounded by `State::enter` (MAX_DEPTH) before any recursion.
    de.disable_recursion_limit();
    let result = ValueSeed { state: &mut state }
        .deserialize(&mut de)
        .and_then(|value| de.end().map(|()| value));
    match result {
        Ok(value) => Ok(Parsed {
            value,
            saw_large_integral_float: state.saw_large_integral_float,
        }),
        Err(err) => Err(to_failure(err, state)),
    }
}

fn to_failure(err: serde_json::Error, state: State) -> Failure {
    let eof = err.is_eof();
    let (line, column) = (err.line(), err.column());
    let path = format_path(&state.path);
    let error = match state.refusal {
        Some(Refusal { kind, message }) => JsonError::new(kind, path, message),
        None => {
            let full = err.to_string();
            let suffix = format!(" at line {line} column {column}");
            let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
            let kind = if message.contains("surrogate") || message == "unexpected end of hex escape"
            {
                // serde_json's words for an unpaired \uD800-\uDFFF escape.
                JsonErrorKind::LoneSurrogate
            } else if message == "recursion limit exceeded" {
                JsonErrorKind::TooDeep
            } else if message == "number out of range" {
                JsonErrorKind::NumberOutOfRange
            } else if message == "trailing characters" {
                JsonErrorKind::TrailingContent
            } else if message == "invalid unicode code point" {
                JsonErrorKind::InvalidUtf8
            } else {
                JsonErrorKind::Syntax
            };
            JsonError::new(kind, path, message)
        }
    };
    Failure {
        error: error.at(line, column),
        eof,
    }
}

/// Builds a `Value`, tracking the path and refusing duplicate keys.
struct ValueSeed<'a> {
    state: &'a mut State,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        match Number::from_f64(v) {
            Some(n) => {
                if v.fract() == 0.0 && v.abs() >= TWO_POW_63 {
                    self.state.saw_large_integral_float = true;
                }
                Ok(Value::Number(n))
            }
            None => Err(self.state.refuse(
                JsonErrorKind::NumberOutOfRange,
                format!("number {v} is not finite"),
            )),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let state = self.state;
        state.enter(Segment::Index(0))?;
        let mut items = Vec::new();
        loop {
            state.set_last(Segment::Index(items.len()));
            match seq.next_element_seed(ValueSeed { state: &mut *state })? {
                Some(item) => items.push(item),
                None => break,
            }
        }
        state.path.pop();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let state = self.state;
        state.enter(Segment::PendingKey)?;
        let mut members = Map::new();
        loop {
            state.set_last(Segment::PendingKey);
            let Some(key) = map.next_key::<String>()? else {
                break;
            };
            let duplicate = members.contains_key(&key);
            state.set_last(Segment::Key(key));
            if duplicate {
                let Some(Segment::Key(key)) = state.path.last() else {
                    unreachable!("the key was just set");
                };
                let mut message = String::from("duplicate object key ");
                crate::error::write_key(&mut message, key);
                return Err(state.refuse(JsonErrorKind::DuplicateKey, message));
            }
            let value = map.next_value_seed(ValueSeed { state: &mut *state })?;
            let Some(Segment::Key(key)) = state.path.pop() else {
                unreachable!("the key segment is restored after its value");
            };
            state.path.push(Segment::PendingKey);
            members.insert(key, value);
        }
        state.path.pop();
        Ok(Value::Object(members))
    }
}

const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// Refuses the first integer literal (no fraction, no exponent) that lies
/// outside the i64/u64 range and is neither the exact value of the binary64 it
/// rounds to nor that binary64's ECMAScript shortest form. `input` has
/// already been parsed successfully.
fn check_large_integer_literals(input: &[u8]) -> Result<(), JsonError> {
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'"' => {
                i += 1;
                while i < input.len() {
                    match input[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < input.len()
                    && matches!(input[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let token = std::str::from_utf8(&input[start..i]).unwrap_or("");
                if let Some(rounded) = rounded_integer_literal(token) {
                    let path = match parse_tracked(&input[..start]) {
                        Err(failure) => failure.error.path().to_string(),
                        Ok(_) => "$".to_string(),
                    };
                    let (line, column) = line_column(input, start);
                    return Err(JsonError::new(
                        JsonErrorKind::InexactInteger,
                        path,
                        format!(
                            "integer {} is outside the 64-bit range and not exactly \
                             representable as binary64 (it would be rounded to {})",
                            crate::quote::digits(token),
                            crate::quote::digits(&rounded)
                        ),
                    )
                    .at(line, column));
                }
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// For an integer literal that binary64 would round (and that is not the
/// ECMAScript shortest form of that binary64), the exact rounded value.
fn rounded_integer_literal(token: &str) -> Option<String> {
    if token.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
        || token.parse::<i64>().is_ok()
        || token.parse::<u64>().is_ok()
    {
        return None;
    }
    let value: f64 = token.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    let digits = token.strip_prefix('-').unwrap_or(token);
    let exact = format!("{:.0}", value.abs());
    if exact == digits || ryu_js::Buffer::new().format_finite(value.abs()) == digits {
        return None;
    }
    Some(if value < 0.0 {
        format!("-{exact}")
    } else {
        exact
    })
}

/// A lone surrogate refusal that quotes the escape as the input writes it (serde_json's own
/// words, such as "unexpected end of hex escape", do not say what is wrong).
fn surrogate_error(input: &[u8], error: JsonError) -> JsonError {
    let (Some(line), Some(column)) = (error.line(), error.column()) else {
        return error;
    };
    // serde_json stops inside or right after the escape: look a little further
    let upto = offset_of(input, line, column)
        .saturating_add(6)
        .min(input.len());
    let Some((at, unit)) = last_surrogate_escape(&input[..upto]) else {
        return error;
    };
    let escape = |at: usize| std::str::from_utf8(&input[at..at + 6]).unwrap_or("");
    let message = if (0xdc00..=0xdfff).contains(&unit) {
        format!(
            "lone surrogate escape {}: a low surrogate \\uDC00-\\uDFFF with no high one \
             before it; a string's escapes spell Unicode characters (a high surrogate \
             \\uD800-\\uDBFF followed by a low one, or any other character)",
            escape(at)
        )
    } else {
        let next = input
            .get(at + 6..at + 12)
            .filter(|e| e.starts_with(b"\\u") && e[2..].iter().all(u8::is_ascii_hexdigit))
            .map(|_| {
                format!(
                    ", followed by {} and not by a low surrogate",
                    escape(at + 6)
                )
            })
            .unwrap_or_else(|| ", not followed by a low surrogate escape".into());
        format!(
            "lone surrogate escape {}{next}: a high surrogate \\uD800-\\uDBFF is followed \
             by a low one \\uDC00-\\uDFFF; a string's escapes spell Unicode characters",
            escape(at)
        )
    };
    JsonError::new(error.kind(), error.path().to_owned(), message).at(line, column)
}

/// Where the last whole `\uD800`-`\uDFFF` escape of `before` starts, and its code unit.
fn last_surrogate_escape(before: &[u8]) -> Option<(usize, u32)> {
    let mut end = before.len();
    while let Some(p) = before[..end].windows(2).rposition(|w| w == b"\\u") {
        // an escaped backslash before the u is not an escape: count the backslashes
        let slashes = before[..=p]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if slashes % 2 == 1 {
            if let Some(unit) = before
                .get(p + 2..p + 6)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .filter(|u| (0xd800..=0xdfff).contains(u))
            {
                return Some((p, unit));
            }
        }
        end = p;
    }
    None
}

/// The byte offset of a 1-based line and byte column.
fn offset_of(input: &[u8], line: usize, column: usize) -> usize {
    let start = if line <= 1 {
        0
    } else {
        memchr_nth_newline(input, line - 1).map_or(input.len(), |p| p + 1)
    };
    start + column.saturating_sub(1)
}

/// The position of the `n`th (1-based) line feed.
fn memchr_nth_newline(input: &[u8], n: usize) -> Option<usize> {
    input
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(n - 1)
        .map(|(i, _)| i)
}

/// The 1-based line and byte column of `offset` in `input`.
fn line_column(input: &[u8], offset: usize) -> (usize, usize) {
    let before = &input[..offset];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (line, offset - line_start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: crate contract (plain serde_json): without `preserve_order`, Map
    // is a BTreeMap, so `Value` equality ignores key order as tests assume.
    #[test]
    fn serde_json_has_no_preserve_order() {
        let mut map = Map::new();
        map.insert("b".into(), Value::Null);
        map.insert("a".into(), Value::Null);
        let keys: Vec<&String> = map.keys().collect();
        assert_eq!(keys, ["a", "b"]);
    }

    // rule: WIRE-31 (plain serde_json): without `arbitrary_precision`,
    // serde_json itself refuses 1e400 instead of keeping it as text.
    #[test]
    fn serde_json_has_no_arbitrary_precision() {
        assert!(serde_json::from_str::<Value>("1e400").is_err());
    }

    // rule: WIRE-24 (never rounded): literal classification
    #[test]
    fn rounded_integer_literals() {
        assert_eq!(rounded_integer_literal("18446744073709551615"), None); // u64::MAX
        assert_eq!(rounded_integer_literal("-9223372036854775808"), None); // i64::MIN
        assert_eq!(rounded_integer_literal("18446744073709551616"), None); // 2^64 exact
        assert_eq!(rounded_integer_literal("100000000000000000000"), None); // 1e20 exact
        assert_eq!(rounded_integer_literal("123456789012345680000"), None); // shortest form
        assert_eq!(
            rounded_integer_literal("18446744073709551617").as_deref(),
            Some("18446744073709551616")
        );
        assert_eq!(
            rounded_integer_literal("-9223372036854775809").as_deref(),
            Some("-9223372036854775808")
        );
        assert_eq!(rounded_integer_literal("1.5"), None);
        assert_eq!(rounded_integer_literal("1e30"), None);
    }

    // rule: crate contract (errors give line/column)
    #[test]
    fn line_column_counts_bytes_from_one() {
        assert_eq!(line_column(b"ab\ncd", 0), (1, 1));
        assert_eq!(line_column(b"ab\ncd", 4), (2, 2));
    }
}

//! Canonical JSON and RFC 8785 (JCS) writers.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use crate::error::{format_path, JsonError, JsonErrorKind, Segment};

/// Writes the project's canonical JSON text of `value` (WIRE-17).
///
/// This is not RFC 8785 (see [`jcs`]); it is what Python's
/// `json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))`
/// writes, except for floats:
///
/// - object keys sorted by Unicode code point (the byte order of their UTF-8);
/// - separators `,` and `:` with no whitespace;
/// - strings escaped by [`write_python_ascii_string`], so the output is ASCII;
/// - integers held as integers (i64/u64) written exactly: 2**60 is
///   `1152921504606846976` (WIRE-26);
/// - floats in the ECMAScript shortest round-trip form (as in [`jcs`]): a
///   float with a zero fraction within ±2^53 therefore prints as an integer
///   (`1.0` as `1`), and `-0.0` prints as `0`.
///
/// [`crate::parse`] reads the output back to an equal value, except that
/// floats with a zero fraction come back as integers.
///
/// ```
/// use serde_json::json;
///
/// let v = json!({"b": [1.0, 1152921504606846976u64], "a": "é/😀"});
/// assert_eq!(
///     dogana_json::canonical(&v),
///     r#"{"a":"\u00e9/\ud83d\ude00","b":[1,1152921504606846976]}"#
/// );
/// ```
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(&mut out, value);
    out
}

fn write_canonical(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                write!(out, "{u}").expect("writing to a String");
            } else if let Some(i) = n.as_i64() {
                write!(out, "{i}").expect("writing to a String");
            } else {
                write_ecmascript_number(out, number_as_f64(n));
            }
        }
        Value::String(s) => write_python_ascii_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(out, item);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut entries: Vec<(&String, &Value)> = members.iter().collect();
            // Byte order of UTF-8 is code-point order.
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_python_ascii_string(out, key);
                out.push(':');
                write_canonical(out, item);
            }
            out.push('}');
        }
    }
}

/// Appends `s` as a JSON string literal, escaped exactly as Python's
/// `json.dumps(s, ensure_ascii=True)` does.
///
/// `"` and `\` are escaped as `\"` and `\\`; backspace, form feed, newline,
/// carriage return and tab as `\b`, `\f`, `\n`, `\r`, `\t`; every other
/// character outside `0x20..=0x7E` (other control characters, DEL and all
/// non-ASCII) as `\u` with four lowercase hex digits, characters beyond the
/// BMP as a UTF-16 surrogate pair. `/` is not escaped. The output is ASCII.
///
/// ```
/// let mut out = String::new();
/// dogana_json::write_python_ascii_string(&mut out, "é\u{7f}😀/\n");
/// assert_eq!(out, r#""\u00e9\u007f\ud83d\ude00/\n""#);
/// ```
pub fn write_python_ascii_string(out: &mut String, s: &str) {
    out.push('"');
    let mut plain_from = 0;
    for (at, c) in s.char_indices() {
        let short = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            ' '..='~' => continue,
            _ => "",
        };
        out.push_str(&s[plain_from..at]);
        plain_from = at + c.len_utf8();
        if short.is_empty() {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(out, "\\u{unit:04x}").expect("writing to a String");
            }
        } else {
            out.push_str(short);
        }
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

/// Serializes `value` by RFC 8785, the JSON Canonicalization Scheme (WIRE-18, WIRE-22, WIRE-23).
///
/// - UTF-8 output; strings escape only `"` and `\` (as `\"`, `\\`), the
///   controls `\b \f \n \r \t`, and other characters below U+0020 as `\u00xx`
///   (lowercase hex);
/// - object keys sorted by their UTF-16 code units, not code points
///   (`"\u{1F600}"` sorts before `"\u{FF61}"`);
/// - every number is converted to binary64 and printed as ECMAScript's
///   `Number.prototype.toString` (shortest round trip): `1.0` as `1`, `1e21`
///   as `1e+21`, `-0` as `0`.
///
/// This function never fails: an integer that binary64 cannot hold exactly
/// (such as 9007199254740993) is rounded to the nearest binary64, ties to
/// even, as `JSON.parse` would. Identity computations must use
/// [`jcs_checked`], which refuses such integers (WIRE-24); use `jcs` only on
/// values already checked.
///
/// ```
/// use serde_json::json;
///
/// let v = json!({"\u{FF61}": 1, "\u{1F600}": [1.0, 1e21, 1152921504606846976u64]});
/// let out = dogana_json::jcs(&v);
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     "{\"\u{1F600}\":[1,1e+21,1152921504606847000],\"\u{FF61}\":1}"
/// );
/// ```
pub fn jcs(value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_jcs(&mut out, value);
    out.into_bytes()
}

/// Like [`jcs`], but refuses any integer that is not exactly representable
/// as binary64, so that no number is silently rounded (WIRE-24).
///
/// The error's path names the offending integer. Integers held as floats
/// are binary64 already and always pass; large exact integers pass too
/// (2**60 is written `1152921504606847000`, WIRE-26).
///
/// ```
/// use serde_json::json;
///
/// let err = dogana_json::jcs_checked(&json!({"key": [9007199254740993u64]})).unwrap_err();
/// assert_eq!(err.path(), "$.key[0]");
/// assert_eq!(dogana_json::jcs_checked(&json!(9007199254740992u64)).unwrap(), b"9007199254740992");
/// ```
pub fn jcs_checked(value: &Value) -> Result<Vec<u8>, JsonError> {
    check_exact_integers(value, &mut Vec::new())?;
    Ok(jcs(value))
}

fn check_exact_integers(value: &Value, path: &mut Vec<Segment>) -> Result<(), JsonError> {
    match value {
        Value::Number(n) => {
            let exact = if let Some(u) = n.as_u64() {
                u as f64 as i128 == i128::from(u)
            } else if let Some(i) = n.as_i64() {
                i as f64 as i128 == i128::from(i)
            } else {
                true
            };
            if !exact {
                return Err(JsonError::new(
                    JsonErrorKind::InexactInteger,
                    format_path(path),
                    format!(
                        "integer {n} is not exactly representable as binary64 \
                         (it would be rounded to {:.0})",
                        number_as_f64(n)
                    ),
                ));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Segment::Index(i));
                check_exact_integers(item, path)?;
                path.pop();
            }
        }
        Value::Object(members) => {
            for (key, item) in members {
                path.push(Segment::Key(key.clone()));
                check_exact_integers(item, path)?;
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
    Ok(())
}

fn write_jcs(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_ecmascript_number(out, number_as_f64(n)),
        Value::String(s) => write_jcs_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_jcs(out, item);
            }
            out.push(']');
        }
        Value::Object(members) => write_jcs_object(out, members),
    }
}

fn write_jcs_object(out: &mut String, members: &Map<String, Value>) {
    let mut entries: Vec<(&String, &Value)> = members.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
    out.push('{');
    for (i, (key, item)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_jcs_string(out, key);
        out.push(':');
        write_jcs(out, item);
    }
    out.push('}');
}

/// Appends `s` as an RFC 8785 string: UTF-8, with only `"`, `\\` and control characters
/// escaped. For writers that stream a canonical form without building a [`Value`].
///
/// ```
/// let mut out = String::new();
/// dogana_json::write_jcs_string(&mut out, "é\n");
/// assert_eq!(out, "\"é\\n\"");
/// ```
pub fn write_jcs_string(out: &mut String, s: &str) {
    out.push('"');
    let mut plain_from = 0;
    for (at, c) in s.char_indices() {
        let short = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            '\0'..='\u{1f}' => "",
            _ => continue,
        };
        out.push_str(&s[plain_from..at]);
        plain_from = at + 1;
        if short.is_empty() {
            write!(out, "\\u{:04x}", u32::from(c)).expect("writing to a String");
        } else {
            out.push_str(short);
        }
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

/// The binary64 value of a number; integers are rounded to nearest, ties to even.
fn number_as_f64(n: &Number) -> f64 {
    // Without arbitrary_precision, as_f64 is always Some: u64/i64 convert with `as`.
    n.as_f64().unwrap_or(f64::NAN)
}

/// Appends a finite binary64 as ECMAScript's `Number.prototype.toString` writes it (shortest
/// round trip, `-0` as `0`): how both [`canonical`] and [`jcs`] write a float, and how [`jcs`]
/// writes every number. For writers that stream a canonical form without building a [`Value`].
///
/// ```
/// let mut out = String::new();
/// for f in [1.0, 0.1, 1e21, -0.0] {
///     dogana_json::write_ecmascript_number(&mut out, f);
///     out.push(' ');
/// }
/// assert_eq!(out, "1 0.1 1e+21 0 ");
/// ```
pub fn write_ecmascript_number(out: &mut String, f: f64) {
    if f == 0.0 {
        out.push('0');
    } else {
        out.push_str(ryu_js::Buffer::new().format(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: WIRE-23 (-0 as 0)
    #[test]
    fn negative_zero_is_zero() {
        let mut out = String::new();
        write_ecmascript_number(&mut out, -0.0);
        assert_eq!(out, "0");
    }

    // rule: WIRE-22 (JCS escapes only what RFC 8785 requires)
    #[test]
    fn jcs_string_escapes() {
        let mut out = String::new();
        write_jcs_string(&mut out, "a\"\\\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}é😀/");
        assert_eq!(out, "\"a\\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\u{7f}é😀/\"");
    }
}

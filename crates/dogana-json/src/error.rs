//! The error type of this crate and the JSON paths it names.

use std::fmt;

/// What kind of problem a [`JsonError`] reports.
///
/// Callers that map [`JsonError`] into their own error type can branch on this
/// instead of parsing [`JsonError::message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The input is not valid UTF-8.
    InvalidUtf8,
    /// The input is not JSON (RFC 8259 grammar), including an input that ends early.
    Syntax,
    /// A complete JSON value is followed by more non-whitespace content.
    TrailingContent,
    /// An object has the same key twice.
    DuplicateKey,
    /// A string holds an unpaired UTF-16 surrogate escape such as `"\ud800"`.
    LoneSurrogate,
    /// Arrays and objects are nested deeper than [`crate::MAX_DEPTH`].
    TooDeep,
    /// A number is too large for binary64 (such as `1e400`) or is not finite.
    NumberOutOfRange,
    /// An integer cannot be carried exactly: in [`crate::parse`], an integer
    /// literal outside the 64-bit range that binary64 would round; in
    /// [`crate::jcs_checked`], an integer that is not exactly a binary64 value.
    InexactInteger,
}

/// An error that names where in the JSON document it happened and what is wrong.
///
/// The path uses the JSONPath-like notation `$` (the whole document), `.name`
/// for an object member whose key is an identifier, `["any key"]` for other
/// keys (written with ASCII escapes) and `[3]` for an array element, as in
/// `$.regions[3].low`.
///
/// ```
/// let err = dogana_json::parse(br#"{"regions":[{"low":1,"low":2}]}"#).unwrap_err();
/// assert_eq!(err.path(), "$.regions[0].low");
/// assert_eq!(err.kind(), dogana_json::JsonErrorKind::DuplicateKey);
/// assert!(err.message().contains("duplicate"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    kind: JsonErrorKind,
    path: String,
    message: String,
    line: Option<usize>,
    column: Option<usize>,
}

impl JsonError {
    pub(crate) fn new(kind: JsonErrorKind, path: String, message: impl Into<String>) -> Self {
        JsonError {
            kind,
            path,
            message: message.into(),
            line: None,
            column: None,
        }
    }

    pub(crate) fn at(mut self, line: usize, column: usize) -> Self {
        if line > 0 {
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }

    /// The kind of problem.
    pub fn kind(&self) -> JsonErrorKind {
        self.kind
    }

    /// The JSON path of the offending place, such as `$.regions[3].low`; `$` is
    /// the whole document.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong, without the path or position (for example
    /// `duplicate object key "low"`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The 1-based line of the input where the problem was found, for errors
    /// raised while parsing.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The 1-based column (in bytes) of the input where the problem was found,
    /// for errors raised while parsing.
    pub fn column(&self) -> Option<usize> {
        self.column
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.message, self.path)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " (line {line}, column {column})")?;
        }
        Ok(())
    }
}

impl std::error::Error for JsonError {}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// An array element.
    Index(usize),
    /// An object member.
    Key(String),
    /// Inside an object, before its next key is known (shown as the object).
    PendingKey,
}

/// Formats a path such as `$.regions[3].low` from its segments.
pub(crate) fn format_path(segments: &[Segment]) -> String {
    let mut out = String::from("$");
    for segment in segments {
        match segment {
            Segment::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
            Segment::Key(key) if is_identifier(key) && key.len() <= crate::SHOWN => {
                out.push('.');
                out.push_str(key);
            }
            Segment::Key(key) => {
                out.push('[');
                write_key(&mut out, key);
                out.push(']');
            }
            Segment::PendingKey => {}
        }
    }
    out
}

/// A key in a path or a message: with ASCII escapes, and, when longer than
/// [`SHOWN`](crate::SHOWN) characters, cut as [`quoted`](crate::quoted) cuts it, so that a
/// 50 MB key gives a short error.
pub(crate) fn write_key(out: &mut String, key: &str) {
    if key.char_indices().nth(crate::SHOWN).is_some() {
        out.push_str(&crate::quoted(key, crate::SHOWN));
    } else {
        crate::write::write_python_ascii_string(out, key);
    }
}

fn is_identifier(key: &str) -> bool {
    let mut bytes = key.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'A'..=b'Z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: crate contract (errors name the JSON path): path notation
    #[test]
    fn path_notation() {
        let segments = [
            Segment::Key("regions".into()),
            Segment::Index(3),
            Segment::Key("low".into()),
            Segment::Key("a b".into()),
            Segment::Key("é\"".into()),
            Segment::Key("1x".into()),
            Segment::PendingKey,
        ];
        assert_eq!(
            format_path(&segments),
            r#"$.regions[3].low["a b"]["\u00e9\""]["1x"]"#
        );
        assert_eq!(format_path(&[]), "$");
    }

    // rule: crate contract (errors name the JSON path): Display
    #[test]
    fn display() {
        let err = JsonError::new(JsonErrorKind::Syntax, "$.a".into(), "expected value").at(2, 5);
        assert_eq!(err.to_string(), "expected value at $.a (line 2, column 5)");
        let err = JsonError::new(JsonErrorKind::InexactInteger, "$[0]".into(), "inexact");
        assert_eq!(err.to_string(), "inexact at $[0]");
        assert_eq!(err.line(), None);
    }
}

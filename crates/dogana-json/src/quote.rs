//! Quoting a value someone else wrote, for a message or a check's detail: the value is shown,
//! escaped and cut to a fixed length, so that its size never becomes the message's size.

use std::fmt;

/// How many characters of a value messages show unless they say otherwise.
pub const SHOWN: usize = 64;

/// `value` as Rust's `{:?}` quotes a string (control characters, escape sequences and line
/// breaks escaped, so the text cannot act on a terminal), cut after `max` characters. A cut
/// value ends with `…` inside its quotes and is followed by its full length in bytes:
///
/// ```
/// use dogana_json::quoted;
/// assert_eq!(quoted("orders", 64), "\"orders\"");
/// assert_eq!(quoted("a\nb\u{1b}[2J", 64), "\"a\\nb\\u{1b}[2J\"");
/// assert_eq!(quoted(&"a".repeat(52_428_800), 4), "\"aaaa…\" (52428800 bytes)");
/// ```
///
/// A value of at most `max` characters is exactly `format!("{value:?}")`, so replacing that
/// format with this function changes no message (nor any identity) for such values.
pub fn quoted(value: &str, max: usize) -> String {
    Quoted::new(value, max).to_string()
}

/// [`quoted`] for bytes that may not be UTF-8 (a field of a delivered file): invalid sequences
/// are shown as U+FFFD, and only the first bytes are ever decoded, so a 200 MB field costs
/// nothing more than a short one. The length shown is the bytes'.
///
/// ```
/// use dogana_json::quoted_bytes;
/// assert_eq!(quoted_bytes(b"caf\xc3\xa9", 64), "\"café\"");
/// assert_eq!(quoted_bytes(b"ab\xffcd", 3), "\"ab\u{fffd}…\" (5 bytes)");
/// ```
pub fn quoted_bytes(bytes: &[u8], max: usize) -> String {
    // a character is at most four bytes: the first 4 * (max + 1) bytes hold the shown ones
    let head = &bytes[..bytes.len().min(max.saturating_add(1).saturating_mul(4))];
    let text = String::from_utf8_lossy(head);
    let q = Quoted::new(&text, max);
    match q.cut {
        Some(_) => Quoted {
            len: bytes.len(),
            ..q
        }
        .to_string(),
        // the head is the whole value, or it holds more than `max` characters (then cut)
        None if head.len() == bytes.len() => q.to_string(),
        None => Quoted {
            cut: Some(text.len()),
            len: bytes.len(),
            ..q
        }
        .to_string(),
    }
}

/// Digits (a number as written) for a message: as they are, or the first [`SHOWN`] of them
/// and how many there are.
pub(crate) fn digits(token: &str) -> String {
    match token.char_indices().nth(SHOWN) {
        None => token.to_owned(),
        Some((at, _)) => format!("{}… ({} characters)", &token[..at], token.len()),
    }
}

/// The [`Display`](fmt::Display) form of [`quoted`], to write into a message without an
/// intermediate string.
///
/// ```
/// use dogana_json::Quoted;
/// assert_eq!(format!("table {}", Quoted::new("orders", 64)), "table \"orders\"");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'a> {
    value: &'a str,
    /// where the shown part ends, when the value is cut
    cut: Option<usize>,
    /// the value's length in bytes
    len: usize,
}

impl<'a> Quoted<'a> {
    /// `value`, to be shown cut after `max` characters.
    pub fn new(value: &'a str, max: usize) -> Quoted<'a> {
        Quoted {
            value,
            cut: value.char_indices().nth(max).map(|(i, _)| i),
            len: value.len(),
        }
    }
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cut {
            None => write!(f, "{:?}", self.value),
            Some(at) => {
                let shown = format!("{:?}", &self.value[..at]);
                // the closing quote after the ellipsis
                write!(f, "{}…\" ({} bytes)", &shown[..shown.len() - 1], self.len)
            }
        }
    }
}

/// Text someone else wrote (a table or shape name, a source, a check's detail), made safe to
/// show on a terminal, in a log or on a page: shown, never acted on. Control characters (C0,
/// DEL and C1, so every escape sequence's introducer), line breaks and the Unicode controls
/// that reorder or hide text (bidirectional overrides and isolates, the line and paragraph
/// separators) are written as Rust escapes (`\n`, `\t`, `\r`, `\u{1b}`); everything else is
/// kept, so text without such characters is returned unchanged. Unlike [`quoted`], nothing
/// is cut and no quotes are added.
///
/// ```
/// use dogana_json::shown;
/// assert_eq!(shown("orders"), "orders");
/// assert_eq!(shown("a\nreplayed: forged\u{1b}[2J"), "a\\nreplayed: forged\\u{1b}[2J");
/// assert_eq!(shown("abc\u{202e}fed"), "abc\\u{202e}fed");
/// ```
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether a character must not reach a terminal, a log or a page as itself: a control
/// character, a line or paragraph separator, or a bidirectional control ([`shown`]).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: TRUST-07 (a receiver bounds what a sender makes it store): any value is shown in
    // a bounded number of bytes
    #[test]
    fn the_shown_length_is_bounded() {
        for value in [
            "x".repeat(10_000),
            "é".repeat(10_000),
            "\u{1b}".repeat(10_000),
            "\u{1F600}".repeat(10_000),
        ] {
            let q = quoted(&value, 16);
            // at most 16 escaped characters (10 bytes each at most), quotes, ellipsis, length
            assert!(q.len() <= 16 * 10 + 40, "{q}");
            assert!(q.ends_with(&format!("({} bytes)", value.len())), "{q}");
            let b = quoted_bytes(value.as_bytes(), 16);
            assert_eq!(b, q);
        }
    }

    #[test]
    fn a_short_value_is_its_debug_form() {
        for value in ["", "orders", "a\"b\\c", "é\u{0}\u{7f}", &"y".repeat(64)] {
            assert_eq!(quoted(value, 64), format!("{value:?}"));
            assert_eq!(quoted_bytes(value.as_bytes(), 64), format!("{value:?}"));
        }
        assert_eq!(
            quoted(&"y".repeat(65), 64),
            format!("\"{}…\" (65 bytes)", "y".repeat(64))
        );
    }

    #[test]
    fn bytes_that_are_not_utf8() {
        assert_eq!(quoted_bytes(b"\xff\xfe", 64), "\"\u{fffd}\u{fffd}\"");
        // a cut inside a multibyte character: decoded lossily, still cut and measured
        let mut v = vec![b'a'; 7];
        v.extend_from_slice("é".as_bytes());
        v.extend(std::iter::repeat_n(b'b', 100));
        assert_eq!(quoted_bytes(&v, 8), "\"aaaaaaaé…\" (109 bytes)");
        assert_eq!(quoted_bytes(&[0xc3], 0), "\"…\" (1 bytes)");
    }
}

//! A ledger document read in one pass over its bytes, without building a JSON tree.
//!
//! A ledger of 100,000 regions is a 24 MB document, and its `serde_json::Value` tree holds
//! about 25 small allocations per region: most of the time and memory `dogana claims` spent.
//! This reader builds the ledger straight from the bytes, through the same constructors
//! ([`Region::new`], the incremental [`Parts`] of `Ledger::from_parts`).
//!
//! It is only ever an accelerator for the strict reader in `decode.rs`: it accepts a document
//! only if that reader would accept it and give the same ledger, and it gives up (`None`) on
//! anything it is not sure of, valid or not — a refusal of any kind, a key or a number it does
//! not spell the canonical way, fields out of the canonical order where it matters. The caller
//! then reads the document the general way, which gives the result or the error with its
//! message. So the checks here need not say why; they only need to be at least as strict.
//!
//! What it accepts: one JSON object, ASCII whitespace anywhere JSON allows it, keys without
//! escapes, each at most once; integers spelled as plain integer literals within
//! ±(2^53-1) (no fraction, no exponent, no `-0`); strings with any escape except a lone
//! surrogate; the contract (an ordinary JSON value, read by the strict parser) before the
//! regions.

use serde_json::Value as Json;

use super::FromWire;
use crate::contract::{is_sha256_hex, Contract};
use crate::ledger::{Ledger, Parts, Region};
use crate::manifest::Position;
use crate::time::{Date, Timestamp};
use crate::value::Value;

/// Gives up: the general reader decides.
struct GiveUp;

type Fast<T> = Result<T, GiveUp>;

/// Reads a ledger document, or `None` when the general reader must.
pub(crate) fn ledger(bytes: &[u8]) -> Option<Ledger> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut r = Reader { text, at: 0 };
    let ledger = r.ledger().ok()?;
    r.ws();
    (r.at == text.len()).then_some(ledger)
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

/// The fields of a region, as bits of a set.
const REGION_FIELDS: [&str; 8] = [
    "version",
    "kind",
    "low",
    "high",
    "low_open",
    "high_open",
    "complete_as_of",
    "deletions_as_of",
];

impl<'a> Reader<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    /// JSON whitespace.
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// The byte `b`, after whitespace.
    fn eat(&mut self, b: u8) -> Fast<()> {
        self.ws();
        if self.peek() == Some(b) {
            self.at += 1;
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// After whitespace, `b` if it is next.
    fn eat_if(&mut self, b: u8) -> bool {
        self.ws();
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn literal(&mut self, word: &str) -> bool {
        self.ws();
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    /// A key without escapes, and its colon.
    fn key(&mut self) -> Fast<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let end = start
            + self.bytes()[start..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or(GiveUp)?;
        if self.bytes()[end] != b'"' {
            return Err(GiveUp);
        }
        self.at = end + 1;
        self.eat(b':')?;
        Ok(&self.text[start..end])
    }

    /// The members of an object: `each` reads the value of every key; duplicates give up
    /// through `seen`, a set of the indices `index` gives.
    fn object(
        &mut self,
        index: impl Fn(&str) -> Option<usize>,
        mut each: impl FnMut(&mut Self, usize) -> Fast<()>,
    ) -> Fast<u32> {
        self.eat(b'{')?;
        let mut seen = 0u32;
        if self.eat_if(b'}') {
            return Ok(seen);
        }
        loop {
            let i = index(self.key()?).ok_or(GiveUp)?;
            if seen & (1 << i) != 0 {
                return Err(GiveUp);
            }
            seen |= 1 << i;
            each(self, i)?;
            if self.eat_if(b'}') {
                return Ok(seen);
            }
            self.eat(b',')?;
        }
    }

    /// A string, its escapes decoded.
    fn string(&mut self) -> Fast<String> {
        self.eat(b'"')?;
        let mut out = String::new();
        loop {
            let start = self.at;
            let run = self.bytes()[start..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or(GiveUp)?;
            out.push_str(&self.text[start..start + run]);
            self.at = start + run;
            match self.bytes()[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.at += 1;
                    let c = match self.peek().ok_or(GiveUp)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            self.at += 1;
                            let unit = self.hex4()?;
                            let c = match unit {
                                0xD800..=0xDBFF => {
                                    if !self.text[self.at..].starts_with("\\u") {
                                        return Err(GiveUp);
                                    }
                                    self.at += 2;
                                    let low = self.hex4()?;
                                    if !(0xDC00..=0xDFFF).contains(&low) {
                                        return Err(GiveUp);
                                    }
                                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                                }
                                0xDC00..=0xDFFF => return Err(GiveUp),
                                _ => unit,
                            };
                            out.push(char::from_u32(c).ok_or(GiveUp)?);
                            continue;
                        }
                        _ => return Err(GiveUp),
                    };
                    self.at += 1;
                    out.push(c);
                }
                // A raw control character.
                _ => return Err(GiveUp),
            }
        }
    }

    fn hex4(&mut self) -> Fast<u32> {
        let digits = self.text.get(self.at..self.at + 4).ok_or(GiveUp)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GiveUp);
        }
        self.at += 4;
        u32::from_str_radix(digits, 16).map_err(|_| GiveUp)
    }

    /// An integer literal within the protocol's range, ±(2^53-1).
    fn integer(&mut self) -> Fast<i64> {
        self.ws();
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let digits = self.bytes()[self.at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        // No leading zero, no `-0`, at most 16 digits; and no fraction or exponent after.
        let first = self.peek();
        if digits == 0 || digits > 16 || (first == Some(b'0') && (digits > 1 || negative)) {
            return Err(GiveUp);
        }
        self.at += digits;
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return Err(GiveUp);
        }
        let n: i64 = self.text[start..self.at].parse().map_err(|_| GiveUp)?;
        if !(Value::INT_MIN..=Value::INT_MAX).contains(&n) {
            return Err(GiveUp);
        }
        Ok(n)
    }

    fn boolean(&mut self) -> Fast<bool> {
        if self.literal("true") {
            Ok(true)
        } else if self.literal("false") {
            Ok(false)
        } else {
            Err(GiveUp)
        }
    }

    /// `null`, or what `read` reads.
    fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Fast<T>) -> Fast<Option<T>> {
        if self.literal("null") {
            Ok(None)
        } else {
            read(self).map(Some)
        }
    }

    /// `"version": 4` as the only spelling.
    fn version(&mut self) -> Fast<()> {
        match self.integer()? {
            4 => Ok(()),
            _ => Err(GiveUp),
        }
    }

    /// A tag object `{"$date": "..."}` or `{"$datetime": "..."}`: its tag and text.
    fn tag(&mut self) -> Fast<(&'a str, String)> {
        self.eat(b'{')?;
        let name = self.key()?;
        let text = self.string()?;
        self.eat(b'}')?;
        Ok((name, text))
    }

    fn datetime(&mut self) -> Fast<Timestamp> {
        match self.tag()? {
            ("$datetime", text) => text.parse().map_err(|_| GiveUp),
            _ => Err(GiveUp),
        }
    }

    /// A key or bound value: an integer, a string, a `$date` or a `$datetime` tag.
    fn value(&mut self) -> Fast<Value> {
        self.ws();
        match self.peek() {
            Some(b'"') => self.string().map(Value::Str),
            Some(b'{') => match self.tag()? {
                ("$date", text) => text.parse::<Date>().map(Value::Date).map_err(|_| GiveUp),
                ("$datetime", text) => text
                    .parse::<Timestamp>()
                    .map(Value::Datetime)
                    .map_err(|_| GiveUp),
                _ => Err(GiveUp),
            },
            _ => self.integer().map(Value::Int),
        }
    }

    /// A JSON value skipped, strings and brackets matched; what it is, the strict parser
    /// decides. Deep nesting gives up, well within the parser's limit.
    fn skip_value(&mut self) -> Fast<()> {
        let mut depth = 0usize;
        loop {
            self.ws();
            match self.peek().ok_or(GiveUp)? {
                b'{' | b'[' => {
                    depth += 1;
                    if depth > 64 {
                        return Err(GiveUp);
                    }
                    self.at += 1;
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1).ok_or(GiveUp)?;
                    self.at += 1;
                }
                b'"' => {
                    self.string()?;
                }
                b',' | b':' if depth > 0 => self.at += 1,
                _ => {
                    let run = self.bytes()[self.at..]
                        .iter()
                        .take_while(|b| {
                            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
                        })
                        .count();
                    if run == 0 {
                        return Err(GiveUp);
                    }
                    self.at += run;
                }
            }
            if depth == 0 {
                return Ok(());
            }
        }
    }

    fn region(&mut self) -> Fast<Region> {
        let (mut low, mut high) = (None, None);
        let (mut low_open, mut high_open) = (false, false);
        let (mut complete, mut deletions) = (None, None);
        let seen = self.object(
            |k| REGION_FIELDS.iter().position(|f| *f == k),
            |r, i| {
                match i {
                    0 => r.version()?,
                    1 => {
                        if r.string()? != "Region" {
                            return Err(GiveUp);
                        }
                    }
                    2 => low = r.nullable(Self::value)?,
                    3 => high = r.nullable(Self::value)?,
                    4 => low_open = r.boolean()?,
                    5 => high_open = r.boolean()?,
                    6 => complete = r.nullable(Self::datetime)?,
                    _ => deletions = r.nullable(Self::datetime)?,
                }
                Ok(())
            },
        )?;
        if seen != (1 << REGION_FIELDS.len()) - 1 {
            return Err(GiveUp);
        }
        // The checks of `Region::from_value` before its constructor.
        if let (Some(l), Some(h)) = (&low, &high) {
            if l.logical_type() != h.logical_type() || l > h || (l == h && (low_open || high_open))
            {
                return Err(GiveUp);
            }
        }
        Region::new(low, high, low_open, high_open, complete, deletions).map_err(|_| GiveUp)
    }

    fn ledger(&mut self) -> Fast<Ledger> {
        const FIELDS: [&str; 6] = [
            "version",
            "kind",
            "contract",
            "regions",
            "generation",
            "publication_id",
        ];
        let mut parts: Option<Parts> = None;
        let mut generation = None;
        let mut publication_id = None;
        let seen = self.object(
            |k| FIELDS.iter().position(|f| *f == k),
            |r, i| {
                match i {
                    0 => r.version()?,
                    1 => {
                        if r.string()? != "Ledger" {
                            return Err(GiveUp);
                        }
                    }
                    2 => {
                        r.ws();
                        let start = r.at;
                        r.skip_value()?;
                        let value: Json =
                            dogana_json::parse(&r.bytes()[start..r.at]).map_err(|_| GiveUp)?;
                        parts = Some(Parts::new(
                            Contract::from_value(&value).map_err(|_| GiveUp)?,
                        ));
                    }
                    3 => {
                        // The regions need the contract's window type: it comes first.
                        let parts = parts.as_mut().ok_or(GiveUp)?;
                        r.eat(b'[')?;
                        if !r.eat_if(b']') {
                            loop {
                                let region = r.region()?;
                                parts.push(region).map_err(|_| GiveUp)?;
                                if r.eat_if(b']') {
                                    break;
                                }
                                r.eat(b',')?;
                            }
                        }
                    }
                    4 => {
                        generation = r.nullable(|r| {
                            r.ws();
                            match r.peek() {
                                Some(b'"') => match r.string()? {
                                    t if t.is_empty() => Err(GiveUp),
                                    t => Ok(Position::Token(t)),
                                },
                                _ => r.integer().map(Position::Sequence),
                            }
                        })?
                    }
                    _ => {
                        publication_id = r.nullable(|r| match r.string()? {
                            p if is_sha256_hex(&p) => Ok(p),
                            _ => Err(GiveUp),
                        })?
                    }
                }
                Ok(())
            },
        )?;
        if seen != (1 << FIELDS.len()) - 1 {
            return Err(GiveUp);
        }
        parts
            .ok_or(GiveUp)?
            .finish(generation, publication_id)
            .map_err(|_| GiveUp)
    }
}

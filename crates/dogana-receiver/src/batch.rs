//! Staged values on their way from the parsing thread to the backend's: a [`Batch`] of rows
//! and tombstones, its text in one arena, and [`Datum`], an owned value read back.

use std::fmt;
use std::fmt::Write as _;

use dogana::{Date, Timestamp, Value};
use dogana_rows::Cell;

/// A value as a backend stores or returns it.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A binary64 number.
    Real(f64),
    /// A boolean.
    Bool(bool),
    /// Text.
    Text(String),
    /// A calendar date.
    Date(Date),
    /// A UTC instant.
    Datetime(Timestamp),
}

impl Datum {
    /// A protocol value (a window bound) as a datum: dates and datetimes as text when the
    /// backend stores them as text.
    pub fn of_value(v: &Value, text_times: bool) -> Datum {
        match v {
            Value::Int(i) => Datum::Int(*i),
            Value::Str(s) => Datum::Text(s.clone()),
            Value::Date(d) if text_times => Datum::Text(d.to_string()),
            Value::Datetime(t) if text_times => Datum::Text(t.to_string()),
            Value::Date(d) => Datum::Date(*d),
            Value::Datetime(t) => Datum::Datetime(*t),
        }
    }

    /// The value as text, as a reader would compare it (None for NULL): integers and reals in
    /// Rust's shortest form, booleans `1`/`0` (SQLite keeps them as integers), dates and
    /// datetimes in the protocol's form.
    pub fn render(&self) -> Option<String> {
        Some(match self {
            Datum::Null => return None,
            Datum::Int(i) => i.to_string(),
            Datum::Real(x) => x.to_string(),
            Datum::Bool(b) => i64::from(*b).to_string(),
            Datum::Text(s) => s.clone(),
            Datum::Date(d) => d.to_string(),
            Datum::Datetime(t) => t.to_string(),
        })
    }
}

impl Datum {
    /// Two values of one kind compared (None: incomparable kinds, or NULL); an integer and
    /// a real compare as reals. What a backend that filters rows itself (the lake, Delta)
    /// orders values by.
    ///
    /// ```
    /// use dogana_receiver::Datum;
    /// use std::cmp::Ordering;
    /// assert_eq!(Datum::Int(2).compare(&Datum::Real(2.5)), Some(Ordering::Less));
    /// assert_eq!(Datum::Null.compare(&Datum::Int(1)), None);
    /// ```
    pub fn compare(&self, other: &Datum) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Datum::Int(x), Datum::Int(y)) => Some(x.cmp(y)),
            (Datum::Real(x), Datum::Real(y)) => x.partial_cmp(y),
            (Datum::Int(x), Datum::Real(y)) => (*x as f64).partial_cmp(y),
            (Datum::Real(x), Datum::Int(y)) => x.partial_cmp(&(*y as f64)),
            (Datum::Text(x), Datum::Text(y)) => Some(x.cmp(y)),
            (Datum::Date(x), Datum::Date(y)) => Some(x.cmp(y)),
            (Datum::Datetime(x), Datum::Datetime(y)) => Some(x.cmp(y)),
            (Datum::Bool(x), Datum::Bool(y)) => Some(x.cmp(y)),
            _ => None,
        }
    }
}

/// A key's values as one text that equals another key's exactly when the values do (a set of
/// keys a backend looks rows up in).
pub fn key_text<D: std::borrow::Borrow<Datum>>(values: impl IntoIterator<Item = D>) -> String {
    let mut s = String::new();
    for v in values {
        s.push_str(&format!("{:?}", v.borrow()));
        s.push('\u{0}');
    }
    s
}

/// How a datum is quoted in a check's detail: the same text whatever the backend (a date
/// stored as text or as a DATE reads `"2026-10-03"`).
impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => f.write_str("null"),
            Datum::Int(i) => write!(f, "{i}"),
            Datum::Real(x) => write!(f, "{x}"),
            Datum::Bool(b) => write!(f, "{}", i64::from(*b)),
            Datum::Text(s) => write!(f, "{s:?}"),
            Datum::Date(d) => write!(f, "\"{d}\""),
            Datum::Datetime(t) => write!(f, "\"{t}\""),
        }
    }
}

/// A staged value borrowed from a [`Batch`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Staged<'a> {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A binary64 number.
    Real(f64),
    /// A boolean.
    Bool(bool),
    /// Text (also dates and datetimes, for a backend with `TEXT_TIMES`).
    Text(&'a str),
    /// A date.
    Date(Date),
    /// A UTC instant.
    Datetime(Timestamp),
}

impl From<Staged<'_>> for Datum {
    fn from(v: Staged<'_>) -> Datum {
        match v {
            Staged::Null => Datum::Null,
            Staged::Int(i) => Datum::Int(i),
            Staged::Real(x) => Datum::Real(x),
            Staged::Bool(b) => Datum::Bool(b),
            Staged::Text(s) => Datum::Text(s.to_owned()),
            Staged::Date(d) => Datum::Date(d),
            Staged::Datetime(t) => Datum::Datetime(t),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Null,
    Int(i64),
    Real(f64),
    Bool(bool),
    Text(u32, u32),
    Date(Date),
    Datetime(Timestamp),
}

/// Rows on their way to the backend: each live row has one value per staged column, each
/// tombstone one per key column.
#[derive(Debug, Default)]
pub struct Batch {
    tombstone: Vec<bool>,
    widths: Vec<u32>,
    slots: Vec<Slot>,
    text: String,
}

/// One staged row of a [`Batch`].
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    /// Whether it is a tombstone (its values are the key columns) or a live row.
    pub tombstone: bool,
    slots: &'a [Slot],
    text: &'a str,
}

impl<'a> Row<'a> {
    /// How many values the row has.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the row has no value.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Value `i`.
    pub fn get(&self, i: usize) -> Staged<'a> {
        match self.slots[i] {
            Slot::Null => Staged::Null,
            Slot::Int(v) => Staged::Int(v),
            Slot::Real(v) => Staged::Real(v),
            Slot::Bool(v) => Staged::Bool(v),
            Slot::Text(at, len) => Staged::Text(&self.text[at as usize..(at + len) as usize]),
            Slot::Date(d) => Staged::Date(d),
            Slot::Datetime(t) => Staged::Datetime(t),
        }
    }
}

pub(crate) const BATCH_ROWS: usize = 4096;

impl Batch {
    /// How many rows (live and tombstones) it holds.
    pub fn len(&self) -> usize {
        self.tombstone.len()
    }

    /// Whether it holds no row.
    pub fn is_empty(&self) -> bool {
        self.tombstone.is_empty()
    }

    /// Its rows, in file order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        let mut at = 0usize;
        self.tombstone
            .iter()
            .zip(&self.widths)
            .map(move |(&tombstone, &w)| {
                let slots = &self.slots[at..at + w as usize];
                at += w as usize;
                Row {
                    tombstone,
                    slots,
                    text: &self.text,
                }
            })
    }

    /// An empty batch with room for as much as this one holds: the next batch of a delivery
    /// fills without growing its vectors row by row.
    pub(crate) fn empty_like(&self) -> Batch {
        Batch {
            tombstone: Vec::with_capacity(self.tombstone.len()),
            widths: Vec::with_capacity(self.widths.len()),
            slots: Vec::with_capacity(self.slots.len()),
            text: String::with_capacity(self.text.len()),
        }
    }

    pub(crate) fn start_row(&mut self, tombstone: bool) {
        self.tombstone.push(tombstone);
        self.widths.push(0);
    }

    /// Adds a cell to the current row; `text_times` formats dates and datetimes as text.
    pub(crate) fn push(&mut self, cell: &Cell<'_>, text_times: bool) {
        let slot = match cell {
            Cell::Null => Slot::Null,
            Cell::Int(i) => Slot::Int(*i),
            Cell::Bool(b) => Slot::Bool(*b),
            Cell::Float(x) => Slot::Real(*x),
            Cell::Str(s) => self.text_slot(|t| t.push_str(s)),
            Cell::Date(d) if text_times => self.text_slot(|t| push_date(t, *d)),
            Cell::Datetime(ts) if text_times => self.text_slot(|t| push_datetime(t, *ts)),
            Cell::Date(d) => Slot::Date(*d),
            Cell::Datetime(t) => Slot::Datetime(*t),
        };
        self.slots.push(slot);
        if let Some(w) = self.widths.last_mut() {
            *w += 1;
        }
    }

    fn text_slot(&mut self, write: impl FnOnce(&mut String)) -> Slot {
        let start = self.text.len();
        write(&mut self.text);
        Slot::Text(start as u32, (self.text.len() - start) as u32)
    }
}

fn push_digits(buf: &mut String, v: u32, width: usize) {
    let mut digits = [b'0'; 10];
    let mut v = v;
    for i in (0..width).rev() {
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    buf.push_str(std::str::from_utf8(&digits[..width]).unwrap_or_default());
}

/// `YYYY-MM-DD`, as `Date`'s Display writes it (without the formatting machinery: this runs
/// once per value of a bulk load).
pub(crate) fn push_date(buf: &mut String, d: Date) {
    let (y, m, day) = d.ymd();
    if !(0..=9999).contains(&y) {
        let _ = write!(buf, "{d}");
        return;
    }
    push_digits(buf, y as u32, 4);
    buf.push('-');
    push_digits(buf, m, 2);
    buf.push('-');
    push_digits(buf, day, 2);
}

/// The protocol's UTC form, as `Timestamp`'s Display writes it.
pub(crate) fn push_datetime(buf: &mut String, t: Timestamp) {
    const DAY: i64 = 86_400_000_000;
    push_date(buf, t.date());
    let within = t.as_micros().rem_euclid(DAY);
    let (secs, frac) = (within / 1_000_000, within % 1_000_000);
    buf.push('T');
    push_digits(buf, (secs / 3600) as u32, 2);
    buf.push(':');
    push_digits(buf, (secs / 60 % 60) as u32, 2);
    buf.push(':');
    push_digits(buf, (secs % 60) as u32, 2);
    if frac != 0 {
        buf.push('.');
        push_digits(buf, frac as u32, 6);
    }
    buf.push_str("+00:00");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_formats_are_display() {
        for t in [
            "0001-01-01T00:00:00Z",
            "1969-12-31T23:59:59.999999Z",
            "2026-10-26T06:00:00.5Z",
            "9999-12-31T23:59:59.999999Z",
        ] {
            let t: Timestamp = t.parse().unwrap();
            let mut s = String::new();
            push_datetime(&mut s, t);
            assert_eq!(s, t.to_string());
            s.clear();
            push_date(&mut s, t.date());
            assert_eq!(s, t.date().to_string());
        }
    }

    #[test]
    fn a_batch_reads_back_its_rows() {
        let mut b = Batch::default();
        b.start_row(false);
        b.push(&Cell::Int(7), true);
        b.push(&Cell::Str("x".into()), true);
        b.push(&Cell::Date("2026-10-03".parse().unwrap()), true);
        b.start_row(true);
        b.push(&Cell::Int(8), false);
        let rows: Vec<Row<'_>> = b.rows().collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].get(1), Staged::Text("x"));
        assert_eq!(rows[0].get(2), Staged::Text("2026-10-03"));
        assert!(rows[1].tombstone);
        assert_eq!(rows[1].get(0), Staged::Int(8));
    }

    #[test]
    fn a_date_reads_the_same_stored_as_text_or_typed() {
        let d: Date = "2026-10-03".parse().unwrap();
        assert_eq!(
            Datum::Date(d).to_string(),
            Datum::Text(d.to_string()).to_string()
        );
    }
}

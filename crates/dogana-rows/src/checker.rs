//! The row checks: a state machine fed one row at a time, whatever the format.

use std::collections::HashMap;

use dogana::{
    Check, Checkpoint, Contract, Coverage, Date, LogicalType, Manifest, Position, Since, Timestamp,
    Value,
};

use crate::cell::{Cell, Typed};
use crate::error::RowsError;
use crate::keys::{self, BytesSet, IntKeys};
use crate::RowReport;

/// How many names a check's detail lists at most: a header of a million columns gives a
/// detail (and a receipt) of a few kilobytes, not megabytes.
const LISTED: usize = 20;

/// A column name a file wrote, for a detail: as it is when short, else quoted and cut.
pub(crate) fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    if name.char_indices().nth(dogana::SHOWN).is_none() && !name.chars().any(char::is_control) {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(dogana::quoted(name, dogana::SHOWN))
    }
}

/// The first [`LISTED`] of `n` items, joined, and how many more there are.
fn listed_cut<S: AsRef<str>>(items: impl Iterator<Item = S>, n: usize) -> String {
    let mut out: Vec<String> = items.take(LISTED).map(|s| s.as_ref().to_owned()).collect();
    if n > LISTED {
        out.push(format!("and {} more", n - LISTED));
    }
    out.join(", ")
}

/// A file's value for a detail: a string quoted and cut, anything else as it is written.
fn shown_cell(c: &Cell<'_>) -> String {
    match c {
        Cell::Str(s) => dogana::quoted(s, dogana::SHOWN),
        other => other.to_string(),
    }
}

/// The names of the checks a report holds, in its order.
pub const CHECK_NAMES: [&str; 8] = [
    "parse",
    "rows",
    "deleted",
    "keys",
    "window",
    "cursor",
    "schema_hash",
    "content_hash",
];

/// A bound value of one row as the reader found it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Slot<'a> {
    /// The file has no such column (or, in NDJSON, the row has no such key).
    Absent,
    /// The value did not parse as its type; the reader reports why.
    Bad,
    /// The value, [`Cell::Null`] included.
    Val(Cell<'a>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyState {
    Ok,
    Null(usize),
    Bad,
}

#[derive(Debug, Default)]
struct Fail {
    count: u64,
    first: Option<String>,
}

impl Fail {
    #[inline]
    fn hit(&mut self, first: impl FnOnce() -> String) {
        if self.first.is_none() {
            self.first = Some(first());
        }
        self.count += 1;
    }

    fn describe(&self, what: &str) -> Option<String> {
        let first = self.first.as_ref()?;
        Some(match self.count {
            1 => first.clone(),
            n => format!("{first} (and {} more {what})", n - 1),
        })
    }
}

#[derive(Debug)]
enum Bounds {
    Int(i64, i64),
    Str(String, String),
    Date(Date, Date),
    Datetime(Timestamp, Timestamp),
}

impl Bounds {
    fn new(low: &Value, high: &Value, ty: LogicalType) -> Option<Bounds> {
        Some(match (low, high, ty) {
            (Value::Int(a), Value::Int(b), LogicalType::Int) => Bounds::Int(*a, *b),
            (Value::Str(a), Value::Str(b), LogicalType::Str) => Bounds::Str(a.clone(), b.clone()),
            (Value::Date(a), Value::Date(b), LogicalType::Date) => Bounds::Date(*a, *b),
            (Value::Datetime(a), Value::Datetime(b), LogicalType::Datetime) => {
                Bounds::Datetime(*a, *b)
            }
            _ => return None,
        })
    }

    #[inline]
    fn contains(&self, c: &Cell<'_>) -> bool {
        match (self, c) {
            (Bounds::Int(a, b), Cell::Int(v)) => a <= v && v <= b,
            // UTF-8 byte order is code-point order (DOMAIN-10)
            (Bounds::Str(a, b), Cell::Str(v)) => {
                a.as_str() <= v.as_ref() && v.as_ref() <= b.as_str()
            }
            (Bounds::Date(a, b), Cell::Date(v)) => a <= v && v <= b,
            (Bounds::Datetime(a, b), Cell::Datetime(v)) => a <= v && v <= b,
            _ => false,
        }
    }

    /// [`contains`](Bounds::contains) for a parsed value that is not null, on the clean-row
    /// path: building a [`Cell`] to call `contains` costs 17 instructions a row (callgrind).
    #[inline(always)]
    fn contains_typed(&self, t: Typed) -> bool {
        match (self, t) {
            (Bounds::Int(a, b), Typed::Int(v)) => *a <= v && v <= *b,
            (Bounds::Date(a, b), Typed::Date(v)) => *a <= v && v <= *b,
            (Bounds::Datetime(a, b), Typed::Datetime(v)) => *a <= v && v <= *b,
            _ => false,
        }
    }
}

#[derive(Debug)]
enum Interval {
    /// (since, produced_at]
    Time(Timestamp, Timestamp),
    /// (since, generation]
    Seq(i64, i64),
}

impl Interval {
    #[inline]
    fn contains(&self, c: &Cell<'_>) -> bool {
        match (self, c) {
            (Interval::Time(a, b), Cell::Datetime(v)) => a < v && v <= b,
            (Interval::Seq(a, b), Cell::Int(v)) => a < v && v <= b,
            _ => false,
        }
    }

    /// [`contains`](Interval::contains) for a parsed value that is not null (see
    /// [`Bounds::contains_typed`]).
    #[inline(always)]
    fn contains_typed(&self, t: Typed) -> bool {
        match (self, t) {
            (Interval::Time(a, b), Typed::Datetime(v)) => *a < v && v <= *b,
            (Interval::Seq(a, b), Typed::Int(v)) => *a < v && v <= *b,
            _ => false,
        }
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Interval::Time(a, b) => write!(f, "({a}, {b}]"),
            Interval::Seq(a, b) => write!(f, "({a}, {b}]"),
        }
    }
}

/// What the contract and manifest say the rows must be.
#[derive(Debug)]
pub(crate) struct Spec {
    pub(crate) key_cols: Vec<String>,
    pub(crate) key_types: Vec<LogicalType>,
    pub(crate) window_col: Option<(String, LogicalType)>,
    pub(crate) cursor_col: Option<(String, LogicalType)>,
    pub(crate) deleted_col: Option<String>,
    types: HashMap<String, LogicalType>,
    tombstone_shape: bool,
    bounds: Option<(Bounds, String)>,
    interval: Result<Interval, String>,
    schema_hash: Option<String>,
    content_hash: Option<String>,
    rows: u64,
    tombstones: u64,
}

impl Spec {
    pub(crate) fn new(contract: &Contract, manifest: &Manifest) -> Result<Spec, RowsError> {
        let shape = contract.shape(manifest.shape()).ok_or_else(|| {
            RowsError::Manifest(format!(
                "the contract has no shape {:?} (run Gate::preflight first)",
                manifest.shape()
            ))
        })?;
        let types: HashMap<String, LogicalType> = contract
            .types()
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        let typed = |c: &str| -> Result<(String, LogicalType), RowsError> {
            let ty = *types.get(c).ok_or_else(|| {
                RowsError::Manifest(format!("the contract does not type column {c:?}"))
            })?;
            Ok((c.to_owned(), ty))
        };
        let window_col = contract.window_column().map(typed).transpose()?;
        let cursor_col = contract.cursor_column().map(typed).transpose()?;
        let key_types = contract
            .key()
            .iter()
            .map(|k| typed(k).map(|(_, t)| t))
            .collect::<Result<Vec<_>, _>>()?;
        let bounds = match (shape.coverage(), manifest.window(), &window_col) {
            (Coverage::Window, Some(w), Some((_, ty))) => {
                let b = Bounds::new(&w.low, &w.high, *ty).ok_or_else(|| {
                    RowsError::Manifest(format!(
                        "the window {w} is not of the window column's type, {ty}"
                    ))
                })?;
                Some((b, w.to_string()))
            }
            (Coverage::Window, _, _) => {
                return Err(RowsError::Manifest(format!(
                    "shape {:?} covers a window, and the manifest declares none",
                    manifest.shape()
                )))
            }
            _ => None,
        };
        let interval = match (&cursor_col, shape.checkpoint()) {
            (None, _) => Err("not applicable: the contract has no cursor column (CHECK-15)".into()),
            (Some(_), Checkpoint::None) => {
                Err("not applicable: a complete read is not a read of changes".into())
            }
            (Some(_), Checkpoint::Generation) => Err(
                "not applicable: a generation read's positions are opaque tokens".into(),
            ),
            (Some((_, LogicalType::Datetime)), Checkpoint::Timestamp) => match manifest.since() {
                Some(Since::Time(s)) => Ok(Interval::Time(*s, manifest.produced_at())),
                _ => {
                    return Err(RowsError::Manifest(
                        "a timestamp read of changes declares since as a datetime".into(),
                    ))
                }
            },
            (Some((_, LogicalType::Int)), Checkpoint::Sequence) => {
                match (manifest.since(), manifest.generation()) {
                    (
                        Some(Since::Position(Position::Sequence(s))),
                        Some(Position::Sequence(g)),
                    ) => Ok(Interval::Seq(*s, *g)),
                    _ => {
                        return Err(RowsError::Manifest(
                            "a sequence read declares integer since and generation".into(),
                        ))
                    }
                }
            }
            (Some((_, ty)), cp) => Err(format!(
                "not applicable: a {ty} cursor with a {cp} read is not checked (CHECK-12 and CHECK-13 define datetime/timestamp and int/sequence)"
            )),
        };
        Ok(Spec {
            key_cols: contract.key().to_vec(),
            key_types,
            window_col,
            cursor_col,
            deleted_col: contract.deleted_column().map(str::to_owned),
            types,
            tombstone_shape: shape.delivers_tombstones(),
            bounds,
            interval,
            schema_hash: contract
                .schema_hash()
                .or(manifest.schema_hash())
                .map(str::to_owned),
            content_hash: manifest.content_hash().map(str::to_owned),
            rows: manifest.rows(),
            tombstones: manifest.tombstones(),
        })
    }

    /// The contract's type of a column, if it is bound.
    pub(crate) fn bound_type(&self, column: &str) -> Option<LogicalType> {
        self.types.get(column).copied()
    }
}

enum KeySet {
    None,
    Int(IntKeys),
    Bytes(BytesSet),
}

/// The checks' state over one read.
pub(crate) struct Checker {
    pub(crate) spec: Spec,
    records: u64,
    live: u64,
    tombstones: u64,
    unclassified: u64,
    unreadable: u64,
    parse: Fail,
    null_deleted: Fail,
    true_deleted: Fail,
    null_key: Fail,
    dup_key: Fail,
    null_window: Fail,
    out_window: Fail,
    cursor: Fail,
    extra_live: Option<String>,
    extra_tomb: Option<String>,
    keys: KeySet,
    key_state: KeyState,
    key_int: i64,
    key_buf: Vec<u8>,
    single_int_key: bool,
    int_distinct: u64,
    /// whether the keys may be deduplicated in two threads at the end
    pub(crate) two_threads: bool,
}

impl Checker {
    pub(crate) fn new(spec: Spec) -> Checker {
        let single_int_key = keys::is_int_key(&spec.key_types);
        let keys = if spec.key_cols.is_empty() {
            KeySet::None
        } else if single_int_key {
            KeySet::Int(IntKeys::new())
        } else {
            KeySet::Bytes(BytesSet::new())
        };
        Checker {
            spec,
            records: 0,
            live: 0,
            tombstones: 0,
            unclassified: 0,
            unreadable: 0,
            parse: Fail::default(),
            null_deleted: Fail::default(),
            true_deleted: Fail::default(),
            null_key: Fail::default(),
            dup_key: Fail::default(),
            null_window: Fail::default(),
            out_window: Fail::default(),
            cursor: Fail::default(),
            extra_live: None,
            extra_tomb: None,
            keys,
            key_state: KeyState::Ok,
            key_int: 0,
            key_buf: Vec::new(),
            single_int_key,
            int_distinct: 0,
            two_threads: false,
        }
    }

    /// A problem with the file as a whole (no header, a duplicate column name): fails `parse`.
    pub(crate) fn file_problem(&mut self, message: String) {
        self.parse.hit(|| message);
    }

    /// A row that cannot be read at all (ragged, not JSON): counted, and fails `parse`.
    pub(crate) fn unreadable(&mut self, line: u64, message: impl FnOnce() -> String) {
        self.records += 1;
        self.unreadable += 1;
        self.parse.hit(|| format!("line {line}: {}", message()));
    }

    /// Starts a row's key.
    #[inline]
    pub(crate) fn key_start(&mut self) {
        self.key_state = KeyState::Ok;
        self.key_buf.clear();
    }

    /// Adds the next key column's value.
    #[inline]
    pub(crate) fn key_part(&mut self, index: usize, slot: &Slot<'_>) {
        if self.key_state != KeyState::Ok {
            return;
        }
        match slot {
            Slot::Val(Cell::Null) | Slot::Absent => self.key_state = KeyState::Null(index),
            Slot::Bad => self.key_state = KeyState::Bad,
            Slot::Val(c) => {
                if self.single_int_key {
                    match keys::as_i64(c) {
                        Some(v) => self.key_int = v,
                        None => self.key_state = KeyState::Bad,
                    }
                } else {
                    keys::encode(&mut self.key_buf, c);
                }
            }
        }
    }

    /// The current row's key, for a message: `, key id=7`, or nothing.
    fn key_text(&self) -> String {
        let names = &self.spec.key_cols;
        if names.is_empty() {
            return String::new();
        }
        let values: Vec<String> = match self.key_state {
            KeyState::Ok if self.single_int_key => {
                vec![keys::show_i64(self.key_int, self.spec.key_types[0])]
            }
            KeyState::Ok => keys::show_encoded(&self.key_buf, &self.spec.key_types),
            KeyState::Null(_) | KeyState::Bad => return String::new(),
        };
        let pairs: Vec<String> = names
            .iter()
            .zip(&values)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        if pairs.len() == 1 {
            format!(", key {}", pairs[0])
        } else {
            format!(", key ({})", pairs.join(", "))
        }
    }

    /// Checks one readable row whose key was given with `key_start`/`key_part`. `error` is the
    /// first value that did not parse, as `column x: why`. Returns whether the row is a
    /// tombstone (None when it is neither live nor a tombstone).
    #[inline]
    pub(crate) fn row(
        &mut self,
        line: u64,
        deleted: Slot<'_>,
        window: Slot<'_>,
        cursor: Slot<'_>,
        error: Option<String>,
    ) -> Option<bool> {
        self.records += 1;
        if let Some(e) = error {
            let key = self.key_text();
            self.parse.hit(|| format!("line {line}{key}, {e}"));
        }
        let tomb = match deleted {
            Slot::Absent => Some(false),
            Slot::Val(Cell::Bool(b)) => Some(b),
            Slot::Val(_) => {
                let key = self.key_text();
                let col = self.spec.deleted_col.clone().unwrap_or_default();
                self.null_deleted
                    .hit(|| format!("line {line}{key}: the deleted column {col} is null"));
                None
            }
            Slot::Bad => None,
        };
        match tomb {
            Some(true) => {
                self.tombstones += 1;
                if !self.spec.tombstone_shape {
                    let key = self.key_text();
                    self.true_deleted.hit(|| {
                        format!(
                            "line {line}{key}: a tombstone, and the shape delivers none (CHECK-05)"
                        )
                    });
                }
                if self.tombstones == self.spec.tombstones + 1 {
                    let key = self.key_text();
                    self.extra_tomb = Some(format!("line {line}{key}"));
                }
            }
            Some(false) => {
                self.live += 1;
                if self.live == self.spec.rows + 1 {
                    let key = self.key_text();
                    self.extra_live = Some(format!("line {line}{key}"));
                }
            }
            None => self.unclassified += 1,
        }
        let is_tomb = tomb == Some(true);
        match self.key_state {
            KeyState::Ok => {
                let new = match &mut self.keys {
                    KeySet::None => true,
                    KeySet::Int(keys) => {
                        // repeats are found at the end (IntKeys::finish)
                        keys.push(self.key_int, line);
                        true
                    }
                    KeySet::Bytes(set) => set.insert(&self.key_buf),
                };
                if !new {
                    let key = self.key_text();
                    self.dup_key
                        .hit(|| format!("line {line}{key}: a key an earlier row already has"));
                }
            }
            KeyState::Null(i) => {
                let col = &self.spec.key_cols[i];
                self.null_key
                    .hit(|| format!("line {line}: the key column {col} is null"));
            }
            KeyState::Bad => {}
        }
        if let Slot::Val(w) = &window {
            if w.is_null() {
                if !is_tomb {
                    let key = self.key_text();
                    self.null_window
                        .hit(|| format!("line {line}{key}: the window value is null"));
                }
            } else if let Some((bounds, shown)) = &self.spec.bounds {
                if !bounds.contains(w) {
                    let key = self.key_text();
                    self.out_window.hit(|| {
                        format!(
                            "line {line}{key}: window value {} is outside the window {shown}",
                            shown_cell(w)
                        )
                    });
                }
            }
        }
        if let (Ok(interval), Slot::Val(c)) = (&self.spec.interval, &cursor) {
            if c.is_null() {
                if !is_tomb {
                    let key = self.key_text();
                    self.cursor
                        .hit(|| format!("line {line}{key}: a live row's cursor is null"));
                }
            } else if !interval.contains(c) {
                let key = self.key_text();
                let who = if is_tomb { "a tombstone's" } else { "the" };
                self.cursor.hit(|| {
                    format!(
                        "line {line}{key}: {who} cursor {} is outside {interval}",
                        shown_cell(c)
                    )
                });
            }
        }
        tomb
    }

    /// Checks one row whose bound values all parsed, when it is clean: a single-column
    /// `int`/`date`/`datetime` key, a `bool` deleted value (or none), a non-null window value
    /// inside the window (or no window column) and a non-null cursor value inside the interval
    /// (or no cursor check), and within the declared counts. Such a row is counted and its key
    /// kept, exactly as [`row`](Checker::row) would; any other row changes nothing and returns
    /// false, for `row` to check it and say why. Most rows of an honest delivery take this path,
    /// which skips building the row's [`Cell`]s.
    #[inline]
    pub(crate) fn clean_row(
        &mut self,
        line: u64,
        key: Typed,
        deleted: Option<Typed>,
        window: Option<Typed>,
        cursor: Option<Typed>,
    ) -> bool {
        if !self.single_int_key {
            return false;
        }
        let key = match key {
            Typed::Int(v) => v,
            Typed::Date(d) => d.days_since_epoch(),
            Typed::Datetime(t) => t.as_micros(),
            _ => return false,
        };
        let tomb = match deleted {
            None => false,
            Some(Typed::Bool(b)) => b,
            Some(_) => return false,
        };
        if tomb {
            if !self.spec.tombstone_shape || self.tombstones >= self.spec.tombstones {
                return false;
            }
        } else if self.live >= self.spec.rows {
            return false;
        }
        if let Some(w) = window {
            match (&self.spec.bounds, w) {
                (_, Typed::Null | Typed::Bad | Typed::Text) => return false,
                (Some((bounds, _)), w) if !bounds.contains_typed(w) => return false,
                _ => {}
            }
        }
        if let (Ok(interval), Some(c)) = (&self.spec.interval, cursor) {
            if !interval.contains_typed(c) {
                return false;
            }
        }
        self.records += 1;
        if tomb {
            self.tombstones += 1;
        } else {
            self.live += 1;
        }
        if let KeySet::Int(keys) = &mut self.keys {
            keys.push(key, line);
        }
        true
    }

    /// Before any row: refuses to start when the column hash will be needed and the receiver
    /// gave no column types at all for columns the contract does not type.
    pub(crate) fn require_types(
        &self,
        columns: &[String],
        column_types: &[(String, String)],
    ) -> Result<(), RowsError> {
        if self.spec.schema_hash.is_none() || !column_types.is_empty() {
            return Ok(());
        }
        let untyped: Vec<String> = columns
            .iter()
            .filter(|c| {
                self.spec.bound_type(c).is_none()
                    && Some(c.as_str()) != self.spec.deleted_col.as_deref()
            })
            .cloned()
            .collect();
        if untyped.is_empty() {
            Ok(())
        } else {
            Err(RowsError::ColumnTypesRequired(untyped))
        }
    }

    /// The report, given the file's columns (in file order), the types of unbound columns,
    /// the bytes' hash and size.
    pub(crate) fn finish(
        mut self,
        columns: Vec<String>,
        column_types: &[(String, String)],
        content_sha256: String,
        bytes: u64,
        header: bool,
    ) -> Result<RowReport, RowsError> {
        let mut key_table_bytes = 0;
        if let KeySet::Int(keys) = &self.keys {
            let (distinct, repeats, first, table) = if self.two_threads {
                keys.finish_in_two()
            } else {
                keys.finish()
            };
            key_table_bytes = table;
            self.int_distinct = distinct;
            if let Some((line, key)) = first {
                let (col, ty) = (&self.spec.key_cols[0], self.spec.key_types[0]);
                let shown = keys::show_i64(key, ty);
                let line = if line == u64::from(u32::MAX) {
                    format!("a line after {}", u32::MAX - 1)
                } else {
                    format!("line {line}")
                };
                self.dup_key.first = Some(format!(
                    "{line}, key {col}={shown}: a key an earlier row already has"
                ));
                self.dup_key.count = repeats;
            }
        }
        let spec = &self.spec;
        // A header names the columns; NDJSON has none, and a key a line lacks is null there, so
        // a bound column is never missing from an NDJSON file, only null.
        let has = |c: &str| !header || columns.iter().any(|x| x == c);
        let mut checks = Vec::with_capacity(CHECK_NAMES.len());

        // parse
        checks.push(match self.parse.describe("problems") {
            Some(d) => Check::fail("parse", d),
            None => Check::pass(
                "parse",
                format!(
                    "{} rows read; every bound value parses as its type",
                    self.records
                ),
            ),
        });

        // rows (CHECK-02, CHECK-03)
        let rows_ok = self.live == spec.rows && self.tombstones == spec.tombstones;
        let mut detail = format!("{} live rows and {} tombstones", self.live, self.tombstones);
        if rows_ok {
            detail.push_str(", as declared");
        } else {
            detail = format!(
                "the read holds {detail}; the manifest declares {} and {}",
                spec.rows, spec.tombstones
            );
            if let Some(first) = &self.extra_live {
                detail.push_str(&format!(
                    "; first live row beyond the declared count: {first}"
                ));
            }
            if let Some(first) = &self.extra_tomb {
                detail.push_str(&format!(
                    "; first tombstone beyond the declared count: {first}"
                ));
            }
            if self.unclassified > 0 {
                detail.push_str(&format!(
                    "; {} rows are neither (a null or unreadable deleted value)",
                    self.unclassified
                ));
            }
            if self.unreadable > 0 {
                detail.push_str(&format!("; {} rows could not be read", self.unreadable));
            }
        }
        checks.push(Check::new("rows", rows_ok, detail));

        // deleted (CHECK-03, CHECK-04, CHECK-05)
        checks.push(match &spec.deleted_col {
            None => match self.true_deleted.describe("tombstones") {
                Some(d) => Check::fail("deleted", d),
                None => Check::pass(
                    "deleted",
                    "not applicable: the contract has no deleted column",
                ),
            },
            Some(col) => {
                let fails: Vec<String> = [
                    self.null_deleted.describe("null deleted values"),
                    self.true_deleted.describe("tombstones"),
                ]
                .into_iter()
                .flatten()
                .collect();
                if !fails.is_empty() {
                    Check::fail("deleted", fails.join("; "))
                } else if !has(col) {
                    Check::pass(
                        "deleted",
                        format!(
                            "the file has no deleted column {col}: every row is live (CHECK-04)"
                        ),
                    )
                } else {
                    Check::pass("deleted", format!("no null value in {col}"))
                }
            }
        });

        // keys (CHECK-09)
        let distinct = match &self.keys {
            KeySet::None => 0,
            KeySet::Int(_) => self.int_distinct,
            KeySet::Bytes(s) => s.len(),
        };
        checks.push(if spec.key_cols.is_empty() {
            Check::pass("keys", "not applicable: the table is keyless")
        } else {
            let missing: Vec<&String> = spec.key_cols.iter().filter(|k| !has(k)).collect();
            if !missing.is_empty() {
                let names: Vec<String> = missing.iter().map(|m| m.to_string()).collect();
                Check::fail(
                    "keys",
                    format!("the file has no key column {}", names.join(", ")),
                )
            } else {
                let fails: Vec<String> = [
                    self.null_key.describe("null keys"),
                    self.dup_key.describe("repeated keys"),
                ]
                .into_iter()
                .flatten()
                .collect();
                if fails.is_empty() {
                    Check::pass("keys", format!("{distinct} keys, non-null and unique"))
                } else {
                    Check::fail("keys", fails.join("; "))
                }
            }
        });

        // window (CHECK-10, CHECK-11)
        checks.push(match &spec.window_col {
            None => Check::pass("window", "not applicable: the contract has no window column"),
            Some((col, _)) if !has(col) => {
                Check::fail("window", format!("the file has no window column {col}"))
            }
            Some((col, _)) => {
                let fails: Vec<String> = [
                    self.null_window.describe("null window values"),
                    self.out_window.describe("values outside the window"),
                ]
                .into_iter()
                .flatten()
                .collect();
                if fails.is_empty() {
                    let inside = match &spec.bounds {
                        Some((_, w)) => format!(" and inside {w}"),
                        None => String::new(),
                    };
                    Check::pass(
                        "window",
                        format!("every live row's {col} is non-null{inside}; a tombstone's may be null (CHECK-11)"),
                    )
                } else {
                    Check::fail("window", fails.join("; "))
                }
            }
        });

        // cursor (CHECK-12, CHECK-13, CHECK-14, CHECK-15)
        checks.push(match (&spec.interval, &spec.cursor_col) {
            (Err(why), _) => Check::pass("cursor", why.clone()),
            (Ok(_), Some((col, _))) if !has(col) => {
                Check::fail("cursor", format!("the file has no cursor column {col}"))
            }
            (Ok(interval), col) => match self.cursor.describe("rows") {
                Some(d) => Check::fail("cursor", d),
                None => Check::pass(
                    "cursor",
                    format!(
                        "every live row's {} is in {interval}; a tombstone's is null or inside",
                        col.as_ref().map_or("", |c| c.0.as_str())
                    ),
                ),
            },
        });

        // schema_hash (CHECK-07): the loaded columns without the deleted one (CONTRACT-18), in
        // file order; NDJSON has none, so there the receiver's list gives it
        let listed = |c: &str| column_types.iter().find(|(n, _)| n == c).map(|(_, t)| t);
        let mut unlisted = Vec::new();
        let order: Vec<&String> = if header || column_types.is_empty() {
            columns.iter().collect()
        } else {
            unlisted = columns
                .iter()
                .filter(|c| listed(c).is_none() && Some(c.as_str()) != spec.deleted_col.as_deref())
                .cloned()
                .collect();
            column_types.iter().map(|(n, _)| n).collect()
        };
        let loaded: Vec<&String> = order
            .into_iter()
            .filter(|c| Some(c.as_str()) != spec.deleted_col.as_deref())
            .collect();
        let mut untyped = unlisted;
        let pairs: Vec<(&str, String)> = loaded
            .iter()
            .map(|c| {
                let ty = match spec.bound_type(c) {
                    Some(t) => t.name().to_owned(),
                    None => match listed(c) {
                        Some(t) => t.clone(),
                        None => {
                            untyped.push((*c).clone());
                            String::new()
                        }
                    },
                };
                (c.as_str(), ty)
            })
            .collect();
        let column_hash = untyped.is_empty().then(|| dogana::column_hash(&pairs));
        checks.push(match &spec.schema_hash {
            None => Check::pass(
                "schema_hash",
                "not applicable: the contract declares no schema_hash",
            ),
            Some(_) if !header && self.records == 0 && column_types.is_empty() => Check::pass(
                "schema_hash",
                "the read has no rows, so the file names no columns",
            ),
            Some(expected) => match &column_hash {
                Some(h) if h == expected => Check::pass(
                    "schema_hash",
                    format!("the {} loaded columns hash to {h}", pairs.len()),
                ),
                Some(h) => {
                    let shown = pairs.iter().map(|(n, t)| format!("{} {t}", shown_name(n)));
                    Check::fail(
                        "schema_hash",
                        format!(
                            "the loaded columns ({}) hash to {h}, not {expected}",
                            listed_cut(shown, pairs.len())
                        ),
                    )
                }
                None if column_types.is_empty() => {
                    return Err(RowsError::ColumnTypesRequired(untyped))
                }
                None => Check::fail(
                    "schema_hash",
                    format!(
                        "the file has columns the receiver's column list does not name: {}",
                        listed_cut(untyped.iter().map(|n| shown_name(n)), untyped.len())
                    ),
                ),
            },
        });

        // content_hash (CHECK-08)
        checks.push(match &spec.content_hash {
            None => Check::pass(
                "content_hash",
                format!("not declared; the {bytes} bytes hash to {content_sha256}"),
            ),
            Some(h) if *h == content_sha256 => {
                Check::pass("content_hash", format!("the {bytes} bytes hash to {h}"))
            }
            Some(h) => Check::fail(
                "content_hash",
                format!("the {bytes} bytes hash to {content_sha256}, not the declared {h}"),
            ),
        });

        Ok(RowReport {
            checks,
            content_sha256,
            bytes,
            columns,
            column_hash,
            records: self.records,
            live: self.live,
            tombstones: self.tombstones,
            distinct_keys: distinct,
            key_set_bytes: match &self.keys {
                KeySet::None => 0,
                KeySet::Int(s) => (s.heap_bytes() + key_table_bytes) as u64,
                KeySet::Bytes(s) => s.heap_bytes() as u64,
            },
        })
    }
}

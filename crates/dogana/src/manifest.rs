//! The manifest: the sender's declaration of one read.

use std::fmt;

use dogana_json::{quoted, Quoted, SHOWN};

use crate::contract::{check_length, NAME_MAX};
use crate::contract::{is_sha256_hex, Contract};
use crate::error::{invalid, InvalidContract, Problem};
use crate::shape::{Checkpoint, Coverage, Shape};
use crate::time::Timestamp;
use crate::value::{Value, Window};

/// A position in the whole table's history: an opaque generation token, or an integer
/// position in the source's log (MAN-09, MAN-10, MAN-12).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Position {
    /// An opaque, nonempty generation token.
    Token(String),
    /// An integer log position.
    Sequence(i64),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Token(t) => write!(f, "{t:?}"),
            Position::Sequence(n) => write!(f, "{n}"),
        }
    }
}

/// Where a read of changes starts: a time for timestamp shapes, a position for feeds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Since {
    /// A timestamp checkpoint.
    Time(Timestamp),
    /// A generation token or a sequence position.
    Position(Position),
}

impl fmt::Display for Since {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Since::Time(t) => write!(f, "{t}"),
            Since::Position(p) => write!(f, "{p}"),
        }
    }
}

impl From<Timestamp> for Since {
    fn from(t: Timestamp) -> Since {
        Since::Time(t)
    }
}

impl From<Position> for Since {
    fn from(p: Position) -> Since {
        Since::Position(p)
    }
}

/// The sender's declaration of one read (MAN-01).
///
/// ```
/// use dogana::{Manifest, Window, Date};
/// let m = Manifest::builder("orders", "last3", "2026-10-27T06:00:00Z".parse().unwrap())
///     .window(Window::new("2026-10-25".parse::<Date>().unwrap(), "2026-10-27".parse::<Date>().unwrap()))
///     .rows(120)
///     .build()
///     .unwrap();
/// assert_eq!(m.rows(), 120);
/// assert_eq!(m.tombstones(), 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub(crate) table: String,
    pub(crate) shape: String,
    pub(crate) produced_at: Timestamp,
    pub(crate) window: Option<Window>,
    pub(crate) since: Option<Since>,
    pub(crate) generation: Option<Position>,
    pub(crate) rows: u64,
    pub(crate) schema_hash: Option<String>,
    pub(crate) tombstones: u64,
    pub(crate) content_hash: Option<String>,
    /// Its identity, once asked for (a manifest does not change once built).
    pub(crate) identity: crate::wire::IdentityMemo,
}

/// Builds a [`Manifest`]; `rows` is required.
#[derive(Debug, Clone)]
pub struct ManifestBuilder {
    manifest: Manifest,
    rows: Option<u64>,
}

impl ManifestBuilder {
    pub(crate) fn new(
        table: impl Into<String>,
        shape: impl Into<String>,
        produced_at: Timestamp,
    ) -> Self {
        ManifestBuilder {
            manifest: Manifest {
                table: table.into(),
                shape: shape.into(),
                produced_at,
                window: None,
                since: None,
                generation: None,
                rows: 0,
                schema_hash: None,
                tombstones: 0,
                content_hash: None,
                identity: Default::default(),
            },
            rows: None,
        }
    }

    /// The closed window a window read covers.
    pub fn window(mut self, window: Window) -> Self {
        self.manifest.window = Some(window);
        self
    }

    /// Where a read of changes starts.
    pub fn since(mut self, since: impl Into<Since>) -> Self {
        self.manifest.since = Some(since.into());
        self
    }

    /// The position the read ends at (and issues).
    pub fn generation(mut self, generation: Position) -> Self {
        self.manifest.generation = Some(generation);
        self
    }

    /// The number of live rows.
    pub fn rows(mut self, rows: u64) -> Self {
        self.rows = Some(rows);
        self
    }

    /// The number of tombstones.
    pub fn tombstones(mut self, tombstones: u64) -> Self {
        self.manifest.tombstones = tombstones;
        self
    }

    /// The column hash of the delivered columns.
    pub fn schema_hash(mut self, hash: impl Into<String>) -> Self {
        self.manifest.schema_hash = Some(hash.into());
        self
    }

    /// The SHA-256 of the delivered bytes, lowercase hex.
    pub fn content_hash(mut self, hash: impl Into<String>) -> Self {
        self.manifest.content_hash = Some(hash.into());
        self
    }

    /// Checks each field on its own (MAN-24) and returns the manifest. Whether the fields agree
    /// with the contract and with each other is the gate's `manifest` check.
    pub fn build(mut self) -> Result<Manifest, InvalidContract> {
        self.manifest.rows = self.rows.ok_or_else(|| {
            invalid(
                "rows",
                "missing",
                "MAN-02",
                "every manifest declares how many live rows the read holds",
            )
        })?;
        self.manifest.validate_fields()?;
        Ok(self.manifest)
    }
}

impl Manifest {
    /// Starts a manifest; [`Contract::manifest`] fills in the table and schema hash for you.
    pub fn builder(
        table: impl Into<String>,
        shape: impl Into<String>,
        produced_at: Timestamp,
    ) -> ManifestBuilder {
        ManifestBuilder::new(table, shape, produced_at)
    }

    /// The table the read is of.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The name of the shape in the contract.
    pub fn shape(&self) -> &str {
        &self.shape
    }

    /// The read boundary, t.
    pub fn produced_at(&self) -> Timestamp {
        self.produced_at
    }

    /// The window, for window coverage.
    pub fn window(&self) -> Option<&Window> {
        self.window.as_ref()
    }

    /// Where a read of changes starts.
    pub fn since(&self) -> Option<&Since> {
        self.since.as_ref()
    }

    /// The position issued.
    pub fn generation(&self) -> Option<&Position> {
        self.generation.as_ref()
    }

    /// Live rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Tombstones.
    pub fn tombstones(&self) -> u64 {
        self.tombstones
    }

    /// The declared column hash.
    pub fn schema_hash(&self) -> Option<&str> {
        self.schema_hash.as_deref()
    }

    /// The declared content hash.
    pub fn content_hash(&self) -> Option<&str> {
        self.content_hash.as_deref()
    }

    pub(crate) fn validate_fields(&self) -> Result<(), InvalidContract> {
        check_length("table", &self.table, "a name", "CONTRACT-48")?;
        check_length("shape", &self.shape, "a name", "CONTRACT-48")?;
        for (field, count) in [("rows", self.rows), ("tombstones", self.tombstones)] {
            if count > Value::INT_MAX as u64 {
                return Err(invalid(
                    field,
                    count,
                    "WIRE-24",
                    "a count must be exact in binary64 (at most 2^53-1)",
                ));
            }
        }
        for (field, hash, rule) in [
            ("content_hash", &self.content_hash, "MAN-23"),
            ("schema_hash", &self.schema_hash, "CONTRACT-21"),
        ] {
            if let Some(h) = hash {
                if !is_sha256_hex(h) {
                    return Err(invalid(
                        field,
                        quoted(h, SHOWN),
                        rule,
                        "a SHA-256 is written as 64 lowercase hexadecimal characters",
                    ));
                }
            }
        }
        for (field, pos) in [
            (
                "since",
                self.since.as_ref().and_then(|s| match s {
                    Since::Position(p) => Some(p),
                    Since::Time(_) => None,
                }),
            ),
            ("generation", self.generation.as_ref()),
        ] {
            match pos {
                Some(Position::Token(t)) if t.len() > NAME_MAX => {
                    return Err(invalid(
                        field,
                        quoted(t, SHOWN),
                        "MAN-09",
                        format!("a generation token is at most {NAME_MAX} bytes"),
                    ))
                }
                Some(Position::Token(t)) if t.is_empty() => {
                    return Err(invalid(
                        field,
                        "\"\"",
                        "MAN-09",
                        "a generation token is a nonempty string",
                    ))
                }
                Some(Position::Sequence(n)) if !(Value::INT_MIN..=Value::INT_MAX).contains(n) => {
                    return Err(invalid(
                        field,
                        n,
                        "WIRE-24",
                        "a sequence position must be exact in binary64 (|n| <= 2^53-1)",
                    ))
                }
                _ => {}
            }
        }
        if let Some(w) = &self.window {
            for (field, v) in [("window[0]", &w.low), ("window[1]", &w.high)] {
                if !v.in_domain() {
                    return Err(invalid(
                        field,
                        v,
                        "DOMAIN-14",
                        "integer bounds lie in [-(2^53-1), 2^53-1]; type larger keys as str",
                    ));
                }
            }
        }
        Ok(())
    }

    /// The `manifest` check: the declarations agree with each other and with the contract
    /// (GATE-03, TRANS-01). Returns the shape the manifest names.
    pub(crate) fn check_against<'c>(&self, contract: &'c Contract) -> Result<&'c Shape, Problem> {
        let p = |field: &str, value: &dyn fmt::Display, rule, reason: &str| {
            Err(Problem::new(field, value, rule, reason))
        };
        if self.table != contract.table {
            return p(
                "table",
                &Quoted::new(&self.table, NAME_MAX),
                "MAN-04",
                &format!(
                    "the contract is for table {}",
                    Quoted::new(&contract.table, NAME_MAX)
                ),
            );
        }
        let Some(shape) = contract.shape(&self.shape) else {
            let names: Vec<_> = contract
                .shapes
                .keys()
                .map(|k| quoted(k, NAME_MAX))
                .collect();
            return p(
                "shape",
                &Quoted::new(&self.shape, NAME_MAX),
                "MAN-04",
                &format!(
                    "the contract has no such shape; it has {}",
                    names.join(", ")
                ),
            );
        };
        if let Err(e) = self.validate_fields() {
            return Err(e.problem().clone());
        }
        // window: exactly for window coverage, typed by the window column, low <= high.
        match (&self.window, shape.coverage) {
            (Some(w), Coverage::Table) => {
                return p(
                    "window",
                    w,
                    "MAN-05",
                    &format!(
                        "shape {:?} covers the whole table; only window shapes carry a window",
                        self.shape
                    ),
                )
            }
            (None, Coverage::Window) => {
                return p(
                    "window",
                    &"None",
                    "MAN-05",
                    &format!("shape {:?} covers a window; declare it", self.shape),
                )
            }
            (Some(w), Coverage::Window) => {
                let t = contract
                    .window_type()
                    .expect("a contract with a window shape types its window column");
                for (field, v) in [("window[0]", &w.low), ("window[1]", &w.high)] {
                    if v.logical_type() != t {
                        return p(
                            field,
                            v,
                            "MAN-07",
                            &format!(
                                "window bounds have the window column's type, {t}, not {}",
                                v.logical_type()
                            ),
                        );
                    }
                }
                if w.low > w.high {
                    return p(
                        "window",
                        w,
                        "DOMAIN-18",
                        "a window's low end is not after its high end",
                    );
                }
            }
            (None, Coverage::Table) => {}
        }
        // since: exactly for changed-only shapes, of the checkpoint's kind.
        match (&self.since, shape.checkpoint) {
            (Some(s), Checkpoint::None) => {
                return p(
                    "since",
                    s,
                    "MAN-06",
                    &format!(
                        "shape {:?} is complete; only reads of changes carry since",
                        self.shape
                    ),
                )
            }
            (None, Checkpoint::None) => {}
            (None, cp) => {
                return p(
                    "since",
                    &"None",
                    "MAN-06",
                    &format!("a {cp} read of changes declares where it starts"),
                )
            }
            (Some(Since::Time(_)), Checkpoint::Timestamp)
            | (Some(Since::Position(Position::Token(_))), Checkpoint::Generation)
            | (Some(Since::Position(Position::Sequence(_))), Checkpoint::Sequence) => {}
            (Some(s), cp) => {
                let (rule, want) = match cp {
                    Checkpoint::Timestamp => ("MAN-08", "an aware datetime"),
                    Checkpoint::Generation => ("MAN-09", "a generation token (a string)"),
                    _ => ("MAN-10", "an integer position"),
                };
                return p("since", s, rule, &format!("a {cp} checkpoint is {want}"));
            }
        }
        // generation: the position a read issues.
        let kind_ok =
            |g: &Position| matches!(g, Position::Sequence(_)) == contract.positions_are_integers();
        match (&self.generation, shape.coverage, shape.checkpoint) {
            (None, _, Checkpoint::Generation | Checkpoint::Sequence) => {
                return p(
                    "generation",
                    &"None",
                    if shape.checkpoint == Checkpoint::Generation {
                        "MAN-09"
                    } else {
                        "MAN-10"
                    },
                    "a feed declares the position it ends at, and issues it",
                )
            }
            (Some(g), Coverage::Window, _) => {
                return p(
                    "generation",
                    g,
                    "MAN-13",
                    "a window read never issues a position: positions are of the whole table",
                )
            }
            (Some(g), _, Checkpoint::Timestamp) => {
                return p(
                    "generation",
                    g,
                    "MAN-14",
                    "a timestamp read of changes issues no position",
                )
            }
            (Some(g), _, _) if !kind_ok(g) => {
                return p(
                    "generation",
                    g,
                    "MAN-12",
                    if contract.positions_are_integers() {
                        "this table has sequence shapes, so its positions are integers"
                    } else {
                        "this table has no sequence shapes, so its positions are generation tokens (strings)"
                    },
                )
            }
            _ => {}
        }
        if let (Some(Since::Position(Position::Sequence(s))), Some(Position::Sequence(g))) =
            (&self.since, &self.generation)
        {
            if g < s {
                return p(
                    "generation",
                    g,
                    "MAN-10",
                    &format!(
                        "a sequence read covers (since, generation], so generation >= since = {s}"
                    ),
                );
            }
        }
        // counts
        if self.tombstones > 0 && !shape.delivers_tombstones() {
            return p(
                "tombstones",
                &self.tombstones,
                "MAN-16",
                &format!("shape {:?} does not deliver tombstones", self.shape),
            );
        }
        let empty_interval = match (&self.since, &self.generation) {
            (Some(Since::Time(s)), _) => *s == self.produced_at,
            (Some(Since::Position(Position::Sequence(s))), Some(Position::Sequence(g))) => s == g,
            _ => false,
        };
        if empty_interval && (self.rows > 0 || self.tombstones > 0) {
            return p(
                "rows",
                &format!("{} rows, {} tombstones", self.rows, self.tombstones),
                "MAN-11",
                "the read covers an empty interval, so it holds no rows and no tombstones",
            );
        }
        if let Some(expected) = &contract.schema_hash {
            if self.schema_hash.as_ref() != Some(expected) {
                return p(
                    "schema_hash",
                    &format!("{:?}", self.schema_hash),
                    "MAN-22",
                    &format!("the contract's column hash is {expected}; deliver the same columns and declare it"),
                );
            }
        }
        Ok(shape)
    }
}

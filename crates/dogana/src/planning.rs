//! Planning reads: requirements, `plan_delivery` and `next_extraction` (PLANNER).
//!
//! A reader names the dates it needs in a [`Requirement`]; [`plan_delivery`] answers with the
//! cheapest read that establishes them, as an [`Extraction`] request, or with nothing when the
//! ledger already meets them. [`next_extraction`] derives the request of one named shape, as a
//! scheduler asks for the next read of a rolling window or of a feed.
//!
//! Both are pure functions of the ledger: no clock, no rows. A request is checked against the
//! ledger before it is returned, by applying the manifest it implies (with no rows), so a
//! sender that reads exactly what the request says, at `until`, is admitted by the gate
//! whenever its `now` has reached `until`.
//!
//! Decisions on the open points (also in `docs/planning.md`):
//!
//! - PLANNER-10: `plan_delivery(ledger, requirement)` takes no `now` and no `limit`: a
//!   requirement's `complete_as_of` *is* the reader's freshness (see [`Requirement::fresh`]),
//!   and claims are compared on dates only. It returns `Ok(None)` or `Ok(Some(Extraction))`.
//!   Shape names tie-break in code-point order. The planned boundary is the larger of the
//!   required dates and the instant 1 µs after the latest `complete_as_of` the candidate's
//!   coverage touches (the least instant that is strictly later, at the protocol's resolution).
//! - The requirement's table must equal the contract's table exactly, as a manifest's must
//!   (MAN-04); letter case matters here (a [`Group`](crate::Group) matches case-insensitively,
//!   then plans with the contract's spelling).
//! - A window shape reads exactly the requirement's window, never a rolling window: the
//!   requirement is what the reader needs, and window_size is only a scheduling hint.
//! - Timestamp reads start at the earliest covered `complete_as_of` minus the shape's lookback
//!   (clamped to the domain); when the requirement needs a deletions date, `plan_delivery`
//!   starts no later than the earliest covered `deletions_as_of` that falls short of it, so
//!   that tombstones repair it (TRANS-18).
//! - PLANNER-15: an unknown shape name raises [`PlanningError`]; an explicit window overrides
//!   the rolling one and is read exactly as given; `until` must be admissible: every request
//!   is checked against the ledger, so `until` not later than a covered `complete_as_of`
//!   raises [`PlanningError`]. "Extended back to meet the last complete evidence" is defined
//!   in [`next_extraction`].
//! - PLANNER-17: a datetime `until` becomes a date window's end as its UTC calendar date;
//!   [`Shape::window_ending_at`] takes the window column's type.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value as Json;

use crate::contract::Contract;
use crate::error::{PlanningError, Problem};
use crate::ledger::{Ledger, Region};
use crate::manifest::{ManifestBuilder, Position, Since};
use crate::shape::{Checkpoint, Coverage, Deletions, Shape};
use crate::time::{Duration, Timestamp};
use crate::value::Window;
use crate::wire::{self, Form, Obj, Wire};

/// What a reader needs of one table (PLANNER-01): a minimum `complete_as_of`, optionally a
/// minimum `deletions_as_of`, over the whole table or over one closed window of the window
/// column.
///
/// ```
/// use dogana::{Requirement, Timestamp};
/// let ten: Timestamp = "2026-10-25T10:00:00Z".parse().unwrap();
/// let r = Requirement::new("orders", ten).with_deletions_as_of(ten);
/// assert_eq!(r.deletions_as_of(), Some(ten));
/// assert_eq!(r, Requirement::exact("orders", ten));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    pub(crate) table: String,
    pub(crate) complete_as_of: Timestamp,
    pub(crate) deletions_as_of: Option<Timestamp>,
    pub(crate) window: Option<Window>,
}

impl Requirement {
    /// Every row the source held at `complete_as_of` must be present, over the whole table.
    pub fn new(table: impl Into<String>, complete_as_of: Timestamp) -> Requirement {
        Requirement {
            table: table.into(),
            complete_as_of,
            deletions_as_of: None,
            window: None,
        }
    }

    /// Both dates at `p`: the table is the source at `p` (or later), what a query with
    /// negation or an exact aggregate needs (CLAIMS-15).
    pub fn exact(table: impl Into<String>, p: Timestamp) -> Requirement {
        Requirement::new(table, p).with_deletions_as_of(p)
    }

    /// What a reader at `now` with freshness `limit` needs: complete as of `now - limit`, the
    /// oldest `complete_as_of` its claims would not call expired (CLAIMS-04).
    pub fn fresh(table: impl Into<String>, now: Timestamp, limit: Duration) -> Requirement {
        Requirement::new(table, now.checked_sub(limit).unwrap_or(Timestamp::MIN))
    }

    /// Also requires no row deleted before `deletions_as_of` to be present.
    pub fn with_deletions_as_of(mut self, deletions_as_of: Timestamp) -> Requirement {
        self.deletions_as_of = Some(deletions_as_of);
        self
    }

    /// Requires the dates only over the closed `window` of the window column.
    pub fn with_window(mut self, window: Window) -> Requirement {
        self.window = Some(window);
        self
    }

    /// The table.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The minimum complete_as_of.
    pub fn complete_as_of(&self) -> Timestamp {
        self.complete_as_of
    }

    /// The minimum deletions_as_of, if required.
    pub fn deletions_as_of(&self) -> Option<Timestamp> {
        self.deletions_as_of
    }

    /// The window, or `None` for the whole table.
    pub fn window(&self) -> Option<&Window> {
        self.window.as_ref()
    }

    /// Whether `region`'s dates meet the requirement (PLANNER-02). An unknown region never does.
    pub fn is_met_by(&self, region: &Region) -> bool {
        region.dates().is_some_and(|d| {
            d.complete_as_of() >= self.complete_as_of
                && self
                    .deletions_as_of
                    .is_none_or(|need| d.deletions_as_of() >= need)
        })
    }

    /// The earliest boundary a read may have to establish the requirement (PLANNER-09).
    fn floor(&self) -> Timestamp {
        self.deletions_as_of
            .map_or(self.complete_as_of, |d| d.max(self.complete_as_of))
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "complete as of {}", self.complete_as_of)?;
        if let Some(d) = self.deletions_as_of {
            write!(f, " and deletions as of {d}")?;
        }
        match &self.window {
            Some(w) => write!(f, " over window {w} of table {:?}", self.table),
            None => write!(f, " over the whole table {:?}", self.table),
        }
    }
}

/// A request for one read (the extraction request): what a sender must read and declare.
///
/// - `shape`: the contract's shape to read through;
/// - `until`: the read boundary; the sender reads the source at that instant and declares it
///   as `produced_at` (PLANNER-18: only if the read saw the source at `until`);
/// - `window`: the closed window a window shape reads;
/// - `since`: where a read of changes starts: a time for timestamp shapes, the held position
///   for generation and sequence feeds.
///
/// [`Extraction::manifest`] starts the manifest of the read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Extraction {
    pub(crate) table: String,
    pub(crate) shape: String,
    pub(crate) until: Timestamp,
    pub(crate) window: Option<Window>,
    pub(crate) since: Option<Since>,
}

impl Extraction {
    /// A request from its fields.
    pub fn new(
        table: impl Into<String>,
        shape: impl Into<String>,
        until: Timestamp,
        window: Option<Window>,
        since: Option<Since>,
    ) -> Extraction {
        Extraction {
            table: table.into(),
            shape: shape.into(),
            until,
            window,
            since,
        }
    }

    /// The table to read.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The shape to read through.
    pub fn shape(&self) -> &str {
        &self.shape
    }

    /// The read boundary, to declare as `produced_at`.
    pub fn until(&self) -> Timestamp {
        self.until
    }

    /// The window, for a window shape.
    pub fn window(&self) -> Option<&Window> {
        self.window.as_ref()
    }

    /// Where a read of changes starts.
    pub fn since(&self) -> Option<&Since> {
        self.since.as_ref()
    }

    /// The manifest of the read this request asks for, stamped at `until`, with `rows` live
    /// rows: table, shape, produced_at, window and since as requested, and the contract's
    /// schema hash. The table is the request's, so a request for another table than
    /// `contract`'s is refused by the gate's `manifest` check (MAN-04).
    ///
    /// The caller adds what only the read knows: `tombstones`, `content_hash`, and for a
    /// feed the `generation` the read ends at and issues (a generation token, or for a
    /// sequence feed the integer position, at least `since`), which is unknown until the
    /// source is read. A complete whole-table read of a table with feeds may also issue one.
    ///
    /// ```
    /// use dogana::{Contract, LogicalType, Shape, Extraction};
    /// let c = Contract::builder("orders", ["id"]).shape("full", Shape::full())
    ///     .column("id", LogicalType::Int).build().unwrap();
    /// let until = "2026-10-25T00:00:00Z".parse().unwrap();
    /// let x = Extraction::new("orders", "full", until, None, None);
    /// let m = x.manifest(&c, 42).build().unwrap();
    /// assert_eq!(m.produced_at(), until);
    /// assert_eq!(m.rows(), 42);
    /// ```
    pub fn manifest(&self, contract: &Contract, rows: u64) -> ManifestBuilder {
        let mut b = crate::manifest::Manifest::builder(self.table.clone(), &self.shape, self.until)
            .rows(rows);
        if let Some(hash) = contract.schema_hash() {
            b = b.schema_hash(hash);
        }
        if let Some(w) = &self.window {
            b = b.window(w.clone());
        }
        if let Some(s) = &self.since {
            b = b.since(s.clone());
        }
        b
    }
}

impl fmt::Display for Extraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "read {:?} through shape {:?} at {}",
            self.table, self.shape, self.until
        )?;
        if let Some(w) = &self.window {
            write!(f, " over window {w}")?;
        }
        if let Some(s) = &self.since {
            write!(f, " since {s}")?;
        }
        Ok(())
    }
}

impl Wire for Requirement {
    const KIND: &'static str = "Requirement";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("table", Json::from(self.table.as_str()))
            .field("complete_as_of", wire::datetime(self.complete_as_of))
            .optional(
                "deletions_as_of",
                wire::opt(self.deletions_as_of, wire::datetime),
                self.deletions_as_of.is_none(),
            )
            .optional(
                "window",
                wire::opt(self.window.as_ref(), wire::window),
                self.window.is_none(),
            )
            .done()
    }
}

impl Wire for Extraction {
    const KIND: &'static str = "Extraction";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("table", Json::from(self.table.as_str()))
            .field("shape", Json::from(self.shape.as_str()))
            .field("until", wire::datetime(self.until))
            .optional(
                "window",
                wire::opt(self.window.as_ref(), wire::window),
                self.window.is_none(),
            )
            .optional(
                "since",
                wire::opt(self.since.as_ref(), wire::since),
                self.since.is_none(),
            )
            .done()
    }
}

/// A window must be of the window column's type, low end first (CLAIMS-03, DOMAIN-18).
pub(crate) fn check_window(contract: &Contract, field: &str, w: &Window) -> Result<(), Problem> {
    let Some(t) = contract.window_type() else {
        return Err(Problem::new(
            field,
            w,
            "CLAIMS-03",
            format!(
                "table {:?} has no window column, so nothing can be required or read over a window",
                contract.table()
            ),
        ));
    };
    for v in [&w.low, &w.high] {
        if v.logical_type() != t {
            return Err(Problem::new(
                field,
                v,
                "MAN-07",
                format!("a window is typed by the window column, {t}"),
            ));
        }
    }
    if w.low > w.high {
        return Err(Problem::new(
            field,
            w,
            "DOMAIN-18",
            "a window's low end is not after its high end",
        ));
    }
    Ok(())
}

fn regions_over(ledger: &Ledger, window: Option<&Window>) -> Vec<Region> {
    match window {
        Some(w) => ledger.regions_in(w),
        None => ledger.regions(),
    }
}

fn date_or_unknown(t: Option<Timestamp>) -> String {
    t.map_or_else(|| "unknown".to_owned(), |t| t.to_string())
}

/// The earliest boundary later than every covered complete_as_of and no earlier than `floor`
/// (PLANNER-09); `None` when a covered region is complete as of the domain's last instant.
fn boundary(covered: &[Region], floor: Timestamp) -> Option<Timestamp> {
    match covered.iter().filter_map(Region::complete_as_of).max() {
        None => Some(floor),
        Some(c) => c.successor().map(|s| s.max(floor)),
    }
}

fn describe(shape: &Shape) -> String {
    let kind = if shape.is_complete() {
        format!("complete {}", shape.coverage())
    } else {
        format!(
            "{} {} changes, deletions {}",
            shape.coverage(),
            shape.checkpoint(),
            shape.deletions()
        )
    };
    format!("{kind}, cost {}", shape.cost_value())
}

/// How one request is being derived: the names that go into every problem.
struct Ask<'a> {
    ledger: &'a Ledger,
    name: &'a str,
    shape: &'a Shape,
}

impl Ask<'_> {
    fn problem(&self, rule: &'static str, reason: impl Into<String>) -> Problem {
        Problem::new(
            format!("shapes.{}", self.name),
            describe(self.shape),
            rule,
            reason,
        )
    }

    /// Refuses a changed-only read over an unknown region (PLANNER-05, TRANS-04).
    fn known(&self, covered: &[Region], rule: &'static str) -> Result<(), Problem> {
        match covered.iter().find(|r| r.is_unknown()) {
            Some(r) => Err(self.problem(
                rule,
                format!(
                    "a read of changes needs a base, and region {} is unknown; a complete read of it comes first",
                    r.interval()
                ),
            )),
            None => Ok(()),
        }
    }

    /// The since of a keyless append: the contract's start_at on an untouched ledger
    /// (TRANS-05), else the one complete_as_of every covered region shares (PLANNER-13).
    fn append_since(
        &self,
        covered: &[Region],
        unknown_rule: &'static str,
    ) -> Result<Since, Problem> {
        if self.ledger.is_untouched() {
            return match self.ledger.contract().start_at() {
                Some(start) => Ok(Since::Time(start)),
                None => Err(self.problem(
                    "TRANS-05",
                    "the first append on an untouched ledger starts at the contract's start_at, and this contract declares none; a complete read comes first",
                )),
            };
        }
        self.known(covered, unknown_rule)?;
        let first = covered.first().and_then(Region::complete_as_of);
        if covered.iter().any(|r| r.complete_as_of() != first) {
            return Err(self.problem(
                "PLANNER-13",
                "an append continues where every covered region is complete, and the regions are complete as of different instants; a complete whole-table read levels them first (TRANS-07)",
            ));
        }
        Ok(Since::Time(first.expect("known regions")))
    }

    /// The held position a feed continues from (PLANNER-14, TRANS-09, TRANS-11).
    fn held(&self) -> Result<Since, Problem> {
        let held = self.ledger.generation();
        match (self.shape.checkpoint(), held) {
            (Checkpoint::Generation, Some(p @ Position::Token(_)))
            | (Checkpoint::Sequence, Some(p @ Position::Sequence(_))) => {
                Ok(Since::Position(p.clone()))
            }
            (Checkpoint::Generation, _) => Err(self.problem(
                "TRANS-09",
                format!(
                    "a generation read continues from the held generation, and the ledger holds {}; a complete whole-table read that issues a generation comes first",
                    held.map_or("none".to_owned(), |h| h.to_string())
                ),
            )),
            _ => Err(self.problem(
                "TRANS-11",
                format!(
                    "a sequence read continues from a held integer position, and the ledger holds {}; a complete whole-table read that issues one comes first",
                    held.map_or("none".to_owned(), |h| format!("the opaque {h}"))
                ),
            )),
        }
    }

    /// Applies the manifest the request implies, with no rows, and returns the ledger it
    /// leaves (PLANNER-04). A feed's issued position is unknown until read: a placeholder
    /// stands for it (a sequence read ending where it starts, an empty interval).
    fn simulate(&self, x: &Extraction, rule: &'static str) -> Result<Ledger, Problem> {
        let mut b = x.manifest(self.ledger.contract(), 0);
        match &x.since {
            Some(Since::Position(p @ Position::Sequence(_))) => b = b.generation(p.clone()),
            Some(Since::Position(Position::Token(_))) => {
                b = b.generation(Position::Token("planned".into()))
            }
            _ => {}
        }
        let m = b.build().map_err(|e| {
            self.problem(
                rule,
                format!("the request implies an invalid manifest: {}", e.problem()),
            )
        })?;
        self.ledger.apply(&m).map_err(|e| {
            self.problem(
                rule,
                format!(
                    "the ledger would refuse the read at {}: {}",
                    x.until, e.problem
                ),
            )
        })
    }

    fn extraction(
        &self,
        until: Timestamp,
        window: Option<Window>,
        since: Option<Since>,
    ) -> Extraction {
        Extraction::new(
            self.ledger.contract().table(),
            self.name,
            until,
            window,
            since,
        )
    }
}

/// The candidate request of one shape for a requirement, or why the shape cannot serve.
fn candidate(ask: &Ask<'_>, req: &Requirement) -> Result<Extraction, Problem> {
    let shape = ask.shape;
    let window = match (shape.coverage(), &req.window) {
        (Coverage::Window, None) => {
            return Err(ask.problem(
                "PLANNER-07",
                "a window shape meets only a requirement on a bounded window; this requirement is on the whole table, which needs a whole-table shape",
            ))
        }
        (Coverage::Window, Some(w)) => Some(w.clone()),
        (Coverage::Table, _) => None,
    };
    let covered = regions_over(ask.ledger, window.as_ref());
    let Some(until) = boundary(&covered, req.floor()) else {
        return Err(ask.problem(
            "PLANNER-09",
            "a covered region is complete as of the domain's last instant, so no boundary is later",
        ));
    };
    let contract = ask.ledger.contract();
    let since = match shape.checkpoint() {
        Checkpoint::None => None,
        Checkpoint::Timestamp if contract.is_keyless() => {
            Some(ask.append_since(&covered, "PLANNER-05")?)
        }
        Checkpoint::Timestamp => {
            ask.known(&covered, "PLANNER-05")?;
            let mut since = earliest_since(shape, &covered);
            if let (Some(need), Deletions::Tombstone) = (req.deletions_as_of, shape.deletions()) {
                // Tombstones repair d only where d >= since (TRANS-18): start no later than
                // every deletions date that falls short.
                if let Some(d) = covered
                    .iter()
                    .filter_map(Region::deletions_as_of)
                    .filter(|d| *d < need)
                    .min()
                {
                    since = since.min(d);
                }
            }
            Some(Since::Time(since))
        }
        Checkpoint::Generation | Checkpoint::Sequence => {
            ask.known(&covered, "PLANNER-05")?;
            if let Some(need) = req.deletions_as_of {
                let short = covered.iter().find(|r| {
                    r.dates().is_some_and(|d| {
                        d.deletions_as_of() < need
                            && (shape.deletions() == Deletions::None
                                || d.deletions_as_of() != d.complete_as_of())
                    })
                });
                if let Some(r) = short {
                    return Err(ask.problem(
                        "PLANNER-06",
                        format!(
                            "the requirement needs deletions as of {need}, and a feed starts from the held position and repairs deletions only where both dates are equal{}; region {} is at ({}, {})",
                            if shape.deletions() == Deletions::None { " (and this one carries no tombstones)" } else { "" },
                            r.interval(),
                            date_or_unknown(r.complete_as_of()),
                            date_or_unknown(r.deletions_as_of()),
                        ),
                    ));
                }
            }
            Some(ask.held()?)
        }
    };
    let x = ask.extraction(until, window, since);
    let after = ask.simulate(&x, "PLANNER-04")?;
    if let Some(r) = regions_over(&after, req.window.as_ref())
        .into_iter()
        .find(|r| !req.is_met_by(r))
    {
        return Err(ask.problem(
            "PLANNER-03",
            format!(
                "the read would leave region {} at ({}, {}), short of the requirement",
                r.interval(),
                date_or_unknown(r.complete_as_of()),
                date_or_unknown(r.deletions_as_of()),
            ),
        ));
    }
    Ok(x)
}

/// The earliest covered complete_as_of minus the shape's lookback, clamped to the domain
/// (PLANNER-12). The regions are known.
fn earliest_since(shape: &Shape, covered: &[Region]) -> Timestamp {
    let earliest = covered
        .iter()
        .filter_map(Region::complete_as_of)
        .min()
        .expect("a region covers any span");
    match shape.lookback_value() {
        Some(back) => earliest.checked_sub(back).unwrap_or(Timestamp::MIN),
        None => earliest,
    }
}

/// The cheapest read that establishes `requirement` on `ledger`, or `None` when the ledger
/// already meets it (PLANNER-02, PLANNER-03).
///
/// The requirement is met when every region over its window (the whole table without one) is
/// known with `complete_as_of >=` the required one and, if required, `deletions_as_of >=` the
/// required one. Otherwise every shape of the contract is a candidate, cheapest first (lowest
/// cost, ties by shape name in code-point order), and the first that establishes the
/// requirement is returned. A candidate:
///
/// - reads, for a window shape, exactly the requirement's window; a whole-table requirement
///   excludes window shapes (PLANNER-07);
/// - reads at the earliest boundary later than every `complete_as_of` its coverage touches
///   (1 µs later) and no earlier than the required dates (PLANNER-09); the extractor must read
///   at that boundary, which may be later than required, and may be later than the sender's
///   clock, in which case the sender waits;
/// - if changed-only, needs every covered region known (PLANNER-05), except the first keyless
///   append on an untouched ledger, which starts at the contract's `start_at` (TRANS-05);
/// - if a timestamp read, starts at the earliest covered `complete_as_of` minus its lookback,
///   and when deletions are required and it carries tombstones, no later than the earliest
///   covered `deletions_as_of` short of the requirement; a keyless append starts at the one
///   `complete_as_of` every covered region shares (PLANNER-13);
/// - if a feed, starts at the held position, and is excluded when the requirement needs a
///   deletions date it cannot reach: it repairs deletions only where both dates are equal, and
///   only with tombstones (PLANNER-06);
/// - is checked against the ledger by applying the manifest it implies with no rows, and is
///   excluded if refused (PLANNER-04) or if the ledger it leaves does not meet the
///   requirement.
///
/// When no shape fits, the [`PlanningError`] names why each candidate failed (PLANNER-08). A
/// requirement for another table than the ledger's (compared exactly, MAN-04) or with a window
/// the table cannot have is a [`PlanningError`] too.
///
/// ```
/// use dogana::{plan_delivery, Contract, Deletions, Ledger, LogicalType, Requirement, Shape};
/// let c = Contract::builder("orders", ["id"])
///     .shape("full", Shape::full().cost(10.0))
///     .shape("changes", Shape::changes(Deletions::Tombstone))
///     .cursor_column("updated_at").deleted_column("deleted")
///     .column("id", LogicalType::Int).column("updated_at", LogicalType::Datetime)
///     .column("deleted", LogicalType::Bool)
///     .build().unwrap();
/// let sunday = "2026-10-25T00:00:00Z".parse().unwrap();
/// let monday = "2026-10-26T00:00:00Z".parse().unwrap();
/// let ledger = Ledger::new(c.clone()).apply(&c.manifest("full", sunday).rows(9).build().unwrap()).unwrap();
/// assert_eq!(plan_delivery(&ledger, &Requirement::new("orders", sunday)).unwrap(), None);
/// let x = plan_delivery(&ledger, &Requirement::exact("orders", monday)).unwrap().unwrap();
/// assert_eq!((x.shape(), x.until()), ("changes", monday));
/// ```
pub fn plan_delivery(
    ledger: &Ledger,
    requirement: &Requirement,
) -> Result<Option<Extraction>, PlanningError> {
    let contract = ledger.contract();
    let fail = |p: Problem| PlanningError {
        goal: format!("establish {requirement}"),
        reasons: vec![p],
    };
    if requirement.table != contract.table() {
        return Err(fail(Problem::new(
            "table",
            format!("{:?}", requirement.table),
            "PLANNER-01",
            format!(
                "the ledger is of table {:?}; a requirement names its table exactly as manifests do (MAN-04)",
                contract.table()
            ),
        )));
    }
    if let Some(w) = &requirement.window {
        check_window(contract, "window", w).map_err(fail)?;
    }
    if regions_over(ledger, requirement.window.as_ref())
        .iter()
        .all(|r| requirement.is_met_by(r))
    {
        return Ok(None);
    }
    let mut shapes: Vec<(&String, &Shape)> = contract.shapes().iter().collect();
    shapes.sort_by(|a, b| {
        a.1.cost_value()
            .partial_cmp(&b.1.cost_value())
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.0.cmp(b.0))
    });
    let mut reasons = Vec::new();
    for (name, shape) in shapes {
        let ask = Ask {
            ledger,
            name,
            shape,
        };
        match candidate(&ask, requirement) {
            Ok(x) => return Ok(Some(x)),
            Err(p) => reasons.push(p),
        }
    }
    Err(PlanningError {
        goal: format!("establish {requirement}"),
        reasons,
    })
}

/// The rolling window moved back to meet the last complete evidence below it.
///
/// The last complete evidence is the highest region below the window's low end whose
/// complete_as_of is the latest of every region below it (a region straddling the low end
/// counts with its part below). Every region between that evidence and the window (older or
/// unknown) is read too: the low end moves to just above the evidence. Without a known region
/// below, or when the region just below is itself that evidence, the window stays.
fn extend_back(ledger: &Ledger, w: Window) -> Window {
    let regions = ledger.regions();
    let Some(i) = regions.iter().position(|r| r.contains(&w.low)) else {
        return w;
    };
    let straddles = regions[i].low().is_none_or(|l| *l < w.low);
    let below = &regions[..if straddles { i + 1 } else { i }];
    let Some(latest) = below.iter().filter_map(Region::complete_as_of).max() else {
        return w;
    };
    let mut low = w.low.clone();
    for r in below.iter().rev() {
        if r.complete_as_of() == Some(latest) {
            break;
        }
        match r.low() {
            Some(l) => low = l.clone(),
            None => break,
        }
    }
    Window::new(low, w.high)
}

/// The request for the next read through one named shape, at `until` (PLANNER-11 to
/// PLANNER-15).
///
/// - An unknown `shape_name` raises [`PlanningError`] (PLANNER-15).
/// - A window shape reads `window` when given, exactly (it overrides the rolling window);
///   otherwise the rolling window of its `window_size` ending at `until`
///   ([`Shape::window_ending_at`]; a date column takes `until`'s UTC calendar date,
///   PLANNER-17), extended back to meet the last complete evidence: the low end moves down to
///   just above the highest region below the window whose `complete_as_of` is the latest of
///   all regions below it, so that regions left older (or unknown) between that evidence and
///   the window, such as days a skipped run never read, are read too. A window shape without
///   `window_size` needs an explicit window; a whole-table shape takes none.
/// - A timestamp shape starts at the earliest covered `complete_as_of` minus its lookback,
///   clamped to the domain (PLANNER-12); every covered region must be known.
/// - An append (keyless timestamp shape) starts at the one `complete_as_of` every covered
///   region shares, or at the contract's `start_at` on an untouched ledger; otherwise
///   [`PlanningError`] (PLANNER-13).
/// - A generation feed starts at the held generation, a sequence feed at the held integer
///   position; none held (or an opaque one for a sequence) raises [`PlanningError`]
///   (PLANNER-14).
/// - A complete shape has no since.
///
/// The request is checked against the ledger (the manifest it implies, with no rows, must be
/// admitted), so `until` must be later than every covered `complete_as_of`; a request the
/// ledger would refuse raises [`PlanningError`] naming the transition rule (PLANNER-15).
///
/// ```
/// use dogana::{next_extraction, Contract, Duration, Ledger, LogicalType, Shape};
/// let c = Contract::builder("orders", ["id"])
///     .shape("full", Shape::full())
///     .shape("last3", Shape::window().size(Duration::from_days(3).unwrap()))
///     .window_column("order_date")
///     .column("id", LogicalType::Int).column("order_date", LogicalType::Date)
///     .build().unwrap();
/// let ledger = Ledger::new(c);
/// let x = next_extraction(&ledger, "last3", "2026-10-27T06:00:00Z".parse().unwrap(), None).unwrap();
/// assert_eq!(x.window().unwrap().to_string(), "[2026-10-25, 2026-10-27]");
/// ```
pub fn next_extraction(
    ledger: &Ledger,
    shape_name: &str,
    until: Timestamp,
    window: Option<&Window>,
) -> Result<Extraction, PlanningError> {
    let contract = ledger.contract();
    let goal = format!(
        "request the next read of {:?} through shape {shape_name:?} at {until}",
        contract.table()
    );
    let fail = |p: Problem| PlanningError {
        goal: goal.clone(),
        reasons: vec![p],
    };
    let Some(shape) = contract.shape(shape_name) else {
        let names: Vec<String> = contract
            .shapes()
            .keys()
            .map(|k| dogana_json::quoted(k, crate::NAME_MAX))
            .collect();
        return Err(fail(Problem::new(
            "shape",
            dogana_json::quoted(shape_name, crate::NAME_MAX),
            "PLANNER-15",
            format!(
                "the contract has no such shape; it has {}",
                names.join(", ")
            ),
        )));
    };
    let ask = Ask {
        ledger,
        name: shape_name,
        shape,
    };
    let window = match (shape.coverage(), window) {
        (Coverage::Table, Some(w)) => {
            return Err(fail(ask.problem(
                "PLANNER-15",
                format!("a whole-table shape reads no window, and {w} was given"),
            )))
        }
        (Coverage::Table, None) => None,
        (Coverage::Window, Some(w)) => {
            check_window(contract, "window", w).map_err(fail)?;
            Some(w.clone())
        }
        (Coverage::Window, None) => {
            if shape.window_size().is_none() {
                return Err(fail(ask.problem(
                    "PLANNER-11",
                    "the shape has no window_size, so it has no rolling window; pass the window to read",
                )));
            }
            let column = contract
                .window_type()
                .expect("a contract with a window shape types its window column");
            let rolling = shape
                .window_ending_at(until, column)
                .map_err(|e| fail(e.problem().clone()))?;
            Some(extend_back(ledger, rolling))
        }
    };
    let covered = regions_over(ledger, window.as_ref());
    let since = match shape.checkpoint() {
        Checkpoint::None => None,
        Checkpoint::Timestamp if contract.is_keyless() => {
            Some(ask.append_since(&covered, "TRANS-04").map_err(fail)?)
        }
        Checkpoint::Timestamp => {
            ask.known(&covered, "TRANS-04").map_err(fail)?;
            Some(Since::Time(earliest_since(shape, &covered)))
        }
        Checkpoint::Generation | Checkpoint::Sequence => {
            ask.known(&covered, "TRANS-04").map_err(fail)?;
            Some(ask.held().map_err(|mut p| {
                p.reason = format!("{} (PLANNER-14)", p.reason);
                fail(p)
            })?)
        }
    };
    let x = ask.extraction(until, window, since);
    ask.simulate(&x, "PLANNER-15").map_err(fail)?;
    Ok(x)
}

//! Claims: what a ledger says of its rows at a reader's time.

use std::fmt;

use crate::error::{invalid, InvalidContract};
use crate::ledger::{Ledger, Region};
use crate::time::{Duration, Timestamp};
use crate::value::Window;

/// A region's state at a reader's time, worst first (CLAIMS-06, CLAIMS-07).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    /// Nothing is proven.
    Unknown,
    /// Proven, but complete as of longer ago than the reader's limit.
    Expired,
    /// Complete later than its deletions date: may hold rows deleted in between.
    Patched,
    /// Both dates equal.
    Complete,
}

impl State {
    /// The wire spelling.
    pub fn name(self) -> &'static str {
        match self {
            State::Unknown => "unknown",
            State::Expired => "expired",
            State::Patched => "patched",
            State::Complete => "complete",
        }
    }

    /// The state a wire spelling stands for.
    pub fn from_name(name: &str) -> Option<State> {
        [
            State::Unknown,
            State::Expired,
            State::Patched,
            State::Complete,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }

    /// The state of a region at `now` with freshness `limit`. A region exactly `limit` old is
    /// not expired (CLAIMS-04); one proven after `now` is never expired (CLAIMS-12).
    pub fn of(region: &Region, now: Timestamp, limit: Duration) -> State {
        let Some(dates) = region.dates() else {
            return State::Unknown;
        };
        let expired = now
            .since(dates.complete_as_of())
            .is_some_and(|age| age > limit);
        if expired {
            State::Expired
        } else if dates.deletions_as_of() < dates.complete_as_of() {
            State::Patched
        } else {
            State::Complete
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One region's claim: the table, the region (cut to the reader's window) and its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionClaim {
    pub(crate) table: String,
    pub(crate) region: Region,
    pub(crate) state: State,
}

impl RegionClaim {
    /// A region's claim.
    pub fn new(table: impl Into<String>, region: Region, state: State) -> RegionClaim {
        RegionClaim {
            table: table.into(),
            region,
            state,
        }
    }

    /// The table.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The region.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Its state.
    pub fn state(&self) -> State {
        self.state
    }
}

impl fmt::Display for RegionClaim {
    /// The command line's region line (CLI-24). Written piece by piece: `dogana claims` prints
    /// one per region.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let date = |f: &mut fmt::Formatter<'_>, t: Option<Timestamp>| match t {
            Some(t) => fmt::Display::fmt(&t, f),
            None => f.write_str("unknown"),
        };
        f.write_str(&self.table)?;
        f.write_str(" ")?;
        self.region.write_interval(f)?;
        write!(f, ": {}; complete as of ", self.state)?;
        date(f, self.region.complete_as_of())?;
        f.write_str("; deletions as of ")?;
        date(f, self.region.deletions_as_of())
    }
}

/// The claims of one table, or of several read together, at a reader's time `at` with
/// freshness `limit`. The table-level state, dates and exact instant are derived from the
/// regions, never stored (CLAIMS-07, CLAIMS-08, GROUP-01).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub(crate) at: Timestamp,
    pub(crate) limit: Duration,
    pub(crate) regions: Vec<RegionClaim>,
}

impl Claims {
    /// Claims over these region claims.
    pub fn new(at: Timestamp, limit: Duration, regions: Vec<RegionClaim>) -> Claims {
        Claims { at, limit, regions }
    }

    /// The reader's time.
    pub fn at(&self) -> Timestamp {
        self.at
    }

    /// The freshness limit.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Every region's claim.
    pub fn regions(&self) -> &[RegionClaim] {
        &self.regions
    }

    /// The worst region's state (CLAIMS-07); `Unknown` when there are no regions.
    pub fn state(&self) -> State {
        self.regions
            .iter()
            .map(|r| r.state)
            .min()
            .unwrap_or(State::Unknown)
    }

    fn minimum(&self, date: impl Fn(&Region) -> Option<Timestamp>) -> Option<Timestamp> {
        let mut min: Option<Timestamp> = None;
        for r in &self.regions {
            let d = date(&r.region)?;
            min = Some(min.map_or(d, |m| m.min(d)));
        }
        min
    }

    /// The least complete_as_of over the regions, absent if any is unknown (CLAIMS-08).
    pub fn complete_as_of(&self) -> Option<Timestamp> {
        self.minimum(Region::complete_as_of)
    }

    /// The least deletions_as_of over the regions, absent if any is unknown (CLAIMS-08).
    pub fn deletions_as_of(&self) -> Option<Timestamp> {
        self.minimum(Region::deletions_as_of)
    }

    /// The instant p at which every region is exact, `(p, p)`, or `None` (GROUP-01). Freshness
    /// plays no part (GROUP-02).
    pub fn exact_as_of(&self) -> Option<Timestamp> {
        let first = self.regions.first()?.region.dates()?;
        let p = first.complete_as_of();
        self.regions
            .iter()
            .all(|r| {
                r.region
                    .dates()
                    .is_some_and(|d| d.complete_as_of() == p && d.deletions_as_of() == p)
            })
            .then_some(p)
    }

    /// The table line of the command line (CLI-26): `<table>: <state>; exact at <p>`.
    pub fn summary(&self, table: &str) -> String {
        summary(table, self.state(), self.exact_as_of())
    }
}

fn summary(table: &str, state: State, exact_as_of: Option<Timestamp>) -> String {
    match exact_as_of {
        Some(p) => format!("{table}: {state}; exact at {p}"),
        None => format!("{table}: {state}; exact at no single instant"),
    }
}

/// The table-level state and exact instant of claims, gathered one region at a time.
struct Summary {
    state: Option<State>,
    /// `None` before the first region; then the instant every region so far is exact at.
    exact: Option<Option<Timestamp>>,
}

impl Summary {
    fn add(&mut self, r: &Region, state: State) {
        self.state = Some(self.state.map_or(state, |s| s.min(state)));
        let exact_at = |p: Timestamp| {
            r.dates()
                .is_some_and(|d| d.complete_as_of() == p && d.deletions_as_of() == p)
        };
        self.exact = Some(match self.exact {
            None => r
                .dates()
                .map(|d| d.complete_as_of())
                .filter(|p| exact_at(*p)),
            Some(p) => p.filter(|p| exact_at(*p)),
        });
    }
}

impl Ledger {
    /// Like [`Ledger::claims`], but hands each region's claim to `each`, in order, instead of
    /// collecting them, and returns the table line [`Claims::summary`] gives for the same
    /// claims. A reader that prints the claims of a large ledger holds one at a time.
    ///
    /// ```
    /// # use dogana::{Contract, Duration, Ledger, LogicalType, Shape, State};
    /// let c = Contract::builder("t", ["id"]).shape("full", Shape::full())
    ///     .column("id", LogicalType::Int).build().unwrap();
    /// let mut lines = Vec::new();
    /// let at = "2026-10-25T00:00:00Z".parse().unwrap();
    /// let table = Ledger::new(c).each_claim(at, Duration::MAX, None, |r| lines.push(r.to_string())).unwrap();
    /// assert_eq!(lines, ["t (-inf, +inf): unknown; complete as of unknown; deletions as of unknown"]);
    /// assert_eq!(table, "t: unknown; exact at no single instant");
    /// ```
    pub fn each_claim(
        &self,
        now: Timestamp,
        limit: Duration,
        window: Option<&Window>,
        mut each: impl FnMut(&RegionClaim),
    ) -> Result<String, InvalidContract> {
        let table = self.contract().table();
        let mut summary = Summary {
            state: None,
            exact: None,
        };
        let mut claim = RegionClaim::new(table, Region::unbounded(), State::Unknown);
        let mut one = |r: Region| {
            claim.state = State::of(&r, now, limit);
            claim.region = r;
            summary.add(&claim.region, claim.state);
            each(&claim);
        };
        match window {
            None => self.for_each_region(&mut one),
            Some(w) => {
                self.check_claims_window(w)?;
                self.regions_in(w).into_iter().for_each(&mut one);
            }
        }
        Ok(self::summary(
            table,
            summary.state.unwrap_or(State::Unknown),
            summary.exact.flatten(),
        ))
    }

    fn check_claims_window(&self, w: &Window) -> Result<(), InvalidContract> {
        let t = self.contract().window_type().ok_or_else(|| {
            invalid(
                "window",
                w,
                "CLAIMS-03",
                "this table has no window column, so claims cannot be cut to a window",
            )
        })?;
        for v in [&w.low, &w.high] {
            if v.logical_type() != t {
                return Err(invalid(
                    "window",
                    v,
                    "CLAIMS-03",
                    format!("a window is typed by the window column, {t}"),
                ));
            }
        }
        if w.low > w.high {
            return Err(invalid(
                "window",
                w,
                "DOMAIN-18",
                "a window's low end is not after its high end",
            ));
        }
        Ok(())
    }

    /// The ledger's claims at the reader's `now` (CLAIMS-01): every region, cut to `window` if
    /// given, with its state under freshness `limit`. `Duration::MAX` expires nothing
    /// (CLAIMS-05).
    ///
    /// ```
    /// # use dogana::{Contract, Duration, Ledger, LogicalType, Shape, State};
    /// let c = Contract::builder("t", ["id"]).shape("full", Shape::full())
    ///     .column("id", LogicalType::Int).build().unwrap();
    /// let claims = Ledger::new(c).claims("2026-10-25T00:00:00Z".parse().unwrap(), Duration::MAX, None).unwrap();
    /// assert_eq!(claims.state(), State::Unknown);
    /// assert_eq!(claims.exact_as_of(), None);
    /// ```
    pub fn claims(
        &self,
        now: Timestamp,
        limit: Duration,
        window: Option<&Window>,
    ) -> Result<Claims, InvalidContract> {
        let regions = match window {
            None => self.regions(),
            Some(w) => {
                self.check_claims_window(w)?;
                self.regions_in(w)
            }
        };
        let table = self.contract().table().to_owned();
        let regions = regions
            .into_iter()
            .map(|r| {
                let state = State::of(&r, now, limit);
                RegionClaim::new(table.clone(), r, state)
            })
            .collect();
        Ok(Claims::new(now, limit, regions))
    }
}

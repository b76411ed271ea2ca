//! Shapes: the kinds of read a receiver accepts.

use std::fmt;

use crate::error::{invalid, InvalidContract};
use crate::time::{Duration, Timestamp};
use crate::value::{LogicalType, Value, Window};

/// What a read covers: the whole table or one closed window of the window column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coverage {
    /// The whole table.
    Table,
    /// One closed window of the window column.
    Window,
}

/// Where a read of changes starts, and how that point is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Checkpoint {
    /// A complete read: no checkpoint.
    None,
    /// A time: the read holds changes in `(since, produced_at]`.
    Timestamp,
    /// An opaque token the source hands out with each read.
    Generation,
    /// An integer position in the source's log.
    Sequence,
}

/// How a read reports deletions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Deletions {
    /// A complete read: a missing row was deleted.
    Absence,
    /// Not at all.
    None,
    /// By tombstones: rows whose deleted column is true.
    Tombstone,
}

macro_rules! wire_names {
    ($t:ident { $($v:ident => $n:literal),* }) => {
        impl $t {
            /// The wire spelling (WIRE-32).
            pub fn name(self) -> &'static str {
                match self { $($t::$v => $n),* }
            }
            /// The value a wire spelling stands for.
            pub fn from_name(name: &str) -> Option<$t> {
                match name { $($n => Some($t::$v),)* _ => None }
            }
            /// Every wire spelling, for error messages and schemas.
            pub const NAMES: &'static [&'static str] = &[$($n),*];
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
wire_names!(Coverage { Table => "table", Window => "window" });
wire_names!(Checkpoint { None => "none", Timestamp => "timestamp", Generation => "generation", Sequence => "sequence" });
wire_names!(Deletions { Absence => "absence", None => "none", Tombstone => "tombstone" });

/// One kind of read: its coverage, checkpoint and deletions, and its planning hints.
///
/// Build shapes with the constructors, one per kind of read, and the option methods:
///
/// ```
/// use dogana::{Deletions, Duration, Shape};
/// let full = Shape::full().cost(10.0);
/// let last3 = Shape::window().size(Duration::from_days(3).unwrap()).cost(2.0);
/// let changes = Shape::changes(Deletions::Tombstone);
/// assert!(changes.delivers_tombstones());
/// assert!(!full.is_changed_only());
/// assert_eq!(last3.cost_value(), 2.0);
/// ```
///
/// A shape's options are checked when a [`Contract`](crate::Contract) is built, against the
/// contract's columns (CONTRACT-29 to CONTRACT-41).
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub(crate) coverage: Coverage,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) deletions: Deletions,
    pub(crate) cost: f64,
    pub(crate) window_size: Option<Duration>,
    pub(crate) lookback: Option<Duration>,
}

impl Shape {
    /// The default cost of a shape (CONTRACT-33).
    pub const DEFAULT_COST: f64 = 1.0;

    /// A shape from its three properties, with default cost and no hints. Refuses the
    /// combinations the protocol does not have (CONTRACT-29, CONTRACT-30, CONTRACT-32).
    pub fn new(
        coverage: Coverage,
        checkpoint: Checkpoint,
        deletions: Deletions,
    ) -> Result<Shape, InvalidContract> {
        let shape = Shape {
            coverage,
            checkpoint,
            deletions,
            cost: Shape::DEFAULT_COST,
            window_size: None,
            lookback: None,
        };
        shape.check_kind("shape")?;
        Ok(shape)
    }

    fn of(coverage: Coverage, checkpoint: Checkpoint, deletions: Deletions) -> Shape {
        Shape {
            coverage,
            checkpoint,
            deletions,
            cost: Shape::DEFAULT_COST,
            window_size: None,
            lookback: None,
        }
    }

    /// A complete read of the whole table, such as a full dump.
    pub fn full() -> Shape {
        Shape::of(Coverage::Table, Checkpoint::None, Deletions::Absence)
    }

    /// A complete read of one window, such as every order dated in the last 30 days.
    pub fn window() -> Shape {
        Shape::of(Coverage::Window, Checkpoint::None, Deletions::Absence)
    }

    /// The rows of the whole table changed since a time; `deletions` is
    /// [`Deletions::None`] or [`Deletions::Tombstone`]. In a keyless contract with
    /// `Deletions::None` this is an append.
    pub fn changes(deletions: Deletions) -> Shape {
        Shape::of(Coverage::Table, Checkpoint::Timestamp, deletions)
    }

    /// The rows of one window changed since a time.
    pub fn window_changes(deletions: Deletions) -> Shape {
        Shape::of(Coverage::Window, Checkpoint::Timestamp, deletions)
    }

    /// A feed of the whole table from a generation token the source hands out.
    pub fn generations(deletions: Deletions) -> Shape {
        Shape::of(Coverage::Table, Checkpoint::Generation, deletions)
    }

    /// A feed of the whole table between two integer positions of the source's log.
    pub fn sequence(deletions: Deletions) -> Shape {
        Shape::of(Coverage::Table, Checkpoint::Sequence, deletions)
    }

    /// Sets the cost (nonnegative, finite; default 1).
    pub fn cost(mut self, cost: f64) -> Shape {
        self.cost = cost;
        self
    }

    /// Sets the rolling window size, a planning hint for window shapes.
    pub fn size(mut self, window_size: Duration) -> Shape {
        self.window_size = Some(window_size);
        self
    }

    /// Sets the lookback of a timestamp shape of a keyed contract.
    pub fn lookback(mut self, lookback: Duration) -> Shape {
        self.lookback = Some(lookback);
        self
    }

    /// Whole table or window.
    pub fn coverage(&self) -> Coverage {
        self.coverage
    }

    /// The checkpoint kind.
    pub fn checkpoint(&self) -> Checkpoint {
        self.checkpoint
    }

    /// How deletions are reported.
    pub fn deletions(&self) -> Deletions {
        self.deletions
    }

    /// The cost of asking for this read.
    pub fn cost_value(&self) -> f64 {
        self.cost
    }

    /// The rolling window size, if any.
    pub fn window_size(&self) -> Option<Duration> {
        self.window_size
    }

    /// The lookback, if any.
    pub fn lookback_value(&self) -> Option<Duration> {
        self.lookback
    }

    /// Whether the read holds only the rows changed since a checkpoint.
    pub fn is_changed_only(&self) -> bool {
        self.checkpoint != Checkpoint::None
    }

    /// Whether the read is complete over its coverage.
    pub fn is_complete(&self) -> bool {
        !self.is_changed_only()
    }

    /// Whether the read may carry tombstones.
    pub fn delivers_tombstones(&self) -> bool {
        self.deletions == Deletions::Tombstone
    }

    /// Whether the read is a feed: a generation or sequence checkpoint.
    pub fn is_feed(&self) -> bool {
        matches!(
            self.checkpoint,
            Checkpoint::Generation | Checkpoint::Sequence
        )
    }

    /// The combination of coverage, checkpoint and deletions is one of the ten shapes.
    pub(crate) fn check_kind(&self, field: &str) -> Result<(), InvalidContract> {
        let what = format!(
            "coverage {}, checkpoint {}, deletions {}",
            self.coverage, self.checkpoint, self.deletions
        );
        match (self.checkpoint, self.deletions) {
            (Checkpoint::None, Deletions::Absence) => {}
            (Checkpoint::None, _) => {
                return Err(invalid(
                    field,
                    what,
                    "CONTRACT-29",
                    "a complete shape (checkpoint none) reports deletions by absence",
                ))
            }
            (_, Deletions::Absence) => {
                return Err(invalid(
                    field,
                    what,
                    "CONTRACT-29",
                    "a changed-only shape reports deletions as none or tombstone, never absence",
                ))
            }
            _ => {}
        }
        if self.coverage == Coverage::Window && self.is_feed() {
            return Err(invalid(
                field,
                what,
                "CONTRACT-30",
                "generations and sequences are positions in the whole table; a window shape of changes uses a timestamp",
            ));
        }
        Ok(())
    }

    /// The closed rolling window of `window_size` that ends at `end` (PLANNER-16): for a date
    /// column, whole UTC calendar days including both ends, `end` taken as its UTC date
    /// (CONTRACT-38); for a datetime column, elapsed time including both ends, so the window
    /// starts at `end - size + 1µs` (CONTRACT-39). A start before the domain is clamped to it.
    ///
    /// ```
    /// use dogana::{Duration, LogicalType, Shape, Timestamp, Value};
    /// let shape = Shape::window().size(Duration::from_days(30).unwrap());
    /// let end: Timestamp = "2026-10-19T06:00:00Z".parse().unwrap();
    /// let w = shape.window_ending_at(end, LogicalType::Date).unwrap();
    /// assert_eq!(w.low.to_string(), "2026-09-20");
    /// assert_eq!(w.high.to_string(), "2026-10-19");
    /// ```
    pub fn window_ending_at(
        &self,
        end: Timestamp,
        column: LogicalType,
    ) -> Result<Window, InvalidContract> {
        let size = self.window_size.ok_or_else(|| {
            invalid(
                "window_size",
                "None",
                "PLANNER-16",
                "only a shape with a window_size has a rolling window",
            )
        })?;
        match column {
            LogicalType::Date => {
                let days = size.whole_days().ok_or_else(|| {
                    invalid(
                        "window_size",
                        size,
                        "CONTRACT-40",
                        "a date window's size is a whole number of days",
                    )
                })?;
                let high = end.date();
                let low = high
                    .checked_add_days(1 - days)
                    .unwrap_or(crate::time::Date::MIN);
                Ok(Window::new(low, high))
            }
            LogicalType::Datetime => {
                let back = Duration::from_micros(size.as_micros() - 1).unwrap_or(Duration::ZERO);
                let low = end.checked_sub(back).unwrap_or(Timestamp::MIN);
                Ok(Window::new(Value::Datetime(low), Value::Datetime(end)))
            }
            other => Err(invalid(
                "window_column",
                other,
                "CONTRACT-37",
                "a rolling window needs a date or datetime window column",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_shapes_exist() {
        // rule: CONTRACT-32
        let mut valid = 0;
        for cov in [Coverage::Table, Coverage::Window] {
            for cp in [
                Checkpoint::None,
                Checkpoint::Timestamp,
                Checkpoint::Generation,
                Checkpoint::Sequence,
            ] {
                for del in [Deletions::Absence, Deletions::None, Deletions::Tombstone] {
                    valid += usize::from(Shape::new(cov, cp, del).is_ok());
                }
            }
        }
        assert_eq!(valid, 10);
    }

    #[test]
    fn complete_shapes_report_absence() {
        // rule: CONTRACT-29
        let e = Shape::new(Coverage::Table, Checkpoint::None, Deletions::Tombstone).unwrap_err();
        assert_eq!(e.problem().rule, "CONTRACT-29");
        assert!(Shape::new(Coverage::Table, Checkpoint::Timestamp, Deletions::Absence).is_err());
    }

    #[test]
    fn window_feeds_are_refused() {
        // rule: CONTRACT-30
        let e = Shape::new(Coverage::Window, Checkpoint::Sequence, Deletions::None).unwrap_err();
        assert_eq!(e.problem().rule, "CONTRACT-30");
    }

    #[test]
    fn date_window_counts_both_ends() {
        // rule: CONTRACT-38
        let shape = Shape::window().size(Duration::from_days(30).unwrap());
        let w = shape
            .window_ending_at("2026-10-26T06:00:00Z".parse().unwrap(), LogicalType::Date)
            .unwrap();
        assert_eq!(w.to_string(), "[2026-09-27, 2026-10-26]");
    }

    #[test]
    fn datetime_window_is_elapsed_time_both_ends() {
        // rule: CONTRACT-39
        let shape = Shape::window().size(Duration::from_seconds(3600).unwrap());
        let end: Timestamp = "2026-10-26T06:00:00Z".parse().unwrap();
        let w = shape.window_ending_at(end, LogicalType::Datetime).unwrap();
        assert_eq!(
            w.low,
            Value::Datetime("2026-10-26T05:00:00.000001Z".parse().unwrap())
        );
        assert_eq!(w.high, Value::Datetime(end));
    }

    #[test]
    fn rolling_window_needs_a_time_column() {
        // rule: CONTRACT-37
        let shape = Shape::window().size(Duration::from_days(3).unwrap());
        let e = shape
            .window_ending_at(Timestamp::MIN, LogicalType::Int)
            .unwrap_err();
        assert_eq!(e.problem().rule, "CONTRACT-37");
    }
}

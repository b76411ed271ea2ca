//! The value domain: logical types, key and window values, and closed windows.

use std::fmt;

use crate::time::{Date, Timestamp};

/// The six logical type names a contract's `types` may use (DOMAIN-05).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogicalType {
    /// A signed integer.
    Int,
    /// A binary64 number; never a key or window column.
    Float,
    /// A Unicode string, ordered by code point.
    Str,
    /// A boolean; only the deleted column.
    Bool,
    /// A calendar date.
    Date,
    /// A UTC instant at microsecond resolution.
    Datetime,
}

impl LogicalType {
    /// Every type, in the order the protocol lists them.
    pub const ALL: [LogicalType; 6] = [
        LogicalType::Int,
        LogicalType::Float,
        LogicalType::Str,
        LogicalType::Bool,
        LogicalType::Date,
        LogicalType::Datetime,
    ];

    /// The protocol's name for the type: `int`, `float`, `str`, `bool`, `date` or `datetime`.
    pub fn name(self) -> &'static str {
        match self {
            LogicalType::Int => "int",
            LogicalType::Float => "float",
            LogicalType::Str => "str",
            LogicalType::Bool => "bool",
            LogicalType::Date => "date",
            LogicalType::Datetime => "datetime",
        }
    }

    /// The type a name stands for, if it is one of the six.
    pub fn from_name(name: &str) -> Option<LogicalType> {
        LogicalType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether values of this type can be keys and window bounds: ordered scalars with a
    /// successor (DOMAIN-06, DOMAIN-07).
    pub fn is_ordered_scalar(self) -> bool {
        matches!(
            self,
            LogicalType::Int | LogicalType::Str | LogicalType::Date | LogicalType::Datetime
        )
    }

    /// The least value of the type's domain, for ordered scalars.
    pub fn min_value(self) -> Option<Value> {
        match self {
            LogicalType::Int => Some(Value::Int(Value::INT_MIN)),
            LogicalType::Str => Some(Value::Str(String::new())),
            LogicalType::Date => Some(Value::Date(Date::MIN)),
            LogicalType::Datetime => Some(Value::Datetime(Timestamp::MIN)),
            LogicalType::Float | LogicalType::Bool => None,
        }
    }
}

impl fmt::Display for LogicalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A key or window value: an integer, a string, a date or a UTC datetime.
///
/// Values of one type are totally ordered: integers numerically, strings by code point
/// (DOMAIN-10), dates and datetimes in time. Values of different types never meet, because
/// every value is checked against the contract's `types` first; the derived order across types
/// only exists so that values can be map keys.
///
/// Integers are limited to the portable range `[-(2^53-1), 2^53-1]` (DOMAIN-14, WIRE-25): every
/// such integer is exact in binary64, so identities never round. Larger keys are typed `str`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    /// An integer in `[Value::INT_MIN, Value::INT_MAX]`.
    Int(i64),
    /// A string.
    Str(String),
    /// A date.
    Date(Date),
    /// A UTC datetime.
    Datetime(Timestamp),
}

impl Value {
    /// The least integer of the domain, -(2^53 - 1).
    pub const INT_MIN: i64 = -((1 << 53) - 1);
    /// The greatest integer of the domain, 2^53 - 1.
    pub const INT_MAX: i64 = (1 << 53) - 1;

    /// The logical type of the value.
    pub fn logical_type(&self) -> LogicalType {
        match self {
            Value::Int(_) => LogicalType::Int,
            Value::Str(_) => LogicalType::Str,
            Value::Date(_) => LogicalType::Date,
            Value::Datetime(_) => LogicalType::Datetime,
        }
    }

    /// Whether the value lies in its type's domain (integers in the portable range).
    pub fn in_domain(&self) -> bool {
        match self {
            Value::Int(i) => (Value::INT_MIN..=Value::INT_MAX).contains(i),
            _ => true,
        }
    }

    /// The least value greater than this one, or `None` at the end of the domain.
    /// Strings have no end: the successor of `s` is `s + "\0"` (DOMAIN-11).
    pub fn successor(&self) -> Option<Value> {
        match self {
            Value::Int(i) => (*i < Value::INT_MAX).then(|| Value::Int(i + 1)),
            Value::Str(s) => {
                let mut next = String::with_capacity(s.len() + 1);
                next.push_str(s);
                next.push('\0');
                Some(Value::Str(next))
            }
            Value::Date(d) => d.checked_add_days(1).map(Value::Date),
            Value::Datetime(t) => t.successor().map(Value::Datetime),
        }
    }

    /// The greatest value less than this one, if it exists. A string has one only when it ends
    /// in `"\0"`: below `"b"` lie infinitely many strings with no greatest.
    pub fn predecessor(&self) -> Option<Value> {
        match self {
            Value::Int(i) => (*i > Value::INT_MIN).then(|| Value::Int(i - 1)),
            Value::Str(s) => s
                .strip_suffix('\0')
                .map(|prefix| Value::Str(prefix.to_owned())),
            Value::Date(d) => d.checked_add_days(-1).map(Value::Date),
            Value::Datetime(t) => t.predecessor().map(Value::Datetime),
        }
    }

    /// Whether this is the least value of its type (DOMAIN-11, DOMAIN-13).
    pub fn is_min(&self) -> bool {
        Some(self) == self.logical_type().min_value().as_ref()
    }
}

impl fmt::Display for Value {
    /// Integers, dates and datetimes print as the protocol writes them; strings print quoted,
    /// with Rust's escapes, so that `""` and `"\0"` stay visible.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Date(d) => write!(f, "{d}"),
            Value::Datetime(t) => write!(f, "{t}"),
        }
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<Date> for Value {
    fn from(d: Date) -> Value {
        Value::Date(d)
    }
}

impl From<Timestamp> for Value {
    fn from(t: Timestamp) -> Value {
        Value::Datetime(t)
    }
}

/// A closed window `[low, high]` of the window column (DOMAIN-02). Equal ends are one
/// partition (DOMAIN-17).
///
/// A `Window` value only promises that both ends exist; that they share the window column's
/// type and that `low <= high` is checked against the contract (MAN-07, DOMAIN-18).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Window {
    /// The first value inside the window.
    pub low: Value,
    /// The last value inside the window.
    pub high: Value,
}

impl Window {
    /// The window `[low, high]`.
    pub fn new(low: impl Into<Value>, high: impl Into<Value>) -> Window {
        Window {
            low: low.into(),
            high: high.into(),
        }
    }

    /// Whether `v` lies inside the closed window.
    pub fn contains(&self, v: &Value) -> bool {
        &self.low <= v && v <= &self.high
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.low, self.high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_the_six() {
        // rule: DOMAIN-05
        let names: Vec<_> = LogicalType::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["int", "float", "str", "bool", "date", "datetime"]);
        assert_eq!(LogicalType::from_name("decimal(12,2)"), None);
        assert_eq!(LogicalType::from_name("Int"), None);
    }

    #[test]
    fn strings_order_by_code_point_without_normalization() {
        // rule: DOMAIN-10
        let nfc = Value::from("\u{e9}");
        let nfd = Value::from("e\u{301}");
        assert_ne!(nfc, nfd);
        assert!(nfd < nfc);
        // U+FF61 is below U+1F600 by code point (UTF-16 order would say otherwise).
        assert!(Value::from("\u{ff61}") < Value::from("\u{1f600}"));
        assert!(Value::from("Z") < Value::from("a"));
    }

    #[test]
    fn string_minimum_and_successor() {
        // rule: DOMAIN-11
        assert!(Value::from("").is_min());
        assert_eq!(Value::from("ab").successor(), Some(Value::from("ab\0")));
        assert_eq!(Value::from("ab\0").predecessor(), Some(Value::from("ab")));
        assert_eq!(Value::from("b").predecessor(), None);
        let s = Value::from("ab");
        let next = s.successor().unwrap();
        // nothing lies strictly between s and its successor
        assert!(s < next);
        assert!(!(Value::from("ab") < Value::from("ab\0") && Value::from("ab\0") < next));
    }

    #[test]
    fn integer_domain_is_portable_range() {
        // rule: DOMAIN-14
        assert_eq!(Value::Int(Value::INT_MAX).successor(), None);
        assert_eq!(Value::Int(Value::INT_MIN).predecessor(), None);
        assert!(Value::Int(Value::INT_MIN).is_min());
        assert!(!Value::Int(Value::INT_MAX + 1).in_domain());
        assert_eq!(Value::Int(41).successor(), Some(Value::Int(42)));
    }

    #[test]
    fn float_and_bool_are_not_ordered_scalars() {
        // rule: DOMAIN-07
        assert!(!LogicalType::Float.is_ordered_scalar());
        assert!(!LogicalType::Bool.is_ordered_scalar());
        assert!(LogicalType::Date.is_ordered_scalar());
    }

    #[test]
    fn equal_ends_are_one_partition() {
        // rule: DOMAIN-17
        let w = Window::new(7, 7);
        assert!(w.contains(&Value::Int(7)));
        assert!(!w.contains(&Value::Int(8)));
    }
}

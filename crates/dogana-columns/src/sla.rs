//! An ODCS document's service levels (`slaProperties`) checked against a table's claims
//! (`Ledger::claims`): whether the table meets each now, and since when it has not.
//!
//! How each property maps to the ledger's two dates (docs/decisions.md, "Service levels from
//! the ledger") is the table [`SLA_PROPERTIES`]:
//!
//! - `latency` (`ly`; `freshness`, its older name): the table's **complete as of** (the least
//!   over its regions) is at most `value unit` before now. Missed since that date plus the
//!   latency; missed with no date when some region was never proven complete.
//! - `frequency` (`fy`): the newest complete-as-of date of any region (the last delivery that
//!   proved something) is at most `value unit` before now; missed since that date plus the
//!   frequency.
//! - every other property (`retention`, `timeOfAvailability`, `availability`, the lifecycle
//!   dates…) is **not checkable** from a ledger, and reported as such with the reason: never
//!   passed in silence.
//!
//! No ODCS property speaks of deletions; the table's deletions-as-of date is reported beside
//! each verdict for the reader to see.

use dogana::{Claims, Duration, Timestamp};
use serde_json::Value;

use crate::odcs::SlaProperty;
use crate::{q, ColumnsError};

/// What a property asks of the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// The least complete-as-of date over the regions is recent enough.
    Latency,
    /// The newest complete-as-of date of any region is recent enough.
    Frequency,
    /// Nothing a ledger can answer; the reason.
    NotCheckable(&'static str),
}

/// ODCS SLA properties (their names and synonyms, compared without case) and what each asks of
/// the ledger. A property not listed is not checkable either.
pub const SLA_PROPERTIES: &[(&[&str], Measure)] = &[
    (&["latency", "ly", "freshness"], Measure::Latency),
    (&["frequency", "fy"], Measure::Frequency),
    (
        &["retention", "re"],
        Measure::NotCheckable(
            "the ledger records what deliveries proved, not how long the receiver keeps rows",
        ),
    ),
    (
        &["timeofavailability"],
        Measure::NotCheckable(
            "a time of day names no date of the ledger; check latency or frequency at that time instead",
        ),
    ),
    (
        &["generalavailability", "ga", "endofsupport", "es", "endoflife", "el"],
        Measure::NotCheckable("a lifecycle date of the contract, not of the data"),
    ),
    (
        &[
            "availability", "av", "throughput", "th", "errorrate", "er", "timetodetect", "td",
            "timetonotify", "tn", "timetorepair", "tr",
        ],
        Measure::NotCheckable("a property of the service, not of the data's dates"),
    ),
];

/// Units of an SLA's value (compared without case) and their length in seconds; None: no
/// fixed length (a month, a year).
pub const UNITS: &[(&[&str], Option<i64>)] = &[
    (&["s", "sec", "secs", "second", "seconds"], Some(1)),
    (&["min", "mins", "minute", "minutes"], Some(60)),
    (&["h", "hr", "hrs", "hour", "hours"], Some(3_600)),
    (&["d", "day", "days"], Some(86_400)),
    (&["w", "wk", "week", "weeks"], Some(604_800)),
    (
        &[
            "mo", "month", "months", "y", "yr", "yrs", "year", "years", "a",
        ],
        None,
    ),
];

/// What the ledger says of one SLA property of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The table meets it now.
    Met,
    /// The table misses it, since this instant (None: never met since some region was ever
    /// proven complete).
    Missed {
        /// When it stopped being met, when the claims tell.
        since: Option<Timestamp>,
    },
    /// The ledger cannot answer it; why.
    NotCheckable(String),
}

/// One SLA property, read: its measure and its length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The property as written, its value and unit (`latency 1 d`).
    pub shown: String,
    /// What it asks.
    pub measure: Measure,
    /// Its length, for a checkable measure with a unit of fixed length.
    pub length: Option<Duration>,
}

/// Reads one SLA property of document `doc`: a checkable one needs a positive number and a
/// unit of fixed length (a month or a year makes it not checkable); any other is kept as not
/// checkable.
pub fn requirement(doc: &str, sla: &SlaProperty) -> Result<Requirement, ColumnsError> {
    let value_text = match &sla.value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let shown = match &sla.unit {
        Some(u) => format!("{} {value_text} {u}", sla.property),
        None => format!("{} {value_text}", sla.property),
    };
    let lower = sla.property.to_ascii_lowercase();
    let measure = SLA_PROPERTIES
        .iter()
        .find(|(names, _)| names.contains(&lower.as_str()))
        .map_or(
            Measure::NotCheckable("not an ODCS SLA property dogana knows"),
            |(_, m)| *m,
        );
    if let Measure::NotCheckable(_) = measure {
        return Ok(Requirement {
            shown,
            measure,
            length: None,
        });
    }
    let at = || {
        format!(
            "ODCS document {doc}: slaProperties[{}] ({})",
            sla.index,
            q(&sla.property)
        )
    };
    let number = match &sla.value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    let Some(number) = number.filter(|n| n.is_finite() && *n > 0.0) else {
        return Err(ColumnsError::Document(format!(
            "{}: value {} is not a positive number; write it as value: 1 with unit: d",
            at(),
            q(&value_text)
        )));
    };
    let Some(unit) = &sla.unit else {
        return Err(ColumnsError::Document(format!(
            "{}: value {value_text} has no unit; add unit: d (or s, min, h, w)",
            at()
        )));
    };
    let unit_lower = unit.to_ascii_lowercase();
    let Some((_, seconds)) = UNITS
        .iter()
        .find(|(names, _)| names.contains(&unit_lower.as_str()))
    else {
        return Err(ColumnsError::Document(format!(
            "{}: unit {} is not a unit of time dogana reads (s, min, h, d, w; mo, y or a make it not checkable)",
            at(),
            q(unit)
        )));
    };
    let Some(seconds) = seconds else {
        return Ok(Requirement {
            shown,
            measure: Measure::NotCheckable(
                "months and years have no fixed length; write the value in days",
            ),
            length: None,
        });
    };
    let length = Duration::from_seconds_f64(number * *seconds as f64)
        .map_err(|e| ColumnsError::Document(format!("{}: value {value_text} {unit}: {e}", at())))?;
    Ok(Requirement {
        shown,
        measure,
        length: Some(length),
    })
}

/// The newest complete-as-of date over the claims' regions (None when none has one).
pub fn newest_complete_as_of(claims: &Claims) -> Option<Timestamp> {
    claims
        .regions()
        .iter()
        .filter_map(|r| r.region().complete_as_of())
        .max()
}

/// Whether `claims` (taken at `now`) meet `req`.
pub fn check(req: &Requirement, claims: &Claims, now: Timestamp) -> Status {
    let (date, length) = match (req.measure, req.length) {
        (Measure::NotCheckable(why), _) => return Status::NotCheckable(why.to_owned()),
        (_, None) => return Status::NotCheckable("no length".to_owned()),
        (Measure::Latency, Some(l)) => (claims.complete_as_of(), l),
        (Measure::Frequency, Some(l)) => (newest_complete_as_of(claims), l),
    };
    match date {
        None => Status::Missed { since: None },
        Some(d) => match d.checked_add(length) {
            // a deadline beyond the protocol's last instant is never passed
            None => Status::Met,
            Some(deadline) if deadline >= now => Status::Met,
            Some(deadline) => Status::Missed {
                since: Some(deadline),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sla(property: &str, value: Value, unit: Option<&str>) -> SlaProperty {
        SlaProperty {
            index: 0,
            property: property.into(),
            value,
            unit: unit.map(str::to_owned),
            element: None,
        }
    }

    #[test]
    fn units_are_read_case_by_case() {
        for (names, seconds) in UNITS {
            for unit in *names {
                let r = requirement("d", &sla("latency", json!(2), Some(unit))).unwrap();
                match seconds {
                    Some(s) => {
                        assert_eq!(
                            r.length,
                            Some(Duration::from_seconds(2 * s).unwrap()),
                            "{unit}"
                        );
                        assert_eq!(r.measure, Measure::Latency);
                    }
                    None => assert!(matches!(r.measure, Measure::NotCheckable(_)), "{unit}"),
                }
                let upper = unit.to_ascii_uppercase();
                assert_eq!(
                    requirement("d", &sla("Latency", json!(2), Some(&upper)))
                        .unwrap()
                        .length,
                    r.length
                );
            }
        }
    }

    #[test]
    fn properties_map_case_by_case() {
        for (names, measure) in SLA_PROPERTIES {
            for name in *names {
                let r = requirement("d", &sla(name, json!("1.5"), Some("h"))).unwrap();
                assert_eq!(r.measure, *measure, "{name}");
            }
        }
        let r = requirement("d", &sla("customThing", json!(1), None)).unwrap();
        assert_eq!(
            r.measure,
            Measure::NotCheckable("not an ODCS SLA property dogana knows")
        );
    }

    #[test]
    fn a_checkable_property_with_a_bad_value_is_refused() {
        let e = requirement("x.yaml", &sla("latency", json!("soon"), Some("d"))).unwrap_err();
        assert!(
            e.to_string()
                .contains("value \"soon\" is not a positive number"),
            "{e}"
        );
        let e = requirement("x.yaml", &sla("latency", json!(1), None)).unwrap_err();
        assert!(e.to_string().contains("has no unit"), "{e}");
        let e = requirement("x.yaml", &sla("frequency", json!(1), Some("fortnight"))).unwrap_err();
        assert!(
            e.to_string()
                .contains("unit \"fortnight\" is not a unit of time"),
            "{e}"
        );
    }
}

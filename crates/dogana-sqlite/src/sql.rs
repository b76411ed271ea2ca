//! SQLite's column types. Identifiers are quoted by `dogana_receiver::sql`.

use dogana::LogicalType;

/// The SQLite column type a column of this type name is published as: `int` and `bool` as
/// INTEGER, `float` as REAL, everything else (`str`, `date`, `datetime`, `decimal(p,s)`,
/// unknown names) as TEXT. Dates are `YYYY-MM-DD` and datetimes the protocol's UTC form
/// (`2026-10-26T06:00:00+00:00`, six fractional digits when not zero), so text order is time
/// order; a decimal stays exact as its text.
///
/// ```
/// assert_eq!(dogana_sqlite::sql_type("int"), "INTEGER");
/// assert_eq!(dogana_sqlite::sql_type("decimal(12,2)"), "TEXT");
/// ```
pub fn sql_type(type_name: &str) -> &'static str {
    match LogicalType::from_name(type_name) {
        Some(LogicalType::Int | LogicalType::Bool) => "INTEGER",
        Some(LogicalType::Float) => "REAL",
        _ => "TEXT",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn datetime_text_sorts_as_time() {
        let a: dogana::Timestamp = "2026-10-18T00:00:00Z".parse().unwrap();
        let b: dogana::Timestamp = "2026-10-18T00:00:00.000001Z".parse().unwrap();
        let c: dogana::Timestamp = "2026-10-18T00:00:00.999999Z".parse().unwrap();
        let d: dogana::Timestamp = "2026-10-18T00:00:01Z".parse().unwrap();
        let texts: Vec<String> = [a, b, c, d].iter().map(|t| t.to_string()).collect();
        let mut sorted = texts.clone();
        sorted.sort();
        assert_eq!(texts, sorted);
    }
}

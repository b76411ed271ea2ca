//! SQL type names and the dogana column type each maps to (CONTRACT-19): the one table that a
//! dbt `data_type`, an ODCS `physicalType` and a live table's catalog type are read through.
//!
//! The table is data ([`SQL_TYPES`]); `docs/contract-toml.md` prints the same table and a
//! test reads it from there. A name is compared in lower case, its spaces collapsed, with its
//! parenthesised arguments taken apart: `CHARACTER VARYING(20)` is `character varying` with
//! `20`, `timestamp(6) with time zone` is `timestamp with time zone` with `6`,
//! `NUMERIC(12, 2)` is `numeric` with `12,2`. A name the table does not hold has no dogana
//! name and is refused, never guessed.

use std::fmt;

use dogana_rows::ColumnType;

/// What a family of SQL types maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `int`: integers that fit 64 signed bits.
    Int,
    /// `float`: binary floating point.
    Float,
    /// `str`: text.
    Str,
    /// `bool`.
    Bool,
    /// `date`: a calendar date.
    Date,
    /// `datetime`: a timestamp, with or without a time zone.
    Datetime,
    /// `decimal(p,s)`: an exact decimal; the precision and scale are the type's arguments,
    /// `(p,s)`, or `(p)` for a scale of 0. Without them it has no dogana name.
    Decimal,
}

/// The SQL type names (lower case) of each [`Target`], in the order docs/contract-toml.md
/// lists them. A name may carry arguments, `(n)` or `(p,s)`: a length, a precision, ignored
/// except by a decimal, whose `(p,s)` is its type.
pub const SQL_TYPES: &[(Target, &[&str])] = &[
    (
        Target::Int,
        &[
            "tinyint",
            "smallint",
            "mediumint",
            "int",
            "integer",
            "bigint",
            "int1",
            "int2",
            "int4",
            "int8",
            "utinyint",
            "usmallint",
            "uinteger",
        ],
    ),
    (
        Target::Float,
        &[
            "real",
            "float",
            "float4",
            "float8",
            "double",
            "double precision",
        ],
    ),
    (
        Target::Str,
        &[
            "text",
            "varchar",
            "char",
            "character",
            "character varying",
            "nvarchar",
            "nchar",
            "bpchar",
            "string",
            "clob",
        ],
    ),
    (Target::Bool, &["boolean", "bool"]),
    (Target::Date, &["date"]),
    (
        Target::Datetime,
        &[
            "timestamp",
            "timestamptz",
            "timestamp with time zone",
            "timestamp without time zone",
            "datetime",
            "datetime2",
            "timestamp_tz",
            "timestamp_ltz",
            "timestamp_ntz",
            "timestamp_s",
            "timestamp_ms",
            "timestamp_ns",
        ],
    ),
    (Target::Decimal, &["decimal", "numeric", "number", "dec"]),
];

/// Why a SQL type name has no dogana name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmapped {
    /// The name is empty (a column declared without a type).
    Empty,
    /// A decimal without its precision and scale: which exact decimal it is is not said.
    DecimalWithoutPrecision,
    /// A decimal whose `(p,s)` is not a dogana decimal (p above 38, s above p, not numbers).
    BadDecimal(String),
    /// The table holds no such name.
    Unknown,
}

impl fmt::Display for Unmapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unmapped::Empty => f.write_str("no type is declared"),
            Unmapped::DecimalWithoutPrecision => f.write_str(
                "an exact decimal without precision and scale has no dogana name; declare it as decimal(p,s), as in numeric(12,2)",
            ),
            Unmapped::BadDecimal(why) => write!(f, "{why}"),
            Unmapped::Unknown => f.write_str(
                "it has no dogana name (the SQL types dogana maps are listed in docs/contract-toml.md, \"Column types from elsewhere\")",
            ),
        }
    }
}

/// A SQL type name taken apart: its base name (lower case, spaces collapsed) and the text of
/// its parenthesised arguments, spaces removed, if any.
fn split(name: &str) -> (String, Option<String>) {
    let lower = name.trim().to_ascii_lowercase();
    let (base, args) = match (lower.find('('), lower.rfind(')')) {
        (Some(open), Some(close)) if open < close => (
            format!("{} {}", &lower[..open], &lower[close + 1..]),
            Some(
                lower[open + 1..close]
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect(),
            ),
        ),
        _ => (lower, None),
    };
    (base.split_whitespace().collect::<Vec<_>>().join(" "), args)
}

/// The [`Target`] a SQL type name's family maps to, without its arguments; None when the
/// table holds no such name.
pub fn target(name: &str) -> Option<Target> {
    let (base, _) = split(name);
    SQL_TYPES
        .iter()
        .find(|(_, names)| names.contains(&base.as_str()))
        .map(|(t, _)| *t)
}

/// The dogana column type of a SQL type name.
///
/// ```
/// use dogana_columns::sql_types::{column_type, Unmapped};
/// use dogana_rows::ColumnType;
/// assert_eq!(column_type("BIGINT"), Ok(ColumnType::Int));
/// assert_eq!(column_type("NUMERIC(12, 2)"), Ok(ColumnType::Decimal { precision: 12, scale: 2 }));
/// assert_eq!(column_type("timestamp(3) with time zone"), Ok(ColumnType::Datetime));
/// assert_eq!(column_type("numeric"), Err(Unmapped::DecimalWithoutPrecision));
/// assert_eq!(column_type("uuid"), Err(Unmapped::Unknown));
/// ```
pub fn column_type(name: &str) -> Result<ColumnType, Unmapped> {
    if name.trim().is_empty() {
        return Err(Unmapped::Empty);
    }
    let (_, args) = split(name);
    Ok(match target(name).ok_or(Unmapped::Unknown)? {
        Target::Int => ColumnType::Int,
        Target::Float => ColumnType::Float,
        Target::Str => ColumnType::Str,
        Target::Bool => ColumnType::Bool,
        Target::Date => ColumnType::Date,
        Target::Datetime => ColumnType::Datetime,
        Target::Decimal => {
            let args = args
                .filter(|a| !a.is_empty())
                .ok_or(Unmapped::DecimalWithoutPrecision)?;
            let spelled = if args.contains(',') {
                format!("decimal({args})")
            } else {
                format!("decimal({args},0)")
            };
            spelled
                .parse::<ColumnType>()
                .map_err(|e| Unmapped::BadDecimal(e.to_string()))?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: CONTRACT-19
    #[test]
    fn every_name_of_the_table_maps_to_its_target() {
        for (target, names) in SQL_TYPES {
            for name in *names {
                let spelled = if *target == Target::Decimal {
                    format!("{name}(10,3)")
                } else {
                    name.to_string()
                };
                let want = match target {
                    Target::Int => ColumnType::Int,
                    Target::Float => ColumnType::Float,
                    Target::Str => ColumnType::Str,
                    Target::Bool => ColumnType::Bool,
                    Target::Date => ColumnType::Date,
                    Target::Datetime => ColumnType::Datetime,
                    Target::Decimal => ColumnType::Decimal {
                        precision: 10,
                        scale: 3,
                    },
                };
                assert_eq!(column_type(&spelled), Ok(want), "{spelled}");
                assert_eq!(
                    column_type(&spelled.to_ascii_uppercase()),
                    Ok(want),
                    "{spelled}"
                );
            }
        }
    }

    // rule: CONTRACT-19
    #[test]
    fn spellings_case_spaces_and_arguments() {
        let cases = [
            ("CHARACTER VARYING(20)", Ok(ColumnType::Str)),
            ("  character   varying ( 20 ) ", Ok(ColumnType::Str)),
            ("timestamp(6) with time zone", Ok(ColumnType::Datetime)),
            ("TIMESTAMP WITHOUT TIME ZONE", Ok(ColumnType::Datetime)),
            (
                "DECIMAL(12, 2)",
                Ok(ColumnType::Decimal {
                    precision: 12,
                    scale: 2,
                }),
            ),
            (
                "number(9)",
                Ok(ColumnType::Decimal {
                    precision: 9,
                    scale: 0,
                }),
            ),
            ("double precision", Ok(ColumnType::Float)),
            ("numeric", Err(Unmapped::DecimalWithoutPrecision)),
            ("numeric()", Err(Unmapped::DecimalWithoutPrecision)),
            ("", Err(Unmapped::Empty)),
            ("uuid", Err(Unmapped::Unknown)),
            ("hugeint", Err(Unmapped::Unknown)),
            ("time", Err(Unmapped::Unknown)),
            ("blob", Err(Unmapped::Unknown)),
            ("struct(a integer)", Err(Unmapped::Unknown)),
            ("integer[]", Err(Unmapped::Unknown)),
        ];
        for (name, want) in cases {
            assert_eq!(column_type(name), want, "{name:?}");
        }
    }

    // rule: CONTRACT-16
    #[test]
    fn a_decimal_beyond_dogana_is_refused_with_the_reason() {
        for name in ["numeric(50,2)", "decimal(2,5)", "decimal(a,b)"] {
            match column_type(name) {
                Err(Unmapped::BadDecimal(why)) => {
                    assert!(why.contains("is not a column type"), "{name}: {why}")
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}

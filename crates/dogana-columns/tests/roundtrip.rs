//! The same columns written in each source's form read back as the same columns, so they hash
//! alike on every path: any list of columns, as an ODCS document (YAML and JSON), as a dbt
//! manifest and as a catalog's rows, each type spelled by any of the names that map to it.

use dogana_columns::odcs::{self, Format};
use dogana_columns::sql_types::{Target, SQL_TYPES};
use dogana_columns::{catalog, dbt};
use dogana_rows::ColumnType;
use proptest::prelude::*;
use serde_json::{json, Value};

fn column_type() -> impl Strategy<Value = ColumnType> {
    prop_oneof![
        Just(ColumnType::Int),
        Just(ColumnType::Float),
        Just(ColumnType::Str),
        Just(ColumnType::Bool),
        Just(ColumnType::Date),
        Just(ColumnType::Datetime),
        (1u8..=38)
            .prop_flat_map(|p| (Just(p), 0..=p))
            .prop_map(|(precision, scale)| { ColumnType::Decimal { precision, scale } }),
    ]
}

/// Unique names: letters, digits, spaces, quotes and non-ASCII, as a catalog may hold them.
fn columns() -> impl Strategy<Value = Vec<(String, ColumnType)>> {
    prop::collection::vec(("[a-zA-Z_é\" 0-9]{1,12}", column_type()), 1..12).prop_map(|v| {
        let mut seen = std::collections::HashSet::new();
        v.into_iter()
            .filter(|(n, _)| seen.insert(n.clone()))
            .collect()
    })
}

fn target(t: ColumnType) -> Target {
    match t {
        ColumnType::Int => Target::Int,
        ColumnType::Float => Target::Float,
        ColumnType::Str => Target::Str,
        ColumnType::Bool => Target::Bool,
        ColumnType::Date => Target::Date,
        ColumnType::Datetime => Target::Datetime,
        ColumnType::Decimal { .. } => Target::Decimal,
    }
}

/// A SQL spelling of `t`: the `pick`-th name of its family, in upper case when `upper`.
fn sql_name(t: ColumnType, pick: usize, upper: bool) -> String {
    let names = SQL_TYPES
        .iter()
        .find(|(tt, _)| *tt == target(t))
        .expect("every target has names")
        .1;
    let name = names[pick % names.len()];
    let spelled = match t {
        ColumnType::Decimal { precision, scale } => format!("{name}({precision}, {scale})"),
        _ => name.to_owned(),
    };
    if upper {
        spelled.to_ascii_uppercase()
    } else {
        spelled
    }
}

/// An ODCS property for `t`: a decimal by its physical type, a datetime or date by either.
fn property(name: &str, t: ColumnType, pick: usize) -> Value {
    let logical = match t {
        ColumnType::Int => "integer",
        ColumnType::Float => "number",
        ColumnType::Str => "string",
        ColumnType::Bool => "boolean",
        ColumnType::Date => "date",
        ColumnType::Datetime => "timestamp",
        ColumnType::Decimal { .. } => "number",
    };
    match t {
        ColumnType::Decimal { .. } | ColumnType::Datetime | ColumnType::Date if pick % 2 == 0 => {
            json!({"name": name, "logicalType": logical, "physicalType": sql_name(t, pick, pick % 3 == 0)})
        }
        ColumnType::Decimal { .. } => {
            json!({"name": name, "logicalType": "number", "physicalType": sql_name(t, pick, false)})
        }
        _ => json!({"name": name, "logicalType": logical}),
    }
}

proptest! {
    #[test]
    fn every_source_reads_the_columns_it_was_written_from(
        cols in columns(),
        picks in prop::collection::vec(0usize..64, 12),
    ) {
        // rule: CONTRACT-16, CONTRACT-19
        let pick = |i: usize| picks[i % picks.len()];
        let props: Vec<Value> = cols.iter().enumerate().map(|(i, (n, t))| property(n, *t, pick(i))).collect();
        let doc = json!({"apiVersion": "v3.1.0", "kind": "DataContract", "schema": [{"name": "t", "properties": props}]});
        let from_json = odcs::parse(&doc.to_string(), Format::Json, "d.json").unwrap().columns("t").unwrap();
        let yaml = serde_norway::to_string(&doc).unwrap();
        let from_yaml = odcs::parse(&yaml, Format::Yaml, "d.yaml").unwrap().columns("t").unwrap();

        // a dbt manifest's columns, in order (not key order)
        let mut dbt_columns = String::from("{");
        for (i, (n, t)) in cols.iter().enumerate() {
            if i > 0 { dbt_columns.push(','); }
            let key = serde_json::to_string(n).unwrap();
            let col = json!({"name": n, "data_type": sql_name(*t, pick(i) + 1, pick(i) % 2 == 1)});
            dbt_columns.push_str(&format!("{key}: {col}"));
        }
        dbt_columns.push('}');
        let manifest = format!(r#"{{"nodes": {{"model.p.t": {{"resource_type": "model", "name": "t", "columns": {dbt_columns}}}}}}}"#);
        let from_dbt = dbt::columns(&manifest, "m.json", "t").unwrap();

        let rows: Vec<(String, String)> = cols.iter().enumerate().map(|(i, (n, t))| (n.clone(), sql_name(*t, pick(i) + 2, pick(i) % 2 == 0))).collect();
        let from_catalog = catalog::columns("store s", "t", Some(rows)).unwrap();

        let want: Vec<(String, ColumnType)> = cols.clone();
        prop_assert_eq!(from_json.iter().cloned().collect::<Vec<_>>(), want);
        prop_assert_eq!(&from_yaml, &from_json);
        prop_assert_eq!(&from_dbt, &from_json);
        prop_assert_eq!(&from_catalog, &from_json);
        let pairs: Vec<(String, String)> = cols.iter().map(|(n, t)| (n.clone(), t.to_string())).collect();
        prop_assert_eq!(from_json.hash(), dogana::column_hash(&pairs));
    }
}

//! The mapping tables are data, written twice: in the code and in the documents people read.
//! These tests read the documents' tables and compare them with the code's, row by row.

use dogana_columns::odcs::LOGICAL_TYPES;
use dogana_columns::sla::{Measure, SLA_PROPERTIES};
use dogana_columns::sql_types::{Target, SQL_TYPES};

fn doc(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The rows of the table after the comment `<!-- MARKER…` up to `<!-- end -->`, header and rule
/// left out, each as its cells with the backquotes removed.
fn table(text: &str, marker: &str) -> Vec<Vec<String>> {
    let start = text
        .find(&format!("<!-- {marker}"))
        .unwrap_or_else(|| panic!("no <!-- {marker} in the document"));
    let body = &text[start..];
    let end = body.find("<!-- end -->").expect("<!-- end -->");
    body[..end]
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().replace('`', ""))
                .collect()
        })
        .collect()
}

fn target_name(t: Target) -> &'static str {
    match t {
        Target::Int => "int",
        Target::Float => "float",
        Target::Str => "str",
        Target::Bool => "bool",
        Target::Date => "date",
        Target::Datetime => "datetime",
        Target::Decimal => "decimal(p,s)",
    }
}

#[test]
fn the_sql_type_table_of_contract_toml_md_is_the_code_s() {
    // rule: CONTRACT-19
    let rows = table(&doc("contract-toml.md"), "sql-types");
    let code: Vec<Vec<String>> = SQL_TYPES
        .iter()
        .map(|(t, names)| vec![target_name(*t).to_owned(), names.join(", ")])
        .collect();
    assert_eq!(rows, code);
}

#[test]
fn the_odcs_logical_type_table_of_contract_toml_md_is_the_code_s() {
    // rule: CONTRACT-19
    let rows = table(&doc("contract-toml.md"), "odcs-logical-types");
    let code: Vec<Vec<String>> = LOGICAL_TYPES
        .iter()
        .map(|(name, t)| {
            vec![
                name.to_string(),
                t.map_or("refused".to_owned(), |t| t.to_string()),
            ]
        })
        .collect();
    assert_eq!(rows, code);
}

#[test]
fn the_sla_table_of_decisions_md_is_the_code_s() {
    let rows = table(&doc("decisions.md"), "sla-properties");
    let code: Vec<Vec<String>> = SLA_PROPERTIES
        .iter()
        .map(|(names, m)| {
            let (measure, why) = match m {
                Measure::Latency => ("latency: the least complete as of", ""),
                Measure::Frequency => ("frequency: the newest complete as of", ""),
                Measure::NotCheckable(why) => ("not checkable", *why),
            };
            vec![names.join(", "), measure.to_owned(), why.to_owned()]
        })
        .collect();
    assert_eq!(rows, code);
}

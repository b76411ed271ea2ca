//! The readers on documents in their real forms: ODCS v3 documents written as the
//! specification's examples are (tests/data/orders.odcs.yaml and .json), and an excerpt of the
//! manifest.json dbt writes for the example project (tests/data/README.md says how it was
//! made). They describe one table, so they hash alike.

use dogana_columns::odcs::{self, Format};
use dogana_columns::{dbt, ColumnsError};

const YAML: &str = include_str!("data/orders.odcs.yaml");
const JSON: &str = include_str!("data/orders.odcs.json");
const DBT: &str = include_str!("data/dbt-manifest-excerpt.json");

/// The orders columns' hash as Python's json.dumps and hashlib compute it (CONTRACT-16):
/// `[["id","int"],["order_date","date"],["updated_at","datetime"],["amount","decimal(12,2)"],["customer","str"]]`.
const ORDERS_HASH: &str = "eb708413c74df7e2a6fa44c9ca9aaffcfe17dcb9c4052965ff1264a2602174e7";

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn an_odcs_schema_object_gives_its_properties_in_declared_order() {
    // rule: CONTRACT-16
    let doc = odcs::parse(YAML, Format::Yaml, "orders.odcs.yaml").unwrap();
    let columns = doc.columns("orders").unwrap();
    assert_eq!(
        columns.pairs(),
        pairs(&[
            ("id", "int"),
            ("order_date", "date"),
            ("updated_at", "datetime"),
            ("amount", "decimal(12,2)"),
            ("customer", "str"),
        ])
    );
    assert_eq!(columns.hash(), ORDERS_HASH);
}

#[test]
fn yaml_json_and_the_dbt_model_hash_alike() {
    // rule: CONTRACT-16, CONTRACT-19
    let yaml = odcs::parse(YAML, Format::Yaml, "y")
        .unwrap()
        .columns("orders")
        .unwrap();
    let json = odcs::parse(JSON, Format::Json, "j")
        .unwrap()
        .columns("orders")
        .unwrap();
    let dbt = dbt::columns(DBT, "manifest.json", "orders_export").unwrap();
    assert_eq!(yaml, json);
    assert_eq!(yaml, dbt);
    assert_eq!(dbt.hash(), ORDERS_HASH);
    // a physicalName names the object as well as its name
    let by_physical = odcs::parse(YAML, Format::Yaml, "y").unwrap();
    assert_eq!(by_physical.object("orders").unwrap().table(), "orders");
}

#[test]
fn bad_odcs_documents_are_refused_naming_what_to_fix() {
    // rule: CONTRACT-19
    let doc = odcs::parse(YAML, Format::Yaml, "orders.odcs.yaml").unwrap();
    // a nested type
    let e = doc.columns("customers").unwrap_err();
    assert!(
        matches!(&e, ColumnsError::Unmapped { message: m, column, declared } if m.contains("schema \"customers\": property \"address\": logicalType \"object\" has no dogana name") && column == "address" && declared == "object"),
        "{e}"
    );
    // no such schema object
    let e = doc.columns("invoices").unwrap_err();
    assert_eq!(
        e,
        ColumnsError::NotFound(
            "ODCS document orders.odcs.yaml has no schema object \"invoices\"; it has \"orders\", \"customers\"".into()
        )
    );
    // a property without a type
    let untyped = YAML.replace(
        "        logicalType: string\n        physicalType: varchar(40)\n",
        "",
    );
    let e = odcs::parse(&untyped, Format::Yaml, "o")
        .unwrap()
        .columns("orders")
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("property \"customer\": it has no type"),
        "{e}"
    );
    // not YAML, not JSON
    let e = odcs::parse("schema: [", Format::Yaml, "o.yaml").unwrap_err();
    assert!(
        matches!(&e, ColumnsError::Document(m) if m.starts_with("ODCS document o.yaml does not parse as YAML")),
        "{e}"
    );
    let e = odcs::parse("{\"schema\": ", Format::Json, "o.json").unwrap_err();
    assert!(
        matches!(&e, ColumnsError::Document(m) if m.starts_with("ODCS document o.json does not parse as JSON")),
        "{e}"
    );
    // a property typed with a number, not a string
    let e = odcs::parse("apiVersion: v3.0.2\nschema:\n  - name: t\n    properties:\n      - name: a\n        logicalType: [1]\n", Format::Yaml, "o").unwrap_err();
    assert!(matches!(e, ColumnsError::Document(_)), "{e}");
    // ODCS v2
    let e = odcs::parse("apiVersion: v2.2.2\ndataset: []\n", Format::Yaml, "o").unwrap_err();
    assert!(
        e.to_string()
            .contains("apiVersion \"v2.2.2\" is not ODCS v3"),
        "{e}"
    );
    // a column twice
    let twice = JSON.replace("\"name\": \"customer\"", "\"name\": \"amount\"");
    let e = odcs::parse(&twice, Format::Json, "o")
        .unwrap()
        .columns("orders")
        .unwrap_err();
    assert!(
        e.to_string().contains("column \"amount\" is listed twice"),
        "{e}"
    );
}

#[test]
fn sla_elements_name_their_schema_objects() {
    let doc = odcs::parse(YAML, Format::Yaml, "o").unwrap();
    let latency = &doc.sla_properties[0];
    assert_eq!(latency.property, "latency");
    let objects = doc.objects_of(latency).unwrap();
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0].name, "orders");
    // no element: every schema object
    let ga = &doc.sla_properties[3];
    assert_eq!(doc.objects_of(ga).unwrap().len(), 2);
    let mut bad = latency.clone();
    bad.element = Some("invoices.total".into());
    let e = doc.objects_of(&bad).unwrap_err().to_string();
    assert!(e.contains("no schema object is named \"invoices\""), "{e}");
}

#[test]
fn the_dbt_model_without_data_types_is_refused() {
    // rule: CONTRACT-19
    let e = dbt::columns(DBT, "manifest.json", "table_dates").unwrap_err();
    assert!(
        e.to_string().contains(
            "model \"model.dogana_example.table_dates\": column \"table_name\" has no data_type"
        ),
        "{e}"
    );
}

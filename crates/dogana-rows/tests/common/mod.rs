//! Contracts, manifests and helpers shared by the tests.
#![allow(dead_code)]

use dogana::{
    Contract, Date, Deletions, LogicalType, Manifest, ManifestBuilder, Position, Shape, Timestamp,
    Window,
};
use dogana_rows::{check_rows, Format, Options, RowReport, RowsError};

pub const SINCE: &str = "2026-10-26T00:00:00Z";
pub const T: &str = "2026-10-27T00:00:00Z";

pub fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

pub fn date(s: &str) -> Date {
    s.parse().unwrap()
}

/// The columns every `orders` file has, with their types (deleted left out).
pub const COLUMNS: [(&str, &str); 5] = [
    ("id", "int"),
    ("order_date", "date"),
    ("updated_at", "datetime"),
    ("amount", "float"),
    ("customer", "str"),
];

pub fn orders_builder() -> dogana::ContractBuilder {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full())
        .shape("window", Shape::window())
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .shape("upserts", Shape::changes(Deletions::None))
        .shape("wchanges", Shape::window_changes(Deletions::Tombstone))
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
}

/// `orders`: key id, window order_date, cursor updated_at, deleted column deleted.
pub fn orders() -> Contract {
    orders_builder().build().unwrap()
}

/// `orders` with the schema hash of [`COLUMNS`].
pub fn orders_hashed() -> Contract {
    orders_builder()
        .schema_hash(dogana::column_hash(&COLUMNS))
        .build()
        .unwrap()
}

/// The receiver's column list: [`COLUMNS`] and the deleted column.
pub fn options() -> Options {
    Options::new()
        .column_types(COLUMNS)
        .column_type("deleted", "bool")
}

pub fn full(c: &Contract, rows: u64) -> ManifestBuilder {
    c.manifest("full", ts(T)).rows(rows)
}

pub fn changes(c: &Contract, rows: u64, tombstones: u64) -> ManifestBuilder {
    c.manifest("changes", ts(T))
        .since(ts(SINCE))
        .rows(rows)
        .tombstones(tombstones)
}

pub fn window(c: &Contract, low: &str, high: &str, rows: u64) -> ManifestBuilder {
    c.manifest("window", ts(T))
        .window(Window::new(date(low), date(high)))
        .rows(rows)
}

/// A sequence-read contract: key id, int cursor seq, deleted column deleted.
pub fn sequenced() -> Contract {
    Contract::builder("events", ["id"])
        .shape("seq", Shape::sequence(Deletions::Tombstone))
        .cursor_column("seq")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("seq", LogicalType::Int)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

pub fn seq_manifest(c: &Contract, since: i64, generation: i64, rows: u64, tombs: u64) -> Manifest {
    c.manifest("seq", ts(T))
        .since(Position::Sequence(since))
        .generation(Position::Sequence(generation))
        .rows(rows)
        .tombstones(tombs)
        .build()
        .unwrap()
}

pub fn run(
    file: &str,
    format: Format,
    c: &Contract,
    m: ManifestBuilder,
) -> Result<RowReport, RowsError> {
    check_rows(file.as_bytes(), format, c, &m.build().unwrap(), &options())
}

pub fn csv(file: &str, c: &Contract, m: ManifestBuilder) -> RowReport {
    run(file, Format::Csv, c, m).unwrap()
}

pub fn ndjson(file: &str, c: &Contract, m: ManifestBuilder) -> RowReport {
    run(file, Format::Ndjson, c, m).unwrap()
}

/// The names of the failed checks.
pub fn failed(r: &RowReport) -> Vec<&str> {
    r.failed().map(|c| c.name()).collect()
}

/// The detail of a check.
pub fn detail<'a>(r: &'a RowReport, name: &str) -> &'a str {
    r.check(name).unwrap().detail()
}

/// Asserts that exactly `names` failed, showing the report otherwise.
#[track_caller]
pub fn assert_failed(r: &RowReport, names: &[&str]) {
    assert_eq!(failed(r), names, "{:#?}", r.checks);
}

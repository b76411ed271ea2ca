//! Values for the wire tests, built through the public API: the concepts' orders table and its
//! week of deliveries, contracts with every shape, receipts of each outcome, claims.
#![allow(dead_code)]

pub mod strategies;

use std::path::PathBuf;

use dogana::{
    Check, Claims, Contract, Date, Deletions, Duration, FromWire, Gate, Ledger, LogicalType,
    Manifest, Position, Receipt, SerializationError, Shape, Timestamp, Value, Window, Wire,
};

pub const SUNDAY: &str = "2026-10-25T06:00:00Z";
pub const TUESDAY: &str = "2026-10-27T06:00:00Z";
pub const WEDNESDAY: &str = "2026-10-28T06:00:00Z";
pub const THURSDAY: &str = "2026-10-29T06:00:00Z";

/// The SHA-256 of the Wednesday file's bytes, as `dogana manifest` would declare it.
pub const WEDNESDAY_FILE_SHA256: &str =
    "9f2c1b7e55d0a3b8c4e6f1029384756aabbccddeeff00112233445566778899a";

pub fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

pub fn day(s: &str) -> Value {
    Value::Date(s.parse::<Date>().unwrap())
}

pub fn days(n: i64) -> Duration {
    Duration::from_days(n).unwrap()
}

/// The workspace root, where `schemas/`, `examples/` and `vectors/` live.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The concepts' orders contract: full (cost 10), last3 (a 3-day window, cost 2), changes with
/// tombstones.
pub fn orders() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape("last3", Shape::window().size(days(3)).cost(2.0))
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

/// Every kind of shape a keyed table with generations can have: complete over the table and a
/// window, timestamp changes over both with and without tombstones, generation feeds; lookback,
/// window sizes, fractional costs, a column hash.
pub fn every_shape_with_generations() -> Contract {
    Contract::builder("shipments", ["carrier", "number"])
        .shape("full", Shape::full().cost(25.5))
        .shape("month", Shape::window().size(days(30)).cost(0.1))
        .shape("day", Shape::window())
        .shape(
            "recent",
            Shape::window_changes(Deletions::Tombstone).cost(1e-7),
        )
        .shape("recent_live", Shape::window_changes(Deletions::None))
        .shape(
            "changes",
            Shape::changes(Deletions::Tombstone)
                .lookback(Duration::from_seconds(900).unwrap())
                .cost(0.0),
        )
        .shape(
            "upserts",
            Shape::changes(Deletions::None).lookback(Duration::from_micros(1_500_000).unwrap()),
        )
        .shape(
            "feed",
            Shape::generations(Deletions::Tombstone).cost(123456.789),
        )
        .shape("feed_live", Shape::generations(Deletions::None))
        .window_column("shipped_on")
        .cursor_column("changed_at")
        .deleted_column("gone")
        .column("carrier", LogicalType::Str)
        .column("number", LogicalType::Int)
        .column("shipped_on", LogicalType::Date)
        .column("changed_at", LogicalType::Datetime)
        .column("gone", LogicalType::Bool)
        .schema_hash(dogana::column_hash(&[
            ("carrier", "str"),
            ("number", "int"),
            ("shipped_on", "date"),
            ("changed_at", "datetime"),
            ("weight", "decimal(10,3)"),
        ]))
        .build()
        .unwrap()
}

/// A keyed table read from an integer log: full reads and sequence feeds, an int cursor, a
/// datetime window with a rolling size in seconds.
pub fn every_shape_with_sequences() -> Contract {
    Contract::builder("ledger_lines", ["line_id"])
        .shape("full", Shape::full())
        .shape(
            "hour",
            Shape::window().size(Duration::from_seconds(3600).unwrap()),
        )
        .shape("log", Shape::sequence(Deletions::Tombstone).cost(0.5))
        .shape("log_live", Shape::sequence(Deletions::None))
        .window_column("posted_at")
        .cursor_column("lsn")
        .deleted_column("deleted")
        .column("line_id", LogicalType::Str)
        .column("posted_at", LogicalType::Datetime)
        .column("lsn", LogicalType::Int)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

/// A keyless append-only table with a start of history.
pub fn events() -> Contract {
    Contract::builder("events", Vec::<String>::new())
        .shape("full", Shape::full())
        .shape("append", Shape::changes(Deletions::None))
        .start_at(at("2026-01-01T00:00:00Z"))
        .build()
        .unwrap()
}

/// Every contract above.
pub fn contracts() -> Vec<Contract> {
    vec![
        orders(),
        every_shape_with_generations(),
        every_shape_with_sequences(),
        events(),
    ]
}

/// One accepted delivery: the receipt and the ledger it leaves.
pub fn deliver(
    ledger: &Ledger,
    manifest: &Manifest,
    outcomes: &[Check],
    now: Timestamp,
    source: Option<&str>,
) -> (Receipt, Ledger) {
    let r = Gate::evaluate(ledger, manifest, outcomes, now, source, &[]);
    assert!(r.accepted(), "{:?}", r.checks());
    let next = ledger.follow(&r).unwrap();
    (r, next)
}

pub fn sunday_full() -> Manifest {
    orders()
        .manifest("full", at(SUNDAY))
        .rows(1000)
        .build()
        .unwrap()
}

pub fn tuesday_last3() -> Manifest {
    orders()
        .manifest("last3", at(TUESDAY))
        .window(Window::new(day("2026-10-25"), day("2026-10-27")))
        .rows(40)
        .build()
        .unwrap()
}

/// Wednesday's changes since Sunday, with one tombstone and the file's hash.
pub fn wednesday_changes() -> Manifest {
    orders()
        .manifest("changes", at(WEDNESDAY))
        .since(at(SUNDAY))
        .rows(12)
        .tombstones(1)
        .content_hash(WEDNESDAY_FILE_SHA256)
        .build()
        .unwrap()
}

/// The checks a receiver reports for Wednesday's file.
pub fn wednesday_checks() -> Vec<Check> {
    vec![
        Check::pass("rows", "12 live rows, 1 tombstone"),
        Check::pass("keys", "13 distinct non-null keys"),
        Check::pass(
            "content_hash",
            "the file's bytes hash to the declared content_hash",
        ),
    ]
}

/// The ledger after Sunday's full read and Tuesday's last3 read, with both receipts.
pub fn sunday_and_tuesday() -> (Vec<Receipt>, Ledger) {
    let ledger = Ledger::new(orders());
    let (r1, ledger) = deliver(&ledger, &sunday_full(), &[], at(SUNDAY), Some("nightly"));
    let (r2, ledger) = deliver(&ledger, &tuesday_last3(), &[], at(TUESDAY), None);
    (vec![r1, r2], ledger)
}

/// Wednesday's accepted receipt and the ledger after it.
pub fn wednesday() -> (Receipt, Ledger) {
    let (_, ledger) = sunday_and_tuesday();
    deliver(
        &ledger,
        &wednesday_changes(),
        &wednesday_checks(),
        at(WEDNESDAY),
        Some("sftp/orders-2026-10-28.csv"),
    )
}

/// A rejection by the gate: changes since a time the table is not complete at.
pub fn rejected_by_gate() -> Receipt {
    let (_, ledger) = sunday_and_tuesday();
    let late = orders()
        .manifest("changes", at(WEDNESDAY))
        .since(at("2026-10-26T06:00:00Z"))
        .rows(12)
        .build()
        .unwrap();
    let r = Gate::evaluate(&ledger, &late, &[], at(WEDNESDAY), None, &[]);
    assert!(!r.accepted());
    r
}

/// A rejection the receiver recorded with Gate::reject on an untouched ledger: its publication
/// is the string "None".
pub fn rejected_by_receiver() -> Receipt {
    let r = Gate::reject(
        &Ledger::new(orders()),
        &sunday_full(),
        &[Check::fail(
            "rows",
            "found 999 live rows, the manifest declares 1000",
        )],
        at(SUNDAY),
        Some("nightly"),
    );
    assert_eq!(r.publication_id(), dogana::NO_PUBLICATION);
    r
}

/// Every receipt kind: accepted (with and without a source), rejected by the gate and by the
/// receiver, replayed.
pub fn receipts() -> Vec<Receipt> {
    let (mut rs, _) = sunday_and_tuesday();
    let (wed, _) = wednesday();
    rs.push(wed.as_replay().unwrap());
    rs.push(wed);
    rs.push(rejected_by_gate());
    rs.push(rejected_by_receiver());
    rs.extend(feed_receipts());
    rs
}

/// A generation feed and a sequence feed, each after a full read that issues a position.
pub fn feed_receipts() -> Vec<Receipt> {
    let c = every_shape_with_generations();
    let ledger = Ledger::new(c.clone());
    let full = c
        .manifest("full", at(SUNDAY))
        .generation(Position::Token("g-41".into()))
        .rows(500)
        .build()
        .unwrap();
    let (r1, ledger) = deliver(&ledger, &full, &[], at(SUNDAY), None);
    let feed = c
        .manifest("feed", at(TUESDAY))
        .since(Position::Token("g-41".into()))
        .generation(Position::Token("g-42".into()))
        .rows(7)
        .tombstones(2)
        .build()
        .unwrap();
    let (r2, _) = deliver(&ledger, &feed, &[], at(TUESDAY), None);

    let c = every_shape_with_sequences();
    let ledger = Ledger::new(c.clone());
    let full = c
        .manifest("full", at(SUNDAY))
        .generation(Position::Sequence(1_000))
        .rows(500)
        .build()
        .unwrap();
    let (r3, ledger) = deliver(&ledger, &full, &[], at(SUNDAY), None);
    let log = c
        .manifest("log", at(TUESDAY))
        .since(Position::Sequence(990))
        .generation(Position::Sequence(Value::INT_MAX))
        .rows(3)
        .build()
        .unwrap();
    let (r4, _) = deliver(&ledger, &log, &[], at(TUESDAY), None);
    vec![r1, r2, r3, r4]
}

/// Ledgers of every kind of history: new, one window, several windows, after changes, with a
/// generation or sequence position, keyless after appends.
pub fn ledgers() -> Vec<Ledger> {
    let mut out = vec![Ledger::new(orders())];
    let (_, l) = sunday_and_tuesday();
    out.push(l);
    let (_, l) = wednesday();
    out.push(l);

    let c = every_shape_with_generations();
    let l = Ledger::new(c.clone());
    let full = c
        .manifest("full", at(SUNDAY))
        .generation(Position::Token("g-41".into()))
        .rows(500)
        .build()
        .unwrap();
    let l = l.apply(&full).unwrap();
    let month = c
        .manifest("month", at(TUESDAY))
        .window(Window::new(day("2026-09-28"), day("2026-10-27")))
        .rows(100)
        .build()
        .unwrap();
    let l = l.apply(&month).unwrap();
    let recent = c
        .manifest("recent", at(WEDNESDAY))
        .window(Window::new(day("2026-10-20"), day("2026-10-31")))
        .since(at(SUNDAY))
        .rows(4)
        .tombstones(1)
        .build()
        .unwrap();
    let l = l.apply(&recent).unwrap();
    out.push(l);

    let c = every_shape_with_sequences();
    let l = Ledger::new(c.clone());
    let full = c
        .manifest("full", at(SUNDAY))
        .generation(Position::Sequence(1_000))
        .rows(500)
        .build()
        .unwrap();
    let l = l.apply(&full).unwrap();
    let hour = c
        .manifest("hour", at(TUESDAY))
        .window(Window::new(
            at("2026-10-27T05:00:00.000001Z"),
            at("2026-10-27T06:00:00Z"),
        ))
        .rows(10)
        .build()
        .unwrap();
    out.push(l.apply(&hour).unwrap());

    let c = events();
    let l = Ledger::new(c.clone());
    let first = c
        .manifest("append", at(SUNDAY))
        .since(at("2026-01-01T00:00:00Z"))
        .rows(10_000)
        .build()
        .unwrap();
    let l = l.apply(&first).unwrap();
    let next = c
        .manifest("append", at(TUESDAY))
        .since(at(SUNDAY))
        .rows(20)
        .build()
        .unwrap();
    out.push(l.apply(&next).unwrap());
    out
}

/// Claims of the ledgers above: whole, cut to a window, with a short limit that expires some.
pub fn claims() -> Vec<Claims> {
    let (_, l) = sunday_and_tuesday();
    vec![
        l.claims(at(WEDNESDAY), Duration::MAX, None).unwrap(),
        l.claims(at(WEDNESDAY), days(2), None).unwrap(),
        l.claims(
            at(WEDNESDAY),
            Duration::from_micros(86_400_000_000 + 500_000).unwrap(),
            Some(&Window::new(day("2026-10-20"), day("2026-10-26"))),
        )
        .unwrap(),
        Ledger::new(events())
            .claims(at(SUNDAY), Duration::ZERO, None)
            .unwrap(),
    ]
}

/// Reads a document back and checks the round trip (WIRE-30): an equal value and the same
/// bytes.
pub fn round_trip<T: Wire + FromWire + PartialEq + std::fmt::Debug>(x: &T) {
    let text = x.to_json();
    let back = T::from_json(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(&back, x, "{text}");
    assert_eq!(back.to_json(), text);
    assert_eq!(back.identity(), x.identity());
    let from_value = T::from_value(&x.to_value()).unwrap();
    assert_eq!(&from_value, x);
}

/// The error of reading `text` as `T`.
pub fn refusal<T: FromWire + std::fmt::Debug>(text: &str) -> SerializationError {
    T::from_json(text).expect_err("the document should be refused")
}

/// Replaces, in a canonical document, the JSON at `pointer` (RFC 6901) with `value`, or
/// removes it when `value` is None.
pub fn edit(doc: &str, pointer: &str, value: Option<serde_json::Value>) -> String {
    let mut v: serde_json::Value = serde_json::from_str(doc).unwrap();
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let target = v.pointer_mut(parent).unwrap();
    match (target, value) {
        (serde_json::Value::Object(m), Some(x)) => {
            m.insert(last.to_owned(), x);
        }
        (serde_json::Value::Object(m), None) => {
            m.remove(last);
        }
        (serde_json::Value::Array(a), Some(x)) => a[last.parse::<usize>().unwrap()] = x,
        (serde_json::Value::Array(a), None) => {
            a.remove(last.parse::<usize>().unwrap());
        }
        _ => panic!("{pointer} is not in an object or array"),
    }
    dogana_json::canonical(&v)
}

/// What a document of `kind` reads as: its canonical JSON, identity JSON and identity. `None`
/// for a kind this crate does not read here (Requirement and Extraction live in the planner).
pub fn read_kind(kind: &str, text: &str) -> Option<Result<[String; 3], SerializationError>> {
    fn go<T: Wire + FromWire>(text: &str) -> Result<[String; 3], SerializationError> {
        let x = T::from_json(text)?;
        Ok([x.to_json(), x.identity_json(), x.identity()])
    }
    Some(match kind {
        "Contract" => go::<Contract>(text),
        "Shape" => go::<Shape>(text),
        "Manifest" => go::<Manifest>(text),
        "Ledger" => go::<Ledger>(text),
        "Region" => go::<dogana::Region>(text),
        "Receipt" => go::<Receipt>(text),
        "Check" => go::<Check>(text),
        "Transition" => go::<dogana::Transition>(text),
        "ApplyPlan" => go::<dogana::ApplyPlan>(text),
        "Action" => go::<dogana::Action>(text),
        "Claims" => go::<Claims>(text),
        "RegionClaim" => go::<dogana::RegionClaim>(text),
        "Requirement" => go::<dogana::Requirement>(text),
        "Extraction" => go::<dogana::Extraction>(text),
        _ => return None,
    })
}

/// The fourteen wire kinds, with the file name of each one's example.
pub const KINDS: [(&str, &str); 14] = [
    ("Contract", "contract"),
    ("Shape", "shape"),
    ("Manifest", "manifest"),
    ("Ledger", "ledger"),
    ("Region", "region"),
    ("Receipt", "receipt"),
    ("Check", "check"),
    ("Transition", "transition"),
    ("ApplyPlan", "apply_plan"),
    ("Action", "action"),
    ("Claims", "claims"),
    ("RegionClaim", "region_claim"),
    ("Requirement", "requirement"),
    ("Extraction", "extraction"),
];

/// Compares a generated file with the committed one, or writes it when DOGANA_REGENERATE is
/// set. The committed files are static: a test fails when they drift from what the code gives.
pub fn committed(relative: &str, generated: &str) {
    let path = root().join(relative);
    if std::env::var_os("DOGANA_REGENERATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{relative}: {e}; run DOGANA_REGENERATE=1 cargo test -p dogana --test wire_examples --test wire_vectors"));
    assert!(
        actual == generated,
        "{relative} drifted from what the code writes; review the change, then run DOGANA_REGENERATE=1 cargo test -p dogana --test wire_examples --test wire_vectors"
    );
}

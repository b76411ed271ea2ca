//! Identities: SHA-256 of the JCS text of the identity form, which omits version and defaults,
//! writes a replay as accepted, and does not depend on how the document was spelled.

mod wire_support;

use dogana::{Check, Contract, FromWire, Gate, Ledger, Manifest, Receipt, Shape, Wire};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use wire_support::*;

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn keys(v: &Json) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn identity_is_sha256_of_the_jcs_identity_form() {
    // rule: WIRE-18, WIRE-21
    let (r, l) = wednesday();
    let m = wednesday_changes();
    let c = orders();
    let ids = [
        (m.identity_dict(), m.identity_json(), m.identity()),
        (c.identity_dict(), c.identity_json(), c.identity()),
        (l.identity_dict(), l.identity_json(), l.identity()),
        (r.identity_dict(), r.identity_json(), r.identity()),
    ];
    for (dict, text, id) in ids {
        assert_eq!(dogana_json::jcs_checked(&dict).unwrap(), text.as_bytes());
        assert_eq!(sha256_hex(text.as_bytes()), id);
    }
}

#[test]
fn identity_form_omits_version_and_defaults() {
    // rule: WIRE-19
    let m = sunday_full();
    assert_eq!(
        keys(&m.identity_dict()),
        ["kind", "produced_at", "rows", "shape", "table"]
    );
    assert_eq!(
        keys(&m.to_value()).len(),
        12,
        "the wire form keeps every field and the version"
    );
}

#[test]
fn identity_form_omits_defaults_recursively() {
    // rule: WIRE-19, WIRE-03
    let c = orders();
    let dict = c.identity_dict();
    assert!(dict.get("version").is_none());
    assert!(dict.get("start_at").is_none());
    assert!(dict.get("schema_hash").is_none());
    let changes = &dict["shapes"]["changes"];
    assert_eq!(
        keys(changes),
        ["checkpoint", "coverage", "deletions", "kind"],
        "cost 1 and null hints are defaults"
    );
    let last3 = &dict["shapes"]["last3"];
    assert_eq!(last3["window_size"], json!({"$seconds": 259200}));
    assert_eq!(last3["cost"], json!(2.0));
    assert!(last3.get("lookback").is_none());
}

#[test]
fn a_replay_has_the_original_identity() {
    // rule: WIRE-20
    let (original, _) = wednesday();
    let replay = original.as_replay().unwrap();
    assert_eq!(replay.identity(), original.identity());
    assert_eq!(replay.identity_json(), original.identity_json());
    assert_ne!(replay.to_json(), original.to_json());
    let back = Receipt::from_json(&replay.to_json()).unwrap();
    assert!(back.replayed());
    assert_eq!(back.identity(), original.identity());
}

#[test]
fn identity_writes_datetimes_in_utc() {
    // rule: WIRE-20, DOMAIN-08
    let text = edit(
        &wednesday_changes().to_json(),
        "/produced_at/$datetime",
        Some(json!("2026-10-28T07:30:00.000000+01:30")),
    );
    let m = Manifest::from_json(&text).unwrap();
    assert!(m
        .identity_json()
        .contains(r#""produced_at":{"$datetime":"2026-10-28T06:00:00+00:00"}"#));
    assert_eq!(m.identity(), wednesday_changes().identity());
}

/// A document spelled differently: keys in reverse order, whitespace, numbers with a zero
/// fraction.
fn respelled(v: &Json) -> String {
    match v {
        Json::Object(m) => {
            let members: Vec<String> = m
                .iter()
                .rev()
                .map(|(k, x)| {
                    format!(
                        "\n\t{} : {}",
                        serde_json::to_string(k).unwrap(),
                        respelled(x)
                    )
                })
                .collect();
            format!("{{{}\n}}", members.join(","))
        }
        Json::Array(xs) => {
            let items: Vec<String> = xs.iter().map(respelled).collect();
            format!("[ {} ]", items.join(" , "))
        }
        Json::Number(n) if n.is_u64() => format!("{n}.0"),
        other => serde_json::to_string(other).unwrap(),
    }
}

#[test]
fn identity_does_not_depend_on_key_order_whitespace_or_number_spelling() {
    // rule: WIRE-18, WIRE-06
    let (r, l) = wednesday();
    let text = respelled(&r.to_value());
    assert!(text.contains("\"version\" : 4.0"));
    let back = Receipt::from_json(&text).unwrap();
    assert_eq!(back, r);
    assert_eq!(back.identity(), r.identity());
    let text = respelled(&l.to_value());
    assert_eq!(Ledger::from_json(&text).unwrap().identity(), l.identity());
}

#[test]
fn identity_is_never_the_hash_of_the_file_bytes() {
    // rule: WIRE-27
    let m = wednesday_changes();
    let sidecar = respelled(&m.to_value());
    let read = Manifest::from_json(&sidecar).unwrap();
    assert_eq!(read.identity(), m.identity());
    assert_ne!(read.identity(), sha256_hex(sidecar.as_bytes()));
    assert_ne!(read.identity(), sha256_hex(m.to_json().as_bytes()));
}

#[test]
fn cost_1_and_1_0_give_the_same_contract_identity() {
    // rule: CONTRACT-46, WIRE-23
    let text = orders().to_json();
    assert!(text.contains(r#""cost":10,"#));
    let float = Contract::from_json(&text.replace(r#""cost":10,"#, r#""cost":10.0,"#)).unwrap();
    let exp = Contract::from_json(&text.replace(r#""cost":10,"#, r#""cost":1e1,"#)).unwrap();
    assert_eq!(float.identity(), orders().identity());
    assert_eq!(exp.identity(), orders().identity());
    let one = Shape::full().cost(1.0);
    assert_eq!(one.identity(), Shape::full().identity());
    let int_one = Shape::from_json(&Shape::full().to_json()).unwrap();
    assert_eq!(int_one.identity(), one.identity());
}

#[test]
fn changing_any_check_changes_the_receipt_identity() {
    // rule: GATE-23
    let (r, _) = wednesday();
    let doc = r.to_json();
    let variants = [
        edit(&doc, "/checks/3/name", Some(json!("row_count"))),
        edit(&doc, "/checks/3/passed", Some(json!(false))),
        edit(
            &doc,
            "/checks/3/detail",
            Some(json!("12 live rows, 1 tombstone.")),
        ),
        edit(&doc, "/checks/3/detail", Some(json!(""))),
        edit(&doc, "/checks/3", None),
    ];
    let mut ids = vec![r.identity()];
    for v in &variants {
        ids.push(Receipt::from_json(v).unwrap().identity());
    }
    let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "{ids:#?}");
}

#[test]
fn an_empty_check_detail_is_a_default() {
    // rule: WIRE-19
    let c = Check::pass("rows", "");
    assert_eq!(keys(&c.identity_dict()), ["kind", "name", "passed"]);
}

#[test]
fn content_hash_is_part_of_manifest_identity() {
    // rule: MAN-25
    let with = wednesday_changes();
    let other = Manifest::from_json(&edit(
        &with.to_json(),
        "/content_hash",
        Some(json!("0".repeat(64))),
    ))
    .unwrap();
    let without =
        Manifest::from_json(&edit(&with.to_json(), "/content_hash", Some(json!(null)))).unwrap();
    assert_ne!(with.identity(), other.identity());
    assert_ne!(with.identity(), without.identity());
    assert_ne!(other.identity(), without.identity());
}

#[test]
fn a_field_at_its_default_does_not_change_identity() {
    // rule: WIRE-28
    // A writer that never knew tombstones, content_hash, schema_hash, window, since or
    // generation (all at their defaults here) computes the same identity from the fields it has.
    let m = sunday_full();
    let older = json!({
        "kind": "Manifest",
        "table": "orders",
        "shape": "full",
        "produced_at": {"$datetime": "2026-10-25T06:00:00+00:00"},
        "rows": 1000
    });
    assert_eq!(
        m.identity(),
        sha256_hex(&dogana_json::jcs_checked(&older).unwrap())
    );
    let receipt = Gate::evaluate(&Ledger::new(orders()), &m, &[], at(SUNDAY), None, &[]);
    // source and base_publication_id at their defaults are absent from the identity form
    let dict = receipt.identity_dict();
    assert!(dict.get("source").is_none() && dict.get("base_publication_id").is_none());
}

#[test]
fn jcs_sorts_keys_by_utf16_units_unlike_canonical_json() {
    // rule: WIRE-22, WIRE-17
    let c = Contract::builder("t", ["id"])
        .shape("\u{FF61}", Shape::full())
        .shape("\u{1F600}", Shape::full().cost(2.0))
        .column("id", dogana::LogicalType::Int)
        .build()
        .unwrap();
    let canonical = c.to_json();
    let ff61 = canonical.find(r#""\uff61""#).unwrap();
    let smile = canonical.find(r#""\ud83d\ude00""#).unwrap();
    assert!(ff61 < smile, "canonical JSON sorts by code point");
    let jcs = c.identity_json();
    assert!(jcs.find('\u{1F600}').unwrap() < jcs.find('\u{FF61}').unwrap());
}

#[test]
fn jcs_writes_shortest_numbers() {
    // rule: WIRE-23
    let c = Contract::builder("t", ["id"])
        .shape("a", Shape::full().cost(1e21))
        .shape("b", Shape::full().cost(0.1))
        .shape("c", Shape::full().cost(10.0))
        .shape("d", Shape::full().cost(1e-7))
        .column("id", dogana::LogicalType::Int)
        .build()
        .unwrap();
    let jcs = c.identity_json();
    for spelled in [
        r#""cost":1e+21"#,
        r#""cost":0.1"#,
        r#""cost":10"#,
        r#""cost":1e-7"#,
    ] {
        assert!(jcs.contains(spelled), "{spelled} in {jcs}");
    }
}

#[test]
fn receipt_identity_covers_its_contract() {
    // rule: GATE-12, EVOL-04
    let (r, _) = wednesday();
    let cheaper = edit(&r.to_json(), "/contract/shapes/full/cost", Some(json!(9)));
    assert_ne!(
        Receipt::from_json(&cheaper).unwrap().identity(),
        r.identity()
    );
}

/// The ledger's streamed identity is the identity of its identity form, byte for byte.
#[test]
fn streamed_ledger_identity_equals_the_generic_one() {
    // rule: WIRE-18, LEDGER-15
    use dogana::{Contract, Deletions, Ledger, LogicalType, Position, Shape, Timestamp, Window};
    use sha2::Digest;
    let generic = |l: &Ledger| -> String {
        sha2::Sha256::digest(dogana_json::jcs(&l.identity_dict()))
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let t = |h: i64| Timestamp::from_micros(1_790_000_000_000_000 + h * 3_600_000_000).unwrap();
    for window_type in [
        LogicalType::Int,
        LogicalType::Str,
        LogicalType::Date,
        LogicalType::Datetime,
    ] {
        let c = Contract::builder("t\u{e9}\u{1f600}", ["id"])
            .shape("full", Shape::full())
            .shape("w", Shape::window())
            .shape("seq", Shape::sequence(Deletions::None))
            .window_column("w")
            .column("id", LogicalType::Int)
            .column("w", window_type)
            .build()
            .unwrap();
        let bounds = |i: i64| -> Window {
            match window_type {
                LogicalType::Int => Window::new(i * 10, i * 10 + 3),
                LogicalType::Str => Window::new(format!("k\"{i}\n"), format!("k\"{i}\nz")),
                LogicalType::Date => Window::new(
                    "2026-01-01"
                        .parse::<dogana::Date>()
                        .unwrap()
                        .checked_add_days(i * 3)
                        .unwrap(),
                    "2026-01-01"
                        .parse::<dogana::Date>()
                        .unwrap()
                        .checked_add_days(i * 3 + 1)
                        .unwrap(),
                ),
                _ => Window::new(t(i * 5), t(i * 5 + 2)),
            }
        };
        let mut l = Ledger::new(c.clone());
        assert_eq!(l.identity(), generic(&l));
        l = l
            .apply(
                &c.manifest("full", t(1))
                    .generation(Position::Sequence(4))
                    .rows(1)
                    .build()
                    .unwrap(),
            )
            .unwrap();
        for i in 0..20 {
            let m = c
                .manifest("w", t(2 + i))
                .window(bounds(i))
                .rows(1)
                .build()
                .unwrap();
            l = l.apply(&m).unwrap();
            assert_eq!(l.identity(), generic(&l), "{window_type} after {i}");
        }
    }
}

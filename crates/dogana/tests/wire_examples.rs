//! The executable examples in `examples/` and the JSON Schemas in `schemas/`: every example
//! validates against its kind's schema, round-trips byte for byte, has the identity recorded in
//! `vectors/identity.json`, and the concepts' documents replay the concepts' week.
//!
//! The files are generated from the code below; a test fails when a committed file drifts.
//! To regenerate after a deliberate change: `DOGANA_REGENERATE=1 cargo test -p dogana --test
//! wire_examples --test wire_vectors`, then review the diff.

mod wire_support;

use dogana::{
    Check, Claims, Contract, FromWire, Gate, Ledger, Manifest, Receipt, Region, Shape, Wire,
};
use serde_json::{json, Map, Value as Json};
use wire_support::*;

// ---- the examples ----

fn canonical(v: &Json) -> String {
    dogana_json::canonical(v)
}

/// Every example: its file stem, kind and canonical document.
fn examples() -> Vec<(&'static str, &'static str, String)> {
    let (receipts, ledger) = sunday_and_tuesday();
    let (wednesday, _) = wednesday();
    let transition = wednesday.transition().unwrap().clone();
    let tuesday_plan = receipts[1].transition().unwrap().plan().clone();
    let claims = ledger.claims(at(WEDNESDAY), days(2), None).unwrap();
    let requirement = json!({
        "version": 4,
        "kind": "Requirement",
        "table": "orders",
        "complete_as_of": {"$datetime": "2026-10-28T06:00:00+00:00"},
        "deletions_as_of": {"$datetime": "2026-10-28T06:00:00+00:00"},
        "window": [{"$date": "2026-10-25"}, {"$date": "2026-10-27"}]
    });
    let extraction = json!({
        "version": 4,
        "kind": "Extraction",
        "table": "orders",
        "shape": "changes",
        "until": {"$datetime": "2026-10-28T06:00:00+00:00"},
        "window": null,
        "since": {"$datetime": "2026-10-25T06:00:00+00:00"}
    });
    vec![
        ("contract", "Contract", orders().to_json()),
        ("shape", "Shape", orders().shape("last3").unwrap().to_json()),
        ("manifest", "Manifest", wednesday_changes().to_json()),
        ("ledger", "Ledger", ledger.to_json()),
        ("region", "Region", ledger.regions()[1].to_json()),
        ("receipt", "Receipt", wednesday.to_json()),
        ("check", "Check", wednesday.checks()[3].to_json()),
        ("transition", "Transition", transition.to_json()),
        ("apply_plan", "ApplyPlan", transition.plan().to_json()),
        ("action", "Action", tuesday_plan.actions()[0].to_json()),
        ("claims", "Claims", claims.to_json()),
        ("region_claim", "RegionClaim", claims.regions()[0].to_json()),
        ("requirement", "Requirement", canonical(&requirement)),
        ("extraction", "Extraction", canonical(&extraction)),
    ]
}

/// An example file's document: the file holds the canonical JSON and one trailing newline.
fn example_file(stem: &str) -> String {
    let path = root().join(format!("examples/{stem}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.strip_suffix('\n')
        .expect("an example ends with one newline")
        .to_owned()
}

#[test]
fn examples_are_the_committed_files() {
    // rule: WIRE-33
    let all = examples();
    assert_eq!(all.len(), 14);
    for (stem, _, doc) in all {
        committed(&format!("examples/{stem}.json"), &format!("{doc}\n"));
    }
}

#[test]
fn examples_round_trip_byte_for_byte() {
    // rule: WIRE-33, WIRE-30
    let mut read = 0;
    for (stem, kind, _) in examples() {
        let file = example_file(stem);
        let Some(result) = read_kind(kind, &file) else {
            continue;
        };
        let [canonical, _, _] = result.unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(canonical, file, "examples/{stem}.json");
        read += 1;
    }
    assert_eq!(read, 14);
}

#[test]
fn example_identities_are_recorded_in_the_vectors() {
    // rule: WIRE-33, WIRE-34
    let vectors: Json = serde_json::from_str(
        &std::fs::read_to_string(root().join("vectors/identity.json")).unwrap(),
    )
    .unwrap();
    let cases = vectors["cases"].as_array().unwrap();
    let mut checked = 0;
    for (stem, kind, _) in examples() {
        let file = example_file(stem);
        let Some(result) = read_kind(kind, &file) else {
            continue;
        };
        let [_, identity_json, identity] = result.unwrap();
        let name = format!("examples/{stem}.json");
        let case = cases
            .iter()
            .find(|c| c["name"] == json!(name))
            .unwrap_or_else(|| panic!("no vector named {name}"));
        assert_eq!(case["document"], json!(file), "{name}");
        assert_eq!(case["identity_json"], json!(identity_json), "{name}");
        assert_eq!(case["identity"], json!(identity), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 14);
}

#[test]
fn the_concepts_week_runs_from_the_examples() {
    // rule: WIRE-33
    let contract = Contract::from_json(&example_file("contract")).unwrap();
    let ledger = Ledger::from_json(&example_file("ledger")).unwrap();
    let manifest = Manifest::from_json(&example_file("manifest")).unwrap();
    let receipt = Receipt::from_json(&example_file("receipt")).unwrap();
    assert_eq!(ledger.contract(), &contract);
    // The gate decides the example manifest on the example ledger exactly as recorded.
    let checks: Vec<Check> = receipt.checks()[3..].to_vec();
    let decided = Gate::evaluate(
        &ledger,
        &manifest,
        &checks,
        receipt.received_at(),
        receipt.source(),
        &[],
    );
    assert_eq!(decided, receipt);
    // The receipt continues the ledger's chain and leaves the ledger it names.
    let after = ledger.follow(&receipt).unwrap();
    assert_eq!(after.identity(), receipt.ledger_identity());
    assert_eq!(
        after
            .claims(at(WEDNESDAY), days(1), None)
            .unwrap()
            .exact_as_of(),
        Some(at(WEDNESDAY))
    );
    // The shape, region, check, plan and claims examples are parts of the same week.
    let shape = Shape::from_json(&example_file("shape")).unwrap();
    assert_eq!(contract.shape("last3"), Some(&shape));
    let region = Region::from_json(&example_file("region")).unwrap();
    assert_eq!(ledger.regions()[1], region);
    let claims = Claims::from_json(&example_file("claims")).unwrap();
    assert_eq!(claims.regions().len(), ledger.region_count());
}

// ---- the schemas ----

const ID_BASE: &str = "https://dogana.invalid/schemas/4/";

fn id(kind: &str) -> String {
    format!("{ID_BASE}{kind}.schema.json")
}

fn reference(kind: &str) -> Json {
    json!({"$ref": format!("{kind}.schema.json")})
}

fn local(def: &str) -> Json {
    json!({"$ref": format!("#/$defs/{def}")})
}

fn nullable(x: Json) -> Json {
    json!({"anyOf": [{"type": "null"}, x]})
}

fn array_of(x: Json) -> Json {
    json!({"type": "array", "items": x})
}

fn names(xs: &[&str]) -> Json {
    json!({"type": "string", "enum": xs})
}

const MAX_INT: i64 = 9_007_199_254_740_991;

/// The shared definitions: tags, values, windows, positions, hashes. Each schema carries the
/// ones it uses.
fn definitions() -> Map<String, Json> {
    let tag = |name: &str, inner: Json, description: &str| {
        json!({
            "description": description,
            "type": "object",
            "properties": {name: inner},
            "required": [name],
            "additionalProperties": false
        })
    };
    let defs = json!({
        "date": tag(
            "$date",
            json!({"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}),
            "A calendar date from 0001-01-01 to 9999-12-31 (WIRE-09)."
        ),
        "datetime": tag(
            "$datetime",
            json!({
                "type": "string",
                "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})$"
            }),
            "An instant: RFC 3339 with Z or a numeric offset and at most six fractional digits, within 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999Z once in UTC (WIRE-10, WIRE-14). Written in UTC with +00:00."
        ),
        "seconds": tag(
            "$seconds",
            json!({"type": "number", "minimum": 0, "maximum": 86_399_999_999_999i64}),
            "A nonnegative duration in seconds, integral or with exactly representable microseconds (WIRE-12)."
        ),
        "integer": {
            "description": "An integer within the portable range [-(2^53-1), 2^53-1]; 4.0 is the integer 4 (WIRE-06, WIRE-25).",
            "type": "integer",
            "minimum": -MAX_INT,
            "maximum": MAX_INT
        },
        "count": {"type": "integer", "minimum": 0, "maximum": MAX_INT},
        "value": {
            "description": "A key or window value: an integer, a string, a date or a datetime.",
            "anyOf": [local("integer"), {"type": "string"}, local("date"), local("datetime")]
        },
        "window": {
            "description": "A closed window [low, high] of the window column.",
            "type": "array",
            "prefixItems": [local("value"), local("value")],
            "items": false,
            "minItems": 2
        },
        "position": {
            "description": "A generation token (a nonempty string) or a sequence position (an integer).",
            "anyOf": [{"type": "string", "minLength": 1}, local("integer")]
        },
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"}
    });
    defs.as_object().unwrap().clone()
}

/// The properties of each kind, in the order of its constructor.
fn properties(kind: &str) -> Vec<(&'static str, Json)> {
    let s = || json!({"type": "string"});
    match kind {
        "Contract" => vec![
            ("table", json!({"type": "string", "minLength": 1})),
            ("key", array_of(s())),
            (
                "shapes",
                json!({"type": "object", "minProperties": 1, "additionalProperties": reference("Shape")}),
            ),
            ("window_column", nullable(s())),
            ("cursor_column", nullable(s())),
            ("deleted_column", nullable(s())),
            (
                "types",
                json!({"type": "object", "additionalProperties": names(&["int", "float", "str", "bool", "date", "datetime"])}),
            ),
            ("schema_hash", nullable(local("sha256"))),
            ("start_at", nullable(local("datetime"))),
        ],
        "Shape" => vec![
            ("coverage", names(&["table", "window"])),
            (
                "checkpoint",
                names(&["none", "timestamp", "generation", "sequence"]),
            ),
            ("deletions", names(&["absence", "none", "tombstone"])),
            ("cost", json!({"type": "number", "minimum": 0})),
            ("window_size", nullable(local("seconds"))),
            ("lookback", nullable(local("seconds"))),
        ],
        "Manifest" => vec![
            ("table", s()),
            ("shape", s()),
            ("produced_at", local("datetime")),
            ("window", nullable(local("window"))),
            (
                "since",
                nullable(json!({"anyOf": [local("datetime"), local("position")]})),
            ),
            ("generation", nullable(local("position"))),
            ("rows", local("count")),
            ("schema_hash", nullable(local("sha256"))),
            ("tombstones", local("count")),
            ("content_hash", nullable(local("sha256"))),
        ],
        "Ledger" => vec![
            ("contract", reference("Contract")),
            (
                "regions",
                json!({"type": "array", "minItems": 1, "items": reference("Region")}),
            ),
            ("generation", nullable(local("position"))),
            ("publication_id", nullable(local("sha256"))),
        ],
        "Region" => vec![
            ("low", nullable(local("value"))),
            ("high", nullable(local("value"))),
            ("low_open", json!({"type": "boolean"})),
            ("high_open", json!({"type": "boolean"})),
            ("complete_as_of", nullable(local("datetime"))),
            ("deletions_as_of", nullable(local("datetime"))),
        ],
        "Receipt" => vec![
            ("manifest", reference("Manifest")),
            ("contract", reference("Contract")),
            ("checks", array_of(reference("Check"))),
            ("outcome", names(&["accepted", "rejected", "replayed"])),
            ("received_at", local("datetime")),
            ("source", nullable(s())),
            ("base_publication_id", nullable(local("sha256"))),
            (
                "publication_id",
                json!({"anyOf": [local("sha256"), {"const": "None"}]}),
            ),
            ("ledger_identity", local("sha256")),
            ("transition", nullable(reference("Transition"))),
        ],
        "Check" => vec![
            ("name", s()),
            ("passed", json!({"type": "boolean"})),
            ("detail", s()),
        ],
        "Transition" => vec![
            ("plan", reference("ApplyPlan")),
            ("regions", array_of(reference("Region"))),
        ],
        "ApplyPlan" => vec![("actions", array_of(reference("Action")))],
        "Action" => vec![
            (
                "action",
                names(&[
                    "replace_all",
                    "replace_window",
                    "upsert",
                    "tombstone",
                    "append",
                ]),
            ),
            ("window", nullable(local("window"))),
            ("key", array_of(s())),
        ],
        "Claims" => vec![
            ("at", local("datetime")),
            ("limit", local("seconds")),
            ("regions", array_of(reference("RegionClaim"))),
        ],
        "RegionClaim" => vec![
            ("table", s()),
            ("region", reference("Region")),
            (
                "state",
                names(&["unknown", "expired", "patched", "complete"]),
            ),
        ],
        "Requirement" => vec![
            ("table", s()),
            ("complete_as_of", local("datetime")),
            ("deletions_as_of", nullable(local("datetime"))),
            ("window", nullable(local("window"))),
        ],
        "Extraction" => vec![
            ("table", s()),
            ("shape", s()),
            ("until", local("datetime")),
            ("window", nullable(local("window"))),
            (
                "since",
                nullable(json!({"anyOf": [local("datetime"), local("position")]})),
            ),
        ],
        other => panic!("no wire kind {other}"),
    }
}

fn description(kind: &str) -> &'static str {
    match kind {
        "Contract" => "The receiver's description of one table: key, shapes, bound columns and their types.",
        "Shape" => "One kind of read: coverage, checkpoint, deletions, and planning hints.",
        "Manifest" => "The sender's declaration of one read.",
        "Ledger" => "A table's regions with their dates, its held position and publication chain head.",
        "Region" => "An interval of the window column's values and its two dates (both null when unknown).",
        "Receipt" => "The record of one decision of the gate.",
        "Check" => "One check's result, as the receiver or the gate reports it.",
        "Transition" => "What an accepted delivery does: the plan, and the regions over its coverage afterwards.",
        "ApplyPlan" => "The ordered row operations an accepted delivery implies.",
        "Action" => "One row operation; window only for replace_window.",
        "Claims" => "What a ledger claims at a reader's time, with the reader's freshness limit.",
        "RegionClaim" => "One region's claim: the table, the region and its state.",
        "Requirement" => "What a reader needs of a table: a minimum complete_as_of, optionally a minimum deletions_as_of and a window.",
        "Extraction" => "A request for one read: the shape, the boundary to read at, the window and where changes start.",
        _ => unreachable!(),
    }
}

/// The `$defs` names a schema uses, transitively through the shared definitions.
fn used_defs(schema: &Json, defs: &Map<String, Json>) -> std::collections::BTreeSet<String> {
    fn walk(v: &Json, out: &mut std::collections::BTreeSet<String>, defs: &Map<String, Json>) {
        match v {
            Json::Object(m) => {
                if let Some(Json::String(r)) = m.get("$ref") {
                    if let Some(name) = r.strip_prefix("#/$defs/") {
                        if out.insert(name.to_owned()) {
                            walk(&defs[name], out, defs);
                        }
                    }
                }
                m.values().for_each(|x| walk(x, out, defs));
            }
            Json::Array(xs) => xs.iter().for_each(|x| walk(x, out, defs)),
            _ => {}
        }
    }
    let mut out = Default::default();
    walk(schema, &mut out, defs);
    out
}

/// The JSON Schema (draft 2020-12) of one kind.
fn schema(kind: &str) -> Json {
    let props = properties(kind);
    let mut properties = Map::new();
    properties.insert("version".into(), json!({"const": 4}));
    properties.insert("kind".into(), json!({"const": kind}));
    let mut required = vec![json!("version"), json!("kind")];
    for (name, p) in props {
        properties.insert(name.into(), p);
        required.push(json!(name));
    }
    let mut s = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": id(kind),
        "title": kind,
        "description": format!("{} dogana wire format version 4.", description(kind)),
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    });
    if kind == "Receipt" {
        // GATE-15: a rejection carries no transition; an acceptance or a replay carries one.
        s["if"] = json!({"properties": {"outcome": {"const": "rejected"}}});
        s["then"] = json!({"properties": {"transition": {"type": "null"}}});
        s["else"] = json!({"properties": {"transition": {"type": "object"}}});
    }
    let all = definitions();
    let used = used_defs(&s, &all);
    if !used.is_empty() {
        let defs: Map<String, Json> = used.iter().map(|n| (n.clone(), all[n].clone())).collect();
        s["$defs"] = Json::Object(defs);
    }
    s
}

fn pretty(v: &Json) -> String {
    let mut text = serde_json::to_string_pretty(v).unwrap();
    text.push('\n');
    text
}

#[test]
fn schemas_are_the_committed_files() {
    // rule: WIRE-35
    for (kind, _) in KINDS {
        committed(
            &format!("schemas/{kind}.schema.json"),
            &pretty(&schema(kind)),
        );
    }
}

fn committed_schemas() -> Vec<(&'static str, Json)> {
    KINDS
        .iter()
        .map(|(kind, _)| {
            let path = root().join(format!("schemas/{kind}.schema.json"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            (*kind, serde_json::from_str(&text).unwrap())
        })
        .collect()
}

/// Validates documents against the committed schemas, which reference each other by `$id`.
struct Schemas {
    all: Vec<(&'static str, Json)>,
}

impl Schemas {
    fn load() -> Schemas {
        Schemas {
            all: committed_schemas(),
        }
    }

    fn check(&self, kind: &str, doc: &Json) -> Result<(), String> {
        let registry = jsonschema::Registry::new()
            .extend(self.all.iter().map(|(k, s)| (id(k), s)))
            .unwrap()
            .prepare()
            .unwrap();
        let schema = &self.all.iter().find(|(k, _)| *k == kind).unwrap().1;
        let validator = jsonschema::options()
            .with_registry(&registry)
            .build(schema)
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

#[test]
fn schemas_cover_exactly_the_fourteen_kinds() {
    // rule: WIRE-38 (decided: the fourteen kinds of spec/rules.md, RegionClaim and Extraction),
    // WIRE-35
    let mut files: Vec<String> = std::fs::read_dir(root().join("schemas"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut expected: Vec<String> = KINDS
        .iter()
        .map(|(kind, _)| format!("{kind}.schema.json"))
        .collect();
    expected.sort();
    assert_eq!(files, expected);
    for (kind, _) in KINDS {
        let schema = &committed_schemas()
            .into_iter()
            .find(|(k, _)| *k == kind)
            .unwrap()
            .1;
        assert_eq!(schema["title"], json!(kind));
    }
}

#[test]
fn schemas_are_valid_draft_2020_12() {
    // rule: WIRE-35
    for (kind, s) in committed_schemas() {
        assert!(jsonschema::meta::is_valid(&s), "{kind}");
        assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(s["additionalProperties"], json!(false), "{kind}");
        assert_eq!(s["properties"]["version"], json!({"const": 4}), "{kind}");
        assert_eq!(s["properties"]["kind"], json!({"const": kind}), "{kind}");
        let required = s["required"].as_array().unwrap().len();
        assert_eq!(
            required,
            s["properties"].as_object().unwrap().len(),
            "{kind}"
        );
    }
}

#[test]
fn every_example_validates_against_its_schema() {
    // rule: WIRE-35, WIRE-33
    let schemas = Schemas::load();
    for (stem, kind, _) in examples() {
        let doc: Json = serde_json::from_str(&example_file(stem)).unwrap();
        schemas
            .check(kind, &doc)
            .unwrap_or_else(|e| panic!("examples/{stem}.json: {e}"));
    }
}

/// Every object path in `doc` that is a wire kind (has "kind"), with its kind.
fn kind_objects(doc: &Json, pointer: String, out: &mut Vec<String>) {
    match doc {
        Json::Object(m) => {
            if m.contains_key("kind") && m.contains_key("version") {
                out.push(pointer.clone());
            }
            for (k, v) in m {
                kind_objects(
                    v,
                    format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Json::Array(xs) => {
            for (i, v) in xs.iter().enumerate() {
                kind_objects(v, format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn removing_any_required_field_invalidates_every_example() {
    // rule: WIRE-35, WIRE-04
    let schemas = Schemas::load();
    let mut removed = 0;
    for (stem, kind, _) in examples() {
        let doc: Json = serde_json::from_str(&example_file(stem)).unwrap();
        let mut objects = Vec::new();
        kind_objects(&doc, String::new(), &mut objects);
        for object in objects {
            let fields: Vec<String> = doc
                .pointer(&object)
                .unwrap()
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            for field in fields {
                let mut broken = doc.clone();
                broken
                    .pointer_mut(&object)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove(&field);
                assert!(
                    schemas.check(kind, &broken).is_err(),
                    "examples/{stem}.json without {object}/{field} still validates"
                );
                removed += 1;
            }
        }
    }
    assert!(removed > 100, "{removed}");
}

#[test]
fn schemas_refuse_what_the_reader_refuses() {
    // rule: WIRE-35, WIRE-02, WIRE-07, WIRE-08
    let schemas = Schemas::load();
    let doc: Json = serde_json::from_str(&example_file("manifest")).unwrap();
    let mut bad = Vec::new();
    for (pointer, value) in [
        ("/version", json!(3)),
        ("/kind", json!("Contract")),
        ("/keys", json!([1])),
        ("/rows", json!(true)),
        ("/rows", json!(4.5)),
        ("/produced_at/$datetime", json!("2026-10-28T06:00:00")),
        ("/produced_at/tz", json!("UTC")),
        ("/content_hash", json!("ABC")),
    ] {
        let mut d = doc.clone();
        let (parent, last) = pointer.rsplit_once('/').unwrap();
        d.pointer_mut(parent)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .insert(last.into(), value);
        bad.push(d);
    }
    for d in &bad {
        assert!(schemas.check("Manifest", d).is_err(), "{d}");
        assert!(Manifest::from_value(d).is_err(), "{d}");
    }
    // and accepts what the reader accepts: 4.0 is 4
    let mut d = doc.clone();
    d["version"] = json!(4.0);
    d["rows"] = json!(12.0);
    assert!(schemas.check("Manifest", &d).is_ok());
    assert!(Manifest::from_value(&d).is_ok());
}

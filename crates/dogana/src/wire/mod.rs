//! Versioned JSON (wire format version 4): the exact JSON of every kind, and identities.
//!
//! Every structured value is written with `"version": 4` and its `"kind"`, every field present,
//! defaults included (WIRE-01, WIRE-04). Its *identity* is the SHA-256 of the RFC 8785
//! canonical form of its identity form: `version` and every field at its default omitted,
//! recursively, and a replay's outcome written as `accepted` (WIRE-18 to WIRE-21).
//!
//! Encoding lives here; decoding, which refuses bad documents with a path-named
//! [`SerializationError`](crate::SerializationError), lives in `decode.rs`.

use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};

use crate::claims::{Claims, RegionClaim};
use crate::contract::Contract;
use crate::gate::{Check, Outcome, Receipt};
use crate::ledger::{hex, Ledger, Region};
use crate::manifest::{Manifest, Position, Since};
use crate::plan::{Action, ApplyPlan, Transition};
use crate::shape::Shape;
use crate::time::{Date, Duration, Timestamp};
use crate::value::{Value, Window};

mod decode;
mod fast;
mod text;
pub use decode::FromWire;
pub(crate) use text::{Text, WriteText};

/// The wire format version this crate reads and writes.
pub const VERSION: i64 = 4;

/// Which JSON form to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The full wire form: version, kind and every field.
    Wire,
    /// The identity form: kind and every field not at its default, no version.
    Identity,
}

/// A kind of structured value with an exact JSON form and an identity.
///
/// ```
/// use dogana::{Contract, LogicalType, Shape, Wire};
/// let c = Contract::builder("orders", ["id"]).shape("full", Shape::full())
///     .column("id", LogicalType::Int).build().unwrap();
/// let doc = c.to_json();
/// assert!(doc.starts_with(r#"{"cursor_column":null,"deleted_column":null,"key":["id"],"kind":"Contract""#));
/// assert_eq!(c.identity().len(), 64);
/// ```
pub trait Wire {
    /// The kind's name on the wire: its class name.
    const KIND: &'static str;

    /// The JSON of the value in the given form.
    fn encode(&self, form: Form) -> Json;

    /// The full wire form as a JSON value (the "dict-like" form).
    fn to_value(&self) -> Json {
        self.encode(Form::Wire)
    }

    /// The canonical JSON document: sorted keys, compact, ASCII escapes (WIRE-17).
    fn to_json(&self) -> String {
        dogana_json::canonical(&self.to_value())
    }

    /// The identity form (WIRE-19, WIRE-20).
    fn identity_dict(&self) -> Json {
        self.encode(Form::Identity)
    }

    /// The RFC 8785 text of the identity form (WIRE-21).
    fn identity_json(&self) -> String {
        String::from_utf8(dogana_json::jcs(&self.identity_dict())).expect("JCS output is UTF-8")
    }

    /// SHA-256 of the identity JSON, as 64 lowercase hex characters (WIRE-18).
    fn identity(&self) -> String {
        fresh_identity(self)
    }
}

/// [`Wire::identity`] computed from the identity form, never from a kept value.
pub(crate) fn fresh_identity<W: Wire + ?Sized>(value: &W) -> String {
    hex(&Sha256::digest(dogana_json::jcs(&value.identity_dict())))
}

/// A value's identity, computed at its first use and kept with it (a receiver asks a
/// manifest and a receipt for theirs several times per delivery). It is not part of the
/// value: equality ignores it. Only for values that do not change once made: every field of
/// a value holding one is set before anything asks for its identity.
#[derive(Clone, Default)]
pub(crate) struct IdentityMemo(std::sync::OnceLock<String>);

impl IdentityMemo {
    /// The kept identity, or `fresh()` kept.
    pub(crate) fn get(&self, fresh: impl FnOnce() -> String) -> String {
        self.0.get_or_init(fresh).clone()
    }
}

impl PartialEq for IdentityMemo {
    fn eq(&self, _: &IdentityMemo) -> bool {
        true
    }
}

impl Eq for IdentityMemo {}

impl std::fmt::Debug for IdentityMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IdentityMemo")
    }
}

/// Builds one object in either form.
pub(crate) struct Obj {
    form: Form,
    map: Map<String, Json>,
}

impl Obj {
    pub(crate) fn new(kind: &str, form: Form) -> Obj {
        let mut map = Map::new();
        if form == Form::Wire {
            map.insert("version".into(), Json::from(VERSION));
        }
        map.insert("kind".into(), Json::from(kind));
        Obj { form, map }
    }

    /// A field without a default: always present.
    pub(crate) fn field(mut self, name: &str, value: Json) -> Obj {
        self.map.insert(name.into(), value);
        self
    }

    /// A field with a default: omitted from the identity form when at it.
    pub(crate) fn optional(mut self, name: &str, value: Json, at_default: bool) -> Obj {
        if !(at_default && self.form == Form::Identity) {
            self.map.insert(name.into(), value);
        }
        self
    }

    pub(crate) fn done(self) -> Json {
        Json::Object(self.map)
    }
}

pub(crate) fn date(d: Date) -> Json {
    let mut m = Map::new();
    m.insert("$date".into(), Json::from(d.to_string()));
    Json::Object(m)
}

pub(crate) fn datetime(t: Timestamp) -> Json {
    let mut m = Map::new();
    m.insert("$datetime".into(), Json::from(t.to_string()));
    Json::Object(m)
}

pub(crate) fn duration(d: Duration) -> Json {
    let mut m = Map::new();
    let n = match d.whole_seconds() {
        Some(s) => Json::from(s),
        None => Json::from(d.as_seconds_f64()),
    };
    m.insert("$seconds".into(), n);
    Json::Object(m)
}

pub(crate) fn value(v: &Value) -> Json {
    match v {
        Value::Int(i) => Json::from(*i),
        Value::Str(s) => Json::from(s.as_str()),
        Value::Date(d) => date(*d),
        Value::Datetime(t) => datetime(*t),
    }
}

pub(crate) fn opt<T>(x: Option<T>, f: impl FnOnce(T) -> Json) -> Json {
    x.map_or(Json::Null, f)
}

pub(crate) fn window(w: &Window) -> Json {
    Json::Array(vec![value(&w.low), value(&w.high)])
}

pub(crate) fn position(p: &Position) -> Json {
    match p {
        Position::Token(t) => Json::from(t.as_str()),
        Position::Sequence(n) => Json::from(*n),
    }
}

pub(crate) fn since(s: &Since) -> Json {
    match s {
        Since::Time(t) => datetime(*t),
        Since::Position(p) => position(p),
    }
}

fn strings(xs: &[String]) -> Json {
    Json::Array(xs.iter().map(|s| Json::from(s.as_str())).collect())
}

fn list<T: Wire>(xs: &[T], form: Form) -> Json {
    Json::Array(xs.iter().map(|x| x.encode(form)).collect())
}

impl Wire for Shape {
    const KIND: &'static str = "Shape";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("coverage", Json::from(self.coverage.name()))
            .field("checkpoint", Json::from(self.checkpoint.name()))
            .field("deletions", Json::from(self.deletions.name()))
            .optional(
                "cost",
                Json::from(self.cost),
                self.cost == Shape::DEFAULT_COST,
            )
            .optional(
                "window_size",
                opt(self.window_size, duration),
                self.window_size.is_none(),
            )
            .optional(
                "lookback",
                opt(self.lookback, duration),
                self.lookback.is_none(),
            )
            .done()
    }
}

impl Wire for Contract {
    const KIND: &'static str = "Contract";
    /// The same bytes as the generic path, written without a JSON tree ([`Text`]).
    fn to_json(&self) -> String {
        self.canonical_text()
    }
    /// The same bytes as the generic path, written without a JSON tree.
    fn identity_json(&self) -> String {
        self.identity_text()
    }
    fn identity(&self) -> String {
        self.identity_hash()
    }
    fn encode(&self, form: Form) -> Json {
        let shapes = self
            .shapes
            .iter()
            .map(|(k, s)| (k.clone(), s.encode(form)))
            .collect();
        let types = self
            .types
            .iter()
            .map(|(k, t)| (k.clone(), Json::from(t.name())))
            .collect();
        let name = |c: &Option<String>| opt(c.as_deref(), Json::from);
        Obj::new(Self::KIND, form)
            .field("table", Json::from(self.table.as_str()))
            .field("key", strings(&self.key))
            .field("shapes", Json::Object(shapes))
            .optional(
                "window_column",
                name(&self.window_column),
                self.window_column.is_none(),
            )
            .optional(
                "cursor_column",
                name(&self.cursor_column),
                self.cursor_column.is_none(),
            )
            .optional(
                "deleted_column",
                name(&self.deleted_column),
                self.deleted_column.is_none(),
            )
            .optional("types", Json::Object(types), self.types.is_empty())
            .optional(
                "schema_hash",
                name(&self.schema_hash),
                self.schema_hash.is_none(),
            )
            .optional(
                "start_at",
                opt(self.start_at, datetime),
                self.start_at.is_none(),
            )
            .done()
    }
}

impl Wire for Manifest {
    const KIND: &'static str = "Manifest";
    /// The same bytes as the generic path, written without a JSON tree ([`Text`]).
    fn to_json(&self) -> String {
        self.canonical_text()
    }
    /// The same bytes as the generic path, written without a JSON tree.
    fn identity_json(&self) -> String {
        self.identity_text()
    }
    /// Computed once per manifest (see [`IdentityMemo`]), without a JSON tree.
    fn identity(&self) -> String {
        self.identity.get(|| self.identity_hash())
    }
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("table", Json::from(self.table.as_str()))
            .field("shape", Json::from(self.shape.as_str()))
            .field("produced_at", datetime(self.produced_at))
            .optional(
                "window",
                opt(self.window.as_ref(), window),
                self.window.is_none(),
            )
            .optional(
                "since",
                opt(self.since.as_ref(), since),
                self.since.is_none(),
            )
            .optional(
                "generation",
                opt(self.generation.as_ref(), position),
                self.generation.is_none(),
            )
            .field("rows", Json::from(self.rows))
            .optional(
                "schema_hash",
                opt(self.schema_hash.as_deref(), Json::from),
                self.schema_hash.is_none(),
            )
            .optional(
                "tombstones",
                Json::from(self.tombstones),
                self.tombstones == 0,
            )
            .optional(
                "content_hash",
                opt(self.content_hash.as_deref(), Json::from),
                self.content_hash.is_none(),
            )
            .done()
    }
}

impl Wire for Region {
    const KIND: &'static str = "Region";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("low", opt(self.low(), value))
            .field("high", opt(self.high(), value))
            .field("low_open", Json::from(self.low_open()))
            .field("high_open", Json::from(self.high_open()))
            .field("complete_as_of", opt(self.complete_as_of(), datetime))
            .field("deletions_as_of", opt(self.deletions_as_of(), datetime))
            .done()
    }
}

impl Wire for Ledger {
    const KIND: &'static str = "Ledger";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("contract", self.contract().encode(form))
            .field("regions", list(&self.regions(), form))
            .optional(
                "generation",
                opt(self.generation(), position),
                self.generation().is_none(),
            )
            .optional(
                "publication_id",
                opt(self.publication_id(), Json::from),
                self.publication_id().is_none(),
            )
            .done()
    }

    /// The same bytes as the generic path, written from each region's cached identity bytes
    /// without building a JSON tree (a receiver saves its ledger with every acceptance).
    fn to_json(&self) -> String {
        self.streamed_json()
            .unwrap_or_else(|| dogana_json::canonical(&self.to_value()))
    }

    /// The same bytes as the generic path, streamed into the hash from each region's cached
    /// bytes without building a JSON tree, and computed once per ledger: a ledger's identity is
    /// O(n) in its regions by definition (LEDGER-15), and a receiver needs it for every
    /// decision.
    fn identity(&self) -> String {
        self.cached_identity().to_owned()
    }

    /// The bytes [`Wire::identity`] hashes, from the same stream.
    fn identity_json(&self) -> String {
        let mut out = Vec::new();
        self.write_identity_json(|bytes| out.extend_from_slice(bytes));
        String::from_utf8(out).expect("JCS output is UTF-8")
    }
}

impl Wire for Check {
    const KIND: &'static str = "Check";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("name", Json::from(self.name.as_str()))
            .field("passed", Json::from(self.passed))
            .optional(
                "detail",
                Json::from(self.detail.as_str()),
                self.detail.is_empty(),
            )
            .done()
    }
}

impl Wire for Action {
    const KIND: &'static str = "Action";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("action", Json::from(self.kind.name()))
            .optional(
                "window",
                opt(self.window.as_ref(), window),
                self.window.is_none(),
            )
            .field("key", strings(&self.key))
            .done()
    }
}

impl Wire for ApplyPlan {
    const KIND: &'static str = "ApplyPlan";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("actions", list(&self.actions, form))
            .done()
    }
}

impl Wire for Transition {
    const KIND: &'static str = "Transition";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("plan", self.plan.encode(form))
            .field("regions", list(&self.regions, form))
            .done()
    }
}

impl Wire for Receipt {
    const KIND: &'static str = "Receipt";
    /// The same bytes as the generic path, written without a JSON tree ([`Text`]): a receiver
    /// writes every receipt it gives (issue 16).
    fn to_json(&self) -> String {
        self.canonical_text()
    }
    /// The same bytes as the generic path, written without a JSON tree.
    fn identity_json(&self) -> String {
        self.identity_text()
    }
    /// Computed once per receipt (see [`IdentityMemo`]), without a JSON tree; a replay's is
    /// its original's, as the identity form says (WIRE-20).
    fn identity(&self) -> String {
        self.identity.get(|| self.identity_hash())
    }
    fn encode(&self, form: Form) -> Json {
        let outcome = match (self.outcome, form) {
            (Outcome::Replayed, Form::Identity) => Outcome::Accepted,
            (o, _) => o,
        };
        Obj::new(Self::KIND, form)
            .field("manifest", self.manifest.encode(form))
            .field("contract", self.contract.encode(form))
            .field("checks", list(&self.checks, form))
            .field("outcome", Json::from(outcome.name()))
            .field("received_at", datetime(self.received_at))
            .optional(
                "source",
                opt(self.source.as_deref(), Json::from),
                self.source.is_none(),
            )
            .optional(
                "base_publication_id",
                opt(self.base_publication_id.as_deref(), Json::from),
                self.base_publication_id.is_none(),
            )
            .field("publication_id", Json::from(self.publication_id.as_str()))
            .field("ledger_identity", Json::from(self.ledger_identity.as_str()))
            .optional(
                "transition",
                opt(self.transition.as_ref(), |t| t.encode(form)),
                self.transition.is_none(),
            )
            .done()
    }
}

impl Wire for RegionClaim {
    const KIND: &'static str = "RegionClaim";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("table", Json::from(self.table.as_str()))
            .field("region", self.region.encode(form))
            .field("state", Json::from(self.state.name()))
            .done()
    }
}

impl Wire for Claims {
    const KIND: &'static str = "Claims";
    fn encode(&self, form: Form) -> Json {
        Obj::new(Self::KIND, form)
            .field("at", datetime(self.at))
            .field("limit", duration(self.limit))
            .field("regions", list(&self.regions, form))
            .done()
    }
}

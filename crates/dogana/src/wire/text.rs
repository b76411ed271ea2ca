//! The wire and identity forms written straight into text, without a JSON tree.
//!
//! [`Text`] writes, in one [`Form`], exactly the bytes the generic path writes from the tree
//! [`Wire::encode`](super::Wire::encode) builds: `dogana_json::canonical` of the wire form
//! (WIRE-17) and `dogana_json::jcs` of the identity form (WIRE-18, WIRE-22). The two differ in
//! three ways, each written here for its form:
//!
//! - strings: the canonical form escapes every character outside printable ASCII as Python's
//!   `ensure_ascii` does, RFC 8785 only `"`, `\` and controls (the writers of `dogana_json`);
//! - integers: the canonical form writes every integer exactly, RFC 8785 as the binary64 it
//!   rounds to (the same digits within ±2^53); floats are ECMAScript's shortest form in both;
//! - keys: the canonical form sorts them by code point, RFC 8785 by UTF-16 code unit. The
//!   kinds' field names are ASCII, where the two agree; a map with other keys is sorted for
//!   its form ([`Text::map`]).
//!
//! A kind's [`WriteText`] names its fields in key order, as [`Fields`] requires; `kind` and the
//! wire form's `version` are put in their places by [`Fields`] itself. The property tests
//! (`tests/wire_direct.rs`) hold every kind written here to the generic path.

use sha2::{Digest, Sha256};

use super::{Form, VERSION};
use crate::contract::Contract;
use crate::gate::{Check, Outcome, Receipt};
use crate::ledger::{hex, Region};
use crate::manifest::{Manifest, Position, Since};
use crate::plan::{Action, ApplyPlan, Transition};
use crate::shape::Shape;
use crate::time::{Date, Duration, Timestamp};
use crate::value::{Value, Window};

/// The largest magnitude up to which every integer is a binary64, written with the same digits
/// by both forms.
const EXACT: u64 = 1 << 53;

/// JSON text of one form, written value by value.
pub(crate) struct Text {
    out: String,
    form: Form,
}

impl Text {
    pub(crate) fn new(form: Form, capacity: usize) -> Text {
        Text {
            out: String::with_capacity(capacity),
            form,
        }
    }

    pub(crate) fn into_string(self) -> String {
        self.out
    }

    /// Text the caller knows to be the same in both forms (punctuation, ASCII literals).
    pub(crate) fn raw(&mut self, s: &str) {
        self.out.push_str(s);
    }

    pub(crate) fn null(&mut self) {
        self.out.push_str("null");
    }

    pub(crate) fn bool(&mut self, b: bool) {
        self.out.push_str(if b { "true" } else { "false" });
    }

    pub(crate) fn str(&mut self, s: &str) {
        match self.form {
            Form::Wire => dogana_json::write_python_ascii_string(&mut self.out, s),
            Form::Identity => dogana_json::write_jcs_string(&mut self.out, s),
        }
    }

    pub(crate) fn int(&mut self, n: i64) {
        if self.form == Form::Identity && n.unsigned_abs() > EXACT {
            dogana_json::write_ecmascript_number(&mut self.out, n as f64);
        } else {
            use std::fmt::Write as _;
            let _ = write!(self.out, "{n}");
        }
    }

    pub(crate) fn uint(&mut self, n: u64) {
        if self.form == Form::Identity && n > EXACT {
            dogana_json::write_ecmascript_number(&mut self.out, n as f64);
        } else {
            use std::fmt::Write as _;
            let _ = write!(self.out, "{n}");
        }
    }

    /// A float as `serde_json::Value::from(f)` holds it: `null` when not finite.
    pub(crate) fn float(&mut self, f: f64) {
        if f.is_finite() {
            dogana_json::write_ecmascript_number(&mut self.out, f);
        } else {
            self.null();
        }
    }

    /// `null`, or `x` written by `write`.
    pub(crate) fn opt<T>(&mut self, x: Option<T>, write: impl FnOnce(&mut Text, T)) {
        match x {
            None => self.null(),
            Some(x) => write(self, x),
        }
    }

    /// An array of the items, each written by `write`.
    pub(crate) fn list<T>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut write: impl FnMut(&mut Text, T),
    ) {
        self.out.push('[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            write(self, item);
        }
        self.out.push(']');
    }

    pub(crate) fn strings(&mut self, xs: &[String]) {
        self.list(xs, |t, s| t.str(s));
    }

    /// An array of values of one kind.
    pub(crate) fn kinds<W: WriteText>(&mut self, xs: &[W]) {
        self.list(xs, |t, x| x.write_text(t));
    }

    /// An object of the kind `kind`, its fields to be named in key order.
    pub(crate) fn object(&mut self, kind: &'static str) -> Fields<'_> {
        self.out.push('{');
        let version = self.form == Form::Wire;
        Fields {
            text: self,
            kind: Some(kind),
            version,
            first: true,
            last: "",
        }
    }

    /// An object of any keys (a contract's shapes, its types), given in code-point order (a
    /// `BTreeMap<String, _>`'s), sorted again by UTF-16 code units for RFC 8785 when a key is
    /// not ASCII (the orders differ only beyond it).
    pub(crate) fn map<'m, T: 'm>(
        &mut self,
        entries: impl Iterator<Item = (&'m String, T)>,
        mut write: impl FnMut(&mut Text, T),
    ) {
        let mut entries: Vec<(&String, T)> = entries.collect();
        if self.form == Form::Identity && entries.iter().any(|(k, _)| !k.is_ascii()) {
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
        }
        self.out.push('{');
        for (i, (key, value)) in entries.into_iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.str(key);
            self.out.push(':');
            write(self, value);
        }
        self.out.push('}');
    }

    /// `{"$date": "YYYY-MM-DD"}`, as [`super::date`] builds it.
    pub(crate) fn date(&mut self, d: Date) {
        self.out.push_str("{\"$date\":\"");
        d.push_to(&mut self.out);
        self.out.push_str("\"}");
    }

    /// `{"$datetime": "…"}`, as [`super::datetime`] builds it.
    pub(crate) fn datetime(&mut self, t: Timestamp) {
        self.out.push_str("{\"$datetime\":\"");
        t.push_to(&mut self.out);
        self.out.push_str("\"}");
    }

    /// `{"$seconds": n}`, as [`super::duration`] builds it.
    pub(crate) fn duration(&mut self, d: Duration) {
        self.out.push_str("{\"$seconds\":");
        match d.whole_seconds() {
            Some(s) => self.int(s),
            None => self.float(d.as_seconds_f64()),
        }
        self.out.push('}');
    }

    /// A key or bound value, as [`super::value`] builds it.
    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Int(i) => self.int(*i),
            Value::Str(s) => self.str(s),
            Value::Date(d) => self.date(*d),
            Value::Datetime(t) => self.datetime(*t),
        }
    }

    pub(crate) fn window(&mut self, w: &Window) {
        self.list([&w.low, &w.high], Text::value);
    }

    pub(crate) fn position(&mut self, p: &Position) {
        match p {
            Position::Token(t) => self.str(t),
            Position::Sequence(n) => self.int(*n),
        }
    }

    pub(crate) fn since(&mut self, s: &Since) {
        match s {
            Since::Time(t) => self.datetime(*t),
            Since::Position(p) => self.position(p),
        }
    }
}

/// The fields of one object, named in strictly increasing key order (ASCII names, which sort
/// the same in both forms); `kind` and, in the wire form, `"version": 4` are written in their
/// places among them.
pub(crate) struct Fields<'t> {
    text: &'t mut Text,
    kind: Option<&'static str>,
    version: bool,
    first: bool,
    /// The last name written, to hold the callers to key order.
    last: &'static str,
}

impl Fields<'_> {
    fn name(&mut self, name: &'static str) {
        if !self.first {
            self.text.out.push(',');
        }
        self.first = false;
        self.text.out.push('"');
        self.text.out.push_str(name);
        self.text.out.push_str("\":");
    }

    /// Writes what sorts before `name` and is due: `kind`, `version`.
    fn due_before(&mut self, name: &'static str) {
        debug_assert!(
            self.last < name && name.is_ascii(),
            "{name} after {}",
            self.last
        );
        self.last = name;
        if let Some(kind) = self.kind.filter(|_| "kind" < name) {
            self.kind = None;
            self.name("kind");
            self.text.str(kind);
        }
        if self.version && "version" < name {
            self.version = false;
            self.name("version");
            self.text.int(VERSION);
        }
    }

    /// A field without a default: always present.
    pub(crate) fn field(mut self, name: &'static str, write: impl FnOnce(&mut Text)) -> Self {
        self.due_before(name);
        self.name(name);
        write(self.text);
        self
    }

    /// A field with a default: omitted from the identity form when at it (as
    /// [`super::Obj::optional`]).
    pub(crate) fn optional(
        self,
        name: &'static str,
        at_default: bool,
        write: impl FnOnce(&mut Text),
    ) -> Self {
        if at_default && self.text.form == Form::Identity {
            self
        } else {
            self.field(name, write)
        }
    }

    /// A field whose default is `null`: omitted from the identity form when absent.
    pub(crate) fn nullable<T>(
        self,
        name: &'static str,
        x: Option<T>,
        write: impl FnOnce(&mut Text, T),
    ) -> Self {
        self.optional(name, x.is_none(), |t| t.opt(x, write))
    }

    pub(crate) fn done(mut self) {
        // After every name: `~` sorts after ASCII letters and `_`.
        self.due_before("~");
        self.text.out.push('}');
    }
}

/// A kind that writes its own JSON text in either form, the same bytes as the generic path.
pub(crate) trait WriteText {
    fn write_text(&self, t: &mut Text);

    /// A size to start the text with.
    const CAPACITY: usize = 256;

    /// The canonical document (WIRE-17).
    fn canonical_text(&self) -> String {
        let mut t = Text::new(Form::Wire, Self::CAPACITY);
        self.write_text(&mut t);
        t.into_string()
    }

    /// The RFC 8785 text of the identity form (WIRE-21).
    fn identity_text(&self) -> String {
        let mut t = Text::new(Form::Identity, Self::CAPACITY);
        self.write_text(&mut t);
        t.into_string()
    }

    /// SHA-256 of [`WriteText::identity_text`] (WIRE-18).
    fn identity_hash(&self) -> String {
        hex(&Sha256::digest(self.identity_text().as_bytes()))
    }
}

impl WriteText for Shape {
    fn write_text(&self, t: &mut Text) {
        t.object("Shape")
            .field("checkpoint", |t| t.str(self.checkpoint.name()))
            .optional("cost", self.cost == Shape::DEFAULT_COST, |t| {
                t.float(self.cost)
            })
            .field("coverage", |t| t.str(self.coverage.name()))
            .field("deletions", |t| t.str(self.deletions.name()))
            .nullable("lookback", self.lookback, Text::duration)
            .nullable("window_size", self.window_size, Text::duration)
            .done();
    }
}

impl WriteText for Contract {
    const CAPACITY: usize = 1024;
    fn write_text(&self, t: &mut Text) {
        t.object("Contract")
            .nullable("cursor_column", self.cursor_column.as_deref(), Text::str)
            .nullable("deleted_column", self.deleted_column.as_deref(), Text::str)
            .field("key", |t| t.strings(&self.key))
            .nullable("schema_hash", self.schema_hash.as_deref(), Text::str)
            .field("shapes", |t| {
                t.map(self.shapes.iter(), |t, s| s.write_text(t))
            })
            .nullable("start_at", self.start_at, Text::datetime)
            .field("table", |t| t.str(&self.table))
            .optional("types", self.types.is_empty(), |t| {
                t.map(self.types.iter(), |t, ty| t.str(ty.name()))
            })
            .nullable("window_column", self.window_column.as_deref(), Text::str)
            .done();
    }
}

impl WriteText for Manifest {
    const CAPACITY: usize = 512;
    fn write_text(&self, t: &mut Text) {
        t.object("Manifest")
            .nullable("content_hash", self.content_hash.as_deref(), Text::str)
            .nullable("generation", self.generation.as_ref(), Text::position)
            .field("produced_at", |t| t.datetime(self.produced_at))
            .field("rows", |t| t.uint(self.rows))
            .nullable("schema_hash", self.schema_hash.as_deref(), Text::str)
            .field("shape", |t| t.str(&self.shape))
            .nullable("since", self.since.as_ref(), Text::since)
            .field("table", |t| t.str(&self.table))
            .optional("tombstones", self.tombstones == 0, |t| {
                t.uint(self.tombstones)
            })
            .nullable("window", self.window.as_ref(), Text::window)
            .done();
    }
}

impl WriteText for Region {
    /// Also the spelling of the identity bytes a ledger keeps for each of its regions.
    fn write_text(&self, t: &mut Text) {
        t.object("Region")
            .field("complete_as_of", |t| {
                t.opt(self.complete_as_of(), Text::datetime)
            })
            .field("deletions_as_of", |t| {
                t.opt(self.deletions_as_of(), Text::datetime)
            })
            .field("high", |t| t.opt(self.high(), Text::value))
            .field("high_open", |t| t.bool(self.high_open()))
            .field("low", |t| t.opt(self.low(), Text::value))
            .field("low_open", |t| t.bool(self.low_open()))
            .done();
    }
}

impl WriteText for Check {
    fn write_text(&self, t: &mut Text) {
        t.object("Check")
            .optional("detail", self.detail.is_empty(), |t| t.str(&self.detail))
            .field("name", |t| t.str(&self.name))
            .field("passed", |t| t.bool(self.passed))
            .done();
    }
}

impl WriteText for Action {
    fn write_text(&self, t: &mut Text) {
        t.object("Action")
            .field("action", |t| t.str(self.kind.name()))
            .field("key", |t| t.strings(&self.key))
            .nullable("window", self.window.as_ref(), Text::window)
            .done();
    }
}

impl WriteText for ApplyPlan {
    fn write_text(&self, t: &mut Text) {
        t.object("ApplyPlan")
            .field("actions", |t| t.kinds(&self.actions))
            .done();
    }
}

impl WriteText for Transition {
    fn write_text(&self, t: &mut Text) {
        t.object("Transition")
            .field("plan", |t| self.plan.write_text(t))
            .field("regions", |t| t.kinds(&self.regions))
            .done();
    }
}

impl WriteText for Receipt {
    const CAPACITY: usize = 4096;
    fn write_text(&self, t: &mut Text) {
        // A replay's identity is its original's (WIRE-20).
        let outcome = match (self.outcome, t.form) {
            (Outcome::Replayed, Form::Identity) => Outcome::Accepted,
            (o, _) => o,
        };
        t.object("Receipt")
            .nullable(
                "base_publication_id",
                self.base_publication_id.as_deref(),
                Text::str,
            )
            .field("checks", |t| t.kinds(&self.checks))
            .field("contract", |t| self.contract.write_text(t))
            .field("ledger_identity", |t| t.str(&self.ledger_identity))
            .field("manifest", |t| self.manifest.write_text(t))
            .field("outcome", |t| t.str(outcome.name()))
            .field("publication_id", |t| t.str(&self.publication_id))
            .field("received_at", |t| t.datetime(self.received_at))
            .nullable("source", self.source.as_deref(), Text::str)
            .nullable("transition", self.transition.as_ref(), |t, x| {
                x.write_text(t)
            })
            .done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;

    fn written(form: Form, write: impl FnOnce(&mut Text)) -> String {
        let mut t = Text::new(form, 16);
        write(&mut t);
        t.into_string()
    }

    fn generic(form: Form, v: &Json) -> String {
        match form {
            Form::Wire => dogana_json::canonical(v),
            Form::Identity => String::from_utf8(dogana_json::jcs(v)).unwrap(),
        }
    }

    // rule: WIRE-17 — integers exact in the canonical form, beyond 2^53 too
    // rule: WIRE-23 — and as their binary64 in RFC 8785, floats in ECMAScript's form in both
    #[test]
    fn numbers_are_written_as_the_generic_path_writes_them() {
        for form in [Form::Wire, Form::Identity] {
            let exact = 1i64 << 53;
            for n in [
                0,
                -1,
                exact,
                -exact,
                exact + 1,
                -exact - 1,
                i64::MAX,
                i64::MIN,
            ] {
                assert_eq!(written(form, |t| t.int(n)), generic(form, &Json::from(n)));
            }
            for n in [0, 1u64 << 53, (1 << 53) + 1, u64::MAX] {
                assert_eq!(written(form, |t| t.uint(n)), generic(form, &Json::from(n)));
            }
            for f in [
                1.0,
                -0.0,
                0.1,
                1e21,
                1e-7,
                f64::MAX,
                f64::NAN,
                f64::INFINITY,
            ] {
                assert_eq!(written(form, |t| t.float(f)), generic(form, &Json::from(f)));
            }
        }
    }
}

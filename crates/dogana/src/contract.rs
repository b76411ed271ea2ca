//! The contract: the receiver's description of one table and the reads it accepts.

use std::collections::BTreeMap;

use dogana_json::{quoted, SHOWN};

use crate::error::{invalid, InvalidContract};
use crate::manifest::ManifestBuilder;
use crate::shape::{Checkpoint, Coverage, Deletions, Shape};
use crate::time::Timestamp;
use crate::value::LogicalType;

/// The receiver's description of one table: its key, the shapes the source can produce, the
/// columns dogana reads and their types.
///
/// Built with [`Contract::builder`]; `build` checks every rule of the CONTRACT section, so a
/// `Contract` value is always valid.
///
/// ```
/// use dogana::{Contract, Deletions, Duration, LogicalType, Shape};
/// let orders = Contract::builder("orders", ["id"])
///     .shape("full", Shape::full().cost(10.0))
///     .shape("last3", Shape::window().size(Duration::from_days(3).unwrap()).cost(2.0))
///     .shape("changes", Shape::changes(Deletions::Tombstone))
///     .window_column("order_date")
///     .cursor_column("updated_at")
///     .deleted_column("deleted")
///     .column("id", LogicalType::Int)
///     .column("order_date", LogicalType::Date)
///     .column("updated_at", LogicalType::Datetime)
///     .column("deleted", LogicalType::Bool)
///     .build()
///     .unwrap();
/// assert_eq!(orders.table(), "orders");
/// assert_eq!(orders.window_type(), Some(LogicalType::Date));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Contract {
    pub(crate) table: String,
    pub(crate) key: Vec<String>,
    pub(crate) shapes: BTreeMap<String, Shape>,
    pub(crate) window_column: Option<String>,
    pub(crate) cursor_column: Option<String>,
    pub(crate) deleted_column: Option<String>,
    pub(crate) types: BTreeMap<String, LogicalType>,
    pub(crate) schema_hash: Option<String>,
    pub(crate) start_at: Option<Timestamp>,
}

// Costs are finite by construction (CONTRACT-33), so equality is an equivalence.
impl Eq for Contract {}

/// Builds a [`Contract`]; see [`Contract::builder`].
#[derive(Debug, Clone)]
pub struct ContractBuilder {
    contract: Contract,
}

impl ContractBuilder {
    /// Adds (or replaces) a named shape.
    pub fn shape(mut self, name: impl Into<String>, shape: Shape) -> Self {
        self.contract.shapes.insert(name.into(), shape);
        self
    }

    /// Names the window column.
    pub fn window_column(mut self, column: impl Into<String>) -> Self {
        self.contract.window_column = Some(column.into());
        self
    }

    /// Names the cursor column.
    pub fn cursor_column(mut self, column: impl Into<String>) -> Self {
        self.contract.cursor_column = Some(column.into());
        self
    }

    /// Names the deleted column.
    pub fn deleted_column(mut self, column: impl Into<String>) -> Self {
        self.contract.deleted_column = Some(column.into());
        self
    }

    /// Types one column.
    pub fn column(mut self, column: impl Into<String>, ty: LogicalType) -> Self {
        self.contract.types.insert(column.into(), ty);
        self
    }

    /// Sets the column hash (64 lowercase hex characters).
    pub fn schema_hash(mut self, hash: impl Into<String>) -> Self {
        self.contract.schema_hash = Some(hash.into());
        self
    }

    /// Sets the start of the history the source keeps (for keyless appends).
    pub fn start_at(mut self, start_at: Timestamp) -> Self {
        self.contract.start_at = Some(start_at);
        self
    }

    /// Checks every rule and returns the contract.
    pub fn build(self) -> Result<Contract, InvalidContract> {
        self.contract.validate()?;
        Ok(self.contract)
    }
}

/// Whether `s` is 64 lowercase hexadecimal characters: the spelling of every SHA-256 the
/// protocol carries (MAN-23, CONTRACT-21, RECV-15).
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The longest name a contract or manifest may hold (a table, a column, a shape) and the
/// longest generation token, in bytes: a sender's document cannot make a receiver store, nor a
/// receipt carry, a name of megabytes (CONTRACT-48, MAN-09; see docs/decisions.md).
pub const NAME_MAX: usize = 1024;

/// Refuses a name longer than [`NAME_MAX`] bytes, showing only its start.
pub(crate) fn check_length(
    field: &str,
    name: &str,
    what: &str,
    rule: &'static str,
) -> Result<(), InvalidContract> {
    if name.len() > NAME_MAX {
        return Err(invalid(
            field,
            quoted(name, SHOWN),
            rule,
            format!("{what} is at most {NAME_MAX} bytes"),
        ));
    }
    Ok(())
}

fn check_name(field: &str, name: &str, rule: &'static str) -> Result<(), InvalidContract> {
    check_length(field, name, "a name", "CONTRACT-48")?;
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(invalid(
            field,
            quoted(name, SHOWN),
            rule,
            "a name is nonempty and has no control characters",
        ));
    }
    Ok(())
}

impl Contract {
    /// Starts a contract for `table` with its key columns (empty for a keyless table).
    pub fn builder<K: Into<String>>(
        table: impl Into<String>,
        key: impl IntoIterator<Item = K>,
    ) -> ContractBuilder {
        ContractBuilder {
            contract: Contract {
                table: table.into(),
                key: key.into_iter().map(Into::into).collect(),
                shapes: BTreeMap::new(),
                window_column: None,
                cursor_column: None,
                deleted_column: None,
                types: BTreeMap::new(),
                schema_hash: None,
                start_at: None,
            },
        }
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The key columns; empty for a keyless table.
    pub fn key(&self) -> &[String] {
        &self.key
    }

    /// Whether rows have no identity (CONTRACT-03).
    pub fn is_keyless(&self) -> bool {
        self.key.is_empty()
    }

    /// The named shapes.
    pub fn shapes(&self) -> &BTreeMap<String, Shape> {
        &self.shapes
    }

    /// The shape of that name.
    pub fn shape(&self, name: &str) -> Option<&Shape> {
        self.shapes.get(name)
    }

    /// The window column, if any.
    pub fn window_column(&self) -> Option<&str> {
        self.window_column.as_deref()
    }

    /// The cursor column, if any.
    pub fn cursor_column(&self) -> Option<&str> {
        self.cursor_column.as_deref()
    }

    /// The deleted column, if any.
    pub fn deleted_column(&self) -> Option<&str> {
        self.deleted_column.as_deref()
    }

    /// The types of the bound columns.
    pub fn types(&self) -> &BTreeMap<String, LogicalType> {
        &self.types
    }

    /// The column hash, if any.
    pub fn schema_hash(&self) -> Option<&str> {
        self.schema_hash.as_deref()
    }

    /// The start of the history the source keeps, if declared.
    pub fn start_at(&self) -> Option<Timestamp> {
        self.start_at
    }

    /// The type of the window column, if there is one.
    pub fn window_type(&self) -> Option<LogicalType> {
        self.window_column
            .as_ref()
            .and_then(|c| self.types.get(c).copied())
    }

    /// The type of the cursor column, if there is one.
    pub fn cursor_type(&self) -> Option<LogicalType> {
        self.cursor_column
            .as_ref()
            .and_then(|c| self.types.get(c).copied())
    }

    /// Whether the table's positions are integers: it has sequence shapes (MAN-12).
    pub fn positions_are_integers(&self) -> bool {
        self.shapes
            .values()
            .any(|s| s.checkpoint == Checkpoint::Sequence)
    }

    /// Starts a manifest for one read of this table through `shape`, with the table and the
    /// schema hash filled in (CONTRACT-45).
    ///
    /// ```
    /// # use dogana::{Contract, LogicalType, Shape};
    /// let c = Contract::builder("events", Vec::<String>::new())
    ///     .shape("full", Shape::full())
    ///     .build()
    ///     .unwrap();
    /// let m = c.manifest("full", "2026-10-25T00:00:00Z".parse().unwrap()).rows(3).build().unwrap();
    /// assert_eq!(m.table(), "events");
    /// ```
    pub fn manifest(&self, shape: impl Into<String>, produced_at: Timestamp) -> ManifestBuilder {
        let mut builder = ManifestBuilder::new(self.table.clone(), shape, produced_at);
        if let Some(hash) = &self.schema_hash {
            builder = builder.schema_hash(hash.clone());
        }
        builder
    }

    /// Checks every rule of the CONTRACT section.
    pub(crate) fn validate(&self) -> Result<(), InvalidContract> {
        check_name("table", &self.table, "CONTRACT-48")?;
        let mut seen = std::collections::BTreeSet::new();
        for k in &self.key {
            check_name("key", k, "CONTRACT-03")?;
            if !seen.insert(k) {
                return Err(invalid(
                    "key",
                    quoted(k, SHOWN),
                    "CONTRACT-14",
                    "key columns are distinct",
                ));
            }
        }
        if self.shapes.is_empty() {
            return Err(invalid(
                "shapes",
                "{}",
                "CONTRACT-04",
                "a contract names at least one shape the source can produce",
            ));
        }
        for (field, col) in [
            ("window_column", &self.window_column),
            ("cursor_column", &self.cursor_column),
            ("deleted_column", &self.deleted_column),
        ] {
            if let Some(c) = col {
                check_name(field, c, "CONTRACT-05")?;
            }
        }
        for col in self.types.keys() {
            check_length("types", col, "a name", "CONTRACT-48")?;
        }
        self.check_types()?;
        self.check_columns()?;
        for (name, shape) in &self.shapes {
            check_name("shapes", name, "CONTRACT-04")?;
            self.check_shape(name, shape)?;
        }
        let has = |cp| self.shapes.values().any(|s| s.checkpoint == cp);
        if has(Checkpoint::Generation) && has(Checkpoint::Sequence) {
            return Err(invalid(
                "shapes",
                "generation and sequence shapes",
                "CONTRACT-31",
                "a table uses one kind of position: generations or sequences, not both",
            ));
        }
        if let Some(hash) = &self.schema_hash {
            if !is_sha256_hex(hash) {
                return Err(invalid(
                    "schema_hash",
                    quoted(hash, SHOWN),
                    "CONTRACT-21",
                    "a column hash is 64 lowercase hexadecimal characters (a SHA-256)",
                ));
            }
        }
        Ok(())
    }

    fn bound_columns(&self) -> Vec<(&'static str, &String)> {
        let mut cols: Vec<(&'static str, &String)> = self.key.iter().map(|k| ("key", k)).collect();
        for (role, col) in [
            ("window_column", &self.window_column),
            ("cursor_column", &self.cursor_column),
            ("deleted_column", &self.deleted_column),
        ] {
            if let Some(c) = col {
                cols.push((role, c));
            }
        }
        cols
    }

    fn check_types(&self) -> Result<(), InvalidContract> {
        let bound = self.bound_columns();
        for (role, col) in &bound {
            if !self.types.contains_key(*col) {
                return Err(invalid(
                    format!("types.{col}"),
                    "missing",
                    "CONTRACT-05",
                    format!("the {role} column {col:?} needs a type in types"),
                ));
            }
        }
        for col in self.types.keys() {
            if !bound.iter().any(|(_, c)| *c == col) {
                return Err(invalid(
                    format!("types.{col}"),
                    self.types[col],
                    "CONTRACT-05",
                    "types names exactly the key, window, cursor and deleted columns; this column is none of them",
                ));
            }
        }
        for col in &self.key {
            let t = self.types[col];
            if !t.is_ordered_scalar() {
                return Err(invalid(
                    format!("types.{col}"),
                    t,
                    "CONTRACT-10",
                    "key columns are int, str, date or datetime",
                ));
            }
        }
        if let Some(w) = &self.window_column {
            let t = self.types[w];
            if !t.is_ordered_scalar() {
                return Err(invalid(
                    format!("types.{w}"),
                    t,
                    "CONTRACT-10",
                    "the window column is int, str, date or datetime",
                ));
            }
        }
        if let Some(c) = &self.cursor_column {
            let t = self.types[c];
            if !matches!(t, LogicalType::Datetime | LogicalType::Int) {
                return Err(invalid(
                    format!("types.{c}"),
                    t,
                    "CONTRACT-08",
                    "the cursor column is datetime or int",
                ));
            }
        }
        if let Some(d) = &self.deleted_column {
            let t = self.types[d];
            if t != LogicalType::Bool {
                return Err(invalid(
                    format!("types.{d}"),
                    t,
                    "CONTRACT-09",
                    "the deleted column is bool",
                ));
            }
        }
        Ok(())
    }

    fn check_columns(&self) -> Result<(), InvalidContract> {
        if let Some(d) = &self.deleted_column {
            if self.key.contains(d)
                || self.window_column.as_ref() == Some(d)
                || self.cursor_column.as_ref() == Some(d)
            {
                return Err(invalid(
                    "deleted_column",
                    dogana_json::quoted(d, crate::NAME_MAX),
                    "CONTRACT-11",
                    "the deleted column differs from every key column, the window column and the cursor column",
                ));
            }
        }
        if let (Some(w), Some(c)) = (&self.window_column, &self.cursor_column) {
            if w == c {
                return Err(invalid(
                    "cursor_column",
                    dogana_json::quoted(c, crate::NAME_MAX),
                    "CONTRACT-14",
                    "a window value never changes and a cursor moves with every change, so one column cannot be both",
                ));
            }
        }
        let any = |f: &dyn Fn(&Shape) -> bool| self.shapes.values().any(f);
        let has_window_shape = any(&|s| s.coverage == Coverage::Window);
        match (&self.window_column, has_window_shape) {
            (None, true) => {
                return Err(invalid(
                    "window_column",
                    "None",
                    "CONTRACT-12",
                    "a contract with a window shape names its window column",
                ))
            }
            (Some(w), false) => {
                return Err(invalid(
                    "window_column",
                    dogana_json::quoted(w, crate::NAME_MAX),
                    "CONTRACT-12",
                    "a contract has a window column exactly when one of its shapes covers a window",
                ))
            }
            _ => {}
        }
        let has_tombstones = any(&|s| s.deletions == Deletions::Tombstone);
        match (&self.deleted_column, has_tombstones) {
            (None, true) => Err(invalid(
                "deleted_column",
                "None",
                "CONTRACT-13",
                "a contract with a tombstone shape names its deleted column",
            )),
            (Some(d), false) => Err(invalid(
                "deleted_column",
                dogana_json::quoted(d, crate::NAME_MAX),
                "CONTRACT-13",
                "a contract has a deleted column exactly when one of its shapes delivers tombstones",
            )),
            _ => Ok(()),
        }
    }

    fn check_shape(&self, name: &str, shape: &Shape) -> Result<(), InvalidContract> {
        let field = |f: &str| format!("shapes.{name}.{f}");
        shape.check_kind(&format!("shapes.{name}"))?;
        if !shape.cost.is_finite() || shape.cost < 0.0 {
            return Err(invalid(
                field("cost"),
                shape.cost,
                "CONTRACT-33",
                "cost is a finite nonnegative number",
            ));
        }
        if self.is_keyless() && shape.is_changed_only() {
            if shape.deletions == Deletions::Tombstone || shape.is_feed() {
                return Err(invalid(
                    format!("shapes.{name}"),
                    format!("checkpoint {}, deletions {}", shape.checkpoint, shape.deletions),
                    "CONTRACT-24",
                    "tombstones, generations and sequences need keys; a keyless table's only shape of changes is an append",
                ));
            }
            if shape.coverage != Coverage::Table {
                return Err(invalid(
                    format!("shapes.{name}.coverage"),
                    shape.coverage,
                    "CONTRACT-23",
                    "a keyless append covers the whole table",
                ));
            }
        }
        if let Some(size) = shape.window_size {
            if shape.coverage != Coverage::Window {
                return Err(invalid(
                    field("window_size"),
                    size,
                    "CONTRACT-40",
                    "window_size is a rolling window's size; only window shapes have one",
                ));
            }
            if size.as_micros() == 0 {
                return Err(invalid(
                    field("window_size"),
                    size,
                    "CONTRACT-35",
                    "window_size is strictly positive",
                ));
            }
            match self.window_type() {
                Some(LogicalType::Date) => {
                    if size.whole_days().is_none() {
                        return Err(invalid(
                            field("window_size"),
                            size,
                            "CONTRACT-40",
                            "a date window's size is a whole number of days",
                        ));
                    }
                }
                Some(LogicalType::Datetime) => {}
                other => {
                    return Err(invalid(
                        field("window_size"),
                        size,
                        "CONTRACT-37",
                        format!(
                            "a rolling window needs a date or datetime window column, not {}",
                            other.map_or("none", LogicalType::name)
                        ),
                    ))
                }
            }
        }
        if let Some(lookback) = shape.lookback {
            if shape.checkpoint != Checkpoint::Timestamp || self.is_keyless() {
                return Err(invalid(
                    field("lookback"),
                    lookback,
                    "CONTRACT-41",
                    "lookback is allowed only on timestamp shapes of keyed contracts (a keyless append must never reread an event)",
                ));
            }
        }
        Ok(())
    }

    /// The first field that may not change once the table has history, if `other` changes one
    /// (EVOL-01, EVOL-02): table, key, window column, deleted column, and the types of the key
    /// and window columns.
    pub(crate) fn fixed_field_change(&self, other: &Contract) -> Option<(String, String, String)> {
        let show = |v: &dyn std::fmt::Debug| format!("{v:?}");
        if self.table != other.table {
            return Some(("table".into(), show(&self.table), show(&other.table)));
        }
        if self.key != other.key {
            return Some(("key".into(), show(&self.key), show(&other.key)));
        }
        if self.window_column != other.window_column {
            return Some((
                "window_column".into(),
                show(&self.window_column),
                show(&other.window_column),
            ));
        }
        if self.deleted_column != other.deleted_column {
            return Some((
                "deleted_column".into(),
                show(&self.deleted_column),
                show(&other.deleted_column),
            ));
        }
        for col in self.key.iter().chain(self.window_column.iter()) {
            let (a, b) = (self.types.get(col), other.types.get(col));
            if a != b {
                return Some((format!("types.{col}"), show(&a), show(&b)));
            }
        }
        None
    }
}

/// The column hash of a column list (CONTRACT-16): one `[name, type]` pair per column, in
/// declared order, where `type` is one of the six type names or `decimal(p,s)`; SHA-256 of the
/// ASCII bytes of Python's `json.dumps(pairs, ensure_ascii=True, separators=(",", ":"))`
/// (CONTRACT-17). The deleted column is left out by the caller (CONTRACT-18).
///
/// ```
/// let h = dogana::column_hash(&[("id", "int"), ("amount", "decimal(12,2)")]);
/// assert_eq!(h.len(), 64);
/// ```
pub fn column_hash<N: AsRef<str>, T: AsRef<str>>(pairs: &[(N, T)]) -> String {
    use sha2::{Digest, Sha256};
    let mut text = String::from("[");
    for (i, (name, ty)) in pairs.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push('[');
        dogana_json::write_python_ascii_string(&mut text, name.as_ref());
        text.push(',');
        dogana_json::write_python_ascii_string(&mut text, ty.as_ref());
        text.push(']');
    }
    text.push(']');
    crate::ledger::hex(&Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_hash_matches_python_json_dumps() {
        // rule: CONTRACT-16
        assert_eq!(
            column_hash(&[("id", "int"), ("amount", "decimal(12,2)")]),
            "442bfe7798f9c9bf41c2748900382ea0a33353e4a42055dc8b9569f6f839a24c"
        );
        // rule: CONTRACT-17
        assert_eq!(
            column_hash(&[("caf\u{e9}", "str"), ("a\u{7f}\u{1f600}/", "date")]),
            "7c6547133e5b5f33f83116fa9574f04fe086c313f971342c8f58145f30b01d90"
        );
    }
}

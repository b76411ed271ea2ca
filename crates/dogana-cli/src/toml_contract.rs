//! The TOML contract description (docs/contract-toml.md): a short, hand-written form of a
//! contract that `dogana contract` turns into the full wire document, and that every
//! `--contract` option accepts.
//!
//! Reading is strict: an unknown key is refused with its name, so a misspelt option never
//! silently falls back to a default.

use std::collections::BTreeMap;
use std::path::Path;

use dogana::{column_hash, Contract, Deletions, Duration, LogicalType, Shape, Timestamp};
use toml::{Table, Value};

use dogana_codes as codes;

use crate::columns_from::Source;
use crate::refusal::{refuse, Result};
use crate::typed;

const TOP_KEYS: &[&str] = &[
    "table",
    "key",
    "window_column",
    "cursor_column",
    "deleted_column",
    "types",
    "columns",
    "columns_from",
    "schema_hash",
    "start_at",
    "shapes",
];
const SHAPE_KEYS: &[&str] = &["kind", "deletions", "cost", "size", "lookback"];
const SHAPE_KINDS: &[&str] = &[
    "full",
    "window",
    "changes",
    "window_changes",
    "generations",
    "sequence",
];

/// A contract read from TOML, with the column list it was hashed from, if any.
#[derive(Debug)]
pub struct Parsed {
    pub contract: Contract,
    /// The `[name, type]` pairs of `columns`, as hashed (the deleted column left out).
    pub hashed_columns: Option<Vec<(String, String)>>,
    /// Where the columns were read from, when not listed by hand (`columns_from`, or the
    /// command line's source).
    pub columns_source: Option<Source>,
}

/// Reads a TOML contract description; `name` names the document in messages, `base` is the
/// directory its relative `columns_from` paths start from, and `external` a source of the
/// columns the command line names (then the description lists none itself).
pub fn parse(text: &str, name: &str, base: &Path, external: Option<&Source>) -> Result<Parsed> {
    let table: Table = match text.parse() {
        Ok(t) => t,
        Err(e) => {
            let e: toml::de::Error = e;
            let at = e.span().map_or(String::new(), |span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(" at line {line}, column {column}")
            });
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {name} is not valid TOML{at}: {}; fix the syntax",
                e.message().trim()
            )
        }
    };
    Reader {
        name,
        base,
        external,
    }
    .contract(&table)
}

struct Reader<'a> {
    name: &'a str,
    base: &'a Path,
    external: Option<&'a Source>,
}

impl Reader<'_> {
    fn unknown_keys(&self, table: &Table, known: &[&str], prefix: &str) -> Result<()> {
        let unknown: Vec<String> = table
            .keys()
            .filter(|k| !known.contains(&k.as_str()))
            .map(|k| format!("{prefix}{k}"))
            .collect();
        if !unknown.is_empty() {
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: unknown key{} {}; the keys here are {}",
                self.name,
                if unknown.len() > 1 { "s" } else { "" },
                unknown.join(", "),
                known.join(", ")
            )
        }
        Ok(())
    }

    fn string<'v>(&self, value: &'v Value, key: &str) -> Result<&'v str> {
        match value {
            Value::String(s) => Ok(s),
            other => refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: {key} is a {}, not a string; quote it",
                self.name,
                other.type_str()
            ),
        }
    }

    fn optional_string<'v>(&self, table: &'v Table, key: &str) -> Result<Option<&'v str>> {
        table.get(key).map(|v| self.string(v, key)).transpose()
    }

    fn strings(&self, value: &Value, key: &str) -> Result<Vec<String>> {
        let Value::Array(items) = value else {
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: {key} is a list of column names, such as {key} = [\"id\"]",
                self.name
            )
        };
        items
            .iter()
            .enumerate()
            .map(|(i, v)| self.string(v, &format!("{key}[{i}]")).map(str::to_owned))
            .collect()
    }

    fn duration(&self, value: &Value, key: &str) -> Result<Duration> {
        let parsed = match value {
            Value::Integer(i) if *i >= 0 => Duration::from_seconds(*i).map_err(|e| e.to_string()),
            Value::Float(f) => Duration::from_seconds_f64(*f).map_err(|e| e.to_string()),
            Value::String(s) => typed::duration(s),
            other => Err(format!("a {} is not a duration", other.type_str())),
        };
        match parsed {
            Ok(d) => Ok(d),
            Err(e) => refuse!(codes::CONTRACT_INVALID, "contract {}: {key}: {e}; write a number of seconds or a string such as \"3d\", \"12h\", \"90s\"",
                self.name
            ),
        }
    }

    fn timestamp(&self, value: &Value, key: &str) -> Result<Timestamp> {
        let text = match value {
            Value::Datetime(d) => {
                if d.offset.is_none() || d.time.is_none() {
                    refuse!(codes::CONTRACT_INVALID, "contract {}: {key} = {d} has no UTC offset, so it names no instant (TRUST-09); write it with Z or ±HH:MM",
                        self.name
                    )
                }
                d.to_string()
            }
            Value::String(s) => s.clone(),
            other => refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: {key} is a {}, not a datetime; write it like 2026-01-01T00:00:00Z",
                self.name,
                other.type_str()
            ),
        };
        match text.parse::<Timestamp>() {
            Ok(t) => Ok(t),
            Err(e) => refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: {key}: {e}",
                self.name
            ),
        }
    }

    fn logical_type(&self, name: &str, key: &str) -> Result<LogicalType> {
        match LogicalType::from_name(name) {
            Some(t) => Ok(t),
            None => refuse!(codes::CONTRACT_INVALID, "contract {}: {key} = {name:?} is not a type; the types are int, float, str, bool, date, datetime",
                self.name
            ),
        }
    }

    /// `columns`: an ordered list of `[name, type]` pairs, or an array of tables with `name`
    /// and `type`.
    fn columns(&self, value: &Value) -> Result<Vec<(String, String)>> {
        let Value::Array(items) = value else {
            refuse!(codes::CONTRACT_INVALID, "contract {}: columns is an ordered list, such as columns = [[\"id\", \"int\"], [\"amount\", \"decimal(12,2)\"]]",
                self.name
            )
        };
        let mut pairs = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let key = format!("columns[{i}]");
            let (name, ty) = match item {
                Value::Array(pair) if pair.len() == 2 => (
                    self.string(&pair[0], &format!("{key}[0]"))?,
                    self.string(&pair[1], &format!("{key}[1]"))?,
                ),
                Value::Table(t) => {
                    self.unknown_keys(t, &["name", "type"], &format!("{key}."))?;
                    match (t.get("name"), t.get("type")) {
                        (Some(n), Some(ty)) => (
                            self.string(n, &format!("{key}.name"))?,
                            self.string(ty, &format!("{key}.type"))?,
                        ),
                        _ => refuse!(
                            codes::CONTRACT_INVALID,
                            "contract {}: {key} needs both name and type",
                            self.name
                        ),
                    }
                }
                _ => refuse!(
                    codes::CONTRACT_INVALID,
                    "contract {}: {key} is a [name, type] pair, such as [\"id\", \"int\"]",
                    self.name
                ),
            };
            if let Err(e) = ty.parse::<dogana_rows::ColumnType>() {
                refuse!(
                    codes::CONTRACT_INVALID,
                    "contract {}: {key}: column {name:?}: {e}",
                    self.name
                )
            }
            if pairs.iter().any(|(n, _): &(String, String)| n == name) {
                refuse!(
                    codes::CONTRACT_INVALID,
                    "contract {}: {key}: column {name:?} is listed twice",
                    self.name
                )
            }
            pairs.push((name.to_owned(), ty.to_owned()));
        }
        Ok(pairs)
    }

    /// `columns_from`: one of the four forms, its paths relative to the contract's directory.
    fn columns_from(&self, value: &Value) -> Result<Source> {
        const FORMS: &str = "columns_from = { odcs = \"FILE\", schema = \"NAME\" }, { dbt_manifest = \"FILE\", model = \"NAME\" }, { store = \"SPEC\", table = \"NAME\" } or { parquet = \"FILE\" }";
        let Value::Table(t) = value else {
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: columns_from is a table: {FORMS}",
                self.name
            )
        };
        let mut keys: Vec<&str> = t.keys().map(String::as_str).collect();
        keys.sort_unstable();
        let get = |k: &str| self.string(&t[k], &format!("columns_from.{k}"));
        let source = match keys.as_slice() {
            ["odcs", "schema"] => Source::Odcs {
                file: get("odcs")?.into(),
                schema: get("schema")?.to_owned(),
            },
            ["dbt_manifest", "model"] => Source::Dbt {
                file: get("dbt_manifest")?.into(),
                model: get("model")?.to_owned(),
            },
            ["store", "table"] => Source::Table {
                store: get("store")?.to_owned(),
                table: get("table")?.to_owned(),
            },
            ["parquet"] => Source::Parquet {
                file: get("parquet")?.into(),
            },
            _ => refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: columns_from has the keys {}; it is one of {FORMS}",
                self.name,
                if keys.is_empty() {
                    "none".to_owned()
                } else {
                    keys.join(", ")
                }
            ),
        };
        Ok(source.relative_to(self.base))
    }

    fn shape(&self, name: &str, value: &Value) -> Result<Shape> {
        let Value::Table(t) = value else {
            refuse!(codes::CONTRACT_INVALID, "contract {}: shapes.{name} is a table, such as [shapes.{name}] with kind = \"full\"",
                self.name
            )
        };
        let key = |k: &str| format!("shapes.{name}.{k}");
        self.unknown_keys(t, SHAPE_KEYS, &key(""))?;
        let Some(kind) = self.optional_string(t, "kind")? else {
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: {} is missing; it is one of {}",
                self.name,
                key("kind"),
                SHAPE_KINDS.join(", ")
            )
        };
        let complete = matches!(kind, "full" | "window");
        let deletions = match self.optional_string(t, "deletions")? {
            None if complete => Deletions::Absence,
            None => Deletions::None,
            Some("absence") if complete => Deletions::Absence,
            Some(d) if complete => refuse!(codes::CONTRACT_INVALID, "contract {}: {} = {d:?}, but a {kind} read is complete and reports deletions by absence; drop deletions (CONTRACT-29)",
                self.name,
                key("deletions")
            ),
            Some("none") => Deletions::None,
            Some("tombstone") => Deletions::Tombstone,
            Some(d) => refuse!(codes::CONTRACT_INVALID, "contract {}: {} = {d:?}; a read of changes reports deletions as \"none\" or \"tombstone\"",
                self.name,
                key("deletions")
            ),
        };
        let mut shape = match kind {
            "full" => Shape::full(),
            "window" => Shape::window(),
            "changes" => Shape::changes(deletions),
            "window_changes" => Shape::window_changes(deletions),
            "generations" => Shape::generations(deletions),
            "sequence" => Shape::sequence(deletions),
            other => refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: {} = {other:?} is not a kind of shape; it is one of {}",
                self.name,
                key("kind"),
                SHAPE_KINDS.join(", ")
            ),
        };
        if let Some(cost) = t.get("cost") {
            shape = match cost {
                Value::Integer(i) => shape.cost(*i as f64),
                Value::Float(f) => shape.cost(*f),
                other => refuse!(
                    codes::CONTRACT_INVALID,
                    "contract {}: {} is a {}, not a number",
                    self.name,
                    key("cost"),
                    other.type_str()
                ),
            };
        }
        if let Some(size) = t.get("size") {
            shape = shape.size(self.duration(size, &key("size"))?);
        }
        if let Some(lookback) = t.get("lookback") {
            shape = shape.lookback(self.duration(lookback, &key("lookback"))?);
        }
        Ok(shape)
    }

    fn contract(&self, top: &Table) -> Result<Parsed> {
        self.unknown_keys(top, TOP_KEYS, "")?;
        let Some(table) = self.optional_string(top, "table")? else {
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: table is missing; name the table, as in table = \"orders\"",
                self.name
            )
        };
        let Some(key) = top.get("key") else {
            refuse!(codes::CONTRACT_INVALID, "contract {}: key is missing; list the key columns, as in key = [\"id\"], or key = [] for a keyless table",
                self.name
            )
        };
        let key = self.strings(key, "key")?;
        let window_column = self.optional_string(top, "window_column")?;
        let cursor_column = self.optional_string(top, "cursor_column")?;
        let deleted_column = self.optional_string(top, "deleted_column")?;

        let mut types: BTreeMap<String, LogicalType> = BTreeMap::new();
        if let Some(value) = top.get("types") {
            let Value::Table(t) = value else {
                refuse!(codes::CONTRACT_INVALID, "contract {}: types is a table of column = \"type\", as in [types] id = \"int\"",
                    self.name
                )
            };
            for (column, ty) in t {
                let key = format!("types.{column}");
                let ty = self.string(ty, &key)?;
                types.insert(column.clone(), self.logical_type(ty, &key)?);
            }
        }

        // columns: the column list the schema hash is computed from; it also types the bound
        // columns that [types] leaves out.
        let mut hashed_columns = None;
        let mut schema_hash = self.optional_string(top, "schema_hash")?.map(str::to_owned);
        let source = match (top.get("columns"), top.get("columns_from"), self.external) {
            (Some(_), Some(_), _) => refuse!(
                codes::CONTRACT_INVALID,
                "contract {}: columns and columns_from both give the columns; keep one",
                self.name
            ),
            (Some(_), None, Some(_)) | (None, Some(_), Some(_)) => refuse!(
                codes::CONTRACT_INVALID,
                "contract {} lists its columns ({}), and the command line names another source; drop one",
                self.name,
                if top.contains_key("columns") { "columns" } else { "columns_from" }
            ),
            (None, Some(v), None) => Some(self.columns_from(v)?),
            (None, None, Some(external)) => Some(external.clone()),
            (_, None, None) => None,
        };
        let listed = match (&source, top.get("columns")) {
            (Some(source), _) => Some(source.read()?.pairs()),
            (None, Some(value)) => Some(self.columns(value)?),
            (None, None) => None,
        };
        if let Some(pairs) = listed {
            let bound: Vec<&str> = key
                .iter()
                .map(String::as_str)
                .chain(window_column)
                .chain(cursor_column)
                .chain(deleted_column)
                .collect();
            for (column, ty) in &pairs {
                if !bound.contains(&column.as_str()) {
                    continue;
                }
                let key = format!("columns type of {column:?}");
                let ty = self.logical_type(ty, &key)?;
                match types.get(column) {
                    Some(t) if *t != ty => refuse!(codes::CONTRACT_INVALID, "contract {}: column {column:?} is {ty} in columns but {t} in types; make them agree",
                        self.name
                    ),
                    _ => {
                        types.insert(column.clone(), ty);
                    }
                }
            }
            // The deleted column is never published, and the column hash leaves it out
            // (CONTRACT-18).
            let hashed: Vec<(String, String)> = pairs
                .into_iter()
                .filter(|(n, _)| Some(n.as_str()) != deleted_column)
                .collect();
            let computed = column_hash(&hashed);
            match &schema_hash {
                Some(declared) if *declared != computed => refuse!(codes::CONTRACT_INVALID, "contract {}: schema_hash {declared} is not the hash of columns, {computed}; drop one of them or make them agree",
                    self.name
                ),
                _ => schema_hash = Some(computed),
            }
            hashed_columns = Some(hashed);
        }

        let mut builder = Contract::builder(table, key);
        if let Some(c) = window_column {
            builder = builder.window_column(c);
        }
        if let Some(c) = cursor_column {
            builder = builder.cursor_column(c);
        }
        if let Some(c) = deleted_column {
            builder = builder.deleted_column(c);
        }
        for (column, ty) in types {
            builder = builder.column(column, ty);
        }
        if let Some(h) = schema_hash {
            builder = builder.schema_hash(h);
        }
        if let Some(v) = top.get("start_at") {
            builder = builder.start_at(self.timestamp(v, "start_at")?);
        }
        match top.get("shapes") {
            Some(Value::Table(shapes)) => {
                for (name, value) in shapes {
                    builder = builder.shape(name.clone(), self.shape(name, value)?);
                }
            }
            Some(_) => refuse!(codes::CONTRACT_INVALID, "contract {}: shapes is a table of named shapes, as in [shapes.full] kind = \"full\"",
                self.name
            ),
            None => {}
        }
        match builder.build() {
            Ok(contract) => Ok(Parsed {
                contract,
                hashed_columns,
                columns_source: source,
            }),
            Err(e) => refuse!(
                codes::CONTRACT_INVALID,
                "contract {} is invalid: {}; fix the description",
                self.name,
                e.problem()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dogana::Wire;

    #[test]
    fn column_types_are_checked_as_declared() {
        // rule: CONTRACT-16 (a scale above the precision was accepted before)
        let toml = |ty: &str| {
            format!("table = \"t\"\nkey = []\ncolumns = [[\"amount\", \"{ty}\"]]\n[shapes.full]\nkind = \"full\"\n")
        };
        assert!(parse(&toml("decimal(12,2)"), "t", Path::new("."), None).is_ok());
        for bad in [
            "decimal(12, 2)",
            "decimal(,2)",
            "decimal",
            "decimal(2,5)",
            "decimal(0,0)",
            "flaot",
        ] {
            let e = parse(&toml(bad), "t", Path::new("."), None)
                .unwrap_err()
                .to_string();
            assert!(e.contains("is not a column type"), "{bad}: {e}");
        }
    }

    #[test]
    fn keyless_minimal() {
        let p = parse(
            "table = \"events\"\nkey = []\n[shapes.full]\nkind = \"full\"\n",
            "t",
            Path::new("."),
            None,
        )
        .unwrap();
        assert!(p.contract.is_keyless());
        assert!(p.contract.to_json().contains("\"table\":\"events\""));
    }
}

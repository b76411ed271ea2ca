//! A dbt project's `manifest.json` (what `dbt parse`, `compile` or `build` writes to
//! `target/`): a model's columns and their `data_type`, in the order dbt records them (the
//! order of the model's YAML), each `data_type` mapped by [`crate::sql_types`].
//!
//! A model is named by its `name` (`orders`) or its unique id (`model.shop.orders`); a name
//! two packages or two versions share is refused, listing their unique ids. A column without
//! a `data_type` is refused: declare it in the model's YAML, as dbt's model contracts do.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::sql_types;
use crate::{q, Columns, ColumnsError};

/// A JSON object's entries in the order the document writes them (serde_json's own map sorts
/// its keys unless a crate-wide feature changes every map in the build).
#[derive(Debug)]
struct Ordered<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<T>, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, T>()? {
                    entries.push((k, v));
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
struct RawManifest {
    nodes: Option<Ordered<RawNode>>,
}

#[derive(Debug, Deserialize)]
struct RawNode {
    resource_type: Option<String>,
    name: Option<String>,
    #[serde(default)]
    columns: Option<Ordered<RawColumn>>,
}

#[derive(Debug, Deserialize)]
struct RawColumn {
    name: Option<String>,
    data_type: Option<String>,
}

/// The columns of model `model` in the manifest `text`; `name` names the manifest in messages.
pub fn columns(text: &str, name: &str, model: &str) -> Result<Columns, ColumnsError> {
    let raw: RawManifest = serde_json::from_str(text).map_err(|e| {
        ColumnsError::Document(format!(
            "dbt manifest {name} does not parse as JSON: {e}; pass the target/manifest.json dbt wrote"
        ))
    })?;
    let Some(nodes) = raw.nodes else {
        return Err(ColumnsError::Document(format!(
            "dbt manifest {name} has no nodes; pass the target/manifest.json dbt wrote (dbt parse)"
        )));
    };
    let models: Vec<(&String, &RawNode)> = nodes
        .0
        .iter()
        .filter(|(_, n)| n.resource_type.as_deref() == Some("model"))
        .map(|(id, n)| (id, n))
        .collect();
    let matching: Vec<&(&String, &RawNode)> = models
        .iter()
        .filter(|(id, n)| id.as_str() == model || n.name.as_deref() == Some(model))
        .collect();
    let (id, node) = match matching.as_slice() {
        [one] => **one,
        [] => {
            let mut names: Vec<String> = models
                .iter()
                .filter_map(|(_, n)| n.name.as_deref().map(q))
                .collect();
            names.sort();
            names.dedup();
            names.truncate(20);
            return Err(ColumnsError::NotFound(format!(
                "dbt manifest {name} has no model {}; {}",
                q(model),
                if names.is_empty() {
                    "it has no models".to_owned()
                } else {
                    format!("its models are {}", names.join(", "))
                }
            )));
        }
        several => {
            let ids: Vec<String> = several.iter().map(|(id, _)| q(id)).collect();
            return Err(ColumnsError::NotFound(format!(
                "dbt manifest {name}: model {} is ambiguous: {}; name one by its unique id",
                q(model),
                ids.join(", ")
            )));
        }
    };
    let source = format!("dbt manifest {name}, model {}", q(id));
    let columns = node.columns.as_ref().map_or(&[][..], |c| &c.0[..]);
    if columns.is_empty() {
        return Err(ColumnsError::unmapped(
            format!(
                "{source} lists no columns; declare them with their data_type in the model's YAML"
            ),
            "",
            "",
        ));
    }
    let mut pairs = Vec::with_capacity(columns.len());
    for (key, c) in columns {
        let column = c.name.clone().unwrap_or_else(|| key.clone());
        let Some(data_type) = c.data_type.as_deref() else {
            return Err(ColumnsError::unmapped(
                format!(
                    "{source}: column {} has no data_type; declare it in the model's YAML (data_type: bigint)",
                    q(&column)
                ),
                &column,
                "",
            ));
        };
        let ty = sql_types::column_type(data_type).map_err(|e| {
            ColumnsError::unmapped(
                format!(
                    "{source}: column {}: data_type {}: {e}",
                    q(&column),
                    q(data_type)
                ),
                &column,
                data_type,
            )
        })?;
        pairs.push((column, ty));
    }
    Columns::new(pairs, &source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dogana_rows::ColumnType;

    fn manifest(columns: &str) -> String {
        format!(
            r#"{{"metadata": {{"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"}},
               "nodes": {{
                 "test.p.t": {{"resource_type": "test", "name": "orders", "columns": {{}}}},
                 "model.p.orders": {{"resource_type": "model", "name": "orders", "columns": {columns}}},
                 "model.p.other": {{"resource_type": "model", "name": "other", "columns": {{}}}}
               }}}}"#
        )
    }

    #[test]
    fn columns_keep_dbt_order_not_key_order() {
        // rule: CONTRACT-16
        let m = manifest(
            r#"{"zeta": {"name": "zeta", "data_type": "bigint"},
                "alpha": {"name": "alpha", "data_type": "numeric(12,2)"},
                "mid": {"name": "mid", "data_type": "timestamp with time zone"}}"#,
        );
        let c = columns(&m, "m.json", "orders").unwrap();
        let got: Vec<(String, ColumnType)> = c.iter().cloned().collect();
        assert_eq!(
            got,
            [
                ("zeta".into(), ColumnType::Int),
                (
                    "alpha".into(),
                    ColumnType::Decimal {
                        precision: 12,
                        scale: 2
                    }
                ),
                ("mid".into(), ColumnType::Datetime)
            ]
        );
        assert_eq!(columns(&m, "m.json", "model.p.orders").unwrap(), c);
    }

    #[test]
    fn refusals_name_what_to_fix() {
        // rule: CONTRACT-19
        let m = manifest(r#"{"id": {"name": "id", "data_type": null}}"#);
        let e = columns(&m, "m.json", "orders").unwrap_err().to_string();
        assert!(e.contains("column \"id\" has no data_type"), "{e}");
        let m = manifest(r#"{"id": {"name": "id", "data_type": "uuid"}}"#);
        let e = columns(&m, "m.json", "orders").unwrap_err().to_string();
        assert!(
            e.contains("column \"id\": data_type \"uuid\": it has no dogana name"),
            "{e}"
        );
        let e = columns(&m, "m.json", "nope").unwrap_err();
        assert!(
            matches!(&e, ColumnsError::NotFound(m) if m.contains("has no model \"nope\"; its models are \"orders\", \"other\"")),
            "{e}"
        );
        let e = columns(&m, "m.json", "other").unwrap_err().to_string();
        assert!(e.contains("lists no columns"), "{e}");
        let e = columns("{", "m.json", "orders").unwrap_err();
        assert!(matches!(e, ColumnsError::Document(_)));
        let e = columns("{}", "m.json", "orders").unwrap_err().to_string();
        assert!(e.contains("has no nodes"), "{e}");
    }
}

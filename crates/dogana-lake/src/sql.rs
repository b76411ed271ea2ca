//! The DuckDB SQL that reads a table's current snapshot from outside dogana.
//!
//! A keyless table's parts are disjoint, so its current rows are the union of the named
//! Parquet files. A keyed table's parts may overlap (merge-on-read, see
//! `docs/store-decisions.md`, "Deletions"): a row is current unless a later part holds its key,
//! as a row or in a deletion part, so with more than one part the view keeps each part's rows
//! whose key no later part names (one anti-join on the key and the part's place). The files
//! of one snapshot are read `union_by_name`, so a part lacking a column, or a struct field,
//! reads NULLs (struct, list and map columns are DuckDB's STRUCT, list and MAP types as they
//! are). Decimal columns are stored as their exact text and cast back. The regions come from
//! the snapshot's ledger document, as `dogana_regions` of the SQL stores shows them.

use dogana_receiver::sql::quote_ident;
use dogana_receiver::StoreError;

use crate::lattice::LakeType;
use crate::{Lake, LakeError};

/// Two statements for DuckDB: a view `<table>` over the table's current Parquet files, and a
/// view `<table>__regions` over its ledger's regions. None when nothing is published. The
/// views name the files the pointer names now: run again after the next publication.
pub fn current_snapshot_sql(lake: &Lake, table: &str) -> Result<Option<String>, StoreError> {
    let Some(((columns, parts, ledger), overlapping)) = lake.published_snapshot(table)? else {
        return Ok(None);
    };
    let urls: Vec<String> = parts
        .iter()
        .map(|p| lake.root().object_url(&p.path).map(|u| literal(&u)))
        .collect::<Result<_, LakeError>>()?;
    let keys: Vec<String> = columns
        .iter()
        .filter(|c| c.key)
        .map(|c| quote_ident(&c.name))
        .collect();
    let row_urls: Vec<&String> = urls
        .iter()
        .zip(&parts)
        .filter(|(_, p)| !p.deletes)
        .map(|(u, _)| u)
        .collect();
    let select: Vec<String> = columns
        .iter()
        .map(|c| {
            let q = quote_ident(&c.name);
            match c.ty.as_deref() {
                Some(t) if t.starts_with("decimal(") => {
                    format!("CAST({q} AS {}) AS {q}", t.to_ascii_uppercase())
                }
                // rule: store.reconcile.half-width — one cast per relation: either binary
                // type as BLOB, a vector's elements as FLOAT in an ARRAY of its dimension
                Some(t) if typed(t).is_some() => {
                    format!("CAST({q} AS {}) AS {q}", typed(t).unwrap_or_default())
                }
                _ => q,
            }
        })
        .collect();
    let view = quote_ident(table);
    let rows = if row_urls.is_empty() {
        // no part: an empty table of the published columns
        let typed: Vec<String> = columns
            .iter()
            .map(|c| {
                format!(
                    "CAST(NULL AS {}) AS {}",
                    duck_type(c.ty.as_deref()),
                    quote_ident(&c.name)
                )
            })
            .collect();
        format!(
            "CREATE OR REPLACE VIEW {view} AS SELECT {} WHERE false;",
            typed.join(", ")
        )
    } else if keys.is_empty() || !overlapping {
        let urls: Vec<&str> = row_urls.iter().map(|u| u.as_str()).collect();
        format!(
            "CREATE OR REPLACE VIEW {view} AS SELECT {} FROM read_parquet([{}], union_by_name = true);",
            select.join(", "),
            urls.join(", ")
        )
    } else {
        // part i's row is current unless a part after i holds its key
        let ord = "\"__dogana_part\"";
        let file = "\"__dogana_file\"";
        let places: Vec<String> = urls
            .iter()
            .enumerate()
            .map(|(i, u)| format!("({u}, {i})"))
            .collect();
        let later: Vec<&str> = urls.iter().skip(1).map(String::as_str).collect();
        let row_urls: Vec<&str> = row_urls.iter().map(|u| u.as_str()).collect();
        let key_list: Vec<String> = keys.iter().map(|k| format!("p.{k}")).collect();
        let on: Vec<String> = keys.iter().map(|k| format!("k.{k} = r.{k}")).collect();
        format!(
            "CREATE OR REPLACE VIEW {view} AS
WITH \"__dogana_places\"(f, {ord}) AS (VALUES {}),
\"__dogana_rows\" AS (SELECT p.*, n.{ord} FROM read_parquet([{}], union_by_name = true, filename = '__dogana_file') p JOIN \"__dogana_places\" n ON p.{file} = n.f),
\"__dogana_keys\" AS (SELECT {}, n.{ord} FROM read_parquet([{}], union_by_name = true, filename = '__dogana_file') p JOIN \"__dogana_places\" n ON p.{file} = n.f)
SELECT {} FROM \"__dogana_rows\" r
WHERE NOT EXISTS (SELECT 1 FROM \"__dogana_keys\" k WHERE {} AND k.{ord} > r.{ord});",
            places.join(", "),
            row_urls.join(", "),
            key_list.join(", "),
            later.join(", "),
            select.join(", "),
            on.join(" AND ")
        )
    };
    Ok(Some(format!(
        "{rows}\n{}",
        regions_sql(table, ledger.as_deref())
    )))
}

/// The DuckDB view `<table>__regions` over the regions of a ledger document (None: no
/// ledger yet), as `dogana_regions` of the SQL stores shows them.
pub fn regions_sql(table: &str, ledger: Option<&str>) -> String {
    let regions = quote_ident(&format!("{table}__regions"));
    let doc = literal(ledger.unwrap_or("{\"regions\": []}"));
    format!(
        "CREATE OR REPLACE VIEW {regions} AS
SELECT r.key::integer AS region_index,
       json_extract(r.value, '$.low') AS low,
       json_extract(r.value, '$.high') AS high,
       json_extract(r.value, '$.low_open')::boolean AS low_open,
       json_extract(r.value, '$.high_open')::boolean AS high_open,
       json_extract_string(r.value, '$.complete_as_of.\"$datetime\"')::timestamptz AS complete_as_of,
       json_extract_string(r.value, '$.deletions_as_of.\"$datetime\"')::timestamptz AS deletions_as_of
FROM (SELECT {doc}::JSON AS document) l, json_each(l.document, '$.regions') r;\n"
    )
}

/// A SQL string literal.
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The DuckDB type a binary or vector column reads as (None: not one).
fn typed(ty: &str) -> Option<String> {
    match LakeType::parse(ty)? {
        LakeType::Binary | LakeType::FixedBinary(_) => Some("BLOB".into()),
        LakeType::Vector { dim, .. } => Some(format!("FLOAT[{dim}]")),
        _ => None,
    }
}

fn duck_type(ty: Option<&str>) -> String {
    if let Some(t) = ty.and_then(typed) {
        return t;
    }
    // rule: store.reconcile.nested-landing — a nested or variant column's DuckDB type, for
    // the view of a snapshot with no part (the parts' own Struct, List and Map columns are
    // read as they are, `union_by_name` giving a field a part lacks as NULL)
    if let Some(t) = ty
        .and_then(LakeType::parse)
        .filter(crate::nested::is_nested)
    {
        return crate::nested::duck_type(&t);
    }
    match ty {
        Some("int") => "BIGINT".into(),
        Some("float") => "DOUBLE".into(),
        Some("bool") => "BOOLEAN".into(),
        Some("date") => "DATE".into(),
        Some("datetime") => "TIMESTAMPTZ".into(),
        Some(t) if t.starts_with("decimal(") => t.to_ascii_uppercase(),
        _ => "VARCHAR".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_reads_as_blob_and_a_vector_as_a_float_array_of_its_dimension() {
        // rule: store.reconcile.half-width — one relation cast, whatever the element width
        assert_eq!(typed("binary").as_deref(), Some("BLOB"));
        assert_eq!(typed("fixed_size_binary(16)").as_deref(), Some("BLOB"));
        assert_eq!(typed("vector(768,f16)").as_deref(), Some("FLOAT[768]"));
        assert_eq!(typed("vector(3,f32)").as_deref(), Some("FLOAT[3]"));
        assert_eq!(typed("int"), None);
        assert_eq!(duck_type(Some("vector(4,f16)")), "FLOAT[4]");
        assert_eq!(duck_type(Some("binary")), "BLOB");
    }
}

//! SQL text shared by the SQL backends: identifiers are always quoted (the standard's double
//! quotes, which SQLite, DuckDB and Postgres all read), values always bound.

/// `name` as an SQL identifier: in double quotes, an embedded double quote doubled. Every
/// table, column and index name a backend writes into SQL passes through here.
///
/// ```
/// use dogana_receiver::sql::quote_ident;
/// assert_eq!(quote_ident("orders"), r#""orders""#);
/// assert_eq!(quote_ident(r#"a"b; --"#), r#""a""b; --""#);
/// ```
pub fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for c in name.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// The rows of a whole-table staging table (`main.{table}` of the published `columns`) as
/// the TEMP staging names its columns, `c0…` in order: what the SQL reading staged rows
/// selects from when [`Backend::stage_create_whole`](crate::Backend::stage_create_whole)
/// staged them whole.
///
/// ```
/// use dogana_receiver::{sql::whole_staged_rows, Column};
/// let id = Column { name: "id".into(), ty: Some("int".into()), key: true };
/// assert_eq!(whole_staged_rows(&[id], "w"), r#"(SELECT "id" AS c0 FROM main."w")"#);
/// ```
pub fn whole_staged_rows(columns: &[crate::Column], table: &str) -> String {
    let cols: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{} AS c{i}", quote_ident(&c.name)))
        .collect();
    format!(
        "(SELECT {} FROM main.{})",
        cols.join(", "),
        quote_ident(table)
    )
}

/// A comma-separated list of quoted identifiers, each prefixed.
///
/// ```
/// assert_eq!(dogana_receiver::sql::ident_list(["a", "b"], "p."), r#"p."a", p."b""#);
/// ```
pub fn ident_list<'a>(names: impl IntoIterator<Item = &'a str>, prefix: &str) -> String {
    names
        .into_iter()
        .map(|n| format!("{prefix}{}", quote_ident(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(a, b)` for several columns, `a` for one: the left side of a row-value `IN`.
pub fn row_value(items: &[String]) -> String {
    if items.len() == 1 {
        items[0].clone()
    } else {
        format!("({})", items.join(", "))
    }
}

/// The query of [`Backend::keys_outside`](crate::Backend::keys_outside) (CHECK-16): the
/// published rows of `main.table` outside the window whose key the staged rows (`rows`) or
/// tombstones (`tombstones`, both SQL names) name, each as its key columns then its window
/// column. `?1` and `?2` bind the window's low and high bound.
pub fn keys_outside_query(
    table: &str,
    q: &crate::KeysOutside<'_>,
    rows: &str,
    tombstones: &str,
) -> String {
    let select: Vec<String> = q
        .key
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(q.column))
        .map(|c| format!("p.{}", quote_ident(c)))
        .collect();
    keys_outside_query_in(
        q,
        &KeysOutsideSql {
            table: &format!("main.{}", quote_ident(table)),
            rows,
            tombstones,
            select: &select,
            low: "?1",
            high: "?2",
        },
    )
}

/// The SQL names and expressions of [`keys_outside_query_in`], for a backend whose tables,
/// parameters or column types are written otherwise than `main.table`, `?1` and `?2`.
#[derive(Debug, Clone, Copy)]
pub struct KeysOutsideSql<'a> {
    /// The published table, qualified and quoted.
    pub table: &'a str,
    /// The staged live rows' SQL name.
    pub rows: &'a str,
    /// The staged tombstones' SQL name.
    pub tombstones: &'a str,
    /// What each hit selects: one expression per key column, then one for the window
    /// column, on the published table's alias `p` (`p."id"`, or a cast of it).
    pub select: &'a [String],
    /// The window's low bound, as a parameter (`?1`, `$1::date`).
    pub low: &'a str,
    /// The window's high bound, as a parameter.
    pub high: &'a str,
}

/// [`keys_outside_query`] over names the backend writes: the one text of the query every SQL
/// backend runs. The window column and key columns are `q`'s; the staged key columns are
/// `s.cN` (live rows, at `q.staged_key`) and `s.kN` (tombstones).
pub fn keys_outside_query_in(q: &crate::KeysOutside<'_>, n: &KeysOutsideSql<'_>) -> String {
    let w = quote_ident(q.column);
    let on_rows: Vec<String> = q
        .key
        .iter()
        .zip(q.staged_key)
        .map(|(k, i)| format!("p.{} = s.c{i}", quote_ident(k)))
        .collect();
    let on_tombs: Vec<String> = q
        .key
        .iter()
        .enumerate()
        .map(|(i, k)| format!("p.{} = s.k{i}", quote_ident(k)))
        .collect();
    let (low, high) = (n.low, n.high);
    let outside = format!("(p.{w} IS NULL OR p.{w} < {low} OR p.{w} > {high})");
    let (t, rows, tombstones, sel) = (n.table, n.rows, n.tombstones, n.select.join(", "));
    format!(
        "SELECT {sel} FROM {rows} s JOIN {t} p ON {} WHERE {outside}
         UNION ALL
         SELECT {sel} FROM {tombstones} s JOIN {t} p ON {} WHERE {outside}",
        on_rows.join(" AND "),
        on_tombs.join(" AND ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident(""), "\"\"");
        assert_eq!(quote_ident("\"\""), "\"\"\"\"\"\"");
        assert_eq!(quote_ident("a b;c"), "\"a b;c\"");
    }
}

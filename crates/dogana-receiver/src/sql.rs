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

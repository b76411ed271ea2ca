//! # dogana-columns: a table's columns from where they are defined
//!
//! The protocol's column hash is "computed from wherever the columns are defined, such as a
//! data contract, a dbt model or a list of columns" (CONTRACT-16): one `[name, type]` pair per
//! column, in order, the type one of dogana's six names or `decimal(p,s)`, the receiver mapping
//! physical and nested types onto them (CONTRACT-19). This crate reads those pairs from:
//!
//! - an **ODCS v3 document** ([`odcs`]): a schema object's properties in declared order;
//! - a **dbt manifest** ([`dbt`]): a model's columns and their `data_type`, in dbt's order;
//! - a **database's catalog** ([`catalog`]): the columns of a live table as SQLite, DuckDB or
//!   Postgres declare them (the backend crates read the catalog; this maps the types);
//! - a **Parquet file's schema** ([`parquet`], the `parquet` feature), typed as the receiver
//!   types a Parquet delivery.
//!
//! SQL type names (a dbt `data_type`, an ODCS `physicalType`, a catalog's type) go through one
//! table, [`sql_types::SQL_TYPES`]. Whatever has no dogana name is refused naming the column and
//! its type; nothing is guessed. The result is a [`Columns`]: its [`Columns::pairs`] are what
//! [`dogana::column_hash`] hashes.
//!
//! It also checks an ODCS document's service levels against a ledger's claims ([`sla`]).
//!
//! Everything here is pure but [`parquet`], which reads a file's footer: the command line reads
//! the files and the catalogs and hands their text or rows in.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::fmt;

use dogana_rows::ColumnType;

pub mod catalog;
pub mod dbt;
pub mod odcs;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod sla;
pub mod sql_types;

/// Why no column list could be read. Each message names what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnsError {
    /// The document does not parse, or is not of the form read (an ODCS document of another
    /// version, a dbt manifest without nodes).
    Document(String),
    /// The document or database holds no such schema object, model or table.
    NotFound(String),
    /// A column has no type, or a type with no dogana name (a nested type, a time of day, a
    /// decimal without precision).
    Unmapped {
        /// What is wrong and what to do.
        message: String,
        /// The column (or property) at fault; empty when the fault is the whole list's.
        column: String,
        /// Its type as written; empty when it has none.
        declared: String,
    },
}

impl ColumnsError {
    /// An [`ColumnsError::Unmapped`] of `column`, whose type is written `declared`.
    pub fn unmapped(message: String, column: &str, declared: &str) -> ColumnsError {
        ColumnsError::Unmapped {
            message,
            column: column.to_owned(),
            declared: declared.to_owned(),
        }
    }
}

impl fmt::Display for ColumnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnsError::Document(m)
            | ColumnsError::NotFound(m)
            | ColumnsError::Unmapped { message: m, .. } => f.write_str(m),
        }
    }
}

impl std::error::Error for ColumnsError {}

/// A table's columns in order, each with its dogana type; no name twice.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Columns(Vec<(String, ColumnType)>);

impl Columns {
    /// A list from pairs in order; `source` names where they come from in the message that
    /// refuses a column named twice.
    pub fn new(pairs: Vec<(String, ColumnType)>, source: &str) -> Result<Columns, ColumnsError> {
        for (i, (name, _)) in pairs.iter().enumerate() {
            if pairs[..i].iter().any(|(n, _)| n == name) {
                return Err(ColumnsError::Document(format!(
                    "{source}: column {} is listed twice; a column hash names each column once",
                    dogana::quoted(name, dogana::SHOWN)
                )));
            }
        }
        Ok(Columns(pairs))
    }

    /// The columns and their types, in order.
    pub fn iter(&self) -> impl Iterator<Item = &(String, ColumnType)> {
        self.0.iter()
    }

    /// How many columns.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `[name, type]` pairs, the type spelled as the column hash spells it.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.0
            .iter()
            .map(|(n, t)| (n.clone(), t.to_string()))
            .collect()
    }

    /// The column hash of the pairs (CONTRACT-16), every column included: a contract's deleted
    /// column is left out by whoever knows the contract (CONTRACT-18).
    pub fn hash(&self) -> String {
        dogana::column_hash(&self.pairs())
    }
}

/// A text someone else wrote, quoted and cut for a message.
pub(crate) fn q(text: &str) -> String {
    dogana::quoted(text, dogana::SHOWN)
}

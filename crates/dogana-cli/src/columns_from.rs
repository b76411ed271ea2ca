//! Where a contract's columns come from, besides a hand-written `columns` list: an ODCS
//! document, a dbt manifest, a live table or a Parquet file (`dogana contract --odcs …`, and
//! the TOML contract's `columns_from`). The reading and the type mapping are
//! `dogana_columns`'; this reads the files and the catalogs and gives each error its code.

use std::path::{Path, PathBuf};

use dogana_codes as codes;
use dogana_columns::{Columns, ColumnsError};

use crate::cli::ColumnsFromArgs;
use crate::input::{self, shown};
use crate::refusal::{refuse, Refusal, Result};

/// One place a table's columns are defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An ODCS v3 document and a schema object in it.
    Odcs {
        /// The document.
        file: PathBuf,
        /// The schema object's name.
        schema: String,
    },
    /// A dbt manifest.json and a model in it.
    Dbt {
        /// The manifest.
        file: PathBuf,
        /// The model's name or unique id.
        model: String,
    },
    /// A table in a database `--store` could name.
    Table {
        /// The database, as a store spec.
        store: String,
        /// The table.
        table: String,
    },
    /// A Parquet file's schema.
    Parquet {
        /// The file.
        file: PathBuf,
    },
}

impl Source {
    /// The source the command line's options name, if any (clap lets at most one through).
    pub fn from_args(a: &ColumnsFromArgs) -> Option<Source> {
        if let (Some(file), Some(schema)) = (&a.odcs, &a.schema) {
            return Some(Source::Odcs {
                file: file.clone(),
                schema: schema.clone(),
            });
        }
        if let (Some(file), Some(model)) = (&a.dbt_manifest, &a.model) {
            return Some(Source::Dbt {
                file: file.clone(),
                model: model.clone(),
            });
        }
        if let Some([store, table]) = a.from_table.as_deref() {
            return Some(Source::Table {
                store: store.clone(),
                table: table.clone(),
            });
        }
        a.from_parquet
            .as_ref()
            .map(|file| Source::Parquet { file: file.clone() })
    }

    /// The same source with its relative paths taken from `base` (the directory of the TOML
    /// contract naming it); a Postgres URL is left as it is.
    pub fn relative_to(self, base: &Path) -> Source {
        let here = base == Path::new(".");
        let join = |p: PathBuf| {
            if p.is_relative() && !here {
                base.join(p)
            } else {
                p
            }
        };
        match self {
            Source::Odcs { file, schema } => Source::Odcs {
                file: join(file),
                schema,
            },
            Source::Dbt { file, model } => Source::Dbt {
                file: join(file),
                model,
            },
            Source::Parquet { file } => Source::Parquet { file: join(file) },
            Source::Table { store, table } => {
                use dogana_stores::Spec;
                let store = match Spec::parse(&store) {
                    _ if here => store,
                    Spec::Sqlite(p) if p.is_relative() => {
                        format!("sqlite:{}", base.join(p).display())
                    }
                    Spec::DuckDb(p) if p.is_relative() => {
                        format!("duckdb:{}", base.join(p).display())
                    }
                    _ => store,
                };
                Source::Table { store, table }
            }
        }
    }

    /// The columns, read. Every failure is a refusal naming what to fix, with its code.
    pub fn read(&self) -> Result<Columns> {
        match self {
            Source::Odcs { file, schema } => {
                let text = utf8(file, "ODCS document")?;
                let name = shown(file);
                let format = dogana_columns::odcs::Format::of(&name);
                let doc = dogana_columns::odcs::parse(&text, format, &name).map_err(refusal)?;
                doc.columns(schema).map_err(refusal)
            }
            Source::Dbt { file, model } => {
                let text = utf8(file, "dbt manifest")?;
                dogana_columns::dbt::columns(&text, &shown(file), model).map_err(refusal)
            }
            Source::Table { store, table } => {
                let spec = dogana_stores::Spec::parse(store);
                if let Some(path) = spec.path() {
                    if !path.is_file() {
                        refuse!(
                            codes::FILE_UNREADABLE,
                            "the database {spec} does not exist; name the database file holding table {}",
                            dogana::quoted(table, dogana::SHOWN)
                        )
                    }
                }
                let rows = dogana_stores::table_columns(&spec, table).map_err(|e| {
                    Refusal::new(
                        dogana_stores::code_of(&e),
                        format!("reading the columns of table {table:?} from {spec}: {e}"),
                    )
                })?;
                dogana_columns::catalog::columns(&format!("store {spec}"), table, rows).map_err(
                    |e| match e {
                        ColumnsError::NotFound(m) => Refusal::new(codes::TABLE_NOT_FOUND, m),
                        other => refusal(other),
                    },
                )
            }
            Source::Parquet { file } => parquet(file),
        }
    }
}

#[cfg(feature = "parquet")]
fn parquet(file: &Path) -> Result<Columns> {
    let f = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) => refuse!(
            codes::FILE_UNREADABLE,
            "cannot read the Parquet file {}: {e}; check the path and its permissions",
            shown(file)
        ),
    };
    dogana_columns::parquet::columns(f, &shown(file)).map_err(refusal)
}

#[cfg(not(feature = "parquet"))]
fn parquet(file: &Path) -> Result<Columns> {
    refuse!(
        codes::FORMAT_UNSUPPORTED,
        "reading the schema of {} needs Parquet: build dogana with `--features parquet` (or bash scripts/build-full.sh)",
        shown(file)
    )
}

/// A file's text; `what` names it in messages.
fn utf8(path: &Path, what: &str) -> Result<String> {
    match String::from_utf8(input::read(path, what)?) {
        Ok(t) => Ok(t),
        Err(_) => refuse!(
            codes::DATA_CONTRACT_INVALID,
            "the {what} {} is not UTF-8 text",
            shown(path)
        ),
    }
}

/// A reader's error as a refusal with its code.
/// A column without a dogana type names the column and its type as the error's field and
/// value (`--json`).
fn refusal(e: ColumnsError) -> Refusal {
    match &e {
        ColumnsError::Document(_) | ColumnsError::NotFound(_) => {
            Refusal::new(codes::DATA_CONTRACT_INVALID, e.to_string())
        }
        ColumnsError::Unmapped {
            column, declared, ..
        } if !column.is_empty() => {
            Refusal::new(codes::COLUMN_TYPE_UNMAPPED, e.to_string()).at(column.clone(), declared)
        }
        ColumnsError::Unmapped { .. } => Refusal::new(codes::COLUMN_TYPE_UNMAPPED, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_start_at_the_contract_s_directory() {
        let base = Path::new("contracts");
        let at = |s: Source| s.relative_to(base);
        assert_eq!(
            at(Source::Parquet {
                file: "o.parquet".into()
            }),
            Source::Parquet {
                file: "contracts/o.parquet".into()
            }
        );
        assert_eq!(
            at(Source::Odcs {
                file: "/abs/o.yaml".into(),
                schema: "s".into()
            }),
            Source::Odcs {
                file: "/abs/o.yaml".into(),
                schema: "s".into()
            }
        );
        let table = |store: &str| Source::Table {
            store: store.into(),
            table: "t".into(),
        };
        assert_eq!(at(table("w.duckdb")), table("duckdb:contracts/w.duckdb"));
        assert_eq!(at(table("sqlite:w.db")), table("sqlite:contracts/w.db"));
        assert_eq!(at(table("/data/w.db")), table("/data/w.db"));
        let url = "postgres://me@127.0.0.1/db?schema=s";
        assert_eq!(at(table(url)), table(url));
        // in the working directory, paths are left as written
        assert_eq!(
            table("w.duckdb").relative_to(Path::new(".")),
            table("w.duckdb")
        );
    }
}

//! The contracts folder: one contract per table, `TABLE.toml` or `TABLE.json`.
//!
//! The service does not parse contracts itself: the caller gives it a [`ContractLoader`] (the
//! command line passes the one `dogana deliver --contract` uses, so a contract means the same
//! thing to both), and the folder is read whole at start and on SIGHUP.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dogana::Contract;
use dogana_receiver::DeliverOptions;

use crate::error::cut;

/// A table's contract and how its files are read (the types of the columns it does not bind).
#[derive(Debug, Clone)]
pub struct TableContract {
    /// The contract.
    pub contract: Contract,
    /// The delivery options its column list gives.
    pub options: DeliverOptions,
    /// The file it was read from.
    pub path: PathBuf,
}

/// Reads one contract file: the contract and its delivery options, or a message naming what
/// is wrong.
pub type ContractLoader =
    Arc<dyn Fn(&Path) -> Result<(Contract, DeliverOptions), String> + Send + Sync>;

/// Every table's contract, by table name.
#[derive(Debug, Clone, Default)]
pub struct Contracts {
    tables: BTreeMap<String, Arc<TableContract>>,
}

impl Contracts {
    /// Reads every `*.toml` and `*.json` file of `dir` (other files are left alone). A file
    /// whose contract names another table than its file name, two files for one table, or a
    /// contract the loader refuses fails the whole folder, naming the file.
    pub fn load(dir: &Path, loader: &ContractLoader) -> Result<Contracts, String> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read the contracts folder {}: {e}", dir.display()))?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                        e.eq_ignore_ascii_case("toml") || e.eq_ignore_ascii_case("json")
                    })
            })
            .collect();
        paths.sort();
        let mut tables = BTreeMap::new();
        for path in paths {
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                return Err(format!("{}: the file name is not UTF-8", path.display()));
            };
            let (contract, options) = loader(&path)?;
            if contract.table() != stem {
                return Err(format!(
                    "{}: the contract is of table {:?}, but the file is named for {:?}; name \
                     each contract file after its table",
                    path.display(),
                    cut(contract.table()),
                    cut(stem)
                ));
            }
            if tables.contains_key(stem) {
                return Err(format!(
                    "{}: table {:?} has a contract in another file of the folder too; keep one",
                    path.display(),
                    cut(stem)
                ));
            }
            tables.insert(
                stem.to_owned(),
                Arc::new(TableContract {
                    contract,
                    options,
                    path,
                }),
            );
        }
        Ok(Contracts { tables })
    }

    /// A table's contract.
    pub fn get(&self, table: &str) -> Option<Arc<TableContract>> {
        self.tables.get(table).cloned()
    }

    /// The tables, sorted.
    pub fn tables(&self) -> impl Iterator<Item = &str> {
        self.tables.keys().map(String::as_str)
    }

    /// How many tables have a contract.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether no table has one.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

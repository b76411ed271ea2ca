//! What dogana keeps beside a Delta table, under the table's `_dogana/` folder (which Delta's
//! VACUUM leaves alone: it removes only data files the log no longer names, and never a path
//! beginning with `_`), and how the Delta log names it.
//!
//! ```text
//! <table>/_delta_log/<N>.json              Delta's log; dogana's commit N carries, in its
//!                                          metaData configuration, dogana.head and
//!                                          dogana.version (= N), a txn action (appId
//!                                          "dogana", version = receipts so far) and, in its
//!                                          commitInfo, the receipt it records
//! <table>/_dogana/head/<sha256>.json       the head: columns, ledger, receipt segments
//! <table>/_dogana/ledger/<sha256>.json     a ledger document, named by its bytes' SHA-256
//! <table>/_dogana/segments/<sha256>.json   up to 64 receipts (accepted and rejected) in order
//! <table>/_dogana/accepted/<manifest>/<seq>-<receipt>   the replay lookup's index
//! <table>/part-<uuid>.snappy.parquet       the published rows, as Delta's Add actions name
//! ```
//!
//! Every object under `_dogana/` is written once, before the commit that names it, and never
//! changed: a commit that loses its race leaves objects nothing names, which are harmless.

use dogana_lake::layout::ColumnDef;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The table property naming the head object's SHA-256.
pub const HEAD_PROPERTY: &str = "dogana.head";
/// The table property holding the Delta version of dogana's last commit: a table whose
/// version is past it was written outside dogana since.
pub const VERSION_PROPERTY: &str = "dogana.version";
/// The `txn` action's application id (its version: how many receipts the table keeps).
pub const APP_ID: &str = "dogana";
/// The head's format.
pub const FORMAT: &str = "dogana-delta 1";
/// How many receipts one segment holds.
pub const SEGMENT: usize = 64;

/// The state a dogana commit publishes for one table, beside its rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// [`FORMAT`].
    pub format: String,
    /// The table's name.
    pub table: String,
    /// The published columns (None: no published table).
    pub columns: Option<Vec<ColumnDef>>,
    /// The SHA-256 of the ledger document (None: no ledger yet).
    pub ledger: Option<String>,
    /// How many receipts the table keeps.
    pub receipts: u64,
    /// How many of them are acceptances.
    pub accepted: u64,
    /// The receipt segments' SHA-256, in order; all but the last hold [`SEGMENT`] receipts.
    pub segments: Vec<String>,
}

impl Head {
    /// The head of a table with nothing yet.
    pub fn empty(table: &str) -> Head {
        Head {
            format: FORMAT.to_owned(),
            table: table.to_owned(),
            columns: None,
            ledger: None,
            receipts: 0,
            accepted: 0,
            segments: Vec::new(),
        }
    }
}

/// One stored receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its place among the table's receipts, from 1.
    pub seq: i64,
    /// The receipt's identity.
    pub identity: String,
    /// The manifest's identity.
    pub manifest: String,
    /// `accepted` or `rejected`.
    pub outcome: String,
    /// Its place among the acceptances (None: a rejection).
    pub accepted_order: Option<i64>,
    /// The receipt's canonical JSON.
    pub document: String,
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The key of an object under a table's `_dogana/` folder (`dir`: the table's directory).
pub fn key(dir: &str, kind: &str, sha: &str) -> String {
    format!("{dir}/_dogana/{kind}/{sha}.json")
}

/// The prefix of the replay index's entries for one manifest.
pub fn accepted_prefix(dir: &str, manifest: &str) -> String {
    format!(
        "{dir}/_dogana/accepted/{}/",
        dogana_lake::layout::table_dir(manifest)
    )
}

/// The replay index's entry of an accepted receipt.
pub fn accepted_key(dir: &str, manifest: &str, seq: i64, receipt: &str) -> String {
    format!(
        "{}{seq:020}-{}",
        accepted_prefix(dir, manifest),
        dogana_lake::layout::table_dir(receipt)
    )
}

/// The `seq` and receipt identity an index entry's name spells.
pub fn parse_accepted(name: &str) -> Option<(i64, String)> {
    let (seq, receipt) = name.split_once('-')?;
    Some((
        seq.parse().ok()?,
        dogana_lake::layout::table_of_dir(receipt)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_entry_reads_back_its_seq_and_receipt() {
        let k = accepted_key("t", "m:1", 42, "sha256:ab");
        let name = k.rsplit('/').next().unwrap();
        assert_eq!(parse_accepted(name), Some((42, "sha256:ab".to_owned())));
        assert!(k.starts_with(&accepted_prefix("t", "m:1")));
    }
}

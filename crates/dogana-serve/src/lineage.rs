//! An OpenLineage run event per decided delivery, one JSON object per line appended to a file
//! (`--lineage-file`): the job is `deliver.TABLE`, the output dataset the table in the store,
//! with `outputStatistics` (rows and bytes of an accepted delivery). The run id is the
//! receipt's identity shaped as a UUID, so the event of a replay names the original run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use dogana::{Outcome, Wire};
use dogana_receiver::Delivery;

const PRODUCER: &str = "https://github.com/dogana/dogana/tree/main/crates/dogana-serve";
const RUN_EVENT: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent";
const OUTPUT_STATISTICS: &str =
    "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json";

/// Where run events go.
pub struct Lineage {
    path: PathBuf,
    file: Mutex<()>,
}

impl Lineage {
    /// Events appended to `path` (created if missing).
    pub fn to_file(path: &Path) -> Lineage {
        Lineage {
            path: path.to_owned(),
            file: Mutex::new(()),
        }
    }

    /// Appends the event of one delivery; `namespace` names the store (without a password).
    pub fn record(&self, namespace: &str, delivery: &Delivery, bytes: u64) -> std::io::Result<()> {
        let line = format!("{}\n", event(namespace, delivery, bytes));
        let _one_writer = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        f.write_all(line.as_bytes())
    }
}

/// A receipt identity (64 hex digits) as a version-4-shaped UUID.
fn run_id(identity: &str) -> String {
    let hex: Vec<char> = identity
        .chars()
        .chain(std::iter::repeat('0'))
        .take(32)
        .collect();
    let mut h: String = hex.into_iter().collect();
    h.replace_range(12..13, "4");
    let variant = u8::from_str_radix(&h[16..17], 16).unwrap_or(0) & 0x3 | 0x8;
    h.replace_range(16..17, &format!("{variant:x}"));
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The run event of one delivery.
pub fn event(namespace: &str, delivery: &Delivery, bytes: u64) -> serde_json::Value {
    let receipt = &delivery.receipt;
    let table = receipt.table();
    let (event_type, rows) = match receipt.outcome() {
        Outcome::Rejected => ("FAIL", 0),
        Outcome::Accepted | Outcome::Replayed => ("COMPLETE", receipt.manifest().rows()),
    };
    serde_json::json!({
        "eventType": event_type,
        "eventTime": receipt.received_at().to_string(),
        "producer": PRODUCER,
        "schemaURL": RUN_EVENT,
        "run": {"runId": run_id(&receipt.identity())},
        "job": {"namespace": "dogana", "name": format!("deliver.{table}")},
        "inputs": [],
        "outputs": [{
            "namespace": namespace,
            "name": table,
            "outputFacets": {
                "outputStatistics": {
                    "_producer": PRODUCER,
                    "_schemaURL": OUTPUT_STATISTICS,
                    "rowCount": rows,
                    "size": bytes,
                }
            }
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_id_is_a_uuid_of_version_4() {
        let id = run_id(&"f".repeat(64));
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_eq!(id.matches('-').count(), 4);
    }

    #[test]
    fn two_receipts_have_two_run_ids() {
        assert_ne!(run_id(&"a".repeat(64)), run_id(&"b".repeat(64)));
    }
}

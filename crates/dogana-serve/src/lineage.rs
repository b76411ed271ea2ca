//! An OpenLineage run event per decided delivery, one JSON object per line appended to a file
//! (`--lineage-file`), posted to an OpenLineage endpoint (`--lineage-url`, as Marquez takes
//! them at `/api/v1/lineage`), or both: the job is `deliver.TABLE`, the output dataset the table in the store,
//! with `outputStatistics` (rows and bytes of an accepted delivery). The run id is the
//! receipt's identity shaped as a UUID, so the event of a replay names the original run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use dogana::{Outcome, Receipt, Wire};

const PRODUCER: &str = "https://github.com/dogana/dogana/tree/main/crates/dogana-serve";
const RUN_EVENT: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent";
const OUTPUT_STATISTICS: &str =
    "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json";

/// Where run events go.
pub struct Lineage {
    file: Option<(PathBuf, Mutex<()>)>,
    post: Option<tokio::sync::mpsc::Sender<serde_json::Value>>,
}

/// Events waiting to be posted; past this many the newest are dropped with a warning rather
/// than held without bound while the endpoint is down.
const POST_QUEUE: usize = 10_000;

impl Lineage {
    /// Events appended to `file` (created if missing) and posted to `url`, each if given;
    /// `None` when neither is. Posting runs on its own task in the current tokio runtime, in
    /// order, one event at a time: a slow or failing endpoint never delays a delivery, and a
    /// failed post is logged, not retried.
    pub fn new(file: Option<&Path>, url: Option<&reqwest::Url>) -> Option<Lineage> {
        if file.is_none() && url.is_none() {
            return None;
        }
        let post = url.map(|url| {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<serde_json::Value>(POST_QUEUE);
            let url = url.clone();
            tokio::spawn(async move {
                let client = reqwest::Client::builder()
                    .timeout(std::time::Duration::from_secs(10))
                    .build()
                    .expect("a client with a timeout builds");
                while let Some(event) = rx.recv().await {
                    let sent = client.post(url.clone()).json(&event).send().await;
                    match sent.and_then(reqwest::Response::error_for_status) {
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "cannot post the OpenLineage event"),
                    }
                }
            });
            tx
        });
        Some(Lineage {
            file: file.map(|p| (p.to_owned(), Mutex::new(()))),
            post,
        })
    }

    /// Writes or queues the event of one decided receipt; `namespace` names the store (without
    /// a password). A failure is logged: lineage never changes a delivery's answer.
    pub fn record(&self, namespace: &str, receipt: &Receipt, bytes: u64) {
        let event = event(namespace, receipt, bytes);
        if let Some((path, one_writer)) = &self.file {
            let line = format!("{event}\n");
            let _one_writer = one_writer.lock().unwrap_or_else(|p| p.into_inner());
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(line.as_bytes()));
            if let Err(e) = written {
                tracing::warn!(error = %e, "cannot append the OpenLineage event");
            }
        }
        if let Some(post) = &self.post {
            if post.try_send(event).is_err() {
                tracing::warn!("the OpenLineage endpoint is behind; an event was dropped");
            }
        }
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
pub fn event(namespace: &str, receipt: &Receipt, bytes: u64) -> serde_json::Value {
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

//! `dogana watch DIR`: a landing folder (an SFTP drop, a mounted bucket).
//!
//! A sender writes `FILE`, then its manifest `FILE.json` (best written elsewhere and renamed
//! in: then it is whole the moment it appears). A pair is delivered once the manifest parses
//! and neither file has changed size or modification time for `stable_for`, so a file still
//! being written (however slowly, as long as it grows within that time) is never read. After
//! the decision the receipt is written beside the files in `accepted/` or `rejected/`, the
//! data file is moved there, and the manifest last. A watcher killed at any point redelivers
//! on restart what still has its manifest in the folder, and the engine's replay lookup
//! answers with the first receipt: nothing is delivered twice. A pair that cannot be a
//! delivery (no contract for its table, a manifest that does not parse once stable) goes to
//! `rejected/` with `FILE.error.json`; a transient failure (a lock, a lost connection) leaves
//! it for the next round.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use dogana::{FromWire, Manifest, Outcome};
use dogana_codes as codes;

use crate::contracts::{ContractLoader, Contracts};
use crate::deliver::{self, answer};

/// How `dogana watch` runs.
pub struct WatchConfig {
    /// The landing folder.
    pub dir: PathBuf,
    /// The store deliveries go to.
    pub store: dogana_stores::Spec,
    /// The contracts folder.
    pub contracts: PathBuf,
    /// Reads one contract file.
    pub load_contract: ContractLoader,
    /// How long a pair must stay unchanged before it is delivered.
    pub stable_for: Duration,
    /// How often the folder is read.
    pub poll: Duration,
    /// How long a delivery waits for the store's write lock.
    pub lock_timeout: Duration,
    /// The receipts' `source`.
    pub source: String,
}

/// What one pass did, for the log and the tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pass {
    /// Files delivered and accepted (or replayed).
    pub accepted: Vec<String>,
    /// Files rejected or refused.
    pub rejected: Vec<String>,
    /// Files left for a later pass after a transient failure.
    pub retried: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Seen {
    data: (u64, Option<SystemTime>),
    manifest: (u64, Option<SystemTime>),
}

fn stat(path: &Path) -> Option<(u64, Option<SystemTime>)> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| (m.len(), m.modified().ok()))
}

/// The landing folder's state between passes: when each pair was first seen as it is now.
pub struct Watcher {
    config: WatchConfig,
    contracts: Contracts,
    writers: deliver::Writers,
    seen: HashMap<PathBuf, (Seen, Instant)>,
}

impl Watcher {
    /// Reads the contracts folder and makes the `accepted/` and `rejected/` folders.
    pub fn new(config: WatchConfig) -> Result<Watcher, String> {
        let contracts = Contracts::load(&config.contracts, &config.load_contract)?;
        for sub in ["accepted", "rejected"] {
            std::fs::create_dir_all(config.dir.join(sub))
                .map_err(|e| format!("cannot create {}: {e}", config.dir.join(sub).display()))?;
        }
        // one delivery at a time: one handle kept between them
        let writers = deliver::Writers::new(config.store.clone(), config.lock_timeout, 1);
        Ok(Watcher {
            config,
            contracts,
            writers,
            seen: HashMap::new(),
        })
    }

    /// One pass over the folder: delivers every pair unchanged for `stable_for`.
    pub fn pass(&mut self) -> Pass {
        let mut pass = Pass::default();
        let Ok(entries) = std::fs::read_dir(&self.config.dir) else {
            return pass;
        };
        let mut manifests: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                p.is_file() && name.ends_with(".json") && !name.starts_with('.') && name.len() > 5
            })
            .collect();
        manifests.sort();
        let mut present = Vec::new();
        for manifest in manifests {
            let name = manifest
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_owned();
            let data = manifest.with_file_name(&name[..name.len() - 5]);
            let data_name = name[..name.len() - 5].to_owned();
            present.push(manifest.clone());
            let (Some(d), Some(m)) = (stat(&data), stat(&manifest)) else {
                // killed after moving the data file: finish the move of its manifest
                for sub in ["accepted", "rejected"] {
                    if self.config.dir.join(sub).join(&data_name).exists() {
                        let _ = std::fs::rename(&manifest, self.config.dir.join(sub).join(&name));
                    }
                }
                continue;
            };
            let now_seen = Seen {
                data: d,
                manifest: m,
            };
            let since = match self.seen.get(&manifest) {
                Some((s, t)) if *s == now_seen => *t,
                _ => {
                    self.seen
                        .insert(manifest.clone(), (now_seen, Instant::now()));
                    continue;
                }
            };
            if since.elapsed() < self.config.stable_for {
                continue;
            }
            self.seen.remove(&manifest);
            match self.deliver(&data, &manifest) {
                Done::Accepted => pass.accepted.push(data_name),
                Done::Rejected => pass.rejected.push(data_name),
                Done::Retry => pass.retried.push(data_name),
            }
        }
        self.seen.retain(|p, _| present.contains(p));
        pass
    }

    fn deliver(&mut self, data: &Path, manifest_path: &Path) -> Done {
        let shown = data.display().to_string();
        let bytes = match std::fs::read(manifest_path) {
            Ok(b) => b,
            Err(_) => return Done::Retry,
        };
        let manifest = match Manifest::from_slice(&bytes) {
            Ok(m) => m,
            Err(e) => {
                return self.refuse(
                    data,
                    manifest_path,
                    codes::MANIFEST_INVALID.id,
                    &format!("the manifest is refused: {e}"),
                )
            }
        };
        let Some(contract) = self.contracts.get(manifest.table()) else {
            return self.refuse(
                data,
                manifest_path,
                codes::TABLE_UNKNOWN.id,
                &format!(
                    "no contract for table {:?} in the contracts folder",
                    crate::error::cut(manifest.table())
                ),
            );
        };
        let delivery = self
            .writers
            .deliver(&contract, &manifest, data, &self.config.source);
        match delivery {
            Ok(d) => {
                let sub = if d.receipt.outcome() == Outcome::Rejected {
                    "rejected"
                } else {
                    "accepted"
                };
                tracing::info!(file = %shown, outcome = deliver::outcome_name(d.receipt.outcome()), "delivered from the landing folder");
                let body = answer(&d);
                match self.file_away(data, manifest_path, sub, "receipt", &body) {
                    Ok(()) if sub == "accepted" => Done::Accepted,
                    Ok(()) => Done::Rejected,
                    Err(e) => {
                        tracing::error!(file = %shown, error = %e, "cannot move the delivered file");
                        Done::Retry
                    }
                }
            }
            Err(e) if e.code.kind == codes::Kind::Transient => {
                tracing::warn!(file = %shown, error = %e, "left for the next pass");
                Done::Retry
            }
            Err(e) => {
                let body = e.body();
                tracing::warn!(file = %shown, error = %e, "refused");
                match self.file_away(data, manifest_path, "rejected", "error", &body) {
                    Ok(()) => Done::Rejected,
                    Err(_) => Done::Retry,
                }
            }
        }
    }

    fn refuse(&mut self, data: &Path, manifest: &Path, code: &str, message: &str) -> Done {
        let body = serde_json::json!({"error": {"code": code, "message": message}});
        tracing::warn!(file = %data.display(), code, message, "refused");
        match self.file_away(data, manifest, "rejected", "error", &body) {
            Ok(()) => Done::Rejected,
            Err(_) => Done::Retry,
        }
    }

    /// Writes `NAME.KIND.json` into `sub/` (through a temporary name), then moves the data
    /// file, then the manifest: the manifest leaves the landing folder last.
    fn file_away(
        &self,
        data: &Path,
        manifest: &Path,
        sub: &str,
        kind: &str,
        body: &serde_json::Value,
    ) -> std::io::Result<()> {
        let name = data.file_name().and_then(|n| n.to_str()).unwrap_or("file");
        let target = self.config.dir.join(sub);
        let tmp = target.join(format!(".{name}.{kind}.json.tmp"));
        std::fs::write(&tmp, format!("{body:#}\n"))?;
        std::fs::rename(&tmp, target.join(format!("{name}.{kind}.json")))?;
        std::fs::rename(data, target.join(name))?;
        std::fs::rename(manifest, target.join(format!("{name}.json")))
    }
}

enum Done {
    Accepted,
    Rejected,
    Retry,
}

/// Watches until `stop` is set (SIGTERM or SIGINT in the command line): a pass every `poll`.
/// With `once`, waits `stable_for` after a first look and makes one pass, then returns.
pub fn watch(config: WatchConfig, once: bool, stop: &AtomicBool) -> Result<Pass, String> {
    let poll = config.poll;
    let stable = config.stable_for;
    let mut w = Watcher::new(config)?;
    let mut total = Pass::default();
    if once {
        w.pass();
        std::thread::sleep(stable + Duration::from_millis(10));
        return Ok(w.pass());
    }
    while !stop.load(Ordering::SeqCst) {
        let p = w.pass();
        total.accepted.extend(p.accepted);
        total.rejected.extend(p.rejected);
        total.retried.extend(p.retried);
        std::thread::sleep(poll);
    }
    Ok(total)
}

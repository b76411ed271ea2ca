//! `dogana push` and `dogana pull` (`dogana_lake::sync`, the `lake` feature): a local lake
//! store and a shared bucket. A build without the `lake` feature answers each with one line
//! saying how to get it.

use crate::cli::{PullArgs, PushArgs};
use crate::refusal::Result;

#[cfg(feature = "lake")]
mod imp {
    use std::path::Path;

    use dogana_lake::sync::{self, PullOptions, SyncConfig};
    use dogana_lake::LakeError;

    use crate::cli::{PullArgs, PushArgs};
    use crate::commands::receiver::shown;
    use crate::output;
    use crate::refusal::{Refusal, Result};

    /// The local store's directory URL from `--store` (a path or file:// URL).
    fn local(store: &Path) -> Result<String> {
        let s = store.to_string_lossy().into_owned();
        let s = s.strip_prefix("lake:").unwrap_or(&s).to_owned();
        if s.contains("://") && !s.starts_with("file://") {
            return Err(Refusal::new(
                dogana_codes::STORE_SPEC_INVALID,
                format!("--store {s}: the local store of a push or pull is a directory on this machine (file:///dir); the bucket goes in --to or --from"),
            )
            .at("--store", shown(store)));
        }
        Ok(s)
    }

    fn config(dir: &str, file: Option<&Path>) -> Result<SyncConfig> {
        let parsed = match file {
            Some(f) => std::fs::read_to_string(f)
                .map_err(|e| {
                    Refusal::new(
                        dogana_codes::CONFIG_INVALID,
                        format!("--config {}: {e}", f.display()),
                    )
                })
                .and_then(|t| SyncConfig::parse(&t).map_err(|e| failed("reading --config", &e))),
            None => {
                let d = dir.strip_prefix("file://").unwrap_or(dir);
                SyncConfig::of_store(Path::new(d)).map_err(|e| failed("reading store.toml", &e))
            }
        }?;
        Ok(parsed)
    }

    fn failed(what: &str, e: &LakeError) -> Refusal {
        Refusal::new(e.code(), format!("{what}: {e}"))
    }

    pub fn push(a: PushArgs) -> Result<()> {
        let dir = local(&a.store)?;
        let c = config(&dir, a.config.as_deref())?;
        if a.forget_lost {
            let gone = sync::drain::forget_lost(&dir).map_err(|e| failed("push", &e))?;
            for m in &gone {
                eprintln!(
                    "forgot the lost publication {} {} (marked {})",
                    m.table, m.snapshot, m.at
                );
            }
        }
        let r = sync::push(&dir, &a.to, &c).map_err(|e| failed("push", &e))?;
        for w in &r.warnings {
            eprintln!("warning [{}]: {w}", w.code());
        }
        if a.json {
            let doc = serde_json::json!({
                "node": r.node,
                "advanced": r.advanced,
                "unchanged": r.unchanged,
                "behind": r.behind,
                "uploaded": r.uploaded.len(),
                "uploaded_bytes": r.uploaded_bytes,
                "tombstoned": r.tombstoned,
                "generation": r.generation,
                "rounds": r.rounds,
                "warnings": r.warnings.iter().map(|w| serde_json::json!({"code": w.code(), "message": w.to_string()})).collect::<Vec<_>>(),
            });
            return output::json(&format!("{doc}\n"));
        }
        let mut out = output::Lines::new();
        out.line(format!(
            "pushed {} to {} as {}: generation {} ({} round{}), {} objects uploaded ({} bytes)",
            shown(&a.store),
            a.to,
            r.node,
            r.generation,
            r.rounds,
            if r.rounds == 1 { "" } else { "s" },
            r.uploaded.len(),
            r.uploaded_bytes
        ));
        for t in &r.advanced {
            out.line(format!("  {t}: the bucket head is now this store's"));
        }
        for t in &r.unchanged {
            out.line(format!("  {t}: already the bucket's head"));
        }
        for t in &r.behind {
            out.line(format!("  {t}: the bucket is ahead; pull to catch up"));
        }
        if !r.tombstoned.is_empty() {
            out.line(format!(
                "  {} objects this node deleted were tombstoned and removed from the bucket",
                r.tombstoned.len()
            ));
        }
        out.print()
    }

    pub fn pull(a: PullArgs) -> Result<()> {
        let dir = local(&a.store)?;
        let c = config(&dir, a.config.as_deref())?;
        let opts = PullOptions {
            lazy: a.lazy || c.lazy_parts,
            tables: a.tables.clone(),
            adopt: a.adopt.clone(),
            part_cache_bytes: a.config.is_some().then_some(c.part_cache_bytes),
        };
        let r = sync::pull(&dir, &a.from, &opts).map_err(|e| failed("pull", &e))?;
        for w in &r.warnings {
            eprintln!("warning [{}]: {w}", w.code());
        }
        if a.json {
            let doc = serde_json::json!({
                "advanced": r.advanced.iter().map(|(t, h)| serde_json::json!({"table": t, "head": h})).collect::<Vec<_>>(),
                "unchanged": r.unchanged,
                "downloaded": r.downloaded.len(),
                "downloaded_bytes": r.downloaded_bytes,
                "skipped_parts": r.skipped_parts,
                "deleted": r.deleted,
                "moved_aside": r.moved_aside,
                "generation": r.generation,
                "warnings": r.warnings.iter().map(|w| serde_json::json!({"code": w.code(), "message": w.to_string()})).collect::<Vec<_>>(),
            });
            return output::json(&format!("{doc}\n"));
        }
        let mut out = output::Lines::new();
        out.line(format!(
            "pulled {} into {}: generation {}, {} objects downloaded ({} bytes){}",
            a.from,
            shown(&a.store),
            r.generation,
            r.downloaded.len(),
            r.downloaded_bytes,
            if opts.lazy {
                format!(
                    ", {} parts left in the bucket for their first read",
                    r.skipped_parts
                )
            } else {
                String::new()
            }
        ));
        for (t, h) in &r.advanced {
            out.line(format!("  {t}: now at {h}"));
        }
        for t in &r.unchanged {
            out.line(format!("  {t}: already at the bucket's head"));
        }
        if !r.moved_aside.is_empty() {
            out.line(format!(
                "  {} local objects of adopted tables were moved under .sync/fenced/ (kept)",
                r.moved_aside.len()
            ));
        }
        out.print()
    }
}

/// `dogana push`.
pub fn push(a: PushArgs) -> Result<()> {
    #[cfg(feature = "lake")]
    {
        imp::push(a)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = a;
        crate::commands::lake::no_lake("push")
    }
}

/// `dogana pull`.
pub fn pull(a: PullArgs) -> Result<()> {
    #[cfg(feature = "lake")]
    {
        imp::pull(a)
    }
    #[cfg(not(feature = "lake"))]
    {
        let _ = a;
        crate::commands::lake::no_lake("pull")
    }
}

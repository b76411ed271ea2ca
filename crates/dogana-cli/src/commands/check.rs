//! `dogana check FILE --contract PATH [--manifest PATH] [--json]`: FILE's manifest against the
//! contract, schema hash included, and FILE's bytes against the manifest's content_hash
//! (CLI-15 to CLI-19). Rows are the receiver's to check (CLI-18).
//!
//! On success, one line on standard output (CLI-19):
//! `orders.csv: manifest valid for orders/full; content_hash matches`.
//! On failure, one line on standard error and exit 1. With `--json`, standard output gets one
//! JSON object either way, once the contract and the manifest could be read:
//! `{"file":…,"manifest":…,"passed":…,"checks":[<Check>…]}`, the checks being the wire
//! documents of `manifest` (the gate's check) and `content_hash`.

use dogana::{Check, Wire};
use serde_json::{json, Value};

use crate::cli::CheckArgs;
use crate::commands::manifest::default_path;
use crate::commands::manifest_check;
use crate::input::{self, shown};
use crate::output;
use crate::refusal::{Refusal, Result};
use dogana_codes as codes;

pub fn run(a: CheckArgs) -> Result<()> {
    let contract = input::contract(&a.contract)?;
    input::data_file(&a.file)?;
    let manifest_path = a.manifest.clone().unwrap_or_else(|| default_path(&a.file));
    let manifest = input::manifest(&manifest_path)?;
    let (file, mpath) = (shown(&a.file), shown(&manifest_path));

    let mut checks = Vec::with_capacity(2);
    let mut refusal: Option<Refusal> = None;
    match manifest_check(&contract, &manifest) {
        Ok(detail) => checks.push(Check::pass("manifest", detail)),
        Err(detail) => {
            refusal = Some(Refusal::new(codes::MANIFEST_INVALID, format!(
                "manifest {mpath} is invalid for contract {:?}: {detail}; write it again with dogana manifest",
                contract.table()
            )));
            checks.push(Check::fail("manifest", detail));
        }
    }
    if refusal.is_some() {
        checks.push(Check::fail(
            "content_hash",
            "not evaluated: the manifest check failed",
        ));
    } else {
        let (check, failure) = content(&a.file, &file, &mpath, manifest.content_hash());
        checks.push(check);
        refusal = failure;
    }

    if a.json {
        let doc = json!({
            "file": file,
            "manifest": mpath,
            "passed": refusal.is_none(),
            "checks": checks.iter().map(Wire::to_value).collect::<Vec<Value>>(),
        });
        output::json(&format!("{}\n", dogana_json::canonical(&doc)))?;
    }
    match refusal {
        Some(r) => Err(r),
        None if a.json => Ok(()),
        None => output::stdout(
            format!(
                "{file}: manifest valid for {}/{}; content_hash matches\n",
                output::sender_text(manifest.table()),
                output::sender_text(manifest.shape())
            )
            .as_bytes(),
        ),
    }
}

/// The `content_hash` check: declared (CLI-17) and equal to the SHA-256 of FILE (CLI-16).
fn content(
    path: &std::path::Path,
    file: &str,
    mpath: &str,
    declared: Option<&str>,
) -> (Check, Option<Refusal>) {
    let Some(declared) = declared else {
        let detail = "the manifest declares no content_hash, so it does not name the file's bytes";
        return (
            Check::fail("content_hash", detail),
            Some(Refusal::new(codes::MANIFEST_INVALID, format!(
                "manifest {mpath} declares no content_hash, so nothing ties it to {file} (CLI-17); write it again with dogana manifest, which declares one"
            ))),
        );
    };
    let actual = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(std::io::Error::other("it is a directory")),
        _ => dogana_rows::sha256_file(path),
    };
    match actual {
        Err(e) => (
            Check::fail("content_hash", format!("cannot read {file}: {e}")),
            Some(Refusal::new(codes::FILE_UNREADABLE, format!(
                "cannot read {file}: {e}; name the delivered file, readable by this user"
            ))),
        ),
        Ok(actual) if actual == declared => (
            Check::pass("content_hash", format!("sha256 {actual} as declared")),
            None,
        ),
        Ok(actual) => (
            Check::fail(
                "content_hash",
                format!("declared {declared}, the file's SHA-256 is {actual}"),
            ),
            Some(Refusal::new(codes::FILE_MISMATCH, format!(
                "{file} does not match its manifest: {mpath} declares content_hash {declared}, the file's SHA-256 is {actual} (CLI-16); deliver the file the manifest describes, or write a new manifest with dogana manifest --force"
            ))),
        ),
    }
}

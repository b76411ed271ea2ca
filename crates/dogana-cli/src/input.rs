//! Reading the documents the commands take: contracts (JSON or TOML), manifests, ledgers and
//! any wire document. `-` reads standard input.

use std::io::Read;
use std::path::Path;

use dogana::{Contract, FromWire, Ledger, Manifest};

use dogana_codes as codes;

use crate::refusal::{refuse, Refusal, Result};
use crate::toml_contract;

/// How a path is shown in messages.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// The directory a file's relative references start from: its own (the working directory for
/// standard input or a bare file name).
pub fn base_dir(path: &Path) -> std::path::PathBuf {
    match path.parent() {
        Some(p) if !is_dash(path) && !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

/// Whether the path names standard input or output.
pub fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The bytes of a file, or of standard input for `-`. `what` names the document in messages.
pub fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    if is_dash(path) {
        let mut bytes = Vec::new();
        if let Err(e) = std::io::stdin().lock().read_to_end(&mut bytes) {
            refuse!(
                codes::FILE_UNREADABLE,
                "cannot read the {what} from standard input: {e}"
            );
        }
        return Ok(bytes);
    }
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) => refuse!(
            codes::FILE_UNREADABLE,
            "cannot read the {what} {}: {e}; check the path and its permissions",
            shown(path)
        ),
    }
}

/// Refuses a delivered file that cannot be read, naming it as the data file: checked before
/// its manifest is looked for, whose default path is the data file's and would be missing
/// too (so the message would otherwise name the manifest).
pub fn data_file(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(_) => Ok(()),
        Err(e) => refuse!(
            codes::FILE_UNREADABLE,
            "the data file {} cannot be read: {e}; name the delivered file, readable by this user",
            shown(path)
        ),
    }
}

/// Whether a document is a TOML contract description: by its extension, else by its content
/// (a JSON document starts with `{`).
pub fn is_toml(path: &Path, bytes: &[u8]) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("toml") => true,
        Some(e) if e.eq_ignore_ascii_case("json") => false,
        _ => bytes
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b != b'{'),
    }
}

/// A contract, from its wire document or its TOML description.
pub fn contract(path: &Path) -> Result<Contract> {
    Ok(contract_and_columns(path)?.0)
}

/// A contract, and the `[name, type]` pairs of the `columns` its TOML description lists (empty
/// for a wire document, which lists none): the types of the columns the contract does not
/// bind, which a receiver needs to check a column hash.
pub fn contract_and_columns(path: &Path) -> Result<(Contract, Vec<(String, String)>)> {
    let bytes = read(path, "contract")?;
    if is_toml(path, &bytes) {
        let Ok(text) = std::str::from_utf8(&bytes) else {
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {} is not UTF-8 text",
                shown(path)
            )
        };
        let parsed = toml_contract::parse(text, &shown(path), &base_dir(path), None)?;
        return Ok((parsed.contract, parsed.hashed_columns.unwrap_or_default()));
    }
    match Contract::from_slice(&bytes) {
        Ok(c) => Ok((c, Vec::new())),
        Err(e) => Err(Refusal::new(
            codes::CONTRACT_INVALID,
            format!(
                "contract {} is refused: {}; fix the document, or regenerate it with dogana contract",
                shown(path),
                e.0
            ),
        )
        .at(&e.0.field, &e.0.value)),
    }
}

/// A manifest document.
pub fn manifest(path: &Path) -> Result<Manifest> {
    let bytes = read(path, "manifest")?;
    match Manifest::from_slice(&bytes) {
        Ok(m) => Ok(m),
        Err(e) => Err(Refusal::new(
            codes::MANIFEST_INVALID,
            format!(
                "manifest {} is refused: {}; write it again with dogana manifest",
                shown(path),
                e.0
            ),
        )
        .at(&e.0.field, &e.0.value)),
    }
}

/// A ledger document (`ledger.to_json()`), and the JSON value it was read from, if one was
/// built.
///
/// A canonical document is read without a JSON tree (`Ledger::from_slice_fast`, bench/cli.md);
/// any other goes through the strict parser, whose refusals this names. The value is returned
/// so that a command about to exit can leave it unfreed: for a ledger of 100,000 regions,
/// freeing the value and the ledger costs as much as printing them.
pub fn ledger(path: &Path) -> Result<(Ledger, Option<serde_json::Value>)> {
    let bytes = read(path, "ledger")?;
    if let Some(l) = Ledger::from_slice_fast(&bytes) {
        return Ok((l, None));
    }
    let refused = |problem: &dyn std::fmt::Display| {
        Refusal::new(
            codes::LEDGER_INVALID,
            format!(
                "ledger {} is refused: {problem}; export it again from the receiver's store (dogana ledger --store S TABLE)",
                shown(path)
            ),
        )
    };
    let value = dogana_json::parse(&bytes).map_err(|e| refused(&e))?;
    match Ledger::from_value(&value) {
        Ok(l) => Ok((l, Some(value))),
        Err(e) => Err(refused(&e.0)),
    }
}

/// Any JSON document, strictly parsed.
pub fn json(path: &Path, what: &str) -> Result<serde_json::Value> {
    let bytes = read(path, what)?;
    match dogana_json::parse(&bytes) {
        Ok(v) => Ok(v),
        Err(e) => refuse!(
            codes::DOCUMENT_INVALID,
            "{what} {} is not valid JSON: {e}; fix the document",
            shown(path)
        ),
    }
}

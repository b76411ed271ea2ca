//! `dogana manifest FILE --contract PATH --shape NAME --produced-at TIME --rows N [options]`:
//! writes FILE.json, the manifest of one read, validated against the contract before anything
//! is written (CLI-03 to CLI-14).
//!
//! The document written is the canonical `to_json()` followed by one newline (CLI-14); `check`
//! and every reader of wire documents accept it, as JSON allows whitespace after a value.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};

use dogana::{Coverage, Wire};

use crate::cli::ManifestArgs;
use crate::commands::manifest_check;
use crate::input::{self, shown};
use crate::output;
use crate::refusal::{refuse, Result};
use crate::typed;
use dogana_codes as codes;

/// The default manifest path: the data path with `.json` appended (CLI-04).
pub fn default_path(file: &Path) -> PathBuf {
    let mut name = OsString::from(file.as_os_str());
    name.push(".json");
    PathBuf::from(name)
}

/// What to add to the gate's detail so that the line also says what to do.
fn hint(detail: &str) -> &'static str {
    let field = detail.split([' ', '[', ':']).next().unwrap_or("");
    match field {
        "table" | "schema_hash" => "use the contract of this table, or fix the contract",
        "shape" => "pass --shape with one of the contract's shapes",
        "window" => "fix --window LOW HIGH",
        "since" => "fix --since",
        "generation" => "fix --generation",
        "rows" | "tombstones" => "fix --rows and --tombstones",
        _ => "fix the options and run again",
    }
}

pub fn run(a: ManifestArgs) -> Result<()> {
    let contract = input::contract(&a.contract)?;
    let Some(shape) = contract.shape(&a.shape) else {
        let names: Vec<String> = contract.shapes().keys().map(|k| format!("{k:?}")).collect();
        refuse!(
            codes::MANIFEST_INVALID,
            "contract for table {:?} has no shape {:?}; pass --shape with one of {}",
            contract.table(),
            a.shape,
            names.join(", ")
        )
    };
    let produced_at = typed::time("--produced-at", &a.produced_at)?;

    // Where to write: refuse an existing manifest before reading a byte of FILE (CLI-12).
    let target = match &a.output {
        Some(p) if input::is_dash(p) => None,
        Some(p) => Some(p.clone()),
        None => Some(default_path(&a.file)),
    };
    if let Some(path) = &target {
        output::check_free(path, a.force, "manifest")?;
    }
    // FILE must be readable before any work is done.
    match File::open(&a.file) {
        Ok(f) if f.metadata().is_ok_and(|m| m.is_dir()) => {
            refuse!(
                codes::FILE_UNREADABLE,
                "{} is a directory; name the delivered file",
                shown(&a.file)
            )
        }
        Ok(_) => {}
        Err(e) => refuse!(
            codes::FILE_UNREADABLE,
            "cannot read {}: {e}; name the delivered file, readable by this user",
            shown(&a.file)
        ),
    };

    let mut builder = contract
        .manifest(a.shape.clone(), produced_at)
        .rows(a.rows)
        .tombstones(a.tombstones);
    match (&a.window, shape.coverage()) {
        (Some(bounds), Coverage::Window) => {
            builder = builder.window(typed::window(&contract, bounds, "drop --window")?);
        }
        (Some(_), Coverage::Table) => refuse!(codes::MANIFEST_INVALID, "shape {:?} covers the whole table, so it takes no window; drop --window, or name a window shape",
            a.shape
        ),
        (None, Coverage::Window) => {
            let ty = contract
                .window_type()
                .expect("a contract with a window shape types its window column");
            if shape.window_size().is_none() {
                refuse!(codes::MANIFEST_INVALID, "shape {:?} covers a window and has no size, so no window ends at --produced-at; pass --window LOW HIGH (CLI-09)",
                    a.shape
                )
            }
            match shape.window_ending_at(produced_at, ty) {
                Ok(w) => builder = builder.window(w),
                Err(e) => refuse!(codes::MANIFEST_INVALID, "shape {:?} has no rolling window: {}; pass --window LOW HIGH",
                    a.shape,
                    e.problem()
                ),
            }
        }
        (None, Coverage::Table) => {}
    }
    match &a.since {
        Some(text) => builder = builder.since(typed::since(&a.shape, shape, text)?),
        None if shape.is_changed_only() => refuse!(codes::MANIFEST_INVALID, "shape {:?} reads changes since a {} checkpoint; pass --since with where the read starts",
            a.shape,
            shape.checkpoint()
        ),
        None => {}
    }
    if let Some(text) = &a.generation {
        builder = builder.generation(typed::generation(&contract, text)?);
    } else if shape.is_feed() {
        refuse!(
            codes::MANIFEST_INVALID,
            "shape {:?} is a {} feed, which issues the position it ends at; pass --generation",
            a.shape,
            shape.checkpoint()
        )
    }

    // Validate the declarations before hashing: a typo costs nothing, a 50 GB file does.
    let validate = |m: &dogana::Manifest| -> Result<()> {
        if let Err(detail) = manifest_check(&contract, m) {
            refuse!(
                codes::MANIFEST_INVALID,
                "the manifest is invalid for contract {:?}: {detail}; {}",
                contract.table(),
                hint(&detail)
            )
        }
        Ok(())
    };
    match builder.clone().build() {
        Ok(m) => validate(&m)?,
        Err(e) => refuse!(
            codes::MANIFEST_INVALID,
            "the manifest is invalid: {}; {}",
            e.problem(),
            hint(&e.problem().field)
        ),
    }
    let content_hash = match dogana_rows::sha256_file(&a.file) {
        Ok(h) => h,
        Err(e) => refuse!(
            codes::FILE_UNREADABLE,
            "cannot read {}: {e}",
            shown(&a.file)
        ),
    };
    let manifest = match builder.content_hash(content_hash).build() {
        Ok(m) => m,
        Err(e) => refuse!(
            codes::MANIFEST_INVALID,
            "the manifest is invalid: {}",
            e.problem()
        ),
    };
    validate(&manifest)?;

    let document = format!("{}\n", manifest.to_json());
    match target {
        None => output::json(&document),
        Some(path) => {
            output::file(&path, document.as_bytes(), a.force, "manifest")?;
            output::stdout(
                format!(
                    "wrote {} (Manifest {})\n",
                    shown(&path),
                    manifest.identity()
                )
                .as_bytes(),
            )
        }
    }
}

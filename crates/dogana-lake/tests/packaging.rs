//! Packaging rules (`sqlite-link-rule`, docs/store-decisions.md "Part 3"): which crate may
//! link SQLite, read from the workspace's own `cargo metadata` and `cargo tree`.
//!
//! - Only `dogana-sqlite` declares the SQLite binding (`rusqlite`, `libsqlite3-sys`) as a
//!   normal dependency, and it enables no link feature itself: its `bundled` feature is
//!   opt-in. Only the two artifacts people install, the `dogana` binary (`dogana-cli`) and
//!   the Python extension (`dogana-py`), turn it on. Anything else is `SqliteLinkForced`,
//!   naming the manifest line (`topology.package.sqlite-adapter`).
//! - The lake store reaching `libsqlite3-sys` through normal dependencies, with its default
//!   features, on any target, is `StoreLinksSqlite`, naming the path that pulled it
//!   (`topology.package.store-sqlite-free`): a lake store (and the catalogs it will take
//!   through a port) must build where no C compiler or SQLite library is.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The crates allowed to turn on SQLite's `bundled` build: the binaries.
const BINARIES: &[&str] = &["dogana-cli", "dogana-py"];
/// The crate that alone declares the binding.
const ADAPTER: &str = "dogana-sqlite";
const BINDINGS: &[&str] = &["rusqlite", "libsqlite3-sys"];
/// The binding's features that choose how SQLite is linked.
const LINK_FEATURES: &[&str] = &[
    "bundled",
    "bundled-full",
    "bundled-windows",
    "bundled-sqlcipher",
    "bundled-sqlcipher-vendored-openssl",
    "sqlcipher",
];

#[derive(Debug, PartialEq, Eq)]
enum PackagingError {
    /// A manifest line that declares the binding or forces its link (`sqlite-adapter`).
    SqliteLinkForced { line: String, why: String },
    /// A path of normal dependencies from the lake store to `libsqlite3-sys`.
    StoreLinksSqlite { path: Vec<String> },
}

impl std::fmt::Display for PackagingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackagingError::SqliteLinkForced { line, why } => write!(
                f,
                "SqliteLinkForced: {line}: {why} (topology.package.sqlite-adapter)"
            ),
            PackagingError::StoreLinksSqlite { path } => write!(
                f,
                "StoreLinksSqlite: {} (topology.package.store-sqlite-free)",
                path.join(" -> ")
            ),
        }
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `path:line` of the first line of `manifest` that holds `needle` at its start (a
/// dependency's key) or quoted (a feature's entry); the manifest alone when none does.
fn line_of(manifest: &str, text: &str, needle: &str) -> String {
    let quoted = format!("\"{needle}\"");
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with(&format!("{needle} ")) || t.starts_with(&format!("{needle}=")) || {
                t.starts_with(&format!("{needle}.")) || l.contains(&quoted)
            }
        })
        .map(|i| format!("{manifest}:{}", i + 1))
        .unwrap_or_else(|| manifest.to_owned())
}

/// Every breach of the SQLite link rule among the workspace's members, in `metadata`
/// (`cargo metadata --format-version 1`); `read` reads a manifest by its path.
fn sqlite_link_rule(metadata: &Value, read: impl Fn(&str) -> String) -> Vec<PackagingError> {
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let mut out = Vec::new();
    for pkg in metadata["packages"].as_array().unwrap() {
        if !members.contains(&pkg["id"].as_str().unwrap()) {
            continue;
        }
        let name = pkg["name"].as_str().unwrap();
        let manifest = pkg["manifest_path"].as_str().unwrap();
        let text = read(manifest);
        let shown = manifest
            .rsplit_once("/crates/")
            .map(|(_, m)| format!("crates/{m}"))
            .unwrap_or_else(|| manifest.to_owned());
        let mut forced = |needle: &str, why: String| {
            out.push(PackagingError::SqliteLinkForced {
                line: line_of(&shown, &text, needle),
                why,
            })
        };
        for dep in pkg["dependencies"].as_array().unwrap() {
            if !dep["kind"].is_null() {
                continue; // dev- and build-dependencies link no artifact people install
            }
            let dname = dep["name"].as_str().unwrap();
            let features: Vec<&str> = dep["features"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            if BINDINGS.contains(&dname) {
                if name != ADAPTER {
                    forced(
                        dname,
                        format!("{name} declares {dname}; only {ADAPTER} may"),
                    );
                } else if let Some(f) = features.iter().find(|f| LINK_FEATURES.contains(f)) {
                    forced(
                        dname,
                        format!("{ADAPTER} enables {dname}'s link feature {f} itself; the binaries choose"),
                    );
                }
            }
            if dname == ADAPTER && features.contains(&"bundled") && !BINARIES.contains(&name) {
                forced(
                    dname,
                    format!("{name} turns on {ADAPTER}/bundled; only {BINARIES:?} may"),
                );
            }
        }
        for (feature, enables) in pkg["features"].as_object().unwrap() {
            for e in enables.as_array().unwrap() {
                let e = e.as_str().unwrap();
                let Some((dep, f)) = e.split_once('/') else {
                    continue;
                };
                let dep = dep.trim_end_matches('?');
                let link = (BINDINGS.contains(&dep) && LINK_FEATURES.contains(&f))
                    || (dep == ADAPTER && f == "bundled");
                let allowed = BINARIES.contains(&name) || (name == ADAPTER && feature != "default");
                if link && !allowed {
                    forced(
                        e,
                        format!("{name}'s feature {feature} enables {e}; only {BINARIES:?} may"),
                    );
                }
            }
        }
        if name == ADAPTER {
            if let Some(d) = pkg["features"]["default"].as_array() {
                if d.iter().any(|f| f.as_str() == Some("bundled")) {
                    forced(
                        "default",
                        format!("{ADAPTER}'s default features enable bundled"),
                    );
                }
            }
        }
    }
    out
}

/// The first path to `libsqlite3-sys` in `tree` (`cargo tree --prefix depth -f {p}`).
fn path_to_sqlite(tree: &str) -> Option<Vec<String>> {
    let mut stack: Vec<String> = Vec::new();
    for line in tree.lines() {
        let digits = line.chars().take_while(char::is_ascii_digit).count();
        let Ok(depth) = line[..digits].parse::<usize>() else {
            continue;
        };
        let crate_name = line[digits..].split_whitespace().next().unwrap_or("");
        stack.truncate(depth);
        stack.push(crate_name.to_owned());
        if crate_name == "libsqlite3-sys" {
            return Some(stack);
        }
    }
    None
}

fn store_sqlite_free(tree: &str) -> Result<(), PackagingError> {
    match path_to_sqlite(tree) {
        Some(path) => Err(PackagingError::StoreLinksSqlite { path }),
        None => Ok(()),
    }
}

#[test]
fn only_the_sqlite_backend_declares_the_binding_and_only_the_binaries_bundle_it() {
    // rule: topology.package.sqlite-adapter
    let metadata: Value =
        serde_json::from_str(&cargo(&["metadata", "--format-version", "1", "--no-deps"])).unwrap();
    let breaches = sqlite_link_rule(&metadata, |p| std::fs::read_to_string(p).unwrap());
    assert!(
        breaches.is_empty(),
        "{}",
        breaches
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn a_crate_declaring_or_bundling_the_binding_is_named_by_its_manifest_line() {
    // rule: topology.package.sqlite-adapter
    let lake_toml =
        "[package]\nname = \"dogana-lake\"\n\n[dependencies]\nrusqlite = { version = \"0.37\" }\n";
    let sqlite_toml = "[package]\nname = \"dogana-sqlite\"\n\n[dependencies]\nrusqlite = { version = \"0.37\", features = [\"bundled\"] }\n";
    let serve_toml =
        "[package]\nname = \"dogana-serve\"\n\n[features]\nfast = [\"dogana-sqlite/bundled\"]\n";
    let pkg = |name: &str, deps: Value, features: Value| {
        serde_json::json!({
            "id": name, "name": name,
            "manifest_path": format!("/w/crates/{name}/Cargo.toml"),
            "dependencies": deps, "features": features,
        })
    };
    let metadata = serde_json::json!({
        "workspace_members": ["dogana-lake", "dogana-sqlite", "dogana-serve", "dogana-cli"],
        "packages": [
            pkg("dogana-lake", serde_json::json!([{"name": "rusqlite", "kind": null, "features": []}]), serde_json::json!({})),
            pkg("dogana-sqlite", serde_json::json!([{"name": "rusqlite", "kind": null, "features": ["bundled"]}]), serde_json::json!({})),
            pkg("dogana-serve", serde_json::json!([]), serde_json::json!({"fast": ["dogana-sqlite/bundled"]})),
            pkg("dogana-cli", serde_json::json!([{"name": "dogana-sqlite", "kind": null, "features": ["bundled"]}]), serde_json::json!({})),
        ],
    });
    let breaches = sqlite_link_rule(&metadata, |p| {
        match p {
            "/w/crates/dogana-lake/Cargo.toml" => lake_toml,
            "/w/crates/dogana-sqlite/Cargo.toml" => sqlite_toml,
            "/w/crates/dogana-serve/Cargo.toml" => serve_toml,
            _ => "",
        }
        .to_owned()
    });
    let lines: Vec<String> = breaches
        .iter()
        .map(|b| match b {
            PackagingError::SqliteLinkForced { line, .. } => line.clone(),
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(
        lines,
        [
            "crates/dogana-lake/Cargo.toml:5",
            "crates/dogana-sqlite/Cargo.toml:5",
            "crates/dogana-serve/Cargo.toml:5",
        ],
        "the binary's bundled is allowed; the three others are named"
    );
}

#[test]
fn the_lake_store_reaches_no_sqlite_library_through_normal_dependencies() {
    // rule: topology.package.store-sqlite-free
    let tree = cargo(&[
        "tree",
        "-p",
        "dogana-lake",
        "-e",
        "normal",
        "--target",
        "all",
        "--prefix",
        "depth",
        "-f",
        "{p}",
    ]);
    assert!(tree.starts_with("0dogana-lake "), "{tree}");
    if let Err(e) = store_sqlite_free(&tree) {
        panic!("{e}");
    }
}

#[test]
fn a_path_to_the_sqlite_library_is_named_from_the_store_down() {
    // rule: topology.package.store-sqlite-free
    let tree = "0dogana-lake v0.1.0\n1arrow v55.0.0\n2half v2.6.0\n1dogana-catalog v0.1.0\n2rusqlite v0.37.0\n3libsqlite3-sys v0.35.0\n";
    assert_eq!(
        store_sqlite_free(tree),
        Err(PackagingError::StoreLinksSqlite {
            path: vec![
                "dogana-lake".into(),
                "dogana-catalog".into(),
                "rusqlite".into(),
                "libsqlite3-sys".into()
            ]
        })
    );
    assert_eq!(
        store_sqlite_free("0dogana-lake v0.1.0\n1arrow v55.0.0\n"),
        Ok(())
    );
}

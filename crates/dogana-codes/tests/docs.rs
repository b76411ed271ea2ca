//! `docs/errors.md` is the generated table, and every code listed is used somewhere in the
//! sources outside this crate (a code in the table that nothing reports is a lie).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn docs_errors_md_is_the_generated_table() {
    let path = root().join("docs/errors.md");
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == dogana_codes::markdown(),
        "docs/errors.md is not the table crates/dogana-codes generates: run \
         `cargo run -q -p dogana-codes --example errors_md > docs/errors.md`"
    );
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_code_listed_is_used() {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        if krate.file_name() == "dogana-codes" {
            continue;
        }
        sources(&krate.path().join("src"), &mut files);
    }
    let text: String = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let unused: Vec<&str> = dogana_codes::ALL
        .iter()
        .filter(|c| !text.contains(&format!("codes::{}", c.name)))
        .map(|c| c.id)
        .collect();
    assert!(
        unused.is_empty(),
        "listed in dogana-codes but reported nowhere (no `codes::NAME` in any crate's src): {unused:?}"
    );
}

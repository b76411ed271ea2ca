//! The lake never touches what it does not own (issue 37): a directory that holds files but
//! no store, or a file, named as a lake store is refused for writing and for reading, and is
//! left byte for byte as it was; a store's own probe leaves nothing behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dogana_lake::{Lake, LakeOptions};
use dogana_receiver::{Open, StoreError};

fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
                out.insert(p, Vec::new());
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_directory_that_is_not_a_store_is_refused_and_left_as_it_was() {
    // rule: store.init.identity-invalid
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/x.csv"), "a,b\n").unwrap();
    let before = tree(dir.path());
    for write in [true, false] {
        let e = Lake::open(dir.path(), &LakeOptions::default(), write).unwrap_err();
        assert!(matches!(e, StoreError::NotAStore(_)), "{e}");
        assert!(e.to_string().contains("store-id"), "{e}");
        assert_eq!(
            tree(dir.path()),
            before,
            "write {write}: nothing added or changed"
        );
    }
}

#[test]
fn a_file_named_as_a_store_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    for write in [true, false] {
        let url = format!("file://{}", file.display());
        assert!(Lake::open(Path::new(&url), &LakeOptions::default(), write).is_err());
        assert_eq!(std::fs::read(&file).unwrap(), b"mine");
        assert_eq!(
            tree(dir.path()).len(),
            1,
            "write {write}: nothing beside it"
        );
    }
}

#[test]
fn a_new_store_keeps_nothing_of_its_probe() {
    // rule: store.probe.inconclusive — the probe demonstrates on a key of its own, then
    // removes it, its versions and its lock file
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("lake");
    Lake::open(&root, &LakeOptions::default(), true).unwrap();
    Lake::open(&root, &LakeOptions::default(), true).unwrap();
    let names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["store-id".to_owned()], "{names:?}");
}

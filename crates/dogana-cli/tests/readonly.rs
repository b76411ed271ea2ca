//! Readers never need write access (issue 37): a store copied where the user can only read
//! (an auditor's copy, a read-only mount, a backup) answers every reader command, on every
//! backend with files, and is left byte for byte as it was, no file added.
//!
//! Run as root (as CI is), a read-only mode bit stops nobody, so the readers run as the
//! unprivileged user `nobody` through `setpriv`; the test fails, saying so, when it is missing.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{text, Work};

const SUNDAY: &str = "\
id,order_date,updated_at,amount,deleted
1,2026-10-20,2026-10-20T10:00:00Z,10.00,false
2,2026-10-21,2026-10-21T10:00:00Z,20.00,false
";

/// Every file and directory under `dir`: its mode, size and bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let bytes = if m.is_dir() {
                stack.push(p.clone());
                Vec::new()
            } else {
                std::fs::read(&p).unwrap()
            };
            out.insert(
                p.strip_prefix(dir).unwrap().to_path_buf(),
                (m.permissions().mode(), bytes),
            );
        }
    }
    out
}

fn chmod_tree(dir: &Path, file: u32, directory: u32) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(file)).unwrap();
            }
        }
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(directory)).unwrap();
    }
}

fn is_root() -> bool {
    // the effective uid, as the kernel reports it for this process
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        .unwrap_or(false)
}

/// The binary, copied where an unprivileged user can run it (with DuckDB's library beside
/// it), and a command running it as that user when this process is root.
struct Reader {
    bin: PathBuf,
    libs: PathBuf,
    root: bool,
}

impl Reader {
    fn new(work: &Work) -> Reader {
        let libs = work.path("bin");
        std::fs::create_dir(&libs).unwrap();
        let bin = libs.join("dogana");
        std::fs::copy(env!("CARGO_BIN_EXE_dogana"), &bin).unwrap();
        if let Ok(dir) = std::env::var("DUCKDB_LIB_DIR") {
            let lib = Path::new(&dir).join("libduckdb.so");
            if lib.is_file() {
                std::fs::copy(lib, libs.join("libduckdb.so")).unwrap();
            }
        }
        chmod_tree(&libs, 0o755, 0o755);
        let root = is_root();
        if root {
            let found = Command::new("setpriv").arg("--version").output();
            assert!(
                found.is_ok_and(|o| o.status.success()),
                "this test runs readers as user nobody through setpriv (util-linux), which is missing: install util-linux"
            );
        }
        Reader { bin, libs, root }
    }

    fn run(&self, dir: &Path, args: &[&str]) -> std::process::Output {
        let mut cmd = if self.root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&self.bin);
            c
        } else {
            Command::new(&self.bin)
        };
        cmd.current_dir(dir)
            .args(args)
            .env("LD_LIBRARY_PATH", &self.libs)
            .env("HOME", dir);
        cmd.output().unwrap()
    }
}

/// Delivers Sunday into `store`, copies the work directory's stores into `ro/`, makes it
/// read-only, and runs every reader command on the copy's `store_in_ro` as a user who can
/// only read it: each succeeds, and the copy is unchanged.
fn readers_on_a_read_only_copy(stores: &[(&str, &str)]) {
    // rule: RECV-11, RECV-12
    let work = Work::new();
    std::fs::set_permissions(work.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    work.write("sun.csv", SUNDAY);
    work.dogana([
        "manifest",
        "sun.csv",
        "--contract",
        "orders.toml",
        "--shape",
        "full",
        "--produced-at",
        "2026-10-25T06:00:00Z",
        "--rows",
        "2",
    ])
    .assert()
    .success();
    let ro = work.path("ro");
    std::fs::create_dir(&ro).unwrap();
    for (spec, _) in stores {
        work.dogana([
            "deliver",
            "sun.csv",
            "--store",
            spec,
            "--contract",
            "orders.toml",
            "--at",
            "2026-10-25T07:00:00Z",
        ])
        .assert()
        .success();
    }
    // the copy: every file the stores left, the writer gone
    let out = Command::new("cp")
        .args(["-R", "--preserve=timestamps"])
        .args(
            std::fs::read_dir(work.dir())
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    let n = p.file_name().unwrap().to_string_lossy();
                    n.starts_with("s.") || n == "lake"
                }),
        )
        .arg(&ro)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    chmod_tree(&ro, 0o444, 0o555);
    let pages = work.path("pages");
    std::fs::create_dir(&pages).unwrap();
    std::fs::set_permissions(&pages, std::fs::Permissions::from_mode(0o777)).unwrap();
    let reader = Reader::new(&work);
    let before = tree(&ro);
    for (_, spec) in stores {
        let page = pages.join(format!("{}.html", spec.replace(['/', ':'], "_")));
        let page = page.to_str().unwrap();
        for args in [
            &[
                "claims",
                "--store",
                spec,
                "orders",
                "--at",
                "2026-10-26T00:00:00Z",
            ][..],
            &["receipts", "--store", spec, "orders"][..],
            &["verify", "--store", spec][..],
            &["ledger", "--store", spec, "orders"][..],
            &[
                "plan",
                "--store",
                spec,
                "orders",
                "--at",
                "2026-10-26T00:00:00Z",
            ][..],
            &[
                "next",
                "--store",
                spec,
                "orders",
                "--shape",
                "changes",
                "--until",
                "2026-10-26T00:00:00Z",
            ][..],
            &[
                "show",
                "--store",
                spec,
                "orders",
                "--at",
                "2026-10-26T00:00:00Z",
                "-o",
                page,
            ][..],
        ] {
            let out = reader.run(&ro, args);
            assert!(
                out.status.success(),
                "dogana {}: {}",
                args.join(" "),
                text(&out.stderr)
            );
        }
    }
    let after = tree(&ro);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "no file added or removed"
    );
    assert!(before == after, "every file byte for byte as it was");
    chmod_tree(&ro, 0o644, 0o755); // so the work directory can be removed
}

#[test]
fn sqlite_readers_work_on_a_read_only_copy_and_change_nothing() {
    readers_on_a_read_only_copy(&[("s.db", "s.db")]);
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_readers_work_on_a_read_only_copy_and_change_nothing() {
    readers_on_a_read_only_copy(&[("s.duckdb", "s.duckdb")]);
}

#[cfg(feature = "lake")]
#[test]
fn lake_readers_work_on_a_read_only_copy_and_change_nothing() {
    readers_on_a_read_only_copy(&[("lake:lake", "lake:lake")]);
}

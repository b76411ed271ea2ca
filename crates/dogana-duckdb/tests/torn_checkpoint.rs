//! DuckDB's own torn write, built without a kill: the file a process killed inside a
//! checkpoint's rewrite of the metadata block leaves (`lib.rs`, "A checkpoint killed in its
//! metadata write"), and what dogana says when asked to open it.
//!
//! DuckDB's file: three 4 KiB headers, then blocks of 256 KiB, each led by its checksum. A
//! checkpoint writes the new data blocks, then the metadata block 0 in place, then the other
//! header. Killed during the block 0 write, the file has the old header, the new data
//! blocks, and block 0 new up to some page and old after it. When DuckDB stops refusing
//! that file, this test fails and the crash harness's allowance for DuckDB can go.

use std::path::Path;

use dogana_duckdb::{duckdb, DuckDb, DuckDbOptions, StoreError};
use dogana_receiver::conformance::Harness;
use dogana_receiver::Open;

const HEADERS: usize = 3 * 4096;
const BLOCK: usize = 256 * 1024;
const PAGE: usize = 4096;

/// The file after the first checkpoint, the WAL of the second transaction, the file after
/// the second checkpoint.
fn two_checkpoints(dir: &Path) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let path = dir.join("two.duckdb");
    let conn = duckdb::Connection::open(&path).expect("opens");
    conn.execute_batch(
        "CREATE TABLE t (id BIGINT, a VARCHAR);
         INSERT INTO t SELECT range, 'x' FROM range(600);
         CHECKPOINT;",
    )
    .expect("the first checkpoint");
    let first = std::fs::read(&path).expect("reads");
    conn.execute_batch("INSERT INTO t SELECT range, 'y' FROM range(600)")
        .expect("inserts");
    let wal = std::fs::read(dir.join("two.duckdb.wal")).expect("the WAL of the second");
    conn.execute_batch("CHECKPOINT")
        .expect("the second checkpoint");
    let second = std::fs::read(&path).expect("reads");
    drop(conn);
    (first, wal, second)
}

/// The file killed with `pages` pages of the second checkpoint's block 0 written.
fn killed_in_block_zero(dir: &Path, pages: usize) -> std::path::PathBuf {
    let (first, wal, second) = two_checkpoints(dir);
    assert!(second.len() >= HEADERS + BLOCK, "{} bytes", second.len());
    let mut torn = second.clone();
    torn[..HEADERS].copy_from_slice(&first[..HEADERS]);
    let cut = HEADERS + pages * PAGE;
    torn[cut..HEADERS + BLOCK].copy_from_slice(&first[cut..HEADERS + BLOCK]);
    let path = dir.join(format!("torn-{pages}.duckdb"));
    std::fs::write(&path, torn).expect("writes");
    std::fs::write(dir.join(format!("torn-{pages}.duckdb.wal")), wal).expect("writes");
    path
}

fn folder(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dogana-duckdb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

#[test]
fn a_store_whose_metadata_block_write_was_cut_is_refused_saying_why() {
    // no protocol rule: the backend names a file its database cannot read, and why
    let dir = folder("torn");
    let path = killed_in_block_zero(&dir, 1);
    let Err(refused) = DuckDb::open(&path, &DuckDbOptions::default(), true) else {
        panic!("DuckDB opened a block failing its checksum");
    };
    let StoreError::Corrupt(message) = &refused else {
        panic!("not Corrupt: {refused:?}");
    };
    assert!(
        message.contains("rewrites its metadata block in place"),
        "{message}"
    );
    assert!(message.contains("restore it from a copy"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("in block at location 12288"), "{message}");
    assert!(DuckDb::torn_by_its_database(&refused.to_string()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_same_write_finished_opens() {
    // the old header with block 0 written whole: the tear, not the header, is refused
    let dir = folder("whole");
    let path = killed_in_block_zero(&dir, BLOCK / PAGE);
    let conn = duckdb::Connection::open(&path).expect("opens");
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .expect("counts");
    assert_eq!(rows, 1200);
    drop(conn);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn other_refusals_are_not_taken_for_a_torn_write() {
    let dir = folder("other");
    let path = dir.join("not.duckdb");
    std::fs::write(&path, b"not a database at all").expect("writes");
    let Err(refused) = DuckDb::open(&path, &DuckDbOptions::default(), true) else {
        panic!("a file of text opened as a store");
    };
    assert!(
        !DuckDb::torn_by_its_database(&refused.to_string()),
        "{refused}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

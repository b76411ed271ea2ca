//! The engine's crash harness on DuckDB: 200 SIGKILLs of a child delivering every kind of
//! delivery; after each, the store (database file and its WAL) holds the state after some
//! prefix of the sequence and verify passes (`dogana_receiver::crash`).
//!
//! rule: RECV-09, TRUST-07, RECV-12, RECOVERY-01, RECV-02

use dogana_duckdb::DuckDb;

const CHILD: &str = "DOGANA_DUCKDB_CRASH_CHILD";

/// The child: does nothing unless the parent started it.
#[test]
fn crash_child() {
    dogana_receiver::crash::child::<DuckDb>(CHILD);
}

/// After each kill the rest of the sequence is delivered on the recovered store: the region
/// rows are found by their one-column key's index (`region_key`), and a report of DuckDB
/// indexes left stale by a writer killed with a pending WAL (duckdb/duckdb#23848) would show
/// here as an update that finds no row or an insert refused as a duplicate.
#[test]
fn sigkill_at_random_points_leaves_old_or_new_state() {
    // rule: RECV-09
    dogana_receiver::crash::parent_then_on::<DuckDb>(CHILD, "crash_child", 200);
}

const GROUP_CHILD: &str = "DOGANA_DUCKDB_GROUP_CRASH_CHILD";

/// The group child: does nothing unless the group parent started it.
#[test]
fn group_crash_child() {
    dogana_receiver::crash::group_child::<DuckDb>(GROUP_CHILD);
}

#[test]
fn a_group_commit_killed_leaves_every_table_old_or_every_table_new() {
    // rule: GROUP-16
    dogana_receiver::crash::group_parent::<DuckDb>(GROUP_CHILD, "group_crash_child", 100);
}

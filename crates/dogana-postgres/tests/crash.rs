//! The engine's crash harness on Postgres: 100 SIGKILLs of a child delivering every kind of
//! delivery (mid-COPY, mid-commit, between); after each, the schema holds the state after
//! some prefix of the sequence and verify passes (`dogana_receiver::crash`); then 100 of a
//! child delivering two tables as one group, each commit all or nothing. The snapshots
//! are copies of the schema on the server (`Harness::copy_store`).
//!
//! rule: RECV-09, TRUST-07, RECV-12, RECOVERY-01, RECV-02

use dogana_postgres::Postgres;

const CHILD: &str = "DOGANA_POSTGRES_CRASH_CHILD";

/// The child: does nothing unless the parent started it.
#[test]
fn crash_child() {
    dogana_receiver::crash::child::<Postgres>(CHILD);
}

#[test]
fn sigkill_at_random_points_leaves_old_or_new_state() {
    dogana_receiver::crash::parent::<Postgres>(CHILD, "crash_child", 100);
}

const GROUP_CHILD: &str = "DOGANA_POSTGRES_GROUP_CRASH_CHILD";

/// The group child: does nothing unless the group parent started it.
#[test]
fn group_crash_child() {
    dogana_receiver::crash::group_child::<Postgres>(GROUP_CHILD);
}

#[test]
fn a_group_commit_killed_leaves_every_table_old_or_every_table_new() {
    // rule: GROUP-16
    dogana_receiver::crash::group_parent::<Postgres>(GROUP_CHILD, "group_crash_child", 100);
}

//! The engine's crash harness on the lake (`file://`): 200 SIGKILLs of a child delivering
//! every kind of delivery; after each, the store holds the state after some prefix of the
//! sequence and verify passes (`dogana_receiver::crash`). Leases last 300 ms here, so a
//! killed writer's lease delays the next child by at most that.
//!
//! rule: RECV-09, TRUST-07, RECV-12, RECOVERY-01, store.fold.pointer-commit

use dogana_lake::ShortLeaseLake;

const CHILD: &str = "DOGANA_LAKE_CRASH_CHILD";

/// The child: does nothing unless the parent started it.
#[test]
fn crash_child() {
    dogana_receiver::crash::child::<ShortLeaseLake>(CHILD);
}

#[test]
fn sigkill_at_random_points_leaves_old_or_new_state() {
    dogana_receiver::crash::parent::<ShortLeaseLake>(CHILD, "crash_child", 200);
}

const GROUP_CHILD: &str = "DOGANA_LAKE_GROUP_CRASH_CHILD";

/// The group child: does nothing unless the parent started it.
#[test]
fn group_crash_child() {
    dogana_receiver::crash::group_child::<ShortLeaseLake>(GROUP_CHILD);
}

/// 100 SIGKILLs of a child delivering invoices and lines together: both tables' pointers
/// name their new snapshots as pending on one decision object, so a kill anywhere leaves
/// both old or both new (the next acquisition aborts an undecided commit).
///
/// rule: RECV-09, TRUST-07, store.fold.pointer-commit, store.lease.stale-fence
#[test]
fn group_sigkill_leaves_both_tables_old_or_new() {
    dogana_receiver::crash::group_parent::<ShortLeaseLake>(GROUP_CHILD, "group_crash_child", 100);
}

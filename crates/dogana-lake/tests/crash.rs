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

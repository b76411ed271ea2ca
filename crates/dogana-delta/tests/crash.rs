//! The engine's crash harness on Delta tables (`file://`): 200 SIGKILLs of a child making
//! every kind of delivery; after each, the store holds the state after some prefix of the
//! sequence (a Delta reader sees the old version or the new one, never a commit without its
//! ledger and receipt, which are written before it), verify passes, and the rest of the
//! sequence is delivered on what the kill left (`dogana_receiver::crash`).
//!
//! rule: RECV-09, TRUST-07, RECV-12, RECOVERY-01

use dogana_delta::Delta;

const CHILD: &str = "DOGANA_DELTA_CRASH_CHILD";

/// The child: does nothing unless the parent started it.
#[test]
fn crash_child() {
    dogana_receiver::crash::child::<Delta>(CHILD);
}

#[test]
fn sigkill_at_random_points_leaves_old_or_new_state() {
    dogana_receiver::crash::parent_then_on::<Delta>(CHILD, "crash_child", 200);
}

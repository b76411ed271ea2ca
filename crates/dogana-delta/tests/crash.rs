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

/// The crash harness on an S3 server (moto), with the `servers` feature
/// (scripts/test-lake.sh): `DOGANA_LAKE_SERVER_KILLS` kills, 30 by default (each request is
/// a round trip to a server that answers one at a time).
#[cfg(feature = "servers")]
mod s3 {
    use dogana_delta::S3Delta;

    const CHILD: &str = "DOGANA_DELTA_S3_CRASH_CHILD";

    fn kills() -> usize {
        match std::env::var("DOGANA_LAKE_SERVER_KILLS") {
            Ok(n) => n
                .parse()
                .unwrap_or_else(|_| panic!("DOGANA_LAKE_SERVER_KILLS={n:?} is not a count")),
            Err(_) => 30,
        }
    }

    /// The child: does nothing unless the parent started it.
    #[test]
    fn s3_crash_child() {
        dogana_receiver::crash::child::<S3Delta>(CHILD);
    }

    #[test]
    fn s3_sigkill_at_random_points_leaves_old_or_new_state() {
        dogana_receiver::crash::parent::<S3Delta>(CHILD, "s3::s3_crash_child", kills());
    }
}

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

/// SIGKILLs on a server (with the `servers` feature, scripts/test-lake.sh): fewer than on
/// `file://`, each request being a round trip; `DOGANA_LAKE_SERVER_KILLS` sets the count.
#[cfg(feature = "servers")]
fn server_kills() -> usize {
    match std::env::var("DOGANA_LAKE_SERVER_KILLS") {
        Ok(n) => n
            .parse()
            .unwrap_or_else(|_| panic!("DOGANA_LAKE_SERVER_KILLS={n:?} is not a count")),
        Err(_) => 30,
    }
}

/// The crash harness, one table and a group of two, on a store on an S3 server (moto) and on
/// Azurite: snapshots are object copies (`Harness::copy_store` lists and copies every object under the root).
///
/// rule: RECV-09, TRUST-07, RECV-12, RECOVERY-01, store.fold.pointer-commit
#[cfg(feature = "servers")]
mod servers {
    use dogana_lake::{ShortLeaseAzureLake, ShortLeaseS3Lake};

    const S3_CHILD: &str = "DOGANA_LAKE_S3_CRASH_CHILD";
    const AZ_CHILD: &str = "DOGANA_LAKE_AZ_CRASH_CHILD";
    const S3_GROUP_CHILD: &str = "DOGANA_LAKE_S3_GROUP_CRASH_CHILD";
    const AZ_GROUP_CHILD: &str = "DOGANA_LAKE_AZ_GROUP_CRASH_CHILD";

    /// The S3 group child: does nothing unless the parent started it.
    #[test]
    fn s3_group_crash_child() {
        dogana_receiver::crash::group_child::<ShortLeaseS3Lake>(S3_GROUP_CHILD);
    }

    /// Invoices and lines delivered together on S3, killed at random points: both tables
    /// old or both new (the decision object is the one write that publishes both).
    ///
    /// rule: RECV-09, TRUST-07, store.fold.pointer-commit, store.lease.stale-fence
    #[test]
    fn s3_group_sigkill_leaves_both_tables_old_or_new() {
        dogana_receiver::crash::group_parent::<ShortLeaseS3Lake>(
            S3_GROUP_CHILD,
            "servers::s3_group_crash_child",
            super::server_kills(),
        );
    }

    /// The Azure group child: does nothing unless the parent started it.
    #[test]
    fn azure_group_crash_child() {
        dogana_receiver::crash::group_child::<ShortLeaseAzureLake>(AZ_GROUP_CHILD);
    }

    /// The group scenario on Azurite.
    ///
    /// rule: RECV-09, TRUST-07, store.fold.pointer-commit, store.lease.stale-fence
    #[test]
    fn azure_group_sigkill_leaves_both_tables_old_or_new() {
        dogana_receiver::crash::group_parent::<ShortLeaseAzureLake>(
            AZ_GROUP_CHILD,
            "servers::azure_group_crash_child",
            super::server_kills(),
        );
    }

    /// The S3 child: does nothing unless the parent started it.
    #[test]
    fn s3_crash_child() {
        dogana_receiver::crash::child::<ShortLeaseS3Lake>(S3_CHILD);
    }

    #[test]
    fn s3_sigkill_at_random_points_leaves_old_or_new_state() {
        dogana_receiver::crash::parent::<ShortLeaseS3Lake>(
            S3_CHILD,
            "servers::s3_crash_child",
            super::server_kills(),
        );
    }

    /// The Azure child: does nothing unless the parent started it.
    #[test]
    fn azure_crash_child() {
        dogana_receiver::crash::child::<ShortLeaseAzureLake>(AZ_CHILD);
    }

    #[test]
    fn azure_sigkill_at_random_points_leaves_old_or_new_state() {
        dogana_receiver::crash::parent::<ShortLeaseAzureLake>(
            AZ_CHILD,
            "servers::azure_crash_child",
            super::server_kills(),
        );
    }
}

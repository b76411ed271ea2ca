//! The engine's conformance suite (`dogana_receiver::conformance`) on Delta tables, in a
//! folder and in memory. Groups are refused by a Delta store (tests/delta.rs).

mod file {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_delta::Delta>; ledgers_whole_no_groups);
}

mod memory {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_delta::MemoryDelta>; ledgers_whole_no_groups);
}

/// On an S3 server (moto), with the `servers` feature (scripts/test-lake.sh).
#[cfg(feature = "servers")]
mod s3 {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_delta::S3Delta>; ledgers_whole_no_groups);
}

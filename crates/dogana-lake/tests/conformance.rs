//! The engine's conformance suite (`dogana_receiver::conformance`) on the lake store, on
//! `file://` and on `memory://`, and with the `servers` feature (scripts/test-lake.sh) on S3
//! (moto) and Azure (Azurite). Each case checks `verify` after every step (RECV-12,
//! RECOVERY-01).

mod file {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_lake::Lake>; ledger_pages);
}

mod memory {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_lake::MemoryLake>; ledger_pages);
}

#[cfg(feature = "servers")]
mod s3 {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_lake::S3Lake>; ledger_pages);
}

#[cfg(feature = "servers")]
mod azure {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_lake::AzureLake>; ledger_pages);
}

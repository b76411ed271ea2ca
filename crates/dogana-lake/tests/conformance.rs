//! The engine's conformance suite (`dogana_receiver::conformance`) on the lake store, on
//! `file://` and on `memory://`. Each case checks `verify` after every step (RECV-12,
//! RECOVERY-01).

mod file {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_lake::Lake>);
}

mod memory {
    dogana_receiver::conformance_suite!(dogana_receiver::Store<dogana_lake::MemoryLake>);
}

//! The engine's conformance suite (`dogana_receiver::conformance`) run against the SQLite
//! store. Each case checks `verify` after every step (RECV-12, RECOVERY-01).

dogana_receiver::conformance_suite!(dogana_sqlite::Store);

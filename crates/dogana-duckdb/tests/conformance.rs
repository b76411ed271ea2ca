//! The engine's conformance suite (`dogana_receiver::conformance`) run against the DuckDB
//! store: the same cases as every backend. Each checks `verify` after every step (RECV-12).

dogana_receiver::conformance_suite!(dogana_duckdb::Store; ledger_rows);

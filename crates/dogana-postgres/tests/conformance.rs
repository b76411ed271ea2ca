//! The engine's conformance suite (`dogana_receiver::conformance`) run against the Postgres
//! store: the same cases as every backend, each in its own schema of the server
//! `DOGANA_PG_URL` names (`bash scripts/test-postgres.sh`). Each checks `verify` after every
//! step (RECV-12).

dogana_receiver::conformance_suite!(dogana_postgres::Store; ledger_rows);

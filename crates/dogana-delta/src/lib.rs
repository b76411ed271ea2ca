//! # dogana-delta: a dogana receiver into Delta Lake tables
//!
//! Each table of a store is a Delta table in the store's folder, so that every Delta reader
//! (Spark, Databricks, Trino, Polars, DuckDB's `delta_scan`, the `deltalake` Python package)
//! reads exactly the rows dogana published:
//!
//! | store spec | where the tables live |
//! | --- | --- |
//! | `delta+file:///data/delta` | `/data/delta/<table>/` |
//! | `delta+memory://name` | this process's memory (tests) |
//! | `delta+s3://bucket/prefix`, `delta+gs://…`, `delta+az://…` | the bucket (credentials and endpoints from `AWS_*`, `GOOGLE_*`, `AZURE_*`) |
//!
//! A table's folder name is its name with every byte outside `[A-Za-z0-9_-]` written `!XX`
//! (as in the lake store).
//!
//! **One delivery is one Delta commit** (`backend.rs` has the commit protocol): its rows as
//! Add and Remove actions, its receipt in the commit's `commitInfo`, and, written before the
//! commit under the table's `_dogana/` folder, the ledger and the receipts it names
//! ([`layout`]). A commit whose version another writer took first is never rebased: the
//! engine decides the delivery again (RECV-10). Its decisions are in `docs/delta.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
mod harness;
pub mod layout;
mod stats;

pub use backend::{root_url, Delta};
pub use harness::{MemoryDelta, S3Delta};

//! # dogana-lake: the lake store
//!
//! A dogana receiver whose store is a directory of objects on any object store
//! (`object_store`): `file:///dir`, `memory://name`, `s3://bucket/prefix`,
//! `gs://bucket/prefix`, `az://container/prefix`, credentials and endpoints from each
//! cloud's usual environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`, through the builders'
//! `from_env`).
//!
//! The store's layout is in [`layout`] (a table's ledger in pages the snapshots share:
//! `pages.rs`); the one conditional write it rests on in [`objects`];
//! the engine's port in [`Lake`] (see `backend.rs` for how a publication is one conditional
//! write of a table's pointer); the SQL an outside DuckDB reads a table's current snapshot
//! with in [`sql`]. Its decisions are in `docs/store-decisions.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
mod error;
mod harness;
pub mod lattice;
pub mod layout;
mod nested;
pub mod objects;
mod pages;
pub mod parts;
mod renewal;
pub mod replica;
pub mod runs;
pub mod sql;
pub mod sync;

pub use backend::{
    plan_merges, tier, CollectReport, FoldReport, Lake, LakeOptions, Published, STORE_ID,
};
pub use error::LakeError;
pub use harness::{
    cloud_url, copy_objects, AzureLake, MemoryLake, S3Lake, ShortLeaseAzureLake, ShortLeaseLake,
    ShortLeaseS3Lake,
};
/// The rows of one Parquet part of a table, read as the table's columns (a column the part
/// lacks reads as NULL; an Int64 part of a column promoted to float reads as Float64).
pub use parts::decode as decode_part;

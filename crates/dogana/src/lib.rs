//! # dogana: what each delivery of a table proves
//!
//! Tables are loaded from other systems through exports: full dumps, windows, changes since a
//! point, with or without tombstones. dogana keeps, for each region of a table, two dates —
//! *complete as of* and *deletions as of* — and a gate that refuses any delivery that would
//! claim more than it proves.
//!
//! This crate is the protocol (wire format version 4) as pure values and functions: no I/O,
//! no clock (`now` is always a parameter), no rows. Receivers, readers and the command line are
//! built on it.
//!
//! The parts, in the order a delivery meets them:
//! - [`Contract`] and [`Shape`]: the table and the reads it accepts.
//! - [`Manifest`]: the sender's declaration of one read.
//! - [`Ledger`] and [`Region`]: what has been proven, region by region.
//! - [`Gate`], [`Check`], [`Receipt`], [`Transition`], [`ApplyPlan`]: the decision and its record.
//! - [`Claims`]: what a reader may trust at its time.
//! - [`Wire`]: the exact JSON of every kind, and identities.
//! - [`DoganaError`]: the error tree.
//!
//! ```
//! use dogana::{Check, Contract, Deletions, Duration, Gate, Ledger, LogicalType, Shape};
//! let orders = Contract::builder("orders", ["id"])
//!     .shape("full", Shape::full().cost(10.0))
//!     .shape("changes", Shape::changes(Deletions::Tombstone))
//!     .cursor_column("updated_at")
//!     .deleted_column("deleted")
//!     .column("id", LogicalType::Int)
//!     .column("updated_at", LogicalType::Datetime)
//!     .column("deleted", LogicalType::Bool)
//!     .build()?;
//! let sunday = "2026-10-25T00:00:00Z".parse()?;
//! let monday = "2026-10-26T00:00:00Z".parse()?;
//! let ledger = Ledger::new(orders.clone());
//! let full = orders.manifest("full", sunday).rows(1000).build()?;
//! let ledger = ledger.apply(&full)?;
//! let changes = orders.manifest("changes", monday).since(sunday).rows(12).tombstones(1).build()?;
//! let receipt = Gate::evaluate(&ledger, &changes, &[], monday, None, &[]);
//! assert!(receipt.accepted());
//! let ledger = ledger.follow(&receipt)?;
//! let claims = ledger.claims(monday, Duration::MAX, None)?;
//! assert_eq!(claims.exact_as_of(), Some(monday));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod claims;
mod contract;
mod error;
mod gate;
mod group;
mod ledger;
mod manifest;
mod plan;
mod planning;
mod shape;
mod time;
mod value;
pub mod wire;

pub use claims::{Claims, RegionClaim, State};
pub use contract::{column_hash, is_sha256_hex, Contract, ContractBuilder, NAME_MAX};
/// Shows a value someone else wrote in a message, escaped and cut (re-exported from
/// `dogana_json`, the crate every other one depends on).
pub use dogana_json::{needs_escape, quoted, quoted_bytes, shown, Quoted, SHOWN};
pub use error::{
    DoganaError, InconsistentPublication, InvalidContract, PlanningError, Problem,
    RejectedDelivery, SerializationError, PROBLEM_TEXT_MAX,
};
pub use gate::{Check, Gate, Outcome, Receipt, NO_PUBLICATION};
pub use group::{plan_together, Group, TOGETHER};
pub use ledger::{chain, Dates, Ledger, LedgerRows, Region};
pub use manifest::{Manifest, ManifestBuilder, Position, Since};
pub use plan::{Action, ActionKind, ApplyPlan, Transition};
pub use planning::{next_extraction, plan_delivery, Extraction, Requirement};
pub use shape::{Checkpoint, Coverage, Deletions, Shape};
pub use time::{Date, Duration, TimeError, Timestamp};
pub use value::{LogicalType, Value, Window};
pub use wire::{Form, FromWire, Wire};

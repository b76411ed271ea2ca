//! # dogana for Python: the protocol's own API, backed by the Rust core
//!
//! The native module `dogana_rs._native`, built by maturin from `python/` (see
//! `python/pyproject.toml`). It exposes the protocol's Python API as the protocol documents
//! spell it — `Contract`, `Shape`, `Manifest`, `Ledger`, `Region`, `Gate`, `Check`,
//! `Receipt`, `Transition`, `ApplyPlan`, `Action`, `Claims`, `RegionClaim`, `Requirement`,
//! `Extraction`, `plan_delivery`, `next_extraction`, `Group`, `plan_together` — as thin
//! wrappers of the `dogana` crate's values, and the receiver (`Store`, on `dogana-sqlite`) and
//! row checks (`check_rows`, on `dogana-rows`).
//!
//! Values cross the boundary as Python's own: aware `datetime` (a naive one is refused),
//! `date`, `timedelta` (`timedelta.max` is the unlimited limit), `int`, `str`, tuples. The
//! exceptions are the Python classes of `dogana_rs.errors` (`python/dogana_rs/errors.py`),
//! raised from `errors.rs`. No `unsafe` is written here; pyo3's macros generate the FFI.
//!
//! The `extension-module` feature is for maturin only: the workspace's own builds leave it
//! off so `cargo test --workspace` links.
#![deny(unsafe_code)]

mod convert;
mod errors;
mod kinds;
mod receiver;
mod sync;

use pyo3::prelude::*;

/// The native part of `dogana_rs`; import `dogana_rs`, which re-exports it.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<kinds::PyShape>()?;
    m.add_class::<kinds::PyContract>()?;
    m.add_class::<kinds::PyManifest>()?;
    m.add_class::<kinds::PyRegion>()?;
    m.add_class::<kinds::PyLedger>()?;
    m.add_class::<kinds::PyCheck>()?;
    m.add_class::<kinds::PyAction>()?;
    m.add_class::<kinds::PyApplyPlan>()?;
    m.add_class::<kinds::PyTransition>()?;
    m.add_class::<kinds::PyReceipt>()?;
    m.add_class::<kinds::PyRegionClaim>()?;
    m.add_class::<kinds::PyClaims>()?;
    m.add_class::<kinds::PyRequirement>()?;
    m.add_class::<kinds::PyExtraction>()?;
    m.add_class::<kinds::PyGate>()?;
    m.add_class::<kinds::PyGroup>()?;
    m.add_function(wrap_pyfunction!(kinds::plan_delivery, m)?)?;
    m.add_function(wrap_pyfunction!(kinds::next_extraction, m)?)?;
    m.add_function(wrap_pyfunction!(kinds::plan_together, m)?)?;
    m.add_function(wrap_pyfunction!(kinds::column_hash, m)?)?;
    m.add_class::<receiver::PyStore>()?;
    m.add_class::<receiver::PyDelivery>()?;
    m.add_class::<receiver::PyRowReport>()?;
    m.add_class::<receiver::PyVerifyReport>()?;
    m.add_class::<receiver::PySnapshot>()?;
    m.add_function(wrap_pyfunction!(receiver::check_rows, m)?)?;
    m.add_function(wrap_pyfunction!(sync::push, m)?)?;
    m.add_function(wrap_pyfunction!(sync::pull, m)?)?;
    m.add("WIRE_VERSION", dogana::wire::VERSION)?;
    m.add("NO_PUBLICATION", dogana::NO_PUBLICATION)?;
    m.add("TOGETHER", dogana::TOGETHER)?;
    Ok(())
}

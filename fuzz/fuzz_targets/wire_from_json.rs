//! Fuzzes `FromWire::from_slice` of every wire kind: no input panics, and every accepted
//! document writes back to a document that reads to the same value with the same identity.
//!
//! Run with `cargo +nightly fuzz run wire_from_json` from the repository root.

#![no_main]

use dogana::{
    Action, ApplyPlan, Check, Claims, Contract, Extraction, FromWire, Ledger, Manifest, Receipt,
    Region, RegionClaim, Requirement, Shape, Transition, Wire,
};
use libfuzzer_sys::fuzz_target;

fn round_trip<T: FromWire + Wire + PartialEq + std::fmt::Debug>(data: &[u8]) {
    let Ok(value) = T::from_slice(data) else {
        return;
    };
    let text = value.to_json();
    let back = T::from_json(&text).unwrap_or_else(|e| panic!("{} does not read back: {e}: {text}", T::KIND));
    assert_eq!(back, value, "{} round trip", T::KIND);
    assert_eq!(back.to_json(), text, "{} writes the same bytes", T::KIND);
    assert_eq!(back.identity(), value.identity(), "{} identity is stable", T::KIND);
}

fuzz_target!(|data: &[u8]| {
    round_trip::<Contract>(data);
    round_trip::<Shape>(data);
    round_trip::<Manifest>(data);
    round_trip::<Ledger>(data);
    round_trip::<Region>(data);
    round_trip::<Receipt>(data);
    round_trip::<Check>(data);
    round_trip::<Transition>(data);
    round_trip::<ApplyPlan>(data);
    round_trip::<Action>(data);
    round_trip::<Claims>(data);
    round_trip::<RegionClaim>(data);
    round_trip::<Requirement>(data);
    round_trip::<Extraction>(data);
});

//! Fuzzes the TOML contract description `dogana contract` reads: no input panics, a refusal
//! is one bounded line with a stable code, and every contract it accepts is a valid wire
//! contract that writes back to the same value.
//!
//! Descriptions that name `columns_from` are skipped: that key reads another file or a live
//! table, which a fuzzer must not reach. Run with `cargo +nightly fuzz run toml_contract` from
//! the repository root; seeds are the contracts in `docs/` and `examples/`.

#![no_main]

use std::path::Path;

use dogana::{Contract, FromWire, Wire};
use libfuzzer_sys::fuzz_target;

/// The longest refusal a description may draw: a message with a few names, each cut.
const REFUSAL_MAX: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(table) = text.parse::<toml::Table>() {
        if table.contains_key("columns_from") {
            return;
        }
    }
    match dogana_cli::fuzz::toml_contract(text, Path::new("/nonexistent-dogana-fuzz")) {
        Ok(contract) => {
            let wire = contract.to_json();
            let back = Contract::from_json(&wire)
                .unwrap_or_else(|e| panic!("an accepted contract does not read back: {e}: {wire}"));
            assert_eq!(back, contract);
        }
        Err((code, message)) => {
            assert!(code.starts_with("DGN-"), "{code}");
            assert!(!message.contains('\n'), "a refusal of more than one line: {message}");
            assert!(message.len() <= REFUSAL_MAX, "a refusal of {} bytes", message.len());
        }
    }
});

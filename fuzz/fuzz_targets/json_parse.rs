//! Fuzzes `dogana_json::parse`; for every accepted input, checks that the
//! canonical and JCS writers produce text that parses back consistently.
//!
//! Run with `cargo +nightly fuzz run json_parse` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = dogana_json::parse(data) else {
        return;
    };

    let text = dogana_json::canonical(&value);
    assert!(text.is_ascii(), "canonical output is ASCII");
    let back = dogana_json::parse(text.as_bytes())
        .unwrap_or_else(|e| panic!("canonical output does not parse: {e}: {text}"));
    assert_eq!(
        dogana_json::canonical(&back),
        text,
        "canonical is a fixed point"
    );

    let bytes = dogana_json::jcs(&value);
    let again = dogana_json::parse(&bytes).unwrap_or_else(|e| {
        panic!(
            "jcs output does not parse: {e}: {}",
            String::from_utf8_lossy(&bytes)
        )
    });
    assert_eq!(dogana_json::jcs(&again), bytes, "jcs is idempotent");

    if let Ok(checked) = dogana_json::jcs_checked(&value) {
        assert_eq!(checked, bytes, "jcs_checked agrees with jcs");
    }
});

//! ECMAScript number formatting checked against Node.js `JSON.stringify`.
//!
//! Node.js is required: without `node` on PATH this test fails.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use serde_json::{Number, Value};

/// Reads hex bit patterns (one per line) and writes `JSON.stringify` of each double.
const NODE_SCRIPT: &str = r#"
const fs = require('fs');
const lines = fs.readFileSync(process.argv[2], 'utf8').split('\n');
const view = new DataView(new ArrayBuffer(8));
const out = [];
for (const line of lines) {
  if (line === '') continue;
  view.setUint32(0, parseInt(line.slice(0, 8), 16));
  view.setUint32(4, parseInt(line.slice(8, 16), 16));
  out.push(JSON.stringify(view.getFloat64(0)));
}
fs.writeFileSync(process.argv[3], out.join('\n') + '\n');
"#;

/// splitmix64: a small, fast PRNG; the fixed seed makes the run reproducible.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn edge_values() -> Vec<f64> {
    let two53 = 9_007_199_254_740_992.0_f64;
    vec![
        0.0,
        -0.0,
        5e-324,
        -5e-324,
        f64::from_bits(2),
        f64::from_bits(0x000f_ffff_ffff_ffff), // largest subnormal
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        two53 - 1.0,
        two53,
        two53 + 2.0,
        9_007_199_254_740_993_u64 as f64, // 2^53+1 rounds to 2^53
        1e21,
        1e-7,
        1e20,
        1e-6,
        999_999_999_999_999_900_000.0,
        1.5e-7,
        0.1,
        1.0,
        -1.0,
        123e-20,
        1_152_921_504_606_846_976.0, // 2^60
    ]
}

fn test_doubles() -> Vec<f64> {
    let mut rng = SplitMix64(0x646f_6761_6e61_4a53);
    let mut values = edge_values();
    // Random bit patterns, finite only.
    while values.len() < 600_000 {
        let f = f64::from_bits(rng.next());
        if f.is_finite() {
            values.push(f);
        }
    }
    // "Nice" decimals: up to 17 significant digits and a moderate exponent.
    for _ in 0..300_000 {
        let digits = 1 + rng.below(17) as u32;
        let mantissa = rng.below(10u64.pow(digits));
        let exponent = rng.below(61) as i64 - 30;
        let sign = if rng.next() & 1 == 0 { "" } else { "-" };
        let text = format!("{sign}{mantissa}e{exponent}");
        values.push(text.parse().expect("decimal literal"));
    }
    // Integers of every magnitude up to 2^64, as doubles.
    for _ in 0..100_000 {
        let shift = rng.below(64) as u32;
        let n = rng.next() >> shift;
        let f = n as f64;
        values.push(if rng.next() & 1 == 0 { f } else { -f });
    }
    values
}

fn tmp_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "dogana-json-ecmascript-{}-{name}",
        std::process::id()
    ))
}

// rule: WIRE-23 (binary64 printed in the ECMAScript shortest round-trip form, -0 as 0)
#[test]
fn numbers_match_node_json_stringify() {
    let values = test_doubles();
    assert!(values.len() >= 1_000_000);

    let input = tmp_path("in.txt");
    let output = tmp_path("out.txt");
    let script = tmp_path("script.js");
    let mut hex = String::with_capacity(values.len() * 17);
    for f in &values {
        hex.push_str(&format!("{:016x}\n", f.to_bits()));
    }
    fs::write(&input, hex).expect("write input");
    fs::write(&script, NODE_SCRIPT).expect("write script");

    let status = Command::new("node")
        .arg(&script)
        .arg(&input)
        .arg(&output)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "Node.js is required for this test (the ECMAScript reference) but `node` \
                 could not be run: {e}. Install Node.js and put `node` on PATH."
            )
        });
    assert!(status.success(), "node failed: {status}");
    let expected = fs::read_to_string(&output).expect("read node output");
    for path in [&input, &output, &script] {
        let _ = fs::remove_file(path);
    }

    let expected: Vec<&str> = expected.lines().collect();
    assert_eq!(
        expected.len(),
        values.len(),
        "node printed one line per double"
    );
    let mut mismatches = Vec::new();
    for (f, want) in values.iter().zip(&expected) {
        let value = Value::Number(Number::from_f64(*f).expect("finite"));
        let got = dogana_json::jcs(&value);
        if got != want.as_bytes() {
            mismatches.push(format!(
                "jcs {:016x} ({f:e}): got {} want {want}",
                f.to_bits(),
                String::from_utf8_lossy(&got)
            ));
        }
        // canonical() prints floats in the same form (WIRE-36 decided as shortest).
        let got = dogana_json::canonical(&value);
        if got != *want {
            mismatches.push(format!(
                "canonical {:016x}: got {got} want {want}",
                f.to_bits()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches, first: {:#?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(10)]
    );

    // And the text reads back to the same double (-0 reads back as 0).
    for (f, text) in values.iter().zip(&expected).step_by(7) {
        let back = dogana_json::parse(text.as_bytes()).expect("node output parses");
        let back = back.as_f64().expect("a number");
        let want = if *f == 0.0 { 0.0 } else { *f };
        assert_eq!(
            back.to_bits(),
            want.to_bits(),
            "{text} read back as {back:e}"
        );
    }
}

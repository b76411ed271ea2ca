//! Property tests: canonical() and jcs() read back through parse().

use dogana_json::{canonical, jcs, parse};
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

fn any_string() -> impl Strategy<Value = String> {
    // any::<char>() covers controls, BMP, surrogate-adjacent and astral characters.
    prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter)
}

fn finite_f64() -> impl Strategy<Value = f64> {
    use prop::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    prop_oneof![
        POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO,
        any::<i32>().prop_map(f64::from), // zero fraction
        any::<i64>().prop_map(|i| i as f64),
    ]
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        finite_f64().prop_map(|f| Value::Number(Number::from_f64(f).expect("finite"))),
        any_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((any_string(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Equal as JSON data: integers exactly, floats by binary64 value (a float
/// with a zero fraction may come back as an integer, -0.0 as 0).
fn same(original: &Value, back: &Value) -> bool {
    match (original, back) {
        (Value::Number(a), Value::Number(b)) => {
            if let Some(a) = as_integer(a) {
                as_integer(b) == Some(a)
            } else {
                a.as_f64() == b.as_f64()
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| same(x, y)))
        }
        _ => original == back,
    }
}

fn as_integer(n: &Number) -> Option<i128> {
    n.as_u64()
        .map(i128::from)
        .or_else(|| n.as_i64().map(i128::from))
}

/// Writes `value` as JSON with members in a scrambled order and whitespace
/// sprinkled between tokens, driven by `seed`.
fn scrambled(value: &Value, seed: &mut u64, out: &mut String) {
    let mut next = || {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *seed >> 33
    };
    let ws = [" ", "\n", "\t", "\r\n  ", ""][(next() % 5) as usize];
    out.push_str(ws);
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(" ,");
                }
                scrambled(item, seed, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut entries: Vec<(&String, &Value)> = members.iter().collect();
            let len = entries.len().max(1);
            let rotate = (next() as usize) % len;
            entries.rotate_left(rotate); // rotate < len, and 0 when empty
            if next() % 2 == 0 {
                entries.reverse();
            }
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                out.push_str(&serde_json::to_string(key).expect("key"));
                out.push_str(" : ");
                scrambled(item, seed, out);
            }
            out.push('}');
        }
        // serde_json's own spelling: floats as `1.0`, `1e21`, UTF-8 strings.
        leaf => out.push_str(&serde_json::to_string(leaf).expect("leaf")),
    }
    out.push_str(ws);
}

proptest! {
    // rule: WIRE-30 (from_json(to_json(x)) == x), WIRE-26 (integers stay exact)
    #[test]
    fn canonical_round_trips(v in any_value()) {
        let text = canonical(&v);
        prop_assert!(text.is_ascii());
        let back = parse(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert!(same(&v, &back), "{} read back as {}", text, back);
        // And canonical() is a fixed point.
        prop_assert_eq!(canonical(&back), text);
    }

    // rule: WIRE-18 (JCS is idempotent: parse(jcs(v)) has the same JCS)
    #[test]
    fn jcs_is_idempotent(v in any_value()) {
        let bytes = jcs(&v);
        let back = parse(&bytes).map_err(|e| {
            TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&bytes)))
        })?;
        prop_assert_eq!(jcs(&back), bytes);
    }

    // rule: WIRE-18, WIRE-22 (JCS does not depend on key order or whitespace of the input)
    #[test]
    fn jcs_ignores_key_order_and_whitespace(v in any_value(), mut seed in any::<u64>()) {
        let mut text = String::new();
        scrambled(&v, &mut seed, &mut text);
        let back = parse(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(jcs(&back), jcs(&v));
    }
}

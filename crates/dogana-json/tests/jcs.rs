//! RFC 8785 (JCS) serialization beyond the published vectors.

use dogana_json::{jcs, jcs_checked, JsonErrorKind};
use serde_json::json;

fn jcs_text(v: &serde_json::Value) -> String {
    String::from_utf8(jcs(v)).expect("JCS output is UTF-8")
}

// rule: WIRE-22 (keys sorted by UTF-16 code units): U+1F600 before U+FF61
#[test]
fn keys_sorted_by_utf16_code_units() {
    let v = json!({"\u{FF61}": 1, "\u{1F600}": 2, "b": 3, "B": 4, "": 5});
    assert_eq!(
        jcs_text(&v),
        "{\"\":5,\"B\":4,\"b\":3,\"\u{1F600}\":2,\"\u{FF61}\":1}"
    );
    // The reverse of code-point (Python sort_keys) order used by canonical().
    assert_eq!(
        dogana_json::canonical(&v),
        r#"{"":5,"B":4,"b":3,"\uff61":1,"\ud83d\ude00":2}"#
    );
}

// rule: WIRE-22 (JCS output is UTF-8, not ASCII-escaped)
#[test]
fn output_is_utf8_without_ascii_escapes() {
    let v = json!(["é", "😀", "\u{7f}", "\u{2028}", "/", "\u{1}"]);
    assert_eq!(
        jcs_text(&v),
        "[\"é\",\"😀\",\"\u{7f}\",\"\u{2028}\",\"/\",\"\\u0001\"]"
    );
}

// rule: WIRE-23 (ECMAScript number form): 1.0 as 1, 1e21 as 1e+21, -0 as 0
#[test]
fn numbers_in_ecmascript_form() {
    let v = dogana_json::parse(
        b"[1.0, 1e21, -0.0, -0, 1e20, 1e-7, 1e-6, 0.1, -1.5, 333333333.33333329, 5e-324, 4.50]",
    )
    .expect("valid JSON");
    assert_eq!(
        jcs_text(&v),
        "[1,1e+21,0,0,100000000000000000000,1e-7,0.000001,0.1,-1.5,333333333.3333333,5e-324,4.5]"
    );
}

// rule: WIRE-26 (JCS may write a large exact binary64 as another shortest token)
#[test]
fn large_exact_integer_uses_shortest_token() {
    let v = json!(1u64 << 60);
    assert_eq!(
        jcs_checked(&v).expect("2**60 is exact"),
        b"1152921504606847000"
    );
    assert_eq!(
        jcs_checked(&json!(i64::MIN)).expect("-2**63 is exact"),
        b"-9223372036854776000"
    );
}

// rule: WIRE-24 (integers must be exact binary64; 2**53+1 is refused)
#[test]
fn inexact_integer_is_refused_with_path() {
    let v = json!({"a": [0, {"b": 9_007_199_254_740_993u64}]});
    let e = jcs_checked(&v).unwrap_err();
    assert_eq!(e.kind(), JsonErrorKind::InexactInteger);
    assert_eq!(e.path(), "$.a[1].b");
    assert!(e.message().contains("9007199254740993"), "{e}");
    for n in [
        json!(-9_007_199_254_740_993i64),
        json!(u64::MAX),
        json!(i64::MAX),
    ] {
        assert_eq!(jcs_checked(&n).unwrap_err().path(), "$", "{n}");
    }
}

// rule: WIRE-24 (boundary): 2**53 and -(2**53) are exact
#[test]
fn two_pow_53_is_exact() {
    assert_eq!(
        jcs_checked(&json!(9_007_199_254_740_992u64)).unwrap(),
        b"9007199254740992"
    );
    assert_eq!(
        jcs_checked(&json!(-9_007_199_254_740_992i64)).unwrap(),
        b"-9007199254740992"
    );
}

// rule: WIRE-24 (jcs, the infallible form, rounds as JSON.parse would)
#[test]
fn unchecked_jcs_rounds_to_nearest() {
    assert_eq!(jcs(&json!(9_007_199_254_740_993u64)), b"9007199254740992");
    assert_eq!(jcs(&json!(9_007_199_254_740_995u64)), b"9007199254740996");
}

// rule: WIRE-18 (JCS: compact, nested objects sorted at every level)
#[test]
fn nested_structure() {
    let v = json!({"b": [true, null, {"d": "x", "c": []}], "a": {}});
    assert_eq!(jcs_text(&v), r#"{"a":{},"b":[true,null,{"c":[],"d":"x"}]}"#);
}

//! The project's canonical JSON (`canonical`) and the Python-compatible string escaper.

use dogana_json::{canonical, write_python_ascii_string};
use serde_json::{json, Value};

fn escaped(s: &str) -> String {
    let mut out = String::new();
    write_python_ascii_string(&mut out, s);
    out
}

// rule: WIRE-17 (ASCII escapes): DEL is escaped as \u007f
#[test]
fn del_is_escaped() {
    assert_eq!(escaped("\u{7f}"), r#""\u007f""#);
}

// rule: WIRE-17 (ASCII escapes): non-ASCII in the BMP as lowercase \u00e9
#[test]
fn latin_letter_is_escaped_lowercase() {
    assert_eq!(escaped("é"), r#""\u00e9""#);
    assert_eq!(escaped("\u{FFFF}\u{ABCD}"), r#""\uffff\uabcd""#);
}

// rule: WIRE-17 (ASCII escapes): astral characters as a lowercase surrogate pair
#[test]
fn astral_is_a_surrogate_pair() {
    assert_eq!(escaped("😀"), r#""\ud83d\ude00""#);
    assert_eq!(escaped("\u{10FFFF}"), r#""\udbff\udfff""#);
}

// rule: WIRE-17 (ASCII escapes, as Python's json.dumps): "/" is not escaped
#[test]
fn slash_is_not_escaped() {
    assert_eq!(escaped("a/b</script>"), r#""a/b</script>""#);
}

// rule: WIRE-17 (ASCII escapes, as Python's json.dumps): short escapes and other controls
#[test]
fn controls_and_quotes() {
    assert_eq!(
        escaped("\"\\\u{8}\u{c}\n\r\t\u{0}\u{1f} ~"),
        r#""\"\\\b\f\n\r\t\u0000\u001f ~""#
    );
    // Byte for byte what Python 3 prints for
    // json.dumps("x\x0b\x7f\x80\u2028\U0001f600y", ensure_ascii=True).
    assert_eq!(
        escaped("x\u{b}\u{7f}\u{80}\u{2028}\u{1F600}y"),
        r#""x\u000b\u007f\u0080\u2028\ud83d\ude00y""#
    );
}

// rule: WIRE-17 (ASCII escapes): the whole document is ASCII
#[test]
fn output_is_ascii() {
    let v = json!({"é": ["😀", "\u{7f}", "\u{FF61}"], "ß": {"中": null}});
    let out = canonical(&v);
    assert!(out.is_ascii(), "{out}");
}

// rule: WIRE-17 (sorted keys): code-point order, the reverse of JCS for astral vs U+FF61
#[test]
fn keys_sorted_by_code_point() {
    let v = json!({"\u{FF61}": 1, "\u{1F600}": 2, "b": 3, "B": 4, "a": 5, "": 6, "aa": 7});
    assert_eq!(
        canonical(&v),
        r#"{"":6,"B":4,"a":5,"aa":7,"b":3,"\uff61":1,"\ud83d\ude00":2}"#
    );
}

// rule: WIRE-17 (sorted keys, compact separators) in nested values
#[test]
fn nested_compact() {
    let v = json!({"z": [1, {"y": true, "x": null}], "a": {"c": "d", "b": []}});
    assert_eq!(
        canonical(&v),
        r#"{"a":{"b":[],"c":"d"},"z":[1,{"x":null,"y":true}]}"#
    );
}

// rule: WIRE-26 (full wire JSON keeps integers exact): 2**60
#[test]
fn large_integers_are_exact() {
    assert_eq!(canonical(&json!(1u64 << 60)), "1152921504606846976");
    assert_eq!(
        canonical(&json!(9_007_199_254_740_993u64)),
        "9007199254740993"
    );
    assert_eq!(canonical(&json!(u64::MAX)), "18446744073709551615");
    assert_eq!(canonical(&json!(i64::MIN)), "-9223372036854775808");
}

// rule: WIRE-36 (decided here: shortest form), WIRE-06 (zero fraction is an integer)
#[test]
fn floats_in_shortest_form() {
    assert_eq!(canonical(&json!(1.0)), "1");
    assert_eq!(canonical(&json!(-0.0)), "0");
    assert_eq!(
        canonical(&json!(9_007_199_254_740_992.0)),
        "9007199254740992"
    );
    assert_eq!(
        canonical(&json!(-9_007_199_254_740_992.0)),
        "-9007199254740992"
    );
    assert_eq!(canonical(&json!(0.1)), "0.1");
    assert_eq!(canonical(&json!(1e21)), "1e+21");
    assert_eq!(canonical(&json!(1e-7)), "1e-7");
    assert_eq!(
        canonical(&json!(1_152_921_504_606_846_976.0)),
        "1152921504606847000"
    );
}

// rule: WIRE-30 (round trip): canonical output parses back to the same value
#[test]
fn canonical_parses_back() {
    let v = json!({"a": ["é😀\u{7f}\u{0}", 1u64 << 60, -3, 0.5], "b": {"": null}});
    let back: Value = dogana_json::parse(canonical(&v).as_bytes()).expect("parses");
    assert_eq!(back, v);
}

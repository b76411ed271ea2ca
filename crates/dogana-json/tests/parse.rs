//! Strict parsing: every refusal names the JSON path of the offending place.

use dogana_json::{parse, JsonError, JsonErrorKind, MAX_DEPTH};
use serde_json::{json, Value};

fn refused(input: &[u8]) -> JsonError {
    match parse(input) {
        Ok(v) => panic!("accepted {:?} as {v}", String::from_utf8_lossy(input)),
        Err(e) => e,
    }
}

// rule: crate contract (UTF-8 input): invalid UTF-8 in a string value, with its path
#[test]
fn invalid_utf8_in_value() {
    let e = refused(b"{\"a\": [\"ok\", \"bad \xff here\"]}");
    assert_eq!(e.kind(), JsonErrorKind::InvalidUtf8);
    assert_eq!(e.path(), "$.a[1]");
    assert_eq!((e.line(), e.column()), (Some(1), Some(19)));
    assert!(e.message().contains("UTF-8"), "{e}");
}

// rule: crate contract (UTF-8 input): invalid UTF-8 in a key (truncated sequence)
#[test]
fn invalid_utf8_in_key() {
    let e = refused(b"{\"x\": {\"k\xc3\": 1}}");
    assert_eq!(e.kind(), JsonErrorKind::InvalidUtf8);
    assert_eq!(e.path(), "$.x");
}

// rule: crate contract (UTF-8 input): an earlier syntax error is reported first
#[test]
fn syntax_error_before_invalid_utf8_comes_first() {
    let e = refused(b"[1 2, \"\xff\"]");
    assert_eq!(e.kind(), JsonErrorKind::Syntax);
    assert_eq!(e.path(), "$[1]");
}

// rule: crate contract (syntax errors give path, line and column)
#[test]
fn syntax_error_has_line_and_column() {
    let e = refused(b"{\"a\": 1,\n \"b\": [1, 2,, 3]}");
    assert_eq!(e.kind(), JsonErrorKind::Syntax);
    assert_eq!(e.path(), "$.b[2]");
    assert_eq!(e.line(), Some(2));
    assert_eq!(e.column(), Some(13));
    assert_eq!(e.message(), "expected value");
    assert_eq!(
        e.to_string(),
        "expected value at $.b[2] (line 2, column 13)"
    );
}

// rule: crate contract (paths): siblings parsed before the error do not leak into the path
#[test]
fn path_points_at_the_failing_sibling() {
    let e = refused(br#"{"a": [1, {"b": [2]}], "c": [true, tru]}"#);
    assert_eq!(e.kind(), JsonErrorKind::Syntax);
    assert_eq!(e.path(), "$.c[1]");
}

// rule: crate contract (syntax): an input that ends early
#[test]
fn early_end() {
    let e = refused(br#"{"a": [1,"#);
    assert_eq!(e.kind(), JsonErrorKind::Syntax);
    assert_eq!(e.path(), "$.a[1]");
    assert!(refused(b"").message().contains("EOF"));
    assert!(refused(b"   ").message().contains("EOF"));
}

// rule: crate contract (duplicate object keys are refused, naming the key)
#[test]
fn duplicate_key() {
    let e = refused(br#"{"regions": [{"low": 1, "high": 2, "low": 3}]}"#);
    assert_eq!(e.kind(), JsonErrorKind::DuplicateKey);
    assert_eq!(e.path(), "$.regions[0].low");
    assert_eq!(e.message(), r#"duplicate object key "low""#);
    assert_eq!(e.line(), Some(1));
}

// rule: crate contract (duplicate object keys): found after escapes are decoded
#[test]
fn duplicate_key_spelled_differently() {
    let e = refused(br#"{"a b": 1, "a\u0020b": 2}"#);
    assert_eq!(e.kind(), JsonErrorKind::DuplicateKey);
    assert_eq!(e.path(), r#"$["a b"]"#);
}

// rule: crate contract (duplicate keys only within one object)
#[test]
fn same_key_in_different_objects_is_fine() {
    let v = parse(br#"{"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}"#).expect("valid");
    assert_eq!(v, json!({"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}));
}

// rule: WIRE-16 (a lone leading surrogate is refused)
#[test]
fn lone_leading_surrogate() {
    let e = refused(br#"{"s": ["x", "\ud800"]}"#);
    assert_eq!(e.kind(), JsonErrorKind::LoneSurrogate);
    assert_eq!(e.path(), "$.s[1]");
    let e = refused(br#"["\ud800\u0041"]"#);
    assert_eq!(e.kind(), JsonErrorKind::LoneSurrogate);
    assert_eq!(e.path(), "$[0]");
    let e = refused(br#""\udbffx""#);
    assert_eq!(e.kind(), JsonErrorKind::LoneSurrogate);
    assert_eq!(e.path(), "$");
}

// rule: WIRE-16 (a lone trailing surrogate is refused)
#[test]
fn lone_trailing_surrogate() {
    let e = refused(br#"{"t": "\udc00"}"#);
    assert_eq!(e.kind(), JsonErrorKind::LoneSurrogate);
    assert_eq!(e.path(), "$.t");
}

// rule: WIRE-16 (a lone surrogate in a key is refused too)
#[test]
fn lone_surrogate_in_key() {
    let e = refused(br#"{"ok": {"\ud800": 1}}"#);
    assert_eq!(e.kind(), JsonErrorKind::LoneSurrogate);
    assert_eq!(e.path(), "$.ok");
}

// rule: WIRE-16 (only lone surrogates: a proper pair is a character)
#[test]
fn surrogate_pair_is_accepted() {
    assert_eq!(parse(br#""\ud83d\ude00""#).expect("valid"), json!("😀"));
}

fn nested_arrays(depth: usize) -> Vec<u8> {
    let mut s = "[".repeat(depth).into_bytes();
    s.extend("]".repeat(depth).bytes());
    s
}

// rule: crate contract (MAX_DEPTH): exactly MAX_DEPTH levels are accepted
#[test]
fn max_depth_is_accepted() {
    assert_eq!(MAX_DEPTH, 128);
    let mut v = parse(&nested_arrays(MAX_DEPTH)).expect("128 levels are fine");
    let mut depth = 0;
    while let Value::Array(mut items) = v {
        depth += 1;
        v = items.pop().unwrap_or(Value::Null);
    }
    assert_eq!(depth, MAX_DEPTH);
}

// rule: crate contract (MAX_DEPTH): one level deeper is refused, naming the path
#[test]
fn deeper_than_max_depth_is_refused() {
    let e = refused(&nested_arrays(MAX_DEPTH + 1));
    assert_eq!(e.kind(), JsonErrorKind::TooDeep);
    assert_eq!(e.path(), format!("${}", "[0]".repeat(MAX_DEPTH)));
    assert!(e.message().contains("128"), "{e}");

    let mut objects = "{\"a\":".repeat(MAX_DEPTH + 1);
    objects.push('1');
    objects.push_str(&"}".repeat(MAX_DEPTH + 1));
    let e = refused(objects.as_bytes());
    assert_eq!(e.kind(), JsonErrorKind::TooDeep);
    assert_eq!(e.path(), format!("${}", ".a".repeat(MAX_DEPTH)));
}

// rule: crate contract (no stack overflow): a million unclosed `[`
#[test]
fn a_million_brackets_do_not_overflow_the_stack() {
    let input = vec![b'['; 1_000_000];
    let e = refused(&input);
    assert_eq!(e.kind(), JsonErrorKind::TooDeep);
    let input = "{\"a\":".repeat(1_000_000);
    let e = refused(input.as_bytes());
    assert_eq!(e.kind(), JsonErrorKind::TooDeep);
}

// rule: WIRE-31 (non-finite numbers refused): 1e400 overflows binary64
#[test]
fn overflowing_number() {
    let e = refused(br#"{"regions": [0, 1, 2, {"low": 1e400}]}"#);
    assert_eq!(e.kind(), JsonErrorKind::NumberOutOfRange);
    assert_eq!(e.path(), "$.regions[3].low");
    let e = refused(b"[-1e400]");
    assert_eq!(e.kind(), JsonErrorKind::NumberOutOfRange);
    assert_eq!(e.path(), "$[0]");
    // An integer literal too long for binary64 overflows the same way.
    let e = refused(format!("[{}]", "9".repeat(400)).as_bytes());
    assert_eq!(e.kind(), JsonErrorKind::NumberOutOfRange);
}

// rule: WIRE-31 (non-finite numbers refused): NaN and Infinity are not JSON
#[test]
fn nan_and_infinity_literals() {
    for text in ["NaN", "Infinity", "-Infinity"] {
        let e = refused(format!("{{\"x\": {text}}}").as_bytes());
        assert_eq!(e.kind(), JsonErrorKind::Syntax, "{text}");
        assert_eq!(e.path(), "$.x", "{text}");
    }
}

// rule: WIRE-24 (integers never rounded): an integer literal binary64 would round
#[test]
fn integer_literal_that_would_round() {
    let e = refused(b"{\"k\": [1,\n 18446744073709551617]}");
    assert_eq!(e.kind(), JsonErrorKind::InexactInteger);
    assert_eq!(e.path(), "$.k[1]");
    assert_eq!((e.line(), e.column()), (Some(2), Some(2)));
    assert!(e.message().contains("18446744073709551616"), "{e}");
    let e = refused(b"-9223372036854775809");
    assert_eq!(e.kind(), JsonErrorKind::InexactInteger);
    assert_eq!(e.path(), "$");
}

// rule: WIRE-26 (JCS may spell a large exact value with another shortest token):
// large integer literals that are exact, or the shortest form, are floats.
#[test]
fn large_integer_literals_that_are_floats() {
    let v = parse(b"[18446744073709551616, 123456789012345680000, 100000000000000000000]")
        .expect("exact or shortest-form literals");
    assert_eq!(
        v,
        json!([18446744073709551616.0, 123456789012345680000.0, 1e20])
    );
    // Within the 64-bit range integers stay exact integers.
    let v = parse(b"[18446744073709551615, -9223372036854775808, 9007199254740993]").unwrap();
    assert_eq!(v, json!([u64::MAX, i64::MIN, 9_007_199_254_740_993u64]));
}

// rule: crate contract (trailing content refused)
#[test]
fn trailing_content() {
    let e = refused(b"{} {}");
    assert_eq!(e.kind(), JsonErrorKind::TrailingContent);
    assert_eq!(e.path(), "$");
    let e = refused(b"[1]\n x");
    assert_eq!(e.kind(), JsonErrorKind::TrailingContent);
    assert_eq!(e.line(), Some(2));
    // Whitespace around the value is fine.
    assert_eq!(parse(b" \t\r\n[1] \n").unwrap(), json!([1]));
}

// rule: crate contract (strict grammar): trailing commas, comments, single quotes, BOM
#[test]
fn non_json_extensions_are_refused() {
    for input in [
        &b"[1,]"[..],
        b"{\"a\":1,}",
        b"// c\n1",
        b"['a']",
        b"\xef\xbb\xbf{}",
        b"01",
        b"\"tab\there\"",
    ] {
        let e = refused(input);
        assert_eq!(
            e.kind(),
            JsonErrorKind::Syntax,
            "{}",
            String::from_utf8_lossy(input)
        );
    }
}

// rule: WIRE-06 (a zero fraction reads as a number equal to the integer; -0 kept as float)
#[test]
fn numbers_keep_their_kind() {
    let v = parse(b"[1, -1, 1.0, -0, 0.5, 1e2]").unwrap();
    assert!(v[0].is_u64() && v[1].is_i64() && v[2].is_f64());
    assert_eq!(v[3].as_f64().map(f64::to_bits), Some((-0.0f64).to_bits()));
    assert_eq!(v[4], json!(0.5));
    assert_eq!(v[5], json!(100.0));
}

// rule: crate contract (error type): std::error::Error + Display for mapping
#[test]
fn error_is_std_error() {
    let e: Box<dyn std::error::Error> = Box::new(refused(b"[1,]"));
    assert_eq!(e.to_string(), "trailing comma at $[1] (line 1, column 4)");
}

// rule: WIRE-16 (the refusal says what is wrong: the escape as written, and why)
#[test]
fn a_lone_surrogate_is_named_as_written() {
    let e = refused(br#"{"s": ["x", "ab\ud800"]}"#);
    assert_eq!(e.kind(), JsonErrorKind::LoneSurrogate);
    assert!(
        e.message()
            .starts_with(r"lone surrogate escape \ud800, not followed by a low surrogate escape: "),
        "{e}"
    );
    let e = refused(br#"["\uD83D\u0041"]"#);
    assert!(
        e.message().starts_with(
            r"lone surrogate escape \uD83D, followed by \u0041 and not by a low surrogate: "
        ),
        "{e}"
    );
    let e = refused(br#"{"t": "\\u0041\udc00"}"#);
    assert!(
        e.message()
            .starts_with(r"lone surrogate escape \udc00: a low surrogate"),
        "{e}"
    );
    assert_eq!(e.path(), "$.t");
    // a surrogate after a proper pair, on a later line
    let e = refused(b"[\n\"\\ud83d\\ude00\\ud800z\"]");
    assert!(
        e.message().starts_with(r"lone surrogate escape \ud800,"),
        "{e}"
    );
    assert_eq!(e.line(), Some(2));
}

// rule: crate contract (strict grammar): a byte order mark is named as one
#[test]
fn a_byte_order_mark_is_named() {
    let e = refused(b"\xef\xbb\xbf{}");
    assert_eq!(e.kind(), JsonErrorKind::Syntax);
    assert!(e.message().contains("byte order mark"), "{e}");
    assert_eq!((e.line(), e.column()), (Some(1), Some(1)));
}

// rule: TRUST-07 (what a sender controls is bounded): a 50 MB key or number gives a short error
#[test]
fn errors_stay_short_whatever_the_input() {
    let key = "k".repeat(50 << 20);
    let doc = format!("{{\"{key}\": 1, \"{key}\": 2}}");
    let e = refused(doc.as_bytes());
    assert_eq!(e.kind(), JsonErrorKind::DuplicateKey);
    assert!(e.to_string().len() < 400, "{} bytes", e.to_string().len());
    assert!(
        e.message().ends_with("…\" (52428800 bytes)"),
        "{}",
        e.message()
    );
    let doc = format!("{{\"{key}\": [1, 1e400]}}");
    let e = refused(doc.as_bytes());
    assert!(e.path().len() < 200, "{}", e.path());
    assert!(e.path().starts_with("$[\"kkkk"), "{}", e.path());
    let digits = format!("[{}]", "7".repeat(300));
    let e = refused(digits.as_bytes());
    assert_eq!(e.kind(), JsonErrorKind::InexactInteger);
    assert!(e.to_string().len() < 600, "{}", e.to_string());
    assert!(e.message().contains("(300 characters)"), "{}", e.message());
}

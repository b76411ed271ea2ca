//! JSON that the dogana protocol can trust, with no I/O.
//!
//! Everything works on [`serde_json::Value`]:
//!
//! - [`parse`] reads one JSON document strictly (UTF-8, no duplicate keys, no
//!   lone surrogates, bounded nesting, finite numbers, nothing after the value)
//!   and names the JSON path of whatever it refuses, as in `$.regions[3].low`.
//! - [`canonical`] writes the project's canonical JSON (WIRE-17): sorted keys,
//!   compact separators, ASCII escapes as Python's `json.dumps(ensure_ascii=True)`,
//!   exact integers.
//! - [`jcs`] and [`jcs_checked`] write RFC 8785 (JSON Canonicalization Scheme),
//!   the bytes that identities hash (WIRE-18, WIRE-22, WIRE-23, WIRE-24).
//! - [`quoted`] shows a value someone else wrote in a message, escaped and cut to a fixed
//!   length with its size, so that no message grows with its input.
//!
//! ```
//! use serde_json::json;
//!
//! let v = dogana_json::parse(b"{\"b\": 1.0, \"a\": \"\xc3\xa9\"}").unwrap();
//! assert_eq!(v, json!({"a": "é", "b": 1.0}));
//! assert_eq!(dogana_json::canonical(&v), r#"{"a":"\u00e9","b":1}"#);
//! assert_eq!(dogana_json::jcs_checked(&v).unwrap(), "{\"a\":\"é\",\"b\":1}".as_bytes());
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod parse;
mod quote;
mod write;

pub use error::{JsonError, JsonErrorKind};
pub use parse::{parse, MAX_DEPTH};
pub use quote::{needs_escape, quoted, quoted_bytes, shown, Quoted, SHOWN};
pub use write::{
    canonical, jcs, jcs_checked, write_ecmascript_number, write_jcs_string,
    write_python_ascii_string,
};

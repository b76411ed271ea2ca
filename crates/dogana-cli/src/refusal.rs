//! A refusal: what dogana will not do, and why. Printed as one line on standard error,
//! `error[DGN-…]: <message>`, or with `--json` as one JSON object; the exit status is its
//! code's kind: 1 a refusal, 2 a usage error, 3 a transient failure (`docs/errors.md`).

use std::fmt;

use dogana_codes::Code;
use serde_json::{json, Value};

/// Why a command stopped. The message says what is wrong and what to do; the code is stable
/// (`dogana_codes`), and the field and value, when one input is at fault, name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(Box<Inner>);

/// A refusal's parts, boxed: a command's `Result` stays one pointer wide on its error side.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    code: Code,
    message: String,
    field: Option<String>,
    value: Option<String>,
}

/// How much of a value a JSON error quotes: a sender's value of megabytes is never echoed.
const VALUE_MAX: usize = 200;

impl Refusal {
    /// A refusal with this code and message.
    pub fn new(code: Code, message: impl Into<String>) -> Refusal {
        Refusal(Box::new(Inner {
            code,
            message: message.into(),
            field: None,
            value: None,
        }))
    }

    /// The same refusal, naming the field at fault and its value (cut to `VALUE_MAX` bytes).
    pub fn at(mut self, field: impl Into<String>, value: impl AsRef<str>) -> Refusal {
        self.0.field = Some(field.into());
        self.0.value = Some(cut(value.as_ref()));
        self
    }

    /// Its stable code.
    pub fn code(&self) -> Code {
        self.0.code
    }

    /// The exit status its code's kind gives (1, 2 or 3).
    pub fn exit_status(&self) -> u8 {
        self.0.code.kind.exit_status()
    }

    /// The refusal as one JSON object: code, kind, message, field and value (null when no one
    /// input is at fault).
    pub fn to_json(&self) -> Value {
        json!({
            "error": {
                "code": self.0.code.id,
                "kind": self.0.code.kind.name(),
                "message": self.0.message,
                "field": self.0.field,
                "value": self.0.value,
            }
        })
    }

    /// Prints the refusal on standard error: one line, or with `json` one JSON object.
    pub fn print(&self, json: bool) {
        if json {
            eprintln!("{}", self.to_json());
        } else {
            eprintln!("error[{}]: {}", self.0.code.id, one_line(&self.0.message));
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&one_line(&self.0.message))
    }
}

/// `text` cut at a character boundary to [`VALUE_MAX`] bytes, with its length when cut.
fn cut(text: &str) -> String {
    if text.len() <= VALUE_MAX {
        return text.to_owned();
    }
    let mut at = VALUE_MAX;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}… ({} bytes)", &text[..at], text.len())
}

/// The message with every line break, control character and text-reordering control
/// escaped ([`sender_text`](crate::output::sender_text)), so that it stays one line whatever
/// a path or a quoted value holds, and a terminal shows it without acting on it.
fn one_line(s: &str) -> String {
    crate::output::sender_text(s).into_owned()
}

/// Returns early with a [`Refusal`] of a code, its message built like `format!`:
/// `refuse!(codes::OPTION_INVALID, "--at {text:?} …")`.
macro_rules! refuse {
    ($code:expr, $($arg:tt)*) => {
        return Err($crate::refusal::Refusal::new($code, format!($($arg)*)))
    };
}
pub(crate) use refuse;

/// The result of a command.
pub type Result<T> = std::result::Result<T, Refusal>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_error_names_code_kind_field_and_a_cut_value() {
        let long = "x".repeat(1000);
        let r = Refusal::new(dogana_codes::OPTION_INVALID, "bad\nvalue").at("--at", &long);
        let v = r.to_json();
        assert_eq!(v["error"]["code"], "DGN-106");
        assert_eq!(v["error"]["kind"], "refusal");
        assert_eq!(v["error"]["field"], "--at");
        let value = v["error"]["value"].as_str().unwrap();
        assert!(
            value.len() < 260 && value.ends_with("(1000 bytes)"),
            "{value}"
        );
        assert_eq!(r.exit_status(), 1);
        // the text form stays one line
        assert_eq!(r.to_string(), "bad\\nvalue");
    }
}

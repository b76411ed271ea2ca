//! What the service answers when it refuses: one JSON object with a stable code, the field and
//! the value (cut), the rule, and a message that says what to do. Nothing changed.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use dogana_codes::{self as codes, Code};
use dogana_receiver::StoreError;

/// How many bytes of a value a sender sent an error quotes.
const VALUE_MAX: usize = 200;

/// A refused request: its HTTP status and the body that explains it (boxed: an error is the
/// rare path, and a `Result` of it stays one word wide).
#[derive(Debug, Clone)]
pub struct ApiError(Box<Refused>);

/// What an [`ApiError`] holds.
#[derive(Debug, Clone)]
pub struct Refused {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable code (`docs/errors.md`).
    pub code: Code,
    /// What is wrong and what to do.
    pub message: String,
    /// The field, part or parameter at fault, if one is.
    pub field: Option<String>,
    /// Its value, escaped and cut to [`VALUE_MAX`] bytes.
    pub value: Option<String>,
    /// The rule it breaks (`serve.auth`, a protocol rule, ...).
    pub rule: &'static str,
}

impl ApiError {
    /// A refusal of this status and code.
    pub fn new(
        status: StatusCode,
        code: Code,
        rule: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError(Box::new(Refused {
            status,
            code,
            message: message.into(),
            field: None,
            value: None,
            rule,
        }))
    }

    /// Names the field at fault and quotes its value (escaped, cut).
    pub fn at(mut self, field: impl Into<String>, value: &str) -> ApiError {
        self.0.field = Some(field.into());
        self.0.value = Some(cut(value));
        self
    }

    /// 400: the request is not what the route takes.
    pub fn bad_request(rule: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            codes::REQUEST_INVALID,
            rule,
            message,
        )
    }

    /// A failed store operation, by its code's kind: a lock or a lost connection is 503, a
    /// full disk 507, a refusal of the delivery 422, a broken store 500. Nothing committed.
    pub fn store(what: &str, e: &StoreError) -> ApiError {
        let code = dogana_stores::code_of(e);
        let status = if code == codes::DISK_FULL {
            StatusCode::INSUFFICIENT_STORAGE
        } else if code.kind == codes::Kind::Transient {
            StatusCode::SERVICE_UNAVAILABLE
        } else if code == codes::STORE_FAILED
            || code == codes::NOT_A_STORE
            || code == codes::STORE_INCONSISTENT
        {
            StatusCode::INTERNAL_SERVER_ERROR
        } else {
            StatusCode::UNPROCESSABLE_ENTITY
        };
        ApiError::new(
            status,
            code,
            "serve.store",
            format!(
                "{what} failed: {}; nothing was changed",
                dogana::quoted(&e.to_string(), 1000)
            ),
        )
    }

    /// The body: `{"error": {"code", "kind", "message", "field", "value", "rule"}}`.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({
            "error": {
                "code": self.code.id,
                "kind": self.code.kind.name(),
                "message": self.message,
                "field": self.field,
                "value": self.value,
                "rule": self.rule,
            }
        })
    }
}

/// A sender's value as an error quotes it: at most [`VALUE_MAX`] bytes, cut on a character
/// boundary, control characters escaped.
pub fn cut(value: &str) -> String {
    let mut end = value.len().min(VALUE_MAX);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    let mut out: String = value[..end].escape_debug().collect();
    if end < value.len() {
        out.push('…');
    }
    out
}

impl std::ops::Deref for ApiError {
    type Target = Refused;
    fn deref(&self) -> &Refused {
        &self.0
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error[{}]: {}", self.code.id, self.message)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_is_cut_on_a_character_boundary() {
        let long = "é".repeat(300);
        let quoted = cut(&long);
        assert!(quoted.ends_with('…'));
        assert!(quoted.len() <= VALUE_MAX + '…'.len_utf8());
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(cut("a\nb\u{2028}"), "a\\nb\\u{2028}");
    }
}

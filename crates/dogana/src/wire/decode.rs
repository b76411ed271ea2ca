//! Reading wire documents: every refusal is a [`SerializationError`] naming the JSON path.

use serde_json::Value as Json;

use crate::error::SerializationError;

/// A kind that can be read back from its wire form.
pub trait FromWire: Sized {
    /// Reads the full wire form of a value.
    fn from_value(value: &Json) -> Result<Self, SerializationError>;
}

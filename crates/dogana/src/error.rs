//! The error tree, mirroring the protocol's:
//!
//! ```text
//! DoganaError
//! ├── InvalidContract        a declaration is invalid in itself (contract, shape, manifest fields)
//! │   └── SerializationError a wire document is refused before normalization
//! ├── RejectedDelivery       a ledger does not admit a manifest (Ledger::apply)
//! ├── PlanningError          no read can establish what a reader asked for
//! └── InconsistentPublication receipts that do not continue a ledger's chain
//! ```
//!
//! Every error carries a [`Problem`]: the field, the offending value, the rule of
//! `spec/rules.md` it breaks and why, so that the message tells a person what to fix.

use std::fmt;

/// What is wrong: which field, with which value, against which rule, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field or JSON path at fault, such as `shapes.last3.window_size` or `$.regions[2].low`.
    pub field: String,
    /// The offending value as the user wrote it (or a short description of it).
    pub value: String,
    /// The rule of `spec/rules.md` that refuses it, such as `CONTRACT-12`.
    pub rule: &'static str,
    /// Why it is refused and, where it helps, what to do instead.
    pub reason: String,
}

/// The most bytes a [`Problem`]'s field, value or reason keeps: far more than any valid name
/// (at most [`NAME_MAX`](crate::NAME_MAX) bytes) quoted takes, so no message built from valid
/// declarations is cut, and a value of megabytes never becomes a message (or a check's detail,
/// or a receipt) of megabytes.
pub const PROBLEM_TEXT_MAX: usize = 8192;

/// `text` cut at a character boundary to [`PROBLEM_TEXT_MAX`] bytes, with its length.
fn bounded(mut text: String) -> String {
    if text.len() > PROBLEM_TEXT_MAX {
        let len = text.len();
        let mut at = PROBLEM_TEXT_MAX;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        text.push_str(&format!("… ({len} bytes)"));
    }
    text
}

impl Problem {
    /// A problem with `field` holding `value`, refused by `rule` because of `reason`. Each
    /// text is kept to [`PROBLEM_TEXT_MAX`] bytes; show a value a sender wrote with
    /// [`quoted`](crate::quoted), which cuts it much shorter.
    pub fn new(
        field: impl Into<String>,
        value: impl fmt::Display,
        rule: &'static str,
        reason: impl Into<String>,
    ) -> Problem {
        Problem {
            field: bounded(field.into()),
            value: bounded(value.to_string()),
            rule,
            reason: bounded(reason.into()),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}: {} ({})", self.field, self.reason, self.rule)
        } else {
            write!(
                f,
                "{} = {}: {} ({})",
                self.field, self.value, self.reason, self.rule
            )
        }
    }
}

/// A wire document refused before normalization: bad JSON, a missing or unknown field, a
/// wrong type, an unknown version or kind, a tag outside its grammar (WIRE-07).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerializationError(pub Problem);

impl fmt::Display for SerializationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid document: {}", self.0)
    }
}

impl std::error::Error for SerializationError {}

/// A declaration that is invalid in itself: a contract, a shape, or a manifest field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidContract {
    /// The value is well formed but breaks a rule of the protocol.
    Declaration(Problem),
    /// The wire document could not be read.
    Serialization(SerializationError),
}

impl InvalidContract {
    /// The problem, whichever the subclass.
    pub fn problem(&self) -> &Problem {
        match self {
            InvalidContract::Declaration(p) => p,
            InvalidContract::Serialization(SerializationError(p)) => p,
        }
    }
}

impl fmt::Display for InvalidContract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidContract::Declaration(p) => write!(f, "invalid declaration: {p}"),
            InvalidContract::Serialization(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for InvalidContract {}

impl From<SerializationError> for InvalidContract {
    fn from(e: SerializationError) -> Self {
        InvalidContract::Serialization(e)
    }
}

/// A delivery the ledger does not admit: the name of the failed core check (`manifest` or
/// `transition`) and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedDelivery {
    /// `manifest` or `transition`.
    pub check: &'static str,
    /// What is wrong.
    pub problem: Problem,
}

impl fmt::Display for RejectedDelivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rejected delivery: {}: {}", self.check, self.problem)
    }
}

impl std::error::Error for RejectedDelivery {}

/// No read can establish what was asked; names why each candidate failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanningError {
    /// What the planner was asked for, in words.
    pub goal: String,
    /// For each candidate shape (or the request as a whole), why it cannot serve.
    pub reasons: Vec<Problem>,
}

impl fmt::Display for PlanningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no read can {}", self.goal)?;
        for (i, p) in self.reasons.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { "; " })?;
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PlanningError {}

/// Receipts that do not continue a ledger: a missing, reordered or foreign receipt, or a
/// ledger that differs from the one a receipt names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InconsistentPublication(pub Problem);

impl fmt::Display for InconsistentPublication {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "inconsistent publication: {}", self.0)
    }
}

impl std::error::Error for InconsistentPublication {}

/// The root of every error dogana raises (GATE-24).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DoganaError {
    /// See [`InvalidContract`].
    InvalidContract(InvalidContract),
    /// See [`RejectedDelivery`].
    RejectedDelivery(RejectedDelivery),
    /// See [`PlanningError`].
    PlanningError(PlanningError),
    /// See [`InconsistentPublication`].
    InconsistentPublication(InconsistentPublication),
}

impl DoganaError {
    /// Whether this is a [`SerializationError`].
    pub fn is_serialization(&self) -> bool {
        matches!(
            self,
            DoganaError::InvalidContract(InvalidContract::Serialization(_))
        )
    }
}

impl fmt::Display for DoganaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DoganaError::InvalidContract(e) => e.fmt(f),
            DoganaError::RejectedDelivery(e) => e.fmt(f),
            DoganaError::PlanningError(e) => e.fmt(f),
            DoganaError::InconsistentPublication(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DoganaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DoganaError::InvalidContract(e) => Some(e),
            DoganaError::RejectedDelivery(e) => Some(e),
            DoganaError::PlanningError(e) => Some(e),
            DoganaError::InconsistentPublication(e) => Some(e),
        }
    }
}

macro_rules! into_root {
    ($($t:ident),*) => {$(
        impl From<$t> for DoganaError {
            fn from(e: $t) -> Self {
                DoganaError::$t(e)
            }
        }
    )*};
}
into_root!(
    InvalidContract,
    RejectedDelivery,
    PlanningError,
    InconsistentPublication
);

impl From<SerializationError> for DoganaError {
    fn from(e: SerializationError) -> Self {
        DoganaError::InvalidContract(InvalidContract::Serialization(e))
    }
}

/// Shorthand for an [`InvalidContract::Declaration`].
pub(crate) fn invalid(
    field: impl Into<String>,
    value: impl fmt::Display,
    rule: &'static str,
    reason: impl Into<String>,
) -> InvalidContract {
    InvalidContract::Declaration(Problem::new(field, value, rule, reason))
}

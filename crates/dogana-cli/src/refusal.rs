//! A refusal: what dogana will not do, as one line on standard error, exit status 1 (CLI-29).

use std::fmt;

/// Why a command refused. The message says what is wrong and what to do; it is printed as one
/// line, `error: <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(String);

impl Refusal {
    /// A refusal with this message.
    pub fn new(message: impl Into<String>) -> Refusal {
        Refusal(message.into())
    }

    /// Prints the refusal on standard error as exactly one line.
    pub fn print(&self) {
        eprintln!("error: {}", one_line(&self.0));
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&one_line(&self.0))
    }
}

/// The message with every line break, control character and text-reordering control
/// escaped ([`sender_text`](crate::output::sender_text)), so that it stays one line whatever
/// a path or a quoted value holds, and a terminal shows it without acting on it.
fn one_line(s: &str) -> String {
    crate::output::sender_text(s).into_owned()
}

/// Returns early with a [`Refusal`] built like `format!`.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::refusal::Refusal::new(format!($($arg)*)))
    };
}
pub(crate) use refuse;

/// The result of a command.
pub type Result<T> = std::result::Result<T, Refusal>;

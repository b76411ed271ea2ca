//! Errors that stop a check before it can report: I/O, a misuse of the API, or the row
//! callback's own failure. A delivery whose contents contradict its manifest is never an error:
//! it is a failed [`Check`](dogana::Check) in the [`RowReport`](crate::RowReport).

use std::error::Error;
use std::fmt;
use std::io;

/// Why [`check_rows`](crate::check_rows) could not produce a report.
///
/// None of these is a verdict on the delivery: an unreadable device, a manifest the gate would
/// have refused before the rows were read (LOADER-03), a receiver that did not say what its
/// columns are, or the receiver's own staging failure.
#[derive(Debug)]
#[non_exhaustive]
pub enum RowsError {
    /// Reading the input failed.
    Io(io::Error),
    /// The manifest does not fit the contract in a way the gate's preflight refuses (for
    /// example a shape the contract does not have, or window bounds of another type). Run
    /// `Gate::preflight` first; rows are checked only after it passes.
    Manifest(String),
    /// The contract (or manifest) declares a schema_hash, the file has columns that the
    /// contract does not type, and [`Options`](crate::Options) gives no column types at all, so
    /// the column hash cannot be computed. This is the receiver's configuration, not the
    /// delivery's fault.
    ColumnTypesRequired(Vec<String>),
    /// The format needs a cargo feature this build lacks (Parquet needs `parquet`).
    Unsupported(String),
    /// The row callback returned an error; checking stopped there.
    Callback(Box<dyn Error + Send + Sync>),
}

impl fmt::Display for RowsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowsError::Io(e) => write!(f, "reading the delivery failed: {e}"),
            RowsError::Manifest(m) => write!(f, "the manifest does not fit the contract: {m}"),
            RowsError::ColumnTypesRequired(cols) => write!(
                f,
                "the column hash needs the type of every loaded column; give the types of {} with Options::column_type",
                cols.join(", ")
            ),
            RowsError::Unsupported(m) => f.write_str(m),
            RowsError::Callback(e) => write!(f, "the row callback failed: {e}"),
        }
    }
}

impl Error for RowsError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            RowsError::Io(e) => Some(e),
            RowsError::Callback(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl From<io::Error> for RowsError {
    fn from(e: io::Error) -> Self {
        RowsError::Io(e)
    }
}

//! File formats and their detection.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The format of a delivered file.
///
/// ```
/// use dogana_rows::Format;
/// assert_eq!(Format::from_path("orders.csv"), Some(Format::Csv));
/// assert_eq!(Format::from_path("/tmp/orders.JSONL"), Some(Format::Ndjson));
/// assert_eq!(Format::from_path("orders.parquet"), Some(Format::Parquet));
/// assert_eq!(Format::from_path("orders.csv.gz"), None);
/// assert_eq!("ndjson".parse::<Format>(), Ok(Format::Ndjson));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Comma-separated values with a header row (RFC 4180 quoting).
    Csv,
    /// Newline-delimited JSON: one object per line.
    Ndjson,
    /// Apache Parquet (needs the `parquet` cargo feature).
    Parquet,
}

impl Format {
    /// The format a file name's extension names (case-insensitive): `.csv`, `.ndjson` or
    /// `.jsonl`, `.parquet`. Compressed names such as `.csv.gz` name none.
    pub fn from_path(path: impl AsRef<Path>) -> Option<Format> {
        let ext = path.as_ref().extension()?.to_str()?.to_ascii_lowercase();
        ext.parse().ok()
    }

    /// The format's name: `csv`, `ndjson` or `parquet`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Ndjson => "ndjson",
            Format::Parquet => "parquet",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a format: csv, ndjson (jsonl) or parquet",
            self.0
        )
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for Format {
    type Err = UnknownFormat;

    /// `csv`, `ndjson`, `jsonl` or `parquet`, in any letter case.
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "ndjson" | "jsonl" => Ok(Format::Ndjson),
            "parquet" => Ok(Format::Parquet),
            _ => Err(UnknownFormat(s.to_owned())),
        }
    }
}

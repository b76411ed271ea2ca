//! Shared fixtures: the concepts' orders contract, a temporary working directory, the binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use dogana::{Contract, Deletions, Duration, LogicalType, Shape};

/// The concepts' orders contract, as a TOML description (docs/contract-toml.md).
pub const ORDERS_TOML: &str = r#"table = "orders"
key = ["id"]
window_column = "order_date"
cursor_column = "updated_at"
deleted_column = "deleted"

[types]
id = "int"
order_date = "date"
updated_at = "datetime"
deleted = "bool"

[shapes.full]
kind = "full"
cost = 10

[shapes.last3]
kind = "window"
size = "3d"
cost = 2

[shapes.last30]
kind = "window"
size = "30d"

[shapes.partition]
kind = "window"

[shapes.changes]
kind = "changes"
deletions = "tombstone"
"#;

/// The same contract through the API.
pub fn orders() -> Contract {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape(
            "last3",
            Shape::window()
                .size(Duration::from_days(3).unwrap())
                .cost(2.0),
        )
        .shape(
            "last30",
            Shape::window().size(Duration::from_days(30).unwrap()),
        )
        .shape("partition", Shape::window())
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

/// SHA-256 of "abc" (FIPS 180-2).
pub const ABC_SHA256: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/// A temporary working directory holding orders.toml and orders.csv (the bytes "abc").
pub struct Work {
    pub dir: tempfile::TempDir,
}

impl Work {
    pub fn new() -> Work {
        let work = Work {
            dir: tempfile::tempdir().unwrap(),
        };
        work.write("orders.toml", ORDERS_TOML);
        work.write("orders.csv", "abc");
        work
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap()
    }

    pub fn exists(&self, name: &str) -> bool {
        self.path(name).exists()
    }

    /// The names in the directory, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// `dogana ARGS` run in the directory.
    pub fn dogana<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dogana"));
        cmd.current_dir(self.dir.path()).args(args);
        cmd
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// The text of a command's standard error or output.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Runs `dogana ARGS` in `work`, expects exit status 1 and exactly one line on standard error
/// starting with `error[DGN-…]: ` (a code `docs/errors.md` lists), and returns that line with
/// the code left out, as `error: …` (CLI-29). [`refused_code`] returns the code too.
pub fn refused<I, S>(work: &Work, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    refused_code(work, args).1
}

/// [`refused`], and the error's code.
pub fn refused_code<I, S>(work: &Work, args: I) -> (dogana_codes::Code, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = work.dogana(args).assert().code(1).get_output().clone();
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.ends_with('\n'));
    error_line(err.trim_end())
}

/// Runs `dogana ARGS` in `work`, expects exit status 3 (a transient failure) and one error
/// line, and returns its code and the line as [`refused`] does.
pub fn transient<I, S>(work: &Work, args: I) -> (dogana_codes::Code, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = work.dogana(args).assert().code(3).get_output().clone();
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let (code, line) = error_line(err.trim_end());
    assert_eq!(code.kind, dogana_codes::Kind::Transient, "{line}");
    (code, line)
}

/// An error line `error[DGN-…]: message`: its code (listed in `docs/errors.md`), and the line
/// as `error: message`.
pub fn error_line(line: &str) -> (dogana_codes::Code, String) {
    let rest = line
        .strip_prefix("error[")
        .unwrap_or_else(|| panic!("not an error line with a code: {line}"));
    let (id, message) = rest
        .split_once("]: ")
        .unwrap_or_else(|| panic!("not an error line with a code: {line}"));
    let code =
        dogana_codes::by_id(id).unwrap_or_else(|| panic!("{id} is not a listed code: {line}"));
    (code, format!("error: {message}"))
}

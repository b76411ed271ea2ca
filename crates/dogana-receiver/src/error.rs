//! What stops a delivery before the protocol can decide it: the receiver's own failures
//! (GATE-25). A delivery that contradicts its manifest is never an error: it is a rejected
//! receipt.

use std::error::Error;
use std::fmt;
use std::io;

use dogana::{InconsistentPublication, InvalidContract, SerializationError};
use dogana_rows::RowsError;

/// Why a [`Store`](crate::Store) operation failed. Nothing was committed: rows, ledger and
/// receipts are as they were.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The backend's database failed (a full disk, a read-only file, a lost connection...).
    Backend {
        /// The backend: `sqlite`, `duckdb`, ...
        backend: &'static str,
        /// What failed.
        source: Box<dyn Error + Send + Sync>,
    },
    /// The backend failed for a reason outside the call that retrying later can fix: a lost
    /// connection, a server that did not answer, a full disk ([`dogana_codes::Kind::Transient`]).
    /// Nothing was decided and nothing committed.
    Transient {
        /// The backend: `sqlite`, `postgres`, `lake`, ...
        backend: &'static str,
        /// [`dogana_codes::CONNECTION_LOST`] or [`dogana_codes::DISK_FULL`].
        code: dogana_codes::Code,
        /// What failed.
        source: Box<dyn Error + Send + Sync>,
    },
    /// Another writer holds the store's write lock and did not let go within the wait.
    Locked {
        /// The store.
        store: String,
        /// Who holds it, as far as the backend can tell, and how long we waited.
        holder: String,
    },
    /// The write transaction's commit found that another writer published into one of its
    /// tables after the transaction read it: a store without a write lock, whose commit is
    /// one conditional write (a Delta table's next log entry). Nothing was committed; the
    /// engine runs the write transaction again, which decides the delivery again against
    /// the new head (RECV-10), and returns this error only when other writers kept winning.
    Moved {
        /// The store and table.
        store: String,
        /// What moved, as far as the backend can tell.
        detail: String,
    },
    /// The file or database is not a dogana store (or not of this backend): nothing was
    /// changed in it.
    NotAStore(String),
    /// The store holds a table of the contract's name that dogana did not create (no ledger,
    /// no accepted receipt): a delivery would replace rows nobody delivered. Nothing changed.
    ForeignTable(String),
    /// The receiver's column types do not fit the file (a type for a column it lacks).
    ColumnTypes(String),
    /// The parts of a group delivery do not match its tables one to one (GROUP-17).
    Group(InvalidContract),
    /// A table of the group already belongs to another group the store holds.
    GroupOverlap {
        /// The table.
        table: String,
        /// The tables of the group the store holds it in.
        held: Vec<String>,
    },
    /// The store needs a backend this build does not have; the message says how to get it.
    Unavailable(String),
    /// The store's spec names no usable place: an empty path, the filesystem root, an
    /// in-memory database a command would lose when it exits. Nothing was opened.
    InvalidSpec(String),
    /// Reading the delivered file failed.
    Io(io::Error),
    /// The rows could not be checked for a reason that is not the delivery's fault (the
    /// receiver gave no column types while a column hash must be checked, an unsupported
    /// format...). See [`RowsError`].
    Rows(RowsError),
    /// The file's format is not known: name it with
    /// [`DeliverOptions::format`](crate::DeliverOptions::format).
    Format(String),
    /// The contract cannot follow the stored history: it changes a fixed field (EVOL-01,
    /// RECOVERY-03).
    Contract(InvalidContract),
    /// The table name cannot be a published table here: empty, with a NUL character, or one of
    /// the store's own names (`dogana_*`, `sqlite_*`), or another table of the store differs
    /// from it only in ASCII letter case (SQLite identifiers ignore it).
    TableName(String),
    /// A stored document does not read back, or the stored ledger and receipts disagree in a
    /// way that stops the operation (run [`Store::verify`](crate::Store::verify)).
    Corrupt(String),
    /// [`Store::commit`](crate::Store::commit) was given a decision that another store handle
    /// made, or that a later [`Store::decide`](crate::Store::decide) replaced.
    ForeignDecision,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Backend { backend, source } => write!(f, "{backend}: {source}"),
            StoreError::Transient { backend, source, .. } => write!(
                f,
                "{backend}: {source}; nothing was committed: try again when the store answers"
            ),
            StoreError::Locked { store, holder } => write!(
                f,
                "{store} is locked by another writer ({holder}); try again when it is done"
            ),
            StoreError::Moved { store, detail } => write!(
                f,
                "{store}: for two minutes, other writers published first each time this delivery was decided again ({detail}); nothing was committed: try again"
            ),
            StoreError::NotAStore(m) => write!(f, "not a dogana store: {m}"),
            StoreError::Unavailable(m) => f.write_str(m),
            StoreError::InvalidSpec(m) => write!(f, "unusable store spec: {m}"),
            StoreError::Group(e) => write!(f, "the group's deliveries do not match it: {e}"),
            StoreError::ColumnTypes(m) => f.write_str(m),
            StoreError::GroupOverlap { table, held } => write!(
                f,
                "table {table:?} was delivered in the group {}; a table belongs to one group, since deliveries accepted together replay together: deliver it with that group",
                held.join(", ")
            ),
            StoreError::ForeignTable(t) => write!(
                f,
                "the store already holds a table {t:?} that dogana did not create (no ledger, no receipt); dogana publishes only over tables it made: deliver to a new store, or under another table name, or adopt the table explicitly (DeliverOptions::adopt, dogana deliver --adopt), which replaces or changes its rows as the plan says"
            ),
            StoreError::Io(e) => write!(f, "reading the delivery failed: {e}"),
            StoreError::Rows(e) => write!(f, "{e}"),
            StoreError::Format(m) => f.write_str(m),
            StoreError::Contract(e) => {
                write!(f, "the contract cannot follow the stored history: {e}")
            }
            StoreError::TableName(m) => write!(f, "unusable table name: {m}"),
            StoreError::Corrupt(m) => write!(f, "the store is inconsistent: {m}"),
            StoreError::ForeignDecision => f.write_str(
                "this decision was not made by this store handle, or a later decide replaced it",
            ),
        }
    }
}

impl Error for StoreError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            StoreError::Backend { source, .. } | StoreError::Transient { source, .. } => {
                Some(source.as_ref())
            }
            StoreError::Io(e) => Some(e),
            StoreError::Rows(e) => Some(e),
            StoreError::Contract(e) | StoreError::Group(e) => Some(e),
            _ => None,
        }
    }
}

impl StoreError {
    /// A backend's own error. One whose cause is an I/O failure that retrying can fix (a
    /// connection refused, reset or timed out, a full disk: [`transient_io`]) anywhere in its
    /// chain is [`StoreError::Transient`]; any other is [`StoreError::Backend`].
    pub fn backend(backend: &'static str, e: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        let source = e.into();
        match transient_io(source.as_ref()) {
            Some(code) => StoreError::Transient {
                backend,
                code,
                source,
            },
            None => StoreError::Backend { backend, source },
        }
    }

    /// A backend's error that retrying later can fix, with its code
    /// ([`dogana_codes::CONNECTION_LOST`], [`dogana_codes::DISK_FULL`]).
    pub fn transient(
        backend: &'static str,
        code: dogana_codes::Code,
        e: impl Into<Box<dyn Error + Send + Sync>>,
    ) -> Self {
        StoreError::Transient {
            backend,
            code,
            source: e.into(),
        }
    }

    /// The stable code of this error (`docs/errors.md`). Its kind says whether retrying can
    /// help: only [`StoreError::Locked`] and [`StoreError::Transient`] are transient.
    ///
    /// ```
    /// use dogana_receiver::StoreError;
    /// let e = StoreError::Locked { store: "s.db".into(), holder: "pid 7".into() };
    /// assert_eq!(e.code(), dogana_codes::STORE_LOCKED);
    /// assert!(e.code().kind == dogana_codes::Kind::Transient);
    /// ```
    pub fn code(&self) -> dogana_codes::Code {
        use dogana_codes as codes;
        match self {
            StoreError::Backend { .. } | StoreError::ForeignDecision => codes::STORE_FAILED,
            StoreError::Transient { code, .. } => *code,
            StoreError::Locked { .. } | StoreError::Moved { .. } => codes::STORE_LOCKED,
            StoreError::NotAStore(_) => codes::NOT_A_STORE,
            StoreError::ForeignTable(_) => codes::FOREIGN_TABLE,
            StoreError::ColumnTypes(_) => codes::OPTION_INVALID,
            StoreError::Group(_) | StoreError::GroupOverlap { .. } => codes::GROUP_CONFLICT,
            StoreError::Unavailable(_) => codes::BACKEND_NOT_BUILT,
            StoreError::InvalidSpec(_) => codes::STORE_SPEC_INVALID,
            StoreError::Io(e) => match transient_io(e) {
                Some(code) => code,
                None => codes::FILE_UNREADABLE,
            },
            StoreError::Rows(RowsError::ColumnTypesRequired(_)) => codes::COLUMN_TYPES_REQUIRED,
            StoreError::Rows(RowsError::Unsupported(_)) | StoreError::Format(_) => {
                codes::FORMAT_UNSUPPORTED
            }
            StoreError::Rows(RowsError::Manifest(_)) => codes::MANIFEST_INVALID,
            StoreError::Rows(_) => codes::FILE_UNREADABLE,
            StoreError::Contract(_) => codes::CONTRACT_CONFLICT,
            StoreError::TableName(_) => codes::TABLE_NAME_UNUSABLE,
            StoreError::Corrupt(_) => codes::STORE_INCONSISTENT,
        }
    }
}

/// The transient code of an I/O failure in `e`'s chain of sources, if one is there: a full
/// disk ([`dogana_codes::DISK_FULL`]), or a connection refused, reset, aborted, timed out or
/// cut ([`dogana_codes::CONNECTION_LOST`]).
pub fn transient_io(e: &(dyn Error + 'static)) -> Option<dogana_codes::Code> {
    use io::ErrorKind as K;
    let mut at: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(c) = at {
        if let Some(io) = c.downcast_ref::<io::Error>() {
            match io.kind() {
                K::StorageFull | K::QuotaExceeded => return Some(dogana_codes::DISK_FULL),
                K::ConnectionRefused
                | K::ConnectionReset
                | K::ConnectionAborted
                | K::NotConnected
                | K::TimedOut
                | K::BrokenPipe
                | K::HostUnreachable
                | K::NetworkUnreachable
                | K::NetworkDown => return Some(dogana_codes::CONNECTION_LOST),
                _ => {}
            }
        }
        at = c.source();
    }
    None
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> Self {
        StoreError::Io(e)
    }
}

impl From<RowsError> for StoreError {
    fn from(e: RowsError) -> Self {
        match e {
            RowsError::Io(e) => StoreError::Io(e),
            e => StoreError::Rows(e),
        }
    }
}

impl From<SerializationError> for StoreError {
    fn from(e: SerializationError) -> Self {
        StoreError::Corrupt(format!("a stored document does not read back: {e}"))
    }
}

impl From<InconsistentPublication> for StoreError {
    fn from(e: InconsistentPublication) -> Self {
        StoreError::Corrupt(e.to_string())
    }
}

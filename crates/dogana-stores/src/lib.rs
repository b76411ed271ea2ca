//! # dogana-stores: one way to name a store
//!
//! A store is named by a spec, as `--store` takes it:
//!
//! | spec | backend |
//! | --- | --- |
//! | `sqlite:PATH`, or a PATH ending `.db`, `.sqlite`, `.sqlite3` | SQLite (always built) |
//! | `duckdb:PATH`, or a PATH ending `.duckdb` | DuckDB (the `duckdb` feature) |
//! | `postgres://USER@HOST:PORT/DB?schema=NAME`, `postgresql://…` | Postgres (the `postgres` feature): what the URL leaves out comes from `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE` and `~/.pgpass`; the schema defaults to `public` |
//! | `file://…`, `memory://…`, `s3://…`, `gs://…`, `az://…`, `lake:PATH` | the lake store (the `lake` feature) |
//! | `delta+file://…`, `delta+s3://…`, `delta+gs://…`, `delta+az://…`, `delta:PATH` | Delta Lake tables (the `delta` feature) |
//! | any other PATH | SQLite, the embedded default |
//!
//! [`open`] gives the engine over the chosen backend as one [`AnyStore`] object. A backend
//! this build lacks is refused with a message saying how to build it
//! ([`StoreError::Unavailable`]).
//!
//! ```
//! use dogana_stores::{Backend, Spec};
//! assert_eq!(Spec::parse("orders.duckdb").backend(), Backend::DuckDb);
//! assert_eq!(Spec::parse("sqlite:orders.duckdb").backend(), Backend::Sqlite);
//! assert_eq!(Spec::parse("orders.db").backend(), Backend::Sqlite);
//! assert_eq!(Spec::parse("postgres://me@127.0.0.1/db").backend(), Backend::Postgres);
//! assert_eq!(Spec::parse("delta+file:///data/delta").backend(), Backend::Delta);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use dogana_receiver::{AnyStore, StoreError};

/// An opened store, whatever its backend; it may move to another thread.
pub type Opened = Box<dyn AnyStore + Send>;

/// A backend a spec can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite, the embedded default.
    Sqlite,
    /// DuckDB.
    DuckDb,
    /// Postgres.
    Postgres,
    /// The lake store: Parquet parts and a pointer per table on an object store.
    Lake,
    /// Delta Lake tables, one Delta commit per delivery.
    Delta,
}

impl Backend {
    /// The backend's name, as the spec prefix writes it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::DuckDb => "duckdb",
            Backend::Postgres => "postgres",
            Backend::Lake => "lake",
            Backend::Delta => "delta",
        }
    }

    /// Whether this build of dogana has the backend.
    pub fn built(self) -> bool {
        match self {
            Backend::Sqlite => true,
            Backend::DuckDb => cfg!(feature = "duckdb"),
            Backend::Postgres => cfg!(feature = "postgres"),
            Backend::Lake => cfg!(feature = "lake"),
            Backend::Delta => cfg!(feature = "delta"),
        }
    }
}

/// A store's name: its backend and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A DuckDB database file.
    DuckDb(PathBuf),
    /// A Postgres connection URL.
    Postgres(String),
    /// A lake store root: a URL (`file://`, `memory://`, `s3://`, `gs://`, `az://`) or, as
    /// `lake:PATH`, a local directory.
    Lake(String),
    /// A store of Delta tables: `delta+URL` (`file://`, `memory://`, `s3://`, `gs://`,
    /// `az://`) or, as `delta:PATH`, a local directory; held as written.
    Delta(String),
}

impl Spec {
    /// Reads a spec (see the crate documentation). Every string is a spec: what is not a
    /// prefix or a known extension is a SQLite path.
    pub fn parse(spec: &str) -> Spec {
        if let Some(path) = spec.strip_prefix("sqlite:") {
            return Spec::Sqlite(PathBuf::from(path));
        }
        if let Some(path) = spec.strip_prefix("duckdb:") {
            return Spec::DuckDb(PathBuf::from(path));
        }
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            return Spec::Postgres(spec.to_owned());
        }
        if spec.starts_with("delta+") || spec.starts_with("delta:") {
            return Spec::Delta(spec.to_owned());
        }
        if let Some(path) = spec.strip_prefix("lake:") {
            return Spec::Lake(path.to_owned());
        }
        if ["file://", "memory://", "s3://", "gs://", "az://"]
            .iter()
            .any(|p| spec.starts_with(p))
        {
            return Spec::Lake(spec.to_owned());
        }
        let path = PathBuf::from(spec);
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("duckdb") => Spec::DuckDb(path),
            _ => Spec::Sqlite(path),
        }
    }

    /// The backend it names.
    pub fn backend(&self) -> Backend {
        match self {
            Spec::Sqlite(_) => Backend::Sqlite,
            Spec::DuckDb(_) => Backend::DuckDb,
            Spec::Postgres(_) => Backend::Postgres,
            Spec::Lake(_) => Backend::Lake,
            Spec::Delta(_) => Backend::Delta,
        }
    }

    /// Refuses a spec that names no usable place (`StoreError::InvalidSpec`), before
    /// anything is opened: an empty path (`sqlite:`, `duckdb:`, `lake:`, `file://` without
    /// one), the filesystem root (`file:///`, where a delivery would write `/store-id`), and,
    /// when the store must outlive the process (`durable`: every command line call), an
    /// in-memory database (`:memory:`, `memory://`), which would report a delivery accepted
    /// and lose it when the process exits.
    ///
    /// ```
    /// use dogana_stores::Spec;
    /// assert!(Spec::parse("orders.db").check(true).is_ok());
    /// assert!(Spec::parse("sqlite:").check(false).is_err());
    /// assert!(Spec::parse("file://").check(false).is_err());
    /// assert!(Spec::parse("duckdb::memory:").check(true).is_err());
    /// assert!(Spec::parse("memory://x").check(false).is_ok());
    /// ```
    pub fn check(&self, durable: bool) -> Result<(), StoreError> {
        let written = match self {
            Spec::Sqlite(p) => format!("sqlite:{}", p.display()),
            Spec::DuckDb(p) => format!("duckdb:{}", p.display()),
            other => other.to_string(),
        };
        let refuse = |why: &str| Err(StoreError::InvalidSpec(format!("{written:?} {why}")));
        let memory = "is an in-memory database, gone with the process: a delivery would be reported accepted and then lost; name a file or a directory";
        match self {
            Spec::Sqlite(p) | Spec::DuckDb(p) => {
                let text = p.to_string_lossy();
                if text.trim().is_empty() {
                    return refuse(
                        "names no file; write the database's path, as in sqlite:orders.db",
                    );
                }
                if durable && (text == ":memory:" || text.starts_with("file::memory:")) {
                    return refuse(memory);
                }
            }
            Spec::Lake(root) | Spec::Delta(root) => {
                let root = root
                    .strip_prefix("delta+")
                    .or_else(|| root.strip_prefix("delta:"))
                    .unwrap_or(root);
                let path = root
                    .strip_prefix("file://")
                    .or_else(|| (!root.contains("://")).then_some(root));
                if let Some(path) = path {
                    if path.trim().is_empty() {
                        return refuse("names no directory; write the store's directory, as in file:///data/lake or lake:DIR");
                    }
                    if Path::new(path)
                        .components()
                        .all(|c| matches!(c, std::path::Component::RootDir))
                    {
                        return refuse("is the filesystem root; name the store's own directory, as in file:///data/lake");
                    }
                }
                if durable && root.starts_with("memory://") {
                    return refuse(memory);
                }
            }
            Spec::Postgres(_) => {}
        }
        Ok(())
    }

    /// The file it names, for a file backend.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Spec::Sqlite(p) | Spec::DuckDb(p) => Some(p),
            Spec::Postgres(_) | Spec::Lake(_) | Spec::Delta(_) => None,
        }
    }
}

/// The spec as a user would write it again (a Postgres URL without its password).
impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::Sqlite(p) => write!(f, "{}", p.display()),
            Spec::DuckDb(p) => write!(f, "{}", p.display()),
            Spec::Postgres(url) | Spec::Lake(url) | Spec::Delta(url) => {
                f.write_str(&without_password(url))
            }
        }
    }
}

/// A URL with the password of its user info replaced by `***`; anything else unchanged (a
/// store spec as the user wrote it, prefix and all, is how messages show it).
///
/// ```
/// assert_eq!(dogana_stores::without_password("postgres://me:secret@db/x"), "postgres://me:***@db/x");
/// assert_eq!(dogana_stores::without_password("duckdb:orders.db"), "duckdb:orders.db");
/// ```
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{scheme}://{name}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The stable code of a store's error (`docs/errors.md`): [`StoreError::code`], with the
/// lake store's own refusals named by theirs (`dogana_lake::LakeError::code`).
///
/// ```
/// use dogana_stores::{code_of, StoreError};
/// assert_eq!(code_of(&StoreError::NotAStore("x".into())), dogana_codes::NOT_A_STORE);
/// ```
pub fn code_of(e: &StoreError) -> dogana_codes::Code {
    #[cfg(feature = "lake")]
    if let Some(l) = dogana_lake::LakeError::of(e) {
        return match e {
            StoreError::Transient { code, .. } => *code,
            _ => l.code(),
        };
    }
    e.code()
}

fn unavailable(backend: Backend, spec: &Spec) -> StoreError {
    let how = format!(
        "this dogana was built without the {0} backend; build it with `bash scripts/build-full.sh` or `cargo build --release -p dogana-cli --features {0}` (README, \"Every backend\")",
        backend.name()
    );
    StoreError::Unavailable(format!("store {spec} needs {}: {how}", backend.name()))
}

/// How to open a store, whatever its backend.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    lock_timeout: Option<Duration>,
    fold_after_delivery: bool,
}

impl OpenOptions {
    /// Each backend's defaults (a 60 s wait for another writer).
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// A lake store folds each table a delivery publishes when its size tiers ask for it
    /// (`dogana_lake::LakeOptions::fold_after_delivery`); other stores have no parts to fold
    /// and ignore it.
    pub fn fold_after_delivery(mut self, fold: bool) -> OpenOptions {
        self.fold_after_delivery = fold;
        self
    }

    /// How long to wait for another writer's lock before refusing with
    /// [`StoreError::Locked`]: SQLite's busy timeout, DuckDB's file and write locks, Postgres's
    /// per-table advisory lock.
    pub fn lock_timeout(mut self, timeout: Duration) -> OpenOptions {
        self.lock_timeout = Some(timeout);
        self
    }
}

/// Opens the store a spec names: for writing (creating it when missing) or for reading only
/// (nothing in it changes; a missing store, or one that is not a dogana store, is refused).
pub fn open(spec: &Spec, write: bool) -> Result<Opened, StoreError> {
    open_with(spec, write, &OpenOptions::default())
}

/// [`open`] with options.
pub fn open_with(spec: &Spec, write: bool, options: &OpenOptions) -> Result<Opened, StoreError> {
    use dogana_receiver::{Open, Store};
    spec.check(false)?;
    let backend = spec.backend();
    if !backend.built() {
        return Err(unavailable(backend, spec));
    }
    match spec {
        Spec::Sqlite(path) => {
            let mut o = dogana_sqlite::StoreOptions::default();
            if let Some(t) = options.lock_timeout {
                o = o.busy_timeout(t);
            }
            let b = dogana_sqlite::Sqlite::open(path, &o, write)?;
            Ok(Box::new(Store::new(b)))
        }
        #[cfg(feature = "duckdb")]
        Spec::DuckDb(path) => {
            let mut o = dogana_duckdb::DuckDbOptions::default();
            if let Some(t) = options.lock_timeout {
                o = o.lock_timeout(t);
            }
            let b = dogana_duckdb::DuckDb::open(path, &o, write)?;
            Ok(Box::new(Store::new(b)))
        }
        #[cfg(feature = "lake")]
        Spec::Lake(root) => {
            let mut o = dogana_lake::LakeOptions::default();
            if let Some(t) = options.lock_timeout {
                o.lock_wait = t;
            }
            o.fold_after_delivery = options.fold_after_delivery;
            let b = dogana_lake::Lake::open(Path::new(root), &o, write)?;
            Ok(Box::new(Store::new(b)))
        }
        #[cfg(feature = "delta")]
        Spec::Delta(spec) => {
            let b = dogana_delta::Delta::open_url(spec, write)?;
            Ok(Box::new(Store::new(b)))
        }
        #[cfg(feature = "postgres")]
        Spec::Postgres(url) => {
            let mut o = dogana_postgres::PostgresOptions::default();
            if let Some(t) = options.lock_timeout {
                o = o.lock_timeout(t);
            }
            let b = dogana_postgres::Postgres::connect(url, &o, write)?;
            Ok(Box::new(Store::new(b)))
        }
        #[allow(unreachable_patterns)]
        _ => Err(unavailable(backend, spec)),
    }
}

/// The columns of table or view `table` in the database a spec names, in order, each with its
/// type as that database's catalog spells it (SQLite's declared type, DuckDB's
/// `information_schema.columns`, Postgres's `format_type`); None when it holds no such table.
/// Read-only, through each backend's own connection; the database need not be a dogana store.
/// A lake store has no catalog: its tables' columns are in their Parquet parts.
pub fn table_columns(
    spec: &Spec,
    table: &str,
) -> Result<Option<Vec<(String, String)>>, StoreError> {
    let backend = spec.backend();
    if !backend.built() {
        return Err(unavailable(backend, spec));
    }
    match spec {
        Spec::Sqlite(path) => dogana_sqlite::table_columns(path, table),
        #[cfg(feature = "duckdb")]
        Spec::DuckDb(path) => dogana_duckdb::table_columns(path, table),
        #[cfg(feature = "postgres")]
        Spec::Postgres(url) => dogana_postgres::table_columns(url, table),
        Spec::Lake(_) => Err(StoreError::Unavailable(format!(
            "store {spec} is a lake store, which has no catalog: read a table's columns from one of its Parquet parts (--from-parquet)"
        ))),
        Spec::Delta(_) => Err(StoreError::Unavailable(format!(
            "store {spec} is a store of Delta tables, which has no catalog: read a table's columns from one of its Parquet files (--from-parquet)"
        ))),
        #[allow(unreachable_patterns)]
        _ => Err(unavailable(backend, spec)),
    }
}

/// Opens the catalog a URL names, as the port (`topology.coordinate.catalog-port`): a
/// SQLite file (`sqlite:///dir/machine.sqlite`, `sqlite:PATH` or a plain path), the
/// single-node default, or a Postgres schema (`postgres://USER@HOST:PORT/DB?schema=NAME`,
/// the `postgres` feature) for a cluster. Engine code holds what this returns and never
/// names the backend.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("machine.sqlite");
/// let mut catalog = dogana_stores::open_catalog(&path.display().to_string()).unwrap();
/// assert!(catalog.now_ms().unwrap() > 0);
/// ```
pub fn open_catalog(
    url: &str,
) -> Result<Box<dyn dogana_catalog::Catalog>, dogana_catalog::CatalogError> {
    use dogana_catalog::CatalogError;
    let invalid = |reason: String| CatalogError::UrlInvalid {
        url: without_password(url).chars().take(200).collect(),
        reason,
    };
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return Ok(Box::new(dogana_postgres::catalog::connect(url)?));
        #[cfg(not(feature = "postgres"))]
        return Err(invalid(
            "this build of dogana has no Postgres backend: build it with the `postgres` feature (scripts/build-full.sh builds every backend)".into(),
        ));
    }
    let path = match url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
    {
        Some(p) => p,
        None if url.contains("://") => {
            return Err(invalid(
                "a catalog is a SQLite file or a Postgres schema; this scheme is neither".into(),
            ))
        }
        None => url,
    };
    if path.is_empty() {
        return Err(invalid("no path".into()));
    }
    Ok(Box::new(dogana_sqlite::catalog::open(Path::new(path))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalog_url_picks_its_backend_and_an_unknown_one_is_refused_naming_it() {
        // rule: topology.coordinate.catalog-port
        let dir = std::env::temp_dir().join(format!("dogana-catalog-url-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for url in [
            format!("sqlite://{}/a.sqlite", dir.display()),
            format!("sqlite:{}/b.sqlite", dir.display()),
            format!("{}/c.sqlite", dir.display()),
        ] {
            let mut c = open_catalog(&url).unwrap();
            assert!(c.now_ms().unwrap() > 0, "{url}");
        }
        for (url, why) in [
            ("s3://bucket/machine.sqlite", "neither"),
            ("sqlite://", "no path"),
        ] {
            match open_catalog(url) {
                Err(e @ dogana_catalog::CatalogError::UrlInvalid { .. }) => {
                    let m = e.to_string();
                    assert!(m.contains(url) && m.contains(why), "{m}");
                }
                Err(e) => panic!("{url}: {e}"),
                Ok(_) => panic!("{url} opened"),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_password_is_never_shown() {
        let spec = Spec::parse("postgres://me:secret@127.0.0.1:5432/db?schema=x");
        assert_eq!(
            spec.to_string(),
            "postgres://me:***@127.0.0.1:5432/db?schema=x"
        );
        assert!(!unavailable(Backend::Postgres, &spec)
            .to_string()
            .contains("secret"));
    }

    #[test]
    fn extensions_pick_the_backend() {
        assert_eq!(Spec::parse("a/b.DuckDB").backend(), Backend::DuckDb);
        assert_eq!(Spec::parse("a/b.sqlite").backend(), Backend::Sqlite);
        assert_eq!(Spec::parse("a/b").backend(), Backend::Sqlite);
        assert_eq!(
            Spec::parse("duckdb:x.db"),
            Spec::DuckDb(PathBuf::from("x.db"))
        );
    }

    #[test]
    fn urls_name_the_lake() {
        for url in [
            "file:///tmp/x",
            "memory://m",
            "s3://b/p",
            "gs://b/p",
            "az://c/p",
        ] {
            assert_eq!(Spec::parse(url), Spec::Lake(url.to_owned()));
        }
        assert_eq!(Spec::parse("lake:dir"), Spec::Lake("dir".to_owned()));
    }

    #[test]
    #[cfg(feature = "lake")]
    fn a_lake_url_opens_the_lake() {
        let dir = std::env::temp_dir().join(format!("dogana-stores-lake-{}", std::process::id()));
        let url = format!("file://{}", dir.display());
        let mut s = open(&Spec::parse(&url), true).expect("opens");
        assert!(s.tables().unwrap().is_empty());
        assert!(open(&Spec::parse(&url), false).is_ok());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    #[cfg(not(feature = "duckdb"))]
    fn a_backend_not_built_says_how_to_build_it() {
        let e = open(&Spec::parse("x.duckdb"), false)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("--features duckdb"), "{e}");
    }
}

//! # dogana-serve: the receiving service
//!
//! The sender is often another organisation: a vendor, a partner, a SaaS export job. It pushes
//! files to an endpoint or drops them in a landing folder, and the receiving team wants each
//! delivery checked the moment it arrives, refused with a reason the sender can read, and the
//! evidence kept. This crate is both ways in, over any store `dogana-stores` opens:
//!
//! - [`serve`] — `dogana serve`: HTTP (TLS with rustls, or plain HTTP on loopback), bearer
//!   tokens per sender with per-table grants, `POST /v1/tables/{table}/deliveries` (a
//!   multipart body: `manifest`, then `file`, streamed to a staging file),
//!   `POST /v1/groups/deliveries` (a manifest and its file per table, one decision), the read routes
//!   (claims, receipts, plan, next), `/healthz`, `/readyz`, `/metrics` (Prometheus text) and
//!   `/v1/openapi.json` ([`OPENAPI`]).
//! - [`watch`] — `dogana watch`: a landing folder; each `FILE` is delivered once its
//!   `FILE.json` manifest is there and both have stayed unchanged for a while, then moved to
//!   `accepted/` or `rejected/` with its receipt beside it.
//!
//! Reads a sender pushes and reads a receiver pulls pass the same gate: both call the delivery
//! engine's `deliver_with`, as `dogana deliver` does, with the sender's name as the receipt's
//! `source`. A decision made on a head that moved is made again inside the engine (RECV-10):
//! the sender never sees it.
//!
//! ```text
//!   sender ──HTTP──► axum router ──► auth (Senders) ──► stage file ──► per-table slot
//!                                                                          │ spawn_blocking
//!   landing folder ──► watch (poll, stable, manifest) ─────────────────────┤
//!                                                                          ▼
//!                 dogana_stores::open_with(--store) ─► Store::deliver_with / deliver_group
//! ```
//!
//! ## Decisions
//!
//! - **Write handles are kept between deliveries** (`Writers`, at most 16 idle): a Postgres
//!   connection, the lake's object-store client, a SQLite connection are opened once, not per
//!   delivery, and each serves one delivery at a time. A handle that met an error is dropped.
//!   DuckDB keeps none (its handle holds the file's lock). The backends' own write locks order
//!   deliveries to one table; the service's per-table slots (`--max-concurrent`) only bound how
//!   many wait on that lock.
//! - **The accept loop is ours** (hyper-util's connection builder, not `axum::serve`): it
//!   needs the TLS handshake, hyper's header read timeout (a slow-loris client is dropped)
//!   and a graceful shutdown that also waits for decisions whose sender went away.
//! - **Contracts are read by the caller's loader** ([`ContractLoader`]): the command line
//!   passes the reader `dogana deliver --contract` uses, so a contract file means one thing.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod contracts;
mod deliver;
mod error;
mod lineage;
mod metrics;
mod queries;
mod senders;
mod server;
mod staging;
pub mod watch;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use contracts::{ContractLoader, Contracts, TableContract};
pub use error::ApiError;
pub use senders::{Sender, Senders};
pub use server::{OPENAPI, ROUTES};

/// How `dogana serve` runs.
pub struct ServeConfig {
    /// The store deliveries go to.
    pub store: dogana_stores::Spec,
    /// The contracts folder: `TABLE.toml` or `TABLE.json` per table.
    pub contracts: PathBuf,
    /// The tokens file ([`Senders`]).
    pub tokens: PathBuf,
    /// Reads one contract file.
    pub load_contract: ContractLoader,
    /// Where to listen.
    pub listen: SocketAddr,
    /// Plain HTTP on an address other than loopback (refused unless set).
    pub insecure_listen: bool,
    /// TLS: the certificate chain and private key, PEM files.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The largest delivered file taken, in bytes (413 above).
    pub max_bytes: u64,
    /// Deliveries to one table that may wait on its write lock at once; the others queue.
    pub max_concurrent: usize,
    /// How long a request may send nothing (headers, or between chunks of the body).
    pub request_timeout: Duration,
    /// How long a delivery waits for the store's write lock.
    pub lock_timeout: Duration,
    /// Where uploads are staged before the engine reads them: the service stages in a folder
    /// of its own under this one, and removes what killed services left there.
    pub staging: PathBuf,
    /// OpenLineage run events appended to this file, one per decided receipt.
    pub lineage_file: Option<PathBuf>,
    /// OpenLineage run events posted to this URL (http or https), one per decided receipt.
    pub lineage_url: Option<String>,
}

/// Why the service did not start or stopped on an error.
#[derive(Debug)]
pub struct ServeError(pub ApiError);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.message.fmt(f)
    }
}

impl std::error::Error for ServeError {}

fn config_refusal(message: String) -> ServeError {
    ServeError(ApiError::new(
        axum::http::StatusCode::INTERNAL_SERVER_ERROR,
        dogana_codes::SERVICE_CONFIG_INVALID,
        "serve.config",
        message,
    ))
}

/// The `--lineage-url`, once it is an http or https URL.
fn lineage_url(text: &str) -> Result<reqwest::Url, ServeError> {
    match reqwest::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(url),
        Ok(url) => Err(config_refusal(format!(
            "--lineage-url {:?}: the scheme is {}; OpenLineage events are posted over http or https",
            error::cut(text),
            url.scheme()
        ))),
        Err(e) => Err(config_refusal(format!(
            "--lineage-url {:?} is not a URL: {e}",
            error::cut(text)
        ))),
    }
}

fn tls_acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor, ServeError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|e| config_refusal(format!("--tls-cert {}: {e}", cert.display())))?;
    if certs.is_empty() {
        return Err(config_refusal(format!(
            "--tls-cert {}: no certificate in it",
            cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| config_refusal(format!("--tls-key {}: {e}", key.display())))?;
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
    .map_err(|e| config_refusal(format!("the TLS certificate and key: {e}")))?;
    Ok(tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config)))
}

/// The service's routes without the accept loop: for a test, a fuzzer, or a server of one's
/// own in front. The staging folder under `config.staging` is this value's while it lives.
///
/// Built inside a tokio runtime when `config.lineage_url` is set (the poster is a task of it).
/// `listen`, `insecure_listen` and `tls` are not used: they belong to [`serve`].
pub struct App {
    service: std::sync::Arc<server::Service>,
    // dropped after the service: it removes the folder the service stages in
    _staging: staging::Staging,
}

impl App {
    /// Reads the tokens file and the contracts folder and sets up the staging folder.
    pub fn new(mut config: ServeConfig) -> Result<App, ServeError> {
        let staging = staging::Staging::claim(&config.staging).map_err(|e| {
            config_refusal(format!(
                "cannot set up the staging folder {}: {e}",
                config.staging.display()
            ))
        })?;
        config.staging = staging.dir().to_owned();
        let service = server::Service::new(config).map_err(ServeError)?;
        Ok(App {
            service: std::sync::Arc::new(service),
            _staging: staging,
        })
    }

    /// Every route of [`ROUTES`], as an axum router.
    pub fn router(&self) -> axum::Router {
        server::router(self.service.clone())
    }
}

/// Runs the service until SIGTERM or SIGINT. `ready` is called with the bound address once it
/// accepts connections (the command line prints it: with port 0 the system picks one).
///
/// Refused before anything listens: a tokens file or contracts folder that does not read, a
/// TLS certificate or key that does not load, plain HTTP on an address other than loopback
/// without `insecure_listen`.
pub fn serve(config: ServeConfig, ready: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    if config.tls.is_none() && !config.listen.ip().is_loopback() && !config.insecure_listen {
        return Err(config_refusal(format!(
            "{} is not a loopback address, and plain HTTP there would carry bearer tokens in \
             clear: give --tls-cert and --tls-key, or --insecure-listen behind a proxy that \
             terminates TLS",
            config.listen
        )));
    }
    let tls = match &config.tls {
        Some((cert, key)) => Some(tls_acceptor(cert, key)?),
        None => None,
    };
    let listen = config.listen;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| config_refusal(format!("cannot start the runtime: {e}")))?;
    // the lineage poster is a task of this runtime
    let app = {
        let _in_runtime = runtime.enter();
        App::new(config)?
    };
    let service = app.service.clone();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| config_refusal(format!("cannot listen on {listen}: {e}")))?;
        server::run(service, listener, tls, ready)
            .await
            .map_err(|e| config_refusal(format!("the service stopped: {e}")))
    })
}

/// Structured logs: one JSON object per line on standard error (`RUST_LOG`-free: info and
/// above). Sender text inside is JSON-escaped.
pub fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .json()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .try_init();
}

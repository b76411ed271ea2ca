//! `dogana serve`: the HTTP routes, the accept loop (TLS, header read timeout, graceful
//! shutdown) and the reload on SIGHUP.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::extract::{DefaultBodyLimit, Multipart, Path as UrlPath, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use dogana::{FromWire, Manifest, Outcome, Wire};
use dogana_codes as codes;
use dogana_receiver::Format;
use tokio::io::AsyncWriteExt;
use tokio::sync::{Notify, Semaphore};

use crate::contracts::{Contracts, TableContract};
use crate::deliver::{self, answer};
use crate::error::{cut, ApiError};
use crate::lineage::Lineage;
use crate::metrics::{self, Metrics};
use crate::senders::{Sender, Senders};
use crate::{queries, ServeConfig};

/// The OpenAPI document of every route, as checked in.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// The largest manifest part read (a manifest names nothing over 1,024 bytes; this leaves
/// room for every field).
const MANIFEST_MAX: usize = 1 << 20;

/// Write handles of the store kept open between deliveries ([`deliver::Writers`]).
const WRITERS_KEPT: usize = 16;

pub(crate) struct Service {
    config: ServeConfig,
    senders: RwLock<Arc<Senders>>,
    contracts: RwLock<Arc<Contracts>>,
    table_slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    metrics: Metrics,
    lineage: Option<Lineage>,
    writers: deliver::Writers,
    stopping: AtomicBool,
    in_flight: AtomicUsize,
    idle: Notify,
}

pub(crate) type Shared = Arc<Service>;

impl Service {
    pub(crate) fn new(config: ServeConfig) -> Result<Service, ApiError> {
        let senders = Senders::load(&config.tokens).map_err(config_error)?;
        let contracts =
            Contracts::load(&config.contracts, &config.load_contract).map_err(config_error)?;
        let url = config
            .lineage_url
            .as_deref()
            .map(crate::lineage_url)
            .transpose()
            .map_err(|e| e.0)?;
        let lineage = Lineage::new(config.lineage_file.as_deref(), url.as_ref());
        Ok(Service {
            senders: RwLock::new(Arc::new(senders)),
            contracts: RwLock::new(Arc::new(contracts)),
            table_slots: Mutex::new(HashMap::new()),
            metrics: Metrics::new(),
            lineage,
            writers: deliver::Writers::new(config.store.clone(), config.lock_timeout, WRITERS_KEPT),
            stopping: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
            config,
        })
    }

    /// Reads the tokens file and the contracts folder again; on a refusal keeps the last good
    /// ones and says why.
    pub(crate) fn reload(&self) -> Result<(usize, usize), String> {
        let senders = Senders::load(&self.config.tokens)?;
        let contracts = Contracts::load(&self.config.contracts, &self.config.load_contract)?;
        let counts = (senders.len(), contracts.len());
        *self.senders.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(senders);
        *self.contracts.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(contracts);
        Ok(counts)
    }

    fn contracts(&self) -> Arc<Contracts> {
        self.contracts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The sender a request's bearer token names (401 otherwise).
    fn sender(&self, headers: &HeaderMap) -> Result<Sender, ApiError> {
        let unauthorized = |why: &str| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                "serve.auth.token",
                format!("{why}; send Authorization: Bearer TOKEN"),
            )
        };
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Err(unauthorized("the request has no Authorization header"));
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| unauthorized("the Authorization header is not a bearer token"))?;
        let senders = self
            .senders
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        senders
            .authenticate(token)
            .cloned()
            .ok_or_else(|| unauthorized("no sender holds this token"))
    }

    /// The table's contract, once the sender may `deliver` (or read) it: a table not granted
    /// is 403 whether or not it exists; a granted table without a contract 404.
    fn table(
        &self,
        sender: &Sender,
        table: &str,
        deliver: bool,
    ) -> Result<Arc<TableContract>, ApiError> {
        check_table_name(table)?;
        let granted = if deliver {
            sender.may_deliver(table)
        } else {
            sender.may_read(table)
        };
        if !granted {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                codes::FORBIDDEN,
                "serve.auth.grant",
                format!(
                    "sender {:?} may not {} this table",
                    cut(&sender.name),
                    if deliver { "deliver to" } else { "read" }
                ),
            )
            .at("table", table));
        }
        self.contracts().get(table).ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                codes::TABLE_UNKNOWN,
                "serve.contracts",
                "the receiver holds no contract for this table; ask the receiving team to add \
                 one to its contracts folder",
            )
            .at("table", table)
        })
    }

    fn slot(&self, table: &str) -> Arc<Semaphore> {
        let mut slots = self.table_slots.lock().unwrap_or_else(|p| p.into_inner());
        slots
            .entry(table.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(self.config.max_concurrent.max(1))))
            .clone()
    }
}

fn config_error(message: String) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        codes::SERVICE_CONFIG_INVALID,
        "serve.config",
        message,
    )
}

/// A table name from the URL: what could leave a folder or hide in a log is refused.
pub(crate) fn check_table_name(table: &str) -> Result<(), ApiError> {
    let bad = table.is_empty()
        || table.len() > dogana::NAME_MAX
        || table == "."
        || table == ".."
        || table.contains(['/', '\\'])
        || table.chars().any(char::is_control);
    if bad {
        return Err(ApiError::bad_request(
            "serve.path",
            "a table name is a non-empty text of at most 1,024 bytes without /, \\, control \
             characters, and is not . or ..",
        )
        .at("table", table));
    }
    Ok(())
}

/// A delivered file's name from its multipart part: only its extension is used, and a name
/// that could leave a folder is refused.
fn file_format(name: Option<&str>, query: Option<&str>) -> Result<Format, ApiError> {
    if let Some(name) = name {
        if name.contains(['/', '\\'])
            || name.split('.').all(str::is_empty)
            || name.contains("..")
            || name.chars().any(char::is_control)
        {
            return Err(ApiError::bad_request(
                "serve.path",
                "the file part's name must be a plain file name (no folders, no ..)",
            )
            .at("file", name));
        }
    }
    let text = query.or_else(|| name.and_then(|n| n.rsplit_once('.').map(|(_, e)| e)));
    match text.map(str::to_ascii_lowercase).as_deref() {
        Some("csv") => Ok(Format::Csv),
        Some("ndjson" | "jsonl") => Ok(Format::Ndjson),
        Some("parquet") => Ok(Format::Parquet),
        other => Err(ApiError::bad_request(
            "serve.format",
            "the file's format is csv, ndjson or parquet: name the file part with that \
             extension, or pass ?format=",
        )
        .at("format", other.unwrap_or(""))),
    }
}

/// Counts a delivery in flight for as long as it lives, so that shutdown waits for it.
struct InFlight(Shared);

impl InFlight {
    fn new(s: &Shared) -> InFlight {
        s.in_flight.fetch_add(1, Ordering::SeqCst);
        s.metrics.in_flight.inc();
        InFlight(s.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.metrics.in_flight.dec();
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[derive(serde::Deserialize)]
struct DeliverQuery {
    format: Option<String>,
}

/// One delivered file, staged, with its manifest and its table's contract.
struct Upload {
    manifest: Manifest,
    contract: Arc<TableContract>,
    file: tempfile::NamedTempFile,
    format: Format,
    size: u64,
}

/// The body a delivery route takes.
enum Body {
    /// `manifest` and `file`, in either order, for the URL's table.
    One(Arc<TableContract>),
    /// `manifest` then its `file`, once per table of the group.
    Group,
}

impl Service {
    /// The sender of a delivery request, once the service takes deliveries.
    fn deliverer(&self, headers: &HeaderMap) -> Result<Sender, ApiError> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                codes::SHUTTING_DOWN,
                "serve.shutdown",
                "the service is shutting down; send the delivery again once it is back",
            ));
        }
        self.sender(headers)
    }

    fn count_refused(&self, label: &str) {
        self.metrics
            .deliveries
            .get_or_create(&metrics::Outcome {
                table: label.to_owned(),
                outcome: "refused".into(),
            })
            .inc();
    }
}

/// Refuses a body whose declared length is over the limit before a byte of it is read.
fn check_length(headers: &HeaderMap, max: u64) -> Result<(), ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(len) if len > max.saturating_add(MANIFEST_MAX as u64 + 64 * 1024) => {
            Err(too_large(max))
        }
        _ => Ok(()),
    }
}

fn not_multipart(e: axum::extract::multipart::MultipartRejection) -> ApiError {
    ApiError::bad_request(
        "serve.body",
        format!("the body is not multipart/form-data with manifest and file parts: {e}"),
    )
}

/// Reads a delivery's body: each manifest parsed (at most 1 MiB in all), each file streamed to
/// a staging file, at most `--max-bytes` of files in all. A group's manifest is checked against
/// the sender's grants before its file is read.
async fn receive(
    s: &Shared,
    sender: &Sender,
    mut multipart: Multipart,
    format: Option<&str>,
    body: &Body,
) -> Result<Vec<Upload>, ApiError> {
    let max = s.config.max_bytes;
    let idle = s.config.request_timeout;
    let mut uploads: Vec<Upload> = Vec::new();
    let mut manifest: Option<(Manifest, Arc<TableContract>)> = None;
    // the one route's file may come before its manifest
    let mut early_file: Option<(tempfile::NamedTempFile, Format, u64)> = None;
    let mut manifest_bytes = 0usize;
    let mut file_bytes = 0u64;
    loop {
        let next = tokio::time::timeout(idle, multipart.next_field())
            .await
            .map_err(|_| timeout_error())?;
        let field = match next {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(multipart_error(e, max)),
        };
        match field.name() {
            Some("manifest") => {
                if manifest.is_some() || (matches!(body, Body::One(_)) && !uploads.is_empty()) {
                    return Err(ApiError::bad_request(
                        "serve.body",
                        match body {
                            Body::One(_) => "the body has two manifest parts; send one",
                            Body::Group => "each manifest part is followed by its file part",
                        },
                    ));
                }
                let bytes = read_small(field, idle, max, MANIFEST_MAX - manifest_bytes).await?;
                manifest_bytes += bytes.len();
                let m = parse_manifest(&bytes)?;
                let contract = match body {
                    Body::One(contract) => {
                        if !m.table().eq_ignore_ascii_case(contract.contract.table()) {
                            return Err(ApiError::new(
                                StatusCode::BAD_REQUEST,
                                codes::MANIFEST_INVALID,
                                "serve.path",
                                format!(
                                    "the manifest is of another table than the URL's ({:?})",
                                    cut(contract.contract.table())
                                ),
                            )
                            .at("manifest.table", m.table()));
                        }
                        contract.clone()
                    }
                    Body::Group => {
                        if uploads
                            .iter()
                            .any(|u| u.manifest.table().eq_ignore_ascii_case(m.table()))
                        {
                            return Err(ApiError::new(
                                StatusCode::BAD_REQUEST,
                                codes::GROUP_INVALID,
                                "GROUP-07",
                                "a group delivers each table once",
                            )
                            .at("manifest.table", m.table()));
                        }
                        s.table(sender, m.table(), true)?
                    }
                };
                match early_file.take() {
                    Some((file, format, size)) => uploads.push(Upload {
                        manifest: m,
                        contract,
                        file,
                        format,
                        size,
                    }),
                    None => manifest = Some((m, contract)),
                }
            }
            Some("file") => {
                let (m, contract) = match (manifest.take(), body) {
                    (Some(pair), _) => (Some(pair.0), pair.1),
                    (None, Body::One(contract)) if uploads.is_empty() && early_file.is_none() => {
                        (None, contract.clone())
                    }
                    (None, Body::One(_)) => {
                        return Err(ApiError::bad_request(
                            "serve.body",
                            "the body has two file parts; send one",
                        ))
                    }
                    (None, Body::Group) => {
                        return Err(ApiError::bad_request(
                            "serve.body",
                            "a group's file part follows its manifest part",
                        ))
                    }
                };
                let format = file_format(field.file_name(), format)?;
                let staged = stage(field, &s.config.staging, max - file_bytes, max, idle).await;
                let (file, size) = match staged {
                    Ok(staged) => staged,
                    Err(e) => {
                        if answered_mid_upload(&e) {
                            drain(&mut multipart, idle).await;
                        }
                        return Err(e);
                    }
                };
                file_bytes += size;
                match m {
                    Some(manifest) => uploads.push(Upload {
                        manifest,
                        contract,
                        file,
                        format,
                        size,
                    }),
                    None => early_file = Some((file, format, size)),
                }
            }
            other => {
                let name = other.unwrap_or("").to_owned();
                return Err(ApiError::bad_request(
                    "serve.body",
                    "a delivery's parts are manifest and file",
                )
                .at("part", &name));
            }
        }
    }
    if manifest.is_some() {
        return Err(ApiError::bad_request(
            "serve.body",
            "a manifest part has no file part after it",
        ));
    }
    if early_file.is_some() {
        return Err(ApiError::bad_request(
            "serve.body",
            "the body has no manifest part",
        ));
    }
    if uploads.is_empty() {
        return Err(ApiError::bad_request(
            "serve.body",
            "the body has no manifest and file parts",
        ));
    }
    Ok(uploads)
}

fn parse_manifest(bytes: &[u8]) -> Result<Manifest, ApiError> {
    Manifest::from_slice(bytes).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            codes::MANIFEST_INVALID,
            "MAN-01",
            format!("the manifest part is refused: {}", e),
        )
        .at(
            "manifest",
            &String::from_utf8_lossy(&bytes[..bytes.len().min(256)]),
        )
    })
}

/// What the blocking decision returns, for the metrics and the answer.
enum Decided {
    One(Box<dogana_receiver::Delivery>),
    Group(dogana_receiver::GroupDelivery),
}

impl Decided {
    fn receipts(&self) -> Vec<&dogana::Receipt> {
        match self {
            Decided::One(d) => vec![&d.receipt],
            Decided::Group(g) => g.receipts.iter().collect(),
        }
    }
}

/// Decides the staged uploads (one delivery, or one group): waits for each table's slot (at
/// most `--max-concurrent` deliveries per table reach the store's write lock; slots are taken
/// in table order, so two groups never wait on each other), then the engine decides in a
/// blocking task that owns the staged files.
async fn decide(
    s: &Shared,
    sender: &Sender,
    uploads: Vec<Upload>,
    upload_started: Instant,
    group: bool,
) -> Result<Response, ApiError> {
    let mut tables: Vec<String> = uploads
        .iter()
        .map(|u| u.contract.contract.table().to_owned())
        .collect();
    for u in &uploads {
        let label = metrics::Table {
            table: u.contract.contract.table().to_owned(),
        };
        s.metrics
            .upload_seconds
            .get_or_create(&label)
            .observe(upload_started.elapsed().as_secs_f64());
        s.metrics.bytes.get_or_create(&label).inc_by(u.size);
    }
    let sizes: HashMap<String, u64> = uploads
        .iter()
        .map(|u| (u.manifest.table().to_ascii_lowercase(), u.size))
        .collect();
    tables.sort();
    let waiting = Instant::now();
    let mut permits = Vec::with_capacity(tables.len());
    for table in &tables {
        permits.push(
            s.slot(table)
                .acquire_owned()
                .await
                .expect("the semaphore is never closed"),
        );
    }
    let waited = waiting.elapsed().as_secs_f64();
    let deciding_started = Instant::now();
    let service = s.clone();
    let name = sender.name.clone();
    // The decision's own count: it outlives the handler when the sender goes away.
    let deciding = InFlight::new(s);
    // The blocking task owns the staged files: a sender that goes away mid-decision does not
    // stop the engine, which commits or rolls back as a whole; the files go with the task.
    let result = tokio::task::spawn_blocking(move || {
        let writers = &service.writers;
        let result = if group {
            let parts: Vec<_> = uploads
                .iter()
                .map(|u| {
                    let part = dogana_receiver::Part {
                        file: u.file.path().to_owned(),
                        manifest: u.manifest.clone(),
                        options: u.contract.options.clone().format(u.format),
                    };
                    (u.contract.clone(), part)
                })
                .collect();
            writers.deliver_group(&parts, &name).map(Decided::Group)
        } else {
            let u = &uploads[0];
            let mut contract = (*u.contract).clone();
            contract.options = contract.options.format(u.format);
            writers
                .deliver(&contract, &u.manifest, u.file.path(), &name)
                .map(|d| Decided::One(Box::new(d)))
        };
        drop(uploads);
        drop(deciding);
        result
    })
    .await
    .map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::STORE_FAILED,
            "serve.store",
            format!("the delivery's task failed: {e}"),
        )
    })?;
    drop(permits);
    // the engine times its two phases; opening the store counts in the decision
    let total = deciding_started.elapsed();
    let timing = match &result {
        Ok(Decided::One(d)) => Some(d.timing),
        Ok(Decided::Group(g)) => Some(g.timing),
        Err(_) => None,
    };
    for table in &tables {
        let label = metrics::Table {
            table: table.clone(),
        };
        s.metrics.wait_seconds.get_or_create(&label).observe(waited);
        if let Some(t) = timing {
            let decide = total.saturating_sub(t.commit);
            s.metrics
                .decision_seconds
                .get_or_create(&label)
                .observe(decide.as_secs_f64());
            s.metrics
                .commit_seconds
                .get_or_create(&label)
                .observe(t.commit.as_secs_f64());
        }
    }
    let decided = result?;
    let namespace = dogana_stores::without_password(&s.config.store.to_string());
    let receipts = decided.receipts();
    for receipt in &receipts {
        record(
            s,
            &namespace,
            receipt,
            sizes.get(&receipt.table().to_ascii_lowercase()),
        );
    }
    let outcome = receipts.first().map_or(Outcome::Rejected, |r| r.outcome());
    tracing::info!(
        tables = %tables.join("+"),
        sender = %sender.name,
        outcome = deliver::outcome_name(outcome),
        receipts = %receipts.iter().map(|r| r.identity()).collect::<Vec<_>>().join(","),
        seconds = upload_started.elapsed().as_secs_f64(),
        "delivery decided"
    );
    let status = if outcome == Outcome::Rejected {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    let body = match &decided {
        Decided::One(d) => answer(d),
        Decided::Group(g) => deliver::group_answer(g),
    };
    Ok((status, Json(body)).into_response())
}

/// The metrics and the lineage event of one decided receipt.
fn record(s: &Shared, namespace: &str, receipt: &dogana::Receipt, size: Option<&u64>) {
    let table = receipt.table().to_owned();
    let outcome = deliver::outcome_name(receipt.outcome());
    s.metrics
        .deliveries
        .get_or_create(&metrics::Outcome {
            table: table.clone(),
            outcome: outcome.into(),
        })
        .inc();
    if receipt.outcome() == Outcome::Accepted {
        s.metrics
            .rows
            .get_or_create(&metrics::Table {
                table: table.clone(),
            })
            .inc_by(receipt.manifest().rows());
    }
    for check in receipt.failures() {
        s.metrics
            .refusals
            .get_or_create(&metrics::Refusal {
                table: table.clone(),
                check: check.name().to_owned(),
            })
            .inc();
    }
    if let Some(lineage) = &s.lineage {
        lineage.record(namespace, receipt, size.copied().unwrap_or(0));
    }
}

/// A delivery route's body, staged: its declared length checked, then [`receive`], counted
/// in flight while it uploads.
async fn upload(
    s: &Shared,
    sender: &Sender,
    headers: &HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
    q: &DeliverQuery,
    body: &Body,
) -> Result<Vec<Upload>, ApiError> {
    let _in_flight = InFlight::new(s);
    check_length(headers, s.config.max_bytes)?;
    let multipart = multipart.map_err(not_multipart)?;
    receive(s, sender, multipart, q.format.as_deref(), body).await
}

async fn post_delivery(
    State(s): State<Shared>,
    UrlPath(table): UrlPath<String>,
    Query(q): Query<DeliverQuery>,
    headers: HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Response, ApiError> {
    let sender = s.deliverer(&headers)?;
    let contract = s.table(&sender, &table, true)?;
    let started = Instant::now();
    let uploads = upload(&s, &sender, &headers, multipart, &q, &Body::One(contract))
        .await
        .inspect_err(|_| s.count_refused(&table))?;
    decide(&s, &sender, uploads, started, false)
        .await
        .inspect_err(|_| s.count_refused(&table))
}

/// `POST /v1/groups/deliveries`: one manifest and file per table, decided as one group.
async fn post_group(
    State(s): State<Shared>,
    Query(q): Query<DeliverQuery>,
    headers: HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Response, ApiError> {
    let sender = s.deliverer(&headers)?;
    let started = Instant::now();
    let uploads = upload(&s, &sender, &headers, multipart, &q, &Body::Group).await?;
    let label: Vec<&str> = uploads
        .iter()
        .map(|u| u.contract.contract.table())
        .collect();
    let label = label.join("+");
    decide(&s, &sender, uploads, started, true)
        .await
        .inspect_err(|_| s.count_refused(&label))
}

fn timeout_error() -> ApiError {
    ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        codes::REQUEST_TIMEOUT,
        "serve.limits",
        "the upload sent nothing for longer than the request timeout; nothing was staged",
    )
}

fn too_large(max: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        codes::TOO_LARGE,
        "serve.limits",
        format!("the delivery is larger than this service takes ({max} bytes); nothing was staged"),
    )
}

fn multipart_error(e: axum::extract::multipart::MultipartError, max: u64) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return too_large(max);
    }
    ApiError::bad_request(
        "serve.body",
        format!("the multipart body cannot be read: {}", e.body_text()),
    )
}

/// A manifest part, read whole (at most `room` bytes: the manifests of one request take at
/// most [`MANIFEST_MAX`] bytes in all).
async fn read_small(
    mut field: axum::extract::multipart::Field<'_>,
    idle: Duration,
    max: u64,
    room: usize,
) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::new();
    loop {
        let chunk = tokio::time::timeout(idle, field.chunk())
            .await
            .map_err(|_| timeout_error())?;
        match chunk {
            Ok(Some(bytes)) => {
                if out.len() + bytes.len() > room {
                    return Err(ApiError::bad_request(
                        "serve.body",
                        "the manifest parts are over 1 MiB",
                    ));
                }
                out.extend_from_slice(&bytes);
            }
            Ok(None) => return Ok(out),
            Err(e) => return Err(multipart_error(e, max)),
        }
    }
}

/// Streams the file part to a staging file (never whole in memory); the file is removed when
/// dropped, so a sender that goes away leaves nothing staged. A full disk is 507. `room` is
/// what is left of `max` (the files of one request take at most `max` bytes in all).
async fn stage(
    mut field: axum::extract::multipart::Field<'_>,
    dir: &std::path::Path,
    room: u64,
    max: u64,
    idle: Duration,
) -> Result<(tempfile::NamedTempFile, u64), ApiError> {
    let io = |e: std::io::Error| {
        if e.raw_os_error() == Some(28) || e.kind() == std::io::ErrorKind::StorageFull {
            ApiError::new(
                StatusCode::INSUFFICIENT_STORAGE,
                codes::DISK_FULL,
                "serve.limits",
                "the receiver's staging disk is full; nothing was staged or decided",
            )
        } else {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                codes::STORE_FAILED,
                "serve.staging",
                format!("cannot write the staging file: {e}"),
            )
        }
    };
    let tmp = tempfile::Builder::new()
        .prefix(".upload-")
        .tempfile_in(dir)
        .map_err(io)?;
    let mut out = tokio::fs::File::from_std(tmp.as_file().try_clone().map_err(io)?);
    let mut size: u64 = 0;
    let written: Result<(), ApiError> = async {
        loop {
            let chunk = tokio::time::timeout(idle, field.chunk())
                .await
                .map_err(|_| timeout_error())?;
            match chunk {
                Ok(Some(bytes)) => {
                    size += bytes.len() as u64;
                    if size > room {
                        return Err(too_large(max));
                    }
                    out.write_all(&bytes).await.map_err(io)?;
                }
                Ok(None) => break,
                Err(e) => return Err(multipart_error(e, max)),
            }
        }
        out.flush().await.map_err(io)
    }
    .await;
    match written {
        Ok(()) => Ok((tmp, size)),
        Err(e) => {
            // the staged bytes go first (a full disk has room again), then the rest of the
            // part is read and dropped, so that the sender reads the answer instead of a
            // connection reset
            drop(out);
            drop(tmp);
            if answered_mid_upload(&e) {
                while let Ok(Ok(Some(_))) = tokio::time::timeout(idle, field.chunk()).await {}
            }
            Err(e)
        }
    }
}

/// A refusal made while the sender is still uploading (too large, disk full): the body's rest
/// is read and dropped before answering (at most the route's body limit).
fn answered_mid_upload(e: &ApiError) -> bool {
    matches!(
        e.status,
        StatusCode::PAYLOAD_TOO_LARGE | StatusCode::INSUFFICIENT_STORAGE
    )
}

/// Reads and drops the parts left in a body (see [`answered_mid_upload`]).
async fn drain(multipart: &mut Multipart, idle: Duration) {
    while let Ok(Ok(Some(mut field))) = tokio::time::timeout(idle, multipart.next_field()).await {
        while let Ok(Ok(Some(_))) = tokio::time::timeout(idle, field.chunk()).await {}
    }
}

/// A read route: the sender may read `table`, then `read` runs on the store in a blocking
/// task and its answer is the JSON body.
async fn read_route(
    s: Shared,
    headers: &HeaderMap,
    table: &str,
    read: impl FnOnce(&dogana_stores::Spec, &TableContract) -> Result<serde_json::Value, ApiError>
        + Send
        + 'static,
) -> Result<Response, ApiError> {
    let sender = s.sender(headers)?;
    let contract = s.table(&sender, table, false)?;
    let body = tokio::task::spawn_blocking(move || read(&s.config.store, &contract))
        .await
        .map_err(join_error)??;
    Ok(Json(body).into_response())
}

async fn get_claims(
    State(s): State<Shared>,
    UrlPath(table): UrlPath<String>,
    Query(q): Query<queries::ClaimsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    read_route(s, &headers, &table, move |store, c| {
        queries::claims(store, c, &q)
    })
    .await
}

async fn get_receipts(
    State(s): State<Shared>,
    UrlPath(table): UrlPath<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    read_route(s, &headers, &table, queries::receipts).await
}

async fn get_plan(
    State(s): State<Shared>,
    UrlPath(table): UrlPath<String>,
    Query(q): Query<queries::PlanQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    read_route(s, &headers, &table, move |store, c| {
        queries::plan(store, c, &q)
    })
    .await
}

async fn get_next(
    State(s): State<Shared>,
    UrlPath(table): UrlPath<String>,
    Query(q): Query<queries::NextQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    read_route(s, &headers, &table, move |store, c| {
        queries::next(store, c, &q)
    })
    .await
}

fn join_error(e: tokio::task::JoinError) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        codes::STORE_FAILED,
        "serve.read",
        format!("the read's task failed: {e}"),
    )
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// Ready when the store opens for reading (or does not exist yet: the first delivery creates
/// it) and the service is not stopping.
async fn readyz(State(s): State<Shared>) -> Response {
    if s.stopping.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "stopping\n").into_response();
    }
    let service = s.clone();
    let opened = tokio::task::spawn_blocking(move || {
        deliver::open_reader(&service.config.store)
            .map(drop)
            .map_err(|e| e.message.clone())
    })
    .await;
    match opened {
        Ok(Ok(())) => (StatusCode::OK, "ready\n").into_response(),
        Ok(Err(e)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the store does not open: {}\n", cut(&e)),
        )
            .into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response(),
    }
}

async fn metrics_text(State(s): State<Shared>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        s.metrics.text(),
    )
        .into_response()
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        codes::REQUEST_INVALID,
        "serve.routes",
        "no such route; GET /v1/openapi.json lists them",
    )
}

/// Every route (the OpenAPI document lists the same ones: a test holds them equal).
pub(crate) fn router(s: Shared) -> Router {
    // The body limit is the file's plus room for the manifest and the multipart framing;
    // `stage` counts the file's own bytes against max_bytes.
    let limit = usize::try_from(
        s.config
            .max_bytes
            .saturating_add(MANIFEST_MAX as u64 + 64 * 1024),
    )
    .unwrap_or(usize::MAX);
    Router::new()
        .route("/v1/tables/{table}/deliveries", post(post_delivery))
        .route("/v1/groups/deliveries", post(post_group))
        .route("/v1/tables/{table}/claims", get(get_claims))
        .route("/v1/tables/{table}/receipts", get(get_receipts))
        .route("/v1/tables/{table}/plan", get(get_plan))
        .route("/v1/tables/{table}/next", get(get_next))
        .route("/v1/openapi.json", get(openapi))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(s)
}

/// The routes as (method, path) pairs, for the OpenAPI test.
pub const ROUTES: &[(&str, &str)] = &[
    ("post", "/v1/tables/{table}/deliveries"),
    ("post", "/v1/groups/deliveries"),
    ("get", "/v1/tables/{table}/claims"),
    ("get", "/v1/tables/{table}/receipts"),
    ("get", "/v1/tables/{table}/plan"),
    ("get", "/v1/tables/{table}/next"),
    ("get", "/v1/openapi.json"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
];

/// Runs until SIGTERM or SIGINT: accepts connections, serves them, and on the signal stops
/// accepting, lets each delivery in flight finish (the engine commits or rolls back as a
/// whole), then returns.
pub(crate) async fn run(
    s: Shared,
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let app = router(s.clone());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let header_timeout = s.config.request_timeout;
    // the handlers are in place before anyone is told where to connect: a SIGHUP sent right
    // after would otherwise end the process
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    ready(listener.local_addr()?);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let app = app.clone();
                let tls = tls.clone();
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    let service = hyper_util::service::TowerToHyperService::new(app);
                    let mut builder = hyper::server::conn::http1::Builder::new();
                    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
                    let result = match tls {
                        Some(acceptor) => {
                            let Ok(Ok(stream)) = tokio::time::timeout(header_timeout, acceptor.accept(stream)).await else {
                                tracing::info!(peer = %peer, "TLS handshake failed or timed out");
                                return;
                            };
                            watcher.watch(builder.serve_connection(TokioIo::new(stream), service)).await
                        }
                        None => watcher.watch(builder.serve_connection(TokioIo::new(stream), service)).await,
                    };
                    if let Err(e) = result {
                        tracing::debug!(peer = %peer, error = %e, "connection ended");
                    }
                });
            }
            _ = hangup.recv() => {
                match s.reload() {
                    Ok((senders, tables)) => tracing::info!(senders, tables, "reloaded the tokens file and the contracts folder"),
                    Err(e) => tracing::error!(error = %e, "reload refused; keeping the last good configuration"),
                }
            }
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
        }
    }
    tracing::info!("shutting down: no new connection; deliveries in flight finish");
    s.stopping.store(true, Ordering::SeqCst);
    drop(listener);
    // Connections close once their request is answered; deliveries whose sender went away
    // still run in their blocking task: wait for those too.
    let _ = tokio::time::timeout(Duration::from_secs(3600), graceful.shutdown()).await;
    while s.in_flight.load(Ordering::SeqCst) > 0 {
        let notified = s.idle.notified();
        if s.in_flight.load(Ordering::SeqCst) == 0 {
            break;
        }
        let _ = tokio::time::timeout(Duration::from_millis(200), notified).await;
    }
    tracing::info!("stopped");
    Ok(())
}

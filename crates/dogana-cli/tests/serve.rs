//! `dogana serve` and `dogana watch` (the serve feature), through the binary: the real server
//! on 127.0.0.1, talked to with a real HTTP client.
#![cfg(feature = "serve")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{text, Work, ORDERS_TOML};
use reqwest::blocking::{multipart, Client};
use serde_json::Value;
use sha2::{Digest, Sha256};

const SUNDAY: &str = "\
id,order_date,updated_at,amount,deleted
1,2026-10-20,2026-10-20T10:00:00Z,10.00,false
2,2026-10-21,2026-10-21T10:00:00Z,20.00,false
3,2026-10-22,2026-10-22T10:00:00Z,30.00,false
";

const ACME: &str = "token-of-acme";
const BETA: &str = "token-of-beta";

fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// acme delivers orders; beta reads customers only.
fn tokens() -> String {
    format!(
        "[[sender]]\nname = \"acme\"\ntoken_sha256 = \"{}\"\ndeliver = [\"orders\"]\n\n\
         [[sender]]\nname = \"beta\"\ntoken_sha256 = \"{}\"\nread = [\"customers\"]\n",
        digest(ACME),
        digest(BETA)
    )
}

/// A working directory with contracts/orders.toml, senders.toml, and sun.csv with its
/// manifest (3 rows, full read) — `rows` declared in the manifest.
fn work(rows: &str) -> Work {
    let work = Work::new();
    std::fs::create_dir(work.path("contracts")).unwrap();
    work.write("contracts/orders.toml", ORDERS_TOML);
    work.write("senders.toml", &tokens());
    work.write("sun.csv", SUNDAY);
    work.dogana([
        "manifest",
        "sun.csv",
        "--contract",
        "contracts/orders.toml",
        "--shape",
        "full",
        "--produced-at",
        "2026-10-25T06:00:00Z",
        "--rows",
        rows,
        "--force",
    ])
    .assert()
    .success();
    work
}

struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(work: &Work, extra: &[&str]) -> Server {
        Server::start_under(work, &[], "orders.db", extra)
    }

    /// The server on another store than `orders.db`.
    #[cfg(any(feature = "postgres", feature = "lake"))]
    fn start_on(work: &Work, store: &str) -> Server {
        Server::start_under(work, &[], store, &[])
    }

    /// The server on `store`, started by `wrapper` (a command that ends by running the rest
    /// of its arguments), or directly when it is empty.
    fn start_under(work: &Work, wrapper: &[&str], store: &str, extra: &[&str]) -> Server {
        let mut command = match wrapper {
            [] => Command::new(env!("CARGO_BIN_EXE_dogana")),
            [program, args @ ..] => {
                let mut c = Command::new(program);
                c.args(args).arg(env!("CARGO_BIN_EXE_dogana"));
                c
            }
        };
        let mut child = command
            .current_dir(work.dir())
            .args([
                "serve",
                "--store",
                store,
                "--contracts",
                "contracts",
                "--tokens",
                "senders.toml",
                "--listen",
                "127.0.0.1:0",
                "--staging",
                "staging",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("no listening line: {line:?}"))
            .to_owned();
        Server { child, base }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn delivery(work: &Work, file: &str) -> multipart::Form {
    multipart::Form::new()
        .part(
            "manifest",
            multipart::Part::bytes(std::fs::read(work.path(&format!("{file}.json"))).unwrap()),
        )
        .part(
            "file",
            multipart::Part::bytes(std::fs::read(work.path(file)).unwrap())
                .file_name(file.to_owned()),
        )
}

fn post(server: &Server, table: &str, token: Option<&str>, form: multipart::Form) -> (u16, Value) {
    let mut req = client()
        .post(server.url(&format!("/v1/tables/{table}/deliveries")))
        .multipart(form);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().unwrap_or(Value::Null))
}

fn get(server: &Server, path: &str, token: Option<&str>) -> (u16, String) {
    let mut req = client().get(server.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().unwrap();
    (resp.status().as_u16(), resp.text().unwrap())
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

/// The receipts `dogana receipts --json` lists for orders.
fn stored_receipts(work: &Work) -> Vec<Value> {
    let out = work
        .dogana(["receipts", "--store", "orders.db", "orders", "--json"])
        .output()
        .unwrap();
    if !out.status.success() {
        return Vec::new();
    }
    match serde_json::from_str(&text(&out.stdout)).unwrap() {
        Value::Array(receipts) => receipts,
        other => panic!("not an array: {other}"),
    }
}

/// The uploads staged under the staging root (in any service's own folder).
fn staged(work: &Work) -> usize {
    let Ok(services) = std::fs::read_dir(work.path("staging")) else {
        return 0;
    };
    services
        .filter_map(|d| std::fs::read_dir(d.ok()?.path()).ok())
        .flatten()
        .filter(|f| {
            f.as_ref()
                .is_ok_and(|f| f.file_name().to_string_lossy().starts_with(".upload-"))
        })
        .count()
}

// rule: PLANNER-18
#[test]
fn a_delivery_pushed_is_accepted_with_the_sender_as_its_source() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    let (status, body) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["outcome"], "accepted");
    assert_eq!(body["receipt"]["source"], "acme", "{body}");
    assert_eq!(stored_receipts(&work).len(), 1);
    assert_eq!(
        staged(&work),
        0,
        "the staged upload is removed once decided"
    );
}

// rule: RECV-01
#[test]
fn the_same_manifest_pushed_again_is_a_replay() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    let (_, first) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    let (status, again) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!(status, 200);
    assert_eq!(again["outcome"], "replayed");
    assert_eq!(again["receipt_identity"], first["receipt_identity"]);
    assert_eq!(stored_receipts(&work).len(), 1, "a replay stores nothing");
}

// rule: CHECK-02, RECV-11
#[test]
fn a_delivery_whose_manifest_lies_is_422_with_its_failed_checks_and_the_receipt_kept() {
    let work = work("4");
    let server = Server::start(&work, &[]);
    let (status, body) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["outcome"], "rejected");
    let failed = body["failed_checks"].as_array().unwrap();
    assert!(failed.iter().any(|c| c["name"] == "rows"), "{body}");
    assert_eq!(
        stored_receipts(&work).len(),
        1,
        "the rejection's receipt is kept"
    );
}

#[test]
fn without_a_valid_token_a_delivery_is_401_and_nothing_is_stored() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    let (status, body) = post(&server, "orders", None, delivery(&work, "sun.csv"));
    assert_eq!((status, code(&body)), (401, "DGN-701"), "{body}");
    let (status, body) = post(&server, "orders", Some("guess"), delivery(&work, "sun.csv"));
    assert_eq!((status, code(&body)), (401, "DGN-701"), "{body}");
    assert!(stored_receipts(&work).is_empty());
    assert!(!work.exists("orders.db"));
}

#[test]
fn a_token_for_another_table_is_403_without_saying_whether_the_table_exists() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    // beta may read customers, and deliver nothing
    let (status, on_orders) = post(&server, "orders", Some(BETA), delivery(&work, "sun.csv"));
    assert_eq!((status, code(&on_orders)), (403, "DGN-702"));
    let (status, on_nothing) = post(
        &server,
        "no_such_table",
        Some(BETA),
        delivery(&work, "sun.csv"),
    );
    assert_eq!((status, code(&on_nothing)), (403, "DGN-702"));
    assert_eq!(
        on_orders["error"]["message"], on_nothing["error"]["message"],
        "the refusal is the same for a table that exists and one that does not"
    );
    let (status, _) = get(&server, "/v1/tables/orders/claims", Some(BETA));
    assert_eq!(status, 403, "reading is granted per table too");
    assert!(stored_receipts(&work).is_empty());
}

#[test]
fn a_file_over_max_bytes_is_413_and_nothing_is_staged_or_stored() {
    let work = work("3");
    let server = Server::start(&work, &["--max-bytes", "100"]);
    let (status, body) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!((status, code(&body)), (413, "DGN-704"), "{body}");
    assert_eq!(staged(&work), 0);
    assert!(stored_receipts(&work).is_empty());
}

#[test]
fn a_body_without_its_file_part_is_400_naming_what_is_missing() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    let form = multipart::Form::new().part(
        "manifest",
        multipart::Part::bytes(std::fs::read(work.path("sun.csv.json")).unwrap()),
    );
    let (status, body) = post(&server, "orders", Some(ACME), form);
    assert_eq!((status, code(&body)), (400, "DGN-703"), "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no file part"));
    let form = delivery(&work, "sun.csv").text("extra", "x");
    let (status, body) = post(&server, "orders", Some(ACME), form);
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (400, Some("part")),
        "{body}"
    );
    assert!(stored_receipts(&work).is_empty());
}

#[test]
fn a_manifest_of_another_table_than_the_url_is_400() {
    let work = work("3");
    work.write(
        "contracts/customers.toml",
        &ORDERS_TOML.replace("\"orders\"", "\"customers\""),
    );
    work.write(
        "senders.toml",
        &tokens().replace(
            "deliver = [\"orders\"]",
            "deliver = [\"orders\", \"customers\"]",
        ),
    );
    let server = Server::start(&work, &[]);
    let (status, body) = post(&server, "customers", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (400, Some("manifest.table")),
        "{body}"
    );
}

#[test]
fn path_traversal_in_table_and_file_names_is_refused() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    let (status, body) = post(
        &server,
        "..%2F..%2Fetc",
        Some(ACME),
        delivery(&work, "sun.csv"),
    );
    assert_eq!((status, code(&body)), (400, "DGN-703"), "{body}");
    let form = multipart::Form::new()
        .part(
            "manifest",
            multipart::Part::bytes(std::fs::read(work.path("sun.csv.json")).unwrap()),
        )
        .part(
            "file",
            multipart::Part::bytes(SUNDAY.as_bytes().to_vec()).file_name("../../sun.csv"),
        );
    let (status, body) = post(&server, "orders", Some(ACME), form);
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (400, Some("file")),
        "{body}"
    );
    assert!(stored_receipts(&work).is_empty());
}

// rule: RECV-11
#[test]
fn a_sender_reads_claims_receipts_and_what_to_send_next() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    let (_, body) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!(body["outcome"], "accepted");
    let (status, claims) = get(
        &server,
        "/v1/tables/orders/claims?at=2026-10-25T07:00:00Z",
        Some(ACME),
    );
    assert_eq!(status, 200);
    let claims: Value = serde_json::from_str(&claims).unwrap();
    assert_eq!(
        claims["dates"]["complete_as_of"],
        "2026-10-25T06:00:00+00:00"
    );
    let (status, receipts) = get(&server, "/v1/tables/orders/receipts", Some(ACME));
    assert_eq!(status, 200);
    let receipts: Value = serde_json::from_str(&receipts).unwrap();
    assert_eq!(receipts[0]["identity"], body["receipt_identity"]);
    let (status, next) = get(
        &server,
        "/v1/tables/orders/next?shape=changes&until=2026-10-26T06:00:00Z",
        Some(ACME),
    );
    assert_eq!(status, 200);
    let next: Value = serde_json::from_str(&next).unwrap();
    assert_eq!(
        next["extraction"]["since"]["$datetime"],
        "2026-10-25T06:00:00+00:00"
    );
    let (status, plan) = get(
        &server,
        "/v1/tables/orders/plan?complete_as_of=2026-10-25T06:00:00Z",
        Some(ACME),
    );
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&plan).unwrap()["extraction"],
        Value::Null
    );
    let (status, bad) = get(
        &server,
        "/v1/tables/orders/claims?at=2026-10-25",
        Some(ACME),
    );
    assert_eq!(status, 400, "{bad}");
    assert!(bad.contains("\"field\":\"at\""), "{bad}");
}

#[test]
fn health_readiness_metrics_and_the_openapi_document_answer() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    assert_eq!(get(&server, "/healthz", None).0, 200);
    assert_eq!(get(&server, "/readyz", None).0, 200);
    post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    let (status, metrics) = get(&server, "/metrics", None);
    assert_eq!(status, 200);
    assert!(
        metrics.contains("dogana_deliveries_total{table=\"orders\",outcome=\"accepted\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("dogana_delivered_rows_total{table=\"orders\"} 3"),
        "{metrics}"
    );
    for phase in ["upload", "wait", "decision", "commit"] {
        assert!(
            metrics.contains(&format!(
                "dogana_{phase}_seconds_count{{table=\"orders\"}} 1"
            )),
            "the {phase} histogram: {metrics}"
        );
    }
    let (status, doc) = get(&server, "/v1/openapi.json", None);
    assert_eq!(status, 200);
    assert_eq!(doc, dogana_serve_openapi());
}

fn dogana_serve_openapi() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../dogana-serve/openapi.json"),
    )
    .unwrap()
}

#[test]
fn sighup_reads_the_tokens_file_again() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    let newcomer = "token-of-gamma";
    let (status, _) = get(&server, "/v1/tables/orders/claims", Some(newcomer));
    assert_eq!(status, 401);
    work.write(
        "senders.toml",
        &format!(
            "{}\n[[sender]]\nname = \"gamma\"\ntoken_sha256 = \"{}\"\nread = [\"orders\"]\n",
            tokens(),
            digest(newcomer)
        ),
    );
    server.signal("-HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _) = get(&server, "/v1/tables/orders/claims", Some(newcomer));
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the new sender was never let in");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_client_that_sends_its_headers_slowly_is_cut_off() {
    let work = work("3");
    let server = Server::start(&work, &["--request-timeout", "1"]);
    let addr = server.base.strip_prefix("http://").unwrap();
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "the connection was held open"
    );
    assert!(!text(&rest).contains("200 OK"), "{}", text(&rest));
}

#[test]
fn plain_http_beyond_loopback_is_refused_before_listening() {
    let work = work("3");
    let out = work
        .dogana([
            "serve",
            "--store",
            "orders.db",
            "--contracts",
            "contracts",
            "--tokens",
            "senders.toml",
            "--listen",
            "0.0.0.0:0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("DGN-705") && err.contains("--tls-cert"),
        "{err}"
    );
}

#[test]
fn sigterm_stops_the_service_cleanly() {
    let work = work("3");
    let mut server = Server::start(&work, &[]);
    post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    server.signal("-TERM");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "still running after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    work.dogana(["verify", "--store", "orders.db"])
        .assert()
        .success();
}

/// `dogana watch landing --once` in `work`.
fn watch_once(work: &Work) -> Value {
    let out = work
        .dogana([
            "watch",
            "landing",
            "--store",
            "orders.db",
            "--contracts",
            "contracts",
            "--stable-for",
            "0.2",
            "--once",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_str(&text(&out.stdout)).unwrap()
}

fn land(work: &Work) {
    std::fs::create_dir_all(work.path("landing")).unwrap();
    std::fs::copy(work.path("sun.csv"), work.path("landing/sun.csv")).unwrap();
    std::fs::copy(work.path("sun.csv.json"), work.path("landing/sun.csv.json")).unwrap();
}

#[test]
fn a_landed_file_is_delivered_and_filed_with_its_receipt() {
    let work = work("3");
    land(&work);
    let pass = watch_once(&work);
    assert_eq!(pass["accepted"], serde_json::json!(["sun.csv"]));
    assert!(work.exists("landing/accepted/sun.csv"));
    assert!(work.exists("landing/accepted/sun.csv.json"));
    let receipt: Value =
        serde_json::from_str(&work.read("landing/accepted/sun.csv.receipt.json")).unwrap();
    assert_eq!(receipt["outcome"], "accepted");
    assert!(!work.exists("landing/sun.csv"));
    assert_eq!(stored_receipts(&work).len(), 1);
}

// rule: ALG-02
#[test]
fn a_watcher_restarted_on_a_file_it_delivered_answers_with_the_first_receipt() {
    let work = work("3");
    land(&work);
    watch_once(&work);
    // killed before it filed the pair away: the same pair is in the landing folder again
    land(&work);
    let pass = watch_once(&work);
    assert_eq!(pass["accepted"], serde_json::json!(["sun.csv"]));
    let receipts = stored_receipts(&work);
    assert_eq!(receipts.len(), 1, "delivered once: {receipts:?}");
}

#[test]
fn a_file_still_being_written_is_not_delivered() {
    let work = work("3");
    std::fs::create_dir_all(work.path("landing")).unwrap();
    std::fs::copy(work.path("sun.csv.json"), work.path("landing/sun.csv.json")).unwrap();
    let half = &SUNDAY[..SUNDAY.len() / 2];
    work.write("landing/sun.csv", half);
    let mut watcher = Command::new(env!("CARGO_BIN_EXE_dogana"))
        .current_dir(work.dir())
        .args([
            "watch",
            "landing",
            "--store",
            "orders.db",
            "--contracts",
            "contracts",
            "--stable-for",
            "1",
            "--poll",
            "0.1",
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // the writer appends a little every 300 ms: never unchanged for a second
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(work.path("landing/sun.csv"))
        .unwrap();
    for ch in SUNDAY.as_bytes()[SUNDAY.len() / 2..].chunks(8) {
        assert!(
            work.exists("landing/sun.csv"),
            "delivered while still being written"
        );
        file.write_all(ch).unwrap();
        file.flush().unwrap();
        std::thread::sleep(Duration::from_millis(300));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while !work.exists("landing/accepted/sun.csv.receipt.json") {
        assert!(Instant::now() < deadline, "never delivered once whole");
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = watcher.kill();
    let _ = watcher.wait();
    let receipt: Value =
        serde_json::from_str(&work.read("landing/accepted/sun.csv.receipt.json")).unwrap();
    assert_eq!(receipt["outcome"], "accepted", "{receipt}");
}

#[test]
fn a_landed_file_of_a_table_without_contract_is_rejected_with_the_reason() {
    let work = work("3");
    land(&work);
    std::fs::remove_file(work.path("contracts/orders.toml")).unwrap();
    work.write(
        "contracts/customers.toml",
        &ORDERS_TOML.replace("\"orders\"", "\"customers\""),
    );
    let pass = watch_once(&work);
    assert_eq!(pass["rejected"], serde_json::json!(["sun.csv"]));
    let error = work.read("landing/rejected/sun.csv.error.json");
    assert!(
        error.contains("DGN-305") && error.contains("orders"),
        "{error}"
    );
}

#[test]
fn a_sender_that_goes_away_mid_upload_leaves_nothing_staged() {
    let work = work("3");
    let server = Server::start(&work, &[]);
    let addr = server.base.strip_prefix("http://").unwrap().to_owned();
    let manifest = work.read("sun.csv.json");
    let head = format!(
        "--b\r\nContent-Disposition: form-data; name=\"manifest\"\r\n\r\n{manifest}\r\n\
         --b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"sun.csv\"\r\n\r\n{}",
        &SUNDAY[..40]
    );
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "POST /v1/tables/orders/deliveries HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ACME}\r\n\
         Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n{head}"
    )
    .unwrap();
    stream.flush().unwrap();
    // the upload has begun: its staging file exists
    let deadline = Instant::now() + Duration::from_secs(10);
    while staged(&work) == 0 {
        assert!(Instant::now() < deadline, "the upload was never staged");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(10);
    while staged(&work) != 0 {
        assert!(
            Instant::now() < deadline,
            "the staging file outlived its sender"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(stored_receipts(&work).is_empty(), "nothing was decided");
    assert_eq!(get(&server, "/healthz", None).0, 200, "the service goes on");
}

const INVOICES_TOML: &str = "table = \"invoices\"\nkey = [\"id\"]\n[types]\nid = \"int\"\n\
                             [shapes.full]\nkind = \"full\"\n";
const LINES_TOML: &str = "table = \"lines\"\nkey = [\"id\"]\n[types]\nid = \"int\"\n\
                          [shapes.full]\nkind = \"full\"\n";
const SHOP: &str = "token-of-shop";

/// orders' work, plus invoices and lines in the contracts folder, `inv.csv` and `lin.csv`
/// (full reads at one instant, `lines_rows` declared for lines), and a sender `shop` that
/// delivers both and reads them.
fn shop(lines_rows: &str) -> Work {
    let work = work("3");
    work.write("contracts/invoices.toml", INVOICES_TOML);
    work.write("contracts/lines.toml", LINES_TOML);
    work.write(
        "senders.toml",
        &format!(
            "{}\n[[sender]]\nname = \"shop\"\ntoken_sha256 = \"{}\"\n\
             deliver = [\"invoices\", \"lines\"]\nread = [\"invoices\", \"lines\"]\n",
            tokens(),
            digest(SHOP)
        ),
    );
    for (file, contract, rows) in [
        ("inv.csv", "invoices", "2"),
        ("lin.csv", "lines", lines_rows),
    ] {
        work.write(file, "id,amount\n1,1.00\n2,2.00\n");
        work.dogana([
            "manifest",
            file,
            "--contract",
            &format!("contracts/{contract}.toml"),
            "--shape",
            "full",
            "--produced-at",
            "2026-10-25T06:00:00Z",
            "--rows",
            rows,
            "--force",
        ])
        .assert()
        .success();
    }
    work
}

fn post_group(server: &Server, token: &str, form: multipart::Form) -> (u16, Value) {
    let resp = client()
        .post(server.url("/v1/groups/deliveries"))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().unwrap_or(Value::Null))
}

/// A manifest part then its file part, per file.
fn group_form(work: &Work, files: &[&str]) -> multipart::Form {
    let mut form = multipart::Form::new();
    for file in files {
        form = form
            .part(
                "manifest",
                multipart::Part::bytes(std::fs::read(work.path(&format!("{file}.json"))).unwrap()),
            )
            .part(
                "file",
                multipart::Part::bytes(std::fs::read(work.path(file)).unwrap())
                    .file_name(file.to_string()),
            );
    }
    form
}

fn receipts_of(work: &Work, table: &str) -> Vec<Value> {
    let out = work
        .dogana(["receipts", "--store", "orders.db", table, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    match serde_json::from_str(&text(&out.stdout)).unwrap() {
        Value::Array(receipts) => receipts,
        other => panic!("not an array: {other}"),
    }
}

// rule: GROUP-14, GROUP-16, GROUP-23
#[test]
fn a_group_pushed_is_accepted_together_and_a_repeat_replays_whole() {
    let work = shop("2");
    let server = Server::start(&work, &[]);
    let (status, body) = post_group(&server, SHOP, group_form(&work, &["inv.csv", "lin.csv"]));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["outcome"], "accepted", "{body}");
    let receipts = body["receipts"].as_array().unwrap();
    assert_eq!(receipts.len(), 2);
    for r in receipts {
        assert_eq!(r["receipt"]["source"], "shop", "{body}");
        let checks = r["receipt"]["checks"].as_array().unwrap();
        assert!(
            checks.iter().any(|c| c["name"] == "together"),
            "every receipt carries the together check: {r}"
        );
    }
    assert_eq!(receipts_of(&work, "invoices").len(), 1);
    assert_eq!(receipts_of(&work, "lines").len(), 1);

    let (status, again) = post_group(&server, SHOP, group_form(&work, &["lin.csv", "inv.csv"]));
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["outcome"], "replayed", "{again}");
    assert_eq!(
        receipts_of(&work, "invoices").len(),
        1,
        "a replay stores nothing"
    );
    let verify = work
        .dogana(["verify", "--store", "orders.db", "invoices"])
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify.stderr));
}

// rule: GROUP-15
#[test]
fn a_group_with_one_table_refused_is_422_and_every_receipt_a_rejection() {
    let work = shop("5");
    let server = Server::start(&work, &[]);
    let (status, body) = post_group(&server, SHOP, group_form(&work, &["inv.csv", "lin.csv"]));
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["outcome"], "rejected");
    for r in body["receipts"].as_array().unwrap() {
        assert_eq!(r["outcome"], "rejected", "{r}");
    }
    let (_, claims) = get(&server, "/v1/tables/invoices/claims", Some(SHOP));
    let claims: Value = serde_json::from_str(&claims).unwrap();
    assert!(
        claims["dates"]["complete_as_of"].is_null(),
        "invoices passed alone, yet nothing of the group is published: {claims}"
    );
    assert_eq!(
        receipts_of(&work, "invoices").len(),
        1,
        "the rejection is kept"
    );
}

#[test]
fn a_group_naming_a_table_not_granted_is_403_and_nothing_is_stored() {
    let work = shop("2");
    let server = Server::start(&work, &[]);
    // acme delivers orders only
    let (status, body) = post_group(&server, ACME, group_form(&work, &["inv.csv", "lin.csv"]));
    assert_eq!((status, code(&body)), (403, "DGN-702"), "{body}");
    assert!(!work.exists("orders.db"));
    assert_eq!(staged(&work), 0);
}

#[test]
fn a_group_whose_file_comes_before_its_manifest_is_400() {
    let work = shop("2");
    let server = Server::start(&work, &[]);
    let form = multipart::Form::new()
        .part(
            "file",
            multipart::Part::bytes(std::fs::read(work.path("inv.csv")).unwrap())
                .file_name("inv.csv"),
        )
        .part(
            "manifest",
            multipart::Part::bytes(std::fs::read(work.path("inv.csv.json")).unwrap()),
        );
    let (status, body) = post_group(&server, SHOP, form);
    assert_eq!((status, code(&body)), (400, "DGN-703"), "{body}");
    let (status, body) = post_group(&server, SHOP, group_form(&work, &["inv.csv", "inv.csv"]));
    assert_eq!(
        (status, code(&body)),
        (400, "DGN-110"),
        "a table twice: {body}"
    );
    assert!(!work.exists("orders.db"));
}

/// Accepts one HTTP request on `listener` and returns its body.
fn one_request_body(listener: std::net::TcpListener) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        stream
            .write_all(b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n")
            .unwrap();
        String::from_utf8(body).unwrap()
    })
}

#[test]
fn a_decided_delivery_posts_its_openlineage_event_with_its_row_count() {
    let work = work("3");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api/v1/lineage", listener.local_addr().unwrap());
    let received = one_request_body(listener);
    let server = Server::start(&work, &["--lineage-url", &url]);
    let (status, body) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!(status, 200, "{body}");
    let event: Value = serde_json::from_str(&received.join().unwrap()).unwrap();
    assert_eq!(event["eventType"], "COMPLETE");
    assert_eq!(event["job"]["name"], "deliver.orders");
    assert_eq!(
        event["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"],
        3
    );
}

#[test]
fn a_lineage_url_that_is_not_http_is_refused_before_listening() {
    let work = work("3");
    let out = Command::new(env!("CARGO_BIN_EXE_dogana"))
        .current_dir(work.dir())
        .args([
            "serve",
            "--store",
            "orders.db",
            "--contracts",
            "contracts",
            "--tokens",
            "senders.toml",
            "--listen",
            "127.0.0.1:0",
            "--lineage-url",
            "ftp://example/lineage",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("DGN-705") && err.contains("--lineage-url"),
        "{err}"
    );
}

#[test]
fn over_tls_a_delivery_is_accepted_and_a_plain_http_request_gets_no_answer() {
    let work = work("3");
    let issued =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .unwrap();
    work.write("cert.pem", &issued.cert.pem());
    work.write("key.pem", &issued.signing_key.serialize_pem());
    let server = Server::start(&work, &["--tls-cert", "cert.pem", "--tls-key", "key.pem"]);
    assert!(server.base.starts_with("https://"), "{}", server.base);
    let trusted = Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(issued.cert.pem().as_bytes()).unwrap())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let resp = trusted
        .post(server.url("/v1/tables/orders/deliveries"))
        .bearer_auth(ACME)
        .multipart(delivery(&work, "sun.csv"))
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let body: Value = resp.json().unwrap();
    assert_eq!(body["outcome"], "accepted", "{body}");

    // a client that does not trust the certificate is refused by its own TLS
    assert!(client().get(server.url("/healthz")).send().is_err());
    // plain HTTP on the TLS port: the handshake fails and nothing is served
    let plain = server.base.replacen("https://", "http://", 1);
    let answered = client()
        .get(format!("{plain}/healthz"))
        .send()
        .map(|r| r.status().as_u16());
    assert!(
        !matches!(answered, Ok(200)),
        "plain HTTP must not be served: {answered:?}"
    );
}

#[test]
fn a_tls_key_that_does_not_load_is_refused_before_listening() {
    let work = work("3");
    work.write("cert.pem", "not a certificate");
    work.write("key.pem", "not a key");
    let out = Command::new(env!("CARGO_BIN_EXE_dogana"))
        .current_dir(work.dir())
        .args([
            "serve",
            "--store",
            "orders.db",
            "--contracts",
            "contracts",
            "--tokens",
            "senders.toml",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            "cert.pem",
            "--tls-key",
            "key.pem",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("DGN-705") && err.contains("--tls-cert"),
        "{err}"
    );
}

// The staging folder is a 256 KiB tmpfs mounted in the server's own user and mount namespaces
// (util-linux `unshare`, no privilege needed): an upload of 1 MiB fills it.
#[test]
fn a_disk_that_fills_mid_upload_is_507_and_nothing_changes() {
    let work = work("3");
    std::fs::create_dir(work.path("staging")).unwrap();
    let mount = "mount -t tmpfs -o size=256k tmpfs staging && exec \"$@\"";
    let probe = Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--mount",
            "sh",
            "-c",
            mount,
            "sh",
            "true",
        ])
        .current_dir(work.dir())
        .output()
        .expect("unshare (util-linux) is needed by this test: apt-get install util-linux");
    assert!(
        probe.status.success(),
        "this test mounts a small tmpfs in a user namespace and cannot: {}",
        text(&probe.stderr)
    );
    let server = Server::start_under(
        &work,
        &[
            "unshare",
            "--user",
            "--map-root-user",
            "--mount",
            "sh",
            "-c",
            mount,
            "sh",
        ],
        "orders.db",
        &["--max-bytes", "10000000"],
    );
    let mut big = String::from(SUNDAY);
    while big.len() < 1 << 20 {
        big.push_str("4,2026-10-23,2026-10-23T10:00:00Z,40.00,false\n");
    }
    let form = multipart::Form::new()
        .part(
            "manifest",
            multipart::Part::bytes(std::fs::read(work.path("sun.csv.json")).unwrap()),
        )
        .part(
            "file",
            multipart::Part::bytes(big.into_bytes()).file_name("sun.csv"),
        );
    let (status, body) = post(&server, "orders", Some(ACME), form);
    assert_eq!((status, code(&body)), (507, "DGN-403"), "{body}");
    assert!(stored_receipts(&work).is_empty(), "nothing was decided");
    assert!(!work.exists("orders.db"), "the store was not touched");
    // the partial upload was removed: the small delivery fits
    let (status, body) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!(status, 200, "{body}");
}

/// A small deterministic generator (xorshift), seeded from the clock and printed, so that a
/// failing run names the kill points to replay.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What each upload of the kill test got: its receipt identity once the service answered.
type Answers = std::sync::Arc<std::sync::Mutex<Vec<Option<(u16, String)>>>>;

/// Posts uploads `todo` from 8 threads until each is answered or the service is gone.
fn upload_all(work: &Work, base: &str, todo: Vec<usize>, answers: &Answers) {
    let queue = std::sync::Arc::new(std::sync::Mutex::new(todo));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let queue = queue.clone();
            let answers = answers.clone();
            let base = base.to_owned();
            let dir = work.dir().to_owned();
            std::thread::spawn(move || loop {
                let Some(i) = queue.lock().unwrap().pop() else {
                    return;
                };
                let file = format!("d{i}.csv");
                let form = multipart::Form::new()
                    .part(
                        "manifest",
                        multipart::Part::bytes(
                            std::fs::read(dir.join(format!("{file}.json"))).unwrap(),
                        ),
                    )
                    .part(
                        "file",
                        multipart::Part::bytes(std::fs::read(dir.join(&file)).unwrap())
                            .file_name(file),
                    );
                let sent = client()
                    .post(format!("{base}/v1/tables/orders/deliveries"))
                    .bearer_auth(ACME)
                    .multipart(form)
                    .send();
                let Ok(resp) = sent else { continue };
                let status = resp.status().as_u16();
                let Ok(body) = resp.json::<Value>() else {
                    continue;
                };
                if let Some(id) = body["receipt_identity"].as_str() {
                    answers.lock().unwrap()[i] = Some((status, id.to_owned()));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

// rule: RECV-09, RECV-01
#[test]
fn a_service_killed_during_100_uploads_leaves_each_published_with_its_receipt_or_absent() {
    let work = work("3");
    const N: usize = 100;
    let mut rows = String::from("id,order_date,updated_at,amount,deleted\n");
    for id in 1..=2000 {
        rows.push_str(&format!(
            "{id},2026-10-20,2026-10-20T10:00:00Z,{id}.00,false\n"
        ));
    }
    for i in 0..N {
        let file = format!("d{i}.csv");
        work.write(&file, &rows);
        let at = format!("2026-10-25T{:02}:{:02}:00Z", i / 60, i % 60);
        work.dogana([
            "manifest",
            &file,
            "--contract",
            "contracts/orders.toml",
            "--shape",
            "full",
            "--produced-at",
            &at,
            "--rows",
            "2000",
            "--force",
        ])
        .assert()
        .success();
    }
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("kill points seeded with {seed}");
    let mut rng = Xorshift(seed);
    let answers: Answers = std::sync::Arc::new(std::sync::Mutex::new(vec![None; N]));
    for _round in 0..3 {
        let todo: Vec<usize> = (0..N)
            .filter(|&i| answers.lock().unwrap()[i].is_none())
            .collect();
        let mut server = Server::start(&work, &[]);
        let base = server.base.clone();
        // killed once a random share of this round's uploads is answered, a random few
        // milliseconds later: in an upload, a decision or a commit
        let done_before = N - todo.len();
        let target = done_before + 1 + (rng.next() % (todo.len() as u64 * 3 / 4).max(1)) as usize;
        let delay = Duration::from_micros(rng.next() % 20_000);
        let killer = {
            let answers = answers.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(120);
                while answers.lock().unwrap().iter().flatten().count() < target
                    && Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(delay);
                let _ = server.child.kill();
                let _ = server.child.wait();
            })
        };
        upload_all(&work, &base, todo, &answers);
        killer.join().unwrap();
    }
    // restarted: what the killed services staged is swept, the store verifies
    let server = Server::start(&work, &[]);
    assert_eq!(
        staged(&work),
        0,
        "a killed service's uploads are swept at start"
    );
    let verify = work
        .dogana(["verify", "--store", "orders.db", "orders"])
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify.stderr));
    let (_, listed) = get(&server, "/v1/tables/orders/receipts", Some(ACME));
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let stored: std::collections::HashSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["identity"].as_str().unwrap().to_owned())
        .collect();
    let answered = answers.lock().unwrap().clone();
    for (i, a) in answered.iter().enumerate() {
        if let Some((status, id)) = a {
            assert!(matches!(status, 200 | 422), "d{i}: {status}");
            assert!(
                stored.contains(id),
                "d{i} was answered {id} and its receipt is lost"
            );
        }
    }
    // every upload never answered is either published (a replay now) or absent (decided now)
    let todo: Vec<usize> = (0..N).filter(|&i| answered[i].is_none()).collect();
    eprintln!("{} of {N} uploads were cut by a kill", todo.len());
    assert!(
        !todo.is_empty(),
        "the kills came after every upload: the test proved nothing"
    );
    upload_all(&work, &server.base, todo.clone(), &answers);
    let answered = answers.lock().unwrap().clone();
    for i in todo {
        let (status, _) = answered[i]
            .as_ref()
            .unwrap_or_else(|| panic!("d{i} unanswered"));
        assert!(matches!(status, 200 | 422), "d{i}: {status}");
    }
    let verify = work
        .dogana(["verify", "--store", "orders.db", "orders"])
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify.stderr));
}

/// Concurrent deliveries to two tables and a group, on the store `store` names: every answer
/// is a receipt the store keeps, and every table verifies after.
#[cfg(any(feature = "postgres", feature = "lake"))]
fn load_on(store: &str) {
    let work = shop("2");
    const N: usize = 12;
    for i in 0..N {
        let file = format!("o{i}.csv");
        work.write(&file, SUNDAY);
        let at = format!("2026-10-25T06:{i:02}:00Z");
        work.dogana([
            "manifest",
            &file,
            "--contract",
            "contracts/orders.toml",
            "--shape",
            "full",
            "--produced-at",
            &at,
            "--rows",
            "3",
            "--force",
        ])
        .assert()
        .success();
    }
    let server = Server::start_on(&work, store);
    let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let posts: Vec<_> = (0..N)
            .map(|i| {
                let (work, server) = (&work, &server);
                scope.spawn(move || {
                    post(
                        server,
                        "orders",
                        Some(ACME),
                        delivery(work, &format!("o{i}.csv")),
                    )
                })
            })
            .collect();
        let group =
            scope.spawn(|| post_group(&server, SHOP, group_form(&work, &["inv.csv", "lin.csv"])));
        let mut all: Vec<_> = posts.into_iter().map(|p| p.join().unwrap()).collect();
        all.push(group.join().unwrap());
        all
    });
    for (status, body) in &answers {
        assert!(matches!(status, 200 | 422), "{status}: {body}");
    }
    assert_eq!(
        answers.last().unwrap().1["outcome"],
        "accepted",
        "the group"
    );
    let (_, listed) = get(&server, "/v1/tables/orders/receipts", Some(ACME));
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let stored: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["identity"].as_str().unwrap())
        .collect();
    for (_, body) in &answers[..N] {
        let id = body["receipt_identity"].as_str().unwrap();
        assert!(stored.contains(&id), "{id} answered, not stored");
    }
    assert_eq!(stored.len(), N, "one receipt per delivery");
    for table in ["orders", "invoices", "lines"] {
        let verify = work
            .dogana(["verify", "--store", store, table])
            .output()
            .unwrap();
        assert!(verify.status.success(), "{table}: {}", text(&verify.stderr));
    }
}

#[cfg(feature = "postgres")]
mod on_postgres {
    /// The test server (`bash scripts/test-postgres.sh`), or a failure saying how to start one.
    fn store() -> String {
        let url = std::env::var("DOGANA_PG_URL").expect(
            "DOGANA_PG_URL is not set: this test needs a Postgres server; run bash scripts/test-postgres.sh",
        );
        let schema = format!("serve_{}", std::process::id());
        let mut admin =
            dogana_postgres::postgres::Client::connect(&url, dogana_postgres::postgres::NoTls)
                .unwrap_or_else(|e| panic!("the test server (DOGANA_PG_URL) is unreachable: {e}"));
        admin
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
            ))
            .unwrap();
        format!("{url}?schema={schema}")
    }

    // rule: RECV-09
    #[test]
    fn the_service_on_postgres_keeps_every_answered_receipt_under_concurrent_senders() {
        super::load_on(&store());
    }
}

#[cfg(feature = "lake")]
mod on_lake {
    // rule: RECV-09
    #[test]
    fn the_service_on_the_lake_keeps_every_answered_receipt_under_concurrent_senders() {
        let dir = tempfile::tempdir().unwrap();
        super::load_on(&format!("file://{}", dir.path().join("lake").display()));
    }

    #[test]
    fn a_lake_not_made_yet_is_ready_and_claims_nothing() {
        let work = super::work("3");
        let dir = tempfile::tempdir().unwrap();
        let store = format!("file://{}", dir.path().join("lake").display());
        let server = super::Server::start_on(&work, &store);
        assert_eq!(super::get(&server, "/readyz", None).0, 200);
        let (status, receipts) =
            super::get(&server, "/v1/tables/orders/receipts", Some(super::ACME));
        assert_eq!((status, receipts.as_str()), (200, "[]"));
        assert!(!dir.path().join("lake").exists(), "reading made nothing");
    }
}

#[test]
fn an_upload_that_stalls_mid_body_is_408_and_nothing_is_staged() {
    let work = work("3");
    let server = Server::start(&work, &["--request-timeout", "1"]);
    let addr = server.base.strip_prefix("http://").unwrap().to_owned();
    let manifest = work.read("sun.csv.json");
    let head = format!(
        "--b\r\nContent-Disposition: form-data; name=\"manifest\"\r\n\r\n{manifest}\r\n\
         --b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"sun.csv\"\r\n\r\n{}",
        &SUNDAY[..40]
    );
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "POST /v1/tables/orders/deliveries HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ACME}\r\n\
         Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n{head}"
    )
    .unwrap();
    stream.flush().unwrap();
    // then nothing: the service answers once the request timeout passes
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = text(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("DGN-404"), "{answer}");
    assert_eq!(staged(&work), 0);
    assert!(stored_receipts(&work).is_empty());
}

#[test]
fn a_store_locked_past_the_lock_timeout_is_503_and_the_sender_may_retry() {
    let work = work("3");
    // the store exists (one delivery), then another writer holds it
    let server = Server::start(&work, &["--lock-timeout", "1"]);
    let (status, _) = post(&server, "orders", Some(ACME), delivery(&work, "sun.csv"));
    assert_eq!(status, 200);
    let holder = dogana_sqlite::rusqlite::Connection::open(work.path("orders.db")).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    work.write("sun2.csv", SUNDAY);
    work.dogana([
        "manifest",
        "sun2.csv",
        "--contract",
        "contracts/orders.toml",
        "--shape",
        "full",
        "--produced-at",
        "2026-10-26T06:00:00Z",
        "--rows",
        "3",
        "--force",
    ])
    .assert()
    .success();
    let (status, body) = post(&server, "orders", Some(ACME), delivery(&work, "sun2.csv"));
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["kind"], "transient", "{body}");
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    let (status, body) = post(&server, "orders", Some(ACME), delivery(&work, "sun2.csv"));
    assert_eq!(status, 200, "the retry once the lock is free: {body}");
}

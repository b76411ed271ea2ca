//! The receiving service under load, against `dogana deliver` in a loop (bench/serve.md).
//!
//! ```sh
//! cargo build --release -p dogana-cli --features serve,postgres,lake
//! cargo run --release -p dogana-cli --features serve,postgres --example serve_load -- \
//!     --dogana target/release/dogana --store sqlite [--tables 8 --senders 32 --each 200]
//! ```
//!
//! `--store` is `sqlite`, `lake` (a `file://` lake) or a Postgres URL without a schema (each
//! run takes a schema of its own). One round is: `S` senders, each posting its `E` deliveries
//! one after the other to `dogana serve` (`T` tables, each delivery a window read of 100 rows,
//! one day of its own in its table, so that every delivery is admitted whatever the order), then the same deliveries made with `dogana deliver`, one process
//! each, in the order the service decided them and at the instant it received each, into a
//! fresh store. Rounds alternate which goes first. Each run must end with every answer's
//! receipt stored (0 lost), `dogana verify` clean on every table (0 torn) and the same
//! acceptances and rejections in both stores; it prints throughput and p50/p99 latency.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dogana::{FromWire, Wire};
use reqwest::blocking::{multipart, Client};
use serde_json::Value;
use sha2::{Digest, Sha256};

struct Args {
    dogana: PathBuf,
    store: String,
    tables: usize,
    senders: usize,
    each: usize,
    rounds: usize,
    max_concurrent: usize,
}

fn args() -> Args {
    let mut a = Args {
        dogana: PathBuf::from("target/release/dogana"),
        store: "sqlite".into(),
        tables: 8,
        senders: 32,
        each: 200,
        rounds: 2,
        max_concurrent: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let n = || {
            value
                .parse::<usize>()
                .unwrap_or_else(|_| panic!("{flag} {value}"))
        };
        match flag.as_str() {
            "--dogana" => a.dogana = value.clone().into(),
            "--store" => a.store = value.clone(),
            "--tables" => a.tables = n(),
            "--senders" => a.senders = n(),
            "--each" => a.each = n(),
            "--rounds" => a.rounds = n(),
            "--max-concurrent" => a.max_concurrent = n(),
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

/// One delivery of the load: its table, its file (the manifest beside it) and its sender.
struct Job {
    table: usize,
    file: PathBuf,
    sender: usize,
    produced: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Contracts, tokens, one file and manifest per delivery.
fn prepare(dir: &Path, a: &Args) -> Vec<Job> {
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::create_dir_all(dir.join("files")).unwrap();
    let names: Vec<String> = (0..a.tables).map(|t| format!("\"t{t}\"")).collect();
    let mut tokens = String::new();
    for s in 0..a.senders {
        tokens.push_str(&format!(
            "[[sender]]\nname = \"s{s}\"\ntoken_sha256 = \"{}\"\ndeliver = [{}]\nread = [{}]\n\n",
            hex(&Sha256::digest(format!("token-{s}").as_bytes())),
            names.join(", "),
            names.join(", ")
        ));
    }
    std::fs::write(dir.join("senders.toml"), tokens).unwrap();
    for t in 0..a.tables {
        std::fs::write(
            dir.join(format!("contracts/t{t}.toml")),
            format!(
                "table = \"t{t}\"\nkey = [\"id\"]\nwindow_column = \"day\"\n[types]\n\
                 id = \"int\"\nday = \"date\"\n[shapes.day]\nkind = \"window\"\n"
            ),
        )
        .unwrap();
    }
    let mut jobs = Vec::new();
    for s in 0..a.senders {
        for k in 0..a.each {
            let i = s * a.each + k;
            let table = i % a.tables;
            let file = dir.join(format!("files/d{i}.csv"));
            // a day of its own in its table: disjoint windows are admitted in any order, as
            // daily partitions sent by many senders are
            let day = &instant(1_600_000_000 + (i / a.tables) as i64 * 86_400)[..10];
            let mut rows = String::from("id,day\n");
            for r in 0..100 {
                rows.push_str(&format!("{},{day}\n", i * 100 + r));
            }
            std::fs::write(&file, &rows).unwrap();
            let content_hash = hex(&Sha256::digest(rows.as_bytes()));
            let at = 1_700_000_000 + i as i64 * 60;
            let produced = instant(at);
            std::fs::write(
                dir.join(format!("files/d{i}.csv.json")),
                format!(
                    "{{\"content_hash\":\"{content_hash}\",\"generation\":null,\"kind\":\"Manifest\",\
                     \"produced_at\":{{\"$datetime\":\"{produced}\"}},\"rows\":100,\"schema_hash\":null,\
                     \"shape\":\"day\",\"since\":null,\"table\":\"t{table}\",\"tombstones\":0,\
                     \"version\":4,\"window\":[{{\"$date\":\"{day}\"}},{{\"$date\":\"{day}\"}}]}}"
                ),
            )
            .unwrap();
            jobs.push(Job {
                table,
                file,
                sender: s,
                produced,
            });
        }
    }
    jobs
}

/// Seconds since 1970 as the protocol writes an instant (`YYYY-MM-DDTHH:MM:SS+00:00`).
fn instant(secs: i64) -> String {
    dogana::Timestamp::from_micros(secs * 1_000_000)
        .expect("inside the protocol's domain")
        .to_string()
}

/// A fresh store of the kind `--store` names, under `dir`.
fn store_url(a: &Args, dir: &Path, name: &str) -> String {
    match a.store.as_str() {
        "sqlite" => dir.join(format!("{name}.db")).display().to_string(),
        "lake" => format!("file://{}", dir.join(name).display()),
        url if url.starts_with("postgres") => {
            let nonce = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_micros();
            let schema = format!("load_{name}_{nonce}");
            create_schema(url, &schema);
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}schema={schema}")
        }
        other => panic!("--store {other}: sqlite, lake or a postgres:// URL"),
    }
}

#[cfg(feature = "postgres")]
fn create_schema(url: &str, schema: &str) {
    use dogana_postgres::postgres::{Client, NoTls};
    Client::connect(url, NoTls)
        .and_then(|mut c| c.batch_execute(&format!("CREATE SCHEMA {schema}")))
        .unwrap_or_else(|e| panic!("cannot create the schema {schema}: {e}"));
}

#[cfg(not(feature = "postgres"))]
fn create_schema(_: &str, _: &str) {
    panic!("a Postgres store needs the example built with --features postgres");
}

struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

fn start(a: &Args, dir: &Path, store: &str) -> Server {
    let mut child = Command::new(&a.dogana)
        .current_dir(dir)
        .args(["serve", "--store", store, "--contracts", "contracts"])
        .args(["--tokens", "senders.toml", "--listen", "127.0.0.1:0"])
        .args(["--staging", "staging", "--max-concurrent"])
        .arg(a.max_concurrent.to_string())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("serve.log")).unwrap())
        .spawn()
        .expect("--dogana names the binary built with the serve feature");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| {
            let log = std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default();
            panic!("dogana serve did not start: {line:?} {log}")
        })
        .to_owned();
    Server(child, base)
}

/// What one decided delivery answered.
#[derive(Clone)]
struct Answer {
    job: usize,
    outcome: String,
    identity: String,
    received_at: String,
    seconds: f64,
    redecided: u64,
}

/// The service round: every sender's deliveries, one after the other per sender.
fn service_round(a: &Args, dir: &Path, jobs: &[Job], store: &str) -> (f64, Vec<Answer>) {
    let server = start(a, dir, store);
    let answers: Arc<Mutex<Vec<Answer>>> = Arc::default();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for s in 0..a.senders {
            let answers = answers.clone();
            let base = server.1.clone();
            scope.spawn(move || {
                let client = Client::builder()
                    .timeout(Duration::from_secs(600))
                    .build()
                    .unwrap();
                for (i, job) in jobs.iter().enumerate().filter(|(_, j)| j.sender == s) {
                    let manifest = std::fs::read(job.file.with_extension("csv.json")).unwrap();
                    let bytes = std::fs::read(&job.file).unwrap();
                    let form = multipart::Form::new()
                        .part("manifest", multipart::Part::bytes(manifest))
                        .part("file", multipart::Part::bytes(bytes).file_name("d.csv"));
                    let t = Instant::now();
                    let resp = client
                        .post(format!("{base}/v1/tables/t{}/deliveries", job.table))
                        .bearer_auth(format!("token-{s}"))
                        .multipart(form)
                        .send()
                        .unwrap();
                    let status = resp.status().as_u16();
                    let body: Value = resp.json().unwrap();
                    assert!(
                        matches!(status, 200 | 422) && body["outcome"].is_string(),
                        "{status}: {body}"
                    );
                    answers.lock().unwrap().push(Answer {
                        job: i,
                        outcome: body["outcome"].as_str().unwrap().to_owned(),
                        identity: body["receipt_identity"].as_str().unwrap().to_owned(),
                        received_at: body["receipt"]["received_at"]["$datetime"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        seconds: t.elapsed().as_secs_f64(),
                        redecided: body["redecided"].as_u64().unwrap_or(0),
                    });
                }
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    drop(server);
    let answers = Arc::try_unwrap(answers).ok().unwrap().into_inner().unwrap();
    (wall, answers)
}

/// The reference round: `dogana deliver` per delivery, in the service's order and instants.
fn loop_round(
    a: &Args,
    dir: &Path,
    jobs: &[Job],
    order: &[Answer],
    store: &str,
) -> (f64, Vec<Answer>) {
    let started = Instant::now();
    let mut out = Vec::new();
    for answer in order {
        let job = &jobs[answer.job];
        let t = Instant::now();
        let run = Command::new(&a.dogana)
            .current_dir(dir)
            .arg("deliver")
            .arg(&job.file)
            .args(["--contract", &format!("contracts/t{}.toml", job.table)])
            .args(["--store", store, "--source", &format!("s{}", job.sender)])
            .args(["--at", &answer.received_at, "--json"])
            .output()
            .unwrap();
        let seconds = t.elapsed().as_secs_f64();
        let text = String::from_utf8_lossy(&run.stdout);
        let receipt = dogana::Receipt::from_json(text.trim()).unwrap_or_else(|e| {
            panic!(
                "deliver said {e}: {text} {}",
                String::from_utf8_lossy(&run.stderr)
            )
        });
        let outcome = match receipt.outcome() {
            dogana::Outcome::Accepted => "accepted",
            dogana::Outcome::Rejected => "rejected",
            dogana::Outcome::Replayed => "replayed",
        };
        out.push(Answer {
            job: answer.job,
            outcome: outcome.to_owned(),
            identity: String::new(),
            received_at: String::new(),
            seconds,
            redecided: 0,
        });
    }
    (started.elapsed().as_secs_f64(), out)
}

/// 0 lost receipts and 0 torn states: every answered identity is stored, every table verifies.
/// Returns the stored receipts, table by table in their stored order, as (job, received_at).
fn check_store(
    a: &Args,
    dir: &Path,
    store: &str,
    answers: &[Answer],
    job_of: &HashMap<(usize, String), usize>,
) -> Vec<Answer> {
    let mut stored = std::collections::HashSet::new();
    let mut order = Vec::new();
    for t in 0..a.tables {
        let out = Command::new(&a.dogana)
            .current_dir(dir)
            .args(["receipts", "--store", store, &format!("t{t}"), "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
        for r in listed.as_array().unwrap() {
            let receipt = dogana::Receipt::from_json(&r.to_string()).unwrap();
            stored.insert(receipt.identity());
            let produced = r["manifest"]["produced_at"]["$datetime"]
                .as_str()
                .unwrap()
                .to_owned();
            order.push(Answer {
                job: job_of[&(t, produced)],
                outcome: String::new(),
                identity: receipt.identity(),
                received_at: r["received_at"]["$datetime"].as_str().unwrap().to_owned(),
                seconds: 0.0,
                redecided: 0,
            });
        }
        let verify = Command::new(&a.dogana)
            .current_dir(dir)
            .args(["verify", "--store", store, &format!("t{t}")])
            .output()
            .unwrap();
        assert!(
            verify.status.success(),
            "t{t} does not verify: {}",
            String::from_utf8_lossy(&verify.stderr)
        );
    }
    let lost = answers
        .iter()
        .filter(|x| !stored.contains(&x.identity))
        .count();
    assert_eq!(lost, 0, "{lost} answered receipts are not stored");
    order
}

fn percentile(seconds: &mut [f64], p: f64) -> f64 {
    seconds.sort_by(f64::total_cmp);
    let i = ((seconds.len() as f64 - 1.0) * p).round() as usize;
    seconds[i] * 1000.0
}

fn main() {
    let a = args();
    let dir = tempfile::tempdir().unwrap();
    let jobs = prepare(dir.path(), &a);
    println!(
        "store {}; {} senders x {} deliveries into {} tables (a day of 100 rows each), --max-concurrent {}",
        a.store, a.senders, a.each, a.tables, a.max_concurrent
    );
    println!("| round | service deliveries/s | p50 ms | p99 ms | loop deliveries/s | p50 ms | p99 ms | ratio |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let job_of: HashMap<(usize, String), usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| ((j.table, j.produced.clone()), i))
        .collect();
    let tally = |v: &[Answer]| {
        let mut m: HashMap<String, usize> = HashMap::new();
        for x in v {
            *m.entry(x.outcome.clone()).or_default() += 1;
        }
        let mut m: Vec<_> = m.into_iter().collect();
        m.sort();
        m
    };
    // The loop replays an order the service decided (each table's receipts in stored order,
    // at the instants the service received them), so the first round runs the service first;
    // later rounds alternate, the loop replaying the previous round's order.
    let mut order: Vec<Answer> = Vec::new();
    for round in 0..a.rounds {
        let svc_store = store_url(&a, dir.path(), &format!("svc{round}"));
        let ref_store = store_url(&a, dir.path(), &format!("ref{round}"));
        let loop_first = round % 2 == 1;
        let mut looped = None;
        if loop_first {
            looped = Some(loop_round(&a, dir.path(), &jobs, &order, &ref_store));
        }
        let (svc_wall, svc) = service_round(&a, dir.path(), &jobs, &svc_store);
        let this_order = check_store(&a, dir.path(), &svc_store, &svc, &job_of);
        let (ref_wall, reference) = match looped {
            Some(done) => done,
            None => {
                order = this_order.clone();
                loop_round(&a, dir.path(), &jobs, &order, &ref_store)
            }
        };
        if !loop_first {
            assert_eq!(
                tally(&svc),
                tally(&reference),
                "the two stores decided differently"
            );
        }
        order = this_order;
        let n = jobs.len() as f64;
        let mut s: Vec<f64> = svc.iter().map(|x| x.seconds).collect();
        let mut r: Vec<f64> = reference.iter().map(|x| x.seconds).collect();
        println!(
            "| {round}{} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2}x |",
            if loop_first { " (loop first)" } else { "" },
            n / svc_wall,
            percentile(&mut s, 0.5),
            percentile(&mut s, 0.99),
            n / ref_wall,
            percentile(&mut r, 0.5),
            percentile(&mut r, 0.99),
            ref_wall / svc_wall
        );
        println!(
            "service outcomes {:?} (decided again after the head moved: {}), loop outcomes {:?}",
            tally(&svc),
            svc.iter().map(|x| x.redecided).sum::<u64>(),
            tally(&reference)
        );
    }
}

//! Fuzzes the receiving service's delivery routes through its router (no socket): whatever a
//! sender posts as a multipart body, to one table or as a group, the service answers with a
//! status it documents, a refusal is a JSON error with a stable code and a bounded value, no
//! upload is left staged, and a refusal changes nothing in the store.
//!
//! The first byte picks the route and the content type; the rest is the body. Run with
//! `cargo +nightly fuzz run serve_delivery` from the repository root; `fuzz/seeds/serve_delivery`
//! holds a valid delivery and a valid group to start from.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

const TOKEN: &str = "token-of-fuzz";

/// What a refusal may quote of a sender's value (200 bytes, escaped, plus the ellipsis).
const VALUE_MAX: usize = 200 * 10 + 3;

struct Fixture {
    runtime: tokio::runtime::Runtime,
    app: dogana_serve::App,
    store: PathBuf,
    staging: PathBuf,
    _dir: tempfile::TempDir,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("contracts")).unwrap();
        for table in ["orders", "lines"] {
            std::fs::write(
                root.join(format!("contracts/{table}.toml")),
                format!(
                    "table = \"{table}\"\nkey = [\"id\"]\n[types]\nid = \"int\"\n\
                     [shapes.full]\nkind = \"full\"\n"
                ),
            )
            .unwrap();
        }
        let digest = sha2_hex(TOKEN);
        std::fs::write(
            root.join("senders.toml"),
            format!(
                "[[sender]]\nname = \"fuzz\"\ntoken_sha256 = \"{digest}\"\n\
                 deliver = [\"orders\", \"lines\"]\nread = [\"orders\"]\n"
            ),
        )
        .unwrap();
        let store = root.join("fuzz.db");
        let loader: dogana_serve::ContractLoader = Arc::new(|path: &Path| {
            let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
            let contract = dogana_cli::fuzz::toml_contract(&text, path.parent().unwrap())
                .map_err(|(code, message)| format!("{code}: {message}"))?;
            Ok((contract, dogana_receiver::DeliverOptions::default()))
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let config = dogana_serve::ServeConfig {
            store: dogana_stores::Spec::parse(store.to_str().unwrap()),
            contracts: root.join("contracts"),
            tokens: root.join("senders.toml"),
            load_contract: loader,
            listen: "127.0.0.1:0".parse().unwrap(),
            insecure_listen: false,
            tls: None,
            max_bytes: 64 * 1024,
            max_concurrent: 2,
            request_timeout: Duration::from_secs(5),
            lock_timeout: Duration::from_secs(5),
            staging: root.join("staging"),
            lineage_file: None,
            lineage_url: None,
        };
        let app = dogana_serve::App::new(config).unwrap();
        Fixture {
            runtime,
            app,
            store,
            staging: root.join("staging"),
            _dir: dir,
        }
    })
}

fn sha2_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Receipts kept for both tables (0 before the store exists).
fn receipts(store: &Path) -> usize {
    if !store.exists() {
        return 0;
    }
    let mut opened =
        dogana_stores::open(&dogana_stores::Spec::parse(store.to_str().unwrap()), false).unwrap();
    ["orders", "lines"]
        .iter()
        .map(|t| opened.receipts(t).map_or(0, |r| r.len()))
        .sum()
}

fn staged(staging: &Path) -> usize {
    walk(staging)
}

fn walk(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| {
                let path = e.path();
                if path.is_dir() {
                    walk(&path)
                } else {
                    usize::from(e.file_name().to_string_lossy().starts_with(".upload-"))
                }
            })
            .sum()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let f = fixture();
    let uri = match selector & 3 {
        0 | 1 => "/v1/tables/orders/deliveries",
        2 => "/v1/groups/deliveries",
        _ => "/v1/tables/orders/deliveries?format=csv",
    };
    let content_type = match selector >> 2 & 3 {
        0 | 1 => "multipart/form-data; boundary=b",
        2 => "multipart/form-data; boundary=\"x y\"",
        _ => "text/csv",
    };
    let before = receipts(&f.store);
    let request = Request::post(uri)
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", content_type)
        .body(Body::from(body.to_vec()))
        .unwrap();
    let (status, answer) = f.runtime.block_on(async {
        let response = f.app.router().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 24)
            .await
            .unwrap();
        (status, bytes)
    });
    // 403: a group naming a table the sender may not deliver (the URL's table is granted)
    let group = uri.starts_with("/v1/groups/");
    assert!(
        matches!(status, 200 | 400 | 404 | 408 | 413 | 422 | 503 | 507) || (group && status == 403),
        "an undocumented status {status} on {uri}"
    );
    let answer: serde_json::Value = serde_json::from_slice(&answer)
        .unwrap_or_else(|e| panic!("a body that is not JSON ({e}) with {status}"));
    if !matches!(status, 200 | 422) {
        let error = &answer["error"];
        let code = error["code"].as_str().expect("a refusal has a code");
        assert!(code.starts_with("DGN-"), "{code}");
        assert!(error["rule"].as_str().is_some_and(|r| !r.is_empty()));
        if let Some(value) = error["value"].as_str() {
            assert!(value.len() <= VALUE_MAX, "a value of {} bytes", value.len());
        }
        assert_eq!(receipts(&f.store), before, "a refusal ({status}) changed the store");
    }
    assert_eq!(staged(&f.staging), 0, "an upload was left staged");
});

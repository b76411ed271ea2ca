//! The receiving service's verbs (`dogana_serve`, the `serve` feature):
//!
//! - `dogana serve --store S --contracts DIR --tokens FILE [--listen ADDR]`: senders push
//!   deliveries over HTTP, each decided by the same engine and gate as `dogana deliver`.
//! - `dogana watch DIR --store S --contracts DIR`: a landing folder, each file delivered once
//!   its manifest is there and both are stable.
//!
//! Both read contracts as `dogana deliver --contract` does (JSON, or the TOML form with its
//! column list). A build without the `serve` feature answers each with one line saying how to
//! get it.

#[cfg(not(feature = "serve"))]
use crate::cli::{ServeArgs, WatchArgs};
#[cfg(not(feature = "serve"))]
use crate::refusal::{refuse, Result};
#[cfg(not(feature = "serve"))]
use dogana_codes as codes;

#[cfg(feature = "serve")]
mod imp {
    use std::path::Path;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use dogana_receiver::DeliverOptions;
    use dogana_serve::{ContractLoader, ServeConfig};
    use dogana_stores::Spec;

    use crate::cli::{ServeArgs, WatchArgs};
    use crate::commands::receiver::lock_wait;
    use crate::input;
    use crate::refusal::{refuse, Refusal, Result};
    use dogana_codes as codes;

    /// Reads a contract file as `dogana deliver --contract` does: the contract, and the types
    /// its TOML column list gives the columns it does not bind.
    fn loader() -> ContractLoader {
        Arc::new(|path: &Path| {
            let (contract, columns) =
                input::contract_and_columns(path).map_err(|r| r.to_string())?;
            let mut options = DeliverOptions::new();
            for (name, ty) in &crate::columns::column_list(&contract, &columns, &[])
                .map_err(|r| format!("{}: {r}", path.display()))?
            {
                options = options.column_type(name, ty.to_string());
            }
            Ok((contract, options))
        })
    }

    fn seconds(option: &str, text: &str) -> Result<std::time::Duration> {
        match text.parse::<f64>() {
            Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => {
                Ok(std::time::Duration::from_secs_f64(s))
            }
            _ => Err(Refusal::new(
                codes::OPTION_INVALID,
                format!("{option} {text:?} is not a number of seconds above 0 and at most 86400"),
            )
            .at(option, text)),
        }
    }

    fn store(path: &Path) -> Result<Spec> {
        let spec = Spec::parse(&path.to_string_lossy());
        if let Err(e) = spec.check(true) {
            return Err(
                Refusal::new(codes::STORE_SPEC_INVALID, format!("--store: {e}")).at(
                    "--store",
                    dogana_stores::without_password(&path.to_string_lossy()),
                ),
            );
        }
        Ok(spec)
    }

    fn folder(option: &str, dir: &Path) -> Result<()> {
        if !dir.is_dir() {
            refuse!(
                codes::SERVICE_CONFIG_INVALID,
                "{option} {} is not a folder; name the folder that holds one contract per table",
                input::shown(dir)
            )
        }
        Ok(())
    }

    pub fn serve(a: ServeArgs) -> Result<()> {
        folder("--contracts", &a.contracts)?;
        let tls = match (&a.tls_cert, &a.tls_key) {
            (Some(c), Some(k)) => Some((c.clone(), k.clone())),
            (None, None) => None,
            _ => refuse!(
                codes::SERVICE_CONFIG_INVALID,
                "--tls-cert and --tls-key go together: give both, or neither for plain HTTP"
            ),
        };
        if a.max_concurrent == 0 {
            refuse!(codes::OPTION_INVALID, "--max-concurrent is at least 1");
        }
        let staging = a
            .staging
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("dogana-serve-staging"));
        let config = ServeConfig {
            store: store(&a.store)?,
            contracts: a.contracts.clone(),
            tokens: a.tokens.clone(),
            load_contract: loader(),
            listen: a.listen,
            insecure_listen: a.insecure_listen,
            tls: tls.clone(),
            max_bytes: a.max_bytes,
            max_concurrent: a.max_concurrent,
            request_timeout: seconds("--request-timeout", &a.request_timeout)?,
            lock_timeout: lock_wait(&a.lock_timeout)?,
            staging,
            lineage_file: a.lineage_file.clone(),
            lineage_url: a.lineage_url.clone(),
        };
        dogana_serve::init_logs();
        let scheme = if tls.is_some() { "https" } else { "http" };
        dogana_serve::serve(config, |addr| {
            use std::io::Write;
            // the first line on standard output: where to send (a test or a supervisor reads it)
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "listening on {scheme}://{addr}");
            let _ = out.flush();
        })
        .map_err(|e| Refusal::new(e.0.code, e.0.message.clone()))
    }

    pub fn watch(a: WatchArgs) -> Result<()> {
        folder("--contracts", &a.contracts)?;
        if !a.dir.is_dir() {
            refuse!(
                codes::FILE_UNREADABLE,
                "the landing folder {} is not a folder",
                input::shown(&a.dir)
            )
        }
        let config = dogana_serve::watch::WatchConfig {
            dir: a.dir.clone(),
            store: store(&a.store)?,
            contracts: a.contracts.clone(),
            load_contract: loader(),
            stable_for: seconds("--stable-for", &a.stable_for)?,
            poll: seconds("--poll", &a.poll)?,
            lock_timeout: lock_wait(&a.lock_timeout)?,
            source: a.source.clone(),
        };
        dogana_serve::init_logs();
        static STOP: AtomicBool = AtomicBool::new(false);
        if !a.once {
            stop_on_signal(&STOP);
        }
        let pass = dogana_serve::watch::watch(config, a.once, &STOP)
            .map_err(|m| Refusal::new(codes::SERVICE_CONFIG_INVALID, m))?;
        if a.once {
            let line = serde_json::json!({
                "accepted": pass.accepted, "rejected": pass.rejected, "retried": pass.retried
            });
            crate::output::json(&format!("{line}\n"))?;
        }
        Ok(())
    }

    /// Sets `stop` on SIGTERM or SIGINT (the watcher finishes the delivery it is making).
    fn stop_on_signal(stop: &'static AtomicBool) {
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(rt) = runtime {
                rt.block_on(async {
                    let mut term =
                        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                            .expect("a SIGTERM handler");
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = tokio::signal::ctrl_c() => {}
                    }
                });
            }
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    }
}

#[cfg(feature = "serve")]
pub use imp::{serve, watch};

#[cfg(not(feature = "serve"))]
fn unavailable(verb: &str) -> Result<()> {
    refuse!(
        codes::BACKEND_NOT_BUILT,
        "dogana {verb} is the receiving service, not in this build: build dogana with cargo build -p dogana-cli --features serve"
    )
}

#[cfg(not(feature = "serve"))]
pub fn serve(_: ServeArgs) -> Result<()> {
    unavailable("serve")
}

#[cfg(not(feature = "serve"))]
pub fn watch(_: WatchArgs) -> Result<()> {
    unavailable("watch")
}

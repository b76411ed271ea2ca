//! The server dies under a delivery: `pg_ctl stop -m immediate` (no shutdown checkpoint:
//! crash recovery at the next start) at random instants of the crash harness's sequence,
//! every kind of delivery; the server is started again, the store holds the state after some
//! prefix (rows, ledger and receipts together), verify passes, and delivering the rest again
//! reaches the end. Alone in its test binary: it stops the server every other test uses.
//!
//! rule: RECV-09, TRUST-07, RECV-12, RECOVERY-01

mod support;

use std::time::{Duration, Instant};

use dogana_postgres::{Postgres, Store};
use dogana_receiver::conformance::Harness;
use support::{deliver, open, rng, server, Prefixes};

const TRIALS: usize = 12;

/// Starts the server again when dropped, even when the test fails.
struct Down;

impl Drop for Down {
    fn drop(&mut self) {
        server("resume");
    }
}

#[test]
fn the_server_stopped_immediately_mid_delivery_leaves_old_or_new_state() {
    let p = Prefixes::new("server-crash");
    let steps = p.steps.len();
    // how long the rest of the sequence takes from each prefix
    let durations: Vec<Duration> = (0..steps)
        .map(|k| {
            let dir = p.start_from(k);
            let mut store = open(&dir);
            let started = Instant::now();
            for s in &p.steps {
                deliver(&mut store, s).expect("delivers");
            }
            started.elapsed()
        })
        .collect();
    let mut next = rng("server crash");
    let mut reached = vec![0usize; steps + 1];
    let mut failed = 0;
    for trial in 0..TRIALS {
        let from = trial % steps;
        let dir = p.start_from(from);
        let worker = {
            let dir = dir.clone();
            let steps = p.steps.clone();
            std::thread::spawn(move || {
                // the server may die while the store opens, too
                let mut store = Store::new(Postgres::create(&dir)?);
                for s in &steps {
                    deliver(&mut store, s)?;
                }
                Ok::<(), String>(())
            })
        };
        let delay = Duration::from_micros(next() % (durations[from].as_micros() as u64 + 1));
        std::thread::sleep(delay);
        let down = Down;
        server("crash");
        let outcome = worker.join().expect("the worker");
        drop(down);
        if let Err(e) = &outcome {
            failed += 1;
            // the client says the server went away, in one line
            assert!(!e.contains('\n'), "{e}");
            let l = e.to_lowercase();
            assert!(
                l.contains("connection") || l.contains("terminating") || l.contains("shut"),
                "trial {trial}: {e}"
            );
        }
        let mut store = open(&dir);
        let at = p.which(&mut store, &format!("trial {trial} after {delay:?}"));
        assert!(at >= from, "trial {trial}: went back from {from} to {at}");
        let report = store.verify("orders").expect("verify");
        assert!(report.ok(), "trial {trial}: {:?}", report.problems);
        reached[at] += 1;
        // delivering again succeeds: what was committed replays, the rest is published
        for s in &p.steps {
            deliver(&mut store, s).expect("delivers again after the restart");
        }
        assert_eq!(p.which(&mut store, "after delivering again"), steps);
    }
    eprintln!(
        "server crash: {TRIALS} immediate stops, {failed} mid-delivery; states found, by step: {reached:?}"
    );
    assert!(failed > 0, "no stop landed in a delivery");
}

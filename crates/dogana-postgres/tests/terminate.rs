//! The session is terminated under a delivery (`pg_terminate_backend`, as an administrator
//! ends it) at random instants of the crash harness's sequence: the client reports a clear
//! one-line error, the store holds the state after some prefix with verify passing, and
//! delivering again on the same handle (a new session) succeeds.
//!
//! rule: RECV-09, RECV-12, RECOVERY-01

mod support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::{deliver, open, rng, Prefixes};

const TRIALS: usize = 30;

#[test]
fn a_terminated_session_leaves_old_or_new_state_and_delivering_again_succeeds() {
    let p = Prefixes::new("terminate");
    let steps = p.steps.len();
    let durations: Vec<Duration> = (0..steps)
        .map(|k| {
            let mut store = open(&p.start_from(k));
            let started = Instant::now();
            for s in &p.steps {
                deliver(&mut store, s).expect("delivers");
            }
            started.elapsed()
        })
        .collect();
    let mut admin = dogana_postgres::postgres::Client::connect(
        &dogana_postgres::harness::test_url().expect("DOGANA_PG_URL"),
        dogana_postgres::postgres::NoTls,
    )
    .expect("the test server");
    let mut next = rng("terminate");
    let mut reached = vec![0usize; steps + 1];
    let mut interrupted = 0;
    for trial in 0..TRIALS {
        let from = trial % steps;
        let dir = p.start_from(from);
        let (tx, rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let p = &p;
        let (error, mut store) = std::thread::scope(|scope| {
            let worker = scope.spawn(move || {
                let mut store = open(&dir);
                tx.send(store.backend_mut().backend_pid().expect("a pid"))
                    .expect("sends");
                let mut first_error = None;
                for s in &p.steps {
                    if let Err(e) = deliver(&mut store, s) {
                        first_error = Some(e);
                        break;
                    }
                }
                // the termination is done (it may have found the session idle)
                done_rx.recv().expect("the termination");
                if first_error.is_some() {
                    // old or new state, read through another session, and verify passes
                    let mut other = open(&dir);
                    let at = p.which(&mut other, &format!("trial {trial}, terminated"));
                    assert!(at >= from, "trial {trial}: went back from {from} to {at}");
                    let report = other.verify("orders").expect("verify");
                    assert!(report.ok(), "trial {trial}: {:?}", report.problems);
                }
                // delivering again, on the same handle, succeeds
                for s in &p.steps {
                    deliver(&mut store, s).expect("delivers again after the termination");
                }
                (first_error, store)
            });
            let pid: i32 = rx.recv().expect("the worker's pid");
            let delay = Duration::from_micros(next() % (durations[from].as_micros() as u64 + 1));
            std::thread::sleep(delay);
            let _ = admin.execute("SELECT pg_terminate_backend($1)", &[&pid]);
            done_tx.send(()).expect("sends");
            worker.join().expect("the worker")
        });
        if let Some(e) = error {
            interrupted += 1;
            assert!(!e.contains('\n'), "{e}");
            assert!(
                e.to_lowercase().contains("connection"),
                "trial {trial}: {e}"
            );
        }
        assert_eq!(p.which(&mut store, &format!("trial {trial}")), steps);
        let report = store.verify("orders").expect("verify");
        assert!(report.ok(), "trial {trial}: {:?}", report.problems);
        reached[steps] += 1;
    }
    eprintln!("terminate: {TRIALS} terminations, {interrupted} mid-delivery; {reached:?}");
    assert!(interrupted > 0, "no termination landed in a delivery");
}

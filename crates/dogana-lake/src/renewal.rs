//! The background renewal of the write leases one transaction holds.
//!
//! A lease lasts [`crate::LakeOptions::lease_ttl`] after its pointer's last write, by the
//! storage's clock. While a transaction holds leases, a thread rewrites each leased pointer
//! every third of the TTL: the same snapshot, fence and holder, the lease's renewal count one
//! higher, conditioned on the version it last wrote (the fence the storage evaluates,
//! `topology.coordinate.fenced-commit`). A renewal that loses its condition means another
//! writer took the lease (after a pause past the TTL): the table is recorded lost, and the
//! transaction refuses to publish it with [`crate::LakeError::LeaseFenced`]
//! (`store.lease.stale-fence`). Every other pointer write of the transaction happens after
//! [`Renewal::stop`] joined the thread, so the transaction and its renewal never write a
//! pointer at once. Decision recorded in `docs/store-decisions.md` (`lease-renewed-by-holder`).

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::layout::{pointer_key, Lease, Pointer};
use crate::objects::{Root, Version};

/// What the renewal thread and the transaction share.
#[derive(Debug, Default)]
struct State {
    /// Set by [`Renewal::stop`]: the thread ends.
    stop: bool,
    /// Each leased table's pointer and version as last written.
    held: BTreeMap<String, (Pointer, Version)>,
    /// Tables whose renewal lost its condition, with the fence the pointer then carried.
    lost: BTreeMap<String, u64>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // a panicked renewal thread leaves the state as it was: still usable
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The renewal of one transaction's leases: a thread, until [`Renewal::stop`].
#[derive(Debug)]
pub(crate) struct Renewal {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Renewal {
    /// Starts renewing `held` (table, pointer as the acquisition wrote it, its version) on
    /// `root` every `every`.
    pub(crate) fn start(
        root: Root,
        every: Duration,
        held: BTreeMap<String, (Pointer, Version)>,
    ) -> Renewal {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                held,
                ..State::default()
            }),
            wake: Condvar::new(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("dogana-lake-lease-renewal".into())
            .spawn(move || run(&root, every, &s))
            .ok();
        Renewal {
            shared,
            thread: Mutex::new(thread),
        }
    }

    /// Whether a renewal of `table` lost its condition: the fence the pointer carried then.
    pub(crate) fn lost(&self, table: &str) -> Option<u64> {
        self.shared.lock().lost.get(table).copied()
    }

    /// The first table whose renewal was lost, with the fence that passed it.
    pub(crate) fn any_lost(&self) -> Option<(String, u64)> {
        self.shared
            .lock()
            .lost
            .iter()
            .next()
            .map(|(t, f)| (t.clone(), *f))
    }

    /// Stops the thread and waits for it (a renewal in flight finishes first); idempotent.
    pub(crate) fn stop(&self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }

    /// The pointer and version last written for `table` (after [`Renewal::stop`]), unless
    /// its renewal was lost.
    pub(crate) fn held(&self, table: &str) -> Option<(Pointer, Version)> {
        let s = self.shared.lock();
        if s.lost.contains_key(table) {
            return None;
        }
        s.held.get(table).cloned()
    }
}

impl Drop for Renewal {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(root: &Root, every: Duration, shared: &Shared) {
    let mut next = Instant::now() + every;
    loop {
        let due: Vec<(String, Pointer, Version)> = {
            let mut s = shared.lock();
            loop {
                if s.stop {
                    return;
                }
                let now = Instant::now();
                if now >= next {
                    break;
                }
                s = shared
                    .wake
                    .wait_timeout(s, next - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            s.held
                .iter()
                .filter(|(t, _)| !s.lost.contains_key(*t))
                .map(|(t, (p, v))| (t.clone(), p.clone(), v.clone()))
                .collect()
        };
        let mut retry_soon = false;
        for (table, pointer, version) in due {
            match renew(root, &table, &pointer, &version) {
                Ok(Ok(written)) => {
                    shared.lock().held.insert(table, written);
                }
                Ok(Err(current)) => {
                    shared.lock().lost.insert(table, current);
                }
                // a transport error proves nothing either way: try again sooner; the
                // publication is conditioned on the version anyway
                Err(()) => retry_soon = true,
            }
        }
        next = Instant::now()
            + if retry_soon {
                (every / 4).max(Duration::from_millis(10))
            } else {
                every
            };
    }
}

/// One renewal: `Ok(Ok(written))`, `Ok(Err(current fence))` when the condition was lost to
/// another writer, `Err(())` on a transport error.
#[allow(clippy::result_unit_err)]
fn renew(
    root: &Root,
    table: &str,
    pointer: &Pointer,
    version: &Version,
) -> Result<Result<(Pointer, Version), u64>, ()> {
    let Some(lease) = &pointer.lease else {
        return Ok(Ok((pointer.clone(), version.clone())));
    };
    let next = Pointer {
        lease: Some(Lease {
            renewals: lease.renewals + 1,
            ..lease.clone()
        }),
        ..pointer.clone()
    };
    let bytes = serde_json::to_vec_pretty(&next).map_err(|_| ())?;
    let key = pointer_key(table);
    match root.put_versioned(&key, Bytes::from(bytes), Some(version)) {
        Ok(Some(v)) => Ok(Ok((next, v))),
        Ok(None) => {
            // a retried request whose first attempt landed answers as a lost condition:
            // the pointer as we wrote it says we still hold the lease
            let now = root.get_versioned(&key).map_err(|_| ())?;
            match now {
                Some(v) => match serde_json::from_slice::<Pointer>(&v.bytes) {
                    Ok(p) if p == next => Ok(Ok((next, v.version))),
                    Ok(p) => Ok(Err(p.fence)),
                    Err(_) => Ok(Err(pointer.fence)),
                },
                None => Ok(Err(0)),
            }
        }
        Err(_) => Err(()),
    }
}

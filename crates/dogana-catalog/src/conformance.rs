//! The catalog's conformance suite: what every backend of [`Catalog`] must show, run by each
//! backend's tests against a real database (`dogana-sqlite`'s on a file, `dogana-postgres`'s
//! on the test server). Each case takes a function that opens a **new connection** to one
//! fresh catalog, so contention runs one connection per thread, as machines would.
//!
//! A case panics naming what it saw; each returns nothing when the backend conforms.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::{acquire_cadence, Acquired, Catalog, CatalogError, Lease, CADENCE_LEASE_TTL};

/// Opens a new connection to the catalog under test.
pub type Opener<'a> = dyn Fn() -> Box<dyn Catalog> + Sync + 'a;

fn granted(a: Acquired) -> Lease {
    match a {
        Acquired::Granted(l) => l,
        other => panic!("expected the lease, got {other:?}"),
    }
}

/// A lease is granted once, refused to another holder while it runs, kept with its fence by
/// its holder, and its fence grows with each new holder.
pub fn leases_fence_each_holder(open: &Opener<'_>) {
    let mut c = open();
    let a = granted(
        c.acquire("table/orders", "a", Duration::from_secs(60))
            .unwrap(),
    );
    assert_eq!(a.fence, 1);
    match c
        .acquire("table/orders", "b", Duration::from_secs(60))
        .unwrap()
    {
        Acquired::Held { holder, fence, .. } => assert_eq!((holder.as_str(), fence), ("a", 1)),
        other => panic!("b took a held lease: {other:?}"),
    }
    let again = granted(
        c.acquire("table/orders", "a", Duration::from_secs(60))
            .unwrap(),
    );
    assert_eq!(again.fence, 1, "its own holder renews, keeping the fence");
    c.release(&again).unwrap();
    let b = granted(
        c.acquire("table/orders", "b", Duration::from_secs(60))
            .unwrap(),
    );
    assert_eq!(
        b.fence, 2,
        "a released lease's next holder has a higher fence"
    );
    // a renewal by the old holder is refused, and changes nothing
    match c.renew(&again, Duration::from_secs(60)) {
        Err(CatalogError::LeaseLost { fence: 1, .. }) => {}
        other => panic!("a's renewal after b took the lease: {other:?}"),
    }
    let renewed = c.renew(&b, Duration::from_secs(120)).unwrap();
    assert_eq!(renewed.fence, 2);
    assert!(renewed.expires_at_ms > b.expires_at_ms);
}

/// A lease expires on the catalog's clock: a holder paused past its lease is fenced, its
/// renewal refused, and the next holder's fence is higher.
pub fn a_paused_holder_is_fenced(open: &Opener<'_>) {
    let mut c = open();
    let a = granted(
        c.acquire("cadence/orders", "a", Duration::from_millis(300))
            .unwrap(),
    );
    let now = c.now_ms().unwrap();
    assert!(
        a.expires_at_ms > now && a.expires_at_ms <= now + 300,
        "the expiry is the catalog's now plus the ttl: {} against {now}",
        a.expires_at_ms
    );
    std::thread::sleep(Duration::from_millis(450));
    let b = granted(
        c.acquire("cadence/orders", "b", Duration::from_secs(60))
            .unwrap(),
    );
    assert_eq!(b.fence, a.fence + 1);
    assert!(matches!(
        c.renew(&a, Duration::from_secs(60)),
        Err(CatalogError::LeaseLost { .. })
    ));
    // a's late release does not free b's lease
    c.release(&a).unwrap();
    assert!(matches!(
        c.acquire("cadence/orders", "a", Duration::from_secs(60))
            .unwrap(),
        Acquired::Held { .. }
    ));
}

/// The cadence lease is granted for 90 s of the catalog's clock.
pub fn cadence_leases_last_90_seconds(open: &Opener<'_>) {
    let mut c = open();
    let l = granted(acquire_cadence(&mut *c, "orders", "a").unwrap());
    assert_eq!(l.name, "cadence/orders");
    let left = l.expires_at_ms - c.now_ms().unwrap();
    let ttl = CADENCE_LEASE_TTL.as_millis() as i64;
    assert!(
        left <= ttl && left > ttl - 5_000,
        "{left} ms left of a {ttl} ms lease"
    );
}

/// A cursor is created once and moves only from the version it was read at.
pub fn cursors_move_by_compare_and_swap(open: &Opener<'_>) {
    let mut c = open();
    assert_eq!(c.cursor("orders/watermark").unwrap(), None);
    let v1 = c
        .swap_cursor("orders/watermark", None, "2026-10-01")
        .unwrap()
        .expect("created");
    assert_eq!(v1.version, 1);
    assert_eq!(
        c.swap_cursor("orders/watermark", None, "other").unwrap(),
        None,
        "a second creation loses"
    );
    let v2 = c
        .swap_cursor("orders/watermark", Some(1), "2026-10-02")
        .unwrap()
        .expect("moved from 1");
    assert_eq!(v2.version, 2);
    assert_eq!(
        c.swap_cursor("orders/watermark", Some(1), "stale").unwrap(),
        None,
        "a swap from a stale version changes nothing"
    );
    assert_eq!(c.cursor("orders/watermark").unwrap(), Some(v2));
}

/// The journal hands out increasing seqs and reads back in order, stamped by the catalog.
pub fn the_journal_appends_in_order(open: &Opener<'_>) {
    let mut c = open();
    let before = c.now_ms().unwrap();
    let seqs: Vec<u64> = (0..5)
        .map(|i| c.append("fold", &format!("{{\"n\":{i}}}")).unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    let all = c.journal(0, 100).unwrap();
    assert_eq!(all.iter().map(|e| e.seq).collect::<Vec<_>>(), seqs);
    assert_eq!(all[3].body, "{\"n\":3}");
    assert!(all
        .iter()
        .all(|e| e.kind == "fold" && e.at_ms >= before - 1_000));
    let tail = c.journal(seqs[2], 2).unwrap();
    assert_eq!(tail.iter().map(|e| e.seq).collect::<Vec<_>>(), &seqs[3..5]);
}

/// `writers` threads, each with its own connection, `rounds` times each: increment a cursor
/// by compare-and-swap (no increment lost), and hold a lease (never two holders at once,
/// fences strictly growing in the order of grants).
pub fn writers_contend(open: &Opener<'_>, writers: usize, rounds: usize) {
    let inside = AtomicUsize::new(0);
    let fences = Mutex::new(Vec::new());
    let lost_races = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..writers {
            let (inside, fences, lost_races) = (&inside, &fences, &lost_races);
            s.spawn(move || {
                let mut c = open();
                let me = format!("writer-{w}");
                for _ in 0..rounds {
                    loop {
                        let cur = c.cursor("counter").unwrap();
                        let (expected, n) = match &cur {
                            Some(cur) => (Some(cur.version), cur.value.parse::<u64>().unwrap()),
                            None => (None, 0),
                        };
                        if c.swap_cursor("counter", expected, &(n + 1).to_string())
                            .unwrap()
                            .is_some()
                        {
                            break;
                        }
                        lost_races.fetch_add(1, Ordering::Relaxed);
                    }
                    let lease = loop {
                        match c.acquire("table/t", &me, Duration::from_secs(30)).unwrap() {
                            Acquired::Granted(l) => break l,
                            Acquired::Held { .. } => std::thread::yield_now(),
                        }
                    };
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                    fences.lock().unwrap().push(lease.fence);
                    inside.fetch_sub(1, Ordering::SeqCst);
                    c.release(&lease).unwrap();
                }
            });
        }
    });
    let mut c = open();
    let total = (writers * rounds) as u64;
    let counter = c.cursor("counter").unwrap().unwrap();
    assert_eq!(
        counter.value,
        total.to_string(),
        "an increment was lost ({} races lost and retried)",
        lost_races.load(Ordering::Relaxed)
    );
    assert_eq!(counter.version, total);
    let fences = fences.into_inner().unwrap();
    assert_eq!(fences.len() as u64, total);
    assert!(
        fences.windows(2).all(|w| w[0] < w[1]),
        "fences in grant order grow strictly"
    );
}

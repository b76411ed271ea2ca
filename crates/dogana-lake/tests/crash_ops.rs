//! SIGKILL at random points of the lake's own operations on `file://`: a child process
//! folds a copy of a store of many small parts and is killed after a random delay spread over
//! the second half of the time a whole run takes; after each kill the pointer names the old snapshot or the new
//! one, every part it reaches exists, and the rows, ledger and receipts read are the old ones.
//! A child collecting is killed the same way: the current snapshot stays whole, and every
//! part missing from an older snapshot is one its collection marker and the collection's
//! record listed before it was deleted. A child pulling into a replica is killed too: the
//! replica's pointer names the old snapshot or the new one, never one whose parts are missing,
//! and `replica.json` names only snapshots held whole.
//!
//! `DOGANA_LAKE_OP_KILLS` sets the kills per operation (default 100).

mod common;

use common::{copy_tree, Rng};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dogana_lake::{Lake, LakeOptions};
use dogana_receiver::conformance::Fixture;
use dogana_receiver::{Datum, Open, Store};

const CHILD: &str = "DOGANA_LAKE_OP_CRASH_CHILD";

fn options() -> LakeOptions {
    LakeOptions {
        lease_ttl: Duration::from_millis(300),
        lock_wait: Duration::from_secs(30),
        ..LakeOptions::default()
    }
}

fn kills() -> usize {
    std::env::var("DOGANA_LAKE_OP_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

/// The child: runs the operation the parent names on the store it names, unless not started
/// by the parent.
#[test]
fn op_crash_child() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let (op, dir) = spec.split_once(':').expect("op:dir");
    if op == "pull" {
        // dir: <canonical>|<replica>
        let (from, to) = dir.split_once('|').expect("from|to");
        let lake = Lake::open(Path::new(from), &options(), false).expect("open");
        let to = dogana_lake::objects::Root::open(to).expect("replica");
        dogana_lake::replica::pull(&lake, from, &to, &[], false).expect("pull");
        return;
    }
    let mut lake = Lake::open(Path::new(dir), &options(), true).expect("open");
    match op {
        "fold" => {
            lake.fold("orders").expect("fold");
        }
        "collect" => {
            lake.collect("orders", 1).expect("collect");
        }
        other => panic!("no operation {other}"),
    }
}

fn spawn(op: &str, dir: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "op_crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, format!("{op}:{}", dir.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A store of `n` single-row changes deliveries after a full one: `n + 1` parts.
fn template(n: usize) -> (Fixture<Store<Lake>>, PathBuf) {
    let mut fx = Fixture::<Store<Lake>>::new("op-crash");
    fx.accept(&fx.full(
        "f.csv",
        "2026-10-02T00:00:00Z",
        &[(1, "2026-10-01", "2026-10-01T10:00:00Z", "1.00", false)],
    ));
    for d in 0..n {
        let since = format!("2026-10-{:02}T00:00:00Z", d + 2);
        let at = format!("2026-10-{:02}T00:00:00Z", d + 3);
        let upd = format!("2026-10-{:02}T01:00:00Z", d + 2);
        fx.accept(&fx.changes(
            &format!("c{d}.csv"),
            &since,
            &at,
            &[(100 + d as i64, "2026-10-02", upd.as_str(), "2.00", false)],
        ));
    }
    let dir = fx.r.backend().root().local_dir().unwrap().to_path_buf();
    (fx, dir)
}

/// What a reader reads of the table: its rows (sorted), ledger and receipt count.
fn read(lake: &Lake) -> (Vec<String>, Option<String>, u64) {
    let head = lake.head("orders").unwrap().expect("a head");
    let s = lake.snapshot(&head).unwrap();
    for p in &s.parts {
        assert!(
            lake.root().get(&p.path).unwrap().is_some(),
            "the pointer reaches {}, which is missing",
            p.path
        );
    }
    let mut rows: Vec<String> = lake
        .snapshot_rows(&head)
        .unwrap()
        .iter()
        .map(|r| format!("{:?}", r.iter().map(Datum::render).collect::<Vec<_>>()))
        .collect();
    rows.sort();
    (rows, lake.snapshot_ledger(&s).unwrap(), s.receipts)
}

#[test]
fn sigkill_during_folds_leaves_old_or_new_snapshot() {
    // rule: store.fold.pointer-commit, store.fold.compaction-lease, store.fold.tiered-merge
    let (fx, template) = template(15);
    let lake = Lake::open(&template, &options(), false).unwrap();
    let old_head = lake.head("orders").unwrap().unwrap();
    let expected = read(&lake);
    drop(lake);
    let work = fx.dir.join("work");
    // one whole run, timed: the kills spread over it
    copy_tree(&template, &work);
    let started = Instant::now();
    assert!(spawn("fold", &work).wait().unwrap().success());
    let whole = started.elapsed();
    let mut rng = Rng::new();
    let (mut old, mut new) = (0, 0);
    let n = kills();
    for i in 0..n {
        copy_tree(&template, &work);
        // most of a run is the process starting and the store's probe: the kills land in
        // its second half, where the fold reads, writes and publishes
        rng.kill_midway(spawn("fold", &work), whole);
        let lake = Lake::open(&work, &options(), false).unwrap();
        let head = lake.head("orders").unwrap().unwrap();
        if head == old_head {
            old += 1;
        } else {
            let s = lake.snapshot(&head).unwrap();
            assert_eq!(s.parent.as_deref(), Some(old_head.as_str()), "kill {i}");
            assert_eq!(s.parts.len(), 1, "kill {i}: the fold published whole");
            new += 1;
        }
        assert_eq!(
            read(&lake),
            expected,
            "kill {i}: a reader reads what it read"
        );
        if i % 10 == 0 {
            // the next fold recovers (past the killed writer's lease) and reads the same
            let mut lake = Lake::open(&work, &options(), true).unwrap();
            lake.fold("orders").unwrap();
            assert_eq!(read(&lake), expected, "kill {i}: after the next fold");
        }
    }
    eprintln!("{n} kills during folds: {old} left the old snapshot, {new} the new one");
    assert_eq!(old + new, n);
}

#[test]
fn sigkill_during_collections_deletes_only_what_was_recorded() {
    // rule: store.collect.drop-first, store.collect.manifest-kept, store.fold.reference-retention
    let (mut fx, template) = template(15);
    fx.r.backend_mut().fold("orders").unwrap();
    fx.accept(&fx.changes(
        "late.csv",
        "2026-10-17T00:00:00Z",
        "2026-10-18T00:00:00Z",
        &[(9999, "2026-10-03", "2026-10-17T01:00:00Z", "3.00", false)],
    ));
    let lake = Lake::open(&template, &options(), false).unwrap();
    let head = lake.head("orders").unwrap().unwrap();
    let expected = read(&lake);
    drop(lake);
    let work = fx.dir.join("work");
    copy_tree(&template, &work);
    let started = Instant::now();
    assert!(spawn("collect", &work).wait().unwrap().success());
    let whole = started.elapsed();
    let mut rng = Rng::new();
    let (mut none, mut some, mut all) = (0, 0, 0);
    let n = kills();
    for i in 0..n {
        copy_tree(&template, &work);
        rng.kill_midway(spawn("collect", &work), whole);
        let lake = Lake::open(&work, &options(), false).unwrap();
        assert_eq!(lake.head("orders").unwrap().as_deref(), Some(head.as_str()));
        assert_eq!(
            read(&lake),
            expected,
            "kill {i}: the current snapshot whole"
        );
        // every older snapshot: its missing parts each listed by its marker and a record
        let records: Vec<dogana_lake::layout::CollectionRecord> = lake
            .root()
            .list("tables/orders/_collected/")
            .unwrap()
            .iter()
            .map(|k| serde_json::from_slice(&lake.root().get(k).unwrap().unwrap()).unwrap())
            .collect();
        let mut missing = std::collections::HashSet::new();
        let mut at = lake.snapshot(&head).unwrap().parent;
        while let Some(k) = at {
            let s = lake.snapshot(&k).unwrap(); // every manifest kept
            for p in &s.parts {
                if lake.root().get(&p.path).unwrap().is_none() {
                    missing.insert(p.path.clone());
                    let marker: dogana_lake::layout::CollectedMarker = serde_json::from_slice(
                        &lake
                            .root()
                            .get(&dogana_lake::layout::collected_marker(&k))
                            .unwrap()
                            .unwrap_or_else(|| {
                                panic!("kill {i}: {} deleted, {k} unmarked", p.path)
                            }),
                    )
                    .unwrap();
                    assert!(marker.parts.contains(&p.path), "kill {i}");
                    assert!(
                        records.iter().any(|r| r.deleted.contains(&p.path)),
                        "kill {i}"
                    );
                }
            }
            at = s.parent;
        }
        match missing.len() {
            0 => none += 1,
            m if m < 16 => some += 1, // the fold merged 16 parts away: 16 to delete
            _ => all += 1,
        }
    }
    eprintln!(
        "{n} kills during collections: {none} before any deletion, {some} part way, {all} after the last"
    );
}

#[test]
fn sigkill_during_pulls_never_points_at_missing_parts() {
    // rule: store.pull.pointer-last, store.replicate.descriptor, store.pull.pointer-advance
    let (mut fx, canonical) = template(3);
    let replica_template = fx.dir.join("replica-template");
    {
        let lake = Lake::open(&canonical, &options(), false).unwrap();
        let to = dogana_lake::objects::Root::open(replica_template.to_str().unwrap()).unwrap();
        dogana_lake::replica::pull(&lake, "canonical", &to, &[], false).unwrap();
    }
    let old = {
        let r = Lake::open(&replica_template, &options(), false).unwrap();
        (r.head("orders").unwrap().unwrap(), read(&r))
    };
    // the store moves on: more deliveries, a fold
    for d in 3..8 {
        let since = format!("2026-10-{:02}T00:00:00Z", d + 2);
        let at = format!("2026-10-{:02}T00:00:00Z", d + 3);
        let upd = format!("2026-10-{:02}T01:00:00Z", d + 2);
        fx.accept(&fx.changes(
            &format!("m{d}.csv"),
            &since,
            &at,
            &[(500 + d, "2026-10-02", upd.as_str(), "4.00", false)],
        ));
    }
    fx.r.backend_mut().fold("orders").unwrap();
    let new = {
        let l = Lake::open(&canonical, &options(), false).unwrap();
        (l.head("orders").unwrap().unwrap(), read(&l))
    };
    let work = fx.dir.join("replica-work");
    let spec = |w: &Path| format!("{}|{}", canonical.display(), w.display());
    copy_tree(&replica_template, &work);
    let started = Instant::now();
    assert!(spawn("pull", Path::new(&spec(&work)))
        .wait()
        .unwrap()
        .success());
    let whole = started.elapsed();
    let mut rng = Rng::new();
    let (mut at_old, mut at_new) = (0, 0);
    let n = kills();
    for i in 0..n {
        copy_tree(&replica_template, &work);
        rng.kill_midway(spawn("pull", Path::new(&spec(&work))), whole);
        let r = Lake::open(&work, &options(), false).unwrap();
        let head = r.head("orders").unwrap().unwrap();
        // read() asserts every part the pointer reaches exists
        let seen = read(&r);
        if head == old.0 {
            assert_eq!(seen, old.1, "kill {i}");
            at_old += 1;
        } else {
            assert_eq!((head.clone(), seen), new.clone(), "kill {i}");
            at_new += 1;
        }
        let d: dogana_lake::replica::ReplicaDescriptor =
            serde_json::from_slice(&r.root().get("replica.json").unwrap().unwrap()).unwrap();
        for k in &d.tables["orders"].held {
            for p in &r.snapshot(k).unwrap().parts {
                assert_eq!(
                    r.root().size(&p.path).unwrap(),
                    Some(p.bytes),
                    "kill {i}: {k} held"
                );
            }
        }
    }
    eprintln!("{n} kills during pulls: {at_old} left the old pointer, {at_new} the new one");
}

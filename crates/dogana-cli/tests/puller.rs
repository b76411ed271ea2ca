//! A puller's loop, end to end through the command line (docs/puller.md): every round asks
//! `dogana next` what to read, extracts it from a small SQLite "source" database that the test
//! mutates between reads (inserts, updates, hard deletes kept in a deletion log), writes the
//! file and `dogana manifest`, and delivers. After every round the published table equals the
//! source at the claimed instant wherever the claims say exact, and contains it wherever they
//! say complete. 60 rounds of random changes, a full read every tenth.

mod common;

use std::collections::BTreeMap;

use common::{text, Work};
use dogana_sqlite::rusqlite::{params, Connection};

const CONTRACT: &str = r#"table = "orders"
key = ["id"]
cursor_column = "updated_at"
deleted_column = "deleted"

[types]
id = "int"
updated_at = "datetime"
deleted = "bool"

[shapes.full]
kind = "full"
cost = 10

[shapes.changes]
kind = "changes"
deletions = "tombstone"
"#;

/// The instant of round `r`'s read: one hour apart.
fn instant(r: u32, minute: u32) -> String {
    let h = 6 + r;
    format!("2026-10-{:02}T{:02}:{minute:02}:00Z", 1 + h / 24, h % 24)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

type Rows = BTreeMap<i64, (String, String)>;

fn source_rows(src: &Connection) -> Rows {
    let mut stmt = src
        .prepare("SELECT id, amount, updated_at FROM orders")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn published_rows(work: &Work) -> Rows {
    let conn = Connection::open(work.path("store.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, amount, updated_at FROM orders")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get::<_, String>(2)?))))
        .unwrap()
        .collect::<Result<Rows, _>>()
        .unwrap()
        .into_iter()
        // the store keeps datetimes in the protocol's UTC form
        .map(|(k, (a, u))| (k, (a, u.replace("+00:00", "Z"))))
        .collect()
}

fn run(work: &Work, args: &[&str]) -> String {
    let out = work.dogana(args).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0)),
        "{args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[test]
fn a_pullers_loop_keeps_the_table_equal_to_the_source_where_exact() {
    // rule: PLANNER-15, TRUST-03, TRUST-07
    let work = Work::new();
    work.write("c.toml", CONTRACT);
    let src = Connection::open(work.path("source.db")).unwrap();
    src.execute_batch(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, amount TEXT NOT NULL, updated_at TEXT NOT NULL);
         CREATE TABLE deletions (id INTEGER NOT NULL, at TEXT NOT NULL);",
    )
    .unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut next_id = 1i64;
    let (mut exact_rounds, mut changes_rounds) = (0, 0);
    for round in 0..60u32 {
        // the source changes before this round's read, at minutes 10 to 50 of the last hour
        if round > 0 {
            for k in 0..1 + rng.next(6) {
                let at = instant(round - 1, 10 + (k as u32 % 5) * 10);
                match rng.next(3) {
                    0 => {
                        src.execute(
                            "INSERT INTO orders VALUES (?1, ?2, ?3)",
                            params![next_id, format!("{}.00", rng.next(1000)), at],
                        )
                        .unwrap();
                        next_id += 1;
                    }
                    1 => {
                        src.execute(
                            "UPDATE orders SET amount = ?1, updated_at = ?2 WHERE id =
                             (SELECT id FROM orders ORDER BY id LIMIT 1 OFFSET ?3)",
                            params![format!("{}.50", rng.next(1000)), at, rng.next(8) as i64],
                        )
                        .unwrap();
                    }
                    _ => {
                        let id: Option<i64> = src
                            .query_row(
                                "SELECT id FROM orders ORDER BY id LIMIT 1 OFFSET ?1",
                                [rng.next(8) as i64],
                                |r| r.get(0),
                            )
                            .ok();
                        if let Some(id) = id {
                            src.execute("DELETE FROM orders WHERE id = ?1", [id])
                                .unwrap();
                            src.execute("INSERT INTO deletions VALUES (?1, ?2)", params![id, at])
                                .unwrap();
                        }
                    }
                }
            }
        } else {
            for _ in 0..5 {
                src.execute(
                    "INSERT INTO orders VALUES (?1, '1.00', '2026-10-01T05:00:00Z')",
                    [next_id],
                )
                .unwrap();
                next_id += 1;
            }
        }
        let until = instant(round, 0);
        let shape = if round % 10 == 0 { "full" } else { "changes" };
        // 1. ask what to read (the first read, into a new store, is a full one)
        let since = if round == 0 {
            None
        } else {
            let request = run(
                &work,
                &[
                    "next", "--store", "store.db", "orders", "--shape", shape, "--until", &until,
                    "--json",
                ],
            );
            let request: serde_json::Value = serde_json::from_str(&request).unwrap();
            assert_eq!(request["shape"], shape, "{request}");
            request["since"]["$datetime"]
                .as_str()
                .map(|s| s.replace("+00:00", "Z"))
        };
        // 2. extract accordingly, at `until`
        let mut csv = String::from("id,amount,updated_at,deleted\n");
        let (mut live, mut tombs) = (0, 0);
        for (id, (amount, updated)) in source_rows(&src) {
            let in_range = since.as_ref().is_none_or(|s| updated.as_str() > s.as_str());
            if in_range && updated <= until {
                csv.push_str(&format!("{id},{amount},{updated},false\n"));
                live += 1;
            }
        }
        if let Some(s) = &since {
            let mut stmt = src
                .prepare("SELECT id FROM deletions WHERE at > ?1 AND at <= ?2")
                .unwrap();
            let ids: Vec<i64> = stmt
                .query_map([s.as_str(), until.as_str()], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            for id in ids {
                csv.push_str(&format!("{id},,,true\n"));
                tombs += 1;
            }
        }
        let file = format!("r{round}.csv");
        work.write(&file, &csv);
        // 3. its manifest
        let (live, tombs) = (live.to_string(), tombs.to_string());
        let mut args = vec![
            "manifest",
            &file,
            "--contract",
            "c.toml",
            "--shape",
            shape,
            "--produced-at",
            &until,
            "--rows",
            &live,
        ];
        if let Some(s) = &since {
            args.extend_from_slice(&["--since", s, "--tombstones", &tombs]);
        }
        run(&work, &args);
        // 4. deliver
        let now = instant(round, 1);
        let out = run(
            &work,
            &[
                "deliver",
                &file,
                "--store",
                "store.db",
                "--contract",
                "c.toml",
                "--at",
                &now,
            ],
        );
        assert!(out.contains(": accepted "), "round {round}: {out}");
        changes_rounds += usize::from(shape == "changes");
        // 5. what the claims say, against the source at the claimed instant
        let claims = run(
            &work,
            &[
                "claims", "--store", "store.db", "orders", "--at", &now, "--json",
            ],
        );
        let claims: serde_json::Value = serde_json::from_str(&claims).unwrap();
        let region = &claims["regions"][0]["region"];
        let complete = region["complete_as_of"]["$datetime"].as_str();
        let deletions = region["deletions_as_of"]["$datetime"].as_str();
        let published = published_rows(&work);
        let source = source_rows(&src);
        let until_utc = until.replace('Z', "+00:00");
        if complete == Some(until_utc.as_str()) && deletions == Some(until_utc.as_str()) {
            assert_eq!(
                published, source,
                "round {round}: exact, but not the source"
            );
            exact_rounds += 1;
        } else {
            assert_eq!(complete, Some(until_utc.as_str()), "round {round}");
            for (id, row) in &source {
                assert_eq!(
                    published.get(id),
                    Some(row),
                    "round {round}: complete, id {id}"
                );
            }
        }
    }
    assert_eq!(changes_rounds, 54);
    assert!(exact_rounds >= 50, "{exact_rounds} exact rounds");
}

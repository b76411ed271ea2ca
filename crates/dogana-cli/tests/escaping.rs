//! A sender's text cannot forge a line of any output (issue 37, TRUST-07): the source, the
//! table name and a column name carry line breaks, escape sequences and text-reordering
//! controls, and every command that shows them — text or JSON, standard output or error,
//! the page — keeps them inside one line, escaped. One property over all outputs: a run with
//! hostile names prints exactly as many lines as the same run with plain ones, none holding
//! a control character, every JSON output parses, and the page holds none of them raw.

mod common;

use std::sync::OnceLock;

use common::{text, Work};
use proptest::prelude::*;

/// The names a sender chooses in one run.
#[derive(Debug, Clone)]
struct Names {
    source: String,
    table: String,
    column: String,
}

/// A TOML basic string holding `s`.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A CSV field holding `s`, quoted.
fn csv_field(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Every output of one history under `names`: (what ran, its standard output, its standard
/// error, whether standard output is JSON).
fn outputs(names: &Names) -> Vec<(String, String, String, bool)> {
    let work = Work::new();
    work.write(
        "c.toml",
        &format!(
            "table = {}\nkey = [\"id\"]\ncursor_column = \"updated_at\"\ndeleted_column = \"deleted\"\n\n[types]\nid = \"int\"\nupdated_at = \"datetime\"\ndeleted = \"bool\"\n\n[shapes.full]\nkind = \"full\"\n\n[shapes.changes]\nkind = \"changes\"\ndeletions = \"tombstone\"\n",
            toml_string(&names.table)
        ),
    );
    let header = format!("id,updated_at,{},deleted\n", csv_field(&names.column));
    work.write(
        "f.csv",
        &format!("{header}1,2026-10-20T10:00:00Z,a,false\n"),
    );
    work.write(
        "g.csv",
        &format!("{header}2,2026-10-21T10:00:00Z,b,false\n"),
    );
    let manifest = |file: &str, at: &str, rows: &str| {
        work.dogana([
            "manifest",
            file,
            "--contract",
            "c.toml",
            "--shape",
            "full",
            "--produced-at",
            at,
            "--rows",
            rows,
            "--force",
        ])
        .assert()
        .success();
    };
    manifest("f.csv", "2026-10-25T06:00:00Z", "1");
    // g.csv's manifest lies about its rows: a rejection, whose failed check is printed
    manifest("g.csv", "2026-10-26T06:00:00Z", "2");
    let table = names.table.as_str();
    let source = names.source.as_str();
    let page = work.path("p.html");
    let page = page.to_str().unwrap();
    let runs: Vec<(Vec<&str>, bool)> = vec![
        (
            vec![
                "deliver",
                "f.csv",
                "--store",
                "s.db",
                "--contract",
                "c.toml",
                "--at",
                "2026-10-25T07:00:00Z",
                "--source",
                source,
            ],
            false,
        ),
        // the replay prints the original receipt's source
        (
            vec![
                "deliver",
                "f.csv",
                "--store",
                "s.db",
                "--contract",
                "c.toml",
                "--at",
                "2026-10-25T08:00:00Z",
            ],
            false,
        ),
        (
            vec![
                "deliver",
                "g.csv",
                "--store",
                "s.db",
                "--contract",
                "c.toml",
                "--at",
                "2026-10-26T07:00:00Z",
                "--source",
                source,
            ],
            false,
        ),
        (
            vec![
                "deliver",
                "g.csv",
                "--store",
                "s.db",
                "--contract",
                "c.toml",
                "--at",
                "2026-10-26T07:00:00Z",
                "--json",
            ],
            true,
        ),
        (vec!["receipts", "--store", "s.db", table], false),
        (vec!["receipts", "--store", "s.db", table, "--json"], true),
        (vec!["verify", "--store", "s.db"], false),
        (vec!["verify", "--store", "s.db", "--json"], true),
        (
            vec![
                "claims",
                "--store",
                "s.db",
                table,
                "--at",
                "2026-10-27T00:00:00Z",
            ],
            false,
        ),
        (
            vec![
                "claims",
                "--store",
                "s.db",
                table,
                "--at",
                "2026-10-27T00:00:00Z",
                "--json",
            ],
            true,
        ),
        (vec!["ledger", "--store", "s.db", table], true),
        (
            vec![
                "plan",
                "--store",
                "s.db",
                table,
                "--at",
                "2026-10-27T00:00:00Z",
            ],
            false,
        ),
        (
            vec![
                "next",
                "--store",
                "s.db",
                table,
                "--shape",
                "changes",
                "--until",
                "2026-10-27T00:00:00Z",
            ],
            false,
        ),
        (
            vec![
                "show",
                "--store",
                "s.db",
                table,
                "--at",
                "2026-10-27T00:00:00Z",
                "-o",
                page,
                "--force",
            ],
            false,
        ),
        // a refusal naming the table: one line on standard error, or one JSON object
        (
            vec!["claims", "--store", "s.db", table, "--window", "1", "2"],
            false,
        ),
        (
            vec![
                "claims", "--store", "s.db", table, "--window", "1", "2", "--json",
            ],
            true,
        ),
    ];
    let mut out = Vec::new();
    for (args, json) in runs {
        let o = work.dogana(&args).output().unwrap();
        out.push((args[0].to_owned(), text(&o.stdout), text(&o.stderr), json));
    }
    let html = std::fs::read_to_string(work.path("p.html")).unwrap_or_default();
    out.push(("show's page".to_owned(), html, String::new(), false));
    out
}

/// The outputs of the same history under plain names, once.
fn plain() -> &'static Vec<(String, String, String, bool)> {
    static PLAIN: OnceLock<Vec<(String, String, String, bool)>> = OnceLock::new();
    PLAIN.get_or_init(|| {
        outputs(&Names {
            source: "nightly".into(),
            table: "orders".into(),
            column: "amount".into(),
        })
    })
}

/// A name the protocol admits (CONTRACT-48: no control character) that still reorders or
/// breaks lines on a terminal: line separators and bidirectional overrides, quotes, `<`.
fn hostile_name() -> impl Strategy<Value = String> {
    hostile().prop_map(|s| s.chars().filter(|c| !c.is_control()).collect())
}

/// Text a sender might write: letters with line breaks, escapes and reordering controls.
fn hostile() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => proptest::char::range('a', 'z'),
            1 => Just('\n'),
            1 => Just('\r'),
            1 => Just('\u{1b}'),
            1 => Just('\u{7}'),
            1 => Just('\u{9b}'),
            1 => Just('\u{2028}'),
            1 => Just('\u{202e}'),
            1 => Just('"'),
            1 => Just('<'),
        ],
        1..12,
    )
    .prop_map(|cs| {
        // a letter first: a name is never only controls
        let mut s = String::from("x");
        s.extend(cs);
        s
    })
}

fn is_raw_control(c: char) -> bool {
    c != '\n' && (c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}'))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn a_senders_text_never_forges_a_line_of_any_output(
        source in hostile(), table in hostile_name(), column in hostile()
    ) {
        // rule: TRUST-07
        let names = Names { source, table, column };
        let got = outputs(&names);
        for ((what, out, err, json), (_, plain_out, plain_err, _)) in got.iter().zip(plain()) {
            if what == "show's page" {
                prop_assert!(!out.is_empty(), "no page written");
                for c in out.chars() {
                    prop_assert!(
                        c == '\n' || !is_raw_control(c),
                        "the page holds {:?} raw", c
                    );
                }
                continue;
            }
            prop_assert_eq!(
                out.lines().count(), plain_out.lines().count(),
                "dogana {} prints another number of lines:\n{}", what, out
            );
            prop_assert_eq!(
                err.lines().count(), plain_err.lines().count(),
                "dogana {} errs in another number of lines:\n{}", what, err
            );
            for c in out.chars().chain(err.chars()) {
                prop_assert!(!is_raw_control(c), "dogana {} prints {:?} raw:\n{}{}", what, c, out, err);
            }
            if *json && !out.is_empty() {
                prop_assert!(serde_json::from_str::<serde_json::Value>(out).is_ok(), "dogana {}: {}", what, out);
            }
            if err.starts_with('{') {
                prop_assert!(serde_json::from_str::<serde_json::Value>(err).is_ok(), "dogana {}: {}", what, err);
            }
        }
    }
}

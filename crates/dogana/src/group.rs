//! Tables read together: `Group`, its claims, `Group::apply` and `plan_together` (GROUP).
//!
//! A [`Group`] names the tables a receiver loads from one snapshot of the source. Its claims
//! take every table's regions together, so [`Claims::exact_as_of`] says whether they share one
//! instant; [`Group::apply`] decides one delivery per table as one; [`plan_together`] asks
//! for one read per table at one shared instant.
//!
//! Decisions on the open points (also in `docs/planning.md`):
//!
//! - GROUP-17: tables are matched case-insensitively (by Unicode lowercase, Rust's
//!   `str::to_lowercase`, Python's `str.lower`): ledgers by their contract's table, manifests by
//!   the table they name, keys of the `windows`, `outcomes` and `sources` maps by their text.
//!   Exactly one ledger and one manifest per table: a missing, repeated or unknown one is
//!   refused with [`InvalidContract`] (rule GROUP-17) before anything is decided, as is a
//!   ledger under another contract than the group's or a map key naming no table. A manifest
//!   matched case-insensitively but spelling its table differently is decided by the gate,
//!   which rejects it (MAN-04), and so rejects the group.
//! - GROUP-13: the `together` check's detail starts with the together digest: the lowercase
//!   hex SHA-256 of the UTF-8 text made of one line `table:manifest_identity` per table
//!   (the table as its contract spells it, the manifest's identity), sorted in code-point
//!   order and joined by `"\n"`, no final newline. Then `": "` and a sentence for a person.
//!   The detail is identity-relevant, since the receipt's identity covers its checks.
//! - GROUP-30: [`plan_together`] raises [`PlanningError`] when some table cannot reach
//!   `(until, until)`, naming every such table and why; "later than" is 1 µs later, the
//!   protocol's resolution. `until` is later than every region of every table, whole tables
//!   and not only the windows, so that any shape is admissible at it.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::claims::Claims;
use crate::contract::Contract;
use crate::error::{invalid, InvalidContract, PlanningError, Problem};
use crate::gate::{Check, Gate, Outcome, Receipt};
use crate::ledger::{hex, Ledger};
use crate::manifest::Manifest;
use crate::planning::{plan_delivery, Extraction, Requirement};
use crate::time::{Duration, Timestamp};
use crate::value::Window;
use crate::wire::Wire;

/// The name of the joint check [`Group::apply`] adds to every receipt (GROUP-12, GROUP-14).
pub const TOGETHER: &str = "together";

/// Tables read together (GROUP-07): each named once, whatever its letter case.
///
/// A table belongs to one group only (GROUP-08): deliveries accepted together replay
/// together, so a parent with several children is one group, not one group per child.
/// A group adds no wire kind: each table keeps its own receipts and chain (GROUP-25).
///
/// ```
/// use dogana::{Contract, Group, LogicalType, Shape};
/// let t = |name: &str| Contract::builder(name, ["id"]).shape("full", Shape::full())
///     .column("id", LogicalType::Int).build().unwrap();
/// let g = Group::new([t("invoices"), t("lines")]).unwrap();
/// assert_eq!(g.contract("LINES").unwrap().table(), "lines");
/// assert!(Group::new([t("lines"), t("Lines")]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    contracts: Vec<Contract>,
}

fn fold(table: &str) -> String {
    table.to_lowercase()
}

fn refuse(
    field: impl Into<String>,
    value: impl std::fmt::Display,
    reason: impl Into<String>,
) -> InvalidContract {
    invalid(field, value, "GROUP-17", reason)
}

/// The together digest of `(table, manifest)` pairs (GROUP-13): SHA-256, lowercase hex, of the
/// sorted lines `table:manifest_identity` joined by `"\n"`.
fn digest_of<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a Manifest)>) -> String {
    let mut lines: Vec<String> = pairs
        .into_iter()
        .map(|(table, m)| format!("{table}:{}", m.identity()))
        .collect();
    lines.sort();
    hex(&Sha256::digest(lines.join("\n").as_bytes()))
}

impl Group {
    /// A group of these tables, in this order (GROUP-07). Refuses an empty group and two
    /// contracts whose tables are equal ignoring case.
    pub fn new(contracts: impl IntoIterator<Item = Contract>) -> Result<Group, InvalidContract> {
        let contracts: Vec<Contract> = contracts.into_iter().collect();
        if contracts.is_empty() {
            return Err(invalid(
                "contracts",
                "[]",
                "GROUP-07",
                "a group names at least one table",
            ));
        }
        for (i, c) in contracts.iter().enumerate() {
            if let Some(other) = contracts[..i]
                .iter()
                .find(|o| fold(o.table()) == fold(c.table()))
            {
                return Err(invalid(
                    format!("contracts[{i}].table"),
                    format!("{:?}", c.table()),
                    "GROUP-07",
                    format!(
                        "a group names each table once, whatever its letter case, and {:?} is already in it",
                        other.table()
                    ),
                ));
            }
        }
        Ok(Group { contracts })
    }

    /// The contracts, in the group's order.
    pub fn contracts(&self) -> &[Contract] {
        &self.contracts
    }

    /// The tables as their contracts spell them, in the group's order.
    pub fn tables(&self) -> impl Iterator<Item = &str> {
        self.contracts.iter().map(Contract::table)
    }

    /// The contract of `table`, matched case-insensitively.
    pub fn contract(&self, table: &str) -> Option<&Contract> {
        self.index_of(table).map(|i| &self.contracts[i])
    }

    fn index_of(&self, table: &str) -> Option<usize> {
        let key = fold(table);
        self.contracts.iter().position(|c| fold(c.table()) == key)
    }

    fn names(&self) -> String {
        self.tables()
            .map(|t| dogana_json::quoted(t, crate::NAME_MAX))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// One item per table, in the group's order, each matched by `table_of`; refuses a
    /// missing, repeated or unknown one.
    fn match_each<'a, T>(
        &self,
        field: &str,
        items: &'a [T],
        table_of: impl Fn(&T) -> &str,
    ) -> Result<Vec<&'a T>, InvalidContract> {
        let mut slots: Vec<Option<&'a T>> = vec![None; self.contracts.len()];
        for (i, item) in items.iter().enumerate() {
            let table = table_of(item);
            let Some(k) = self.index_of(table) else {
                return Err(refuse(
                    format!("{field}[{i}]"),
                    dogana_json::quoted(table, crate::NAME_MAX),
                    format!("the group has no such table; it has {}", self.names()),
                ));
            };
            if slots[k].is_some() {
                return Err(refuse(
                    format!("{field}[{i}]"),
                    dogana_json::quoted(table, crate::NAME_MAX),
                    format!(
                        "table {:?} has one {} in a group, and this is a second",
                        self.contracts[k].table(),
                        &field[..field.len() - 1]
                    ),
                ));
            }
            slots[k] = Some(item);
        }
        slots
            .into_iter()
            .enumerate()
            .map(|(k, s)| {
                s.ok_or_else(|| {
                    refuse(
                        field,
                        format!("{:?}", self.contracts[k].table()),
                        format!(
                            "every table of the group needs one {}, and table {:?} has none",
                            &field[..field.len() - 1],
                            self.contracts[k].table()
                        ),
                    )
                })
            })
            .collect()
    }

    /// The ledgers in the group's order, each under the group's contract.
    fn ledgers<'a>(&self, ledgers: &'a [Ledger]) -> Result<Vec<&'a Ledger>, InvalidContract> {
        let matched = self.match_each("ledgers", ledgers, |l| l.contract().table())?;
        for (c, l) in self.contracts.iter().zip(&matched) {
            if l.contract() != c {
                return Err(refuse(
                    "ledgers",
                    format!("{:?}", c.table()),
                    format!(
                        "the ledger of table {:?} is under another contract than the group's; move it with Ledger::with_contract, or build the group from the contracts in force",
                        c.table()
                    ),
                ));
            }
        }
        Ok(matched)
    }

    /// The values of a map keyed by table, in the group's order; refuses a key naming no
    /// table and two keys naming one table.
    fn per_table<'a, V>(
        &self,
        field: &str,
        map: Option<&'a BTreeMap<String, V>>,
    ) -> Result<Vec<Option<&'a V>>, InvalidContract> {
        let mut out: Vec<Option<&'a V>> = vec![None; self.contracts.len()];
        for (key, v) in map.into_iter().flatten() {
            let Some(k) = self.index_of(key) else {
                return Err(refuse(
                    format!("{field}.{key}"),
                    dogana_json::quoted(key, crate::NAME_MAX),
                    format!("the group has no such table; it has {}", self.names()),
                ));
            };
            if out[k].is_some() {
                return Err(refuse(
                    format!("{field}.{key}"),
                    dogana_json::quoted(key, crate::NAME_MAX),
                    format!(
                        "two keys name table {:?}, ignoring case",
                        self.contracts[k].table()
                    ),
                ));
            }
            out[k] = Some(v);
        }
        Ok(out)
    }

    /// Every table's claims together, at the reader's `now` with freshness `limit`
    /// (GROUP-09): each table's regions, clipped to its window in `windows` if it has one
    /// (GROUP-22), in the group's order. The minima and [`Claims::exact_as_of`] are taken
    /// across every table (CLAIMS-13, GROUP-01): they are lower bounds on each table's dates,
    /// and only a common exact instant speaks for a query over several tables.
    ///
    /// `ledgers` holds one ledger per table, in any order, under the group's contracts;
    /// `windows` is keyed by table, case-insensitively. Anything else is refused (GROUP-17).
    pub fn claims(
        &self,
        ledgers: &[Ledger],
        now: Timestamp,
        limit: Duration,
        windows: Option<&BTreeMap<String, Window>>,
    ) -> Result<Claims, InvalidContract> {
        let ledgers = self.ledgers(ledgers)?;
        let windows = self.per_table("windows", windows)?;
        let mut regions = Vec::new();
        for (ledger, window) in ledgers.into_iter().zip(windows) {
            regions.extend(ledger.claims(now, limit, window)?.regions);
        }
        Ok(Claims::new(now, limit, regions))
    }

    /// The together digest of one manifest per table (GROUP-13); see the module's decisions
    /// for its exact text. Refuses missing, repeated or unknown manifests (GROUP-17).
    pub fn together_digest(&self, manifests: &[Manifest]) -> Result<String, InvalidContract> {
        let matched = self.match_each("manifests", manifests, Manifest::table)?;
        Ok(digest_of(self.tables().zip(matched)))
    }

    /// Decides one delivery per table as one (GROUP-10):
    ///
    /// 1. each table is decided alone, as [`Gate::evaluate`] decides it, with its receiver's
    ///    checks from `outcomes` and its `source` (GROUP-11);
    /// 2. the check `together` passes when every manifest has the same `produced_at` and every
    ///    table was accepted alone (GROUP-12); its detail starts with the together digest of
    ///    every manifest (GROUP-13);
    /// 3. every table is decided again with `together` as a joint check (GROUP-14), so if any
    ///    table is rejected every receipt is a rejection, and otherwise every receipt is an
    ///    acceptance (GROUP-15).
    ///
    /// The receipts come in the group's order. The receiver saves every table's rows, ledger
    /// and receipt in one commit, or nothing (GROUP-16). Rules the source keeps between
    /// tables are not checked: they need the rows (GROUP-18). `together` does not require the
    /// result to be exact: each table's shape decides that over its coverage (GROUP-19).
    ///
    /// `ledgers` and `manifests` hold one item per table, in any order; `outcomes` and
    /// `sources` are keyed by table, case-insensitively, and a table without an entry has no
    /// receiver checks or no source. Missing, repeated or unknown items are refused with
    /// [`InvalidContract`] before anything is decided (GROUP-17).
    pub fn apply(
        &self,
        ledgers: &[Ledger],
        manifests: &[Manifest],
        now: Timestamp,
        outcomes: Option<&BTreeMap<String, Vec<Check>>>,
        sources: Option<&BTreeMap<String, String>>,
    ) -> Result<Vec<Receipt>, InvalidContract> {
        let ledgers = self.ledgers(ledgers)?;
        let manifests = self.match_each("manifests", manifests, Manifest::table)?;
        let outcomes = self.per_table("outcomes", outcomes)?;
        let sources = self.per_table("sources", sources)?;
        let checks = |k: usize| outcomes[k].map_or(&[][..], Vec::as_slice);
        let source = |k: usize| sources[k].map(String::as_str);
        let alone: Vec<Receipt> = (0..self.contracts.len())
            .map(|k| Gate::evaluate(ledgers[k], manifests[k], checks(k), now, source(k), &[]))
            .collect();
        let together = self.together_check(&manifests, &alone);
        Ok((0..self.contracts.len())
            .map(|k| {
                Gate::evaluate(
                    ledgers[k],
                    manifests[k],
                    checks(k),
                    now,
                    source(k),
                    std::slice::from_ref(&together),
                )
            })
            .collect())
    }

    fn together_check(&self, manifests: &[&Manifest], alone: &[Receipt]) -> Check {
        let digest = digest_of(self.tables().zip(manifests.iter().copied()));
        let first = manifests[0].produced_at();
        let mut problems = Vec::new();
        if manifests.iter().any(|m| m.produced_at() != first) {
            let at: Vec<String> = self
                .tables()
                .zip(manifests)
                .map(|(t, m)| format!("{t} at {}", m.produced_at()))
                .collect();
            problems.push(format!(
                "the manifests are produced at different instants ({}), so they are not one read",
                at.join(", ")
            ));
        }
        let refused: Vec<String> = self
            .tables()
            .zip(alone)
            .filter(|(_, r)| !r.accepted())
            .map(|(t, r)| {
                let failed: Vec<&str> = r.failures().map(Check::name).collect();
                format!("{t} (failed: {})", failed.join(", "))
            })
            .collect();
        if !refused.is_empty() {
            problems.push(format!("refused alone: {}", refused.join(", ")));
        }
        let n = manifests.len();
        if problems.is_empty() {
            Check::pass(
                TOGETHER,
                format!(
                    "{digest}: {n} manifest{} produced at {first}, every table accepted alone",
                    if n == 1 { "" } else { "s" }
                ),
            )
        } else {
            Check::fail(TOGETHER, format!("{digest}: {}", problems.join("; ")))
        }
    }

    /// Group replay (GROUP-23, GROUP-24): given the receipts the receiver recorded for these
    /// manifests (looked up by manifest identity, in any order, other receipts ignored),
    /// returns the replayed receipts, in the group's order, when every table's manifest was
    /// accepted together with exactly these manifests: an accepted receipt of that table for
    /// that manifest whose passed `together` check carries this group's together digest.
    /// Otherwise returns `None`: deliveries accepted alone, in another group or never are a
    /// new decision, and the group needs a new read.
    ///
    /// Verify every declared `content_hash` against the bytes before answering with a replay
    /// (GROUP-23): the receiver owns the bytes. Missing, repeated or unknown manifests are
    /// refused (GROUP-17).
    pub fn replay(
        &self,
        manifests: &[Manifest],
        recorded: &[Receipt],
    ) -> Result<Option<Vec<Receipt>>, InvalidContract> {
        let matched = self.match_each("manifests", manifests, Manifest::table)?;
        let digest = digest_of(self.tables().zip(matched.iter().copied()));
        let mut out = Vec::with_capacity(matched.len());
        for (table, m) in self.tables().zip(&matched) {
            let identity = m.identity();
            let found = recorded.iter().find(|r| {
                r.outcome() != Outcome::Rejected
                    && fold(r.table()) == fold(table)
                    && r.manifest().identity() == identity
                    && r.checks().iter().any(|c| {
                        c.name() == TOGETHER
                            && c.passed()
                            && c.detail().split(':').next() == Some(digest.as_str())
                    })
            });
            match found {
                Some(r) if r.replayed() => out.push(r.clone()),
                Some(r) => out.push(r.as_replay().expect("an accepted receipt")),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }
}

/// One read per table at one shared instant, so that the group becomes exact there
/// (GROUP-27 to GROUP-30).
///
/// Returns `None` when the group's claims (clipped to `windows`) are already exact at an
/// instant no earlier than `at_least`. Otherwise `until` is the earliest admissible boundary:
/// the later of `at_least` and 1 µs after the latest `complete_as_of` of every region of every
/// table (whole tables, not only their windows); and each table's request is
/// [`plan_delivery`]'s cheapest read establishing `(until, until)` over its window, in the
/// group's order.
///
/// The extractor reads every table in one snapshot taken at or after `until` and stamps
/// every manifest with that snapshot's instant (GROUP-29); a snapshot later than `until` is
/// admissible too, since every region is older.
///
/// When some table cannot reach `(until, until)`, raises [`PlanningError`] naming every such
/// table and why each of its shapes fails (GROUP-30). Ledgers or windows that do not match
/// the group are a [`PlanningError`] too.
pub fn plan_together(
    group: &Group,
    ledgers: &[Ledger],
    at_least: Timestamp,
    windows: Option<&BTreeMap<String, Window>>,
) -> Result<Option<Vec<Extraction>>, PlanningError> {
    let goal = format!(
        "bring tables {} to one exact instant no earlier than {at_least}",
        group.names()
    );
    let fail = |e: InvalidContract| PlanningError {
        goal: goal.clone(),
        reasons: vec![e.problem().clone()],
    };
    let claims = group
        .claims(ledgers, at_least, Duration::MAX, windows)
        .map_err(fail)?;
    if claims.exact_as_of().is_some_and(|p| p >= at_least) {
        return Ok(None);
    }
    let ledgers = group.ledgers(ledgers).map_err(fail)?;
    let windows = group.per_table("windows", windows).map_err(fail)?;
    let latest = ledgers
        .iter()
        .flat_map(|l| l.regions())
        .filter_map(|r| r.complete_as_of())
        .max();
    let until = match latest {
        None => at_least,
        Some(c) => match c.successor() {
            Some(next) => next.max(at_least),
            None => {
                return Err(PlanningError {
                    goal,
                    reasons: vec![Problem::new(
                    "ledgers",
                    c,
                    "GROUP-28",
                    "a region is complete as of the domain's last instant, so no instant is later",
                )],
                })
            }
        },
    };
    let mut requests = Vec::with_capacity(ledgers.len());
    let mut reasons = Vec::new();
    for (ledger, window) in ledgers.iter().zip(windows) {
        let table = ledger.contract().table();
        let mut req = Requirement::exact(table, until);
        if let Some(w) = window {
            req = req.with_window(w.clone());
        }
        match plan_delivery(ledger, &req) {
            Ok(Some(x)) => requests.push(x),
            // Every region is older than until, so this does not happen; a table that met
            // (until, until) would need no read.
            Ok(None) => {}
            Err(e) => reasons.extend(e.reasons.into_iter().map(|mut p| {
                p.field = format!("{table}.{}", p.field);
                p
            })),
        }
    }
    if !reasons.is_empty() {
        return Err(PlanningError {
            goal: format!("{goal} (until {until})"),
            reasons,
        });
    }
    Ok(Some(requests))
}

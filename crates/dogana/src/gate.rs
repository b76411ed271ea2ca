//! The gate: decides one delivery from the ledger, the manifest and the receiver's checks, and
//! records the decision as a receipt.

use std::fmt;
use std::sync::Arc;

use dogana_json::Quoted;

use crate::contract::Contract;
use crate::contract::NAME_MAX;
use crate::error::{InconsistentPublication, Problem};
use crate::ledger::Ledger;
use crate::manifest::Manifest;
use crate::plan::Transition;
use crate::time::Timestamp;
use crate::wire::Wire;

/// One check's result: its name, whether it passed, and a detail a person can act on
/// (CHECK-01). dogana names only its three core checks; the receiver names its own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Check {
    pub(crate) name: String,
    pub(crate) passed: bool,
    pub(crate) detail: String,
}

impl Check {
    /// A check result.
    pub fn new(name: impl Into<String>, passed: bool, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            passed,
            detail: detail.into(),
        }
    }

    /// A passed check with a detail.
    pub fn pass(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check::new(name, true, detail)
    }

    /// A failed check with a detail.
    pub fn fail(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check::new(name, false, detail)
    }

    /// The check's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it passed.
    pub fn passed(&self) -> bool {
        self.passed
    }

    /// What was found.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = if self.passed { "passed" } else { "FAILED" };
        if self.detail.is_empty() {
            write!(f, "{}: {mark}", self.name)
        } else {
            write!(f, "{}: {mark}: {}", self.name, self.detail)
        }
    }
}

/// A decision's outcome (GATE-14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Every check passed; the receiver publishes.
    Accepted,
    /// A check failed; nothing changes.
    Rejected,
    /// The same manifest was accepted before; the receiver answers with that receipt.
    Replayed,
}

impl Outcome {
    /// The wire spelling.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::Rejected => "rejected",
            Outcome::Replayed => "replayed",
        }
    }

    /// The outcome a wire spelling stands for.
    pub fn from_name(name: &str) -> Option<Outcome> {
        match name {
            "accepted" => Some(Outcome::Accepted),
            "rejected" => Some(Outcome::Rejected),
            "replayed" => Some(Outcome::Replayed),
            _ => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The chain value a receipt names when the ledger has no publication yet: the string the
/// chain hashes as the first `previous` (GATE-20).
pub const NO_PUBLICATION: &str = "None";

/// The record of one decision (GATE-12): the manifest, the contract in force, every check,
/// the outcome, when it was received, from where, the chain head before and after, the identity
/// of the ledger the decision leaves, and for an acceptance the transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub(crate) manifest: Manifest,
    pub(crate) contract: Contract,
    pub(crate) checks: Vec<Check>,
    pub(crate) outcome: Outcome,
    pub(crate) received_at: Timestamp,
    pub(crate) source: Option<String>,
    pub(crate) base_publication_id: Option<String>,
    pub(crate) publication_id: String,
    pub(crate) ledger_identity: String,
    pub(crate) transition: Option<Transition>,
    pub(crate) decided: Decided,
    /// Its identity, once asked for (a receipt does not change once made).
    pub(crate) identity: crate::wire::IdentityMemo,
}

/// For a receipt the gate has just given: the ledger it was decided on and the ledger the
/// acceptance leaves, so that [`Ledger::follow`] on that same ledger need not apply the
/// manifest and hash the result again. Not part of the receipt's value: equality, the wire
/// form and the identity ignore it, and a receipt read from a document has none.
#[derive(Clone, Default)]
pub(crate) struct Decided(Option<Arc<(Ledger, Ledger)>>);

impl PartialEq for Decided {
    fn eq(&self, _: &Decided) -> bool {
        true
    }
}

impl Eq for Decided {}

impl fmt::Debug for Decided {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Decided(..)"
        } else {
            "Decided"
        })
    }
}

impl Receipt {
    /// The manifest decided.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The contract in force (EVOL-04).
    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// The table the receipt is filed under: the contract's, whatever the manifest says
    /// (GATE-22).
    pub fn table(&self) -> &str {
        &self.contract.table
    }

    /// Every check, core checks first.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// The outcome.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// True for accepted and replayed receipts.
    pub fn accepted(&self) -> bool {
        self.outcome != Outcome::Rejected
    }

    /// True only for replayed receipts.
    pub fn replayed(&self) -> bool {
        self.outcome == Outcome::Replayed
    }

    /// The receiver's `now` when it decided.
    pub fn received_at(&self) -> Timestamp {
        self.received_at
    }

    /// Where the delivery came from, if the receiver said.
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The ledger's chain head before the decision (GATE-16).
    pub fn base_publication_id(&self) -> Option<&str> {
        self.base_publication_id.as_deref()
    }

    /// The chain head after the decision (GATE-17, GATE-18); `"None"` when a rejection leaves
    /// a ledger that has never published.
    pub fn publication_id(&self) -> &str {
        &self.publication_id
    }

    /// The identity of the ledger the decision leaves.
    pub fn ledger_identity(&self) -> &str {
        &self.ledger_identity
    }

    /// The plan and the regions over the coverage afterwards, for an acceptance or a replay.
    pub fn transition(&self) -> Option<&Transition> {
        self.transition.as_ref()
    }

    /// The failed checks.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.passed)
    }

    /// This receipt answered again for a repeated manifest (RECV-02): the same receipt with
    /// outcome `replayed`, which keeps the original's identity (WIRE-20).
    pub fn as_replay(&self) -> Result<Receipt, InconsistentPublication> {
        if self.outcome != Outcome::Accepted {
            return Err(InconsistentPublication(Problem::new(
                "outcome",
                self.outcome,
                "RECV-02",
                "only an accepted receipt is replayed",
            )));
        }
        Ok(Receipt {
            outcome: Outcome::Replayed,
            ..self.clone()
        })
    }
}

/// The gate. Stateless: every decision is a function of its arguments.
///
/// ```
/// use dogana::{Check, Contract, Gate, Ledger, LogicalType, Shape};
/// let c = Contract::builder("orders", ["id"])
///     .shape("full", Shape::full())
///     .column("id", LogicalType::Int)
///     .build()
///     .unwrap();
/// let ledger = Ledger::new(c.clone());
/// let now = "2026-10-25T01:00:00Z".parse().unwrap();
/// let m = c.manifest("full", "2026-10-25T00:00:00Z".parse().unwrap()).rows(2).build().unwrap();
/// let receipt = Gate::evaluate(&ledger, &m, &[Check::pass("rows", "2 live rows")], now, None, &[]);
/// assert!(receipt.accepted());
/// let ledger = ledger.follow(&receipt).unwrap();
/// assert_eq!(ledger.publication_id(), Some(receipt.publication_id()));
/// ```
pub struct Gate;

impl Gate {
    /// The three core checks, `manifest`, `receiver_time` and `transition`, in that order
    /// (GATE-02, GATE-07). `transition` is not evaluated when `manifest` fails, and says so.
    pub fn preflight(ledger: &Ledger, manifest: &Manifest, now: Timestamp) -> Vec<Check> {
        Gate::core(ledger, manifest, now).0
    }

    /// The `transition` refusal every ledger would give `manifest`, whatever its history: a
    /// timestamp read of changes whose `since` is after its `produced_at` (TRANS-08). A
    /// sender's tools (`dogana manifest`, `dogana check`) refuse such a manifest before any
    /// receiver sees it; a receiver's gate refuses it as part of `transition`.
    ///
    /// ```
    /// use dogana::{Contract, Deletions, Gate, LogicalType, Shape, Since};
    /// let c = Contract::builder("t", ["id"])
    ///     .shape("changes", Shape::changes(Deletions::Tombstone))
    ///     .cursor_column("at").column("id", LogicalType::Int).column("at", LogicalType::Datetime)
    ///     .deleted_column("gone").column("gone", LogicalType::Bool)
    ///     .build().unwrap();
    /// let t = "2026-10-27T00:00:00Z".parse().unwrap();
    /// let late = "2026-10-28T00:00:00Z".parse::<dogana::Timestamp>().unwrap();
    /// let m = c.manifest("changes", t).since(Since::Time(late)).rows(0).build().unwrap();
    /// assert_eq!(Gate::refused_by_every_ledger(&m).unwrap().problem.rule, "TRANS-08");
    /// ```
    pub fn refused_by_every_ledger(manifest: &Manifest) -> Option<crate::RejectedDelivery> {
        match manifest.since() {
            Some(crate::Since::Time(s)) => {
                crate::ledger::since_not_after(*s, manifest.produced_at()).err()
            }
            _ => None,
        }
    }

    fn core(
        ledger: &Ledger,
        manifest: &Manifest,
        now: Timestamp,
    ) -> (Vec<Check>, Option<(Ledger, Transition)>) {
        let mut checks = Vec::with_capacity(3);
        let manifest_ok = match manifest.check_against(ledger.contract()) {
            Ok(shape) => {
                checks.push(Check::pass(
                    "manifest",
                    format!(
                        "{} read of {} through shape {}",
                        describe(shape),
                        Quoted::new(&manifest.table, NAME_MAX),
                        Quoted::new(&manifest.shape, NAME_MAX)
                    ),
                ));
                true
            }
            Err(p) => {
                checks.push(Check::fail("manifest", p.to_string()));
                false
            }
        };
        if manifest.produced_at <= now {
            checks.push(Check::pass(
                "receiver_time",
                format!(
                    "produced_at {} is not after now {now}",
                    manifest.produced_at
                ),
            ));
        } else {
            checks.push(Check::fail(
                "receiver_time",
                format!(
                    "produced_at = {}: later than the receiver's now {now}; a read cannot show the source's future (GATE-04)",
                    manifest.produced_at
                ),
            ));
        }
        let mut result = None;
        if manifest_ok {
            match ledger.transition(manifest) {
                Ok(done) => {
                    checks.push(Check::pass("transition", "the ledger admits the read"));
                    result = Some(done);
                }
                Err(e) => checks.push(Check::fail("transition", e.problem.to_string())),
            }
        } else {
            checks.push(Check::fail(
                "transition",
                "not evaluated: the manifest check failed",
            ));
        }
        (checks, result)
    }

    /// Decides one delivery (GATE-01): the core checks, then the receiver's `outcomes` in the
    /// order given, then the `joint` checks of a group. Any failed check rejects (GATE-06).
    pub fn evaluate(
        ledger: &Ledger,
        manifest: &Manifest,
        outcomes: &[Check],
        now: Timestamp,
        source: Option<&str>,
        joint: &[Check],
    ) -> Receipt {
        let (mut checks, result) = Gate::core(ledger, manifest, now);
        checks.extend_from_slice(outcomes);
        checks.extend_from_slice(joint);
        let accepted = checks.iter().all(|c| c.passed);
        match result {
            Some((next, transition)) if accepted => Receipt {
                manifest: manifest.clone(),
                contract: ledger.contract().clone(),
                checks,
                outcome: Outcome::Accepted,
                received_at: now,
                source: source.map(str::to_owned),
                base_publication_id: ledger.publication_id().map(str::to_owned),
                publication_id: next
                    .publication_id()
                    .expect("an acceptance extends the chain")
                    .to_owned(),
                ledger_identity: next.identity(),
                transition: Some(transition),
                decided: Decided(Some(Arc::new((ledger.clone(), next)))),
                identity: Default::default(),
            },
            _ => Gate::rejection(ledger, manifest, checks, now, source),
        }
    }

    fn rejection(
        ledger: &Ledger,
        manifest: &Manifest,
        checks: Vec<Check>,
        now: Timestamp,
        source: Option<&str>,
    ) -> Receipt {
        Receipt {
            manifest: manifest.clone(),
            contract: ledger.contract().clone(),
            checks,
            outcome: Outcome::Rejected,
            received_at: now,
            source: source.map(str::to_owned),
            base_publication_id: ledger.publication_id().map(str::to_owned),
            publication_id: ledger.publication_id().unwrap_or(NO_PUBLICATION).to_owned(),
            ledger_identity: ledger.identity(),
            transition: None,
            decided: Decided::default(),
            identity: Default::default(),
        }
    }

    /// Records a failure the receiver found (GATE-08): the core checks, then `checks`. The
    /// receipt is the one [`Gate::evaluate`] gives for the same checks (GATE-09); if no check
    /// failed at all, a failed `receiver` check is added so the record stays honest.
    pub fn reject(
        ledger: &Ledger,
        manifest: &Manifest,
        checks: &[Check],
        now: Timestamp,
        source: Option<&str>,
    ) -> Receipt {
        let (mut all, _) = Gate::core(ledger, manifest, now);
        all.extend_from_slice(checks);
        if all.iter().all(|c| c.passed) {
            all.push(Check::fail(
                "receiver",
                "rejected by the receiver without a failed check",
            ));
        }
        Gate::rejection(ledger, manifest, all, now, source)
    }
}

fn describe(shape: &crate::Shape) -> String {
    let coverage = match shape.coverage() {
        crate::Coverage::Table => "whole-table",
        crate::Coverage::Window => "window",
    };
    if shape.is_complete() {
        format!("complete {coverage}")
    } else {
        format!(
            "{coverage} {} changes with deletions {}",
            shape.checkpoint(),
            shape.deletions()
        )
    }
}

fn inconsistent(
    field: impl Into<String>,
    value: impl fmt::Display,
    rule: &'static str,
    reason: impl Into<String>,
) -> InconsistentPublication {
    InconsistentPublication(Problem::new(field, value, rule, reason))
}

impl Ledger {
    /// Applies one accepted receipt (RECV-17): it must continue this ledger's chain
    /// (`base_publication_id` equals the head), be for this table, and leave exactly the ledger
    /// and head it names. Rejected and replayed receipts publish nothing and are refused
    /// (RECV-18).
    pub fn follow(&self, receipt: &Receipt) -> Result<Ledger, InconsistentPublication> {
        if receipt.outcome != Outcome::Accepted {
            return Err(inconsistent(
                "outcome",
                receipt.outcome,
                "RECV-18",
                "only an accepted receipt moves a ledger; a rejection or a replay publishes nothing",
            ));
        }
        if receipt.base_publication_id.as_deref() != self.publication_id() {
            return Err(inconsistent(
                "base_publication_id",
                receipt.base_publication_id.as_deref().unwrap_or("None"),
                "RECV-17",
                format!(
                    "the receipt continues another head; this ledger's head is {} (a receipt is missing, reordered or foreign)",
                    self.publication_id().unwrap_or("None")
                ),
            ));
        }
        if let Some((base, next)) = receipt.decided.0.as_deref() {
            // The gate decided this receipt on this very ledger: its result is this one's.
            if base.is_same(self) {
                return Ok(next.clone());
            }
        }
        let under = if receipt.contract == *self.contract() {
            self.clone()
        } else {
            self.with_contract(receipt.contract.clone()).map_err(|e| {
                inconsistent(
                    "contract",
                    receipt.contract.table(),
                    "RECV-20",
                    format!("the receipt's contract cannot follow this ledger's: {e}"),
                )
            })?
        };
        let next = under.apply(&receipt.manifest).map_err(|e| {
            inconsistent(
                "manifest",
                receipt.manifest.identity(),
                "RECV-17",
                format!("this ledger does not admit the receipt's manifest: {e}"),
            )
        })?;
        if next.publication_id() != Some(receipt.publication_id.as_str()) {
            return Err(inconsistent(
                "publication_id",
                &receipt.publication_id,
                "RECV-17",
                format!(
                    "applying the receipt gives head {}",
                    next.publication_id().unwrap_or("None")
                ),
            ));
        }
        let identity = next.identity();
        if identity != receipt.ledger_identity {
            return Err(inconsistent(
                "ledger_identity",
                &receipt.ledger_identity,
                "RECV-17",
                format!("applying the receipt leaves ledger {identity}"),
            ));
        }
        Ok(next)
    }

    /// Folds the accepted receipts in order (RECV-19), each under its own contract, then moves
    /// to `contract` (RECV-21). Rejected and replayed receipts are skipped (RECV-22); a missing,
    /// reordered or foreign receipt is refused (RECV-20).
    pub fn from_receipts<'r>(
        contract: Contract,
        receipts: impl IntoIterator<Item = &'r Receipt>,
    ) -> Result<Ledger, InconsistentPublication> {
        let mut ledger: Option<Ledger> = None;
        for (i, r) in receipts.into_iter().enumerate() {
            if r.contract.table() != contract.table() {
                return Err(inconsistent(
                    format!("receipts[{i}].contract.table"),
                    format!("{:?}", r.contract.table()),
                    "RECV-20",
                    format!(
                        "a foreign receipt: the ledger is of table {:?}",
                        contract.table()
                    ),
                ));
            }
            if r.outcome != Outcome::Accepted {
                continue;
            }
            let current = ledger
                .take()
                .unwrap_or_else(|| Ledger::new(r.contract.clone()));
            ledger = Some(
                current
                    .follow(r)
                    .map_err(|InconsistentPublication(mut p)| {
                        p.field = format!("receipts[{i}].{}", p.field);
                        InconsistentPublication(p)
                    })?,
            );
        }
        let ledger = ledger.unwrap_or_else(|| Ledger::new(contract.clone()));
        if *ledger.contract() == contract {
            return Ok(ledger);
        }
        ledger.with_contract(contract).map_err(|e| {
            inconsistent(
                "contract",
                "the requested contract",
                "RECV-21",
                format!("the receipts' history refuses it: {e}"),
            )
        })
    }
}

//! Plans: the row operations an accepted delivery implies. The core describes them and never
//! reads a row (PLAN-13); the receiver executes them.

use std::fmt;

use crate::ledger::Region;
use crate::value::Window;

/// The five row operations (PLAN-02).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionKind {
    /// Delete every published row, then insert the read's live rows (PLAN-03).
    ReplaceAll,
    /// Delete the published rows whose window value is inside the window, and earlier copies
    /// of the read's keys, then insert the read's live rows (PLAN-04).
    ReplaceWindow,
    /// Delete the published rows sharing a key with a live row of the read, then insert those
    /// rows (PLAN-05).
    Upsert,
    /// Delete the published rows whose keys the read's tombstones name (PLAN-06).
    Tombstone,
    /// Insert every row without matching (PLAN-07).
    Append,
}

impl ActionKind {
    /// The wire spelling.
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::ReplaceAll => "replace_all",
            ActionKind::ReplaceWindow => "replace_window",
            ActionKind::Upsert => "upsert",
            ActionKind::Tombstone => "tombstone",
            ActionKind::Append => "append",
        }
    }

    /// Every wire spelling.
    pub const NAMES: &'static [&'static str] = &[
        "replace_all",
        "replace_window",
        "upsert",
        "tombstone",
        "append",
    ];

    /// The kind a wire spelling stands for.
    pub fn from_name(name: &str) -> Option<ActionKind> {
        [
            ActionKind::ReplaceAll,
            ActionKind::ReplaceWindow,
            ActionKind::Upsert,
            ActionKind::Tombstone,
            ActionKind::Append,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One row operation. `key` names the columns rows are matched on: the contract's key, or
/// empty in a keyless table, where replacement matches no keys (PLAN-08). `window` is the
/// closed window of a `replace_window`, and absent otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub(crate) kind: ActionKind,
    pub(crate) window: Option<Window>,
    pub(crate) key: Vec<String>,
}

impl Action {
    /// An action; `window` must be given exactly for `replace_window`.
    pub fn new(kind: ActionKind, window: Option<Window>, key: Vec<String>) -> Action {
        Action { kind, window, key }
    }

    /// What to do.
    pub fn kind(&self) -> ActionKind {
        self.kind
    }

    /// The window a `replace_window` replaces.
    pub fn window(&self) -> Option<&Window> {
        self.window.as_ref()
    }

    /// The columns rows are matched on; empty matches no keys.
    pub fn key(&self) -> &[String] {
        &self.key
    }

    /// Whether rows are matched on a key (false in a keyless table).
    pub fn matches_keys(&self) -> bool {
        !self.key.is_empty()
    }
}

/// The ordered actions an accepted delivery implies (PLAN-02).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApplyPlan {
    pub(crate) actions: Vec<Action>,
}

impl ApplyPlan {
    /// A plan of these actions, in order.
    pub fn new(actions: Vec<Action>) -> ApplyPlan {
        ApplyPlan { actions }
    }

    /// The actions, in the order the receiver executes them.
    pub fn actions(&self) -> &[Action] {
        &self.actions
    }
}

/// What an accepted delivery does: the plan, and the regions over its coverage afterwards
/// (PLAN-01).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub(crate) plan: ApplyPlan,
    pub(crate) regions: Vec<Region>,
}

impl Transition {
    /// A transition of a plan and the regions over the coverage afterwards.
    pub fn new(plan: ApplyPlan, regions: Vec<Region>) -> Transition {
        Transition { plan, regions }
    }

    /// The row operations.
    pub fn plan(&self) -> &ApplyPlan {
        &self.plan
    }

    /// The regions over the coverage after the delivery, cut to the coverage.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }
}

//! Histories built with the core alone: the gate decides, `follow` moves the ledger.
#![allow(dead_code)]

use dogana::{
    Check, Contract, Date, Deletions, Duration, Gate, Ledger, LogicalType, Manifest, Receipt,
    Shape, Timestamp, Value, Window,
};
use dogana_show::{Options, TableHistory};

pub fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

pub fn date(s: &str) -> Value {
    let (y, rest) = s.split_at(4);
    let m: u32 = rest[1..3].parse().unwrap();
    let d: u32 = rest[4..6].parse().unwrap();
    Value::Date(Date::from_ymd(y.parse().unwrap(), m, d).unwrap())
}

/// Orders by order_date: a full dump, a window, changes with and without tombstones.
pub fn orders(table: &str) -> Contract {
    Contract::builder(table, ["id"])
        .shape("full", Shape::full())
        .shape("partition", Shape::window())
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .shape("patch", Shape::window_changes(Deletions::None))
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

/// A history being built: the ledger so far and every receipt.
pub struct Builder {
    pub ledger: Ledger,
    pub receipts: Vec<Receipt>,
    pub source: Option<String>,
}

impl Builder {
    pub fn new(contract: Contract) -> Builder {
        Builder {
            ledger: Ledger::new(contract),
            receipts: Vec::new(),
            source: Some("nightly".into()),
        }
    }

    pub fn contract(&self) -> Contract {
        self.ledger.contract().clone()
    }

    /// Decides `m` received five minutes after it was produced; `failed` adds a failed
    /// receiver check.
    pub fn deliver(&mut self, m: Manifest, failed: Option<(&str, &str)>) -> &Receipt {
        let now = m
            .produced_at()
            .checked_add(Duration::from_seconds(300).unwrap())
            .unwrap();
        let mut checks = vec![Check::pass("rows", format!("{} live rows", m.rows()))];
        if let Some((name, detail)) = failed {
            checks.push(Check::fail(name, detail));
        }
        let r = Gate::evaluate(&self.ledger, &m, &checks, now, self.source.as_deref(), &[]);
        if r.accepted() {
            self.ledger = self.ledger.follow(&r).unwrap();
        }
        self.receipts.push(r);
        self.receipts.last().unwrap()
    }

    pub fn window(&mut self, low: &str, high: &str, at: &str) -> &Receipt {
        let m = self
            .contract()
            .manifest("partition", t(at))
            .window(Window::new(date(low), date(high)))
            .rows(3)
            .build()
            .unwrap();
        self.deliver(m, None)
    }

    pub fn history(&self) -> TableHistory {
        TableHistory {
            ledger: Some(self.ledger.clone()),
            receipts: self.receipts.clone(),
        }
    }
}

/// The small history of the docs' screenshot: windows, a patch (changes without deletions),
/// an old window that expires at `options()`, and a refusal.
pub fn small(table: &str) -> Builder {
    let mut b = Builder::new(orders(table));
    b.window("2026-09-27", "2026-10-26", "2026-10-26T06:00:00Z");
    b.window("2026-09-01", "2026-09-10", "2026-10-02T06:00:00Z");
    b.window("2026-10-27", "2026-11-05", "2026-10-27T06:00:00Z");
    let c = b.contract();
    let m = c
        .manifest("partition", t("2026-10-28T06:00:00Z"))
        .window(Window::new(date("2026-10-01"), date("2026-10-10")))
        .rows(4)
        .build()
        .unwrap();
    b.deliver(
        m,
        Some((
            "rows",
            "the read holds 3 live rows and 0 tombstones; the manifest declares 4 and 0",
        )),
    );
    let m = c
        .manifest("patch", t("2026-10-28T12:00:00Z"))
        .window(Window::new(date("2026-10-27"), date("2026-11-05")))
        .since(t("2026-10-27T06:00:00Z"))
        .rows(2)
        .build()
        .unwrap();
    b.deliver(m, None);
    b
}

/// The reader of the small history: Thursday, with a limit of 7 days.
pub fn options() -> Options {
    Options {
        at: t("2026-10-29T00:00:00Z"),
        limit: Duration::from_days(7).unwrap(),
    }
}

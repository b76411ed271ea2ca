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

    /// Decides `m` received five minutes after it was produced, or after the last receipt;
    /// `failed` adds a failed receiver check.
    pub fn deliver(&mut self, m: Manifest, failed: Option<(&str, &str)>) -> &Receipt {
        let five = Duration::from_seconds(300).unwrap();
        let mut now = m.produced_at().checked_add(five).unwrap();
        if let Some(last) = self.receipts.last() {
            now = now.max(last.received_at().checked_add(five).unwrap());
        }
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
    Options::new(t("2026-10-29T00:00:00Z"), Duration::from_days(7).unwrap())
}

/// Events by an integer window `n`: full dumps and windows.
pub fn events() -> Contract {
    Contract::builder("events", ["id"])
        .shape("full", Shape::full())
        .shape("partition", Shape::window())
        .window_column("n")
        .column("id", LogicalType::Int)
        .column("n", LogicalType::Int)
        .build()
        .unwrap()
}

/// `receipts` window deliveries of [10w, 10w + 4] for w = i mod `windows`, one a minute,
/// every tenth refused: up to about 2 regions per window in the replayed history.
pub fn many(receipts: usize, windows: usize) -> Builder {
    let mut b = Builder::new(events());
    let base = t("2026-01-01T00:00:00Z").as_micros();
    let c = b.contract();
    for i in 0..receipts {
        let at = Timestamp::from_micros(base + i as i64 * 60_000_000).unwrap();
        let low = (i % windows) as i64 * 10;
        let m = c
            .manifest("partition", at)
            .window(Window::new(low, low + 4))
            .rows(5)
            .build()
            .unwrap();
        let failed = (i % 10 == 9).then_some((
            "rows",
            "the read holds 4 live rows; the manifest declares 5",
        ));
        b.deliver(m, failed);
    }
    b
}

/// A ledger of `regions` regions of three integers each: distinct dates, every third patched,
/// every fifth unknown.
pub fn wide(regions: usize) -> Ledger {
    let base = t("2026-01-01T00:00:00Z").as_micros();
    let rs = (0..regions)
        .map(|j| {
            let c = Timestamp::from_micros(base + j as i64 * 1_000_000).unwrap();
            let d = if j % 3 == 1 {
                Timestamp::from_micros(c.as_micros() - 3_600_000_000).unwrap()
            } else {
                c
            };
            let dates = (j % 5 != 4).then_some((c, d));
            let j = j as i64;
            dogana::Region::new(
                (j > 0).then_some(Value::Int(3 * j)),
                (j + 1 < regions as i64).then_some(Value::Int(3 * j + 2)),
                j == 0,
                j + 1 == regions as i64,
                dates.map(|x| x.0),
                dates.map(|x| x.1),
            )
            .unwrap()
        })
        .collect();
    Ledger::from_parts(events(), rs, None, None).unwrap()
}

/// Invoices and lines delivered together at Sunday 06:00, then lines alone on Monday.
pub fn together() -> (Builder, Builder) {
    let mut inv = Builder::new(orders("invoices"));
    let mut lines = Builder::new(orders("lines"));
    for b in [&mut inv, &mut lines] {
        let m = b
            .contract()
            .manifest("full", t("2026-10-25T06:00:00Z"))
            .rows(3)
            .build()
            .unwrap();
        b.deliver(m, None);
    }
    let m = lines
        .contract()
        .manifest("full", t("2026-10-26T06:00:00Z"))
        .rows(3)
        .build()
        .unwrap();
    lines.deliver(m, None);
    (inv, lines)
}

pub const PAYLOAD: &str = "<script>alert(1)</script>";

/// A history whose table, source, check detail and window values hold markup.
pub fn hostile() -> Builder {
    let c = dogana::Contract::builder(format!("t{PAYLOAD}"), ["id"])
        .shape("partition", dogana::Shape::window())
        .window_column("k")
        .column("id", dogana::LogicalType::Int)
        .column("k", dogana::LogicalType::Str)
        .build()
        .unwrap();
    let mut b = Builder::new(c.clone());
    b.source = Some(format!("src{PAYLOAD}\u{2028}<img src=x onerror=alert(2)>"));
    let m = c
        .manifest("partition", t("2026-10-25T06:00:00Z"))
        .window(Window::new("</script><script>alert(3)</script>", PAYLOAD))
        .rows(1)
        .build()
        .unwrap();
    b.deliver(m.clone(), None);
    let m2 = c
        .manifest("partition", t("2026-10-26T06:00:00Z"))
        .window(Window::new("a", "b"))
        .rows(1)
        .build()
        .unwrap();
    b.deliver(m2, Some(("rows", &format!("detail {PAYLOAD} & more"))));
    b
}

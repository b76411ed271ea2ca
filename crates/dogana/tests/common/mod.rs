//! Fixtures shared by the rule tests.
#![allow(dead_code)]

use dogana::{
    Contract, ContractBuilder, Date, Deletions, Duration, Ledger, LogicalType, Manifest, Shape,
    Timestamp, Value, Window,
};

pub fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// Instant `h` hours after 2026-10-25T00:00:00Z.
pub fn hour(h: i64) -> Timestamp {
    Timestamp::from_micros(at("2026-10-25T00:00:00Z").as_micros() + h * 3_600_000_000).unwrap()
}

pub fn day(s: &str) -> Value {
    Value::Date(s.parse::<Date>().unwrap())
}

pub fn days(lo: &str, hi: &str) -> Window {
    Window::new(day(lo), day(hi))
}

pub fn ints(lo: i64, hi: i64) -> Window {
    Window::new(lo, hi)
}

/// The concepts' orders contract.
pub fn orders() -> Contract {
    orders_builder().build().unwrap()
}

pub fn orders_builder() -> ContractBuilder {
    Contract::builder("orders", ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape(
            "last3",
            Shape::window()
                .size(Duration::from_days(3).unwrap())
                .cost(2.0),
        )
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .shape("patch", Shape::changes(Deletions::None))
        .shape(
            "window_changes",
            Shape::window_changes(Deletions::Tombstone),
        )
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
}

/// A table with an int window column `part`, complete shapes and timestamp changes.
pub fn parts() -> Contract {
    Contract::builder("parts", ["id"])
        .shape("full", Shape::full())
        .shape("window", Shape::window())
        .shape("changes", Shape::changes(Deletions::None))
        .shape("tomb", Shape::changes(Deletions::Tombstone))
        .shape("wchanges", Shape::window_changes(Deletions::None))
        .window_column("part")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("part", LogicalType::Int)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

/// A keyless event table with an append shape starting at hour 0.
pub fn events() -> Contract {
    Contract::builder("events", Vec::<String>::new())
        .shape("full", Shape::full())
        .shape("append", Shape::changes(Deletions::None))
        .start_at(hour(0))
        .build()
        .unwrap()
}

/// A keyed table with a generation feed.
pub fn feed() -> Contract {
    Contract::builder("feed", ["id"])
        .shape("full", Shape::full())
        .shape("gen", Shape::generations(Deletions::Tombstone))
        .shape("gen_plain", Shape::generations(Deletions::None))
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

/// A keyed table with a sequence feed.
pub fn log() -> Contract {
    Contract::builder("log", ["id"])
        .shape("full", Shape::full())
        .shape("seq", Shape::sequence(Deletions::Tombstone))
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("deleted", LogicalType::Bool)
        .build()
        .unwrap()
}

pub fn full(c: &Contract, t: Timestamp) -> Manifest {
    c.manifest("full", t).rows(10).build().unwrap()
}

pub fn window(c: &Contract, shape: &str, w: Window, t: Timestamp) -> Manifest {
    c.manifest(shape, t).window(w).rows(3).build().unwrap()
}

pub fn applied(c: &Contract, ms: &[Manifest]) -> Ledger {
    ms.iter().fold(Ledger::new(c.clone()), |l, m| {
        l.apply(m).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// (interval, c, d) of every region, for compact assertions.
pub fn shape_of(l: &Ledger) -> Vec<(String, Option<Timestamp>, Option<Timestamp>)> {
    l.regions()
        .iter()
        .map(|r| (r.interval(), r.complete_as_of(), r.deletions_as_of()))
        .collect()
}

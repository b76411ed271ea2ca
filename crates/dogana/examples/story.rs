//! The concepts' story, end to end through the protocol crate: a full read of `orders` on
//! Sunday, the last three days on Tuesday, changes with tombstones on Wednesday — and the same
//! changes declared since Monday, refused. Prints each decision and the claims after it.
//!
//! Run it with `cargo run -p dogana --example story`.

use dogana::{
    Check, Contract, Date, Deletions, Duration, Gate, Ledger, LogicalType, Manifest, Shape,
    Timestamp, Window, Wire,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let orders = Contract::builder("orders", ["id"])
        .shape("full", Shape::full().cost(10.0))
        .shape(
            "last3",
            Shape::window().size(Duration::from_days(3)?).cost(2.0),
        )
        .shape("changes", Shape::changes(Deletions::Tombstone))
        .window_column("order_date")
        .cursor_column("updated_at")
        .deleted_column("deleted")
        .column("id", LogicalType::Int)
        .column("order_date", LogicalType::Date)
        .column("updated_at", LogicalType::Datetime)
        .column("deleted", LogicalType::Bool)
        .build()?;
    println!("contract {} ({})", orders.table(), orders.identity());

    let sunday: Timestamp = "2026-10-25T02:00:00+00:00".parse()?;
    let monday: Timestamp = "2026-10-26T02:00:00+00:00".parse()?;
    let tuesday: Timestamp = "2026-10-27T02:00:00+00:00".parse()?;
    let wednesday: Timestamp = "2026-10-28T02:00:00+00:00".parse()?;

    let last3 = orders
        .shape("last3")
        .expect("declared above")
        .window_ending_at(tuesday, LogicalType::Date)?;
    let deliveries: Vec<(&str, Manifest, Timestamp)> = vec![
        (
            "Sunday: a full dump",
            orders.manifest("full", sunday).rows(1_000).build()?,
            sunday,
        ),
        (
            "Tuesday: the last three days",
            orders
                .manifest("last3", tuesday)
                .window(last3)
                .rows(42)
                .build()?,
            tuesday,
        ),
        (
            "Wednesday: changes since Monday, with tombstones",
            orders
                .manifest("changes", wednesday)
                .since(monday)
                .rows(17)
                .tombstones(2)
                .build()?,
            wednesday,
        ),
        (
            "Wednesday: changes since Sunday, with tombstones",
            orders
                .manifest("changes", wednesday)
                .since(sunday)
                .rows(23)
                .tombstones(2)
                .build()?,
            wednesday,
        ),
    ];

    let mut ledger = Ledger::new(orders.clone());
    for (what, manifest, now) in deliveries {
        // A receiver would check the rows here and pass its results; the story's are honest.
        let rows = Check::pass("rows", format!("{} live rows", manifest.rows()));
        let receipt = Gate::evaluate(&ledger, &manifest, &[rows], now, Some("story"), &[]);
        println!("\n{what}: {}", receipt.outcome());
        for failure in receipt.failures() {
            println!("  {failure}");
        }
        if receipt.accepted() {
            ledger = ledger.follow(&receipt)?;
        }
        let claims = ledger.claims(now, Duration::from_days(7)?, None)?;
        for region in claims.regions() {
            println!("  {region}");
        }
        println!("  {}", claims.summary(orders.table()));
    }

    let october = Window::new(Date::from_ymd(2026, 10, 1)?, Date::from_ymd(2026, 10, 31)?);
    let claims = ledger.claims(wednesday, Duration::from_days(7)?, Some(&october))?;
    println!("\nOctober only: {}", claims.summary("orders"));
    Ok(())
}

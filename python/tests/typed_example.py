"""Code written against the protocol documents, type-checked against the stubs.

scripts/test-python.sh runs `mypy --strict` on this file (a mismatch between how the documents
spell a call and what the stubs say fails the run) and then runs it: the calls are real.
"""

from __future__ import annotations

import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import List, Optional, Tuple

from dogana_rs import (
    Check,
    Claims,
    Contract,
    Delivery,
    Extraction,
    Gate,
    Ledger,
    Manifest,
    Receipt,
    Region,
    Requirement,
    Shape,
    Snapshot,
    Store,
    Transition,
    check_rows,
    plan_delivery,
)

UTC = timezone.utc
SUNDAY = datetime(2026, 10, 25, tzinfo=UTC)
MONDAY = datetime(2026, 10, 26, tzinfo=UTC)

orders = Contract(
    "orders",
    key=("id",),
    shapes={
        "full": Shape.full(cost=10),
        "last3": Shape.window(size=timedelta(days=3), cost=2),
        "changes": Shape.changes(deletions="tombstone"),
    },
    window_column="order_date",
    cursor_column="updated_at",
    deleted_column="deleted",
    types={"id": "int", "order_date": "date", "updated_at": "datetime", "deleted": "bool"},
)


def decide(ledger: Ledger, manifest: Manifest, outcomes: List[Check]) -> Tuple[Ledger, Receipt]:
    receipt: Receipt = Gate.evaluate(ledger, manifest, outcomes, now=MONDAY, source="nightly")
    if receipt.outcome == "rejected":
        return ledger, receipt
    transition: Optional[Transition] = receipt.transition
    assert transition is not None and receipt.accepted and not receipt.replayed
    rebuilt = Receipt(
        receipt.manifest,
        receipt.contract,
        receipt.checks,
        receipt.outcome,
        receipt.received_at,
        receipt.source,
        receipt.base_publication_id,
        receipt.publication_id,
        receipt.ledger_identity,
        transition=transition,
    )
    return ledger.follow(rebuilt), rebuilt


def claims_of(ledger: Ledger) -> Claims:
    claims = ledger.claims(MONDAY, limit=timedelta.max)
    regions: Tuple[Region, ...] = ledger.regions
    assert len(regions) >= 1 and claims.state in ("unknown", "expired", "patched", "complete")
    return claims


def receive(folder: Path, spec: str) -> Snapshot:
    text = "id,order_date,updated_at,amount,deleted\n1,2026-10-24,2026-10-24T10:00:00Z,10,false\n"
    path = folder / "sunday.csv"
    path.write_text(text)
    manifest = orders.manifest("full", SUNDAY, rows=1)
    report = check_rows(path, orders, manifest)
    assert report.passed, [str(c) for c in report.failures]
    store = Store(spec)
    delivery: Delivery = store.deliver(path, orders, manifest, now=SUNDAY)
    assert delivery.accepted and store.verify("orders").ok
    return store.read_consistent_rows("orders")


def main() -> int:
    ledger, receipt = decide(Ledger(orders), orders.manifest("full", SUNDAY, rows=3), [])
    assert receipt.outcome == "accepted"
    assert claims_of(ledger).complete_as_of == SUNDAY
    need: Optional[Extraction] = plan_delivery(ledger, Requirement("orders", MONDAY))
    assert need is not None and need.shape in orders.shapes
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("orders.db", "orders.duckdb"):
            snapshot = receive(Path(tmp), str(Path(tmp) / name))
            assert snapshot.ledger is not None and len(snapshot.rows) == 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The concepts page: its Python example and its story, with the outcomes it states."""

from datetime import timedelta

import pytest

from dogana_rs import Gate, Ledger, RejectedDelivery

from conftest import MONDAY, OCT, SUNDAY, TUESDAY, WEDNESDAY, orders_contract


def test_the_contract_example_builds_with_the_documented_fields(orders):
    assert orders.table == "orders"
    assert orders.key == ("id",)
    assert sorted(orders.shapes) == ["changes", "full", "last3"]
    assert orders.shapes["full"].cost == 10
    assert orders.shapes["last3"].window_size == timedelta(days=3)
    assert orders.shapes["last3"].cost == 2
    assert orders.shapes["changes"].deletions == "tombstone"
    assert orders.types == {"id": "int", "order_date": "date", "updated_at": "datetime", "deleted": "bool"}


def story():
    """Sunday's full read, Tuesday's last3 read of October 25 to 27."""
    orders = orders_contract()
    ledger = Ledger(orders)
    sunday = Gate.evaluate(ledger, orders.manifest("full", SUNDAY, rows=1000), now=SUNDAY)
    ledger = ledger.follow(sunday)
    tuesday = orders.manifest("last3", TUESDAY, window=(OCT(25), OCT(27)), rows=40)
    ledger = ledger.follow(Gate.evaluate(ledger, tuesday, now=TUESDAY))
    return orders, ledger


def test_before_the_first_delivery_the_table_is_one_unknown_region(orders):
    (region,) = Ledger(orders).regions
    assert region.unknown and region.low is None and region.high is None


def test_sunday_full_read_proves_the_whole_table_as_of_sunday(orders):
    ledger = Ledger(orders).apply(orders.manifest("full", SUNDAY, rows=1000))
    (region,) = ledger.regions
    assert (region.complete_as_of, region.deletions_as_of) == (SUNDAY, SUNDAY)


def test_tuesday_window_read_leaves_three_ranges_the_last_proven_by_sunday():
    _, ledger = story()
    first, middle, last = ledger.regions
    assert (first.high, first.complete_as_of) == (OCT(24), SUNDAY)
    assert (middle.low, middle.high, middle.complete_as_of, middle.deletions_as_of) == (
        OCT(25), OCT(27), TUESDAY, TUESDAY)
    # "The last range is proven too: Sunday's dump had every order, including any dated in
    # the future."
    assert (last.low, last.high, last.complete_as_of) == (OCT(28), None, SUNDAY)


def test_wednesday_changes_since_sunday_with_tombstones_prove_the_whole_table_both_dates():
    orders, ledger = story()
    wednesday = orders.manifest("changes", WEDNESDAY, since=SUNDAY, rows=12, tombstones=1)
    receipt = Gate.evaluate(ledger, wednesday, now=WEDNESDAY)
    assert receipt.accepted and receipt.outcome == "accepted"
    ledger = ledger.follow(receipt)
    claims = ledger.claims(WEDNESDAY, limit=timedelta.max)
    assert claims.state == "complete"
    assert claims.exact_as_of == WEDNESDAY
    assert (claims.complete_as_of, claims.deletions_as_of) == (WEDNESDAY, WEDNESDAY)


def test_the_same_delivery_with_only_the_changes_since_monday_is_refused():
    orders, ledger = story()
    monday = orders.manifest("changes", WEDNESDAY, since=MONDAY, rows=12, tombstones=1)
    receipt = Gate.evaluate(ledger, monday, now=WEDNESDAY)
    assert receipt.outcome == "rejected" and not receipt.accepted
    (failed,) = receipt.failures
    assert failed.name == "transition" and "TRANS-08" in failed.detail
    with pytest.raises(RejectedDelivery) as e:
        ledger.apply(monday)
    assert e.value.check == "transition"


def test_monday_changes_without_deletions_leave_the_table_patched():
    # "On Monday it sends the orders changed since Sunday ... complete as of Monday ... the
    # deletions date stays at Sunday." (a changes shape without tombstones)
    from dogana_rs import Contract, Shape

    orders = Contract("orders", key=("id",), shapes={"full": Shape.full(), "changes": Shape.changes()},
                      cursor_column="updated_at", types={"id": "int", "updated_at": "datetime"})
    ledger = Ledger(orders).apply(orders.manifest("full", SUNDAY, rows=10))
    ledger = ledger.apply(orders.manifest("changes", MONDAY, since=SUNDAY, rows=2))
    claims = ledger.claims(MONDAY, limit=timedelta.max)
    assert (claims.complete_as_of, claims.deletions_as_of) == (MONDAY, SUNDAY)
    assert claims.state == "patched" and claims.exact_as_of is None


def test_invoices_at_ten_and_lines_at_ten_past_five_have_no_common_instant():
    from datetime import datetime, timezone

    from dogana_rs import Contract, Group, Shape

    def table(name):
        return Contract(name, key=("id",), shapes={"full": Shape.full()}, types={"id": "int"})

    invoices, lines = table("invoices"), table("lines")
    ten = datetime(2026, 10, 25, 10, 0, tzinfo=timezone.utc)
    ten_five = datetime(2026, 10, 25, 10, 5, tzinfo=timezone.utc)
    li = Ledger(invoices).apply(invoices.manifest("full", ten, rows=3))
    ll = Ledger(lines).apply(lines.manifest("full", ten_five, rows=9))
    group = Group([invoices, lines])
    assert li.claims(ten_five, limit=timedelta.max).exact_as_of == ten
    assert ll.claims(ten_five, limit=timedelta.max).exact_as_of == ten_five
    assert group.claims([li, ll], ten_five, limit=timedelta.max).exact_as_of is None

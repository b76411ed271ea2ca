"""The protocol document's statements that Python code can show, with the stated outcomes."""

import hashlib
import json
from datetime import date, datetime, timedelta, timezone

import pytest

from dogana_rs import (
    NO_PUBLICATION,
    WIRE_VERSION,
    Check,
    Claims,
    Contract,
    DoganaError,
    Gate,
    Group,
    InconsistentPublication,
    InvalidContract,
    Ledger,
    Manifest,
    PlanningError,
    Receipt,
    RejectedDelivery,
    Requirement,
    SerializationError,
    Shape,
    column_hash,
    next_extraction,
    plan_delivery,
    plan_together,
)

from conftest import MONDAY, OCT, SUNDAY, TUESDAY, UTC, orders_contract


def plain(name="orders", **shapes):
    shapes = shapes or {"full": Shape.full()}
    return Contract(name, key=("id",), shapes=shapes, types={"id": "int"})


# ---------------------------------------------------------------- the error tree


def test_the_error_tree_mirrors_the_protocol():
    assert issubclass(InvalidContract, DoganaError)
    assert issubclass(SerializationError, InvalidContract)
    for cls in (RejectedDelivery, PlanningError, InconsistentPublication):
        assert issubclass(cls, DoganaError) and not issubclass(cls, InvalidContract)


# ---------------------------------------------------------------- contracts and shapes


def test_the_ten_shapes():
    shapes = [Shape.full(), Shape.window()]
    for deletions in ("none", "tombstone"):
        shapes += [Shape.changes(deletions=deletions), Shape.window_changes(deletions=deletions),
                   Shape.generations(deletions=deletions), Shape.sequence(deletions=deletions)]
    kinds = {(s.coverage, s.checkpoint, s.deletions) for s in shapes}
    assert len(kinds) == 10
    assert all(s.cost == 1 for s in shapes)


def test_a_window_shape_of_generations_does_not_exist():
    with pytest.raises(InvalidContract) as e:
        Shape("window", "generation", "none")
    assert e.value.rule == "CONTRACT-30"


def test_a_contract_has_a_window_column_exactly_when_it_has_a_window_shape():
    with pytest.raises(InvalidContract):
        Contract("orders", key=("id",), shapes={"last3": Shape.window()}, types={"id": "int"})


def test_lookback_only_on_timestamp_shapes_of_keyed_contracts():
    with pytest.raises(InvalidContract):
        Contract("events", key=(), shapes={"append": Shape.changes(lookback=timedelta(hours=1))})


def test_thirty_days_ending_october_19_start_september_20():
    shape = Shape.window(size=timedelta(days=30))
    end = datetime(2026, 10, 19, 6, 0, tzinfo=UTC)
    assert shape.window_ending_at(end, "date") == (date(2026, 9, 20), date(2026, 10, 19))


def test_a_datetime_window_includes_both_ends_at_microsecond_resolution():
    shape = Shape.window(size=timedelta(hours=1))
    end = datetime(2026, 10, 19, 6, 0, tzinfo=UTC)
    low, high = shape.window_ending_at(end, "datetime")
    assert (low, high) == (end - timedelta(hours=1) + timedelta(microseconds=1), end)


def test_column_hash_is_the_sha256_of_the_compact_ascii_pairs():
    pairs = [["id", "int"], ["amount", "decimal(12,2)"], ["name", "str"]]
    expected = hashlib.sha256(
        json.dumps(pairs, ensure_ascii=True, separators=(",", ":")).encode("ascii")).hexdigest()
    assert column_hash([tuple(p) for p in pairs]) == expected


def test_contract_manifest_fills_in_the_table_and_the_schema_hash():
    h = "a" * 64
    c = Contract("orders", key=("id",), shapes={"full": Shape.full()}, types={"id": "int"}, schema_hash=h)
    m = c.manifest("full", SUNDAY, rows=3)
    assert (m.table, m.schema_hash, m.rows, m.tombstones) == ("orders", h, 3, 0)


# ---------------------------------------------------------------- domains


def test_aware_datetimes_are_normalized_to_utc():
    c = plain()
    plus2 = datetime(2026, 10, 18, 2, 0, tzinfo=timezone(timedelta(hours=2)))
    z = datetime(2026, 10, 18, 0, 0, tzinfo=UTC)
    a, b = c.manifest("full", plus2, rows=1), c.manifest("full", z, rows=1)
    assert a == b and a.identity == b.identity
    assert a.produced_at == z and a.produced_at.utcoffset() == timedelta(0)


def test_a_naive_datetime_is_refused():
    with pytest.raises(InvalidContract) as e:
        plain().manifest("full", datetime(2026, 10, 18), rows=1)
    assert e.value.field == "produced_at"


def test_date_domains_end_at_pythons_smallest_and_largest_values():
    c = Contract("t", key=("id",), shapes={"w": Shape.window()}, window_column="d",
                 types={"id": "int", "d": "date"})
    ledger = Ledger(c).apply(c.manifest("w", SUNDAY, window=(date.min, OCT(1)), rows=0))
    # "a window reaching one of them creates no empty region beyond it"
    # two regions, not three: the first, known, is spelled unbounded below (DOMAIN-16)
    first, rest = ledger.regions
    assert (first.low, first.high, first.complete_as_of) == (None, OCT(1), SUNDAY)
    assert rest.unknown and rest.low == OCT(2)


def test_the_successor_of_a_string_is_s_plus_nul():
    c = Contract("t", key=("k",), shapes={"w": Shape.window()}, window_column="k", types={"k": "str"})
    ledger = Ledger(c).apply(c.manifest("w", SUNDAY, window=("a", "a"), rows=1))
    low, one, high = ledger.regions
    assert (one.low, one.high, one.high_open) == ("a", "a", False)
    assert (high.low, high.low_open) == ("a\x00", False)
    assert (low.high, low.high_open) == ("a", True)


# ---------------------------------------------------------------- the gate and receipts


def test_preflight_returns_the_three_core_checks_in_order():
    c = plain()
    checks = Gate.preflight(Ledger(c), c.manifest("full", SUNDAY, rows=1), now=SUNDAY)
    assert [ch.name for ch in checks] == ["manifest", "receiver_time", "transition"]
    assert all(ch.passed for ch in checks)


def test_the_gate_rejects_produced_at_later_than_now():
    c = plain()
    receipt = Gate.evaluate(Ledger(c), c.manifest("full", MONDAY, rows=1), now=SUNDAY)
    assert receipt.outcome == "rejected"
    assert [ch.name for ch in receipt.failures] == ["receiver_time"]


def test_any_failed_receiver_check_rejects_and_a_rejection_leaves_the_ledger():
    c = plain()
    ledger = Ledger(c)
    receipt = Gate.evaluate(ledger, c.manifest("full", SUNDAY, rows=2), [Check("rows", False, "3 rows, not 2")], now=SUNDAY)
    assert receipt.outcome == "rejected" and receipt.transition is None
    # never published: publication_id is the string the chain starts from
    assert receipt.publication_id == NO_PUBLICATION == "None"
    assert receipt.base_publication_id is None
    assert receipt.ledger_identity == ledger.identity
    with pytest.raises(InconsistentPublication):
        ledger.follow(receipt)


def test_reject_records_a_failure_the_receiver_found():
    c = plain()
    m = c.manifest("full", SUNDAY, rows=2)
    receipt = Gate.reject(Ledger(c), m, [Check("keys", False, "line 3: a repeated key")], now=SUNDAY)
    assert receipt.outcome == "rejected"
    assert receipt == Gate.evaluate(Ledger(c), m, [Check("keys", False, "line 3: a repeated key")], now=SUNDAY)
    # a rejection always names a failure
    bare = Gate.reject(Ledger(c), m, (), now=SUNDAY)
    assert [ch.name for ch in bare.failures] == ["receiver"]


def test_accepted_and_replayed_properties():
    c = plain()
    receipt = Gate.evaluate(Ledger(c), c.manifest("full", SUNDAY, rows=1), now=SUNDAY, source="nightly")
    assert (receipt.accepted, receipt.replayed, receipt.source) == (True, False, "nightly")
    replay = receipt.as_replay()
    assert (replay.outcome, replay.accepted, replay.replayed) == ("replayed", True, True)
    # identity writes a replay's outcome as accepted
    assert replay.identity == receipt.identity
    assert replay.transition == receipt.transition


RECEIPT_FIELDS = (
    "manifest", "contract", "checks", "outcome", "received_at", "source",
    "base_publication_id", "publication_id", "ledger_identity", "transition",
)


def fields(receipt):
    return {name: getattr(receipt, name) for name in RECEIPT_FIELDS}


def test_a_receipt_is_built_from_its_fields_named_as_on_the_wire():
    c = plain()
    ledger = Ledger(c)
    m = c.manifest("full", SUNDAY, rows=1)
    given = Gate.evaluate(ledger, m, [Check("rows", True, "1 row")], now=SUNDAY, source="nightly")
    # "field names match constructor arguments": the wire fields are the keywords
    assert set(RECEIPT_FIELDS) == set(given.to_dict()) - {"version", "kind"}
    built = Receipt(**fields(given))
    assert built == given and built.identity == given.identity
    assert built.to_json() == given.to_json()
    assert (built.outcome, built.accepted, built.replayed) == ("accepted", True, False)
    # and positionally, in the wire order
    assert Receipt(*fields(given).values()) == given
    # a built acceptance is followed like the gate's own
    assert ledger.follow(built) == ledger.follow(given) == ledger.apply(m)
    assert Ledger.from_receipts(c, [built]) == ledger.apply(m)


def test_a_built_rejection_and_replay():
    c = plain()
    m = c.manifest("full", SUNDAY, rows=1)
    rejected = Gate.reject(Ledger(c), m, [Check("rows", False, "2 rows, not 1")], now=SUNDAY)
    built = Receipt(
        m, c, rejected.checks, "rejected", SUNDAY, None, None, NO_PUBLICATION,
        rejected.ledger_identity,
    )
    assert built == rejected and built.transition is None
    assert (built.accepted, built.replayed) == (False, False)
    accepted = Gate.evaluate(Ledger(c), m, now=SUNDAY)
    replay = Receipt(**{**fields(accepted), "outcome": "replayed"})
    assert replay == accepted.as_replay() and replay.replayed and replay.accepted
    assert replay.identity == accepted.identity


def test_a_receipt_whose_fields_contradict_each_other_is_refused():
    c = plain()
    accepted = Gate.evaluate(Ledger(c), c.manifest("full", SUNDAY, rows=1), now=SUNDAY)
    f = fields(accepted)
    # a rejection keeps the publication and carries no transition
    with pytest.raises(SerializationError, match="publication_id"):
        Receipt(**{**f, "outcome": "rejected"})
    with pytest.raises(SerializationError, match="transition"):
        Receipt(**{**f, "outcome": "rejected", "publication_id": NO_PUBLICATION})
    # an acceptance carries its transition and names a chain head
    with pytest.raises(SerializationError, match="transition"):
        Receipt(**{**f, "transition": None})
    with pytest.raises(SerializationError, match="publication_id"):
        Receipt(**{**f, "publication_id": "head"})
    with pytest.raises(SerializationError, match="outcome"):
        Receipt(**{**f, "outcome": "approved"})
    with pytest.raises(InvalidContract, match="received_at"):
        Receipt(**{**f, "received_at": datetime(2026, 10, 25)})
    with pytest.raises(TypeError, match="checks"):
        Receipt(**{**f, "checks": "rows"})
    with pytest.raises(TypeError, match="manifest"):
        Receipt(**{**f, "manifest": c})
    # a receipt that leaves another ledger than it names is refused by the ledger
    forged = Receipt(**{**f, "ledger_identity": "0" * 64})
    with pytest.raises(InconsistentPublication):
        Ledger(c).follow(forged)


def test_the_chain_is_sha256_of_previous_contract_and_manifest_identities():
    c = plain()
    m1, m2 = c.manifest("full", SUNDAY, rows=1), c.manifest("full", MONDAY, rows=2)
    l1 = Ledger(c).apply(m1)
    l2 = l1.apply(m2)
    first = hashlib.sha256(f"None:{c.identity}:{m1.identity}".encode()).hexdigest()
    assert l1.publication_id == first
    assert l2.publication_id == hashlib.sha256(f"{first}:{c.identity}:{m2.identity}".encode()).hexdigest()


def test_an_acceptance_carries_a_transition_with_the_plan_and_the_regions_after(orders):
    ledger = Ledger(orders).apply(orders.manifest("full", SUNDAY, rows=1))
    m = orders.manifest("changes", MONDAY, since=SUNDAY, rows=2, tombstones=1)
    receipt = Gate.evaluate(ledger, m, now=MONDAY)
    actions = [a.action for a in receipt.transition.plan.actions]
    assert actions == ["upsert", "tombstone"]
    assert receipt.transition.plan.actions[0].key == ("id",)
    (after,) = receipt.transition.regions
    assert after.complete_as_of == MONDAY


def test_a_window_delivery_plans_replace_window(orders):
    ledger = Ledger(orders).apply(orders.manifest("full", SUNDAY, rows=1))
    receipt = Gate.evaluate(ledger, orders.manifest("last3", TUESDAY, window=(OCT(25), OCT(27)), rows=3), now=TUESDAY)
    (action,) = receipt.transition.plan.actions
    assert (action.action, action.window) == ("replace_window", (OCT(25), OCT(27)))


def test_from_receipts_folds_the_accepted_and_refuses_a_reordered_history():
    c = plain()
    ledger = Ledger(c)
    receipts = []
    for i, at in enumerate([SUNDAY, MONDAY, TUESDAY]):
        r = Gate.evaluate(ledger, c.manifest("full", at, rows=i), now=at)
        receipts.append(r)
        ledger = ledger.follow(r)
        receipts.append(Gate.reject(ledger, c.manifest("full", at, rows=9), [Check("rows", False, "no")], now=at))
    assert Ledger.from_receipts(c, receipts) == ledger
    with pytest.raises(InconsistentPublication):
        Ledger.from_receipts(c, [receipts[2], receipts[0]])


def test_with_contract_keeps_evidence_and_refuses_a_fixed_field_after_history():
    c = plain()
    ledger = Ledger(c).apply(c.manifest("full", SUNDAY, rows=1))
    cheaper = plain(full=Shape.full(cost=3))
    moved = ledger.with_contract(cheaper)
    assert moved.regions == ledger.regions and moved.publication_id == ledger.publication_id
    other_key = Contract("orders", key=("order_id",), shapes={"full": Shape.full()}, types={"order_id": "int"})
    with pytest.raises(InvalidContract) as e:
        ledger.with_contract(other_key)
    assert e.value.rule == "EVOL-01"


# ---------------------------------------------------------------- claims


def test_a_region_exactly_limit_old_is_not_expired_and_timedelta_max_expires_none():
    c = plain()
    ledger = Ledger(c).apply(c.manifest("full", SUNDAY, rows=1))
    assert ledger.claims(MONDAY, limit=timedelta(days=1)).state == "complete"
    assert ledger.claims(MONDAY, limit=timedelta(days=1) - timedelta(microseconds=1)).state == "expired"
    far = datetime(9999, 12, 31, tzinfo=UTC)
    claims = ledger.claims(far, limit=timedelta.max)
    assert claims.state == "complete" and claims.limit == timedelta.max


def test_claims_cut_the_regions_to_a_window(orders):
    ledger = Ledger(orders).apply(orders.manifest("full", SUNDAY, rows=1))
    claims = ledger.claims(SUNDAY, limit=timedelta.max, window=(OCT(1), OCT(3)))
    (rc,) = claims.regions
    assert (rc.table, rc.region.low, rc.region.high, rc.state) == ("orders", OCT(1), OCT(3), "complete")


def test_the_table_state_is_its_worst_regions_and_unknown_has_no_dates(orders):
    ledger = Ledger(orders).apply(orders.manifest("last3", TUESDAY, window=(OCT(25), OCT(27)), rows=1))
    claims = ledger.claims(TUESDAY, limit=timedelta.max)
    assert claims.state == "unknown"
    assert claims.complete_as_of is None and claims.deletions_as_of is None and claims.exact_as_of is None


# ---------------------------------------------------------------- planning


def test_plan_delivery_returns_nothing_when_claims_suffice_else_the_cheapest_read(orders):
    ledger = Ledger(orders).apply(orders.manifest("full", SUNDAY, rows=9))
    assert plan_delivery(ledger, Requirement("orders", SUNDAY)) is None
    x = plan_delivery(ledger, Requirement.exact("orders", MONDAY))
    assert (x.shape, x.until, x.since) == ("changes", MONDAY, SUNDAY)
    # on a window, the window shape is cheaper than the changes (cost 1) only if it is; here
    # "changes" costs 1 and "last3" 2, so changes still wins
    w = plan_delivery(ledger, Requirement("orders", MONDAY, window=(OCT(20), OCT(21))))
    assert w.shape == "changes"


def test_no_suitable_shape_raises_planning_error():
    c = plain()
    with pytest.raises(PlanningError) as e:
        plan_delivery(Ledger(c), Requirement("orders", SUNDAY, window=(1, 2)))
    assert e.value.problems


def test_next_extraction_derives_a_rolling_window(orders):
    x = next_extraction(Ledger(orders), "last3", datetime(2026, 10, 27, 6, tzinfo=UTC))
    assert x.window == (OCT(25), OCT(27))
    m = x.manifest(orders, rows=4)
    assert (m.shape, m.window, m.produced_at, m.rows) == ("last3", (OCT(25), OCT(27)), x.until, 4)


def test_a_keyless_append_starts_at_start_at():
    c = Contract("events", key=(), shapes={"append": Shape.changes()}, start_at=SUNDAY)
    ledger = Ledger(c)
    x = next_extraction(ledger, "append", MONDAY)
    assert x.since == SUNDAY
    ledger = ledger.apply(x.manifest(c, rows=5))
    assert ledger.claims(MONDAY, limit=timedelta.max).exact_as_of == MONDAY
    with pytest.raises(RejectedDelivery):
        ledger.apply(c.manifest("append", TUESDAY, since=SUNDAY, rows=1))


# ---------------------------------------------------------------- groups


def test_group_apply_accepts_together_or_rejects_every_table():
    invoices, lines = plain("invoices"), plain("lines")
    group = Group([invoices, lines])
    ledgers = [Ledger(invoices), Ledger(lines)]
    same = [invoices.manifest("full", SUNDAY, rows=2), lines.manifest("full", SUNDAY, rows=5)]
    receipts = group.apply(ledgers, same, now=MONDAY)
    assert [r.outcome for r in receipts] == ["accepted", "accepted"]
    assert all(r.checks[-1].name == "together" and r.checks[-1].passed for r in receipts)
    ledgers = [l.follow(r) for l, r in zip(ledgers, receipts)]
    assert group.claims(ledgers, MONDAY, limit=timedelta.max).exact_as_of == SUNDAY
    assert group.replay(same, receipts) is not None
    apart = [invoices.manifest("full", MONDAY, rows=2), lines.manifest("full", TUESDAY, rows=5)]
    refused = group.apply(ledgers, apart, now=TUESDAY)
    assert [r.outcome for r in refused] == ["rejected", "rejected"]
    # a table belongs once to a group, whatever its letter case
    with pytest.raises(InvalidContract):
        Group([plain("lines"), plain("Lines")])


def test_plan_together_asks_every_table_for_one_instant():
    invoices, lines = plain("invoices"), plain("lines")
    group = Group([invoices, lines])
    ledgers = [Ledger(invoices).apply(invoices.manifest("full", SUNDAY, rows=1)),
               Ledger(lines).apply(lines.manifest("full", MONDAY, rows=1))]
    requests = plan_together(group, ledgers, SUNDAY)
    assert [x.table for x in requests] == ["invoices", "lines"]
    assert len({x.until for x in requests}) == 1 and requests[0].until > MONDAY
    same = [Ledger(invoices).apply(invoices.manifest("full", MONDAY, rows=1)), ledgers[1]]
    assert plan_together(group, same, SUNDAY) is None


# ---------------------------------------------------------------- versioned JSON


def test_every_document_carries_version_4_and_its_kind_and_every_field():
    c = plain()
    doc = json.loads(c.to_json())
    assert (doc["version"], doc["kind"], WIRE_VERSION) == (4, "Contract", 4)
    assert doc["window_column"] is None and doc["types"] == {"id": "int"}
    assert c.to_dict() == doc


def test_earlier_versions_are_refused():
    doc = plain().to_dict()
    doc["version"] = 3
    with pytest.raises(SerializationError) as e:
        Contract.from_dict(doc)
    assert e.value.rule == "WIRE-02"


def test_a_number_with_a_zero_fraction_is_the_integer_it_spells():
    m = plain().manifest("full", SUNDAY, rows=3)
    doc = m.to_dict()
    doc["rows"] = 3.0
    assert Manifest.from_dict(doc) == m
    assert Manifest.from_json(m.to_json().replace('"rows":3', '"rows":3.0')) == m


def test_tags_and_their_grammar():
    c = orders_contract()
    m = c.manifest("last3", TUESDAY, window=(OCT(25), OCT(27)), rows=1)
    doc = m.to_dict()
    assert doc["window"] == [{"$date": "2026-10-25"}, {"$date": "2026-10-27"}]
    assert doc["produced_at"] == {"$datetime": "2026-10-27T00:00:00+00:00"}
    shape = c.shapes["last3"].to_dict()
    assert shape["window_size"] == {"$seconds": 259200}
    # seven fractional digits would lose one: refused, never truncated
    doc["produced_at"] = {"$datetime": "2026-10-27T00:00:00.1234567Z"}
    with pytest.raises(SerializationError):
        Manifest.from_dict(doc)
    doc["produced_at"] = {"$datetime": "2026-10-27T00:00:00"}
    with pytest.raises(SerializationError):
        Manifest.from_dict(doc)


def test_datetimes_are_emitted_in_utc_with_six_digits_when_fractional():
    m = plain().manifest("full", datetime(2026, 10, 18, 2, 0, 0, 500000, tzinfo=timezone(timedelta(hours=2))), rows=1)
    assert m.to_dict()["produced_at"] == {"$datetime": "2026-10-18T00:00:00.500000+00:00"}


def test_identity_omits_version_and_defaults():
    m = plain().manifest("full", SUNDAY, rows=3)
    ident = m.identity_dict()
    assert "version" not in ident and "window" not in ident and "tombstones" not in ident
    assert ident["kind"] == "Manifest"
    assert m.identity == hashlib.sha256(m.identity_json().encode("utf-8")).hexdigest()
    assert json.loads(m.identity_json()) == ident


def test_nested_values_round_trip_through_dict_and_json(orders):
    ledger = Ledger(orders).apply(orders.manifest("full", SUNDAY, rows=9))
    receipt = Gate.evaluate(ledger, orders.manifest("last3", TUESDAY, window=(OCT(25), OCT(27)), rows=3), now=TUESDAY)
    for value in (orders, ledger, receipt, ledger.claims(TUESDAY, limit=timedelta(days=2)), receipt.transition):
        cls = type(value)
        assert cls.from_json(value.to_json()) == value
        assert cls.from_dict(value.to_dict()) == value
        assert cls.from_json(value.to_json()).to_json() == value.to_json()
    assert Receipt.from_json(receipt.to_json()).identity == receipt.identity
    assert Claims.from_dict(ledger.claims(TUESDAY, limit=timedelta.max).to_dict()).limit == timedelta.max


def test_unknown_fields_and_kinds_are_refused():
    doc = plain().to_dict()
    doc["shrink"] = 0.5
    with pytest.raises(SerializationError):
        Contract.from_dict(doc)
    with pytest.raises(SerializationError):
        Manifest.from_json(plain().to_json())

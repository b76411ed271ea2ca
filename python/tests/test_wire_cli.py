"""Random wire documents round-trip between Python and the `dogana` command line built from
the workspace, byte for byte, with equal identities (hypothesis)."""

import json
import os
import subprocess
import tempfile
from datetime import date, datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dogana_rs import (
    Check,
    Contract,
    Gate,
    Ledger,
    Manifest,
    RejectedDelivery,
    Requirement,
    Shape,
)

UTC = timezone.utc
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)
costs = st.one_of(st.integers(0, 10**6), st.floats(0, 1e12, allow_nan=False), st.sampled_from([0.1, 1e-7, 2.5e-300, 1e21]))
instants = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1),
                        timezones=st.just(UTC))
days = st.dates(min_value=date(1900, 1, 1), max_value=date(2100, 1, 1))


def run(bin_, *args):
    return subprocess.run([bin_, *args], check=True, capture_output=True).stdout


def assert_round_trip(bin_, value):
    doc = value.to_json()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "doc.json")
        with open(path, "w") as f:
            f.write(doc)
        kind, identity = run(bin_, "identity", path).decode().split()
        assert (kind, identity) == (type(value).__name__, value.identity)
        # the command line's RFC 8785 bytes read back in Python to the same document
        jcs = run(bin_, "canonical", path)
        back = type(value).from_json(jcs.decode("utf-8"))
        assert back.to_json() == doc and back.identity == value.identity
        # and it writes the identity form exactly as Python does
        with open(path, "w") as f:
            f.write(json.dumps(value.identity_dict()))
        assert run(bin_, "canonical", path) == value.identity_json().encode("utf-8")


@st.composite
def contracts(draw):
    window = draw(st.sampled_from([None, "int", "str", "date", "datetime"]))
    shapes = {"full": Shape.full(cost=draw(costs))}
    types = {"id": "int"}
    kwargs = {}
    if window:
        size = None
        if window in ("date", "datetime") and draw(st.booleans()):
            size = timedelta(days=draw(st.integers(1, 400)))
        shapes[draw(names)] = Shape.window(size=size, cost=draw(costs))
        types["w"] = window
        kwargs["window_column"] = "w"
    if draw(st.booleans()):
        shapes["changes"] = Shape.changes(
            deletions=draw(st.sampled_from(["none", "tombstone"])), cost=draw(costs),
            lookback=draw(st.one_of(st.none(), st.timedeltas(timedelta(0), timedelta(days=9)))))
        types["updated_at"] = "datetime"
        kwargs["cursor_column"] = "updated_at"
        if shapes["changes"].deletions == "tombstone":
            types["deleted"] = "bool"
            kwargs["deleted_column"] = "deleted"
    if draw(st.booleans()):
        kwargs["schema_hash"] = draw(st.text("0123456789abcdef", min_size=64, max_size=64))
    if draw(st.booleans()):
        kwargs["start_at"] = draw(instants)
    return Contract(draw(names), key=("id",), shapes=shapes, types=types, **kwargs)


def bound(draw, ty):
    if ty == "int":
        return draw(st.integers(-(2**53) + 1, 2**53 - 1))
    if ty == "str":
        return draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=6))
    if ty == "date":
        return draw(days)
    return draw(instants)


@st.composite
def histories(draw):
    """A contract, and a ledger with receipts after a few window or full deliveries."""
    c = draw(contracts())
    ledger = Ledger(c)
    receipts = []
    at = datetime(2000, 1, 1, tzinfo=UTC)
    window_shape = next((n for n, s in c.shapes.items() if s.coverage == "window"), None)
    for _ in range(draw(st.integers(0, 5))):
        at += timedelta(seconds=draw(st.integers(1, 10**7)), microseconds=draw(st.integers(0, 999999)))
        if window_shape and draw(st.booleans()):
            a, b = sorted([bound(draw, c.types["w"]), bound(draw, c.types["w"])])
            m = c.manifest(window_shape, at, window=(a, b), rows=draw(st.integers(0, 2**53 - 1)))
        else:
            m = c.manifest("full", at, rows=draw(st.integers(0, 1000)))
        outcomes = [Check(draw(names), draw(st.booleans()), draw(names))] if draw(st.booleans()) else []
        r = Gate.evaluate(ledger, m, outcomes, now=at, source=draw(st.one_of(st.none(), names)))
        receipts.append(r)
        if r.outcome == "accepted":
            ledger = ledger.follow(r)
    return c, ledger, receipts, at


@SETTINGS
@given(contracts())
def test_contracts_and_shapes(dogana_bin, contract):
    assert_round_trip(dogana_bin, contract)
    for shape in contract.shapes.values():
        assert_round_trip(dogana_bin, shape)


@SETTINGS
@given(histories())
def test_ledgers_receipts_claims(dogana_bin, history):
    contract, ledger, receipts, at = history
    assert_round_trip(dogana_bin, ledger)
    for r in receipts:
        assert_round_trip(dogana_bin, r)
        assert_round_trip(dogana_bin, r.manifest)
        if r.transition is not None:
            assert_round_trip(dogana_bin, r.transition)
    assert_round_trip(dogana_bin, ledger.claims(at, limit=timedelta(days=3, microseconds=5)))
    assert_round_trip(dogana_bin, Requirement(contract.table, at, at))
    for region in ledger.regions:
        assert_round_trip(dogana_bin, region)

"""Bad input raises the protocol's exceptions or a TypeError naming the field; nothing
crashes the interpreter."""

from datetime import date, datetime, timedelta

import pytest

from dogana_rs import (
    Check,
    Contract,
    Gate,
    InvalidContract,
    Ledger,
    Manifest,
    Receipt,
    Region,
    Requirement,
    SerializationError,
    Shape,
)

from conftest import OCT, SUNDAY, orders_contract


def test_a_naive_datetime_names_the_field():
    c = orders_contract()
    with pytest.raises(InvalidContract) as e:
        c.manifest("changes", SUNDAY, since=datetime(2026, 10, 24), rows=1)
    assert e.value.field == "since" and e.value.rule == "TRUST-09"
    with pytest.raises(InvalidContract, match="now"):
        Ledger(c).claims(datetime(2026, 10, 24), limit=timedelta.max)


def test_a_str_where_a_date_is_expected():
    c = orders_contract()
    with pytest.raises(InvalidContract) as e:
        c.manifest("last3", SUNDAY, window=("2026-10-25", OCT(27)), rows=1)
    assert e.value.field == "window[0]" and e.value.rule == "MAN-07"
    with pytest.raises(TypeError, match="produced_at"):
        c.manifest("full", "2026-10-25T00:00:00Z", rows=1)
    with pytest.raises(TypeError, match="complete_as_of"):
        Requirement("orders", date(2026, 10, 25))


def test_a_float_key_or_bound():
    c = Contract("t", key=("k",), shapes={"w": Shape.window()}, window_column="k", types={"k": "int"})
    with pytest.raises(InvalidContract) as e:
        c.manifest("w", SUNDAY, window=(1.0, 2), rows=1)
    assert e.value.field == "window[0]" and e.value.rule == "DOMAIN-07"
    with pytest.raises(InvalidContract):
        Contract("t", key=("k",), shapes={"full": Shape.full()}, types={"k": "float"})
    with pytest.raises(InvalidContract):
        Region(low=True)


def test_an_integer_beyond_the_portable_range():
    c = Contract("t", key=("k",), shapes={"w": Shape.window()}, window_column="k", types={"k": "int"})
    with pytest.raises(InvalidContract) as e:
        c.manifest("w", SUNDAY, window=(0, 2**53), rows=1)
    assert e.value.rule == "DOMAIN-14"
    with pytest.raises(InvalidContract):
        c.manifest("w", SUNDAY, window=(0, 10**40), rows=1)


def test_wrong_types_name_the_argument():
    c = orders_contract()
    with pytest.raises(TypeError, match="key"):
        Contract("t", key="id", shapes={"full": Shape.full()}, types={"id": "int"})
    with pytest.raises(TypeError, match="shapes"):
        Contract("t", key=("id",), shapes={"full": "full"}, types={"id": "int"})
    with pytest.raises(TypeError, match="rows"):
        c.manifest("full", SUNDAY, rows="3")
    with pytest.raises(InvalidContract, match="rows"):
        c.manifest("full", SUNDAY, rows=-1)
    with pytest.raises(TypeError, match="size"):
        Shape.window(size=3)
    with pytest.raises(InvalidContract, match="lookback"):
        Shape.changes(lookback=timedelta(seconds=-1))
    with pytest.raises(TypeError, match="cost"):
        Shape.full(cost="cheap")
    with pytest.raises(InvalidContract):
        Shape.full(cost=float("nan"))
    with pytest.raises(TypeError, match=r"outcomes\[0\]"):
        Gate.evaluate(Ledger(c), c.manifest("full", SUNDAY, rows=1), ["rows ok"], now=SUNDAY)
    with pytest.raises(TypeError):
        Ledger("orders")
    with pytest.raises(InvalidContract, match="types.id"):
        Contract("t", key=("id",), shapes={"full": Shape.full()}, types={"id": "integer"})
    with pytest.raises(InvalidContract):
        Shape.changes(deletions="soft")


def test_bad_documents_raise_serialization_error_naming_the_path():
    for doc in ["", "{", "[]", "null", '{"version":4}', '{"a":1,"a":2}', '"\\ud800"', "[" * 10000]:
        with pytest.raises(SerializationError):
            Receipt.from_json(doc)
    with pytest.raises(SerializationError):
        Contract.from_json(123)
    with pytest.raises(SerializationError):
        Contract.from_dict({"kind": "Contract", "version": 4, "key": {1, 2}})
    deep = {}
    node = deep
    for _ in range(500):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(SerializationError):
        Contract.from_dict(deep)
    doc = orders_contract().to_dict()
    doc["shapes"]["last3"]["window_size"] = {"$seconds": -1}
    with pytest.raises(SerializationError) as e:
        Contract.from_dict(doc)
    assert e.value.field.startswith("$.shapes.last3.window_size")


def test_every_kind_refuses_garbage_without_crashing():
    import dogana_rs

    kinds = [dogana_rs.Shape, dogana_rs.Contract, dogana_rs.Manifest, dogana_rs.Region,
             dogana_rs.Ledger, dogana_rs.Check, dogana_rs.Action, dogana_rs.ApplyPlan,
             dogana_rs.Transition, dogana_rs.Receipt, dogana_rs.RegionClaim, dogana_rs.Claims,
             dogana_rs.Requirement, dogana_rs.Extraction]
    garbage = ["{}", '{"version":4,"kind":"X"}', '{"version":4.5}', "1e999", '{"version":4,"kind":"Ledger","contract":null}']
    for kind in kinds:
        for doc in garbage:
            with pytest.raises(SerializationError):
                kind.from_json(doc)


def test_help_says_what_every_class_is():
    import dogana_rs

    for name in dogana_rs.__all__:
        obj = getattr(dogana_rs, name)
        if isinstance(obj, type):
            assert obj.__doc__ and len(obj.__doc__) > 20, name
            assert obj.__module__ in ("dogana_rs", "dogana_rs.errors"), name


def test_values_are_immutable_and_hashable():
    c = orders_contract()
    with pytest.raises(AttributeError):
        c.table = "other"
    assert len({c, orders_contract()}) == 1
    assert {Check("a", True): 1}[Check("a", True)] == 1
    import pickle

    m = c.manifest("full", SUNDAY, rows=2)
    assert pickle.loads(pickle.dumps(m)) == m
    assert Manifest.from_json(m.to_json(indent=2)) == m



from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

KEYS = ["version", "kind", "table", "key", "shapes", "window", "low", "high", "$date",
        "$datetime", "$seconds", "regions", "contract", "manifest", "rows", "x"]
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
              st.text(max_size=8), st.just(4), st.just("Contract")),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(KEYS), children, max_size=6)),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_is_read_or_refused_with_serialization_error(value):
    import json

    import dogana_rs

    for kind in (dogana_rs.Contract, dogana_rs.Manifest, dogana_rs.Ledger, dogana_rs.Receipt,
                 dogana_rs.Claims, dogana_rs.Region, dogana_rs.Shape):
        try:
            kind.from_dict(value)
        except SerializationError:
            pass
        try:
            text = json.dumps(value)
        except ValueError:
            continue
        try:
            kind.from_json(text)
        except SerializationError:
            pass


@settings(max_examples=200, deadline=None)
@given(st.one_of(json_values, st.dates(), st.datetimes(), st.timedeltas(), st.sets(st.integers(), max_size=2)))
def test_any_argument_raises_a_protocol_error_or_a_type_error(arg):
    c = orders_contract()
    calls = [
        lambda: c.manifest("last3", SUNDAY, window=(arg, arg), rows=1),
        lambda: c.manifest("changes", SUNDAY, since=arg, rows=1),
        lambda: c.manifest("full", arg, rows=1),
        lambda: c.manifest("full", SUNDAY, rows=arg),
        lambda: Shape.window(size=arg),
        lambda: Ledger(c).claims(SUNDAY, limit=arg),
        lambda: Ledger(c).claims(SUNDAY, limit=timedelta.max, window=arg),
        lambda: Contract("t", key=arg, shapes={"full": Shape.full()}),
        lambda: Region(arg, arg),
        lambda: Requirement("orders", arg),
    ]
    for call in calls:
        try:
            call()
        except (InvalidContract, TypeError):
            pass

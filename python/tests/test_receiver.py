"""The receiver from Python: deliver, replay, refuse, verify, receipts, claims and snapshots on
every backend the command line opens (SQLite, DuckDB, Postgres, the lake store), with the same
outcomes; and check_rows."""

import hashlib
import threading
from datetime import timedelta

import pytest

from dogana_rs import (
    Contract,
    Gate,
    Ledger,
    ReceiverError,
    Shape,
    Store,
    check_rows,
)

from conftest import BACKENDS, MONDAY, SUNDAY, TUESDAY, store_spec


def contract():
    return Contract(
        "orders",
        key=("id",),
        shapes={"full": Shape.full(cost=10), "changes": Shape.changes(deletions="tombstone")},
        cursor_column="updated_at",
        deleted_column="deleted",
        types={"id": "int", "updated_at": "datetime", "deleted": "bool"},
    )


SUNDAY_CSV = (
    "id,updated_at,amount,deleted\n"
    "1,2026-10-24T10:00:00Z,10,false\n"
    "2,2026-10-24T11:00:00Z,20,false\n"
    "3,2026-10-24T12:00:00Z,30,false\n"
)
MONDAY_CSV = (
    "id,updated_at,amount,deleted\n"
    "2,2026-10-25T09:00:00Z,25,false\n"
    "3,,,true\n"
    "4,2026-10-25T10:00:00Z,40,false\n"
)


@pytest.fixture(params=BACKENDS)
def store_path(request, tmp_path):
    return store_spec(request.param, tmp_path)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path, hashlib.sha256(text.encode()).hexdigest()


def test_deliver_replay_refuse_verify(tmp_path, store_path):
    c = contract()
    store = Store(store_path)
    sunday, sunday_hash = write(tmp_path, "sunday.csv", SUNDAY_CSV)
    full = c.manifest("full", SUNDAY, rows=3, content_hash=sunday_hash)

    first = store.deliver(sunday, c, full, now=SUNDAY, source="nightly")
    assert first.accepted and not first.replayed
    assert first.report.passed and first.report.live == 3
    assert first.receipt.source == "nightly"

    again = store.deliver(sunday, c, full, now=MONDAY)
    assert again.replayed and again.receipt.identity == first.receipt.identity
    assert again.report is None

    monday, monday_hash = write(tmp_path, "monday.csv", MONDAY_CSV)
    changes = c.manifest("changes", MONDAY, since=SUNDAY, rows=2, tombstones=1, content_hash=monday_hash)
    second = store.deliver(monday, c, changes, now=MONDAY)
    assert second.accepted, [str(ch) for ch in second.receipt.failures]

    # a file that contradicts its manifest is refused, with the failed row check named
    lying = c.manifest("changes", TUESDAY, since=MONDAY, rows=5, tombstones=1, content_hash=monday_hash)
    refused = store.deliver(monday, c, lying, now=TUESDAY)
    assert refused.receipt.outcome == "rejected"
    assert "rows" in [ch.name for ch in refused.receipt.failures]

    receipts = store.receipts("orders")
    assert [r.outcome for r in receipts] == ["accepted", "accepted", "rejected"]
    assert Ledger.from_receipts(c, receipts) == store.ledger("orders")
    assert store.verify("orders").ok

    snapshot = store.read_consistent_rows("orders")
    assert snapshot.ledger == store.ledger("orders")
    assert "id" in snapshot.columns
    ids = sorted(row[snapshot.columns.index("id")] for row in snapshot.rows)
    assert ids == [1, 2, 4]

    claims = store.claims("orders", TUESDAY, limit=timedelta.max)
    assert claims.exact_as_of == MONDAY
    assert store.claims("nothing", TUESDAY, limit=timedelta.max) is None
    assert store.tables() == ["orders"]


def test_a_repeated_manifest_over_other_bytes_is_refused(tmp_path, store_path):
    c = contract()
    store = Store.open(store_path)
    sunday, sunday_hash = write(tmp_path, "sunday.csv", SUNDAY_CSV)
    full = c.manifest("full", SUNDAY, rows=3, content_hash=sunday_hash)
    assert store.deliver(sunday, c, full, now=SUNDAY).accepted
    other, _ = write(tmp_path, "other.csv", SUNDAY_CSV.replace("30", "31"))
    refused = store.deliver(other, c, full, now=SUNDAY)
    assert not refused.accepted


def test_a_receiver_failure_is_a_receiver_error(tmp_path, store_path):
    c = contract()
    store = Store(store_path)
    m = c.manifest("full", SUNDAY, rows=3)
    with pytest.raises(ReceiverError):
        store.deliver(tmp_path / "missing.csv", c, m, now=SUNDAY)
    with pytest.raises(ReceiverError):
        store.deliver(tmp_path / "orders.xlsx", c, m, now=SUNDAY)


def test_every_backend_keeps_the_same_record(tmp_path):
    """The same deliveries to a SQLite, a DuckDB, a Postgres, a lake and a Delta store give
    equal receipts, ledgers, claims and published rows."""
    c = contract()
    sunday, sunday_hash = write(tmp_path, "sunday.csv", SUNDAY_CSV)
    monday, monday_hash = write(tmp_path, "monday.csv", MONDAY_CSV)
    full = c.manifest("full", SUNDAY, rows=3, content_hash=sunday_hash)
    changes = c.manifest("changes", MONDAY, since=SUNDAY, rows=2, tombstones=1, content_hash=monday_hash)
    seen = {}
    for backend in BACKENDS:
        store = Store(store_spec(backend, tmp_path))
        for file, m, now in ((sunday, full, SUNDAY), (monday, changes, MONDAY), (sunday, full, TUESDAY)):
            store.deliver(file, c, m, now=now)
        snapshot = store.read_consistent_rows("orders")
        rows = sorted(dict(zip(snapshot.columns, row))["id"] for row in snapshot.rows)
        seen[backend] = (
            [r.identity for r in store.receipts("orders")],
            store.ledger("orders"),
            store.claims("orders", TUESDAY, limit=timedelta(days=1)),
            rows,
        )
    assert seen["duckdb"] == seen["sqlite"]
    assert seen["postgres"] == seen["sqlite"]
    assert seen["lake"] == seen["sqlite"]
    assert seen["delta"] == seen["sqlite"]


def test_a_duckdb_store_is_named_as_on_the_command_line(tmp_path):
    c = contract()
    sunday, sunday_hash = write(tmp_path, "sunday.csv", SUNDAY_CSV)
    full = c.manifest("full", SUNDAY, rows=3, content_hash=sunday_hash)
    # the `duckdb:` prefix names DuckDB whatever the file is called
    store = Store(f"duckdb:{tmp_path / 'orders.data'}")
    assert store.deliver(sunday, c, full, now=SUNDAY).accepted
    assert Store(f"duckdb:{tmp_path / 'orders.data'}").ledger("orders") == store.ledger("orders")
    # the same file is no SQLite database
    with pytest.raises(ReceiverError):
        Store(f"sqlite:{tmp_path / 'orders.data'}").ledger("orders")


def test_a_store_url_is_shown_without_its_password():
    url = store_spec("postgres", None, "shown")
    store = Store(url)
    password = url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    assert password and password not in store.path and password not in repr(store)
    assert store.path == url.replace(password, "***")


def test_a_lake_store_is_reopened_from_its_root(tmp_path):
    c = contract()
    sunday, sunday_hash = write(tmp_path, "sunday.csv", SUNDAY_CSV)
    full = c.manifest("full", SUNDAY, rows=3, content_hash=sunday_hash)
    root = store_spec("lake", tmp_path)
    assert Store(root).deliver(sunday, c, full, now=SUNDAY).accepted
    again = Store(root)
    assert again.tables() == ["orders"]
    assert again.ledger("orders").claims(SUNDAY, limit=timedelta.max).exact_as_of == SUNDAY
    assert again.verify("orders").ok


def test_check_rows_returns_the_checks_for_the_gate(tmp_path):
    c = contract()
    path, digest = write(tmp_path, "sunday.csv", SUNDAY_CSV.replace("3,2026", "2,2026"))
    m = c.manifest("full", SUNDAY, rows=3, content_hash=digest)
    report = check_rows(path, c, m)
    assert report.content_sha256 == digest and report.records == 3
    assert not report.passed
    keys = report.check("keys")
    assert not keys.passed and "id=2" in keys.detail
    receipt = Gate.evaluate(Ledger(c), m, report, now=SUNDAY)
    assert receipt.outcome == "rejected"
    assert [ch.name for ch in receipt.failures] == ["keys"]
    assert list(report) == list(report.checks) and len(report) == len(report.checks)


def test_check_rows_releases_the_gil(tmp_path):
    c = contract()
    lines = ["id,updated_at,amount,deleted"]
    lines += [f"{i},2026-10-24T10:00:00Z,{i},false" for i in range(400_000)]
    text = "\n".join(lines) + "\n"
    path, _ = write(tmp_path, "big.csv", text)
    m = c.manifest("full", SUNDAY, rows=400_000)
    done = threading.Event()
    result = []

    def run():
        result.append(check_rows(path, c, m, hash_in_thread=False))
        done.set()

    ticks = 0
    t = threading.Thread(target=run)
    t.start()
    while not done.is_set():
        ticks += 1
    t.join()
    assert result[0].passed
    # while the check ran in the other thread, this one kept running Python
    assert ticks > 1000


def test_the_wheel_carries_libduckdb_and_the_extension_loads_that_copy(tmp_path):
    """The installed package holds DuckDB's library beside the extension, and the extension
    uses that copy (its $ORIGIN rpath), not one in the checkout (docs/decisions.md)."""
    import os

    import dogana_rs

    here = os.path.dirname(os.path.realpath(dogana_rs.__file__))
    bundled = os.path.join(here, "libs", "libduckdb.so")
    assert os.path.isfile(bundled)
    Store(tmp_path / "opened.duckdb").tables()  # the library is loaded by now
    with open("/proc/self/maps") as maps:
        loaded = {line.split()[-1] for line in maps if line.rstrip().endswith("libduckdb.so")}
    assert {os.path.realpath(p) for p in loaded} == {bundled}


def test_the_typed_example_runs():
    """python/tests/typed_example.py, which mypy --strict checks against the stubs, also runs."""
    import typed_example

    assert typed_example.main() == 0


def _tree(root):
    """Every path under root with its bytes (directories as None)."""
    import os

    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs:
            out[os.path.relpath(os.path.join(d, n), root)] = None
        for n in files:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


@pytest.mark.parametrize("backend", ["sqlite", "duckdb", "lake"])
def test_a_read_only_store_answers_readers_and_changes_nothing(tmp_path, backend):
    # rule: RECV-11, RECV-12 (issue 37: readers never need write access)
    c = contract()
    spec = store_spec(backend, tmp_path)
    sunday, sunday_hash = write(tmp_path, "sunday.csv", SUNDAY_CSV)
    full = c.manifest("full", SUNDAY, rows=3, content_hash=sunday_hash)
    assert Store(spec).deliver(sunday, c, full, now=SUNDAY).accepted
    before = _tree(tmp_path)
    reader = Store(spec, read_only=True)
    assert reader.tables() == ["orders"]
    assert len(reader.receipts("orders")) == 1
    assert reader.verify("orders").ok
    assert reader.claims("orders", MONDAY, limit=timedelta(days=1)) is not None
    # a reader cannot deliver, and says so with a stable code
    with pytest.raises(ReceiverError) as e:
        reader.deliver(sunday, c, c.manifest("full", MONDAY, rows=3, content_hash=sunday_hash), now=MONDAY)
    assert e.value.code is not None and e.value.code.startswith("DGN-")
    assert e.value.transient is False
    del reader
    after = _tree(tmp_path)
    # SQLite's readers of a WAL database in a writable directory share its index in a -shm
    # file (and open an empty -wal): that is SQLite's, not a change; every byte of the store
    # is as it was (the read-only directory case, where nothing can appear, is the command
    # line's tests/readonly.rs)
    for name in [n for n in after if n not in before]:
        assert name.endswith("-shm") or (name.endswith("-wal") and after[name] == b""), name
        del after[name]
    assert after == before


def test_a_missing_store_opened_read_only_is_refused_with_its_code(tmp_path):
    with pytest.raises(ReceiverError) as e:
        Store(str(tmp_path / "none.db"), read_only=True)
    assert e.value.code == "DGN-302"
    assert e.value.transient is False
    assert not (tmp_path / "none.db").exists()

"""push and pull from Python: a local lake store, a bucket (a directory here), a lazy pull
that reads what the node delivered (docs/store-decisions.md, part 2)."""

import hashlib

import pytest

from dogana_rs import Contract, ReceiverError, Shape, Store, pull, push

from conftest import SUNDAY


def contract():
    return Contract(
        "orders",
        key=("id",),
        shapes={"full": Shape.full(cost=10)},
        types={"id": "int"},
    )


def test_push_then_a_lazy_pull_reads_the_same_receipts(tmp_path):
    c = contract()
    text = "id,amount\n1,10\n2,20\n"
    (tmp_path / "a.csv").write_text(text)
    m = c.manifest("full", SUNDAY, rows=2, content_hash=hashlib.sha256(text.encode()).hexdigest())
    local, bucket, cold = tmp_path / "lake", tmp_path / "bucket", tmp_path / "cold"
    assert Store(f"file://{local}").deliver(tmp_path / "a.csv", c, m, now=SUNDAY).accepted

    pushed = push(local, f"file://{bucket}")
    assert pushed["advanced"] == ["orders"]
    assert pushed["generation"] == 1
    assert pushed["warnings"] == []

    pulled = pull(cold, f"file://{bucket}", lazy=True)
    assert pulled["skipped_parts"] == 1
    assert not (cold / "tables" / "orders" / "parts").exists()
    here, there = Store(f"file://{cold}"), Store(f"file://{local}")
    assert [r.identity for r in here.receipts("orders")] == [r.identity for r in there.receipts("orders")]
    assert here.verify("orders").ok


def test_a_bucket_of_another_store_is_a_receiver_error_with_its_code(tmp_path):
    c = contract()
    text = "id,amount\n1,10\n"
    (tmp_path / "a.csv").write_text(text)
    m = c.manifest("full", SUNDAY, rows=1, content_hash=hashlib.sha256(text.encode()).hexdigest())
    for name in ("one", "two"):
        assert Store(f"file://{tmp_path / name}").deliver(tmp_path / "a.csv", c, m, now=SUNDAY).accepted
    push(tmp_path / "one", f"file://{tmp_path / 'bucket'}")
    with pytest.raises(ReceiverError) as e:
        push(tmp_path / "two", f"file://{tmp_path / 'bucket'}")
    assert e.value.code == "DGN-608"
    assert "SyncStoreMismatch" in str(e.value)

"""Shared fixtures: the concepts' orders contract, instants, and the `dogana` binary."""

import os
import shutil
from datetime import date, datetime, timedelta, timezone

import pytest

from dogana_rs import Contract, Shape

UTC = timezone.utc
SUNDAY = datetime(2026, 10, 25, tzinfo=UTC)
MONDAY = datetime(2026, 10, 26, tzinfo=UTC)
TUESDAY = datetime(2026, 10, 27, tzinfo=UTC)
WEDNESDAY = datetime(2026, 10, 28, tzinfo=UTC)
OCT = lambda day: date(2026, 10, day)  # noqa: E731


def orders_contract() -> Contract:
    """The contract of the concepts page, exactly as it is written there."""
    return Contract(
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


@pytest.fixture
def orders() -> Contract:
    return orders_contract()


def dogana_binary():
    """The `dogana` command line built from the workspace: $DOGANA_BIN, else the target dir."""
    explicit = os.environ.get("DOGANA_BIN")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    targets = [os.environ.get("CARGO_TARGET_DIR"), os.path.join(here, "..", "..", "target")]
    for target in filter(None, targets):
        for profile in ("debug", "release"):
            path = os.path.join(target, profile, "dogana")
            if os.access(path, os.X_OK):
                return path
    return shutil.which("dogana")


@pytest.fixture(scope="session")
def dogana_bin():
    path = dogana_binary()
    if path is None:
        pytest.fail("no dogana binary: build it (cargo build -p dogana-cli) or set DOGANA_BIN")
    return path

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


#: The backends every receiver test runs on; each store is named as the command line's
#: `--store` names it.
BACKENDS = ("delta", "duckdb", "lake", "postgres", "sqlite")


def postgres_schema(name: str) -> str:
    """A new, empty schema on the test server ($DOGANA_PG_URL, started by
    scripts/test-python.sh), and the store URL naming it."""
    url = os.environ.get("DOGANA_PG_URL")
    if not url:
        pytest.fail(
            "DOGANA_PG_URL is not set: the Postgres cases need a server; run the tests with "
            "bash scripts/test-python.sh, which starts one (scripts/postgres.sh)"
        )
    psql = os.path.join(os.environ.get("DOGANA_PG_BIN", ""), "psql")
    if not os.access(psql, os.X_OK):
        psql = shutil.which("psql")
    if psql is None:
        pytest.fail("no psql: set DOGANA_PG_BIN to the server's bin folder (scripts/postgres.sh env)")
    import subprocess

    subprocess.run(
        [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c",
         f"DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"],
        check=True,
        capture_output=True,
    )
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}schema={name}"


def store_spec(backend: str, tmp_path, name: str = "orders") -> str:
    """The store of `backend` for one test: a file in `tmp_path`, a lake root or a folder of
    Delta tables under it, or a schema of its own on the Postgres test server."""
    if backend == "sqlite":
        return str(tmp_path / f"{name}.db")
    if backend == "duckdb":
        return str(tmp_path / f"{name}.duckdb")
    if backend == "lake":
        return f"file://{tmp_path / name}"
    if backend == "delta":
        return f"delta+file://{tmp_path / name}-delta"
    if backend == "postgres":
        import uuid

        return postgres_schema(f"py_{name}_{uuid.uuid4().hex[:12]}")
    raise ValueError(backend)

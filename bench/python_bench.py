#!/usr/bin/env python3
"""The Python benchmarks of bench/python.md, each in alternating rounds with its ratio.

windows: 4,000 disjoint daily window deliveries (build the manifest, apply it) from Python,
    through the binding (`dogana_rs`, one interpreter) and through the pure-Python `dogana`
    0.1.0 from PyPI (wire version 1; another interpreter, its own venv). Each round runs one
    fresh process per side, binding first; the ratio is reference time / binding time.

        python3 bench/python_bench.py windows BINDING_PYTHON REFERENCE_PYTHON [N] [ROUNDS]

rows: `check_rows` from Python on the orders CSV of bench/rows.md (every row check and the
    content hash) against DuckDB's Python package computing count(*), count(distinct id) and
    the minima and maxima of order_date and updated_at over the same file; both in one
    process, alternating, each the best of three runs after a first; ratio binding / DuckDB.

        python3 bench/python_bench.py rows PYTHON FILE [ROUNDS]
"""

import json
import statistics
import subprocess
import sys
import time

WINDOWS_RS = r"""
import json, sys, time
from datetime import date, datetime, timedelta, timezone
from dogana_rs import Contract, Ledger, Shape
n = int(sys.argv[1])
c = Contract("orders", key=("id",), shapes={"day": Shape.window()}, window_column="order_date",
             types={"id": "int", "order_date": "date"})
ledger = Ledger(c)
start, at = date(2000, 1, 1), datetime(2026, 1, 1, tzinfo=timezone.utc)
t0 = time.perf_counter()
for i in range(n):
    d = start + timedelta(days=i)
    ledger = ledger.apply(c.manifest("day", at + timedelta(seconds=i), window=(d, d), rows=10))
secs = time.perf_counter() - t0
print(json.dumps({"secs": secs, "regions": len(ledger.regions)}))
"""

# dogana 0.1.0 (wire version 1): Contract takes key and shapes positionally; the rest matches.
WINDOWS_REF = WINDOWS_RS.replace("from dogana_rs import", "from dogana import").replace(
    'Contract("orders", key=("id",), shapes=', 'Contract("orders", ("id",), ')


def worker(python, code, n):
    out = subprocess.run([python, "-c", code, str(n)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def windows(binding, reference, n=4000, rounds=2):
    ratios = []
    for k in range(1, rounds + 1):
        rs = worker(binding, WINDOWS_RS, n)
        ref = worker(reference, WINDOWS_REF, n)
        assert rs["regions"] == ref["regions"] == n + 2, (rs, ref)
        ratios.append(ref["secs"] / rs["secs"])
        print(f"round {k}: binding {rs['secs']:.4f} s, dogana 0.1.0 {ref['secs']:.2f} s, "
              f"ratio {ratios[-1]:.0f}x ({n} deliveries, {n + 2} regions)", flush=True)
    print(f"median ratio {statistics.median(ratios):.0f}x, worst {min(ratios):.0f}x")


ROWS = r"""
import hashlib, json, sys, time
from datetime import datetime, timezone
import duckdb
from dogana_rs import Contract, Shape, check_rows
path, rounds = sys.argv[1], int(sys.argv[2])
UTC = timezone.utc
c = Contract("orders", key=("id",),
             shapes={"full": Shape.full(), "last30": Shape.window(),
                     "changes": Shape.changes(deletions="tombstone")},
             window_column="order_date", cursor_column="updated_at", deleted_column="deleted",
             types={"id": "int", "order_date": "date", "updated_at": "datetime", "deleted": "bool"})
# what the export declares, as bench/rows.md's orders_bench computes it
sha, lines = hashlib.sha256(), 0
with open(path, "rb") as f:
    while block := f.read(1 << 20):
        sha.update(block)
        lines += block.count(b"\n")
n = lines - 1
tombs = (n + 1) // 100
m = c.manifest("changes", datetime(2030, 1, 1, tzinfo=UTC), since=datetime(2020, 1, 1, tzinfo=UTC),
               rows=n - tombs, tombstones=tombs, content_hash=sha.hexdigest())
types = {"amount": "float", "customer": "str"}
QUERY = f"select count(*), count(distinct id), min(order_date), max(order_date), min(updated_at), max(updated_at) from read_csv('{path}')"
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")

def ours():
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        report = check_rows(path, c, m, column_types=types)
        best = min(best, time.perf_counter() - t0)
        assert report.passed, [str(x) for x in report.failures]
    return best

def duck():
    con.execute(QUERY).fetchone()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        con.execute(QUERY).fetchone()
        best = min(best, time.perf_counter() - t0)
    return best

ratios = []
for k in range(1, rounds + 1):
    a = ours()
    b = duck()
    ratios.append(a / b)
    print(f"round {k}: check_rows from Python {a:.3f} s, DuckDB {b:.3f} s, ratio {a / b:.2f}", flush=True)
ratios.sort()
print(f"median ratio {ratios[len(ratios) // 2]:.2f}, worst {ratios[-1]:.2f} ({n} rows, duckdb {duckdb.__version__})")
"""


def rows(python, path, rounds=5):
    subprocess.run([python, "-c", ROWS, path, str(rounds)], check=True)


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "windows":
        args = sys.argv[2:]
        windows(args[0], args[1], *(int(a) for a in args[2:4]))
    elif what == "rows":
        rows(sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

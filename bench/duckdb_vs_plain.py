#!/usr/bin/env python3
"""The DuckDB receiver benchmark of bench/duckdb.md, in alternating rounds.

(a) full: `dogana deliver FULL --store new.duckdb` (a new store; every check, the content hash,
    staging, publication, ledger and receipt) against DuckDB alone loading the same file into a
    new database: CREATE TABLE with the published column types, INSERT INTO ... SELECT ... FROM
    read_csv(...).
(b) changes: `dogana deliver CHANGES` (1,000,000 upserted rows and 10,000 tombstones) into a
    copy of the 10M-row store, against the same work written by hand in DuckDB SQL on another
    copy of the same store: the changes staged with read_csv, DELETE ... USING, INSERT.

Every run is its own process under /usr/bin/time -v (wall clock and peak RSS); the rounds
alternate ours and the reference, (a) then (b), so both see the same state of the machine.
The copies and the manifests (the sender's work) are made outside the timed runs.

    cargo build --release -p dogana-cli --features duckdb
    cargo build --release -p dogana-sqlite --example sqlite_bench
    $CARGO_TARGET_DIR/release/examples/sqlite_bench gen 10000000 /work/bench-dbt/orders-full.csv
    LD_LIBRARY_PATH=$PWD/.deps/libduckdb VENV/bin/python bench/duckdb_vs_plain.py \\
        $CARGO_TARGET_DIR/release/dogana /work/bench-dbt/orders-full.csv /work/bench-dbt 5

VENV is a virtual environment with duckdb==1.5.6 (dbt/requirements.txt has it), the engine
the store links. Prints one line per run, the medians and the ratios, and writes results.json
into the work directory.
"""

import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

CONTRACT = """table = "orders"
key = ["id"]
window_column = "order_date"
cursor_column = "updated_at"
deleted_column = "deleted"
columns = [
  ["id", "int"],
  ["order_date", "date"],
  ["updated_at", "datetime"],
  ["amount", "float"],
  ["customer", "str"],
]

[types]
id = "int"
order_date = "date"
updated_at = "datetime"
deleted = "bool"

[shapes.full]
kind = "full"

[shapes.last30]
kind = "window"

[shapes.changes]
kind = "changes"
deletions = "tombstone"
"""

FULL_AT = "2026-10-26T06:00:00Z"
CHANGES_AT = "2026-10-27T06:00:00Z"

# The published table's columns and types, as the DuckDB backend creates them
# (crates/dogana-duckdb: int BIGINT, date DATE, datetime TIMESTAMPTZ, float DOUBLE, str VARCHAR;
# key columns NOT NULL; no PRIMARY KEY).
CREATE = """CREATE TABLE orders (id BIGINT NOT NULL, order_date DATE, updated_at TIMESTAMPTZ,
    amount DOUBLE, customer VARCHAR)"""
READ = """read_csv('@PATH@', header = true, columns = {'id': 'BIGINT', 'order_date': 'DATE',
    'updated_at': 'TIMESTAMPTZ', 'amount': 'DOUBLE', 'customer': 'VARCHAR', 'deleted': 'BOOLEAN'})"""

# The reference programs, one process each; @CREATE@ and @READ@ are filled in below.
REF_FULL = """
import sys, time, duckdb
t0 = time.perf_counter()
con = duckdb.connect(sys.argv[2])
con.execute("SET TimeZone = 'UTC'")
con.execute("BEGIN TRANSACTION")
con.execute(\"\"\"@CREATE@\"\"\")
con.execute(\"\"\"INSERT INTO orders SELECT id, order_date, updated_at, amount, customer
               FROM @READ@\"\"\".replace("@PATH@", sys.argv[1]))
con.execute("COMMIT")
con.close()
print(f"in process {time.perf_counter() - t0:.3f} s")
""".replace("@CREATE@", CREATE).replace("@READ@", READ)

REF_CHANGES = """
import sys, time, duckdb
t0 = time.perf_counter()
con = duckdb.connect(sys.argv[2])
con.execute("SET TimeZone = 'UTC'")
con.execute("BEGIN TRANSACTION")
con.execute(\"\"\"CREATE TEMP TABLE stage AS SELECT * FROM @READ@\"\"\".replace("@PATH@", sys.argv[1]))
con.execute("DELETE FROM orders USING stage s WHERE orders.id = s.id")
con.execute(\"\"\"INSERT INTO orders SELECT id, order_date, updated_at, amount, customer
               FROM stage WHERE NOT deleted\"\"\")
con.execute("COMMIT")
con.close()
print(f"in process {time.perf_counter() - t0:.3f} s")
""".replace("@READ@", READ)


def row(i, n):
    """dogana-rows' orders_bench row i of n (crates/dogana-sqlite/examples/sqlite_bench.rs)."""
    bits = n.bit_length()
    mask = (1 << bits) - 1
    x = i
    while True:
        x = (x * 0x9E3779B97F4A7C15) & mask
        x ^= x >> 7
        x = (x * 0xBF58476D1CE4E5B9) & mask
        if x < n:
            break
    h = (i * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF
    return x + 1, i % 1000, h % 86_400, h % 1_000_000, h % 100_000


def write_changes(path, n, upserts, tombstones):
    """Changes read at CHANGES_AT since FULL_AT: `upserts` live rows (nine in ten updates of
    existing orders, keeping their order_date; one in ten new orders) and `tombstones` deleted
    existing orders, none of them also updated. Every updated_at inside the cursor interval."""
    epoch = datetime.date(2024, 1, 1)
    since = datetime.datetime(2026, 10, 26, 6, 0, 0)
    updates = upserts * 9 // 10
    step = n // updates
    with open(path, "w") as f:
        f.write("id,order_date,updated_at,amount,customer,deleted\n")
        k = 0
        for j in range(updates):
            i = j * step
            oid, day, secs, cents, customer = row(i, n)
            d = epoch + datetime.timedelta(days=day)
            u = since + datetime.timedelta(seconds=1 + k % 86_399)
            k += 1
            f.write(f"{oid},{d},{u:%Y-%m-%dT%H:%M:%S}Z,{cents // 100 + 1}.{cents % 100:02},customer_{customer},false\n")
        for j in range(upserts - updates):
            d = datetime.date(2026, 10, 26)
            u = since + datetime.timedelta(seconds=1 + k % 86_399)
            k += 1
            f.write(f"{n + 1 + j},{d},{u:%Y-%m-%dT%H:%M:%S}Z,{j % 997}.50,customer_{j % 100_000},false\n")
        tstep = n // tombstones
        for j in range(tombstones):
            i = j * tstep + step // 2
            if i % step == 0 or i >= updates * step:
                i += 1  # never a multiple of step below updates * step: not an updated order
            oid, day, _, _, _ = row(i, n)
            d = epoch + datetime.timedelta(days=day)
            u = since + datetime.timedelta(seconds=1 + k % 86_399)
            k += 1
            f.write(f"{oid},{d},{u:%Y-%m-%dT%H:%M:%S}Z,,,true\n")


def timed(args, **kw):
    """Runs ARGS under /usr/bin/time -v: (wall s, peak RSS MiB, user s, sys s, stdout)."""
    out = subprocess.run(["/usr/bin/time", "-v", *args], capture_output=True, text=True, **kw)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{out.stdout}\n{out.stderr}")
    err = out.stderr

    def field(name):
        return re.search(re.escape(name) + r": (.+)", err).group(1).strip()

    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    rss = int(field("Maximum resident set size (kbytes)")) / 1024
    return wall, rss, float(field("User time (seconds)")), float(field("System time (seconds)")), out.stdout


def remove(db):
    for p in (db, db + ".wal"):
        if os.path.exists(p):
            os.remove(p)


def count_rows(path):
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")) - 1


def main():
    dogana, full, work = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    os.makedirs(work, exist_ok=True)
    contract = os.path.join(work, "orders.toml")
    with open(contract, "w") as f:
        f.write(CONTRACT)
    ref_full = os.path.join(work, "ref_full.py")
    ref_changes = os.path.join(work, "ref_changes.py")
    with open(ref_full, "w") as f:
        f.write(REF_FULL)
    with open(ref_changes, "w") as f:
        f.write(REF_CHANGES)

    n = count_rows(full)
    print(f"full file {full}: {n} rows, {os.path.getsize(full)} bytes", flush=True)
    changes = os.path.join(work, "orders-changes.csv")
    # 1,000,000 upserts and 10,000 tombstones for the 10M-row file (a tenth and a thousandth)
    upserts, tombstones = min(1_000_000, n // 10), min(10_000, n // 1000)
    if not os.path.exists(changes) or not os.path.exists(changes + ".json"):
        write_changes(changes, n, upserts, tombstones)
        subprocess.run([dogana, "manifest", changes, "--contract", contract, "--shape", "changes",
                        "--produced-at", CHANGES_AT, "--since", FULL_AT, "--rows", str(upserts),
                        "--tombstones", str(tombstones), "--force"], check=True, capture_output=True)
    print(f"changes file {changes}: {upserts} upserts, {tombstones} tombstones", flush=True)
    if not os.path.exists(full + ".json"):
        subprocess.run([dogana, "manifest", full, "--contract", contract, "--shape", "full",
                        "--produced-at", FULL_AT, "--rows", str(n), "--force"], check=True,
                       capture_output=True)

    python = sys.executable
    ours_full = os.path.join(work, "new.duckdb")
    plain = os.path.join(work, "plain.duckdb")
    base = os.path.join(work, "base.duckdb")
    copy = os.path.join(work, "round.duckdb")
    deliver = [dogana, "deliver"]
    at_full = ["--contract", contract, "--at", "2026-10-26T06:05:00Z", "--source", "bench"]
    at_changes = ["--contract", contract, "--at", "2026-10-27T06:05:00Z", "--source", "bench"]

    # the 10M-row store every changes round starts from (untimed)
    remove(base)
    subprocess.run(deliver + [full, "--store", base] + at_full, check=True, capture_output=True)

    res = {"full": {"ours": [], "ref": []}, "changes": {"ours": [], "ref": []}}

    def show(kind, side, k, r):
        wall, rss, user, sys_, out = r
        extra = out.strip().splitlines()[-1] if side == "ref" and out.strip() else ""
        print(f"round {k} {kind:7} {side:4}: {wall:7.2f} s wall, user {user:6.2f} s, sys {sys_:5.2f} s, "
              f"peak RSS {rss:7.0f} MiB {extra}", flush=True)
        res[kind][side].append({"wall": wall, "rss_mib": rss, "user": user, "sys": sys_})

    for k in range(1, rounds + 1):
        remove(ours_full)
        show("full", "ours", k, timed(deliver + [full, "--store", ours_full] + at_full))
        remove(plain)
        show("full", "ref", k, timed([python, ref_full, full, plain]))
        remove(copy)
        shutil.copyfile(base, copy)
        show("changes", "ours", k, timed(deliver + [changes, "--store", copy] + at_changes))
        remove(copy)
        shutil.copyfile(base, copy)
        show("changes", "ref", k, timed([python, ref_changes, changes, copy]))

    # the two sides leave the same rows (checked on the last round's files)
    import duckdb
    # sum(amount) as a decimal: a binary64 sum depends on the order of its terms
    q = "SELECT count(*), sum(id), sum(amount::DECIMAL(18, 2)), count(DISTINCT customer), min(updated_at), max(updated_at) FROM orders"
    remove(copy)
    shutil.copyfile(base, copy)
    subprocess.run(deliver + [changes, "--store", copy] + at_changes, check=True, capture_output=True)
    a = duckdb.connect(copy, read_only=True).execute(q).fetchone()
    check_copy = copy + ".ref"
    remove(check_copy)
    shutil.copyfile(base, check_copy)
    subprocess.run([python, ref_changes, changes, check_copy], check=True, capture_output=True)
    b = duckdb.connect(check_copy, read_only=True).execute(q).fetchone()
    c = duckdb.connect(ours_full, read_only=True).execute(q).fetchone()
    d = duckdb.connect(plain, read_only=True).execute(q).fetchone()
    print(f"full: ours {c}, reference {d}; changes: ours {a}, reference {b}")
    if a != b or c != d:
        sys.exit("the two sides' tables differ")

    for kind in ("full", "changes"):
        ours = statistics.median(r["wall"] for r in res[kind]["ours"])
        ref = statistics.median(r["wall"] for r in res[kind]["ref"])
        ratios = [o["wall"] / r["wall"] for o, r in zip(res[kind]["ours"], res[kind]["ref"])]
        rss_o = max(r["rss_mib"] for r in res[kind]["ours"])
        rss_r = max(r["rss_mib"] for r in res[kind]["ref"])
        res[kind]["median"] = {"ours": ours, "ref": ref, "ratio": ours / ref}
        print(f"{kind}: median ours {ours:.2f} s, reference {ref:.2f} s, ratio {ours / ref:.2f} "
              f"(per round {', '.join(f'{x:.2f}' for x in ratios)}); peak RSS ours {rss_o:.0f} MiB, "
              f"reference {rss_r:.0f} MiB")
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()

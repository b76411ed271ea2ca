#!/usr/bin/env python3
"""The lake store benchmarks of bench/lake.md, in alternating rounds.

(a) full: `dogana deliver FULL --store file://WORK/new` (a new lake store: every check, the
    content hash, staging, the Parquet part, the snapshot, ledger and receipt, the pointer)
    against DuckDB alone writing the same file to Parquet:
    COPY (SELECT * FROM read_csv(...)) TO '...' (FORMAT parquet).
(b) changes: one delivery of 10,000 changed rows (9,000 updates, 900 new rows, 100 tombstones)
    into a copy of the 10M-row lake table, against the same delivery into a copy of a
    10,000-row lake table: the cost of a delivery should follow the delivery, not the table.
(c) scan (`--scan N`): N changes deliveries of 10,000 rows each into a copy of the 10M-row
    table, then a DuckDB scan of the table through the views `dogana duckdb-sql` prints,
    before and after `dogana fold`, against the same rows written once by DuckDB
    (CREATE TABLE AS over the scanned view, then COPY ... TO parquet): the fold's write
    amplification is the bytes it wrote over the bytes the deliveries wrote.

Every run is its own process under /usr/bin/time -v (wall clock and peak RSS); the rounds
alternate ours and the reference. The copies and the manifests (the sender's work) are made
outside the timed runs.

    bash scripts/build-full.sh          # the binary with the lake feature
    $T/release/examples/sqlite_bench gen 10000000 /data/orders-10m.csv
    VENV/bin/python bench/lake_bench.py $T/release/dogana /data/orders-10m.csv /data/lake-bench 3

VENV is a virtual environment with duckdb==1.5.6 (dbt/requirements.txt has it). Prints one
line per run, the medians and the ratios, and writes results.json into the work directory.
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

FULL = datetime.datetime(2026, 10, 26, 6, 0, 0)
FULL_AT = "2026-10-26T06:00:00Z"
READ = """read_csv('@PATH@', header = true, columns = {'id': 'BIGINT', 'order_date': 'DATE',
    'updated_at': 'TIMESTAMPTZ', 'amount': 'DOUBLE', 'customer': 'VARCHAR', 'deleted': 'BOOLEAN'})"""

REF_FULL = """
import sys, time, duckdb
t0 = time.perf_counter()
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute(\"\"\"COPY (SELECT * FROM @READ@) TO '@OUT@' (FORMAT parquet)\"\"\"
            .replace("@PATH@", sys.argv[1]).replace("@OUT@", sys.argv[2]))
print(f"in process {time.perf_counter() - t0:.3f} s")
""".replace("@READ@", READ)

# a full scan of a table: every column of every row read, as a dashboard query would
SCAN = "SELECT count(*), sum(id), sum(amount::DECIMAL(18, 2)), count(DISTINCT customer), min(order_date), max(updated_at) FROM orders"

SCAN_VIEW = """
import sys, time, duckdb
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute(open(sys.argv[1]).read())
t0 = time.perf_counter()
print(con.execute(\"\"\"@SCAN@\"\"\").fetchone())
print(f"in process {time.perf_counter() - t0:.3f} s")
""".replace("@SCAN@", SCAN)

SCAN_PLAIN = """
import sys, time, duckdb
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute("CREATE VIEW orders AS SELECT * FROM read_parquet('" + sys.argv[1] + "')")
t0 = time.perf_counter()
print(con.execute(\"\"\"@SCAN@\"\"\").fetchone())
print(f"in process {time.perf_counter() - t0:.3f} s")
""".replace("@SCAN@", SCAN)

WRITE_ONCE = """
import sys, duckdb
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute(open(sys.argv[1]).read())
con.execute("COPY (SELECT * FROM orders) TO '" + sys.argv[2] + "' (FORMAT parquet)")
"""


def at(day, minutes=0):
    """The instant changes number `day` is read at (day 0: the full read), plus `minutes`."""
    t = FULL + datetime.timedelta(days=day, minutes=minutes)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_changes(path, n, first_new, day):
    """10,000 changed rows of an orders table whose ids include 1..n: 9,000 updates of ids
    spread over 1..n (the same ids in either table), 900 new ids from first_new, 100
    tombstones; every updated_at inside the cursor interval of changes number `day`, which is
    read at at(day + 1) since at(day)."""
    stamp = at(day + 1, -60)
    with open(path, "w") as f:
        f.write("id,order_date,updated_at,amount,customer,deleted\n")
        step = max(1, n // 9_100)
        for j in range(9_000):
            f.write(f"{1 + (j * step + day) % n},2026-10-26,{stamp},{j % 997}.25,customer_{j},false\n")
        for j in range(900):
            f.write(f"{first_new + j},2026-10-26,{stamp},{j % 991}.75,customer_new_{j},false\n")
        for j in range(100):
            f.write(f"{1 + ((9_000 + j) * step + day) % n},2026-10-26,{stamp},,,true\n")


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


def count_rows(path):
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")) - 1


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def parts_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs
               if f.endswith(".parquet"))


class Bench:
    def __init__(self, dogana, work):
        self.dogana, self.work = dogana, work
        self.contract = os.path.join(work, "orders.toml")
        with open(self.contract, "w") as f:
            f.write(CONTRACT)
        self.res = {}

    def script(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def manifest(self, path, shape, produced, rows, tombstones=0, since=None):
        if os.path.exists(path + ".json"):
            return
        args = [self.dogana, "manifest", path, "--contract", self.contract, "--shape", shape,
                "--produced-at", produced, "--rows", str(rows), "--force"]
        if since:
            args += ["--since", since, "--tombstones", str(tombstones)]
        subprocess.run(args, check=True, capture_output=True)

    def deliver(self, path, store, now):
        return [self.dogana, "deliver", path, "--store", "file://" + store, "--contract",
                self.contract, "--at", now, "--source", "bench"]

    def show(self, kind, side, k, r):
        wall, rss, user, sys_, out = r
        extra = out.strip().splitlines()[-1] if out.strip() else ""
        print(f"round {k} {kind:8} {side:5}: {wall:7.2f} s wall, user {user:6.2f} s, sys {sys_:5.2f} s, "
              f"peak RSS {rss:7.0f} MiB {extra[:90]}", flush=True)
        self.res.setdefault(kind, {}).setdefault(side, []).append(
            {"wall": wall, "rss_mib": rss, "user": user, "sys": sys_})

    def summary(self, kind, ours="ours", ref="ref"):
        r = self.res[kind]
        o = statistics.median(x["wall"] for x in r[ours])
        f = statistics.median(x["wall"] for x in r[ref])
        ratios = [a["wall"] / b["wall"] for a, b in zip(r[ours], r[ref])]
        print(f"{kind}: median {ours} {o:.2f} s, {ref} {f:.2f} s, ratio {o / f:.2f} (per round "
              f"{', '.join(f'{x:.2f}' for x in ratios)}); peak RSS {ours} "
              f"{max(x['rss_mib'] for x in r[ours]):.0f} MiB, {ref} "
              f"{max(x['rss_mib'] for x in r[ref]):.0f} MiB", flush=True)
        r["median"] = {ours: o, ref: f, "ratio": o / f}


def main():
    args = sys.argv[1:]
    scan = 0
    if "--scan" in args:
        i = args.index("--scan")
        scan = int(args[i + 1])
        del args[i:i + 2]
    dogana, full, work = args[0], args[1], args[2]
    rounds = int(args[3]) if len(args) > 3 else 3
    os.makedirs(work, exist_ok=True)
    b = Bench(dogana, work)
    python = sys.executable
    ref_full = b.script("ref_full.py", REF_FULL)
    n = count_rows(full)
    print(f"full file {full}: {n} rows, {os.path.getsize(full)} bytes", flush=True)
    b.manifest(full, "full", FULL_AT, n)

    # (a) full delivery against DuckDB's COPY ... TO parquet
    new, plain = os.path.join(work, "new"), os.path.join(work, "plain.parquet")
    for k in range(1, rounds + 1):
        shutil.rmtree(new, ignore_errors=True)
        b.show("full", "ours", k, timed(b.deliver(full, new, at(0, 5))))
        if os.path.exists(plain):
            os.remove(plain)
        b.show("full", "ref", k, timed([python, ref_full, full, plain]))
    print(f"store {du(new)} bytes (parts {parts_bytes(new)}); DuckDB's file {os.path.getsize(plain)} bytes")
    b.summary("full")

    # (b) one 10,000-row changes delivery into the 10M-row table and into a 10,000-row table
    small = os.path.join(work, "orders-10k.csv")
    if not os.path.exists(small):
        gen = os.path.join(os.path.dirname(dogana), "examples", "sqlite_bench")
        subprocess.run([gen, "gen", "10000", small], check=True, capture_output=True)
    b.manifest(small, "full", FULL_AT, 10_000)
    base_big, base_small = os.path.join(work, "base-10m"), os.path.join(work, "base-10k")
    os.rename(new, base_big)
    shutil.rmtree(base_small, ignore_errors=True)
    subprocess.run(b.deliver(small, base_small, at(0, 5)), check=True,
                   capture_output=True)
    changes = os.path.join(work, "changes-0.csv")
    write_changes(changes, 10_000, 20_000_001, 0)
    b.manifest(changes, "changes", at(1), 9_900, 100, FULL_AT)
    big, tiny = os.path.join(work, "round-10m"), os.path.join(work, "round-10k")
    for k in range(1, rounds + 2):
        shutil.rmtree(big, ignore_errors=True)
        shutil.copytree(base_big, big)
        b.show("changes", "10m", k, timed(b.deliver(changes, big, at(1, 5))))
        shutil.rmtree(tiny, ignore_errors=True)
        shutil.copytree(base_small, tiny)
        b.show("changes", "10k", k, timed(b.deliver(changes, tiny, at(1, 5))))
    b.summary("changes", "10m", "10k")

    # (c) N changes deliveries, then DuckDB scans before and after the fold
    if scan:
        shutil.rmtree(big, ignore_errors=True)
        shutil.copytree(base_big, big)
        before = parts_bytes(big)
        since = FULL_AT
        for d in range(scan):
            c = os.path.join(work, "changes-scan.csv")
            for p in (c, c + ".json"):
                if os.path.exists(p):
                    os.remove(p)
            write_changes(c, n, 30_000_001 + 900 * d, d)
            b.manifest(c, "changes", at(d + 1), 9_900, 100, since)
            since = at(d + 1)
            subprocess.run(b.deliver(c, big, at(d + 1, 5)), check=True,
                           capture_output=True)
            if (d + 1) % 100 == 0:
                print(f"{d + 1} changes deliveries", flush=True)
        delivered = parts_bytes(big) - before
        view = os.path.join(work, "view.sql")
        scan_view, scan_plain = b.script("scan_view.py", SCAN_VIEW), b.script("scan_plain.py", SCAN_PLAIN)
        once = os.path.join(work, "once.parquet")

        def sql():
            out = subprocess.run([dogana, "duckdb-sql", "--store", "file://" + big, "orders"],
                                 check=True, capture_output=True, text=True).stdout
            with open(view, "w") as f:
                f.write(out)

        sql()
        subprocess.run([python, b.script("write_once.py", WRITE_ONCE), view, once], check=True)
        for k in range(1, rounds + 1):
            b.show("unfolded", "ours", k, timed([python, scan_view, view]))
            b.show("unfolded", "ref", k, timed([python, scan_plain, once]))
        b.summary("unfolded")
        r = timed([dogana, "fold", "--store", "file://" + big])
        print(f"fold: {r[0]:.2f} s, peak RSS {r[1]:.0f} MiB: {r[4].strip()}", flush=True)
        written = int(re.search(r"(\d+) written", r[4]).group(1))
        b.res["fold"] = {"wall": r[0], "rss_mib": r[1], "bytes_written": written,
                         "bytes_delivered": delivered, "amplification": written / delivered}
        print(f"fold write amplification: {written} bytes written / {delivered} bytes the "
              f"deliveries wrote = {written / delivered:.2f}", flush=True)
        sql()
        for k in range(1, rounds + 1):
            b.show("folded", "ours", k, timed([python, scan_view, view]))
            b.show("folded", "ref", k, timed([python, scan_plain, once]))
        b.summary("folded")
        # the folded table reads exactly the rows the unfolded one read (written once above)
        a = subprocess.run([python, scan_view, view], check=True, capture_output=True, text=True)
        o = subprocess.run([python, scan_plain, once], check=True, capture_output=True, text=True)
        print(f"folded: {a.stdout.splitlines()[0]}; written once: {o.stdout.splitlines()[0]}")
        if a.stdout.splitlines()[0] != o.stdout.splitlines()[0]:
            sys.exit("the folded table reads other rows than the unfolded one")

    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(b.res, f, indent=1)


if __name__ == "__main__":
    main()

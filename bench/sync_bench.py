#!/usr/bin/env python3
"""A cold container's lazy pull of a lake table against a full pull (issue 30; bench/lake.md,
"Sync: a cold container's lazy pull (issue 30)").

What it measures. A 10,000,000-row orders table (bench/rows.md's CSV, the contract and
manifest of bench/lake_bench.py) is delivered into a local `file://` lake store and pushed
with `dogana push` into a bucket that is a directory on this machine (`file://`). That setup
is timed for the record only. Then, in alternating rounds (the side that goes first alternates
too), each side starts from an empty directory, as a cold container would:

  (A) lazy: `dogana pull --lazy --json` (the Parquet parts stay in the bucket), then
      `dogana claims orders`, then `dogana duckdb-sql orders` (the first read: it fetches the
      head's parts whole), then a DuckDB `SELECT count(*) FROM orders` through the views it
      printed;
  (B) full (the reference): `dogana pull --json`, then the same claims, duckdb-sql and count.

Every step is its own process under /usr/bin/time -v (wall clock, peak RSS). For each run it
records the pull's `downloaded`, `downloaded_bytes` and `skipped_parts` (from --json), the
bytes on disk (`du -sb` of the directory) after the pull, after claims, after duckdb-sql and
after the count, and the wall time and peak RSS of each step. It reports the ratio lazy/full
of the pull's wall time (of the medians and per round), and the lazy pull's downloaded bytes
as a percentage of the table's bytes (the sum of the Parquet parts in the bucket): the issue's
target is at most 1% before the first read. It also checks that both sides count the same
rows and claim the same thing.

The bucket is a local directory, so a "download" is a verified copy from the page cache: the
times carry no network latency or bandwidth; the bytes are what a remote bucket would send.

    export CARGO_TARGET_DIR=...; T=$CARGO_TARGET_DIR
    cargo build --release -p dogana-cli --features lake
    cargo build --release -p dogana-sqlite --example sqlite_bench
    $T/release/examples/sqlite_bench gen 10000000 WORK/orders-10m.csv
    VENV/bin/python bench/sync_bench.py $T/release/dogana WORK/orders-10m.csv WORK/sync 3

Arguments: DOGANA (the binary, built with the `lake` feature), CSV (the orders file), WORK (a
work directory; its `local`, `bucket`, `lazy` and `full` subdirectories are replaced) and
ROUNDS (default 3). VENV is a virtual environment with duckdb==1.5.6 (dbt/requirements.txt
pins it); the count runs under the same Python as this script. Prints one line per step and
the summary, and writes WORK/results.json.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lake_bench import FULL_AT, Bench, at, count_rows, parts_bytes  # noqa: E402
from lake_bench import timed as time_v  # noqa: E402

COUNT = """
import sys, time, duckdb
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute(open(sys.argv[1]).read())
t0 = time.perf_counter()
print(con.execute("SELECT count(*) FROM orders").fetchone()[0])
print(f"in process {time.perf_counter() - t0:.3f} s")
"""

STEPS = ("pull", "claims", "sql", "count")


def timed(args):
    """lake_bench.timed (under /usr/bin/time -v), with the wall clock also taken here by
    perf_counter around the process: /usr/bin/time prints it to 10 ms, and a lazy pull of
    metadata takes about that. (wall, peak RSS MiB, user s, sys s, stdout, perf_counter wall)"""
    t0 = time.perf_counter()
    r = time_v(args)
    return (*r, time.perf_counter() - t0)


def step(r):
    wall, rss, user, sys_, _, pc = r
    return {"wall": pc, "wall_time_v": wall, "rss_mib": rss, "user": user, "sys": sys_}


def du_sb(path):
    """`du -sb PATH`: the apparent size of the files and directories under PATH."""
    out = subprocess.run(["du", "-sb", path], check=True, capture_output=True, text=True).stdout
    return int(out.split()[0])


def run(dogana, python, count, bucket, work, side):
    """One cold run of SIDE ("lazy" or "full") into an empty WORK/SIDE: the figures."""
    d = os.path.join(work, side)
    shutil.rmtree(d, ignore_errors=True)
    store = "file://" + d
    view = os.path.join(work, side + "-view.sql")
    r = {}
    pull = [dogana, "pull", "--store", store, "--from", "file://" + bucket, "--json"]
    if side == "lazy":
        pull.append("--lazy")
    t = timed(pull)
    j = json.loads(t[4])
    r["pull"] = step(t)
    r["downloaded"], r["downloaded_bytes"] = j["downloaded"], j["downloaded_bytes"]
    r["skipped_parts"] = j["skipped_parts"]
    r["disk_after_pull"] = du_sb(d)
    t = timed([dogana, "claims", "--store", store, "orders"])
    r["claims"] = step(t)
    r["claims_out"] = t[4].strip()
    r["disk_after_claims"] = du_sb(d)
    t = timed([dogana, "duckdb-sql", "--store", store, "orders"])
    r["sql"] = step(t)
    with open(view, "w") as f:
        f.write(t[4])
    r["disk_after_sql"] = du_sb(d)
    t = timed([python, count, view])
    r["count"] = step(t)
    r["rows"] = int(t[4].split()[0])
    r["disk_after_count"] = du_sb(d)
    return r


def show(k, side, r):
    print(f"round {k} {side:4}: pull {r['pull']['wall']:6.3f} s ({r['pull']['rss_mib']:5.0f} MiB), "
          f"downloaded {r['downloaded']} objects / {r['downloaded_bytes']:,} B, "
          f"skipped {r['skipped_parts']} parts; disk after pull {r['disk_after_pull']:,} B; "
          f"claims {r['claims']['wall']:.3f} s ({r['claims']['rss_mib']:.0f} MiB); "
          f"duckdb-sql {r['sql']['wall']:.3f} s ({r['sql']['rss_mib']:.0f} MiB), disk "
          f"{r['disk_after_sql']:,} B; count {r['rows']:,} in {r['count']['wall']:.2f} s "
          f"({r['count']['rss_mib']:.0f} MiB); disk after count {r['disk_after_count']:,} B",
          flush=True)


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    dogana, csv, work = os.path.abspath(args[0]), os.path.abspath(args[1]), os.path.abspath(args[2])
    rounds = int(args[3]) if len(args) > 3 else 3
    os.makedirs(work, exist_ok=True)
    python = sys.executable
    b = Bench(dogana, work)
    count = b.script("count.py", COUNT)
    res = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_start": os.getloadavg()}

    # setup, outside the comparison: deliver, push
    n = count_rows(csv)
    print(f"csv {csv}: {n} rows, {os.path.getsize(csv):,} bytes", flush=True)
    b.manifest(csv, "full", FULL_AT, n)
    local, bucket = os.path.join(work, "local"), os.path.join(work, "bucket")
    shutil.rmtree(local, ignore_errors=True)
    shutil.rmtree(bucket, ignore_errors=True)
    wall, rss, _, _, _, _ = timed(b.deliver(csv, local, at(0, 5)))
    res["deliver"] = {"wall": wall, "rss_mib": rss}
    print(f"deliver: {wall:.2f} s, peak RSS {rss:.0f} MiB", flush=True)
    wall, rss, _, _, out, _ = timed([dogana, "push", "--store", "file://" + local,
                                  "--to", "file://" + bucket, "--json"])
    res["push"] = {"wall": wall, "rss_mib": rss, "json": json.loads(out)}
    print(f"push: {wall:.2f} s, peak RSS {rss:.0f} MiB: {out.strip()}", flush=True)
    table = parts_bytes(bucket)
    nparts = sum(1 for _, _, fs in os.walk(bucket) for f in fs if f.endswith(".parquet"))
    res["table_bytes"], res["table_parts"], res["bucket_bytes"] = table, nparts, du_sb(bucket)
    print(f"bucket: {res['bucket_bytes']:,} B (du -sb); the table's Parquet parts: {nparts}, "
          f"{table:,} B", flush=True)

    # the rounds: lazy and full alternate, and so does which goes first
    runs = {"lazy": [], "full": []}
    for k in range(1, rounds + 1):
        for side in (("lazy", "full") if k % 2 else ("full", "lazy")):
            r = run(dogana, python, count, bucket, work, side)
            show(k, side, r)
            runs[side].append(r)
    res["runs"] = runs
    res["load_end"] = os.getloadavg()

    rows = {r["rows"] for s in runs.values() for r in s}
    claims = {r["claims_out"] for s in runs.values() for r in s}
    if rows != {n} or len(claims) != 1:
        sys.exit(f"the sides disagree: rows {rows}, claims {claims}")

    def med(side, key):
        return statistics.median(r[key]["wall"] if key in STEPS else r[key] for r in runs[side])

    summary = {}
    for side in runs:
        summary[side] = {key: med(side, key) for key in
                         (*STEPS, "downloaded_bytes", "disk_after_pull", "disk_after_count")}
        summary[side]["rss_mib"] = {s: max(r[s]["rss_mib"] for r in runs[side]) for s in STEPS}
        summary[side]["to_first_count"] = statistics.median(
            sum(r[s]["wall"] for s in STEPS) for r in runs[side])
    ratios = [a["pull"]["wall"] / f["pull"]["wall"] for a, f in zip(runs["lazy"], runs["full"])]
    summary["pull_ratio"] = summary["lazy"]["pull"] / summary["full"]["pull"]
    summary["pull_ratio_rounds"] = ratios
    lazy_pct = [100 * r["downloaded_bytes"] / table for r in runs["lazy"]]
    summary["lazy_download_pct"] = max(lazy_pct)
    summary["target_met"] = max(lazy_pct) <= 1.0
    res["summary"] = summary
    for side in ("lazy", "full"):
        s = summary[side]
        print(f"{side}: median pull {s['pull']:.3f} s, claims {s['claims']:.3f} s, duckdb-sql "
              f"{s['sql']:.3f} s, count {s['count']:.2f} s (to the first count "
              f"{s['to_first_count']:.2f} s); downloaded {s['downloaded_bytes']:,.0f} B; disk after "
              f"pull {s['disk_after_pull']:,.0f} B, after count {s['disk_after_count']:,.0f} B; "
              f"peak RSS (MiB) " + ", ".join(f"{k} {v:.0f}" for k, v in s['rss_mib'].items()), flush=True)
    print(f"pull time lazy/full: {summary['pull_ratio']:.3f} of the medians (per round "
          f"{', '.join(f'{x:.3f}' for x in ratios)})")
    print(f"the lazy pull downloaded {max(r['downloaded_bytes'] for r in runs['lazy']):,} B of the "
          f"table's {table:,} B: {summary['lazy_download_pct']:.5f}% (target <= 1%: "
          f"{'met' if summary['target_met'] else 'NOT met'})")
    print(f"load average (1, 5, 15 min): start {res['load_start']}, end {res['load_end']}")
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()

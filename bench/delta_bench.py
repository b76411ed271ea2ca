#!/usr/bin/env python3
"""The Delta store benchmarks of bench/delta.md, in alternating rounds.

(a) full: `dogana deliver FULL --store delta+file://WORK/new-K` (a new Delta store: every
    check, the content hash, the Parquet files of at most 2^20 rows with their statistics,
    the ledger, receipt segment and head under _dogana/, the Delta commit) against the
    deltalake package alone: a Python process that reads the same CSV into an Arrow table
    with pyarrow.csv (same column types) outside the timed part, then times
    `deltalake.write_deltalake(path, table)` in it. The ratio is dogana's process wall clock
    over write_deltalake's in-process time; the process against process ratio is printed too.
(b) changes: one delivery of 10,000 changed rows (9,000 updates, 900 new rows, 100 tombstones;
    lake_bench.py's generator) into a copy of the 10M-row Delta table of (a), against the same
    delivery into a copy of a 10,000-row Delta table: the cost of a delivery should follow the
    delivery, not the table. What each delivery added and removed is read from the newest
    _delta_log entry (and the table's folder is compared before and after).

Every run is its own process under /usr/bin/time -v (wall clock and peak RSS); the rounds
alternate ours and the reference. The copies and the manifests (the sender's work) are made
outside the timed runs. Every delivery must print `accepted`; after the runs `dogana verify`
must pass on every store, and the deltalake package must count the rows expected.

    cargo build --release -p dogana-cli --features delta
    cargo build --release -p dogana-sqlite --example sqlite_bench
    $T/release/examples/sqlite_bench gen 10000000 /tmp/orders-10m.csv
    VENV/bin/python bench/delta_bench.py $T/release/dogana /tmp/orders-10m.csv /tmp/delta-bench 3

VENV is a virtual environment with deltalake and pyarrow (`pip install deltalake pyarrow`).
Prints one line per run, the medians and the ratios, and writes results.json into the work
directory.
"""

import datetime
import glob
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

# the reference: the CSV read into Arrow with the contract's types (not timed), then
# write_deltalake alone (timed in process)
REF_FULL = """
import sys, time
import pyarrow as pa, pyarrow.csv as csv
from deltalake import write_deltalake
types = {"id": pa.int64(), "order_date": pa.date32(), "updated_at": pa.timestamp("us", tz="UTC"),
         "amount": pa.float64(), "customer": pa.string(), "deleted": pa.bool_()}
t0 = time.perf_counter()
table = csv.read_csv(sys.argv[1], convert_options=csv.ConvertOptions(column_types=types))
t1 = time.perf_counter()
if len(sys.argv) > 3:
    table = table.select(sys.argv[3].split(","))
write_deltalake(sys.argv[2], table)
t2 = time.perf_counter()
print(f"read_csv {t1 - t0:.3f} s, {table.num_rows} rows, {table.nbytes >> 20} MiB in Arrow; "
      f"in process {t2 - t1:.3f} s")
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
        sys.exit(f"failed (exit {out.returncode}): {' '.join(args)}\n{out.stdout}\n{out.stderr}")
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


def parquet_files(path):
    """{relative path: size} of every Parquet file under path (the table's data files)."""
    out = {}
    for d, _, fs in os.walk(path):
        for f in fs:
            if f.endswith(".parquet"):
                p = os.path.join(d, f)
                out[os.path.relpath(p, path)] = os.path.getsize(p)
    return out


def newest_commit(table):
    """The newest _delta_log entry of `table`: its version, Add and Remove actions."""
    logs = sorted(glob.glob(os.path.join(table, "_delta_log", "*.json")))
    path = logs[-1]
    adds, removes, info = [], [], None
    with open(path) as f:
        for line in f:
            a = json.loads(line)
            if "add" in a:
                adds.append(a["add"])
            elif "remove" in a:
                removes.append(a["remove"])
            elif "commitInfo" in a:
                info = a["commitInfo"]
    return int(os.path.basename(path).split(".")[0]), adds, removes, info


def add_rows(add):
    return json.loads(add.get("stats") or "{}").get("numRecords")


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
        return [self.dogana, "deliver", path, "--store", "delta+file://" + store, "--contract",
                self.contract, "--at", now, "--source", "bench"]

    def accepted(self, r, what):
        """Stops unless the delivery's output says it was accepted (not replayed)."""
        if not re.search(r": accepted ", r[4]):
            sys.exit(f"{what}: not accepted:\n{r[4]}")
        return r

    def show(self, kind, side, k, r, **extra_fields):
        wall, rss, user, sys_, out = r
        lines = out.strip().splitlines()
        extra = next((x for x in lines if ": accepted " in x), lines[-1] if lines else "")
        m = re.search(r": (accepted \S+)", extra)
        extra = m.group(1) if m else extra
        load = os.getloadavg()[0]
        print(f"round {k} {kind:8} {side:5}: {wall:7.2f} s wall, user {user:6.2f} s, sys {sys_:5.2f} s, "
              f"peak RSS {rss:7.0f} MiB, load {load:4.1f} | {extra[:110]}", flush=True)
        row = {"wall": wall, "rss_mib": rss, "user": user, "sys": sys_, "load1": load}
        row.update(extra_fields)
        self.res.setdefault(kind, {}).setdefault(side, []).append(row)
        return row

    def summary(self, kind, ours="ours", ref="ref", ref_key="wall"):
        r = self.res[kind]
        o = statistics.median(x["wall"] for x in r[ours])
        f = statistics.median(x[ref_key] for x in r[ref])
        ratios = [a["wall"] / b[ref_key] for a, b in zip(r[ours], r[ref])]
        print(f"{kind}: median {ours} {o:.2f} s, {ref} {ref_key} {f:.2f} s, ratio {o / f:.2f} "
              f"(per round {', '.join(f'{x:.2f}' for x in ratios)}); peak RSS {ours} "
              f"{max(x['rss_mib'] for x in r[ours]):.0f} MiB, {ref} "
              f"{max(x['rss_mib'] for x in r[ref]):.0f} MiB", flush=True)
        r.setdefault("median", {}).update({ours: o, f"{ref} {ref_key}": f,
                                           f"ratio to {ref} {ref_key}": o / f,
                                           f"per round to {ref} {ref_key}": ratios})

    def verify(self, store):
        out = subprocess.run([self.dogana, "verify", "--store", "delta+file://" + store, "orders"],
                             capture_output=True, text=True)
        line = (out.stdout + out.stderr).strip()
        print(f"verify {store}: exit {out.returncode}: {line}", flush=True)
        self.res.setdefault("verify", {})[store] = {"exit": out.returncode, "output": line}
        if out.returncode != 0 or ": ok:" not in out.stdout:
            sys.exit(f"dogana verify failed on {store}")


def delta_rows(python, table):
    """The rows the deltalake package reads in `table` (its current version)."""
    code = ("import sys; from deltalake import DeltaTable; t = DeltaTable(sys.argv[1]); "
            "print(t.version(), t.to_pyarrow_dataset().count_rows(), len(t.file_uris()))")
    v, rows, files = subprocess.run([python, "-c", code, table], check=True, capture_output=True,
                                    text=True).stdout.split()
    return int(v), int(rows), int(files)


def main():
    args = sys.argv[1:]
    dogana, full, work = args[0], args[1], args[2]
    rounds = int(args[3]) if len(args) > 3 else 3
    os.makedirs(work, exist_ok=True)
    b = Bench(dogana, work)
    python = sys.executable
    ref_full = b.script("ref_full.py", REF_FULL)
    n = count_rows(full)
    print(f"full file {full}: {n} rows, {os.path.getsize(full)} bytes", flush=True)
    b.manifest(full, "full", FULL_AT, n)

    # (a) full delivery against write_deltalake of the same rows read into Arrow beforehand
    columns = None
    for k in range(1, rounds + 1):
        new, ref = os.path.join(work, f"new-{k}"), os.path.join(work, f"ref-{k}")
        shutil.rmtree(new, ignore_errors=True)
        b.show("full", "ours", k, b.accepted(timed(b.deliver(full, new, at(0, 5))), "full"))
        if columns is None:
            # the columns dogana's Delta table has: the reference writes the same ones
            with open(sorted(glob.glob(os.path.join(new, "orders", "_delta_log", "*.json")))[0]) as f:
                for line in f:
                    a = json.loads(line)
                    if "metaData" in a:
                        schema = json.loads(a["metaData"]["schemaString"])
                        columns = [c["name"] for c in schema["fields"]]
            print(f"dogana's Delta table has the columns {columns}", flush=True)
        shutil.rmtree(ref, ignore_errors=True)
        r = timed([python, ref_full, full, ref, ",".join(columns)])
        inproc = float(re.search(r"in process ([0-9.]+) s", r[4]).group(1))
        b.show("full", "ref", k, r, write_deltalake=inproc)
    last_new, last_ref = os.path.join(work, f"new-{rounds}"), os.path.join(work, f"ref-{rounds}")
    pf, rf = parquet_files(os.path.join(last_new, "orders")), parquet_files(last_ref)
    print(f"dogana's store {du(last_new)} bytes ({len(pf)} Parquet files, {sum(pf.values())} "
          f"bytes); write_deltalake's table {du(last_ref)} bytes ({len(rf)} Parquet files, "
          f"{sum(rf.values())} bytes)", flush=True)
    b.res["full"]["files"] = {"ours": {"files": len(pf), "parquet_bytes": sum(pf.values()),
                                       "store_bytes": du(last_new)},
                              "ref": {"files": len(rf), "parquet_bytes": sum(rf.values()),
                                      "store_bytes": du(last_ref)}}
    b.summary("full", ref_key="write_deltalake")
    b.summary("full")

    # (b) one 10,000-row changes delivery into the 10M-row table and into a 10,000-row table
    small = os.path.join(work, "orders-10k.csv")
    if not os.path.exists(small):
        gen = os.path.join(os.path.dirname(dogana), "examples", "sqlite_bench")
        subprocess.run([gen, "gen", "10000", small], check=True, capture_output=True)
    b.manifest(small, "full", FULL_AT, 10_000)
    base_big, base_small = os.path.join(work, "base-10m"), os.path.join(work, "base-10k")
    shutil.rmtree(base_big, ignore_errors=True)
    shutil.copytree(last_new, base_big)
    shutil.rmtree(base_small, ignore_errors=True)
    b.accepted(timed(b.deliver(small, base_small, at(0, 5))), "full 10k")
    changes = os.path.join(work, "changes-0.csv")
    write_changes(changes, 10_000, 20_000_001, 0)
    b.manifest(changes, "changes", at(1), 9_900, 100, FULL_AT)
    big, tiny = os.path.join(work, "round-10m"), os.path.join(work, "round-10k")
    for k in range(1, rounds + 1):
        for side, base, store in (("10m", base_big, big), ("10k", base_small, tiny)):
            shutil.rmtree(store, ignore_errors=True)
            shutil.copytree(base, store)
            table = os.path.join(store, "orders")
            before = parquet_files(table)
            r = b.accepted(timed(b.deliver(changes, store, at(1, 5))), f"changes {side}")
            after = parquet_files(table)
            version, adds, removes, info = newest_commit(table)
            log = {"version": version, "adds": len(adds), "added_bytes": sum(a["size"] for a in adds),
                   "added_rows": sum(add_rows(a) or 0 for a in adds), "removes": len(removes),
                   "removed_bytes": sum(x.get("size") or 0 for x in removes),
                   "files_before": len(before), "files_after_on_disk": len(after),
                   "new_on_disk": len(set(after) - set(before)),
                   "new_on_disk_bytes": sum(after[p] for p in set(after) - set(before))}
            b.show("changes", side, k, r, log=log)
            print(f"        log version {version}: {log['adds']} add ({log['added_bytes']} bytes, "
                  f"{log['added_rows']} rows), {log['removes']} remove ({log['removed_bytes']} "
                  f"bytes) of {log['files_before']} files; {log['new_on_disk']} new Parquet files "
                  f"on disk ({log['new_on_disk_bytes']} bytes)", flush=True)
    b.summary("changes", "10m", "10k")

    # the id bounds of the 10M table's files, as the log states them (what copy-on-write prunes by)
    _, adds, _, _ = newest_commit(os.path.join(base_big, "orders"))
    bounds = []
    for a in adds:
        s = json.loads(a["stats"])
        bounds.append((s["minValues"].get("id"), s["maxValues"].get("id"), s["numRecords"]))
    print("the 10M table's files (min id, max id, rows): " + "; ".join(map(str, sorted(bounds))),
          flush=True)
    b.res["full"]["id_bounds"] = sorted(bounds)

    # every store verifies, and the deltalake package reads the rows expected
    for k in range(1, rounds + 1):
        b.verify(os.path.join(work, f"new-{k}"))
    for store in (base_small, big, tiny):
        b.verify(store)
    expect = {os.path.join(last_new, "orders"): n, last_ref: n,
              os.path.join(big, "orders"): n + 900 - 100,
              os.path.join(tiny, "orders"): 10_000 + 900 - 100}
    for table, rows in expect.items():
        v, got, files = delta_rows(python, table)
        print(f"deltalake reads {table}: version {v}, {got} rows in {files} files (expected {rows})",
              flush=True)
        b.res.setdefault("rows", {})[table] = {"version": v, "rows": got, "files": files,
                                               "expected": rows}
        if got != rows:
            sys.exit(f"{table}: deltalake reads {got} rows, not {rows}")

    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(b.res, f, indent=1)


if __name__ == "__main__":
    main()

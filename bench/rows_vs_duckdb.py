#!/usr/bin/env python3
"""The checks-vs-DuckDB benchmark of bench/rows.md, in alternating rounds.

Each round runs `orders_bench check FILE` (every row check and the content hash; best of three
runs in one process) and then DuckDB's query over the same file (best of three in one process,
after a first run), so that both see the same state of the machine. Prints one line per round
and the median and worst ratio.

    pip install duckdb
    cargo build --release -p dogana-rows --example orders_bench
    target/release/examples/orders_bench gen 10000000 /tmp/orders.csv
    python3 bench/rows_vs_duckdb.py target/release/examples/orders_bench /tmp/orders.csv 7
"""

import re
import statistics
import subprocess
import sys
import time

QUERY = """select count(*), count(distinct id), min(order_date), max(order_date),
       min(updated_at), max(updated_at) from read_csv('{path}')"""


def dogana(binary, path):
    out = subprocess.run([binary, "check", path], check=True, capture_output=True, text=True)
    line = out.stdout.strip().splitlines()[-1]
    wall, cpu = re.match(r"check_rows: ([\d.]+) s wall, ([\d.]+) s CPU", line).groups()
    return float(wall), float(cpu)


def duckdb_best(path):
    import duckdb

    con = duckdb.connect()
    query = QUERY.format(path=path)
    con.execute(query).fetchone()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        con.execute(query).fetchone()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    binary, path = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    ratios = []
    for k in range(1, rounds + 1):
        wall, cpu = dogana(binary, path)
        duck = duckdb_best(path)
        ratios.append(wall / duck)
        print(f"round {k}: dogana-rows {wall:.3f} s ({cpu:.2f} s CPU), DuckDB {duck:.3f} s, ratio {wall / duck:.2f}")
    print(f"median ratio {statistics.median(ratios):.2f}, worst {max(ratios):.2f}")


if __name__ == "__main__":
    main()

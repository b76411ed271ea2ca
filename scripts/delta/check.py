"""Delta readers against SQLite, for scripts/test-delta.sh.

    python check.py SQLITE DELTA_DIR SQL TABLE COLUMNS RECEIPT

Reads the Delta table DELTA_DIR/TABLE (a name of letters, digits, _ and - only: its folder
name) with the deltalake package, polars, DuckDB's delta_scan and the views `dogana duckdb-sql`
printed into the file SQL (run without its INSTALL and LOAD lines: the delta extension is
loaded from the duckdb-extension-delta wheel), and the table of that name in the SQLite store:
every reading must hold exactly SQLite's rows, and the view <TABLE>__regions SQLite's
dogana_regions. COLUMNS is the "hashed columns" line of `dogana contract` ("id int, amount
decimal(12,2), ..."): the published columns in order and their types, which say how a value is
normalized (a value of another type is a difference). The table's newest Delta commit must
carry RECEIPT, the identity of its newest receipt, as commitInfo.dogana.receipt.
Prints a line per reader; exits 1, with the rows that differ, on any difference.
"""

import collections
import datetime
import decimal
import json
import pathlib
import re
import sqlite3
import sys

import deltalake
import duckdb
import duckdb_extension_delta
import polars as pl


def ident(name):
    return '"' + name.replace('"', '""') + '"'


def literal(text):
    return "'" + text.replace("'", "''") + "'"


def instant(v):
    """An aware datetime, or its ISO text, as UTC ISO text with microseconds."""
    if isinstance(v, str):
        v = datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
    if not isinstance(v, datetime.datetime) or v.tzinfo is None:
        raise TypeError(f"{v!r} is not an instant with a UTC offset")
    return v.astimezone(datetime.timezone.utc).isoformat(timespec="microseconds")


def normalize(ty, v, sqlite):
    """v, a value of dogana type ty, in one representation: dates and instants as ISO text,
    decimals as text with their scale. SQLite's dates and instants as text and its booleans
    as 0 and 1 are taken where sqlite is true."""
    if v is None:
        return None
    if ty == "int" and type(v) is int:
        return v
    if ty == "float" and type(v) is float:
        return v
    if ty == "str" and type(v) is str:
        return v
    if ty == "bool" and (type(v) is bool or (sqlite and type(v) is int and v in (0, 1))):
        return bool(v)
    if ty == "date" and (type(v) is datetime.date or (sqlite and type(v) is str)):
        return (datetime.date.fromisoformat(v) if sqlite else v).isoformat()
    if ty == "datetime" and (isinstance(v, datetime.datetime) or (sqlite and type(v) is str)):
        return instant(v)
    if ty.startswith("decimal(") and type(v) in (str, decimal.Decimal):
        # Delta and SQLite keep a decimal's text; the view casts it to DECIMAL(p,s)
        scale = int(ty[len("decimal(") : -1].split(",")[1])
        return str(decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-scale)))
    raise TypeError(f"{v!r} ({type(v).__name__}) is not a {ty} value")


def duckdb_connection():
    """DuckDB with the wheel's delta extension loaded, and no extension server."""
    package = pathlib.Path(duckdb_extension_delta.__file__).parent
    found = sorted(package.glob("extensions/*/delta.duckdb_extension"))
    if len(found) != 1:
        sys.exit(f"check.py: expected one delta.duckdb_extension in {package}, found {found}")
    con = duckdb.connect(
        config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    )
    con.execute(f"LOAD {literal(str(found[0]))}")
    con.execute("SET TimeZone = 'UTC'")
    return con


def fetch(cursor):
    """The column names and the rows of a DB-API cursor."""
    return [d[0] for d in cursor.description], cursor.fetchall()


def newest_commit_receipt(table_dir):
    """The newest commit's file name (_delta_log/<20 digits>.json) and its
    commitInfo.dogana.receipt."""
    log = max(
        p for p in (table_dir / "_delta_log").iterdir() if re.fullmatch(r"[0-9]{20}\.json", p.name)
    )
    for line in log.read_text().splitlines():
        if "commitInfo" in line:
            return log.name, json.loads(line)["commitInfo"].get("dogana", {}).get("receipt")
    return log.name, None


def main():
    sqlite_path, delta_dir, sql_path, table, columns, receipt = sys.argv[1:]
    columns = [c.split(" ", 1) for c in columns.split(", ")]
    names = [name for name, _ in columns]
    table_dir = pathlib.Path(delta_dir) / table
    lite = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    duck = duckdb_connection()
    bad = 0

    def differs(message, *lines):
        nonlocal bad
        bad += 1
        print(f"  DIFFERS {table}: {message}", *lines, sep="\n    ")

    # the views of `dogana duckdb-sql`, less its INSTALL delta; LOAD delta;
    sql = pathlib.Path(sql_path).read_text()
    head = ["INSTALL delta;", "LOAD delta;"]
    if sql.splitlines()[:2] != head:
        sys.exit(f"check.py: {sql_path} does not start with {' '.join(head)}")
    duck.execute(sql.split("\n", 2)[2])

    arrow = deltalake.DeltaTable(str(table_dir)).to_pyarrow_table()
    frame = pl.read_delta(str(table_dir))
    readings = {
        "deltalake": (arrow.column_names, list(zip(*(c.to_pylist() for c in arrow.columns)))),
        "polars": (frame.columns, frame.rows()),
        "duckdb delta_scan": fetch(duck.execute(f"SELECT * FROM delta_scan({literal(str(table_dir))})")),
        "duckdb view": fetch(duck.execute(f"SELECT * FROM {ident(table)}")),
    }

    def rows(got, sqlite):
        return collections.Counter(
            tuple(normalize(ty, v, sqlite) for (_, ty), v in zip(columns, row)) for row in got
        )

    sqlite_names, sqlite_rows = fetch(lite.execute(f"SELECT * FROM {ident(table)}"))
    if sqlite_names != names:
        differs(f"SQLite's columns are {sqlite_names}, the contract's {names}")
    want = rows(sqlite_rows, True)
    for reader, (got_names, got_rows) in readings.items():
        if got_names != names:
            differs(f"{reader} reads the columns {got_names}, the contract's are {names}")
            continue
        try:
            got = rows(got_rows, False)
        except (TypeError, ValueError, ArithmeticError) as e:
            differs(f"{reader}: {e}")
            continue
        if got == want:
            print(f"  ok {table}: {reader} reads SQLite's {sum(want.values())} rows")
        else:
            differs(
                f"{reader} reads {sum(got.values())} rows, SQLite holds {sum(want.values())}",
                *(f"only {reader}: {r}" for r in sorted((got - want).elements(), key=repr)),
                *(f"only SQLite: {r}" for r in sorted((want - got).elements(), key=repr)),
            )

    # filtered reads use the files' statistics to skip files: for each column, the deltalake
    # package filtered on each row's value (the first 20 rows) returns the rows that hold it
    dt = deltalake.DeltaTable(str(table_dir))
    full = rows(readings["deltalake"][1], False)
    for i, (name, ty) in enumerate(columns):
        values = {row[i] for row in readings["deltalake"][1][:20] if row[i] is not None}
        for v in sorted(values, key=repr):
            got = dt.to_pyarrow_table(filters=[(name, "=", v)])
            got = rows(list(zip(*(c.to_pylist() for c in got.columns))), False)
            expect = collections.Counter(
                {r: k for r, k in full.items() if r[i] == normalize(ty, v, False)}
            )
            if got != expect:
                differs(f"deltalake filtered on {name} = {v!r} reads {sum(got.values())} rows, not {sum(expect.values())}")
    # the regions view against SQLite's dogana_regions
    region_columns = "low, high, low_open, high_open, complete_as_of, deletions_as_of"

    def regions(got):
        return [
            (
                *(None if v is None else json.loads(v) for v in r[:2]),
                *(bool(v) for v in r[2:4]),
                *(None if v is None else instant(v) for v in r[4:]),
            )
            for r in got
        ]

    view = regions(
        duck.execute(
            f"SELECT {region_columns} FROM {ident(table + '__regions')} ORDER BY region_index"
        ).fetchall()
    )
    stored = regions(
        lite.execute(
            f"SELECT {region_columns} FROM dogana_regions WHERE table_name = ? ORDER BY region_index",
            (table,),
        ).fetchall()
    )
    if view and view == stored:
        print(f"  ok {table}: duckdb {table}__regions reads SQLite's {len(stored)} regions")
    else:
        differs(f"duckdb {table}__regions reads", *view, "SQLite's dogana_regions:", *stored)

    # the newest commit carries the newest receipt
    log, committed = newest_commit_receipt(table_dir)
    if committed == receipt:
        print(f"  ok {table}: the newest commit, {log}, carries the newest receipt {receipt[:12]}")
    else:
        differs(f"the newest commit, {log}, carries the receipt {committed}, the newest is {receipt}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

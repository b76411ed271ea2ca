"""The type stubs describe the module: every public name and every stubbed member exists, and
a type checker reading them refuses a misspelt enumeration value. (scripts/test-python.sh
also runs mypy.stubtest on the installed module.)"""

import ast
import os
import subprocess
import sys

import pytest

import dogana_rs
from dogana_rs import _native

HERE = os.path.join(os.path.dirname(dogana_rs.__file__))


def stub(name):
    with open(os.path.join(HERE, name)) as f:
        return ast.parse(f.read())


def test_the_package_ships_its_stubs_and_py_typed():
    for name in ("__init__.pyi", "_native.pyi", "py.typed"):
        assert os.path.exists(os.path.join(HERE, name)), name


def test_every_public_name_is_in_the_stubs():
    tree = stub("__init__.pyi")
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    assert set(dogana_rs.__all__) <= names


def test_every_stubbed_class_member_exists_at_run_time():
    tree = stub("_native.pyi")
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            cls = getattr(_native, node.name)
            for item in node.body:
                name = getattr(item, "name", None) or getattr(getattr(item, "target", None), "id", None)
                if name and not name.startswith("__"):
                    assert hasattr(cls, name), f"{node.name}.{name}"
        elif isinstance(node, ast.FunctionDef):
            assert callable(getattr(_native, node.name)), node.name


WIRE_KINDS = (
    "Shape", "Contract", "Manifest", "Region", "Ledger", "Check", "Action", "ApplyPlan",
    "Transition", "Receipt", "RegionClaim", "Claims", "Requirement", "Extraction",
)


def test_every_wire_kind_has_the_wire_methods_in_its_stub():
    classes = {n.name: n for n in stub("_native.pyi").body if isinstance(n, ast.ClassDef)}
    for kind in WIRE_KINDS:
        members = {getattr(item, "name", None) for item in classes[kind].body}
        for wire in ("to_json", "from_json", "to_dict", "from_dict", "identity_dict", "identity_json", "identity"):
            assert wire in members and hasattr(getattr(_native, kind), wire), f"{kind}.{wire}"


MISSPELT = """
from datetime import datetime, timezone
from dogana_rs import Contract, Gate, Ledger, Shape
now = datetime(2026, 10, 25, tzinfo=timezone.utc)
c = Contract("o", key=("id",), shapes={"f": Shape.changes(deletions="tombstones")}, types={"id": "int"})
r = Gate.evaluate(Ledger(c), c.manifest("f", now, rows=1), now=now)
assert r.outcome == "acepted"
"""


def test_mypy_refuses_a_misspelt_enumeration_value(tmp_path):
    pytest.importorskip("mypy")
    path = tmp_path / "misspelt.py"
    path.write_text(MISSPELT)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "\"Literal['absence', 'none', 'tombstone']\"" in run.stdout
    assert "Non-overlapping equality check" in run.stdout and "acepted" in run.stdout

"""The type stubs describe the module: every public name and every stubbed member exists."""

import ast
import os

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
            if any(isinstance(b, ast.Name) and b.id == "_Wire" for b in node.bases):
                for wire in ("to_json", "from_json", "to_dict", "from_dict", "identity_dict", "identity_json", "identity"):
                    assert hasattr(cls, wire), f"{node.name}.{wire}"
        elif isinstance(node, ast.FunctionDef):
            assert callable(getattr(_native, node.name)), node.name

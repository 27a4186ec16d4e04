"""`hubs`: what the code depends on most (bases count, tests' helpers do not) and its entry
points (never through an AMBIGUOUS edge)."""

from __future__ import annotations

from pathlib import Path

from _tree import write_tree

import ctxframe as cf

FILES = {
    "lib.py": "class Base:\n    pass\n\n\nclass Store:\n    def update(self, x):\n"
    "        pass\n\n\nclass Cache:\n    def update(self, x):\n        pass\n\n\n"
    "def setup():\n    pass\n",
    "models.py": "from lib import Base\n\n\nclass A(Base):\n    pass\n\n\nclass B(Base):\n"
    "    pass\n\n\nclass C(Base):\n    pass\n",
    "boot.py": "from lib import setup\n\nsetup()\nunknown.update(1)\n",
    "tests/helpers.py": "def assert_ok(r):\n    assert r\n",
    "tests/__init__.py": "",
    "tests/test_a.py": "from tests.helpers import assert_ok\n\n\n"
    "def test_1():\n    assert_ok(1)\n\n\ndef test_2():\n    assert_ok(2)\n\n\n"
    "def test_3():\n    assert_ok(3)\n",
}


def test_hubs_rank_bases_leave_test_helpers_and_ambiguous_calls_out(tmp_path: Path) -> None:
    write_tree(tmp_path, FILES)
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    h = g.hubs(limit=20)
    depended = dict(h.depended.select("id", "in_degree").iter_rows())
    assert depended["lib.py::Base"] == 3  # three subclasses
    assert not any(i.startswith("tests/") for i in depended)
    why = dict(h.entry_points.select("id", "why").iter_rows())
    assert why.get("lib.py::setup") == "run at import"
    assert "lib.py::Store.update" not in why and "lib.py::Cache.update" not in why

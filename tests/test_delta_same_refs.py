"""A Python edit that leaves the file's references as stored, row for row (a function without
calls added at the end, a comment), takes its `contains` edges from the new definitions and
keeps its stored `imports` without resolving anything; any other edit resolves again. The
store is kept in several parts: those holding none of the edited file's rows are carried
over. Either way the store equals a full rebuild."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from test_delta_shapes import _tables  # the stored rows, sorted

import ctxframe as cf
from ctxframe._store import delta
from ctxframe._store import parts as _parts
from ctxframe._store import tables as _store
from ctxframe._store.build import index

PKG_INIT = "from .core import run\n"
CORE = (
    "import os\nimport json as j\nfrom . import util\nfrom .util import helper\n"
    "import requests\n\n\n"
    "def run(x):\n    return helper(x) + util.twice(x)\n\n\n"
    "class Box:\n    def size(self):\n        return run(1)\n"
)
UTIL = "def helper(x):\n    return x\n\n\ndef twice(x):\n    return 2 * x\n"
_CALL = "        return run(1)"
USER = "from pkg.core import Box, run\n\n\ndef main():\n    return run(Box().size())\n"


@pytest.mark.parametrize(
    ("edit", "resolves"),
    [
        (lambda t: t + "\n\ndef added(value):\n    pass\n", 0),
        (lambda t: t + "\n\ndef added(value):\n    return value + 1\n", 1),  # `+` runs `__add__`
        (lambda t: t + '\n\ndef added(value):\n    """Docs."""\n    return value\n', 1),  # a fact
        (lambda t: t + "\n# a comment\n", 0),
        (lambda t: t + "\n\nclass Added:\n    pass\n", 1),  # a new class: the value flow runs
        (lambda t: t + "\n\ndef twice(value):\n    return value\n", 1),  # a name facts read
        (lambda t: t.replace(_CALL, '        """Docs."""\n' + _CALL), 1),  # the call moved down
        (lambda t: t + "\n\ndef added():\n    return helper(2)\n", 1),  # a new call
        (lambda t: t.replace("import os\n", "import os\nimport sys\n"), 1),  # a new import
        (lambda t: t.replace("def run(x)", "def go(x)"), 1),  # a read name renamed
    ],
)
def test_edit_with_the_same_references(tmp_path: Path, monkeypatch, edit, resolves: int):
    monkeypatch.setattr(_parts, "PART_BYTES", 120)  # a part or two per file
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text(PKG_INIT)
    (repo / "pkg" / "core.py").write_text(CORE)
    (repo / "pkg" / "util.py").write_text(UTIL)
    (repo / "main.py").write_text(USER)
    store = tmp_path / "store"
    cf.index(str(repo), store=str(store), progress=False)
    version = store / os.readlink(store / "current")
    inodes = {p.relative_to(version): p.stat().st_ino for p in version.rglob("*.parquet")}
    bounds = _store.read_meta(str(store))["part_bounds"]
    assert bounds  # two parts at least
    calls = []
    real = delta._resolve_changed
    monkeypatch.setattr(delta, "_resolve_changed", lambda *a: calls.append(1) or real(*a))
    core = repo / "pkg" / "core.py"
    core.write_text(edit(core.read_text()))
    report = index(str(repo), store=str(store), changed=["pkg/core.py"], processes=1)
    if report.mode == "delta":
        assert len(calls) == resolves
        core = int(_parts.part_of(bounds, pl.Series(["pkg/core.py"]))[0])
        version = store / os.readlink(store / "current")
        for rel, inode in inodes.items():  # no other file's rows moved: their parts linked
            mine = _parts.number(str(rel)) == core
            if not resolves and rel.parts[0] in ("nodes", "edges") and not mine:
                assert (version / rel).stat().st_ino == inode, rel
    else:
        assert resolves  # a full resolution is an edit that reads anew
    full = tmp_path / "full"
    cf.index(str(repo), store=str(full), rebuild=True, progress=False)
    got, want = _tables(store), _tables(full)
    for name in want:
        assert got[name].equals(want[name]), name

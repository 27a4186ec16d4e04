"""The allocator policy: freed pages go back early only for a large repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxframe._store import alloc as _alloc


def _tree(root: Path, files: int, ignored: int = 0) -> None:
    for i in range(files):
        (root / f"d{i % 7}").mkdir(exist_ok=True)
        (root / f"d{i % 7}" / f"f{i}.py").write_text("")
    (root / "node_modules").mkdir()
    for i in range(ignored):
        (root / "node_modules" / f"x{i}.js").write_text("")


@pytest.mark.parametrize(("files", "ignored", "limit", "want"), [
    (10, 0, 100, 10),
    (10, 50, 100, 10),  # built-in ignored directories are not counted
    (40, 0, 25, 25),  # counting stops at the limit (give or take one directory)
])  # fmt: skip
def test_count_files(tmp_path: Path, files: int, ignored: int, limit: int, want: int) -> None:
    _tree(tmp_path, files, ignored)
    got = _alloc._count_files(str(tmp_path), limit)
    assert got == want if want < limit else limit <= got <= files


@pytest.mark.parametrize(("stored", "want"), [(None, False), (10, False), (25_000, True)])
def test_is_large_reads_the_stored_count(tmp_path: Path, stored: int | None, want: bool) -> None:
    _tree(tmp_path, 5)
    if stored is not None:
        store = tmp_path / ".ctxframe" / "graph"
        store.mkdir(parents=True)
        (store / "meta.json").write_text(json.dumps({"counts": {"files": stored}}))
    assert _alloc.is_large(str(tmp_path), None) is want


_PROBE = """
import os, sys
import ctxframe
from ctxframe._store import alloc as _alloc
_alloc.LARGE_FILES = int(sys.argv[2])
if sys.argv[3] == "cli":
    _alloc.for_index(sys.argv[1], None)
else:  # the library: cf.index chooses before it loads Polars
    ctxframe.index(sys.argv[1], progress=False)
print(os.environ.get("_RJEM_MALLOC_CONF"))
"""


@pytest.mark.parametrize(("user", "large", "via", "want"), [
    (None, 1, "cli", _alloc.EAGER),  # a large repository: pages go back early
    (None, 10**6, "cli", "None"),  # a small one: the allocator's default
    (None, 10**6, "library", "polars"),  # Polars then sets its own default
    ("dirty_decay_ms:5", 10**6, "cli", "dirty_decay_ms:5"),  # the user's setting always wins
])  # fmt: skip
def test_for_index_in_a_fresh_interpreter(
    tmp_path: Path, user, large: int, via: str, want: str
) -> None:
    _tree(tmp_path, 3)
    env = {k: v for k, v in os.environ.items() if k != _alloc.VAR}
    if user is not None:
        env[_alloc.VAR] = user
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path), str(large), via],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    if want == "polars":
        assert out.strip() not in (_alloc.EAGER, "None")
    else:
        assert out.strip() == want

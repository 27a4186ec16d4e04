"""An edit that changes only what a call passes (a literal keyword added, a literal first
argument) keeps the value flow unless the call reaches a decorator factory whose returns
depend on it (ctxframe._store.delta `_shapes_only`); either way the store equals a rebuild."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._resolve import flow
from ctxframe._store import tables as _store

FACTORY = (
    "def register(maybe_cls=None, *, tag=None):\n    def wrap(cls):\n        return cls\n\n"
    "    if maybe_cls is None:\n        return wrap\n    return wrap(maybe_cls)\n\n\n"
    "def plain(a=None, b=None):\n    return a\n"
)
USE = "from r import plain, register\n\n\ndef use():\n    plain(a=1)\n    return register(tag=1)\n"


def _tables(store: Path) -> dict[str, pl.DataFrame]:
    return {
        name: _store.read_table(str(store), name).sort(pl.all(), nulls_last=True)
        for name in ("nodes", "edges", "refs")
    }


@pytest.mark.parametrize(
    ("before", "after", "solves"),
    [
        ("plain(a=1)", "plain(a=1, b=2)", 0),  # reaches no factory: the flow stands
        ("plain(a=1)", "plain(1)", 0),
        ("register(tag=1)", "register(tag=1, key=2)", 1),  # keywords only, still no first
        ("register(tag=1)", "register(None, tag=1)", 1),  # a first argument now
        ("register(tag=1)", 'register("x", tag=1)', 1),  # a literal first argument now
    ],
)
def test_call_shape_edit(tmp_path: Path, monkeypatch, before: str, after: str, solves: int):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "r.py").write_text(FACTORY)
    (repo / "use.py").write_text(USE)
    store = tmp_path / "store"
    cf.index(str(repo), store=str(store), progress=False)
    calls = []
    real = flow.solve
    monkeypatch.setattr(flow, "solve", lambda t, keep=False: calls.append(1) or real(t, keep))
    (repo / "use.py").write_text(USE.replace(before, after))
    from ctxframe._store.build import index

    report = index(str(repo), store=str(store), changed=["use.py"], processes=1)
    assert report.mode == "delta"
    # the value flow solved again (only what the edit changes: the state kept with the
    # version) or left standing
    assert (report.flow is not None) == bool(solves) and not calls
    monkeypatch.setattr(flow, "solve", real)
    full = tmp_path / "full"
    cf.index(str(repo), store=str(full), rebuild=True, progress=False)
    got, want = _tables(store), _tables(full)
    for name in want:
        assert got[name].equals(want[name]), name

"""The one-file edits bench/index_bench.py times: each changes what it says, and the new-call edit
gives the index a call edge to the function added before it (so the value flow must run)."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import _common


def test_add_call_needs_a_function_added_before(tmp_path: Path) -> None:
    target = tmp_path / "mod.py"
    target.write_text("def f():\n    return 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no function added"):
        _common.add_call(target)


def test_the_three_edits_and_the_call_edge_they_leave(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    target = repo / "mod.py"
    target.write_text("def f():\n    return 1\n", encoding="utf-8")
    store = str(tmp_path / "store")
    cf.index(str(repo), store=store, progress=False)

    _common.append_function(target)
    text = target.read_text(encoding="utf-8")
    added = text.rsplit("\ndef ", 1)[1].split("(", 1)[0]
    assert added.startswith("_ctxframe_bench_added_")
    _common.edit_body(target)
    assert text.replace("return value + 1", "return value + 2") == target.read_text("utf-8")
    _common.add_call(target)
    caller = target.read_text(encoding="utf-8").rsplit("\ndef ", 1)[1].split("(", 1)[0]
    assert caller.startswith("_ctxframe_bench_caller_")

    g = cf.index(str(repo), store=store, progress=False)
    calls = g.edges.filter(pl.col("kind") == "calls").select("src", "dst", "confidence")
    assert (f"mod.py::{caller}", f"mod.py::{added}", "EXTRACTED") in calls.rows()

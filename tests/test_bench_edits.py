"""The one-file edits bench/index_bench.py times: each changes what it says, the new-call edit
gives the index a call edge to the function added before it (so the value flow must run), and
the retarget edit moves that edge to the function added before that one."""

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


def test_retarget_needs_a_call_added_before(tmp_path: Path) -> None:
    target = tmp_path / "mod.py"
    target.write_text("def f():\n    return 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no call added"):
        _common.retarget_call(target)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ('"""Doc."""\n\nimport os\n\nx = 1\n', '"""Doc."""\n\n'),
        ("x = 1\n", ""),
    ],
)
def test_add_import_goes_above_the_first_import(tmp_path: Path, text: str, first: str) -> None:
    target = tmp_path / "mod.py"
    target.write_text(text, encoding="utf-8")
    _common.add_import(target)
    new = target.read_text(encoding="utf-8")
    assert new.startswith(first + "import json as _ctxframe_bench_json_")
    assert new.endswith(text[len(first):])


def test_retarget_moves_the_call_edge(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    target = repo / "mod.py"
    target.write_text("def f():\n    return 1\n", encoding="utf-8")
    store = str(tmp_path / "store")
    _common.append_function(target)
    _common.append_function(target)
    _common.add_call(target)
    _common.retarget_call(target)
    _common.add_import(target)
    text = target.read_text(encoding="utf-8")
    first, second = [line[4:].split("(")[0] for line in text.splitlines()
                     if line.startswith("def _ctxframe_bench_added_")]  # fmt: skip
    caller = text.rsplit("\ndef ", 1)[1].split("(", 1)[0]
    g = cf.index(str(repo), store=store, progress=False)
    calls = g.edges.filter(pl.col("kind") == "calls").select("src", "dst").rows()
    assert (f"mod.py::{caller}", f"mod.py::{first}") in calls
    assert (f"mod.py::{caller}", f"mod.py::{second}") not in calls
    _common.retarget_call(target)
    g = cf.index(str(repo), store=store, progress=False)
    calls = g.edges.filter(pl.col("kind") == "calls").select("src", "dst").rows()
    assert (f"mod.py::{caller}", f"mod.py::{second}") in calls
    assert (f"mod.py::{caller}", f"mod.py::{first}") not in calls

"""bench/edges_diff.py's comparison on two small graphs indexed here (no download)."""

from __future__ import annotations

import sys
from pathlib import Path

import ctxframe as cf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import edges_diff

CODE = "def helper():\n    pass\n\n\ndef run():\n    helper()\n"
TEST = "from app import run\n\n\ndef test_run():\n    run()\n"


def _edges(tmp_path: Path, name: str, app: str):
    tree = tmp_path / name
    (tree / "tests").mkdir(parents=True)
    (tree / "app.py").write_text(app)
    (tree / "tests" / "test_app.py").write_text(TEST)
    store = tmp_path / f"{name}-store"
    cf.index(str(tree), store=str(store), progress=False)
    return edges_diff.call_edges(tree, store)


def test_summary_directions_and_difference(tmp_path: Path) -> None:
    before = _edges(tmp_path, "a", CODE)
    after = _edges(tmp_path, "b", CODE.replace("    helper()\n", "    pass\n"))
    s = edges_diff.summary(before)
    assert s["by_direction"] == {"code -> code": 1, "test -> code": 1}
    assert (s["edges"], s["sites"], s["multi_target_sites"]) == (2, 2, 0)
    removed = edges_diff.difference(before, after)
    assert removed.select("src", "dst", "direction").rows() == [
        ("app.py::run", "app.py::helper", "code -> code")
    ]
    assert edges_diff.difference(after, before).is_empty()


def test_difference_written_for_reading(tmp_path: Path) -> None:
    """`--edges-out`: every removed and added edge as Parquet, the columns of the diff."""
    import polars as pl

    before = _edges(tmp_path, "a", CODE)
    after = _edges(tmp_path, "b", CODE.replace("    helper()\n", "    pass\n"))
    removed, added = edges_diff.difference(before, after), edges_diff.difference(after, before)
    edges_diff.write_difference(tmp_path / "out", removed, added)
    assert pl.read_parquet(tmp_path / "out" / "removed.parquet").equals(removed)
    assert pl.read_parquet(tmp_path / "out" / "added.parquet").height == 0

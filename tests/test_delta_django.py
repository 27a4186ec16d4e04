"""One-file Python edits on Django 5.1 (downloaded): every re-index equals a full rebuild.
Edits that only move lines keep the value flow's edges (at their new lines); a new call solves
the value flow again for what it changes (ctxframe._resolve.flow_state), and other files'
calls and bases left to name matching resolve through their own imports, as a full run
resolves them."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import polars as pl
import pytest

from ctxframe._store import build as _indexer
from ctxframe._store import tables as _store

TARGET = "django/db/models/query.py"
EDITS = [  # (old, new, how the value flow runs: not at all, or solved again for the edit)
    ("    def exclude(self, *args, **kwargs):",
     "    # note\n\n    def exclude(self, *args, **kwargs):", False),
    ('        self._not_support_combined_queries("exclude")',
     '        self._not_support_combined_queries("exclude")\n        self._fetch_all()',
     "incremental"),
]  # fmt: skip


def _rows(store: str, name: str) -> pl.DataFrame:
    return _store.read_table(store, name).sort(pl.all(), nulls_last=True)


@pytest.mark.slow
def test_django_python_deltas_equal_full_rebuilds(tmp_path: Path, monkeypatch) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import _common

    from ctxframe._resolve import flow_edges

    monkeypatch.setenv("CTXFRAME_CACHE_DIR", str(tmp_path / "xcache"))
    root = shutil.copytree(_common.ensure_corpus(_common.CORPORA["django"]), tmp_path / "dj")
    store = str(tmp_path / "store")
    _indexer.index(str(root), store=store, progress=False)
    runs: list[int] = []
    real = flow_edges.python_edges
    monkeypatch.setattr(flow_edges, "python_edges", lambda *a: runs.append(1) or real(*a))
    for i, (old, new, flow) in enumerate(EDITS):
        path = root / TARGET
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))
        runs.clear()
        report = _indexer.index(str(root), store=store, progress=False, changed=[TARGET])
        solved = "incremental" if report.flow == "incremental" else bool(runs)
        assert report.mode == "delta" and solved == flow, (i, report.mode, report.flow, runs)
        full = str(tmp_path / f"full-{i}")
        _indexer.index(str(root), store=full, rebuild=True, progress=False)
        for name in ("nodes", "edges", "refs"):
            assert _rows(store, name).equals(_rows(full, name)), (i, name)
        shutil.rmtree(full)

"""The SWE-bench localisation benchmark's 10-instance smoke run (bench/swebench_eval.py).

Small releases only (requests, Flask, seaborn, pylint), downloaded by package name into the
bench cache on first use, and labelled data read from outside the repository
(../shared/eval): a `slow` test (`pytest -q -m slow`); without network or without the data it
skips with a reason.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "swebench_eval.py"
sys.path.insert(0, str(ROOT / "bench"))
from _bm25 import SYSTEMS as BASELINES  # noqa: E402
from _common import eval_data_dir  # noqa: E402

DATA = eval_data_dir() / "swebench_dev.jsonl"
BUDGET_S = 240  # first run downloads ~10 small releases; cached runs take seconds


@pytest.mark.slow
def test_swebench_smoke_run(tmp_path: Path) -> None:
    if not DATA.is_file():
        pytest.skip(f"no SWE-bench data at {DATA}")
    out = tmp_path / "swe"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--limit", "10", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=BUDGET_S,
        check=False,
    )
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = pl.read_parquet(out / "rows.parquet")
    assert rows["instance_id"].n_unique() == 10
    assert set(rows["rule"]) == {"idf-tiers", "bm25", "flat-name-bonus", *BASELINES}
    assert set(rows["half"].drop_nulls()) <= {"dev", "test"}
    unavailable = rows.filter(pl.col("skip_reason").str.starts_with("release unavailable"))
    if unavailable.height == rows.height:
        reasons = unavailable["skip_reason"].unique().to_list()
        if any(
            m in r
            for r in reasons
            for m in ("NewConnectionError", "name resolution", "unreachable", "Could not fetch")
        ):
            pytest.skip(f"no network for the smoke run: {reasons[0]}")
    scored = rows.filter(pl.col("skip_reason").is_null())
    assert scored["instance_id"].n_unique() >= 5, rows.select("instance_id", "skip_reason")
    # every row is scored or skipped with a reason: nothing is silently dropped
    assert rows.filter(pl.col("skip_reason").is_null() & pl.col("file_ranks").is_null()).is_empty()
    assert "ALL" in proc.stdout and "file_acc@1" in proc.stdout and "half: all" in proc.stdout
    assert elapsed < BUDGET_S

"""bench/callgraph_bench.py on three PyCG micro-benchmark cases: the output's structure.

The cases come from the pycg 0.0.8 sdist, downloaded by package name into the bench cache on
first use; without network it skips with the reason. PyCG itself is not run (--no-pycg).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "callgraph_bench.py"
CASES = {"functions/call": 1, "classes/direct_call": 2, "imports/import_from": 1}  # expected pairs


@pytest.mark.slow
def test_callgraph_bench_three_cases(tmp_path: Path) -> None:
    out = tmp_path / "callgraph.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--no-pycg", "--out", str(out), "--cases", *CASES],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode == 1 and "cannot fetch the cases" in proc.stderr:
        pytest.skip(proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())

    assert {r["case"]: r["expected"] for r in data["cases"]} == CASES
    assert set(data["summary"]) == {"functions", "classes", "imports", "overall"}
    overall = data["summary"]["overall"]
    assert overall["cases"] == 3 and overall["expected"] == sum(CASES.values())
    for view in ("default", "+ambiguous", "naive"):
        row = overall[view]
        assert row["tp"] + row["fn"] == overall["expected"]
        assert row["tp"] + row["fp"] == row["predicted"]
        assert 0 <= row["recall"] <= 100
    assert "pycg" not in overall  # --no-pycg
    for case in data["cases"]:
        assert set(case["systems"]) == {
            "default", "+ambiguous", "naive", "default (own)", "+ambiguous (own)"
        }
        assert all(" -> " in p for s in case["systems"].values() for p in s["fn"] + s["fp"])
    lines = proc.stdout.splitlines()
    assert any(line.startswith("overall") for line in lines)
    assert "default P%" in proc.stdout and "naive R%" in proc.stdout
    assert "scored with --constructors own: default P/R" in proc.stdout

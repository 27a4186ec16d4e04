"""bench/testimpact.py's truth and scores: the functions' own body lines (ast), coverage
contexts read back to test files, the three figures. Offline: a tiny tree and a real coverage.py
data file made in the test; the real suites run in the slow test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import _testruns as runs  # noqa: E402
import testimpact  # noqa: E402

LIB = (
    "def outer(x):\n"
    '    """Doc."""\n'
    "    def inner():\n"
    "        return x\n"
    "    return inner()\n"
    "\n\nclass C:\n"
    "    @property\n"
    "    def p(self):\n"
    "        return 1\n"
)


def test_library_functions_own_their_body_lines(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(LIB)
    found = {f.qualname: (f.line, sorted(f.body)) for f in runs.library_functions(tmp_path, "pkg")}
    assert found == {
        "outer": (1, [3, 5]),  # its `def inner` line runs in it; no docstring, no inner body
        "outer.inner": (3, [4]),
        "C.p": (10, [11]),
    }


@pytest.mark.parametrize(
    ("context", "want"),
    [
        ("tests.test_a.test_x", "tests/test_a.py"),
        ("test_a.TestC.test_y", "tests/test_a.py"),  # pytest's rootdir insertion names it so
        ("tests.sub.test_b.test_z", "tests/sub/test_b.py"),
        ("pkg.m.outer", None),
    ],
)
def test_context_names_a_test_file(context: str, want: str | None, tmp_path: Path) -> None:
    for rel in ("tests/test_a.py", "tests/sub/test_b.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert runs.context_file(context, runs._test_modules(tmp_path)) == want


def test_truth_from_a_real_coverage_data_file(tmp_path: Path) -> None:
    coverage = pytest.importorskip("coverage")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(LIB)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text("")
    data = tmp_path / "cov"
    sys.path.insert(0, str(tmp_path))
    try:
        cov = coverage.Coverage(data_file=str(data), source=[str(tmp_path / "pkg")])
        cov.start()
        import pkg.m

        cov.switch_context("tests.test_m.test_outer")
        pkg.m.outer(1)
        cov.switch_context("")
        cov.stop()
        cov.save()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("pkg.m", None)
        sys.modules.pop("pkg", None)
    truth = runs.function_tests(tmp_path, data, "pkg")
    assert truth[("pkg/m.py", 1)] == {"tests/test_m.py"}
    assert truth[("pkg/m.py", 3)] == {"tests/test_m.py"}
    assert truth[("pkg/m.py", 10)] == set()


def test_scores() -> None:
    truth = {"f": {"a", "b"}, "g": {"a"}, "h": set(), "k": {"c"}}
    named = {"f": {"a"}, "g": {"a", "x"}, "h": {"y"}}
    s = testimpact.score(named, truth)
    assert s["with_tests"] == 3 and s["named_some"] == 3
    assert s["recall"] == pytest.approx(100 * (0.5 + 1 + 0) / 3)
    assert s["precision"] == pytest.approx(100 * (1 + 0.5 + 0) / 3)
    assert s["none_named"] == pytest.approx(100 / 3)


@pytest.mark.slow
def test_testimpact_on_a_real_suite(tmp_path: Path) -> None:
    """httpx's own suite under coverage.py (a venv of its own, downloads by package name)."""
    out = tmp_path / "ti.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "testimpact.py"), "--projects", "httpx",
         "--sample", "20", "--coverage", "--out", str(out)],
        capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    if proc.returncode != 0 and "failed" in proc.stderr and "pip" in proc.stderr:
        pytest.skip(f"no network: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "with the coverage data ingested" in proc.stdout
    import json

    row = json.loads(out.read_text())["rows"][0]
    assert row["with_coverage"]["recall"] == 100.0
    assert row["recall"] > 50

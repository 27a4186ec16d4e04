"""bench/resolver_overhead.py's variants on a small tree indexed here (no download): `full`
resolves the Python calls, `no-flow` and `none` leave them unresolved, and the report states
the growth against `none`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import resolver_overhead as ro

CODE = "def helper():\n    pass\n\n\ndef run():\n    helper()\n\n\ndef other():\n    helper()\n"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    (root / "app.py").write_text(CODE)
    return root


@pytest.mark.parametrize(("mode", "resolved"), [("full", 2), ("no-flow", 0), ("none", 0)])
def test_each_variant_resolves_what_it_says(tree: Path, tmp_path: Path, mode, resolved) -> None:
    res = ro._run_one(mode, tree, tmp_path)
    assert res["mode"] == mode and res["wall_s"] > 0 and res["cpu_s"] > 0
    assert res["nodes"] == 4  # the file and its three functions, whatever the variant
    assert res["resolved_calls"] == resolved
    assert not (tmp_path / f"store-{mode}").exists()


def test_report_states_growth_against_the_index_without_the_resolver() -> None:
    row = {"cpu_s": 1.0, "call_edges": 2, "resolved_calls": 2}
    res = {
        "rounds": 1,
        "growth": 1.5,
        "summary": {
            "full": {**row, "wall_s": 3.0},
            "no-flow": {**row, "wall_s": 2.5},
            "none": {**row, "wall_s": 2.0},
        },
    }
    text = ro.render(res)
    assert "full / none = 1.50 (target <= 1.25: missed)" in text
    assert text.splitlines()[2].split()[:4] == ["full", "3.00", "1.00", "1.50"]

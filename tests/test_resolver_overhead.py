"""bench/resolver_overhead.py's variants on a small tree indexed here (no download): `full`
resolves the Python calls through the value flow, `no-flow` and `none` leave them unresolved,
`names` matches them by name, and the report states the growth against `none`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import resolver_overhead as ro

CODE = "def helper():\n    pass\n\n\ndef run():\n    helper()\n\n\ndef other():\n    helper()\n"
# `h` is the same object under another name: only the value flow sees through it
ALIAS = "from app import helper\n\n\ndef third():\n    h = helper\n    h()\n"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    (root / "app.py").write_text(CODE)
    (root / "alias.py").write_text(ALIAS)
    return root


@pytest.mark.parametrize(
    ("mode", "resolved"), [("full", 3), ("no-flow", 0), ("none", 0), ("names", 2)]
)
def test_each_variant_resolves_what_it_says(tree: Path, tmp_path: Path, mode, resolved) -> None:
    res = ro._run_one(mode, tree, tmp_path)
    assert res["mode"] == mode and res["wall_s"] > 0 and res["cpu_s"] > 0
    assert res["nodes"] == 6  # the two files and their four functions, whatever the variant
    assert res["resolved_calls"] == res["default_calls"] == resolved
    assert not (tmp_path / f"store-{mode}").exists()


def test_report_states_growth_against_the_index_without_the_resolver() -> None:
    row = {"cpu_s": 1.0, "call_edges": 2, "resolved_calls": 2, "default_calls": 1}
    res = {
        "rounds": 1,
        "growth": 1.5,
        "summary": {
            "full": {**row, "wall_s": 3.0},
            "no-flow": {**row, "wall_s": 2.5},
            "none": {**row, "wall_s": 2.0},
            "names": {**row, "wall_s": 2.2},
        },
    }
    text = ro.render(res)
    assert "full / none = 1.50 (target <= 1.25: missed)" in text
    assert text.splitlines()[2].split() == ["full", "3.00", "1.00", "1.50", "2", "1"]
    assert text.splitlines()[5].split()[:4] == ["names", "2.20", "1.00", "1.10"]


FAKE_PYCG = """import json, sys, time
args = sys.argv[1:]
out = args[args.index("--output") + 1]
entries = [a for a in args if a.endswith(".py")]
if any(e.endswith("slow.py") for e in entries):
    time.sleep(30)
if any(e.endswith("bad.py") for e in entries):
    sys.exit("IndexError: list index out of range")
json.dump({"entries": len(entries)}, open(out, "w"))
"""


@pytest.fixture
def fake_pycg(tmp_path: Path, monkeypatch) -> Path:
    """A stand-in for the PyCG sdist: finishes, fails or hangs by the entry modules' names."""
    import callgraph_bench

    runner = tmp_path / "runner"
    (runner / "pycg").mkdir(parents=True)
    (runner / "pycg" / "__init__.py").write_text("")
    (runner / "pycg" / "__main__.py").write_text(FAKE_PYCG)
    monkeypatch.setattr(callgraph_bench, "pycg_runner", lambda: runner)
    tree = tmp_path / "tree"
    for name in ("pkg/a.py", "pkg/b.py", "pkg/bad.py", "slow.py"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text("x = 1\n")
    return tree


@pytest.mark.parametrize(
    ("entries", "modules", "outcome", "detail"),
    [
        ("pkg/[ab].py", 2, "finished", ""),
        ("pkg/*.py", 3, "failed", "IndexError: list index out of range"),
        ("slow.py", 1, "timeout", "no call graph after 2 s"),
    ],
)
def test_pycg_peer_reports_how_the_peer_ended(fake_pycg, entries, modules, outcome, detail):
    res = ro.pycg_peer(fake_pycg, entries, timeout=2)
    assert (res["modules"], res["outcome"], res["detail"]) == (modules, outcome, detail)
    assert 0 < res["wall_s"] <= 2 + 1e-9 if outcome == "timeout" else res["wall_s"] < 2
    assert res["entries"] in ro.render_peer([res])


def test_pycg_peer_with_no_entry_module_is_a_clear_error(fake_pycg):
    with pytest.raises(ro.c.Unavailable, match=r"no module under .* matches nothing/\*\.py"):
        ro.pycg_peer(fake_pycg, "nothing/*.py", timeout=2)


@pytest.mark.slow
def test_real_pycg_finishes_on_a_small_tree(tree: Path):
    """PyCG 0.0.7 itself (downloaded into the bench cache; skips without network)."""
    try:
        import callgraph_bench

        callgraph_bench.pycg_runner()
    except ro.c.Unavailable as exc:
        pytest.skip(str(exc))
    res = ro.pycg_peer(tree, "*.py", timeout=120)
    assert (res["modules"], res["outcome"]) == (2, "finished")  # app.py and alias.py

"""The eval harness of bench/: held-out halves, the BM25 baselines and short_dev's scoring rule.

Quick and offline (the sample shop only); the run on the real short_dev corpora downloads three
sdists and is marked ``slow``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import _bm25  # noqa: E402
import _common  # noqa: E402
import _splits  # noqa: E402
import short_eval  # noqa: E402
import swebench_eval  # noqa: E402


def test_halves_are_stable_stratified_and_complete() -> None:
    rows = [
        {"id": f"{p}-{i:02d}", "project": p, "category": "abcde"[i % 5]}
        for p in ("httpx", "jinja2", "rich")
        for i in range(1, 26)
    ]
    halves = _splits.short_halves(rows)
    assert halves == _splits.short_halves(list(reversed(rows)))  # order of the file is irrelevant
    assert set(halves) == {r["id"] for r in rows} and set(halves.values()) == {"dev", "test"}
    for key in ("category", "project"):
        for value in {r[key] for r in rows}:
            n = Counter(halves[r["id"]] for r in rows if r[key] == value)
            assert abs(n["dev"] - n["test"]) <= 1 + (key == "project") * 2, (key, value, n)
    assert abs(Counter(halves.values())["dev"] - 75 / 2) <= 1
    picked = _splits.pick(rows, halves, "test", lambda r: r["id"])
    assert picked and all(halves[r["id"]] == "test" for r in picked)
    assert _splits.pick(rows, halves, "all", lambda r: r["id"]) == rows
    with pytest.raises(ValueError):
        _splits.pick(rows, halves, "train", lambda r: r["id"])


def test_swebench_halves_by_repository() -> None:
    rows = [{"instance_id": f"o__r{j}-{i}", "repo": f"o/r{j}"} for j in range(3) for i in range(7)]
    halves = _splits.swebench_halves(rows)
    for j in range(3):
        n = Counter(halves[r["instance_id"]] for r in rows if r["repo"] == f"o/r{j}")
        assert abs(n["dev"] - n["test"]) == 1
    assert _splits.id_key("django__django-11099") == _splits.id_key("django__django-11099")


def test_tokenizers() -> None:
    text = "HTTPStatusError in getResponse2 via _redirect_method, AsyncClient"
    assert _bm25.tokens_plain(text) == [
        "httpstatuserror", "in", "getresponse2", "via", "redirect", "method", "asyncclient",
    ]  # fmt: skip
    assert _bm25.tokens_ident(text) == [
        "http", "status", "error", "in", "get", "response", "2", "via", "redirect", "method",
        "async", "client",
    ]  # fmt: skip
    assert _bm25.name_tokens("BaseClient._redirect_method") == [
        "base",
        "client",
        "redirect",
        "method",
    ]
    assert _bm25.parse_system("bm25-symbol-ident") == ("symbol", "ident", False)
    assert _bm25.parse_system("bm25-file-plain-src") == ("file", "plain", True)
    assert _bm25.parse_system("bm25") is None and _bm25.parse_system("bm25-file-x") is None
    assert _bm25.parse_system("bm25-file-plain-x") is None
    tests = ["tests/a.py", "sympy/core/tests/test_basic.py", "testing/x.py", "pkg/conftest.py"]
    tests += ["pkg/test_io.py", "pkg/io_test.py", "django/test/utils.py", "app/tests.py"]
    assert all(_bm25.is_test_path(p) for p in tests)
    src = ["xarray/testing.py", "pkg/attest.py", "_pytest/pytester.py", "contest/x.py"]
    assert not any(_bm25.is_test_path(p) for p in src)


def test_bm25_formula_and_ties() -> None:
    docs = [["a", "b", "b"], ["b", "c"], ["c"], ["a", "b", "b"]]
    index = _bm25.BM25(docs)
    order = index.search(["b", "a", "a"]).tolist()
    assert order == [0, 3, 1]  # 2 has no query term; 0 and 3 tie and keep document order
    avgdl = 9 / 4
    df_a, df_b, n = 2, 3, 4

    def idf(df: int) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def part(tf: int, dl: int, df: int) -> float:
        return idf(df) * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))

    expected = part(1, 3, df_a) + part(2, 3, df_b)
    import numpy as np

    scores = np.zeros(4)
    for t in ("a", "b"):
        d, f = index.postings[t]
        scores[d] += index.idf[t] * f * 2.2 / (f + index.norm[d])
    assert scores[0] == pytest.approx(expected)


def test_python_symbols_follow_short_dev() -> None:
    src = (
        "import typing\n"
        "if typing.TYPE_CHECKING:\n"
        "    def guarded(): pass\n"
        "try:\n"
        "    class Fallback: pass\n"
        "except ImportError:\n"
        "    pass\n"
        "@decorator\n"
        "class Outer:\n"
        "    class Inner:\n"
        "        def deep(self): pass\n"
        "    @property\n"
        "    def value(self):\n"
        "        def helper(): pass\n"
        "        return 1\n"
        "    @value.setter\n"
        "    def value(self, v): pass\n"
    )
    syms = _bm25.python_symbols(src)
    quals = [s[0] for s in syms]
    assert quals == [
        "guarded", "Fallback", "Outer", "Outer.Inner", "Outer.Inner.deep", "Outer.value",
        "Outer.value",
    ]  # fmt: skip
    outer = syms[2]
    assert outer[1] == "class" and outer[2] == 8 and outer[4].startswith("@decorator")


def test_baseline_corpora_on_the_shop(shop_graph) -> None:
    root = Path(shop_graph.root)
    corpora = _bm25.corpora(root, shop_graph, _bm25.SYSTEMS)
    assert set(corpora) == set(_bm25.SYSTEMS)
    files = corpora["bm25-file-plain"]
    assert "services/payments/refund_processor.py" in files.ids
    assert all(not p.startswith(".ctxframe") for p in files.ids)
    symbols = corpora["bm25-symbol-ident"]
    node_ids = set(shop_graph.nodes["id"].to_list())
    assert symbols.ids and all("::" in i for i in symbols.ids)
    assert sum(i in node_ids for i in symbols.ids) / len(symbols.ids) > 0.9  # ctxframe's ids
    hits = symbols.search("refund processing")
    assert "refund" in symbols.ids[hits[0]].lower()


def test_short_dev_scoring_rule() -> None:
    gold = ["a.py::Client", "b.py::send"]
    kinds = {"a.py::Client": "class", "b.py::send": "function"}
    method = short_eval.Ranked(["c.py::x", "a.py::Client.get"], ["c.py", "a.py"], ["c.py", "a.py"])
    assert short_eval.score(method, gold, ["a.py", "b.py"], kinds) == {
        "symbol_rank": 2,
        "file_rank": 2,
    }
    cls = short_eval.Ranked(["b.py::Sender"], ["b.py"], ["b.py"])  # a class is not its methods
    assert short_eval.score(cls, ["b.py::Sender.send"], ["b.py"], {}) == {
        "symbol_rank": None,
        "file_rank": 1,
    }
    files_only = short_eval.Ranked(None, None, ["c.py", "b.py"])
    assert short_eval.score(files_only, gold, ["b.py"], kinds) == {
        "symbol_rank": None,
        "file_rank": 2,
    }
    assert short_eval.to_node_id("src/jinja2/x.py:Env.get") == "src/jinja2/x.py::Env.get"
    assert short_eval.base_id("x.py::Console.file#2") == "x.py::Console.file"
    assert short_eval.base_id("x.py::Issue#12") == "x.py::Issue"
    assert short_eval.base_id("docs/a#b.md") == "docs/a#b.md"  # a path, not a repeated name


def test_swebench_answers_score_files_and_definitions(shop_graph) -> None:
    ans = swebench_eval.answer_ctxframe(shop_graph, "refund processor", "idf-tiers")
    assert ans.files and min(ans.files.values()) == 1
    assert ans.definitions and "services/payments/refund_processor.py" not in ans.definitions
    assert any(d.startswith("services/payments/refund_processor.py::") for d in ans.definitions)
    corpus = _bm25.corpora(Path(shop_graph.root), shop_graph, ["bm25-file-ident"])
    fans = swebench_eval.answer_bm25(corpus["bm25-file-ident"], "refund processor")
    assert fans.definitions is None and fans.file_ranks(["nope.py"]) == [None]


def test_eval_data_dir_env(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXFRAME_EVAL_DATA", str(tmp_path))
    assert _common.eval_data_dir() == tmp_path


@pytest.mark.slow
def test_short_eval_reproduces_the_published_baseline(tmp_path: Path) -> None:
    """Downloads the three sdists (sha256 checked) and indexes them once into the bench cache."""
    data = _common.eval_data_dir() / "short_dev"
    if not (data / "questions-dev.jsonl").is_file():
        pytest.skip(f"no short_dev data at {data}")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "short_eval.py"),
            "--rules",
            "idf-tiers",
            "bm25-symbol-plain",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((tmp_path / "summary-all.json").read_text())
    overall = {r["system"]: r for r in summary["by_category_all"] if r["category"] == "all"}
    assert overall["bm25-symbol-plain"]["n"] == 74
    assert overall["bm25-symbol-plain"]["symbol_acc@1"] == 25.7
    assert overall["bm25-symbol-plain"]["symbol_acc@5"] == 51.4
    assert "half: all" in proc.stdout and "abstain" in proc.stdout

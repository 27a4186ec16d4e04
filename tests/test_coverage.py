"""The per-language coverage report: files, parse errors, nodes by kind, resolved-call share."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import ctxframe as cf


def test_coverage_counts_per_language(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "import os\n\n\ndef f():\n    g()\n    os.getcwd()\n    h()\n\n\ndef g():\n    pass\n"
    )
    (tmp_path / "b.c").write_text("int k(void) { return j(; }\nint j(void) { return k(); }\n")
    (tmp_path / "README.md").write_text("# Title\n")
    g = cf.index(str(tmp_path), store=str(tmp_path / "store"), progress=False)
    cov = {r["language"]: r for r in g.coverage().iter_rows(named=True)}
    py = cov["python"]
    assert (py["files"], py["files_with_errors"], py["parse_errors"]) == (1, 0, 0)
    assert py["nodes"] == 2 and py["nodes_by_kind"] == "function 2"
    # f calls g (resolved), os.getcwd (external) and h (nothing): 1 of 3
    assert (py["calls"], py["calls_resolved"]) == (3, 1)
    # g through its binding: EXTRACTED; nothing only by type or a unique name
    assert (py["calls_extracted"], py["calls_inferred"], py["calls_ambiguous"]) == (1, 0, 0)
    assert py["resolved_share"] == round(1 / 3, 3)
    c = cov["c"]
    assert c["files"] == 1 and c["files_with_errors"] == 1 and c["parse_errors"] >= 1
    assert cov["markdown"]["nodes_by_kind"] == "document 1, section 1"
    assert cov["markdown"]["resolved_share"] is None
    assert set(g.coverage().columns) >= {"language", "files", "parse_errors", "resolved_share"}


def test_index_report_prints_coverage(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return f()\n")
    g = cf.index(str(tmp_path), store=str(tmp_path / "store"), progress=False)
    text = str(g.report)
    assert text.startswith("indexed ")
    assert "coverage by language:" in text and "python" in text and "100%" in text
    rows = g.report.to_dict()["coverage"]
    assert rows == g.coverage().to_dicts()
    assert pl.DataFrame(rows)["calls"].to_list() == [1]

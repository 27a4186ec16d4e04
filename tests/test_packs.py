"""Language packs from REPO/.ctxframe/packs/<language>/: the shipped Ruby example, a broken
pack (reported with its file and the query error while other languages index on), and a
grammar whose parser never returns (bounded by the per-file time limit)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import polars as pl

import ctxframe as cf

EXAMPLE = Path(__file__).resolve().parent.parent / "data-samples" / "packs" / "ruby"

RUBY = """module Shop
  class Cart < Base
    def add(sku, qty = 1)
      validate(qty)
      self.total
    end

    def total
      42
    end

    def validate(qty)
      raise ArgumentError, "qty" unless qty.positive?
    end
  end

  class Base; end
end
"""


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "shop.rb").write_text(RUBY)
    (repo / "app.py").write_text(
        "def main():\n    return helper()\n\n\ndef helper():\n    return 1\n"
    )
    return repo


def test_example_pack_indexes_ruby(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shutil.copytree(EXAMPLE, repo / ".ctxframe" / "packs" / "ruby")
    g = cf.index(str(repo), progress=False)
    nodes = {r["id"]: r for r in g.nodes.iter_rows(named=True)}
    assert nodes["shop.rb::Shop"]["kind"] == "namespace"  # @definition.module
    assert nodes["shop.rb::Shop.Cart"]["kind"] == "class"
    assert nodes["shop.rb::Shop.Cart.add"]["kind"] == "method"
    assert (
        nodes["shop.rb::Shop.Cart.add"]["line_start"],
        nodes["shop.rb::Shop.Cart.add"]["line_end"],
    ) == (3, 6)
    assert nodes["shop.rb::Shop.Cart.add"]["language"] == "ruby"
    edges = g.edges
    for src, dst, kind, conf in [
        ("shop.rb::Shop.Cart.add", "shop.rb::Shop.Cart.validate", "calls", "EXTRACTED"),
        ("shop.rb::Shop.Cart.add", "shop.rb::Shop.Cart.total", "calls", "EXTRACTED"),
        ("shop.rb::Shop.Cart", "shop.rb::Shop.Base", "extends", "EXTRACTED"),
    ]:
        hit = edges.filter(
            (pl.col("src") == src) & (pl.col("dst") == dst) & (pl.col("kind") == kind)
        )
        assert hit["confidence"].to_list() == [conf], (src, dst, kind)
    assert g.report.pack_errors == []
    assert "ruby" in set(g.coverage()["language"])
    assert "app.py::main" in set(g.nodes["id"])


def test_pack_added_later_reparses_unchanged_files(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    g = cf.index(str(repo), progress=False)
    assert g.files.filter(pl.col("path") == "shop.rb")["language"].to_list() == [None]
    shutil.copytree(EXAMPLE, repo / ".ctxframe" / "packs" / "ruby")
    g = cf.index(str(repo), progress=False)
    assert g.files.filter(pl.col("path") == "shop.rb")["language"].to_list() == ["ruby"]
    assert "shop.rb::Shop.Cart.add" in set(g.nodes["id"])


def test_broken_pack_is_reported_and_others_index(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    pack = repo / ".ctxframe" / "packs" / "ruby"
    shutil.copytree(EXAMPLE, pack)
    (pack / "tags.scm").write_text("(method name: (_) @name @definition.method\n")  # unbalanced
    g = cf.index(str(repo), progress=False)
    errors = g.report.pack_errors
    assert len(errors) == 1
    assert ".ctxframe/packs/ruby/tags.scm" in errors[0] and "query error" in errors[0]
    assert "pack error: .ctxframe/packs/ruby/tags.scm" in str(g.report)
    ids = set(g.nodes["id"])
    assert "app.py::main" in ids and "app.py::helper" in ids  # Python still indexed
    assert not any(i.startswith("shop.rb::") for i in ids)


def test_pack_with_unknown_grammar_or_no_extensions(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    packs = repo / ".ctxframe" / "packs"
    (packs / "klingon").mkdir(parents=True)
    (packs / "klingon" / "tags.scm").write_text("")
    (packs / "klingon" / "pack.toml").write_text('extensions = [".tlh"]\n')
    (packs / "noext").mkdir()
    (packs / "noext" / "tags.scm").write_text("")
    g = cf.index(str(repo), progress=False)
    text = "\n".join(g.report.pack_errors)
    assert ".ctxframe/packs/klingon/pack.toml: grammar 'klingon' is not bundled" in text
    assert ".ctxframe/packs/noext/pack.toml: needs extensions" in text


def test_hanging_grammar_is_cut_by_the_time_limit(tmp_path: Path) -> None:
    """tree-sitter-language-pack's cobol parser never returns, even on one byte."""
    repo = _repo(tmp_path)
    pack = repo / ".ctxframe" / "packs" / "cobol"
    pack.mkdir(parents=True)
    (pack / "tags.scm").write_text("")
    (pack / "pack.toml").write_text('extensions = [".cbl"]\ntimeout_seconds = 1\n')
    (repo / "a.cbl").write_text("x")
    t0 = time.perf_counter()
    g = cf.index(str(repo), progress=False)
    assert time.perf_counter() - t0 < 30
    row = g.files.filter(pl.col("path") == "a.cbl").row(0, named=True)
    assert row["skip_reason"] == "parse timeout (> 1s)"
    assert "app.py::main" in set(g.nodes["id"])

"""Document sections: nesting by level, fences are not sections, mentions edges."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import ctxframe as cf

DOC = """# Guide

Intro naming `Cart.add` and [the module](src/cart.py).

## Install

```bash
# not a heading inside a backtick fence
pip install shop
```

~~~~
## not a heading inside a tilde fence
~~~~

### Deep

`checkout()` and `Missing.thing` and `Cart`.

## Usage

    # indented code: not a heading

Call `helper` here.
"""

CODE = """class Cart:
    def add(self, sku):
        return sku


def checkout(cart):
    return cart


def helper():
    return 1
"""


def _index(tmp_path: Path) -> cf.Graph:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "cart.py").write_text(CODE)
    (tmp_path / "other.py").write_text("def helper():\n    return 2\n")
    (tmp_path / "GUIDE.md").write_text(DOC)
    return cf.index(str(tmp_path), store=str(tmp_path / "store"), progress=False)


def test_sections_nest_by_level_with_line_ranges(tmp_path: Path) -> None:
    g = _index(tmp_path)
    docs = g.nodes.filter(pl.col("path") == "GUIDE.md").sort("line_start")
    rows = [
        (r["id"], r["kind"], r["line_start"], r["line_end"], r["parent"])
        for r in docs.iter_rows(named=True)
    ]
    assert set(rows) == {
        ("GUIDE.md", "file", 1, 24, None),
        ("GUIDE.md::document", "document", 1, 24, "GUIDE.md"),
        ("GUIDE.md::Guide", "section", 1, 24, "GUIDE.md::document"),
        ("GUIDE.md::Guide > Install", "section", 5, 19, "GUIDE.md::Guide"),
        ("GUIDE.md::Guide > Install > Deep", "section", 16, 19, "GUIDE.md::Guide > Install"),
        ("GUIDE.md::Guide > Usage", "section", 20, 24, "GUIDE.md::Guide"),
    }
    assert g.nodes.filter(pl.col("id") == "GUIDE.md::document")["label"].to_list() == ["Guide"]
    contains = g.edges.filter((pl.col("kind") == "contains") & (pl.col("path") == "GUIDE.md"))
    assert set(zip(contains["src"], contains["dst"], strict=True)) >= {
        ("GUIDE.md::Guide", "GUIDE.md::Guide > Install"),
        ("GUIDE.md::Guide > Install", "GUIDE.md::Guide > Install > Deep"),
    }


def test_fenced_and_indented_code_are_not_sections(tmp_path: Path) -> None:
    g = _index(tmp_path)
    labels = set(g.nodes.filter(pl.col("kind") == "section")["label"])
    assert not any("not a heading" in s for s in labels)
    assert labels == {"Guide", "Install", "Deep", "Usage"}


def test_mentions_edges(tmp_path: Path) -> None:
    g = _index(tmp_path)
    m = g.edges.filter(pl.col("kind") == "mentions")
    got = {(r["src"], r["dst"], r["confidence"]) for r in m.iter_rows(named=True)}
    assert ("GUIDE.md::Guide", "src/cart.py::Cart.add", "INFERRED") in got
    assert ("GUIDE.md::Guide", "src/cart.py", "INFERRED") in got  # a link to a file
    assert ("GUIDE.md::Guide > Install > Deep", "src/cart.py::checkout", "INFERRED") in got
    assert ("GUIDE.md::Guide > Install > Deep", "src/cart.py::Cart", "INFERRED") in got
    # two definitions named helper: AMBIGUOUS, one row each
    assert ("GUIDE.md::Guide > Usage", "src/cart.py::helper", "AMBIGUOUS") in got
    assert ("GUIDE.md::Guide > Usage", "other.py::helper", "AMBIGUOUS") in got
    assert not m.filter(pl.col("name") == "Missing.thing").height  # names nothing: no edge
    assert m["dst"].null_count() == 0
    # the section's own text only: Guide does not mention what its subsection names
    assert ("GUIDE.md::Guide", "src/cart.py::checkout", "INFERRED") not in got


def test_rst_headings_and_literal_blocks(tmp_path: Path) -> None:
    (tmp_path / "index.rst").write_text(
        "=====\nTitle\n=====\n\nIntro.\n\nPart\n====\n\nExample::\n\n    Not\n    ===\n\n"
        "Sub\n---\n\nText.\n"
    )
    g = cf.index(str(tmp_path), store=str(tmp_path / "store"), progress=False)
    secs = g.nodes.filter(pl.col("kind") == "section").sort("line_start")
    assert secs["qualname"].to_list() == ["Title", "Title > Part", "Title > Part > Sub"]
    assert secs["line_start"].to_list() == [1, 7, 15]

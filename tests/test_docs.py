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


RST_MENTIONS = [
    # (section text, mentioned id or None)
    ("Use `.Context.sudo` to escalate.", "invoke/context.py::Context.sudo"),  # default role
    ("Call `~.Context.run` or :meth:`Context.run`.", "invoke/context.py::Context.run"),
    ("See `~invoke.context.Context.run`.", "invoke/context.py::Context.run"),  # module path
    ("See :meth:`~invoke.context.Context.sudo()`.", "invoke/context.py::Context.sudo"),
    ("See :ref:`deduping`.", None),  # a label, not code
    ("Type ``deduping`` here.", None),  # a bare word never names a test's own definition
    ("Set :envvar:`run` here.", None),
    ("Edit :file:`invoke/context.py`.", "invoke/context.py"),  # a file, by path
    ("Read `the guide`_ first.", None),  # a hyperlink reference
    ("Type ``Context`` for the class.", "invoke/context.py::Context"),
]


def test_rst_mentions_follow_sphinx_roles(tmp_path: Path) -> None:
    """Sphinx cross-references: the default role's `interpreted text`, `.`/`~` prefixes and
    module paths; roles naming labels or terms are not code; a test class named after the
    code never takes its place."""
    (tmp_path / "invoke").mkdir()
    (tmp_path / "invoke" / "context.py").write_text(
        "class Context:\n    def sudo(self):\n        pass\n\n    def run(self):\n        pass\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "context.py").write_text(
        "class Context:\n    def run(self):\n        pass\n\n\nclass Other:\n"
        "    def deduping(self):\n        pass\n\n    def run(self):\n        pass\n"
    )
    doc = "".join(f"Part {i}\n======\n\n{text}\n\n" for i, (text, _) in enumerate(RST_MENTIONS))
    (tmp_path / "guide.rst").write_text(doc)
    g = cf.index(str(tmp_path), store=str(tmp_path / "store"), progress=False)
    m = g.edges.filter(pl.col("kind") == "mentions")
    got = {s: set(d["dst"]) for (s,), d in m.group_by("src")}
    for i, (text, want) in enumerate(RST_MENTIONS):
        assert got.get(f"guide.rst::Part {i}", set()) == ({want} if want else set()), text

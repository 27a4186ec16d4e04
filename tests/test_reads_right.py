"""Answers that read right: a card's whole docstring sentence and signature, builtins and
call expressions as a person names them, boundary places and truncation counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ctxframe as cf
from ctxframe.cli import main
from tests._tree import write_tree

APP = '''\
class Session:
    def ensure_sync(self, func):
        return func

    def save_session(
        self, app: "Flask", session: dict, response: "Response"
    ) -> None:
        """This is called at the end of each request, after generating
        a response, before removing the request context.

        It is skipped if the session is null.
        """
        raise NotImplementedError()

    def dispatch(self, rule, view_functions):
        """Does the request dispatching.  Matches the URL and returns the
        return value of the view."""
        if not isinstance(rule, str):
            raise ValueError(len(view_functions))
        return self.ensure_sync(view_functions[rule.endpoint])(rule)


def wide(
    first,
    second=("a", "(b"),
    *rest,
    **options,
):
    return first
'''


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("app"), {"app.py": APP})
    return cf.index(str(root), progress=False)


def test_a_multi_line_signature_is_whole(g) -> None:
    card = g.card("Session.save_session")
    assert card.node["signature"] == (
        'def save_session(self, app: "Flask", session: dict, response: "Response") -> None:'
    )
    assert "  sig: def save_session(self, app" in str(card)
    wide = 'def wide(first, second=("a", "(b"), *rest, **options):'
    assert g.card("wide").node["signature"] == wide


def test_a_one_line_signature_is_unchanged(g) -> None:
    assert g.card("Session.ensure_sync").node["signature"] == "def ensure_sync(self, func):"


def test_the_doc_line_is_the_first_paragraph(g) -> None:
    text = str(g.card("Session.save_session"))
    assert (
        "  doc: This is called at the end of each request, after generating a response, "
        "before removing the request context.\n"
    ) in text
    assert "Keyword" not in text and "skipped" not in text
    html = g.card("Session.save_session")._repr_html_()
    assert "after generating a response, before removing" in html
    explained = str(g.explain("Session.dispatch"))
    assert "“Does the request dispatching. Matches the URL and returns the return" in explained


def test_builtins_are_builtins_not_unresolved(g) -> None:
    card = g.card("Session.dispatch")
    text = str(card)
    for name in ("ValueError", "isinstance", "len"):
        assert f"→ calls {name} (builtin)" in text
        assert f"→ calls {name} (unresolved)" not in text
    assert "→ calls NotImplementedError (builtin)" in str(g.card("Session.save_session"))
    assert "(builtin)" in card._repr_html_()
    assert "uses the builtins" in str(g.explain("Session.dispatch"))


def test_a_call_of_a_call_is_named_by_its_callee(g) -> None:
    card = g.card("Session.dispatch")
    text = str(card)
    assert "view_functions[rule.endpoint]" not in text
    assert "→ calls self.ensure_sync(…) (unresolved)" in text
    assert "view_functions[rule.endpoint]" not in card._repr_html_()
    # the data keeps the name as written
    assert "self.ensure_sync(view_functions[rule.endpoint])" in card.callees["other_label"]


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        ("getattr", "getattr"),
        ("self.save", "self.save"),
        ("self.ensure_sync(self.view_functions[rule.endpoint])", "self.ensure_sync(…)"),
        ("a.b(c)(d)", "a.b(…)(…)"),
        ("handlers[kind]", "handlers[…]"),
        ("f(g(h(x)))", "f(…)"),
    ],
)
def test_callee_labels(label: str, shown: str) -> None:
    from ctxframe._render.text import callee_label

    assert callee_label(label) == shown


def test_the_cold_card_reads_the_same(g, capsys) -> None:
    """The card cache's path (a fresh `ctxframe card` process) prints what the Graph prints."""
    argv = ["card", "Session.dispatch", "--repo", g.root]
    assert main(argv) == 0
    normal = capsys.readouterr().out
    assert main(argv) == 0  # answered from the card cache written by the first
    assert capsys.readouterr().out == normal
    assert "(builtin)" in normal and "Does the request dispatching. Matches" in normal


# -- boundaries --------------------------------------------------------------------------------

PYPROJECT = """\
[project]
name = "demo"
description = "uses polars and PyStemmer"
dependencies = [
    "polars>=1.40",
    "PyStemmer>=2.2",
    "Jinja2",
]

[project.optional-dependencies]
mcp = ["mcp==2.3.0"]  # the mcp server
"""


def test_a_dependency_says_its_line(tmp_path: Path, capsys) -> None:
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "a.py": "import polars\n"})
    g = cf.index(str(root), progress=False)
    table = g.boundaries().table.to_dicts()
    rows = {r["identifier"]: r for r in table if r["kind"] == "dep" and r["via"] == "declares"}
    assert {k: rows[k]["line"] for k in ("polars", "pystemmer", "jinja2", "mcp")} == {
        "polars": 5,
        "pystemmer": 6,
        "jinja2": 7,
        "mcp": 11,
    }
    assert main(["boundaries", "--repo", str(root)]) == 0
    out = capsys.readouterr().out
    assert ":None" not in out and "pyproject.toml:6)" in out


def test_truncation_counts_the_rows_left_out(tmp_path: Path) -> None:
    reads = "".join(f'    os.environ.get("VAR_{i:03d}")\n' for i in range(120))
    root = write_tree(tmp_path / "r", {"app.py": f"import os\n\ndef f():\n{reads}"})
    res = cf.index(str(root), progress=False).boundaries()
    assert res.table.height == 120
    text = res.render(budget_tokens=300)
    shown = sum(1 for line in text.splitlines() if line.startswith("  VAR_"))
    assert 0 < shown < 120
    assert text.splitlines()[-1].startswith(f"… truncated: {120 - shown} more boundary rows")
    assert json.loads(json.dumps(res.to_dict()))["rows"][0]["identifier"] == "VAR_000"


def test_a_query_hit_lists_builtins_as_builtins(g) -> None:
    res = g.query("dispatch rule view functions", limit=3)
    text, html = str(res), res._repr_html_()
    assert "→ calls ValueError (builtin)" in text and "ValueError (builtin)" in html
    assert "(unresolved)" not in text.split("→ calls self.ensure_sync")[0].split("dispatch")[-1]
    assert "→ calls self.ensure_sync(…) (unresolved)" in text
    ctx = g.context("dispatch rule view functions", budget_tokens=1500).render()
    assert "calls ValueError (builtin)" in ctx and "calls ValueError (unresolved)" not in ctx

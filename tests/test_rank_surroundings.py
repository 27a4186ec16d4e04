"""What a short question's node reads of its surroundings: the content of the functions
nested in it (a closure's body is part of its host's text, `IdfTiers.nested_share`) and, per
query word, what its class says (`IdfTiers.parent_tokens`)."""

from __future__ import annotations

import pytest
from _tree import write_tree

import ctxframe as cf
from ctxframe.rules import IdfTiers

SOURCE = '''
def make_reporter(sink):
    """Build a reporter for the sink."""

    def _report(event):
        # write a warning to the audit journal when a quota overflows
        sink.write("quota overflow", event)

    return _report


def overflow_check(level):
    """Say whether a level is too high."""
    return level > 10


def render_panel(rows):
    """Draw the panel."""

    def on_click(row):
        return rows.index(row)

    return on_click


class Chunk:
    """A piece of styled output text."""

    def fuse(self, others):
        # combine neighbours that share one style
        return [self] + list(others)

    def width(self):
        return 0


def fuse_styles(left, right):
    """Combine two styles into one."""
    return left
'''


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> cf.Graph:
    root = write_tree(tmp_path_factory.mktemp("nested"), {"app/report.py": SOURCE})
    cf.index(str(root), progress=False)
    return cf.open(str(root))


def _rank(g: cf.Graph, text: str, rule: IdfTiers) -> list[str]:
    hits = g.query(text, rule=rule, limit=10, kinds=["function", "method", "class"]).hits
    return [i.split("::")[1] for i in hits["id"].to_list()]


@pytest.mark.parametrize(
    ("share", "host_before_other"),
    [(0.0, False), (0.25, True)],
)
def test_host_gains_its_closures_content(graph: cf.Graph, share: float, host_before_other: bool):
    ranked = _rank(graph, "audit journal warning quota overflows", IdfTiers(nested_share=share))
    assert ranked[0] == "make_reporter._report"  # the closure itself still leads
    host = ranked.index("make_reporter") if "make_reporter" in ranked else len(ranked)
    assert (host < ranked.index("overflow_check")) is host_before_other


def test_a_closure_the_question_names_stays_above_its_host(graph: cf.Graph):
    # the host says `on_click` too, and gains a quarter of what the closure's own text says
    assert _rank(graph, "click", IdfTiers()) == ["render_panel.on_click", "render_panel"]


@pytest.mark.parametrize(("share", "method_first"), [(0.0, False), (0.2, True)])
def test_a_method_reads_the_words_its_class_says(graph: cf.Graph, share: float, method_first):
    # "piece", "output" and "text" are in the class's docstring only, "combine" and "style"
    # in both the method's body and a rival function's docstring
    ranked = _rank(graph, "combine styled output text pieces", IdfTiers(parent_tokens=share))
    assert (ranked.index("Chunk.fuse") < ranked.index("fuse_styles")) is method_first


def test_default_rule_shares() -> None:
    assert (IdfTiers().nested_share, IdfTiers().parent_tokens) == (0.25, 0.2)

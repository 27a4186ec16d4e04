"""The paraphrase bridge without a model: word associations learned from the repository's own
token table (normalised PMI over the nodes two tokens share), used as a weak tier."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from _tree import write_tree

import ctxframe as cf
from ctxframe._rank.question import Question
from ctxframe.rules import IdfTiers

CLIENT = '''
def send(request, follow_redirects):
    """Hand a request to the transport."""
    return request


def get(url, follow_redirects):
    """Fetch a page."""
    return url


def stream(body, follow_redirects):
    """Open a streamed download."""
    return body


def patch(data, follow_redirects):
    """Update part of a resource."""
    return data


def next_hop(response):
    """Where a chain of redirects goes: its location header."""
    return response.headers["location"]


def parse_cookie(header):
    """Split a cookie header into pairs."""
    return dict(part.split("=") for part in header.split(";"))
'''


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> cf.Graph:
    root = write_tree(tmp_path_factory.mktemp("assoc"), {"http/client.py": CLIENT})
    cf.index(str(root), progress=False)
    return cf.open(str(root))


def _expand(graph, text: str, **kw) -> pl.DataFrame:
    ix = graph._rank_index
    q = Question.parse(text)
    groups = ix.content(q).terms(stemmed=True)
    exp = ix.associations.expand(groups, **kw)
    return exp.with_columns(token=pl.lit(ix._vocab_token).gather(pl.col("token_id")))


def test_a_word_reaches_what_it_goes_with(graph) -> None:
    exp = _expand(graph, "follow", max_share=1.0)
    assert exp["token"][0] == "redirects"
    assert exp["npmi"][0] > 0.5 and exp["count"][0] == 4
    # and never its own stem group (follow, following, followed)
    assert not {"follow", "following", "followed"} & set(exp["token"].to_list())


def test_npmi_is_the_textbook_figure(graph) -> None:
    ix = graph._rank_index
    exp = _expand(graph, "follow", max_share=1.0, min_count=1, min_npmi=-1.0, terms=100)
    assoc = ix.associations
    pairs = assoc.pairs.with_columns(token=pl.lit(ix._vocab_token).gather(pl.col("token")))
    n = graph.nodes.height
    follow = set(pairs.filter(pl.col("token").is_in(["follow", "following", "followed"]))["node"])
    redirects = set(pairs.filter(pl.col("token") == "redirects")["node"])
    both = len(follow & redirects)
    p = both / n
    want = math.log(p / ((len(follow) / n) * (len(redirects) / n))) / -math.log(p)
    got = exp.filter(pl.col("token") == "redirects")["npmi"].item()
    assert got == pytest.approx(want)
    assert exp.filter(pl.col("token") == "redirects")["count"].item() == both


@pytest.mark.parametrize(
    ("kwargs", "empty"),
    [
        ({"min_count": 50}, True),  # no pair is that common
        ({"min_npmi": 1.01}, True),  # npmi is at most 1
        ({"max_nodes": 1}, True),  # `follow` is held by more nodes than that
        ({"max_share": 1.0}, False),
    ],
)
def test_the_thresholds(graph, kwargs, empty) -> None:
    assert _expand(graph, "follow", **kwargs).is_empty() is empty


def test_bridge_is_a_weak_tier_for_nodes_without_the_word(graph) -> None:
    text = "client follow location"  # `client`: a name match (the path), as real questions have
    plain = graph.rank(text, limit=50)["id"].to_list()
    rule = IdfTiers(bridge=0.5, bridge_share=1.0, max_share=1.0)
    res = graph.query(text, limit=50, rule=rule, explain=True)
    ids = res.hits["id"].to_list()
    target = "http/client.py::next_hop"
    # next_hop says `location` but not `follow`; the bridge lets `redirects` stand in
    bridged = res.evidence.filter((pl.col("id") == target) & (pl.col("part") == "bridge"))
    assert bridged.height and bridged["token"].to_list()[0] in ("redirects", "redirect")
    assert bridged["weight"].min() > 0  # its npmi
    assert ids.index(target) <= plain.index(target) if target in plain else target in ids
    per = res.evidence.group_by("rank").agg(pl.col("contribution").sum()).sort("rank")
    assert per["contribution"].to_list() == pytest.approx(res.hits["score"].to_list(), abs=1.5e-6)


def test_a_node_with_the_word_gets_no_bridge(graph) -> None:
    rule = IdfTiers(bridge=0.5, bridge_share=1.0, max_share=1.0)
    res = graph.query("client follow", limit=20, rule=rule, explain=True)
    holders = {"http/client.py::send", "http/client.py::get", "http/client.py::stream"}
    bridge = res.evidence.filter(pl.col("part") == "bridge")
    assert not holders & set(bridge["id"].to_list())


def test_the_pairs_come_from_every_field(graph) -> None:
    ix = graph._rank_index
    pairs = ix.associations.pairs
    assert pairs.columns == ["node", "token"]
    assert pairs.is_unique().all()
    fields = graph.tokens.select(pl.col("node_id"), "token").unique()
    assert pairs.height == fields.height


def test_off_by_default_costs_nothing(graph) -> None:
    ix = graph._rank_index
    ix.__dict__.pop("associations", None)
    graph.rank("follow the location", limit=10)
    if IdfTiers().bridge == 0:
        assert "associations" not in ix.__dict__


def test_a_named_symbol_stays_first(_shop_index_template: Path) -> None:
    g = cf.open(str(_shop_index_template))
    for text in ("PaymentRefundProcessor", "refund processor", "reconcile"):
        plain = g.rank(text, limit=3)["id"][0]
        assert g.rank(text, limit=3, rule=IdfTiers(bridge=0.5))["id"][0] == plain

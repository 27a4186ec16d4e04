"""Query pipeline: tiers, intent rules, scope levers, determinism, neighbourhood, budget."""

from __future__ import annotations

import json
import math
import re

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._core.paths import glob_to_regex, is_test_path_expr
from ctxframe._core.schema import EDGES, NODES
from ctxframe._graph.edges import MAX_NEIGHBOURS, EdgeIndex
from ctxframe._graph.query import QueryResult, answer, run_query
from ctxframe._rank.ranker import RankIndex
from ctxframe._rank.tokens import build_tokens
from ctxframe._render.budget import estimate_tokens, fit_blocks
from ctxframe.rules import IdfTiers

# ------------------------------------------------------------------ helpers


def make_nodes(rows: list[tuple]) -> pl.DataFrame:
    """(id, kind, label, qualname, path[, line_start, line_end, signature, doc]) -> NODES."""
    recs = []
    for r in rows:
        r = (*r, None, None, None, None)[:9]
        recs.append(
            {
                "id": r[0],
                "kind": r[1],
                "label": r[2],
                "qualname": r[3],
                "language": "python",
                "path": r[4],
                "line_start": r[5],
                "line_end": r[6],
                "signature": r[7],
                "doc": r[8],
                "parent": None,
                "producer": "test",
            }
        )
    return pl.DataFrame(recs, schema=NODES)


def make_edges(rows: list[tuple]) -> pl.DataFrame:
    """(src, dst, kind[, confidence, name, line]) -> EDGES."""
    recs = []
    for r in rows:
        src, dst, kind, conf, name, line = (*r, "EXTRACTED", None, 1)[:6]
        recs.append(
            {
                "src": src,
                "dst": dst,
                "kind": kind,
                "confidence": conf,
                "name": name or (dst or "").split("::")[-1],
                "path": src.split("::")[0],
                "line": line,
                "producer": "test",
            }
        )
    return pl.DataFrame(recs, schema=EDGES)


def filler(n: int = 40) -> list[tuple]:
    """Generic nodes that make IDF meaningful (their tokens never match the test queries)."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    out = []
    for i in range(n):
        w = words[i % len(words)]
        path = f"lib/{w}/mod{i}.py"
        out.append(
            (f"{path}::{w}_helper_{i}", "function", f"{w}_helper_{i}", f"{w}_helper_{i}", path)
        )
    return out


def q(nodes: pl.DataFrame, text: str, edges: pl.DataFrame | None = None, **kw) -> QueryResult:
    return run_query(nodes, edges, build_tokens(nodes), text, **kw)


def ids(result: QueryResult) -> list[str]:
    return result.hits["id"].to_list()


def row(result: QueryResult, node_id: str) -> dict:
    found = result.hits.filter(pl.col("id") == node_id)
    assert found.height == 1, f"{node_id} not in hits {ids(result)}"
    return found.row(0, named=True)


def idf(n: int, df: int) -> float:
    return 0.1 + math.log(n / (1 + df))


# ------------------------------------------------------------------ tiers

TIER_NODES = [
    ("a/one.py::refund", "function", "refund", "refund", "a/one.py"),
    ("b/two.py::RefundCase", "class", "RefundCase", "RefundCase", "b/two.py"),
    ("c/three.py::Refunds", "class", "Refunds", "Refunds", "c/three.py"),
    ("d/four.py::Refnud", "class", "Refnud", "Refnud", "d/four.py"),
    ("e/five.py::Unrelated", "class", "Unrelated", "Unrelated", "e/five.py"),
    *filler(),
]


def test_tiers_in_order_named_exact_prefix_stem_trigram() -> None:
    nodes = make_nodes([*TIER_NODES, ("f/six.py::Refund", "class", "Refund", None, "f/six.py")])
    res = q(nodes, "refunded")  # stem: refunded ~ refund, refunds (neither exact nor prefix)
    assert set(ids(res)[:4]) == {
        "f/six.py::Refund",
        "a/one.py::refund",
        "b/two.py::RefundCase",
        "c/three.py::Refunds",
    }
    assert res.hits["tier"].to_list()[:4] == [3, 3, 3, 3]
    res = q(make_nodes(TIER_NODES), "refund")
    assert ids(res)[:4] == [
        "a/one.py::refund",  # named: the query is its label
        "b/two.py::RefundCase",  # exact token
        "c/three.py::Refunds",  # prefix: refund -> refunds
        "d/four.py::Refnud",  # trigram: refnud ~ refund (Dice 0.5)
    ]
    assert res.hits["tier"].to_list()[:4] == [0, 1, 2, 4]
    assert "e/five.py::Unrelated" not in ids(res)


def test_tier_scores_are_weight_times_idf() -> None:
    nodes = make_nodes(TIER_NODES)
    n = nodes.height
    res = q(nodes, "refund")
    assert row(res, "b/two.py::RefundCase")["score"] == pytest.approx(idf(n, 2), abs=1e-6)
    assert row(res, "c/three.py::Refunds")["score"] == pytest.approx(0.7 * idf(n, 1), abs=1e-6)
    assert row(res, "d/four.py::Refnud")["score"] == pytest.approx(0.4 * idf(n, 1), abs=1e-6)


@pytest.mark.parametrize(
    ("label", "tier"),
    [("RefundCase", 1), ("Refunds", 2), ("Refunding", 2), ("Refnud", 4)],
)
def test_each_tier_in_isolation(label: str, tier: int) -> None:
    nodes = make_nodes([("x/y.py::" + label, "class", label, label, "x/y.py"), *filler()])
    res = q(nodes, "refund")
    assert ids(res) == ["x/y.py::" + label]
    assert res.hits["tier"].item() == tier


def test_named_tier_beats_any_score() -> None:
    # one node is named by the query; another matches every token many times but is not named
    nodes = make_nodes(
        [
            (
                "z/refund/refund.py::refund_refund",
                "function",
                "refund_refund",
                None,
                "z/refund/refund.py",
            ),
            ("z/other.py::Refund", "function", "Refund", None, "z/other.py"),
            *filler(),
        ]
    )
    res = q(nodes, "Refund")
    assert ids(res)[0] == "z/other.py::Refund"
    assert res.hits["tier"][0] == 0


@pytest.mark.parametrize(
    "query",
    [
        "PAYMENTS_API_KEY",  # boundary node: its identifier label
        "payments_api_key",  # case-insensitive
        "env:PAYMENTS_API_KEY",  # its id
        "  PAYMENTS_API_KEY  ",  # stripped
        "payments api key",  # the label's tokens, in order
    ],
)
def test_named_boundary_node(query: str) -> None:
    nodes = make_nodes(
        [
            ("env:PAYMENTS_API_KEY", "env", "PAYMENTS_API_KEY", None, "services/pay/config.py"),
            (
                "services/pay/keys.py::payments_api_key_loader",
                "function",
                "payments_api_key_loader",
                None,
                "services/pay/keys.py",
            ),
            *filler(),
        ]
    )
    res = q(nodes, query)
    assert ids(res)[0] == "env:PAYMENTS_API_KEY"
    assert res.hits["tier"][0] == 0


def test_named_by_qualname_and_id() -> None:
    nodes = make_nodes(
        [
            (
                "s/r.py::PaymentRefundProcessor.ProcessRefund",
                "method",
                "ProcessRefund",
                "PaymentRefundProcessor.ProcessRefund",
                "s/r.py",
            ),
            (
                "s/r.py::PaymentRefundProcessor",
                "class",
                "PaymentRefundProcessor",
                "PaymentRefundProcessor",
                "s/r.py",
            ),
            *filler(),
        ]
    )
    for text in (
        "PaymentRefundProcessor.ProcessRefund",
        "s/r.py::PaymentRefundProcessor.ProcessRefund",
    ):
        res = q(nodes, text)
        assert ids(res)[0] == "s/r.py::PaymentRefundProcessor.ProcessRefund"
        assert res.hits["tier"].to_list()[:2] == [0, 1]


def test_prefix_direction_is_query_to_longer_node_token() -> None:
    nodes = make_nodes([("x.py::Refund", "class", "Refund", None, "x.py"), *filler()])
    # `refunds` is not a prefix of `refund`: reached through trigrams instead
    res = q(nodes, "refunds")
    assert res.hits["tier"].to_list() == [3]
    # short query tokens (< 3 chars) get no fuzzy matches
    assert q(nodes, "re").hits.is_empty()


def test_rarest_prefix_wins_within_a_node() -> None:
    nodes = make_nodes(
        [
            ("p/a.py::refunds_refunding", "function", "refunds_refunding", None, "p/a.py"),
            *[
                (f"p/b{i}.py::refunds_{i}", "function", f"refunds_{i}", None, f"p/b{i}.py")
                for i in range(5)
            ],
            *filler(),
        ]
    )
    n = nodes.height
    res = q(nodes, "refund")
    # refunds is in 6 nodes, refunding in 1: the rarer one scores the prefix tier
    assert row(res, "p/a.py::refunds_refunding")["score"] == pytest.approx(
        0.7 * idf(n, 1), abs=1e-6
    )
    assert ids(res)[0] == "p/a.py::refunds_refunding"


def test_dice_threshold_just_below_and_at() -> None:
    nodes = make_nodes([("x.py::Refund", "class", "Refund", None, "x.py"), *filler()])
    assert q(nodes, "refnud").hits["tier"].to_list() == [4]  # Dice = 8/16 = 0.5
    assert q(nodes, "refnudd").hits.is_empty()  # Dice = 8/17 < 0.5
    assert q(nodes, "refnud", rule=IdfTiers(dice=0.6)).hits.is_empty()


def test_score_sums_best_tier_per_query_token() -> None:
    nodes = make_nodes(
        [
            ("s/pay.py::RefundProcessor", "class", "RefundProcessor", None, "s/pay.py"),
            ("s/pay.py::Refund", "class", "Refund", None, "s/pay.py"),
            *filler(),
        ]
    )
    res = q(nodes, "refund processor")
    assert ids(res)[0] == "s/pay.py::RefundProcessor"
    assert row(res, "s/pay.py::RefundProcessor")["score"] > row(res, "s/pay.py::Refund")["score"]


# ------------------------------------------------------------------ intent rules

INTENT_NODES = [
    ("src/refund_engine.py::RefundEngine", "class", "RefundEngine", None, "src/refund_engine.py"),
    (
        "tests/test_refund_engine.py::RefundEngineSpec",
        "class",
        "RefundEngineSpec",
        None,
        "tests/test_refund_engine.py",
    ),
    (
        "docs/refund-engine.md#refund-engine",
        "section",
        "Refund engine",
        None,
        "docs/refund-engine.md",
    ),
    ("module://refund_engine", "module", "refund_engine", "refund_engine", None),
    *filler(),
]


def _scores(res: QueryResult) -> dict[str, float]:
    return dict(zip(res.hits["id"], res.hits["score"], strict=True))


def test_test_files_are_halved_unless_query_says_test() -> None:
    nodes = make_nodes(INTENT_NODES)
    plain = _scores(q(nodes, "refund engine"))
    src, test = (
        "src/refund_engine.py::RefundEngine",
        "tests/test_refund_engine.py::RefundEngineSpec",
    )
    assert plain[test] < plain[src]
    with_test = _scores(q(nodes, "refund engine tests"))
    assert with_test[test] > with_test[src]  # tests/ and test_ path tokens now count, unhalved
    # the multiplier itself: same matched tokens, half the score
    off = _scores(q(nodes, "refund engine", rule=IdfTiers(test=1.0)))
    assert plain[test] == pytest.approx(off[test] * 0.5, abs=1e-5)


def test_doc_nodes_are_halved_unless_query_says_doc() -> None:
    nodes = make_nodes(INTENT_NODES)
    doc = "docs/refund-engine.md#refund-engine"
    plain = _scores(q(nodes, "refund engine"))
    off = _scores(q(nodes, "refund engine", rule=IdfTiers(doc=1.0)))
    assert plain[doc] == pytest.approx(off[doc] * 0.5, abs=1e-5)
    for word in ("doc", "docs", "documentation", "adr", "spec", "readme"):
        on = _scores(q(nodes, f"refund engine {word}"))
        base = _scores(q(nodes, f"refund engine {word}", rule=IdfTiers(doc=1.0)))
        assert on[doc] == pytest.approx(base[doc], abs=1e-6)


def test_module_stubs_quartered_unless_query_says_import() -> None:
    nodes = make_nodes(INTENT_NODES)
    stub = "module://refund_engine"
    plain = _scores(q(nodes, "refund engine"))
    off = _scores(q(nodes, "refund engine", rule=IdfTiers(stub=1.0)))
    assert plain[stub] == pytest.approx(off[stub] * 0.25, abs=1e-5)
    for word in ("import", "imports", "module", "modules"):
        on = _scores(q(nodes, f"{word} refund engine"))
        base = _scores(q(nodes, f"{word} refund engine", rule=IdfTiers(stub=1.0)))
        assert on[stub] == pytest.approx(base[stub], abs=1e-6)


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/helpers.py", True),
        ("pkg/test/util.py", True),
        ("pkg/test_refund.py", True),
        ("pkg/refund_test.py", True),
        ("conftest.py", True),
        ("pkg/conftest.py", True),
        ("web/src/refund.test.ts", True),
        ("web/src/refund.spec.tsx", True),
        ("web/src/__tests__/refund.ts", True),
        ("go/refund/refund_test.go", True),
        ("pkg/refund.py", False),
        ("pkg/testing_utils.py", False),
        ("pkg/latest/refund.py", False),
        ("pkg/contest.py", False),
        ("go/refund/refund.go", False),
        ("web/src/spec.ts", False),
        (None, False),
    ],
)
def test_test_path_conventions(path: str | None, is_test: bool) -> None:
    got = pl.DataFrame({"path": [path]}, schema={"path": pl.String}).select(is_test_path_expr())
    assert got.item() is is_test


# ------------------------------------------------------------------ determinism, ties


def test_two_runs_identical() -> None:
    nodes = make_nodes(INTENT_NODES + TIER_NODES)
    edges = make_edges([(INTENT_NODES[0][0], TIER_NODES[0][0], "calls")])
    a = q(nodes, "refund engine processor", edges)
    b = q(nodes, "refund engine processor", edges)
    assert a.hits.equals(b.hits)
    assert a.neighbours.equals(b.neighbours)
    assert str(a) == str(b)
    # a shuffled store gives the same answer
    shuffled = nodes.sample(fraction=1.0, shuffle=True, seed=7)
    c = q(shuffled, "refund engine processor", edges)
    assert c.hits.equals(a.hits)


def test_ties_break_by_id_ascending() -> None:
    nodes = make_nodes(
        [
            ("m/c.py::Ledger", "class", "Ledger", None, "m/c.py"),
            ("m/a.py::Ledger", "class", "Ledger", None, "m/a.py"),
            ("m/b.py::Ledger", "class", "Ledger", None, "m/b.py"),
            *filler(),
        ]
    )
    res = q(nodes, "ledger")
    assert ids(res) == ["m/a.py::Ledger", "m/b.py::Ledger", "m/c.py::Ledger"]
    assert len(set(res.hits["score"])) == 1


def test_limit_and_total() -> None:
    nodes = make_nodes(
        [
            (f"m/f{i:02d}.py::ledger_{i}", "function", f"ledger_{i}", None, f"m/f{i:02d}.py")
            for i in range(30)
        ]
        + filler()
    )
    res = q(nodes, "ledger", limit=5)
    assert res.hits.height == 5
    assert res.total == 30
    assert res.hits["rank"].to_list() == [1, 2, 3, 4, 5]


def test_no_match_and_empty_query() -> None:
    nodes = make_nodes(filler())
    assert q(nodes, "zzzqqq").hits.is_empty()
    assert str(q(nodes, "zzzqqq")) == "no matches for 'zzzqqq'"
    assert q(nodes, "").hits.is_empty()
    empty = make_nodes([])
    assert q(empty, "refund").hits.is_empty()


def test_hits_columns() -> None:
    res = q(make_nodes(TIER_NODES), "refund")
    for col in (
        "id",
        "kind",
        "label",
        "path",
        "line_start",
        "line_end",
        "score",
        "tier",
        "signature",
        "doc",
        "rank",
    ):
        assert col in res.hits.columns


# ------------------------------------------------------------------ scope levers

SCOPE_NODES = [
    ("services/payments/refund.py::Refund", "class", "Refund", None, "services/payments/refund.py"),
    ("services/billing/refund.py::Refund", "class", "Refund", None, "services/billing/refund.py"),
    ("vendor/lib/refund.py::Refund", "class", "Refund", None, "vendor/lib/refund.py"),
    ("module://refund", "module", "refund", "refund", None),
    *filler(),
]


@pytest.mark.parametrize(
    ("within", "expected"),
    [
        ("services/payments/**", ["services/payments/refund.py::Refund"]),
        ("services/payments", ["services/payments/refund.py::Refund"]),
        (
            "services/*",
            ["services/billing/refund.py::Refund", "services/payments/refund.py::Refund"],
        ),
        ("**/billing/*.py", ["services/billing/refund.py::Refund"]),
        ("vendor/", ["vendor/lib/refund.py::Refund"]),
        ("nothing/**", []),
    ],
)
def test_within(within: str, expected: list[str]) -> None:
    res = q(make_nodes(SCOPE_NODES), "refund", within=within)
    assert sorted(ids(res)) == expected


def test_deprioritize_multiplies_matching_paths() -> None:
    nodes = make_nodes(SCOPE_NODES)
    plain = _scores(q(nodes, "refund"))
    dep = _scores(q(nodes, "refund", deprioritize=["vendor/**"]))
    v = "vendor/lib/refund.py::Refund"
    assert dep[v] == pytest.approx(plain[v] * 0.5, abs=1e-6)
    assert (
        dep["services/payments/refund.py::Refund"] == plain["services/payments/refund.py::Refund"]
    )
    both = _scores(q(nodes, "refund", deprioritize=["vendor/**", "services/billing"]))
    b = "services/billing/refund.py::Refund"
    assert both[b] == pytest.approx(plain[b] * 0.5, abs=1e-6)
    assert both[v] == pytest.approx(plain[v] * 0.5, abs=1e-6)
    res = q(nodes, "refund", deprioritize=["vendor/**"])
    assert ids(res)[-1] in {v, "module://refund"}
    assert ids(res).index(v) > ids(res).index("services/payments/refund.py::Refund")


def test_project_tokens_are_discounted() -> None:
    nodes = make_nodes(
        [
            ("shop/cart/cart.py::Cart", "class", "Cart", None, "shop/cart/cart.py"),
            ("shop/shop.py::ShopSettings", "class", "ShopSettings", None, "shop/shop.py"),
            ("other/cart_view.py::CartView", "class", "CartView", None, "other/cart_view.py"),
            *filler(),
        ]
    )
    plain = _scores(q(nodes, "shop cart"))
    disc = _scores(q(nodes, "shop cart", project_tokens=["shop"]))
    settings_id = "shop/shop.py::ShopSettings"
    assert disc[settings_id] == pytest.approx(plain[settings_id] * 0.1, abs=1e-6)
    assert ids(q(nodes, "shop cart", project_tokens=["shop"]))[0] == "shop/cart/cart.py::Cart"


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("services/**", "services/a/b/c.py", True),
        ("services/**", "servicesx/a.py", False),
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "a/b/test_a.py", True),
        ("*.py", "a/b/c.py", True),  # fnmatch-style: * crosses directories
        ("src/?.py", "src/a.py", True),
        ("src/[ab].py", "src/b.py", True),
        ("src/[!ab].py", "src/b.py", False),
        ("services/payments", "services/payments/refund.py", True),
        ("services/payments", "services/payments-old/refund.py", False),
        ("./docs/", "docs/adr/1.md", True),
        ("a+b(c)/*.py", "a+b(c)/x.py", True),
    ],
)
def test_glob_to_regex(glob: str, path: str, hit: bool) -> None:
    rx = glob_to_regex(glob)
    assert pl.DataFrame({"p": [path]}).select(pl.col("p").str.contains(rx)).item() is hit


# ------------------------------------------------------------------ neighbourhood

HUB = "svc/refund.py::RefundHub"


def _hub_graph(n_in: int = 3, n_out: int = 3, ambiguous: int = 1):
    rows = [
        (
            HUB,
            "class",
            "RefundHub",
            "RefundHub",
            "svc/refund.py",
            10,
            20,
            "class RefundHub:",
            "Hub.\nMore text.",
        )
    ]
    edges = []
    for i in range(n_in):
        nid = f"svc/caller{i}.py::Caller{i}.run"
        rows.append((nid, "method", "run", f"Caller{i}.run", f"svc/caller{i}.py"))
        edges.append((nid, HUB, "calls", "EXTRACTED", "RefundHub", 5))
    for i in range(n_out):
        nid = f"svc/dep{i}.py::Dep{i}"
        rows.append((nid, "class", f"Dep{i}", f"Dep{i}", f"svc/dep{i}.py"))
        edges.append((HUB, nid, "calls", "INFERRED", f"Dep{i}", 12))
    for i in range(ambiguous):
        nid = f"svc/amb{i}.py::Amb{i}"
        rows.append((nid, "class", f"Amb{i}", f"Amb{i}", f"svc/amb{i}.py"))
        edges.append((HUB, nid, "calls", "AMBIGUOUS", f"Amb{i}", 13))
    edges.append((HUB, None, "calls", None, "requests.post", 14))
    return make_nodes(rows + filler()), make_edges(edges)


def test_neighbours_both_directions_and_unresolved() -> None:
    nodes, edges = _hub_graph()
    res = q(nodes, "RefundHub", edges)
    nb = res.neighbours.filter(pl.col("hit_id") == HUB)
    assert set(nb.filter(pl.col("direction") == "in")["other_label"]) == {
        "Caller0.run",
        "Caller1.run",
        "Caller2.run",
    }
    out = nb.filter(pl.col("direction") == "out")
    assert set(out["other_label"]) == {"Dep0", "Dep1", "Dep2", "requests.post"}
    unresolved = out.filter(pl.col("other_id").is_null())
    assert unresolved["other_label"].to_list() == ["requests.post"]
    for col in ("hit_id", "direction", "edge_kind", "confidence", "other_id", "other_label"):
        assert col in res.neighbours.columns


def test_ambiguous_excluded_unless_asked() -> None:
    nodes, edges = _hub_graph()
    res = q(nodes, "RefundHub", edges)
    assert "AMBIGUOUS" not in res.neighbours["confidence"].to_list()
    res = q(nodes, "RefundHub", edges, include_ambiguous=True)
    amb = res.neighbours.filter(pl.col("confidence") == "AMBIGUOUS")
    assert amb["other_label"].to_list() == ["Amb0"]


def test_neighbours_capped_at_12_per_hit() -> None:
    nodes, edges = _hub_graph(n_in=10, n_out=10, ambiguous=0)
    res = q(nodes, "RefundHub", edges)
    nb = res.neighbours.filter(pl.col("hit_id") == HUB)
    assert nb.height == MAX_NEIGHBOURS == 12
    # EXTRACTED arrows are kept first
    assert nb.filter(pl.col("confidence") == "EXTRACTED").height == 10
    # the cap is per hit: callers that are hits keep their own arrows
    per_hit = res.neighbours.group_by("hit_id").len()
    assert per_hit["len"].max() <= 12


def test_rendering_format() -> None:
    nodes, edges = _hub_graph(n_in=1, n_out=1, ambiguous=0)
    text = str(q(nodes, "RefundHub", edges, limit=1))
    lines = text.splitlines()
    assert lines[0] == "1. RefundHub  [class]  svc/refund.py:L10-L20"
    assert lines[1] == "    sig: class RefundHub:"
    assert lines[2] == "    doc: Hub."
    assert "    ← calls Caller0.run" in lines
    assert "    → calls Dep0 (inferred)" in lines
    assert "    → calls requests.post (unresolved)" in lines
    assert not any("truncated" in line for line in lines)  # a single hit: nothing was cut


def test_to_dict_is_json_safe() -> None:
    nodes, edges = _hub_graph()
    res = q(nodes, "RefundHub", edges)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["query"] == "RefundHub"
    assert d["truncated"] is False
    first = d["hits"][0]
    assert first["id"] == HUB and first["tier"] == 0 and first["line_start"] == 10
    assert {a["direction"] for a in first["neighbours"]} == {"in", "out"}
    assert "<table>" in res._repr_html_()
    assert "RefundHub" in res._repr_html_()


# ------------------------------------------------------------------ budget

lines_st = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=120
)
blocks_st = st.lists(st.lists(lines_st, min_size=1, max_size=6), max_size=30)


@settings(max_examples=300, deadline=None)
@given(
    blocks_st,
    st.integers(min_value=0, max_value=600),
    st.one_of(st.none(), st.integers(min_value=0, max_value=40)),
    st.integers(min_value=0, max_value=50),
)
def test_budget_never_exceeded(blocks, budget, max_blocks, extra) -> None:
    total = len(blocks) + extra
    fitted = fit_blocks(blocks, budget_tokens=budget, max_blocks=max_blocks, total=total)
    assert estimate_tokens(fitted.text) <= budget
    assert fitted.shown <= len(blocks)
    shown_lines = [line for b in blocks[: fitted.shown] for line in b]
    if fitted.shown:
        assert fitted.text.split("\n")[: len(shown_lines)] == shown_lines
    if fitted.shown < total and budget >= 60:
        last = fitted.text.split("\n")[-1]
        assert re.match(rf"… truncated: {total - fitted.shown} more hits \((budget|limit) ", last)
    if fitted.shown == total:
        assert "truncated" not in fitted.text or any("truncated" in ln for ln in shown_lines)


def test_budget_keeps_whole_blocks_and_marks_the_cut() -> None:
    blocks = [[f"{i}. hit {i}", "    sig: " + "x" * 60] for i in range(1, 31)]
    fitted = fit_blocks(blocks, budget_tokens=200)
    assert estimate_tokens(fitted.text) <= 200
    assert 0 < fitted.shown < 30
    assert fitted.text.endswith(f"… truncated: {30 - fitted.shown} more hits (budget 200 tokens)")
    fitted = fit_blocks(blocks, budget_tokens=10_000, max_blocks=20)
    assert fitted.shown == 20
    assert fitted.text.endswith("… truncated: 10 more hits (limit 20)")
    assert fit_blocks(blocks[:3], budget_tokens=10_000).text.count("\n") == 5


def test_query_text_respects_budget() -> None:
    nodes = make_nodes(
        [
            (
                f"m/f{i:02d}.py::ledger_{i}",
                "function",
                f"ledger_{i}",
                None,
                f"m/f{i:02d}.py",
                1,
                9,
                "def ledger(" + "a, " * 30 + "):",
                "Doc line.",
            )
            for i in range(40)
        ]
        + filler()
    )
    res = q(nodes, "ledger", budget_tokens=300)
    text = str(res)
    assert estimate_tokens(text) <= 300
    assert "… truncated:" in text.splitlines()[-1]
    assert res.to_dict()["truncated"] is True
    full = q(nodes, "ledger")
    assert estimate_tokens(str(full)) <= 2000
    assert len(full.hits) == 20


def test_rank_index_reuse_matches_run_query() -> None:
    nodes, edges = _hub_graph()
    index = RankIndex(nodes, build_tokens(nodes))
    a = answer(index.rank("refund hub caller"), EdgeIndex(edges, nodes))
    b = q(nodes, "refund hub caller", edges)
    assert a.hits.equals(b.hits)
    assert a.neighbours.equals(b.neighbours)

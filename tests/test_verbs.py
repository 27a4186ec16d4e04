"""Golden outputs of every graph verb on data-samples/, plus their edge cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ctxframe as cf
from ctxframe._render.budget import estimate_tokens

PROC = "PaymentRefundProcessor.ProcessRefund"

CASES = [
    ("card-found", lambda g: g.card(PROC)),
    ("card-ambiguous-name", lambda g: g.card("format_amount")),
    ("card-not-found", lambda g: g.card("ProcesRefnd")),
    ("card-include-ambiguous", lambda g: g.card("render_receipt", include_ambiguous=True)),
    ("affected-symbol", lambda g: g.affected(PROC)),
    ("affected-file", lambda g: g.affected("services/payments/gateway.py")),
    ("affected-depth1", lambda g: g.affected(PROC, depth=1)),
    ("affected-ambiguous", lambda g: g.affected("PaymentAmount.normalize", include_ambiguous=True)),
    ("path-found", lambda g: g.path("create_refund", "PaymentGateway.Refund")),
    ("path-none", lambda g: g.path("PaymentGateway.Refund", "create_refund")),
    (
        "path-undirected",
        lambda g: g.path("PaymentGateway.Refund", "create_refund", undirected=True),
    ),
    ("change-plan", lambda g: g.change_plan(PROC)),
    ("explain", lambda g: g.explain(PROC)),
    ("explain-file", lambda g: g.explain("services/payments/gateway.py")),
    ("hubs", lambda g: g.hubs(limit=5)),
]


@pytest.mark.parametrize(("name", "call"), CASES, ids=[c[0] for c in CASES])
def test_verb_golden(shop_graph, golden, name, call) -> None:
    res = call(shop_graph)
    golden(f"{name}.txt", str(res) + "\n")
    golden(f"{name}.json", json.dumps(res.to_dict(), indent=2, sort_keys=True, default=str) + "\n")
    assert res._repr_html_().startswith("<")


def test_card_lists_candidates_not_a_guess(shop_graph) -> None:
    res = shop_graph.card("format_amount")
    assert res.status == "ambiguous"
    assert set(res.candidates["id"]) == {
        "services/billing/format.py::format_amount",
        "services/payments/format.py::format_amount",
    }


def test_card_suggests_closest_names(shop_graph) -> None:
    res = shop_graph.card("ProcesRefnd")
    assert res.status == "not-found" and res.suggestions[0] == "ProcessRefund"


def test_ambiguous_excluded_by_default(shop_graph) -> None:
    plain = shop_graph.card("render_receipt")
    full = shop_graph.card("render_receipt", include_ambiguous=True)
    assert "AMBIGUOUS" not in set(plain.callees["confidence"].drop_nulls())
    assert "AMBIGUOUS" in set(full.callees["confidence"].drop_nulls())
    floor = shop_graph.affected("PaymentAmount.normalize")
    assert floor.ambiguous_left_out >= 1 and "floor" in str(floor)
    more = shop_graph.affected("PaymentAmount.normalize", include_ambiguous=True)
    assert more.nodes.height > floor.nodes.height


@pytest.fixture
def cyclic(tmp_path: Path):
    (tmp_path / "ring.py").write_text(
        "def a():\n    return b()\n\ndef b():\n    return c()\n\ndef c():\n    return a()\n\n"
        "def lone():\n    return 1\n"
    )
    return cf.index(str(tmp_path), progress=False)


def test_cycles_terminate(cyclic) -> None:
    res = cyclic.affected("a", depth=50)
    got = dict(res.nodes.select("label", "depth").iter_rows())
    assert got == {"a": 0, "c": 1, "b": 2, "ring.py": 1}
    p = cyclic.path("a", "c")
    assert [s["dst"] for s in p.paths[0]] == ["ring.py::b", "ring.py::c"]


def test_depth_limit(cyclic) -> None:
    assert set(cyclic.affected("a", depth=1).nodes["label"]) == {"a", "c", "ring.py"}


def test_path_none_says_where_it_stops(cyclic) -> None:
    res = cyclic.path("a", "lone")
    assert not res.paths and "stops at" in str(res)


@pytest.mark.parametrize("budget", [40, 120, 400])
def test_budgets_respected(shop_graph, budget) -> None:
    for _name, call in CASES:
        text = call(shop_graph).render(budget_tokens=budget)
        assert estimate_tokens(text) <= budget


def test_budget_marker_when_cut(shop_graph) -> None:
    text = shop_graph.affected("services/payments/gateway.py").render(budget_tokens=120)
    assert "truncated:" in text

"""The ranker on the bundled sample: the refund question and seed 001's failure case."""

from __future__ import annotations

import pytest

from ctxframe import rules

PROC = "services/payments/refund_processor.py::PaymentRefundProcessor.ProcessRefund"
PROC_CLASS = "services/payments/refund_processor.py::PaymentRefundProcessor"
HELPERS = {
    "optional-skills/bodyfat/scripts/body_calc.py::usage",
    "optional-skills/nutrition/scripts/macro_calc.py::usage",
}
SEED_001 = "desktop status bar context window usage"


def test_refund_question_finds_the_processor_with_its_neighbours(shop_graph) -> None:
    res = shop_graph.query("where is refund processing implemented")
    # the processor (its docstring: "Processes customer refunds"), then its method
    assert res.hits["id"].to_list()[:2] == [PROC_CLASS, PROC]
    arrows = res.neighbours.filter(res.neighbours["hit_id"] == PROC)
    callers = set(arrows.filter(arrows["direction"] == "in")["other_label"])
    callees = set(arrows.filter(arrows["direction"] == "out")["other_label"])
    assert "CheckoutHandler.handle_refund_request" in callers
    assert {"PaymentGateway.Refund", "validate_refund_amount"} <= callees
    text = str(res)
    assert "← calls CheckoutHandler.handle_refund_request" in text
    assert "→ calls PaymentGateway.Refund" in text


def test_seed_001_generic_token_does_not_crowd_out_product_code(shop_graph) -> None:
    top4 = shop_graph.query(SEED_001, limit=4).hits
    assert not set(top4["id"]) & HELPERS
    assert all(p.startswith("apps/desktop/") for p in top4["path"])


def test_usage_reporter_still_found(shop_graph) -> None:
    res = shop_graph.query("usage reporter", limit=3)
    assert res.hits["id"][0] == "services/billing/usage_reporter.py::UsageReporter"


@pytest.mark.parametrize("rule", [rules.FlatNameBonus(), "flat-name-bonus"])
def test_flat_name_bonus_shows_the_seed_001_failure(shop_graph, rule) -> None:
    top2 = set(shop_graph.query(SEED_001, limit=2, rule=rule).hits["id"])
    assert top2 == HELPERS  # the known-bad baseline: the usage() helpers win


def test_bm25_rule_runs_on_the_sample(shop_graph) -> None:
    assert shop_graph.query(SEED_001, rule=rules.BM25()).hits.height > 0


def test_token_weights_is_the_df_table(shop_graph) -> None:
    import math

    w = shop_graph.token_weights
    n = shop_graph.nodes.height
    row = w.filter(w["token"] == "refund").row(0, named=True)
    t = shop_graph.tokens
    names = t.filter(t["field"].is_in(["name", "qualname", "path"]) & (t["token"] == "refund"))
    df = names["node_id"].n_unique()
    assert row["df"] == df
    assert abs(row["weight"] - (0.1 + math.log(n / (1 + df)))) < 1e-9

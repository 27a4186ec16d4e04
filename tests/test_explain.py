"""Why a hit ranks where it does: `g.query(..., explain=True)`, `result.explain(rank)` and
`ctxframe query --explain` — evidence rows whose contributions add up to each hit's score."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxframe as cf
from ctxframe._rank.explain import EVIDENCE_SCHEMA
from ctxframe.cli import main

SAMPLE_QUERIES = Path(__file__).resolve().parent.parent / "data-samples" / "queries.jsonl"


@pytest.fixture(scope="module")
def graph(_shop_index_template: Path) -> cf.Graph:
    return cf.open(str(_shop_index_template))


def _sums(ev: pl.DataFrame, rule: str | None = None) -> dict[int, float]:
    rows = ev if rule is None else ev.filter(pl.col("rule") == rule)
    per = rows.group_by("rank").agg(pl.col("contribution").sum())
    return dict(zip(per["rank"].to_list(), per["contribution"].to_list(), strict=True))


def _assert_adds_up(res, rule: str | None = None) -> None:
    sums = _sums(res.evidence, rule)
    for rank, score in zip(res.hits["rank"].to_list(), res.hits["score"].to_list(), strict=True):
        assert sums.get(rank, 0.0) == pytest.approx(score, abs=1.5e-6), (res.query, rank)


def _questions() -> list[str]:
    return cf.load_queries(SAMPLE_QUERIES)["query"].to_list()


@pytest.mark.parametrize("text", _questions())
def test_contributions_add_up_to_the_score_and_the_order_is_unchanged(graph, text) -> None:
    plain = graph.query(text, limit=15)
    res = graph.query(text, limit=15, explain=True)
    assert res.hits["id"].to_list() == plain.hits["id"].to_list()
    assert dict(res.evidence.schema) == EVIDENCE_SCHEMA
    _assert_adds_up(res)


WORDS = ["refund", "payment", "order", "gateway", "retry", "test", "import", "doc", "user",
         "invoice", "webhook", "cart", "price", "refnud", "calls", "what", "reconcile"]  # fmt: skip


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=14))
def test_any_question_adds_up(graph, words) -> None:
    res = graph.query(" ".join(words), limit=10, explain=True)
    _assert_adds_up(res)


def test_rows_name_the_field_token_and_tier(graph) -> None:
    res = graph.query("refund processing", limit=5, explain=True)
    top = res.explain(1)
    assert top["id"].unique().to_list() == [res.hits["id"][0]]
    name = top.filter(pl.col("part").str.starts_with("name_"))
    assert name.height >= 1
    row = name.row(0, named=True)
    assert row["field"] in ("name", "qualname", "path")
    assert row["tier"] in (1, 2, 3, 4) and row["weight"] > 0
    assert row["token"] is not None and row["qtoken"] in ("refund", "processing")


def test_explain_later_by_rank_or_id(graph) -> None:
    res = graph.query("refund processing", limit=5)
    assert res.evidence is None
    first = res.explain(1)
    assert first.height and set(first["rank"].to_list()) == {1}
    assert res.explain(res.hits["id"][1])["rank"].unique().to_list() == [2]
    with pytest.raises(IndexError, match="ranks run from 1"):
        res.explain(0)
    assert "why (contributions" not in str(graph.query("refund processing", limit=3))
    assert "why (contributions" in str(graph.query("refund processing", limit=3, explain=True))


def test_a_bug_report_explains_its_hints(graph) -> None:
    text = (
        "Refund fails with KeyError\n"
        "Traceback (most recent call last):\n"
        '  File "services/payments/refund_processor.py", line 40, in process\n'
        "KeyError: 'amount'\n"
    )
    res = graph.query(text, limit=10, explain=True)
    _assert_adds_up(res)
    hints = res.evidence.filter(pl.col("part").str.starts_with("hint_"))
    assert hints.height and hints["source"].is_not_null().all()
    assert "services/payments/refund_processor.py" in " ".join(hints["source"].to_list())


def test_intent_rows_carry_the_multiplier(graph) -> None:
    res = graph.query("refund", limit=40, explain=True)
    intent = res.evidence.filter(pl.col("part") == "intent")
    assert intent.height
    assert set(intent["weight"].to_list()) <= {0.5, 0.25, 0.125, 0.0625}
    assert intent["contribution"].max() <= 0


def test_a_rule_that_does_not_split_its_score_gets_one_row(graph) -> None:
    res = graph.query("refund processing", limit=5, rule="bm25", explain=True)
    assert set(res.evidence["part"].to_list()) <= {"other", "intent", "named"}
    _assert_adds_up(res)


def test_cli_query_explain(capsys, indexed_shop: Path) -> None:
    code = main(["query", "refund processing", "--repo", str(indexed_shop), "--limit", "3",
                 "--explain", "--json"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    hits = json.loads(out)["hits"]
    assert hits and all(h["evidence"] for h in hits)
    total = sum(r["contribution"] for r in hits[0]["evidence"])
    assert total == pytest.approx(hits[0]["score"], abs=1.5e-6)
    code = main(["query", "refund processing", "--repo", str(indexed_shop), "--limit", "3",
                 "--explain"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0 and "why (contributions add up" in out and "name_" in out

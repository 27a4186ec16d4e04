"""Query-side evidence (ctxframe._rank.evidence) and the abstain decision
(ctxframe._rank.abstain)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._apps.eval import Ranker
from ctxframe._rank.abstain import decide
from ctxframe._rank.evidence import EvidenceWeights, extract, hint_bonus, is_long
from ctxframe._rank.querysets import load_queries
from ctxframe._rank.rules import EvidenceRule
from ctxframe.rules import IdfTiers

ROOT = Path(__file__).resolve().parent.parent

SITE = "/usr/lib/python3.11/site-packages"
TRACEBACK = f"""Refunds crash
Traceback (most recent call last):
  File "/srv/app/services/api/routes.py", line 18, in create_refund
    result = processor.ProcessRefund(order_id, amount)
  File "{SITE}/services/payments/refund_processor.py", line 31, in ProcessRefund
RefundError: refund exceeds charge
"""


def test_extract_reads_frames_paths_and_names() -> None:
    ev = extract(TRACEBACK)
    assert "srv/app/services/api/routes.py" in ev.paths
    assert "services/payments/refund_processor.py" in ev.paths  # site-packages/ dropped
    assert ("services/payments/refund_processor.py", "ProcessRefund") in ev.frames
    assert "ProcessRefund" in ev.names and "RefundError" in ev.names


def test_extract_backticks_dotted_and_identifier_shapes() -> None:
    text = (
        "`QuerySet.filter` ignores the `remainder` when calling set_output() on a "
        "ColumnTransformer; see django.db.models.query and "
        "https://github.com/o/r/blob/abc123/sklearn/compose/_column_transformer.py#L853"
    )
    ev = extract(text)
    assert "QuerySet.filter" in ev.names and "filter" in ev.names
    assert "set_output" in ev.names and "ColumnTransformer" in ev.names
    assert "django/db/models/query" in ev.modules
    assert "sklearn/compose/_column_transformer.py" in ev.paths
    assert ev.weights["remainder"] > ev.weights["ignores"]  # backticked beats prose


def test_repeated_words_count_sublinearly() -> None:
    ev = extract("status bar " * 10 + "estimateTokens")
    assert ev.counts["status"] == 10
    assert ev.weights["status"] < 3 * ev.weights["estimate"]
    assert ev.weights["estimate"] >= 2.0


def test_title_words_weigh_more() -> None:
    text = "Refund totals are wrong\nThe report adds every refund twice and the totals drift."
    ev = extract(text)
    plain = extract(text, EvidenceWeights(title=1.0))
    assert ev.weights["totals"] == 1.5 * plain.weights["totals"]
    assert ev.weights["report"] == 1.0  # a body word keeps its weight
    # one line, or a first line that is a paragraph rather than a title: no title
    assert extract(text.replace("\n", " ")).weights["totals"] < ev.weights["totals"]
    words = "alpha bravo charlie delta foxtrot golf hotel india juliet kilo lima mike november"
    long_first = f"{words} oscar papa quebec romeo sierra tango uniform victor whiskey\nmore"
    assert extract(long_first).weights["alpha"] == 1.0


def test_prose_has_no_code_evidence() -> None:
    ev = extract("what is the weather in Paris today")
    assert not ev.has_code_evidence
    assert not is_long("validate refund amount") and is_long(TRACEBACK)


def test_hint_bonus_goes_to_the_named_file_and_frame() -> None:
    nodes = pl.DataFrame(
        {
            "node_id": [
                "services/payments/refund_processor.py",
                "services/payments/refund_processor.py::PaymentRefundProcessor.ProcessRefund",
                "services/payments/gateway.py::PaymentGateway.Refund",
            ],
            "label": ["refund_processor.py", "ProcessRefund", "Refund"],
        }
    )
    bonus = dict(hint_bonus(nodes, extract(TRACEBACK)).iter_rows())
    f, m = nodes["node_id"][0], nodes["node_id"][1]
    assert bonus[m] > bonus[f] > 0  # the frame's function beats its file
    assert nodes["node_id"][2] not in bonus


def test_hint_bonus_for_a_file_the_title_names() -> None:
    ids = [
        "lib/colorbar.py",
        "lib/colorbar.py::Colorbar.draw_edges",
        "lib/colors.py",
        "lib/widgets/__init__.py",
        "tests/test_colorbar.py",
        "doc/colorbar.rst",
    ]
    nodes = pl.DataFrame({"node_id": ids, "label": [i.split("::")[-1] for i in ids]})
    text = "Colorbar does not draw edges\nWith drawedges=True the widgets lose their outline."
    w = EvidenceWeights()
    bonus = dict(hint_bonus(nodes, extract(text), w).iter_rows())
    assert bonus == {
        ids[0]: 2 * w.title_file_bonus,  # the file node gets twice its symbols' share
        ids[1]: w.title_file_bonus,
    }  # "widgets" is a body word; test files and prose files are left out
    one_line = dict(hint_bonus(nodes, extract(text.replace("\n", " "))).iter_rows())
    assert ids[0] not in one_line  # no title, no hint


FENCED = """Refund totals are wrong after a partial refund
When `ProcessRefund` runs twice the gateway rounds each part.

```python
gateway = PaymentGateway()
gateway.Refund(order, 10)
ProcessRefund(order)
```
"""


def test_names_only_in_fenced_code_are_told_apart() -> None:
    ev = extract(FENCED, EvidenceWeights(fence_names=0.2))
    assert "PaymentGateway" in ev.fenced and "Refund" in ev.fenced
    assert "ProcessRefund" not in ev.fenced  # also said in the prose
    off = EvidenceWeights(fence_names=1.0)
    assert extract(FENCED, off).fenced == ()  # off: nothing is told apart


def test_a_name_only_in_a_code_sample_hints_less() -> None:
    ids = [
        "services/payments/refund_processor.py::PaymentRefundProcessor.ProcessRefund",
        "services/payments/gateway.py::PaymentGateway",
    ]
    nodes = pl.DataFrame({"node_id": ids, "label": ["ProcessRefund", "PaymentGateway"]})
    one = EvidenceWeights(fence_names=1.0)
    full = dict(hint_bonus(nodes, extract(FENCED, one), one).iter_rows())
    w = EvidenceWeights(fence_names=0.2)
    less = dict(hint_bonus(nodes, extract(FENCED, w), w).iter_rows())
    assert less[ids[0]] == full[ids[0]]
    assert less[ids[1]] == pytest.approx(full[ids[1]] * 0.2)


def test_default_rule_uses_evidence_for_long_queries_only(shop_graph) -> None:
    r = Ranker(shop_graph)
    hits = r.rank(TRACEBACK, rule=None, limit=3)
    # a long text ranks files with their definitions' evidence: the frame's file, its function
    assert set(hits["id"].to_list()[:2]) == {
        "services/payments/refund_processor.py",
        "services/payments/refund_processor.py::PaymentRefundProcessor.ProcessRefund",
    }
    short = "validate refund amount"
    a = r.rank(short, rule=IdfTiers(), limit=5)
    b = r.rank(short, rule=IdfTiers(evidence=False), limit=5)
    assert a.equals(b)  # short queries score exactly as before
    # names and evidence only (no content, no files with their definitions): the frame's function
    assert r.rank(TRACEBACK, rule=EvidenceRule(), limit=1)["id"][0].endswith("ProcessRefund")


def test_long_questions_of_the_sample_set_rank_the_gold_file_first(shop_graph) -> None:
    qs = load_queries(ROOT / "data-samples" / "queries.jsonl").filter(
        pl.col("tags").list.contains("long")
    )
    ev = cf.evaluate(shop_graph, qs, rules=["idf-tiers", IdfTiers(evidence=False, name="plain")])
    s = ev.summary.filter(pl.col("level") == "file")
    mrr = dict(s.select("rule", "mrr").iter_rows())
    assert mrr["idf-tiers"] >= mrr["plain"]
    assert mrr["idf-tiers"] >= 0.9


def test_decide() -> None:
    assert decide(has_hits=False, specific=(), resolved=()).abstain
    assert decide(has_hits=True, specific=(), resolved=()).abstain
    assert not decide(has_hits=True, specific=("refund",), resolved=()).abstain
    assert not decide(has_hits=False, specific=(), resolved=("x.py",)).abstain


def test_abstain_on_prompts_about_no_code(shop_graph) -> None:
    def abstains(text: str) -> bool:
        return shop_graph.query(text, limit=1, abstain=True).abstained is not None

    prompts = load_queries(ROOT / "data-samples" / "prompts-noncode.jsonl")
    assert prompts.height >= 30
    share = sum(abstains(q) for q in prompts["query"]) / prompts.height
    assert share >= 0.85
    code = load_queries(ROOT / "data-samples" / "queries.jsonl").filter(
        ~pl.col("tags").list.contains("no-answer")
    )
    wrong = sum(abstains(q) for q in code["query"]) / code.height
    assert wrong <= 0.05


def test_graph_query_abstain(shop_graph) -> None:
    res = shop_graph.query("write me a haiku about autumn", abstain=True)
    assert res.hits.is_empty() and res.abstained
    assert str(res).startswith("no structural match")
    assert res.to_dict()["abstained"] == res.abstained
    res = shop_graph.query("where is refund processing implemented", abstain=True)
    assert res.abstained is None and res.hits.height
    assert shop_graph.query("write me a haiku about autumn").abstained is None

"""BM25F straight from the postings (Content.bm25f) gives the figures of the reference path
(rules.bm25f over Content.rows), per unit, with token weights, project tokens and per token."""

from __future__ import annotations

import polars as pl
import pytest

from ctxframe._rank.fields import BODY, DOC, SIGNATURE
from ctxframe._rank.question import Question
from ctxframe._rank.rules import bm25f

QUESTIONS = (
    "refund the payment when the order is cancelled",
    "how are tax rates applied to invoice lines",
    "Traceback in shop/billing.py: PaymentError raised by charge_card while refunding orders",
)
FW = {SIGNATURE: 1.0, DOC: 2.0, BODY: 0.5}


@pytest.mark.parametrize("text", QUESTIONS)
@pytest.mark.parametrize("unit", ["node", "file"])
@pytest.mark.parametrize(
    ("fields", "max_share", "project"),
    [((SIGNATURE, DOC, BODY), None, ()), ((DOC, BODY), 0.35, ("shop",))],
)
def test_postings_path_equals_rows_path(shop_graph, text, unit, fields, max_share, project):
    ix = shop_graph._rank_index
    q = Question.parse(text)
    weights = {t: 1.0 + 0.25 * i for i, t in enumerate(sorted(q.counts))}
    content = ix.content(q, project_tokens=project)
    fw = {f: FW[f] for f in fields}
    kw = {"k1": 1.2, "b": 0.75, "field_weights": fw, "token_weights": weights}
    rows = content.rows(unit=unit, fields=fields, max_share=max_share)
    for per_token in (False, True):
        want = bm25f(rows, per_token=per_token, **kw)
        got = content.bm25f(
            unit=unit, fields=fields, max_share=max_share, per_token=per_token, **kw
        )
        keys = ["qtoken", "doc_row"] if per_token else ["doc_row"]
        assert want.height > 0
        joined = want.join(got, on=keys, how="full", coalesce=True, suffix="_got")
        assert joined.height == want.height == got.height
        assert (joined["score"] - joined["score_got"]).abs().max() < 1e-9
    coded = content.bm25f(
        unit=unit, fields=fields, max_share=max_share, per_token=True, codes=True, **kw
    )
    tokens = pl.Series(sorted(q.counts))
    named = coded.select(qtoken=tokens.gather(coded["q"]), doc_row="doc_row", score="score")
    plain = content.bm25f(unit=unit, fields=fields, max_share=max_share, per_token=True, **kw)
    assert named.sort("qtoken", "doc_row").equals(plain.sort("qtoken", "doc_row"))

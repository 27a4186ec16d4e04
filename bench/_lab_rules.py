"""Rules of the ranking lab for the eval scripts' ``--rules`` (``_lab_rules:NAME``; run from
``bench/`` or with it on ``sys.path``, as the scripts put it): fusions of the default rule with
the BM25 baselines, and the default rule with the repository's word associations."""

from __future__ import annotations

import ctxframe as cf

# reciprocal rank fusion of the default rule and BM25 over whole texts (k = 60)
RRF_BM25_FILE = cf.rules.Fused(["idf-tiers", "bm25-file"], name="rrf(idf-tiers+bm25-file)")
RRF_BM25_SYMBOL = cf.rules.Fused(["idf-tiers", "bm25-symbol"], name="rrf(idf-tiers+bm25-symbol)")
# weighted score fusion: each member's scores divided by its best
SCORE_BM25_SYMBOL = cf.rules.Fused(
    ["idf-tiers", "bm25-symbol"],
    method="score",
    weights=[0.8, 0.2],
    name="score(0.8 idf-tiers+0.2 bm25-symbol)",
)
# the paraphrase bridge (ctxframe/_rank/associations.py)
BRIDGE = cf.rules.IdfTiers(bridge=0.3, bridge_names=False, name="idf-tiers+bridge")

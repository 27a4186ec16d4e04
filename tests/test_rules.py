"""Scoring rules as objects: the registry, each built-in, user rules, and seed 001."""

from __future__ import annotations

import math

import polars as pl
import pytest

from ctxframe import rules
from ctxframe._core.errors import CtxframeError
from ctxframe._core.schema import NODES
from ctxframe._graph.query import QueryResult, run_query
from ctxframe._rank.tokens import build_tokens
from ctxframe.rules import BM25, RULES, FlatNameBonus, IdfTiers, UnknownRule, get_rule


def make_nodes(rows: list[tuple]) -> pl.DataFrame:
    """(id, kind, label, qualname, path) tuples -> a NODES frame."""
    recs = [
        {
            "id": r[0],
            "kind": r[1],
            "label": r[2],
            "qualname": r[3],
            "language": "python",
            "path": r[4],
            "line_start": 1,
            "line_end": 10,
            "signature": None,
            "doc": None,
            "parent": None,
            "producer": "test",
        }
        for r in rows
    ]
    return pl.DataFrame(recs, schema=NODES)


def q(nodes: pl.DataFrame, text: str, **kw) -> QueryResult:
    return run_query(nodes, None, build_tokens(nodes), text, **kw)


def ids(res: QueryResult) -> list[str]:
    return res.hits["id"].to_list()


def matches(rows: list[dict]) -> pl.DataFrame:
    """A hand-made match table (defaults fill the columns a test does not care about)."""
    base = {
        "node_id": "n",
        "qtoken": "refund",
        "token": "refund",
        "tier": 1,
        "dice": 1.0,
        "df": 1,
        "n_nodes": 100,
        "factor": 1.0,
        "tf": 1,
        "doc_len": 4.0,
        "avg_doc_len": 4.0,
        "query_tf": 1,
        "label": "x",
        "query": "refund",
    }
    recs = [base | r for r in rows]
    df = pl.DataFrame(recs).with_columns(pl.col("tier").cast(pl.Int8))
    return df.with_columns(
        idf=(0.1 + (pl.col("n_nodes") / (1 + pl.col("df"))).log()) * pl.col("factor")
    )


def w(n: int, df: int) -> float:
    return 0.1 + math.log(n / (1 + df))


# ------------------------------------------------------------------ registry


def test_registry_and_get_rule() -> None:
    assert set(RULES) == {
        "idf-tiers",
        "bm25",
        "flat-name-bonus",
        "bm25-file",
        "bm25-file-src",
        "bm25-symbol",
        "bm25-symbol-src",
    }
    assert isinstance(get_rule(None), IdfTiers)
    assert isinstance(get_rule("bm25"), BM25)
    assert isinstance(get_rule("flat-name-bonus"), FlatNameBonus)
    assert isinstance(get_rule(BM25), BM25)
    custom = IdfTiers(prefix=0.5)
    assert get_rule(custom) is custom
    with pytest.raises(UnknownRule, match="idf-tiers"):
        get_rule("nope")
    assert issubclass(UnknownRule, CtxframeError)
    with pytest.raises(TypeError):
        get_rule(object())
    for name, cls in RULES.items():
        assert cls().name == name
        assert isinstance(cls(), rules.Rule)


def test_idf_tiers_defaults_are_the_spec() -> None:
    r = IdfTiers()
    assert (r.exact, r.prefix, r.trigram, r.dice, r.floor) == (1.0, 0.7, 0.4, 0.5, 0.1)
    assert (r.stub, r.test, r.doc) == (0.25, 0.5, 0.5)
    assert (BM25().k1, BM25().b) == (1.2, 0.75)


# ------------------------------------------------------------------ IdfTiers


def test_rarest_prefix_wins_and_ties_break_by_token() -> None:
    m = matches(
        [
            {"tier": 2, "token": "refunds", "df": 40},
            {"tier": 2, "token": "refunding", "df": 2},
            {"tier": 2, "token": "refunder", "df": 2},
        ]
    )
    best = IdfTiers().best_matches(m)
    assert best["token"].to_list() == ["refunder"]  # rarest; tie on df -> smaller token string
    score = IdfTiers().score(m)
    assert score["score"].item() == pytest.approx(0.7 * w(100, 2))
    assert score["tier"].item() == 2


def test_best_tier_per_query_token_is_the_lowest_tier() -> None:
    m = matches(
        [
            {"tier": 1, "token": "refund", "df": 50},
            {"tier": 2, "token": "refunding", "df": 1},
            {"tier": 3, "token": "refnud", "df": 1, "dice": 0.5},
        ]
    )
    s = IdfTiers().score(m)
    assert s["score"].item() == pytest.approx(w(100, 50))
    assert s["tier"].item() == 1


def test_score_sums_query_tokens_and_uses_query_tf() -> None:
    m = matches(
        [
            {"qtoken": "refund", "token": "refund", "df": 3, "query_tf": 2},
            {"qtoken": "order", "token": "orders", "tier": 2, "df": 9},
            {"node_id": "other", "qtoken": "order", "token": "order", "df": 5},
        ]
    )
    s = dict(IdfTiers().score(m).select("node_id", "score").iter_rows())
    assert s["n"] == pytest.approx(2 * w(100, 3) + 0.7 * w(100, 9))
    assert s["other"] == pytest.approx(w(100, 5))


def test_rule_parameters_change_the_score() -> None:
    m = matches([{"tier": 4, "token": "refnud", "dice": 0.5, "df": 1, "factor": 0.1}])
    assert IdfTiers().score(m)["score"].item() == pytest.approx(0.4 * w(100, 1) * 0.1)
    assert IdfTiers(trigram=1.0, floor=1.0).score(m)["score"].item() == pytest.approx(
        (1.0 + math.log(100 / 2)) * 0.1
    )
    assert IdfTiers(dice=0.6).score(m).is_empty()
    assert IdfTiers().score(m.clear()).is_empty()


# ------------------------------------------------------------------ BM25, FlatNameBonus


def test_bm25_exact_only_and_length_normalised() -> None:
    m = matches(
        [
            {"node_id": "short", "doc_len": 2.0, "df": 2},
            {"node_id": "long", "doc_len": 12.0, "df": 2},
            {"node_id": "fuzzy", "tier": 2, "token": "refunds", "df": 1},
        ]
    )
    s = dict(BM25().score(m).select("node_id", "score").iter_rows())
    assert set(s) == {"short", "long"}
    assert s["short"] > s["long"] > 0
    idf = math.log(1 + (100 - 2 + 0.5) / (2 + 0.5))
    norm = 1 - 0.75 + 0.75 * 2.0 / 4.0
    assert s["short"] == pytest.approx(idf * 2.2 / (1 + 1.2 * norm))


def test_flat_name_bonus() -> None:
    m = matches(
        [
            {
                "node_id": "whole",
                "label": "Usage",
                "query": " usage ",
                "qtoken": "usage",
                "token": "usage",
            },
            {
                "node_id": "tok",
                "label": "usage",
                "query": "report usage",
                "qtoken": "usage",
                "token": "usage",
            },
            {
                "node_id": "none",
                "label": "UsageReporter",
                "query": "report usage",
                "qtoken": "usage",
                "token": "usage",
            },
        ]
    )
    s = dict(FlatNameBonus().score(m).select("node_id", "score").iter_rows())
    base = dict(BM25().score(m).select("node_id", "score").iter_rows())
    assert s["whole"] == pytest.approx(base["whole"] + 80)
    assert s["tok"] == pytest.approx(base["tok"] + 60)
    assert s["none"] == pytest.approx(base["none"])


# ------------------------------------------------------------------ user rules, pipeline


class LabelLength:
    """A user rule: shorter labels first; knows nothing of tiers or rows."""

    name = "label-length"

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        return matches.group_by("node_id").agg(
            score=100.0 / pl.col("label").str.len_chars().first()
        )


PIPE_NODES = [
    ("a/refund.py::Refund", "class", "Refund", None, "a/refund.py"),
    ("b/refund.py::RefundBatch", "class", "RefundBatch", None, "b/refund.py"),
    ("tests/test_refund.py::Refund", "class", "Refund", None, "tests/test_refund.py"),
    *[(f"f/x{i}.py::noise_{i}", "function", f"noise_{i}", None, f"f/x{i}.py") for i in range(30)],
]


def test_user_rule_runs_through_the_pipeline() -> None:
    res = q(make_nodes(PIPE_NODES), "refund batch", rule=LabelLength())
    assert res.rule == "label-length"
    scores = dict(zip(res.hits["id"], res.hits["score"], strict=True))
    assert scores["a/refund.py::Refund"] == pytest.approx(100 / 6)
    # intent multipliers still apply (default 0.5 for test files)
    assert scores["tests/test_refund.py::Refund"] == pytest.approx(100 / 6 * 0.5)
    # tiers come from the matches when a rule does not report them; RefundBatch is named
    assert res.hits["tier"].to_list() == [0, 1, 1]
    assert ids(res)[0] == "b/refund.py::RefundBatch"


def test_rules_by_name_in_run_query() -> None:
    nodes = make_nodes(PIPE_NODES)
    for name in RULES:
        res = q(nodes, "refund batch", rule=name)
        assert res.rule == name
        assert ids(res)[0] == "b/refund.py::RefundBatch"


# ------------------------------------------------------------------ seed 001


def seed_001_nodes() -> pl.DataFrame:
    """The competitor's failure: generic `usage()` helpers vs the product's status bar code."""
    rows: list[tuple] = []

    def file(path: str, *defs: tuple[str, str]) -> None:
        rows.append((path, "file", path.rsplit("/", 1)[-1], None, path))
        for qual, kind in defs:
            rows.append((f"{path}::{qual}", kind, qual.rsplit(".", 1)[-1], qual, path))

    file(
        "apps/desktop/statusbar/StatusBar.ts",
        ("DesktopStatusBar", "class"),
        ("DesktopStatusBar.render", "method"),
        ("DesktopStatusBar.refresh", "method"),
        ("DesktopStatusBar.mount", "method"),
    )
    file("apps/desktop/statusbar/StatusBarController.ts", ("StatusBarController", "class"))
    file(
        "apps/desktop/context/ContextWindowMeter.ts",
        ("ContextWindowMeter", "class"),
        ("ContextWindowMeter.read", "method"),
        ("ContextWindowMeter.recompute", "method"),
        ("estimateTokens", "function"),
    )
    file("apps/desktop/context/format.ts", ("formatTokens", "function"))
    # filler product files
    file("apps/desktop/settings/Preferences.ts", ("Preferences", "class"))
    file("apps/desktop/main.ts", ("bootstrap", "function"))
    file("apps/web/src/App.tsx", ("App", "function"))
    # the generic helpers that a flat name bonus puts on top
    file(
        "optional-skills/bodyfat/scripts/body_calc.py", ("usage", "function"), ("main", "function")
    )
    file(
        "optional-skills/nutrition/scripts/macro_calc.py",
        ("usage", "function"),
        ("main", "function"),
    )
    file(
        "services/billing/usage_reporter.py",
        ("UsageReporter", "class"),
        ("UsageReporter.report_usage", "method"),
    )
    # generic code so that IDF means something
    verbs = ["load", "save", "parse", "render", "build", "fetch", "sync", "merge", "split", "check"]
    nouns = ["config", "user", "order", "cache", "session", "invoice", "schema", "queue"]
    for i in range(50):
        path = f"lib/{nouns[i % len(nouns)]}/{verbs[i % len(verbs)]}_{i}.py"
        file(path, (f"{verbs[i % len(verbs)]}_{nouns[(i * 3) % len(nouns)]}", "function"))
    return make_nodes(rows)


USAGE_HELPERS = {
    "optional-skills/bodyfat/scripts/body_calc.py::usage",
    "optional-skills/nutrition/scripts/macro_calc.py::usage",
}
PRODUCT_DIRS = ("apps/desktop/statusbar/", "apps/desktop/context/")
SEED_QUERY = "desktop status bar context window usage"


def test_seed_001_default_rule_ranks_product_code_first() -> None:
    res = q(seed_001_nodes(), SEED_QUERY)
    top4 = ids(res)[:4]
    assert all(i.startswith(PRODUCT_DIRS) for i in top4), top4
    assert not USAGE_HELPERS & set(top4)
    # the status bar class itself is close behind (every node of a file shares its path tokens)
    assert "apps/desktop/statusbar/StatusBar.ts::DesktopStatusBar" in ids(res)[:10]
    helper_ranks = [ids(res).index(h) for h in USAGE_HELPERS]
    assert min(helper_ranks) >= 10


def test_seed_001_usage_reporter_found_first() -> None:
    res = q(seed_001_nodes(), "usage reporter")
    assert ids(res)[0] == "services/billing/usage_reporter.py::UsageReporter"


def test_seed_001_flat_name_bonus_reproduces_the_failure() -> None:
    """The known-bad baseline: +60 for `usage` == label puts the helpers above the product."""
    res = q(seed_001_nodes(), SEED_QUERY, rule="flat-name-bonus")
    assert set(ids(res)[:2]) == USAGE_HELPERS
    res = q(seed_001_nodes(), SEED_QUERY, rule="bm25")
    assert not USAGE_HELPERS & set(ids(res)[:4])

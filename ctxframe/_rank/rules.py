"""Scoring rules: objects that turn the match table into one score per node.

A rule is any object with ``name: str`` and ``score(matches) -> DataFrame(node_id, score)``;
it may also return ``tier`` (the best tier that contributed) and ``node_row``. ``matches`` has
one row per query token x node x matched node token x tier, with the columns:

* ``node_id``; ``node_row`` (the node's row in the nodes frame, an integer key that groups
  faster than ``node_id``);
* ``qtoken``, ``token``, ``tier`` (1 exact, 2 prefix, 3 trigram), ``dice`` (trigram
  similarity, 1.0 for exact and prefix);
* ``df`` (nodes holding ``token``), ``n_nodes``, ``factor`` (project-token discount, 1.0 or
  e.g. 0.1), ``idf`` (``max(0.1 + ln(n_nodes / (1 + df)), 0.01) * factor``);
* ``tf`` (always 1: the token table is a set), ``doc_len`` (distinct tokens of the node),
  ``avg_doc_len``, ``query_tf`` (count of ``qtoken`` in the query);
* ``label`` (node label) and ``query`` (the raw query text).

Intent multipliers (module stubs, test files, doc nodes) and the scope levers are applied by the
query pipeline after ``score`` for every rule; the pipeline reads the multipliers from the rule's
``stub``, ``test`` and ``doc`` attributes when present (defaults 0.25, 0.5, 0.5), and the trigram
candidate threshold from ``dice`` (default 0.5). Rules with ``fuzzy = False`` get exact matches
only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import polars as pl

from ctxframe._core.errors import CtxframeError
from ctxframe._rank import evidence as _evidence
from ctxframe._rank.evidence import EvidenceWeights
from ctxframe._rank.matches import row_key
from ctxframe._rank.tokens import ENGINE

__all__ = [
    "BM25",
    "RULES",
    "EvidenceRule",
    "FlatNameBonus",
    "IdfTiers",
    "Rule",
    "UnknownRule",
    "get_rule",
]

DEFAULT_STUB = 0.25
DEFAULT_TEST = 0.5
DEFAULT_DOC = 0.5
DEFAULT_DICE = 0.5
MIN_WEIGHT = 0.01  # idf is clamped here so a match never lowers a score in tiny graphs


class UnknownRule(CtxframeError, ValueError):
    """A rule name that is not in the registry."""


@runtime_checkable
class Rule(Protocol):
    """What the pipeline needs from a scoring rule."""

    name: str

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        """Return one ``(node_id, score)`` row per scored node (optionally ``tier``)."""
        ...


def _empty_scores() -> pl.DataFrame:
    return pl.DataFrame(schema={"node_id": pl.String, "score": pl.Float64, "tier": pl.Int8})


@dataclass(frozen=True)
class IdfTiers:
    """Default rule: per query token the best tier (exact > prefix > trigram) times its IDF.

    ``weight(t) = floor + ln(N / (1 + df(t)))`` (clamped at 0.01, times the project-token
    factor); exact counts ``exact x weight``, prefix ``prefix x weight``, trigram (Dice >=
    ``dice``) ``trigram x weight``. Within the best tier of a (node, query token) the rarest
    node token wins, ties broken by token string. A node's score sums over query tokens
    (times ``query_tf``).

    Long queries (a paragraph, several lines: bug reports, tracebacks) with ``evidence`` on are
    scored by :func:`ctxframe._rank.evidence.evidence_score`: identifier-shaped words and paths
    weigh more than prose, repeated words count sublinearly instead of ``query_tf`` times, and
    files, modules, definitions and traceback frames the text names get a bonus.
    """

    exact: float = 1.0
    prefix: float = 0.7
    trigram: float = 0.4
    dice: float = DEFAULT_DICE
    floor: float = 0.1
    stub: float = DEFAULT_STUB
    test: float = DEFAULT_TEST
    doc: float = DEFAULT_DOC
    min_prefix: int = 3  # query tokens shorter than this get no prefix/trigram matches
    name: str = "idf-tiers"
    evidence: bool = True  # long queries: query-side evidence (ctxframe._rank.evidence)

    def weighted(self, matches: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
        """Add ``weight`` (IDF with this rule's floor) and ``value`` (tier weight x weight)."""
        weight = (
            (self.floor + (pl.col("n_nodes").cast(pl.Float64) / (1 + pl.col("df"))).log())
            .clip(lower_bound=MIN_WEIGHT)
            .mul(pl.col("factor"))
        )
        tier_w = (
            pl.when(pl.col("tier") == 1)
            .then(self.exact)
            .when(pl.col("tier") == 2)
            .then(self.prefix)
            .otherwise(self.trigram)
        )
        return (
            matches.lazy()
            .filter((pl.col("tier") != 3) | (pl.col("dice") >= self.dice))
            .with_columns(weight=weight)
            .with_columns(value=tier_w * pl.col("weight"))
        )

    def best_matches(self, matches: pl.DataFrame) -> pl.DataFrame:
        """One row per (node, query token): lowest tier, then highest weight, then token."""
        return (
            self.weighted(matches)
            .sort(
                ["node_id", "qtoken", "tier", "weight", "token"],
                descending=[False, False, False, True, False],
            )
            .unique(["node_id", "qtoken"], keep="first", maintain_order=True)
            .collect(engine=ENGINE)
        )

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        """Sum of the best tier value per query token, per node."""
        if matches.is_empty():
            return _empty_scores()
        if self.evidence and _evidence.is_long(matches["query"][0]):
            return _evidence.evidence_score(self, matches)
        key, carry = row_key(matches)
        return (
            self.best_per_token(matches, pl.col("query_tf"))
            .group_by(key)
            .agg(*carry, score=pl.col("value").sum(), tier=pl.col("t").min().cast(pl.Int8))
            .select("node_id", "score", "tier")
            .collect(engine=ENGINE)
        )

    def best_per_token(self, matches: pl.DataFrame, weight: pl.Expr) -> pl.LazyFrame:
        """Per (node, query token): the best tier ``t`` and its value times ``weight`` (an
        expression over the match table, e.g. ``query_tf``) as ``value``."""
        key, carry = row_key(matches)
        tier, value = pl.col("tier"), pl.col("value")
        best = (
            pl.when(pl.col("t") == 1).then("v1").when(pl.col("t") == 2).then("v2").otherwise("v3")
        )
        return (
            self.weighted(matches.with_columns(_w=weight))
            .group_by(key, "qtoken")
            .agg(
                *carry,
                t=tier.min(),
                v1=pl.when(tier == 1).then(value).max(),
                v2=pl.when(tier == 2).then(value).max(),
                v3=pl.when(tier == 3).then(value).max(),
                _w=pl.col("_w").first(),
            )
            .with_columns(value=best * pl.col("_w"))
            .drop("v1", "v2", "v3", "_w")
        )


@dataclass(frozen=True)
class BM25:
    """Okapi BM25 over label + path tokens, exact token matches only (tf is 0/1: a token set)."""

    k1: float = 1.2
    b: float = 0.75
    stub: float = DEFAULT_STUB
    test: float = DEFAULT_TEST
    doc: float = DEFAULT_DOC
    name: str = "bm25"
    fuzzy = False

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        """Sum over exact query tokens of ``idf * tf (k1 + 1) / (tf + k1 (1 - b + b dl/avgdl))``."""
        exact = matches.filter(pl.col("tier") == 1)
        if exact.is_empty():
            return _empty_scores()
        n = pl.col("n_nodes").cast(pl.Float64)
        df = pl.col("df").cast(pl.Float64)
        idf = (1 + (n - df + 0.5) / (df + 0.5)).log() * pl.col("factor")
        tf = pl.col("tf").cast(pl.Float64)
        norm = 1 - self.b + self.b * pl.col("doc_len") / pl.col("avg_doc_len")
        term = idf * tf * (self.k1 + 1) / (tf + self.k1 * norm) * pl.col("query_tf")
        key = "node_row" if "node_row" in exact.columns else "node_id"
        carry = [pl.col("node_id").first()] if key != "node_id" else []
        return (
            exact.lazy()
            .unique([key, "qtoken"], keep="first")
            .group_by(key)
            .agg(*carry, score=term.sum(), tier=pl.lit(1, pl.Int8).first())
            .collect(engine=ENGINE)
        )


@dataclass(frozen=True)
class FlatNameBonus:
    """Known-bad baseline (competitor bug report, seed 001): BM25 + a flat exact-name bonus.

    +``whole`` (80) when the stripped query equals the node label case-insensitively, else
    +``token`` (60) when any single query token equals the whole label. The flat bonus swamps
    the text score, so a generic ``usage()`` helper outranks the code the question is about.
    """

    k1: float = 1.2
    b: float = 0.75
    whole: float = 80.0
    token: float = 60.0
    stub: float = DEFAULT_STUB
    test: float = DEFAULT_TEST
    doc: float = DEFAULT_DOC
    name: str = "flat-name-bonus"
    fuzzy = False

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        """BM25 score plus the flat bonus of each matched node."""
        base = BM25(k1=self.k1, b=self.b).score(matches)
        if base.is_empty():
            return base
        label = pl.col("label").fill_null("").str.to_lowercase()
        bonus = (
            matches.lazy()
            .group_by("node_id")
            .agg(
                whole=(pl.col("query").str.strip_chars().str.to_lowercase() == label).any(),
                tok=(pl.col("qtoken") == label).any(),
            )
            .select(
                "node_id",
                bonus=pl.when("whole").then(self.whole).when("tok").then(self.token).otherwise(0.0),
            )
        )
        return (
            base.lazy()
            .join(bonus, on="node_id", how="left")
            .select(
                pl.exclude("score", "bonus"),
                score=pl.col("score") + pl.col("bonus").fill_null(0.0),
            )
            .collect(engine=ENGINE)
        )


RULES: dict[str, type] = {"idf-tiers": IdfTiers, "bm25": BM25, "flat-name-bonus": FlatNameBonus}


def get_rule(name_or_obj: Any = None) -> Any:
    """Resolve ``None`` (default IdfTiers), a registry name, a rule class, or a rule object."""
    if name_or_obj is None:
        return IdfTiers()
    if isinstance(name_or_obj, str):
        try:
            return RULES[name_or_obj]()
        except KeyError:
            known = ", ".join(sorted(RULES))
            raise UnknownRule(f"unknown rule {name_or_obj!r}; use one of: {known}") from None
    if isinstance(name_or_obj, type):
        name_or_obj = name_or_obj()
    if not callable(getattr(name_or_obj, "score", None)) or not hasattr(name_or_obj, "name"):
        raise TypeError("a rule needs a `name` attribute and a `score(matches)` method")
    return name_or_obj


@dataclass(frozen=True)
class EvidenceRule:
    """IdfTiers with query-side evidence for every query, long or short (for experiments; the
    default rule applies it to long queries, see :class:`ctxframe.rules.IdfTiers`)."""

    weights: EvidenceWeights = field(default_factory=EvidenceWeights)
    name: str = "idf-tiers+evidence"
    base: object = None

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        base = self.base or IdfTiers(evidence=False)
        if matches.is_empty():
            return base.score(matches)
        return _evidence.evidence_score(base, matches, self.weights)

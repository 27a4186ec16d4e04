"""The parts a score is made of: what a rule records when it is asked to explain itself.

The default rule adds up a few kinds of evidence (:data:`PARTS`): name matches per tier, the
node's own content (BM25F), what its parent and nested functions say, and for a bug report the
whole file's text, the files, modules and names the text points at and the share between a file
and its definitions. Given a :class:`Trace`, a rule fills it with

* ``nodes`` — one row per scored node: ``node_row`` and one column per part (their sum is the
  rule's score), what a fitted rule (:class:`ctxframe._rank.fitted.Fitted`) weighs;
* ``tokens`` — per (node, query token, part) the value matched and its contribution (a name
  match's tier, the content's BM25F), what ``explain`` details by field and node token;
* ``hints`` — per (node, kind of hint, hint) the bonus a long question's hints gave.

Without a trace the rules compute only their totals: explaining costs nothing when not asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

__all__ = ["HINT_KINDS", "NAME_PARTS", "PARTS", "Trace", "add_missing", "part_sum"]

NAME_PARTS = ("name_exact", "name_prefix", "name_stem", "name_trigram")  # by tier 1..4
HINT_KINDS = ("path", "module", "name", "frame", "title")
PARTS = (
    *NAME_PARTS,
    "content",  # the node's own BM25F (signature, doc, body)
    "parent_word",  # short question, per token: the parent's value beat the node's own
    "bridge",  # short question, per token: words the repository associates with it
    "parent",  # short question: a share of the parent's score
    "nested",  # short question: a share of the best nested function's content
    "file_text",  # the whole file's BM25F (a long question's file node; `short_file`)
    *(f"hint_{k}" for k in HINT_KINDS),  # long question: what the text points at
    "file_best",  # long question, a file node: a share of its best definition
    "file_share",  # long question, a definition: a share of its file's total
    "other",  # a rule that does not split its score: all of it
)


def tier_part(tier: pl.Expr) -> pl.Expr:
    """The name part of a tier (1 exact, 2 prefix, 3 stem, else trigram)."""
    return (
        pl.when(tier == 1)
        .then(pl.lit("name_exact"))
        .when(tier == 2)
        .then(pl.lit("name_prefix"))
        .when(tier == 3)
        .then(pl.lit("name_stem"))
        .otherwise(pl.lit("name_trigram"))
    )


def tier_trace(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    """A trace's token rows of best-per-token name matches (tier `t`, `value`): each
    contributes its value, under its tier's name part."""
    return frame.select(
        "node_row",
        "qtoken",
        part=tier_part(pl.col("t")),
        tier="t",
        weight=pl.lit(None, pl.Float64),
        value="value",
        contribution="value",
    )


def name_sums(value: str, tier: str) -> list[pl.Expr]:
    """Aggregations: the sum of ``value`` per name tier, one column per name part."""
    return [
        pl.col(value).filter(pl.col(tier) == i).sum().alias(p) for i, p in enumerate(NAME_PARTS, 1)
    ]


def add_missing(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every part column (0 where it has none), in :data:`PARTS` order after its
    other columns."""
    have = set(frame.columns)
    extra = [pl.lit(0.0, pl.Float64).alias(p) for p in PARTS if p not in have]
    out = frame.with_columns(extra) if extra else frame
    keep = [c for c in out.columns if c not in PARTS]
    return out.select(*keep, *[pl.col(p).cast(pl.Float64).fill_null(0.0) for p in PARTS])


def part_sum(weights: dict[str, float] | None = None) -> pl.Expr:
    """The sum of the part columns, each times its weight (default 1)."""
    w = weights or {}
    return pl.sum_horizontal([pl.col(p) * float(w.get(p, 1.0)) for p in PARTS])


@dataclass
class Trace:
    """What a rule records while it scores (see the module docstring)."""

    nodes: pl.DataFrame | None = None
    tokens: list[pl.DataFrame] = field(default_factory=list)
    hints: pl.DataFrame | None = None
    # what the pipeline around the rule records (ctxframe._rank.ranker.RankIndex.rank)
    matches: pl.DataFrame | None = None  # the name match table the rule scored
    content: Any = None  # the question's content evidence (a rule that reads it)
    question: Any = None
    scores: pl.DataFrame | None = None  # the rule's score per node (`node_row, score`)
    graph: pl.DataFrame | None = None  # graph evidence per node (`node_row, part, contribution`)

    def token_rows(self) -> pl.DataFrame:
        """Every recorded token row: ``node_row, qtoken, part, tier, weight, value,
        contribution, token`` (``token``: the node token, when the rule knows it)."""
        schema = {
            "node_row": pl.UInt32,
            "qtoken": pl.String,
            "part": pl.String,
            "tier": pl.Int8,
            "weight": pl.Float64,
            "value": pl.Float64,
            "contribution": pl.Float64,
            "token": pl.String,
        }
        if not self.tokens:
            return pl.DataFrame(schema=schema)
        frames = [
            t if "token" in t.columns else t.with_columns(token=pl.lit(None, pl.String))
            for t in self.tokens
        ]
        return pl.concat([t.select(list(schema)).cast(schema) for t in frames], how="vertical")

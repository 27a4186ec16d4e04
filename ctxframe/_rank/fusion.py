"""Fusing rules: several rankings of one question made into one.

:class:`Fused` ranks the question with each of its ``members`` (each with its own intent
multipliers and graph evidence, the scope levers applied to all), takes each member's best
``depth`` hits, and scores a node

* ``method="rrf"`` — reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009):
  ``sum_i w_i / (k + rank_i)``, a member that does not rank the node adding nothing;
* ``method="score"`` — weighted score fusion: ``sum_i w_i x norm_i(score)``, each member's scores
  divided by its best (``normalize="max"``), mapped onto [0, 1] (``"minmax"``) or as they are
  (``"none"``).

A node some member ranks as named (tier 0: the question names it) sorts first, as in a single
rule's ranking. With ``explain=True`` the evidence holds each member's rows for the fused hits
(``rule`` names the member) and one ``fusion`` row per member that ranked the hit (``source``
the member, ``tier`` its rank there, ``value`` its score, ``weight`` its weight); the fusion rows
add up to the fused score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from ctxframe._rank.parts import Trace
from ctxframe._rank.question import Question
from ctxframe._rank.registry import resolve

__all__ = ["Fused", "rank_fused"]

METHODS = ("rrf", "score")
NORMALIZE = ("max", "minmax", "none")
SCORE_DECIMALS = 6


@dataclass(frozen=True)
class Fused:
    """Several rules' rankings fused into one (see the module docstring)."""

    members: tuple = ()
    method: str = "rrf"
    weights: tuple[float, ...] | None = None
    k: float = 60.0
    depth: int = 1000
    normalize: str = "max"
    name: str = ""

    def __post_init__(self) -> None:
        members = tuple(resolve(m) for m in self.members)
        if len(members) < 1:
            raise ValueError("Fused needs at least one member rule")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, not {self.method!r}")
        if self.normalize not in NORMALIZE:
            raise ValueError(f"normalize must be one of {', '.join(NORMALIZE)}")
        object.__setattr__(self, "members", members)
        weights = tuple(float(w) for w in (self.weights or [1.0] * len(members)))
        if len(weights) != len(members):
            raise ValueError(f"{len(weights)} weights for {len(members)} member rules")
        object.__setattr__(self, "weights", weights)
        if not self.name:
            names = "+".join(str(getattr(m, "name", type(m).__name__)) for m in members)
            object.__setattr__(self, "name", f"{self.method}({names})")

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        """Not used: the ranking pipeline fuses the members' full rankings (``rank_fused``)."""
        raise TypeError("a Fused rule ranks through RankIndex.rank (g.query, g.rank)")


def _fuse(rule: Fused, member_hits: list[pl.DataFrame]) -> pl.DataFrame:
    """``node_row, score, tier, named`` from each member's ``node_row, rank, score, tier``,
    and the per-member contributions (``contributions``) for explaining."""
    parts = []
    for i, (hits, w) in enumerate(zip(member_hits, rule.weights, strict=True)):
        if hits.is_empty():
            continue
        if rule.method == "rrf":
            c = w / (rule.k + pl.col("rank").cast(pl.Float64))
        else:
            s = pl.col("score")
            if rule.normalize == "max":
                top = hits["score"].max() or 0.0
                c = w * s / top if top > 0 else pl.lit(0.0)
            elif rule.normalize == "minmax":
                lo, hi = hits["score"].min() or 0.0, hits["score"].max() or 0.0
                c = w * (s - lo) / (hi - lo) if hi > lo else pl.lit(w)
            else:
                c = w * s
        parts.append(hits.with_columns(member=pl.lit(i, pl.UInt32), contribution=c))
    schema = {
        "node_row": pl.UInt32,
        "member": pl.UInt32,
        "rank": pl.Int32,
        "score": pl.Float64,
        "tier": pl.Int8,
        "contribution": pl.Float64,
    }
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat([p.select(list(schema)).cast(schema) for p in parts])


def rank_fused(
    index,
    q: Question,
    rule: Fused,
    *,
    limit: int,
    within: str | None,
    deprioritize: Sequence[str],
    project_tokens: tuple[str, ...],
    deprioritize_factor: float,
    project_factor: float,
    kinds: Sequence[str] | None,
    explain: bool = False,
):
    """A :class:`Fused` rule's ranking over ``index`` (a RankIndex)."""
    rankings, traces, hits = [], [], []
    for member in rule.members:
        mq = Question.parse(q.text, getattr(member, "weights", None))
        trace = Trace() if explain else None
        r = index.run(
            mq,
            member,
            limit=rule.depth,
            within=within,
            deprioritize=deprioritize,
            project=project_tokens,
            deprioritize_factor=deprioritize_factor,
            project_factor=project_factor,
            kinds=kinds,
            trace=trace,
        )
        rankings.append(r)
        traces.append(trace)
        hits.append(
            pl.DataFrame(
                {
                    "node_row": r.rows,
                    "rank": r.hits["rank"],
                    "score": r.hits["score"],
                    "tier": r.hits["tier"],
                }
            )
        )
    contrib = _fuse(rule, hits)
    fused = contrib.group_by("node_row").agg(
        score=pl.col("contribution").sum().round(SCORE_DECIMALS),
        tier=pl.col("tier").min(),
        named=(pl.col("tier") == 0).any(),  # tier 0: the question names it
    )
    cand = fused.lazy().select(
        "node_row",
        node_id=pl.lit(index._ids).gather(pl.col("node_row")),
        named="named",
        score="score",
        tier="tier",
    )
    ranking = index._top(q, rule, cand, limit)
    if explain:
        ranking.evidence = _fused_evidence(
            index, ranking, rule, rankings, traces, contrib, deprioritize, deprioritize_factor
        )
    return ranking


def _fused_evidence(
    index, ranking, rule: Fused, rankings, traces, contrib, deprioritize, deprioritize_factor
) -> pl.DataFrame:
    from ctxframe._rank.explain import _frame, _order, evidence_rows

    keys = pl.DataFrame({"node_row": ranking.rows, "rank": ranking.hits["rank"]})
    ids = ranking.hits.select("rank", "id")
    frames = []
    names = [str(getattr(m, "name", type(m).__name__)) for m in rule.members]
    fusion = contrib.join(keys.rename({"rank": "fused"}), on="node_row").select(
        rank="fused",
        part=pl.lit("fusion"),
        rule=pl.lit(rule.name),
        tier=pl.col("rank").clip(upper_bound=127).cast(pl.Int8),
        weight=pl.col("member").replace_strict(
            dict(enumerate(rule.weights)), return_dtype=pl.Float64
        ),
        value="score",
        contribution="contribution",
        source=pl.col("member").replace_strict(dict(enumerate(names)), return_dtype=pl.String),
    )
    frames.append(fusion.join(ids, on="rank"))
    for member, r, trace, name in zip(rule.members, rankings, traces, names, strict=True):
        mine = pl.DataFrame({"node_row": r.rows, "_i": pl.int_range(r.rows.len(), eager=True)})
        mine = mine.join(keys, on="node_row")
        if mine.is_empty():
            continue
        pick = mine["_i"]
        sub = type(r)(
            query=r.query,
            hits=r.hits[pick],
            rows=r.rows.gather(pick),
            total=r.total,
            rule=r.rule,
            question=r.question,
            pre=r.pre.gather(pick) if r.pre is not None else None,
        )
        ev = evidence_rows(
            index,
            sub,
            member,
            trace,
            deprioritize=deprioritize,
            deprioritize_factor=deprioritize_factor,
        )
        # the member's rank becomes the fused rank (the member's rank is in the fusion row)
        to_fused = dict(zip(mine["_i"].to_list(), mine["rank"].to_list(), strict=True))
        member_rank = dict(enumerate(r.hits["rank"].to_list()))
        remap = {member_rank[i]: f for i, f in to_fused.items()}
        frames.append(
            ev.with_columns(
                rank=pl.col("rank").replace_strict(remap, return_dtype=pl.Int32),
                rule=pl.lit(name),
            )
        )
    return _order(_frame(frames))

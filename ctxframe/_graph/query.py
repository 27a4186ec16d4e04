"""A question's answer: ranked hits with their 1-hop neighbourhood, as frames that render
themselves (text within the output budget, HTML, a picture, JSON)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ctxframe._core.languages import language_for
from ctxframe._graph.edges import NEIGHBOURS_SCHEMA, EdgeIndex, SubsetEdgeIndex, neighbours_of
from ctxframe._rank.ranker import RankIndex, Ranking
from ctxframe._render.budget import DEFAULT_BUDGET_TOKENS, fit_blocks
from ctxframe._render.html import render
from ctxframe._render.picture import query_picture
from ctxframe._render.text import arrow_text, first_line, hit_name, location, one_line

SIG_CHARS = 160
DOC_CHARS = 160
ARROWS_SHOWN = 8  # per hit in the HTML table; the text and JSON keep them all


@dataclass
class QueryResult:
    """Ranked hits with their 1-hop neighbourhood; ``str()`` renders within the token budget."""

    query: str
    hits: pl.DataFrame
    neighbours: pl.DataFrame
    total: int = 0
    limit: int = 20
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    rule: str = "idf-tiers"
    tokens: list[str] = field(default_factory=list)
    abstained: str | None = None  # why the query returned "no structural match" (abstain=True)
    evidence: pl.DataFrame | None = None  # explain=True: each hit's evidence rows
    _explainer: Any = field(default=None, repr=False, compare=False)

    def explain(self, i: int | str | None = None) -> pl.DataFrame:
        """Why a hit ranks where it does: its evidence rows (field, token, tier, weight,
        contribution, ...; ctxframe._rank.explain), whose contributions add up to its score.
        ``i``: the hit's rank as shown (1 = the first hit) or its id; None: every hit."""
        evidence = self.evidence
        if evidence is None:
            if self._explainer is None:
                raise ValueError("this result cannot explain itself: query again with explain=True")
            evidence = self.evidence = self._explainer()
        if i is None:
            return evidence
        if isinstance(i, str):
            return evidence.filter(pl.col("id") == i)
        if isinstance(i, bool) or not isinstance(i, int) or i < 1 or i > self.hits.height:
            raise IndexError(
                f"no hit of rank {i!r}: ranks run from 1 to {self.hits.height} (or pass an id)"
            )
        return evidence.filter(pl.col("rank") == i)

    def __len__(self) -> int:
        return self.hits.height

    def _arrows_by_hit(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for row in self.neighbours.iter_rows(named=True):
            out.setdefault(row["hit_id"], []).append(row)
        return out

    def blocks(self) -> list[list[str]]:
        """One block of text lines per hit, in rank order."""
        arrows = self._arrows_by_hit()
        blocks = []
        for hit in self.hits.iter_rows(named=True):
            lines = [f"{hit['rank']}. {hit_name(hit)}  [{hit['kind']}]  {location(hit)}"]
            sig = one_line(hit.get("signature"), SIG_CHARS)
            if sig:
                lines.append(f"    sig: {sig}")
            doc = first_line(hit.get("doc"), DOC_CHARS)
            if doc:
                lines.append(f"    doc: {doc}")
            lang = hit_language(hit)
            lines.extend(f"    {arrow_text(a, lang)}" for a in arrows.get(hit["id"], []))
            blocks.append(lines)
        return blocks

    def _fit(self, budget_tokens: int | None = None):
        budget = self.budget_tokens if budget_tokens is None else budget_tokens
        return fit_blocks(
            self.blocks(),
            budget_tokens=budget,
            max_blocks=self.limit,
            total=max(self.total, self.hits.height),
        )

    def render(self, budget_tokens: int | None = None) -> str:
        """Text rendering within ``budget_tokens`` (default: the query's budget); with the
        evidence (``explain=True``), each shown hit's biggest pieces of evidence after it."""
        if self.abstained:
            return f"no structural match for {self.query!r} ({self.abstained})"
        if self.hits.is_empty():
            return f"no matches for {self.query!r}"
        fitted = self._fit(budget_tokens)
        if self.evidence is None:
            return fitted.text
        from ctxframe._rank.explain import explain_text

        shown = self.evidence.filter(pl.col("rank") <= fitted.shown)
        why = explain_text(shown)
        return f"{fitted.text}\n\nwhy (contributions add up to each hit's score):\n{why}"

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"<QueryResult {self.query!r}: {self.hits.height} of {self.total} hits>"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict of the hits that fit the budget, each with its neighbours."""
        fitted = self._fit() if not self.hits.is_empty() else None
        shown = fitted.shown if fitted else 0
        arrows = self._arrows_by_hit()
        hits = []
        evidence = self._evidence_by_rank()
        for hit in self.hits.head(shown).iter_rows(named=True):
            hit = dict(hit)
            hit["neighbours"] = [
                {k: v for k, v in a.items() if k != "hit_id"} for a in arrows.get(hit["id"], [])
            ]
            if evidence is not None:
                hit["evidence"] = evidence.get(hit["rank"], [])
            hits.append(hit)
        return {
            "verb": "query",
            "status": "ok",
            "query": self.query,
            "rule": self.rule,
            "tokens": list(self.tokens),
            "total": int(self.total),
            "hits": hits,
            "truncated": bool(fitted.truncated) if fitted else False,
            "abstained": self.abstained,
        }

    def _evidence_by_rank(self) -> dict[int, list[dict[str, Any]]] | None:
        if self.evidence is None:
            return None
        out: dict[int, list[dict[str, Any]]] = {}
        for row in self.evidence.drop("id").iter_rows(named=True):
            out.setdefault(row.pop("rank"), []).append(row)
        return out

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return {"text/plain": self.render(), "text/html": self._repr_html_()}

    def plot(self, top: int = 10, cap: int = 40):
        """Draw the top hits with their 1-hop neighbours (pyvis, offline)."""
        return query_picture(self, top=top, cap=cap)

    def _repr_html_(self) -> str:
        arrows = self._arrows_by_hit()
        hits = [
            {**h, "arrows": [arrow_text(a, hit_language(h)) for a in arrows.get(h["id"], [])]}
            for h in self.hits.iter_rows(named=True)
        ]
        return render(
            "query",
            query=self.query,
            rule=self.rule,
            shown=len(hits),
            total=self.total,
            hits=hits,
            abstained=self.abstained,
            sig_chars=SIG_CHARS,
            arrows=ARROWS_SHOWN,
        )


def answer(
    ranking: Ranking,
    edge_index: EdgeIndex | SubsetEdgeIndex | None,
    *,
    limit: int = 20,
    include_ambiguous: bool = False,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
) -> QueryResult:
    """A ranking with each hit's capped 1-hop neighbourhood attached."""
    if edge_index is None or ranking.rows.is_empty():
        arrows = pl.DataFrame(schema=NEIGHBOURS_SCHEMA)
    else:
        arrows = edge_index.arrows(ranking.rows)
    neighbours = neighbours_of(
        arrows, ranking.hits["id"].to_list(), include_ambiguous=include_ambiguous
    )
    return QueryResult(
        query=ranking.query,
        hits=ranking.hits,
        neighbours=neighbours,
        total=ranking.total,
        limit=limit,
        budget_tokens=budget_tokens,
        rule=ranking.rule,
        tokens=ranking.tokens,
        evidence=ranking.evidence,
    )


def run_query(
    nodes: pl.DataFrame,
    edges: pl.DataFrame | None,
    tokens: pl.DataFrame | None,
    text: str,
    *,
    limit: int = 20,
    rule: Any = None,
    within: str | None = None,
    include_ambiguous: bool = False,
    deprioritize: Sequence[str] = (),
    project_tokens: Iterable[str] = (),
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    kinds: Sequence[str] | None = None,
) -> QueryResult:
    """One-shot query over frames: rank with a fresh :class:`RankIndex`, attach neighbours.
    ``tokens``: a token table (ctxframe._rank.fields), ``node_id, token`` rows, or None."""
    ranking = RankIndex(nodes, tokens).rank(
        text,
        limit=limit,
        rule=rule,
        within=within,
        deprioritize=deprioritize,
        project_tokens=project_tokens,
        kinds=kinds,
    )
    index = None if edges is None else SubsetEdgeIndex(edges, nodes)
    return answer(
        ranking,
        index,
        limit=limit,
        include_ambiguous=include_ambiguous,
        budget_tokens=budget_tokens,
    )


def hit_language(hit: dict[str, Any]) -> str | None:
    """The language of a hit's code (by its file's extension), for the builtins it names."""
    if hit.get("language"):
        return hit["language"]
    lang = language_for(hit["path"]) if hit.get("path") else None
    return lang.name if lang is not None else None

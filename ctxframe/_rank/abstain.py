"""Abstain: say "no structural match" instead of ranking noise for a question about no code.

A hook or an agent sends every prompt; many are not about the code ("write a haiku", "what is
the capital of Australia"). Their words still match something in a big graph — a ``write``
method, a ``capital`` field — but only through *generic* tokens. The decision is small and
separate (:func:`decide`), fed by :func:`assess`:

* **code evidence resolves** — the text names a path, a module, a dotted or identifier-shaped
  name (:mod:`ctxframe._rank.evidence`) that is a node's label, qualname or file in this graph:
  never abstain;
* otherwise look at the **best hit**: which query tokens it matched, and how many nodes hold the
  node tokens they matched (``df``). A token is *specific* when its ``df`` is at most
  ``max(min_df, share x N)`` nodes. Abstain when nothing matched at all, or when the best hit
  matched no specific token and fewer than ``together`` distinct query tokens (two common words
  meeting in one name, ``refund`` + ``processor``, say more than either alone).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from ctxframe._rank.evidence import Evidence, extract

__all__ = ["AbstainPolicy", "Decision", "assess", "decide"]


@dataclass(frozen=True)
class AbstainPolicy:
    """Thresholds of the abstain decision (measured in docs/ranking.md)."""

    share: float = 0.01  # a token held by at most this share of nodes is specific...
    min_df: int = 12  # ...or by at most this many nodes (small repos)
    trigram_counts: bool = False  # whether a fuzzy (trigram) match of a specific token counts
    together: int = 2  # a best hit matching this many distinct query tokens is not noise


@dataclass(frozen=True)
class Decision:
    """Whether to abstain, and why (one line)."""

    abstain: bool
    reason: str
    specific: tuple[str, ...] = ()  # specific query tokens the best hit matched
    resolved: tuple[str, ...] = ()  # code evidence found in this graph


def decide(*, has_hits: bool, specific: Iterable[str], resolved: Iterable[str]) -> Decision:
    """The rule itself, on facts already gathered (see the module docstring)."""
    specific, resolved = tuple(specific), tuple(resolved)
    if resolved:
        return Decision(False, f"names code: {', '.join(resolved[:3])}", specific, resolved)
    if not has_hits:
        return Decision(True, "nothing in the graph matches", (), ())
    if not specific:
        return Decision(
            True,
            "the best hit shares only common words with the question",
            (),
            (),
        )
    return Decision(False, f"matches specific tokens: {', '.join(specific[:3])}", specific, ())


def _resolved(ev: Evidence, nodes: pl.DataFrame) -> tuple[str, ...]:
    names = [n for n in ev.names if len(n) >= 3]
    out: list[str] = []
    if names:
        hit = nodes.filter(pl.col("label").is_in(names) | pl.col("qualname").is_in(names)).select(
            pl.coalesce("qualname", "label")
        )
        found = set(hit.to_series().to_list())
        out.extend(n for n in names if n in found or n.split(".")[-1] in found)
    if ev.paths or ev.modules:
        paths = nodes.filter(pl.col("kind") == "file")["id"].str.to_lowercase()
        for p in ev.paths:
            if paths.is_in([p]).any() or paths.str.ends_with("/" + p).any():
                out.append(p)
        for m in ev.modules:
            if m.count("/") < 1:
                continue
            if (
                paths.str.ends_with(m + ".py").any()
                or paths.str.ends_with(m + "/__init__.py").any()
            ):
                out.append(m)
    return tuple(dict.fromkeys(out))


def assess(index, text: str, top_node: str | None, policy: AbstainPolicy | None = None) -> Decision:
    """Gather the facts for :func:`decide` from a ``RankIndex`` and the best hit's id."""
    policy = policy or AbstainPolicy()
    ev = extract(text)
    resolved = _resolved(ev, index.nodes)
    if top_node is None:
        return decide(has_hits=False, specific=(), resolved=resolved)
    limit = max(policy.min_df, int(policy.share * index.n_nodes))
    mt = index.match_table(text)
    top_all = mt.filter(pl.col("node_id") == top_node)
    top = top_all if policy.trigram_counts else top_all.filter(pl.col("tier") != 3)
    specific = sorted(set(top.filter(pl.col("df") <= limit)["qtoken"].to_list()))
    if not specific and top_all["qtoken"].n_unique() >= policy.together:
        specific = sorted(set(top_all["qtoken"].to_list()))
    return decide(has_hits=True, specific=specific, resolved=resolved)

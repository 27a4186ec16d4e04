"""Abstain: say "no structural match" instead of ranking noise for a question about no code.

A hook or an agent sends every prompt; many are not about the code ("write a haiku", "remind me
to update the test plan before Friday"). Their words still match something in a big graph — a
``write`` method, a ``test`` folder — because in a large code base almost every English word is
rare in *some* name. Rarity in the code cannot tell chat from a question; how much *more* common
a word is in this code than in English can: ``response`` is common English and far more common
in httpx, ``coffee`` is neither.

A word's **code affinity** is ``log10(share / english)``: ``share`` = the share of this graph's
nodes holding the word or a word with its Snowball stem (any field: name, path, signature, doc,
body), ``english`` = its frequency in English (ctxframe._rank.english, wordfreq). The decision
(:func:`decide`, fed by :func:`assess`):

* **speak** when the text names code: a path, a module or a definition of this graph, or any
  identifier-shaped word (``snake_case``, ``CamelCase``, ``call()``, dotted, backticked);
* **abstain** when nothing matched at all;
* otherwise **speak** when the most code-like word reaches ``lead`` and the second ``second``
  (a one-word question: the lead alone) and at least ``share`` of the words reach ``word`` (a
  code question is mostly code words), or
  when it asks *where* something is and one word reaches ``where``; else **abstain**.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from ctxframe._rank.evidence import Evidence
from ctxframe._rank.question import Question

__all__ = ["AbstainPolicy", "Decision", "affinities", "assess", "decide"]

LOCATION_WORDS = frozenset({"where"})
TYPO_ZIPF = 2.5  # a word English rarely uses (a misspelling) may stand for the name it matched


@dataclass(frozen=True)
class AbstainPolicy:
    """Thresholds of the abstain decision, in log10 units of code affinity (chosen on the dev
    halves of both non-code prompt sets and short_dev's questions, docs/ranking.md)."""

    lead: float = 3.0  # the most code-like word is 1000x more common here than in English...
    second: float = 2.0  # ...and the next one 100x
    word: float = 0.5  # a word at least this code-like counts as a code word...
    share: float = 0.5  # ...and at least this share of the words must be code words
    where: float = 2.0  # a "where" question: one word this code-like is enough


@dataclass(frozen=True)
class Decision:
    """Whether to abstain, and why (one line)."""

    abstain: bool
    reason: str
    specific: tuple[str, ...] = ()  # the question's code-like words, most code-like first
    resolved: tuple[str, ...] = ()  # code evidence found in this graph


def decide(
    *,
    has_hits: bool,
    specific: Iterable[str] = (),
    resolved: Iterable[str] = (),
    identifiers: Iterable[str] = (),
    code_like: bool | None = None,
) -> Decision:
    """The rule itself, on facts already gathered (see the module docstring). ``code_like``:
    the affinity test's verdict (None: decided by whether any ``specific`` word is given)."""
    specific, resolved, identifiers = tuple(specific), tuple(resolved), tuple(identifiers)
    if resolved:
        return Decision(False, f"names code: {', '.join(resolved[:3])}", specific, resolved)
    if identifiers:
        return Decision(False, f"identifiers: {', '.join(identifiers[:3])}", specific, ())
    if not has_hits:
        return Decision(True, "nothing in the graph matches", specific, ())
    if code_like is None:
        code_like = bool(specific)
    if not code_like:
        return Decision(True, "its words are no more common in this code than in English", specific)
    return Decision(False, f"code words: {', '.join(specific[:3])}", specific, ())


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


def affinities(index, q: Question) -> dict[str, float]:
    """Each query word's code affinity in this graph (see the module docstring). A word no
    node holds, not even by its stem, and English rarely uses (``TYPO_ZIPF``: a misspelling)
    stands for the name token the ranker matched it to (``refnud`` -> ``refund``), if any."""
    from ctxframe._rank.english import zipf

    words = sorted(q.counts)
    if not words or index.n_nodes == 0:
        return {}
    groups = index.stem_codes({w: q.stems[w] for w in words})
    share: dict[str, int] = {}
    if groups.height:
        df = pl.max_horizontal(
            pl.lit(index._name_df).gather(pl.col("token_id")),
            pl.lit(index._c_df).gather(pl.col("token_id")),
        )
        per = groups.group_by("qtoken").agg(df=df.max())
        share = dict(zip(per["qtoken"].to_list(), per["df"].to_list(), strict=True))
    stand_in = {w: w for w in words}
    eng = zipf(words)
    missing = [w for w in words if not share.get(w) and eng[w] < TYPO_ZIPF]
    if missing:  # typos: the name token a fuzzy tier matched, the most common one
        m = index.match_table(Question.parse(" ".join(missing)))
        if m.height:
            best = m.sort(["qtoken", "tier", "df"], descending=[False, False, True]).unique(
                "qtoken", keep="first"
            )
            for w, tok, n_df in best.select("qtoken", "token", "df").iter_rows():
                stand_in[w], share[w] = tok, n_df
    eng |= zipf(v for k, v in stand_in.items() if v != k)
    n = float(index.n_nodes)
    out = {}
    for w in words:
        s = (share.get(w) or 0) / n
        z = eng[stand_in[w]]
        e = 10 ** (z - 9) if z > 0 else 1e-9
        out[w] = math.log10((s + 1e-6) / (e + 1e-8))
    return out


def assess(
    index, text: str | Question, top_node: str | None, policy: AbstainPolicy | None = None
) -> Decision:
    """Gather the facts for :func:`decide` from a ``RankIndex`` and the best hit's id."""
    policy = policy or AbstainPolicy()
    q = text if isinstance(text, Question) else Question.parse(text)
    ev = q.evidence
    resolved = _resolved(ev, index.nodes)
    if resolved or ev.identifiers:
        return decide(has_hits=top_node is not None, resolved=resolved, identifiers=ev.identifiers)
    if top_node is None:
        return decide(has_hits=False)
    aff = affinities(index, q)
    ranked = sorted(aff.items(), key=lambda kv: (-kv[1], kv[0]))
    values = [v for _w, v in ranked] + [-math.inf, -math.inf]
    code_words = [w for w, v in ranked if v >= policy.word]
    specific = [w for w, v in ranked if v >= policy.second]
    mostly_code = len(code_words) >= policy.share * max(len(ranked), 1)
    second = values[1] >= policy.second or len(ranked) == 1  # one word: the lead alone
    code_like = values[0] >= policy.lead and second and mostly_code
    if not code_like and q.words & LOCATION_WORDS:
        code_like = values[0] >= policy.where
    return decide(has_hits=True, specific=specific or code_words[:1], code_like=code_like)

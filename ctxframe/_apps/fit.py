"""Fitting a rule's weights on labelled questions, with cross-validation.

``fit_rule(graphs, queries, rule="idf-tiers", params=None, folds=5, metric="mrr")`` ranks every
question once with the base rule, keeping for its best ``depth`` hits the parts of their scores
(ctxframe._rank.parts: name tiers, content, parent words, hints, ...), what the graph stage added
and which intent multipliers apply. A :class:`ctxframe._rank.fitted.Fitted` rule scores a node
``(sum_p w_p x part_p + graph) x multipliers``, so re-ranking those hits under other weights
is a few NumPy operations per question, no ranking again. Coordinate ascent (Metzler and Croft's
linear feature-based model) then moves one weight at a time — each part's weight, and the
``test``/``stub``/``doc`` multipliers when named in ``params`` — to the value of a small grid that
most improves the mean ``metric`` (``mrr``, ``acc@k``, ``recall@k``, ``ndcg@k`` of
ctxframe._apps.eval) at ``level`` (node, file or function), until a round changes nothing.

Cross-validation: the questions split into ``folds`` by a hash of their ids (deterministic); each
fold is held out once while the weights are fitted on the others, and the report gives per fold
the metric before (the base rule) and after on the training and on the held-out questions, and
an ``all`` row over every question's held-out figure. The rule returned is fitted on every
question; its ``report`` is that table and ``fit_info`` the summary (also written to TOML).

Two approximations, both stated in the report's docs: a node outside the base rule's ``depth``
best is never re-ranked into view, and the graph stage (``callers``) keeps what it added under
the base rule.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ctxframe._apps.eval import DEFAULT_K, _graph_for, metrics
from ctxframe._core.errors import ConfigError
from ctxframe._rank.fitted import INTENTS, Fitted
from ctxframe._rank.parts import PARTS
from ctxframe._rank.querysets import load_queries
from ctxframe._rank.registry import resolve

__all__ = ["DEFAULT_DEPTH", "FitError", "fit_rule"]

DEFAULT_DEPTH = 1000
STEPS = (0.0, 0.5, 0.8, 1.25, 2.0)  # a weight's candidates: these times its current value
FROM_ZERO = (0.25, 0.5, 1.0)  # ... and these when it is 0
MAX_INTENT = 1.0  # an intent multiplier stays a discount
DEFINITION_EXCLUDED = frozenset({"file", "module", "document", "section"})


class FitError(ConfigError):
    """A fit that cannot run (no labelled question at the level, unknown parameter)."""


@dataclass
class _Q:
    """One question's hits under the base rule: what re-ranking them needs."""

    qid: str
    x: np.ndarray  # (hits, parts)
    graph: np.ndarray  # what the graph stage added
    flags: np.ndarray  # (hits, 3): the test, stub and doc multipliers apply
    fixed: np.ndarray  # the multipliers not fitted (deprioritize)
    named: np.ndarray  # the question names the node: it sorts first
    tie: np.ndarray  # position of the id in id order (ties break by id)
    unit: np.ndarray  # per hit its unit at the level (file index; -1: none) or the hit itself
    gold: list[np.ndarray]  # per gold item, the hits that count for it
    n_gold: int


def _unit_arrays(level: str, hits: pl.DataFrame, golds: Sequence[str]):
    """Per hit its unit (files: a file index; nodes and functions: the hit itself or -1 for
    hits that do not count), and per gold item the units that count for it."""
    ids, paths = hits["id"].to_list(), hits["path"].to_list()
    kinds, quals = hits["kind"].to_list(), hits["qualname"].to_list()
    m = len(ids)
    if level == "file":
        index: dict[str, int] = {}
        unit = np.array([index.setdefault(p, len(index)) if p else -1 for p in paths])
        gold = [np.array([index[g]] if g in index else [], dtype=np.int64) for g in golds]
        return unit, gold
    if level == "node":
        unit = np.arange(m)
        gold = [np.array([i for i, x in enumerate(ids) if x == g], dtype=np.int64) for g in golds]
        return unit, gold
    keep = [
        k not in DEFINITION_EXCLUDED and p is not None for k, p in zip(kinds, paths, strict=True)
    ]
    unit = np.where(np.array(keep, dtype=bool), np.arange(m), -1)
    gold = []
    for g in golds:
        if "::" in g:
            hit = [i for i, x in enumerate(ids) if x == g and keep[i]]
        else:
            hit = [i for i, q in enumerate(quals) if q == g and keep[i]]
        gold.append(np.array(hit, dtype=np.int64))
    return unit, gold


def _ranks(q: _Q, score: np.ndarray) -> list[int | None]:
    """The rank of each gold item when the hits are ordered by ``score`` (named first, then
    score, then id): units (files, definitions, nodes) in the order of their first hit."""
    order = np.lexsort((q.tie, -score, ~q.named))
    seq = q.unit[order]
    seq = seq[seq >= 0]
    rank_of = np.full(int(q.unit.max()) + 1 if q.unit.size else 0, -1, dtype=np.int64)
    if seq.size:
        units, first = np.unique(seq, return_index=True)
        rank_of[units] = np.argsort(np.argsort(first)) + 1
    out: list[int | None] = []
    for g in q.gold:
        r = rank_of[g] if g.size else g
        r = r[r > 0]
        out.append(int(r.min()) if r.size else None)
    return out


class _Model:
    """Part weights and intent multipliers over the columns of the training data."""

    def __init__(self, parts: list[str], weights: np.ndarray, intents: np.ndarray) -> None:
        self.parts = parts
        self.w = weights
        self.iv = intents  # test, stub, doc

    def copy(self) -> _Model:
        return _Model(self.parts, self.w.copy(), self.iv.copy())

    def score(self, q: _Q) -> np.ndarray:
        s = q.x @ self.w + q.graph
        mult = q.fixed * np.prod(np.where(q.flags, self.iv[None, :], 1.0), axis=1)
        return np.round(s * mult, 6)


def _objective(model: _Model, qs: Sequence[_Q], metric: str, k: Sequence[int]) -> float:
    if not qs:
        return 0.0
    total = 0.0
    for q in qs:
        total += metrics(_ranks(q, model.score(q)), k)[metric]
    return total / len(qs)


def _ascend(
    start: _Model,
    qs: Sequence[_Q],
    free: Sequence[str],
    metric: str,
    k: Sequence[int],
    rounds: int,
) -> tuple[_Model, float]:
    """Coordinate ascent from ``start`` over the ``free`` parameters (parts and intents)."""
    model = start.copy()
    best = _objective(model, qs, metric, k)
    for _ in range(rounds):
        moved = False
        for name in free:
            if name in INTENTS:
                vec, i, top = model.iv, INTENTS.index(name), MAX_INTENT
            else:
                vec, i, top = model.w, model.parts.index(name), None
            cur = float(vec[i])
            cands = [cur * s for s in STEPS] if cur else list(FROM_ZERO)
            cands = sorted({round(c, 6) for c in cands if top is None or c <= top} - {cur})
            for c in cands:
                vec[i] = c
                val = _objective(model, qs, metric, k)
                if val > best + 1e-12:
                    best, cur, moved = val, c, True
                vec[i] = cur
        if not moved:
            break
    return model, best


def _label(metric: str) -> str:
    return "mrr" if metric == "rr" else metric


def _folds(qids: Sequence[str], folds: int) -> list[int]:
    """Fold of each question: ids ordered by a blake2b hash, dealt out in turn."""
    key = [int.from_bytes(hashlib.blake2b(q.encode(), digest_size=8).digest(), "big") for q in qids]
    order = sorted(range(len(qids)), key=lambda i: (key[i], qids[i]))
    out = [0] * len(qids)
    for pos, i in enumerate(order):
        out[i] = pos % folds
    return out


def _level_of(qs: pl.DataFrame, level: str | None) -> str:
    if level is not None:
        if level not in ("node", "file", "function"):
            raise FitError(f"level must be node, file or function, not {level!r}")
        return level
    for lv, col in (("node", "gold_ids"), ("function", "gold_functions"), ("file", "gold_files")):
        if qs[col].list.len().sum():
            return lv
    raise FitError("no question has gold ids, files or functions: nothing to fit on")


def _collect(graphs: Any, qs: pl.DataFrame, base: Any, level: str, depth: int) -> list[_Q]:
    """Rank every question once with ``base`` and keep its hits' parts (see the module
    docstring)."""
    from ctxframe._core.paths import glob_to_regex

    cache: dict[str, Any] = {}
    out: list[_Q] = []
    col = {"node": "gold_ids", "file": "gold_files", "function": "gold_functions"}[level]
    defaults = np.array([float(getattr(base, n)) for n in INTENTS])
    for row in qs.iter_rows(named=True):
        graph = _graph_for(row, graphs, cache)
        golds = list(row[col])
        if level == "file" and not golds and row["gold_ids"]:
            nodes = graph.nodes.filter(pl.col("id").is_in(row["gold_ids"]))
            golds = sorted({p for p in nodes["path"].to_list() if p})
        if not golds:
            continue
        ranking = graph._ranking(row["query"], limit=depth, rule=base, within=None, parts=True)
        hits, parts = ranking.hits, ranking.parts
        if hits.is_empty():
            x = np.zeros((0, len(PARTS)))
        else:
            x = parts.select(PARTS).to_numpy().astype(np.float64)
        ix = graph._rank_index
        rows = ranking.rows
        intents = ranking.question.intents if ranking.question is not None else frozenset()
        applies = [
            ix._is_test.gather(rows).to_numpy() & ("test" not in intents),
            ix._is_stub.gather(rows).to_numpy() & ("import" not in intents),
            ix._is_doc.gather(rows).to_numpy() & ("doc" not in intents),
        ]
        flags = np.stack(applies, axis=1) if hits.height else np.zeros((0, 3), dtype=bool)
        fixed = np.ones(hits.height)
        globs = [glob_to_regex(g) for g in graph.config.deprioritize if g and g.strip()]
        if globs and hits.height:
            dep = hits["path"].str.contains("|".join(f"(?:{r})" for r in globs)).fill_null(False)
            fixed = np.where(dep.to_numpy(), 0.5, 1.0)
        unit, gold = _unit_arrays(level, hits, golds)
        tie = np.argsort(np.argsort(np.array(hits["id"].to_list(), dtype=object), kind="stable"))
        q = _Q(
            qid=row["qid"],
            x=x,
            graph=parts["graph"].to_numpy() if hits.height else np.zeros(0),
            flags=flags,
            fixed=fixed,
            named=parts["named"].to_numpy() if hits.height else np.zeros(0, dtype=bool),
            tie=tie,
            unit=unit,
            gold=gold,
            n_gold=len(golds),
        )
        # the base rule's order must come back with every weight at 1
        check = _Model(list(PARTS), np.ones(len(PARTS)), defaults).score(q)
        if hits.height and not np.allclose(check, hits["score"].to_numpy(), atol=2e-6):
            raise FitError(f"{row['qid']}: the parts of {base!r} do not add up to its scores")
        out.append(q)
    return out


def fit_rule(
    graphs: Any,
    queries: Any,
    rule: Any = "idf-tiers",
    params: Iterable[str] | None = None,
    folds: int = 5,
    metric: str = "mrr",
    *,
    level: str | None = None,
    k: Iterable[int] = DEFAULT_K,
    depth: int = DEFAULT_DEPTH,
    rounds: int = 4,
    name: str | None = None,
    also: Iterable[str] = (),
) -> Fitted:
    """Fit the weights of ``rule``'s evidence parts (and intent multipliers) on labelled
    questions with ``folds``-fold cross-validation; the fitted rule, its per-fold report in
    ``.report`` and the summary in ``.fit_info`` (see the module docstring).

    ``graphs``: as ``cf.evaluate``'s (a Graph, a path, a mapping name -> Graph/path, or None
    for each question's own repo/store); ``queries``: a query set (JSONL path, list, frame);
    ``rule``: the base (``idf-tiers``, an ``IdfTiers``, or a ``Fitted`` rule to start from);
    ``params``: the parts (ctxframe._rank.parts.PARTS) and intents (``test``, ``stub``,
    ``doc``) to fit (default: every part some question has, and the intents); ``metric``:
    ``mrr``, ``acc@k``, ``recall@k`` or ``ndcg@k``; ``level``: node, file or function (default:
    the first the questions have gold for, in that order); ``depth``: hits re-ranked per
    question; ``rounds``: at most this many passes over the parameters; ``also``: more
    metrics reported held out (columns ``heldout_before_<m>``, ``heldout_after_<m>``), not
    fitted."""
    t0 = time.perf_counter()
    k = tuple(sorted({int(x) for x in k}))
    metric = "rr" if metric == "mrr" else metric
    extra = ["rr" if m == "mrr" else m for m in also]
    for m in [metric, *extra]:
        if m not in metrics([1], k):
            known = ", ".join(["mrr", *(x for x in metrics([1], k) if x != "rr")])
            raise FitError(f"unknown metric {m!r}; use one of: {known}")
    start = resolve(rule)
    if isinstance(start, Fitted):
        base, init = start.base, start.weight_map
        ivals = [float(getattr(start, n)) for n in INTENTS]
    else:
        base, init = start, {p: 1.0 for p in PARTS}
        ivals = [float(getattr(base, n, 1.0)) for n in INTENTS]
    if not getattr(base, "explains", False):
        raise FitError(
            f"rule {getattr(base, 'name', base)!r} does not record its parts: fit IdfTiers"
        )
    qs = load_queries(queries)
    level = _level_of(qs, level)
    data = _collect(graphs, qs, base, level, depth)
    if not data:
        raise FitError(f"no question has gold at the {level} level")
    t_collect = time.perf_counter() - t0
    present = [p for i, p in enumerate(PARTS) if any(np.any(q.x[:, i] != 0) for q in data)]
    free = list(params) if params is not None else [*present, *INTENTS]
    bad = sorted(set(free) - set(PARTS) - set(INTENTS))
    if bad:
        raise FitError(
            f"unknown parameter {bad[0]!r}; use parts ({', '.join(PARTS)}) or intents "
            f"({', '.join(INTENTS)})"
        )
    start_model = _Model(list(PARTS), np.array([init[p] for p in PARTS]), np.array(ivals))
    n_folds = max(2, min(int(folds), len(data))) if len(data) > 1 else 1
    fold_of = _folds([q.qid for q in data], n_folds)
    rows = []
    held_before, held_after = [], []
    held_extra: dict[str, list[float]] = {f"{w}_{m}": [] for m in extra for w in ("b", "a")}
    for f in range(n_folds if n_folds > 1 else 0):
        train = [q for q, g in zip(data, fold_of, strict=True) if g != f]
        test = [q for q, g in zip(data, fold_of, strict=True) if g == f]
        model, after = _ascend(start_model, train, free, metric, k, rounds)
        before = _objective(start_model, train, metric, k)
        hb = [_objective(start_model, [q], metric, k) for q in test]
        ha = [_objective(model, [q], metric, k) for q in test]
        held_before += hb
        held_after += ha
        more = {}
        for m in extra:
            xb = [_objective(start_model, [q], m, k) for q in test]
            xa = [_objective(model, [q], m, k) for q in test]
            held_extra[f"b_{m}"] += xb
            held_extra[f"a_{m}"] += xa
            more[f"heldout_before_{_label(m)}"] = float(np.mean(xb)) if xb else None
            more[f"heldout_after_{_label(m)}"] = float(np.mean(xa)) if xa else None
        rows.append(
            {
                "fold": str(f + 1),
                "train": len(train),
                "heldout": len(test),
                "train_before": before,
                "train_after": after,
                "heldout_before": float(np.mean(hb)) if hb else None,
                "heldout_after": float(np.mean(ha)) if ha else None,
                **more,
            }
        )
    model, after = _ascend(start_model, data, free, metric, k, rounds)
    before = _objective(start_model, data, metric, k)
    rows.append(
        {
            "fold": "all",
            "train": len(data),
            "heldout": len(held_before),
            "train_before": before,
            "train_after": after,
            "heldout_before": float(np.mean(held_before)) if held_before else None,
            "heldout_after": float(np.mean(held_after)) if held_after else None,
            **{
                f"heldout_{'before' if w == 'b' else 'after'}_{_label(m)}": (
                    float(np.mean(held_extra[f"{w}_{m}"])) if held_extra[f"{w}_{m}"] else None
                )
                for m in extra
                for w in ("b", "a")
            },
        }
    )
    schema = {
        "fold": pl.String,
        "train": pl.Int64,
        "heldout": pl.Int64,
        "train_before": pl.Float64,
        "train_after": pl.Float64,
        "heldout_before": pl.Float64,
        "heldout_after": pl.Float64,
    }
    for m in extra:
        schema |= {
            f"heldout_before_{_label(m)}": pl.Float64,
            f"heldout_after_{_label(m)}": pl.Float64,
        }
    report = pl.DataFrame(rows, schema=schema)
    weights = {p: round(float(w), 6) for p, w in zip(PARTS, model.w, strict=True) if w != 1.0}
    label = _label(metric)
    info = {
        "metric": label,
        "level": level,
        "folds": n_folds,
        "questions": len(data),
        "depth": depth,
        "params": list(free),
        "train_before": round(before, 6),
        "train_after": round(after, 6),
        "heldout_before": round(float(np.mean(held_before)), 6) if held_before else None,
        "heldout_after": round(float(np.mean(held_after)), 6) if held_after else None,
        "seconds_collect": round(t_collect, 1),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return Fitted(
        base=base,
        part_weights=weights,
        name=name or f"fitted-{label}-{level}",
        fit={k_: v for k_, v in info.items() if v is not None},
        report=report,
        **{n: float(v) for n, v in zip(INTENTS, model.iv, strict=True)},
    )

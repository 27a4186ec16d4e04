"""Ranking evaluation: labelled questions in, per-query and summary metrics out.

``evaluate(graph_or_stores, queries, rules=[...], k=(1, 5, 10))`` runs every question of a query
set (see :mod:`ctxframe._rank.querysets`) under every rule and scores the ranking at three levels:

* ``node`` — the gold node ids, ranked among all hits;
* ``file`` — the gold files; a file's rank is its position when files are ordered by their best
  node's rank (the first hit in a file places the file);
* ``function`` — the gold functions (qualnames, optionally ``path::Qualname``), ranked among
  definitions only (file, stub, document and section nodes left out).

Per level and query: ``rr`` (reciprocal rank of the first gold item; 0 when none is within
``limit``), ``acc@k`` (every gold item in the top k), ``recall@k`` (share of gold items in the top
k) and ``ndcg@k`` (binary gains, ideal = all gold items first). Questions without gold at a level
are not scored at that level. The classic baselines are rules like any other (``bm25-file``,
``bm25-symbol``, their ``-src`` variants without test files: :class:`ctxframe.rules.BM25Text`),
so they sit in the same tables; a file ranker is scored at the file level only.
:meth:`Evaluation.compare` pairs two rules question by question:
wins / losses / ties on ``rr`` and a bootstrap confidence interval of the MRR difference.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ctxframe._core.errors import ConfigError, StoreNotFound
from ctxframe._graph.graph import Graph, index_graph, open_graph
from ctxframe._rank.querysets import load_queries
from ctxframe._rank.registry import resolve
from ctxframe._render.html import render

__all__ = [
    "Evaluation",
    "Ranker",
    "all_in_top",
    "evaluate",
    "first_rank",
    "metrics",
    "paired",
    "rank_files",
    "rank_functions",
    "rank_nodes",
]

DEFAULT_K = (1, 5, 10)
DEFAULT_LIMIT = 500
LEVELS = ("node", "file", "function")
NON_DEFINITION_KINDS = frozenset({"file", "module", "document", "section"})


# --------------------------------------------------------------------------- ranking


class Ranker:
    """Ranks nodes of one graph without building neighbourhoods (what evaluation needs), with
    the graph's configured ``deprioritize`` globs and project tokens, as ``g.query`` does, so
    the ranks are the ones a user sees."""

    def __init__(self, graph):
        self.graph = graph

    def rank(self, text: str, rule: Any = None, limit: int = DEFAULT_LIMIT) -> pl.DataFrame:
        """Hits ``rank, id, kind, qualname, path, score, tier`` for ``text`` (best first)."""
        hits = self.graph.rank(text, limit=limit, rule=rule)
        return hits.select("rank", "id", "kind", "qualname", "path", "score", "tier")


def rank_files(hits: pl.DataFrame, gold_files: Sequence[str]) -> list[int | None]:
    """Rank of each gold file: files ordered by their best node's rank (None when absent)."""
    order: dict[str, int] = {}
    for path in hits["path"].to_list():
        if path is not None and path not in order:
            order[path] = len(order) + 1
    return [order.get(f) for f in gold_files]


def _definition_hits(hits: pl.DataFrame) -> pl.DataFrame:
    return hits.filter(
        ~pl.col("kind").is_in(list(NON_DEFINITION_KINDS)) & pl.col("path").is_not_null()
    ).with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int32))


def rank_nodes(
    hits: pl.DataFrame, gold_ids: Sequence[str], *, definitions_only: bool = False
) -> list[int | None]:
    """Rank of each gold node id among the hits (among definitions only when asked)."""
    if definitions_only:
        hits = _definition_hits(hits)
    pos = {i: r for i, r in zip(hits["id"].to_list(), hits["rank"].to_list(), strict=True)}
    return [pos.get(g) for g in gold_ids]


def rank_functions(hits: pl.DataFrame, gold: Sequence[str]) -> list[int | None]:
    """Rank of each gold function among definitions: ``path::Qualname`` by id, a bare
    qualname by the best-ranked definition with that qualname (or that label)."""
    defs = _definition_hits(hits)
    by_id: dict[str, int] = {}
    by_name: dict[str, int] = {}
    for i, q, r in defs.select("id", "qualname", "rank").iter_rows():
        by_id.setdefault(i, r)
        if q:
            by_name.setdefault(q, r)
    out = []
    for g in gold:
        out.append(by_id.get(g) if "::" in g else by_name.get(g))
    return out


def first_rank(ranks: Sequence[int | None]) -> int | None:
    """Best rank of any gold item (None when none was found)."""
    found = [r for r in ranks if r is not None]
    return min(found) if found else None


def all_in_top(ranks: Sequence[int | None]) -> int | None:
    """The rank by which every gold item has appeared (None when one is missing)."""
    if not ranks or any(r is None for r in ranks):
        return None
    return max(r for r in ranks if r is not None)


def metrics(ranks: Sequence[int | None], k: Iterable[int] = DEFAULT_K) -> dict[str, float]:
    """``rr``, ``acc@k``, ``recall@k`` and ``ndcg@k`` of one query's gold ranks."""
    n = len(ranks)
    first = first_rank(ranks)
    last = all_in_top(ranks)
    out = {"rr": 1.0 / first if first else 0.0}
    for kk in k:
        inside = [r for r in ranks if r is not None and r <= kk]
        out[f"acc@{kk}"] = 1.0 if last is not None and last <= kk else 0.0
        out[f"recall@{kk}"] = len(inside) / n if n else 0.0
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(n, kk)))
        gain = sum(1.0 / math.log2(r + 1) for r in inside)
        out[f"ndcg@{kk}"] = gain / ideal if ideal else 0.0
    return out


# --------------------------------------------------------------------------- comparison


def paired(
    per_query: pl.DataFrame,
    a: str,
    b: str,
    *,
    level: str = "file",
    metric: str = "rr",
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
) -> dict[str, Any]:
    """Pair rule ``a`` with rule ``b`` on the questions both scored at ``level``.

    Returns wins (a better), losses, ties, the mean difference (a - b) of ``metric`` and its
    percentile bootstrap interval (``n_boot`` resamples of the questions, fixed ``seed``).
    """
    rows = per_query.filter(pl.col("level") == level)
    left = rows.filter(pl.col("rule") == a).select("qid", x=pl.col(metric))
    right = rows.filter(pl.col("rule") == b).select("qid", y=pl.col(metric))
    both = left.join(right, on="qid", how="inner").sort("qid")
    diffs = (both["x"] - both["y"]).to_list()
    n = len(diffs)
    out: dict[str, Any] = {
        "a": a,
        "b": b,
        "level": level,
        "metric": metric,
        "n": n,
        "wins": sum(d > 1e-12 for d in diffs),
        "losses": sum(d < -1e-12 for d in diffs),
        "ties": sum(abs(d) <= 1e-12 for d in diffs),
        "mean_a": float(both["x"].mean()) if n else None,
        "mean_b": float(both["y"].mean()) if n else None,
        "diff": sum(diffs) / n if n else None,
        "ci_low": None,
        "ci_high": None,
    }
    if n:
        rng = random.Random(seed)
        means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(n_boot))
        lo = math.floor((1 - ci) / 2 * n_boot)
        hi = min(n_boot - 1, math.ceil((1 + ci) / 2 * n_boot) - 1)
        out["ci_low"], out["ci_high"] = means[lo], means[hi]
    return out


# --------------------------------------------------------------------------- evaluate


@dataclass
class Evaluation:
    """Per-query rows (one per question x rule x level) and the summary per rule and level."""

    per_query: pl.DataFrame
    summary: pl.DataFrame
    k: tuple[int, ...] = DEFAULT_K
    rules: list[str] = field(default_factory=list)

    def compare(self, a: str, b: str, *, level: str = "file", **kw) -> dict[str, Any]:
        """Paired comparison of two rules (see :func:`paired`)."""
        return paired(self.per_query, a, b, level=level, **kw)

    def comparisons(self, base: str | None = None, *, level: str = "file") -> pl.DataFrame:
        """Every other rule paired with ``base`` (default: the first rule), one row each."""
        base = base or self.rules[0]
        rows = [self.compare(r, base, level=level) for r in self.rules if r != base]
        schema = {
            "a": pl.String,
            "b": pl.String,
            "level": pl.String,
            "metric": pl.String,
            "n": pl.Int64,
            "wins": pl.Int64,
            "losses": pl.Int64,
            "ties": pl.Int64,
            "mean_a": pl.Float64,
            "mean_b": pl.Float64,
            "diff": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
        }
        return pl.DataFrame(rows, schema=schema)

    def rank_differences(self, a: str, b: str, *, level: str = "file") -> pl.DataFrame:
        """Per question: first-gold rank under ``a`` and ``b`` and ``delta = rank_b - rank_a``
        (positive: ``a`` ranks the answer higher); a miss counts as rank ``limit + 1``."""
        rows = self.per_query.filter(pl.col("level") == level)
        miss = int(rows["first"].max() or 0) + 1
        x = rows.filter(pl.col("rule") == a).select("qid", "query", rank_a=pl.col("first"))
        y = rows.filter(pl.col("rule") == b).select("qid", rank_b=pl.col("first"))
        return (
            x.join(y, on="qid")
            .with_columns(delta=pl.col("rank_b").fill_null(miss) - pl.col("rank_a").fill_null(miss))
            .sort("delta", "qid", descending=[True, False])
        )

    def write_parquet(self, directory: str) -> list[str]:
        """Write ``per_query.parquet``, ``summary.parquet`` (and ``compare.parquet``)."""
        os.makedirs(directory, exist_ok=True)
        paths = []
        for name, frame in (("per_query", self.per_query), ("summary", self.summary)):
            p = os.path.join(directory, f"{name}.parquet")
            frame.write_parquet(p)
            paths.append(p)
        if len(self.rules) > 1:
            p = os.path.join(directory, "compare.parquet")
            pl.concat([self.comparisons(level=lv) for lv in LEVELS]).write_parquet(p)
            paths.append(p)
        return paths

    def __repr__(self) -> str:
        return f"<Evaluation {self.rules}: {self.per_query['qid'].n_unique()} questions>"

    def __str__(self) -> str:
        return format_summary(self.summary)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (the CLI's `eval --json`): the summary and each rule against the first."""
        return {
            "verb": "eval",
            "status": "ok",
            "rules": self.rules,
            "k": list(self.k),
            "summary": self.summary.to_dicts(),
            "compare": [self.compare(r, self.rules[0]) for r in self.rules[1:]],
        }

    def _repr_html_(self) -> str:
        rows = [
            [f"{v * 100:.1f}" if isinstance(v, float) else ("-" if v is None else v) for v in r]
            for r in self.summary.iter_rows()
        ]
        title = f"evaluation · {self.per_query['qid'].n_unique()} questions · metrics in %"
        return render("frame", title=title, columns=self.summary.columns, rows=rows, limit=200)


def format_summary(summary: pl.DataFrame) -> str:
    """The summary as a plain aligned text table (metrics in %)."""
    cols = summary.columns
    cells = [cols]
    for row in summary.iter_rows():
        cells.append(
            [
                f"{v * 100:.1f}" if isinstance(v, float) else ("-" if v is None else str(v))
                for v in row
            ]
        )
    widths = [max(len(r[i]) for r in cells) for i in range(len(cols))]
    lines = []
    for j, r in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _open_target(target: Any, cache: dict[str, Any]):
    """A Graph from a Graph, a repo path or a store directory (opened once, cached)."""
    if isinstance(target, Graph):
        return target
    path = os.path.abspath(os.fspath(target))
    if path in cache:
        return cache[path]
    if os.path.isfile(os.path.join(path, "meta.json")):
        g = Graph(path)
    else:
        try:
            g = open_graph(path)
            g.meta  # noqa: B018 - raises StoreNotFound when never indexed
        except StoreNotFound:
            g = index_graph(path, progress=False)
    cache[path] = g
    return g


def _graph_for(row: dict[str, Any], source: Any, cache: dict[str, Any]):
    if source is None or isinstance(source, Mapping):
        keys = [row.get("store"), row.get("repo")]
        if isinstance(source, Mapping):
            for key in keys:
                if key is None:
                    continue
                for cand in (key, os.path.basename(key.rstrip("/"))):
                    if cand in source:
                        return _open_target(source[cand], cache)
            if len(source) == 1:
                return _open_target(next(iter(source.values())), cache)
            raise ConfigError(f"query {row['qid']}: no graph for repo/store {keys}")
        target = row.get("store") or row.get("repo")
        if target is None:
            raise ConfigError(
                f"query {row['qid']} names no repo or store: pass the repository the questions "
                "are about (`ctxframe eval QUERIES --repo PATH`, `cf.evaluate(graph, ...)`)"
            )
        return _open_target(target, cache)
    if isinstance(source, Graph | str | os.PathLike):
        return _open_target(source, cache)
    raise ConfigError("graph_or_stores: a Graph, a path, or a mapping of name -> Graph/path")


def _rule_names(rules: Sequence[Any]) -> list[tuple[str, Any]]:
    out, seen = [], set()
    for r in rules:
        obj = resolve(r)
        name = str(getattr(obj, "name", type(obj).__name__))
        base, n = name, 2
        while name in seen:
            name, n = f"{base}#{n}", n + 1
        seen.add(name)
        out.append((name, obj))
    return out


def evaluate(
    graph_or_stores: Any,
    queries: Any,
    rules: Sequence[Any] = ("idf-tiers",),
    k: Iterable[int] = DEFAULT_K,
    *,
    limit: int = DEFAULT_LIMIT,
) -> Evaluation:
    """Run a labelled query set under each rule and score it (see the module docstring).

    ``graph_or_stores``: a Graph or a repo/store path used for every question; a mapping of
    name -> Graph/path looked up by each question's ``repo``/``store`` (or its base name); or
    None to open each question's own ``repo``/``store``. ``queries``: a JSONL path, a list of
    dicts or a frame from :func:`ctxframe.load_queries`. ``rules``: registry names, rule
    classes or rule objects (user-defined rules welcome). Hits beyond ``limit`` count as misses.
    """
    k = tuple(sorted(set(int(x) for x in k)))
    qs = load_queries(queries)
    named_rules = _rule_names(list(rules))
    cache: dict[str, Any] = {}
    rankers: dict[int, Ranker] = {}
    rows: list[dict[str, Any]] = []
    for q in qs.iter_rows(named=True):
        graph = _graph_for(q, graph_or_stores, cache)
        ranker = rankers.get(id(graph))
        if ranker is None:
            ranker = rankers[id(graph)] = Ranker(graph)
        gold_files = list(q["gold_files"])
        if not gold_files and q["gold_ids"]:
            by_id = graph.nodes.filter(pl.col("id").is_in(q["gold_ids"]))
            gold_files = sorted({p for p in by_id["path"].to_list() if p})
        golds = {"node": q["gold_ids"], "file": gold_files, "function": q["gold_functions"]}
        for rule_name, rule in named_rules:
            t0 = time.perf_counter()
            hits = ranker.rank(q["query"], rule=rule, limit=limit)
            ms = (time.perf_counter() - t0) * 1000
            file_ranker = getattr(rule, "unit", None) == "file"  # bm25-file: files only
            for level in LEVELS:
                gold = golds[level]
                if not gold or (file_ranker and level != "file"):
                    continue
                if level == "node":
                    ranks = rank_nodes(hits, gold)
                elif level == "file":
                    ranks = rank_files(hits, gold)
                else:
                    ranks = rank_functions(hits, gold)
                rows.append(
                    {
                        "qid": q["qid"],
                        "query": q["query"],
                        "tags": q["tags"],
                        "rule": rule_name,
                        "level": level,
                        "n_gold": len(gold),
                        "ranks": ranks,
                        "first": first_rank(ranks),
                        "all": all_in_top(ranks),
                        **metrics(ranks, k),
                        "ms": ms,
                    }
                )
    per_query = _per_query_frame(rows, k)
    return Evaluation(
        per_query=per_query,
        summary=summarise(per_query, k, [n for n, _ in named_rules]),
        k=k,
        rules=[n for n, _ in named_rules],
    )


def _metric_names(k: Sequence[int]) -> list[str]:
    return ["rr"] + [f"{m}@{kk}" for m in ("acc", "recall", "ndcg") for kk in k]


def _per_query_frame(rows: list[dict[str, Any]], k: Sequence[int]) -> pl.DataFrame:
    schema: dict[str, Any] = {
        "qid": pl.String,
        "query": pl.String,
        "tags": pl.List(pl.String),
        "rule": pl.String,
        "level": pl.String,
        "n_gold": pl.Int32,
        "ranks": pl.List(pl.Int32),
        "first": pl.Int32,
        "all": pl.Int32,
    }
    schema.update(dict.fromkeys(_metric_names(k), pl.Float64))
    schema["ms"] = pl.Float64
    return pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema)


def summarise(per_query: pl.DataFrame, k: Sequence[int], rules: Sequence[str]) -> pl.DataFrame:
    """Mean of each metric per (rule, level); ``mrr`` is the mean ``rr``; plus question count."""
    names = _metric_names(k)
    order = {r: i for i, r in enumerate(rules)}
    lv = {v: i for i, v in enumerate(LEVELS)}
    if per_query.is_empty():
        schema = {"rule": pl.String, "level": pl.String, "queries": pl.UInt32}
        schema |= {("mrr" if n == "rr" else n): pl.Float64 for n in names}
        return pl.DataFrame(schema=schema)
    return (
        per_query.group_by("rule", "level")
        .agg(pl.len().alias("queries"), *[pl.col(n).mean() for n in names])
        .rename({"rr": "mrr"})
        .with_columns(
            _r=pl.col("rule").replace_strict(order, default=len(order)),
            _l=pl.col("level").replace_strict(lv, default=9),
        )
        .sort("_l", "_r")
        .drop("_r", "_l")
    )

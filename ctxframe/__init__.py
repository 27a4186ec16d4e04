"""ctxframe: a repository as a code graph in Polars frames, questioned with verbs.

import ctxframe as cf
g = cf.index("path/to/repo")      # or cf.open(...) for an existing index
g.query("where is refund processing implemented")
"""

import typing

from ctxframe._core.errors import (
    ConfigError,
    CtxframeError,
    RepoNotFound,
    StoreCorrupt,
    StoreLocked,
    StoreNotFound,
    StoreVersionError,
    StoreWriteError,
    SymbolNotFound,
)
from ctxframe._core.version import __version__
from ctxframe._store import alloc as _alloc

_alloc.default()  # before Polars loads: it returns freed pages early (ctxframe._store.alloc)

if typing.TYPE_CHECKING:
    from ctxframe import rules
    from ctxframe._apps.catalog import Catalog
    from ctxframe._graph.catalog import CatalogGraph
    from ctxframe._graph.graph import Graph
    from ctxframe._rank.tokens import tokenize
    from ctxframe._store.status import Status

# Imported on first use, so `ctxframe index` loads only what indexing needs.
_LAZY = {
    "rules": ("ctxframe.rules", None),
    "Graph": ("ctxframe._graph.graph", "Graph"),
    "Status": ("ctxframe._store.status", "Status"),
    "tokenize": ("ctxframe._rank.tokens", "tokenize"),
    # result types, for isinstance checks and type hints
    "IndexReport": ("ctxframe._store.build", "IndexReport"),
    "QueryResult": ("ctxframe._graph.query", "QueryResult"),
    "Card": ("ctxframe._graph.verbs", "Card"),
    "Context": ("ctxframe._graph.context", "Context"),
    "Affected": ("ctxframe._graph.verbs", "Affected"),
    "PathResult": ("ctxframe._graph.verbs", "PathResult"),
    "ChangePlan": ("ctxframe._graph.verbs", "ChangePlan"),
    "Explanation": ("ctxframe._graph.verbs", "Explanation"),
    "Hubs": ("ctxframe._graph.verbs", "Hubs"),
    "Boundaries": ("ctxframe._graph.verbs", "Boundaries"),
    "Neighbourhood": ("ctxframe._graph.neighbourhood", "Neighbourhood"),
    "Picture": ("ctxframe._render.picture", "Picture"),
    "Audit": ("ctxframe._audit.audit", "Audit"),
    "Evaluation": ("ctxframe._apps.eval", "Evaluation"),
    "Fitted": ("ctxframe._rank.fitted", "Fitted"),
    "Exported": ("ctxframe._store.export", "Exported"),
    "Catalog": ("ctxframe._apps.catalog", "Catalog"),
    "CatalogGraph": ("ctxframe._graph.catalog", "CatalogGraph"),
    "CatalogReport": ("ctxframe._store.catalog_run", "CatalogReport"),
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'ctxframe' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    value = value if attr is None else getattr(value, attr)
    globals()[name] = value
    return value




def index(
    path: str = ".",
    *,
    store: str | None = None,
    rebuild: bool = False,
    progress: bool | None = None,
    dial: bool = False,
    wait: bool = True,
    cache: bool = True,
    coverage: str | bool | None = None,
    history: bool | None = None,
    anonymize: bool | None = None,
) -> "Graph":
    """Index (incrementally) the repository at `path` and return its Graph. Adapters in
    `.ctxframe/adapters/` always run; `dial=True` also reads the databases and buckets that env
    vars of the graph point at (docs/adapters.md). One writer at a time: `wait=False` raises
    StoreLocked instead of waiting for another run. `cache=False` parses every file without
    the extraction cache (README, "The extraction cache"). `coverage`: a coverage data file
    (coverage.py's, Cobertura XML, LCOV) read into `covers` edges and `g.coverage`; None
    reads one found at the root, False none. `history=False` does not read the git history,
    `anonymize=True` stores keyed hashes instead of author names (None: as `[history]` in
    the configuration says)."""
    _alloc.for_index(path, store)  # only has an effect while Polars is not loaded yet
    from ctxframe._graph.graph import index_graph

    return index_graph(
        path, store=store, rebuild=rebuild, progress=progress, dial=dial, wait=wait, cache=cache,
        coverage=coverage, history=history, anonymize=anonymize,
    )  # fmt: skip


def open(path: str = ".", *, store: str | None = None) -> "Graph":
    """Open the existing index of the repository at `path`."""
    from ctxframe._graph.graph import open_graph

    return open_graph(path, store=store)


def evaluate(graph_or_stores, queries, rules=("idf-tiers",), k=(1, 5, 10), **kwargs):
    """Score ranking rules on a labelled query set: per-query and summary metrics (MRR,
    Acc@k, Recall@k, nDCG@k at node, file and function level) and paired comparisons; see
    ctxframe._apps.eval and docs/ranking.md."""
    from ctxframe._apps.eval import evaluate as _evaluate

    return _evaluate(graph_or_stores, queries, rules=rules, k=k, **kwargs)


def fit_rule(graphs, queries, rule="idf-tiers", params=None, folds=5, metric="mrr", **kwargs):
    """Fit a rule's evidence weights (and intent multipliers) on labelled questions with
    cross-validation: the fitted rule, its per-fold report in `.report`; saves as TOML
    (`rule.save(path)`, `ctxframe.rules.load(path)`). See ctxframe._apps.fit and
    docs/ranking.md."""
    from ctxframe._apps.fit import fit_rule as _fit

    return _fit(graphs, queries, rule=rule, params=params, folds=folds, metric=metric, **kwargs)


def load_queries(source):
    """A labelled query set (JSONL path, list of dicts or frame) as a Polars frame."""
    from ctxframe._rank.querysets import load_queries as _load

    return _load(source)


def explore(graph: "Graph", **kwargs):
    """An ipywidgets explorer of `graph`: query -> hits -> card and picture; hubs; boundaries."""
    from ctxframe._apps.widgets import explore as _explore

    return _explore(graph, **kwargs)


def catalog(directory: str = ".") -> "Catalog":
    """The catalog of many repositories at `directory`: `.add(PATH)`, `.index(jobs=,
    executor=)`, `.repos`, `.links`, `.open()` (docs/catalog.md)."""
    from ctxframe._apps.catalog import Catalog

    return Catalog(directory)


def open_catalog(directory: str = ".") -> "CatalogGraph":
    """One Graph over every repository of the catalog at `directory`: ids prefixed with the
    repository's name, cross-repository links as edges, catalog-wide word weights."""
    from ctxframe._graph.catalog import open_catalog as _open_catalog

    return _open_catalog(directory)


def sample(path: str, *, history: bool = False) -> str:
    """Copy the bundled sample shop to `path` (a new directory) and return it; with
    `history=True` it becomes a git repository with a small, deterministic history (four
    authors over a year: hotspots, coupled files, a knowledge island) for `g.history()`."""
    import os
    import shutil

    from ctxframe.cli import sample_path

    if os.path.exists(path) and os.listdir(path):
        raise RepoNotFound(f"{path} is not empty: give a new directory for the sample")
    shutil.copytree(sample_path(), path, dirs_exist_ok=True)
    if history:
        from ctxframe._history.sample import make_history

        make_history(path)
    return path


def status(path: str = ".", *, store: str | None = None) -> "Status":
    """Is the index of `path` fresh against git HEAD and the working tree?"""
    from ctxframe._store.status import status as _status

    return _status(path, store=store)


__all__ = [
    "Affected",
    "Audit",
    "Boundaries",
    "Card",
    "Catalog",
    "CatalogGraph",
    "CatalogReport",
    "ChangePlan",
    "ConfigError",
    "Context",
    "CtxframeError",
    "Evaluation",
    "Explanation",
    "Exported",
    "Fitted",
    "Graph",
    "Hubs",
    "IndexReport",
    "Neighbourhood",
    "PathResult",
    "Picture",
    "QueryResult",
    "RepoNotFound",
    "Status",
    "StoreCorrupt",
    "StoreLocked",
    "StoreNotFound",
    "StoreVersionError",
    "StoreWriteError",
    "SymbolNotFound",
    "__version__",
    "catalog",
    "evaluate",
    "explore",
    "fit_rule",
    "index",
    "load_queries",
    "open",
    "open_catalog",
    "rules",
    "sample",
    "status",
    "tokenize",
]

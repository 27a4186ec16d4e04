"""`Graph`: the indexed repository as Polars frames, with DuckDB SQL and the verbs as methods."""

from __future__ import annotations

import html
import os
from functools import cached_property

import polars as pl

from ctxframe._core.config import Config, load_config
from ctxframe._store import cache as _cache
from ctxframe._store import tables as _store


class Graph:
    """Nodes, edges, files and tokens of one indexed repository; verbs are methods."""

    def __init__(self, store: str, root: str | None = None):
        self.store = os.path.abspath(store)
        self.meta = _store.read_meta(self.store)
        self.root = root or self.meta.get("root")

    @cached_property
    def nodes(self) -> pl.DataFrame:
        """One row per node (see docs/schema.md)."""
        return _store.read_table(self.store, "nodes")

    @cached_property
    def edges(self) -> pl.DataFrame:
        """One row per edge (see docs/schema.md)."""
        return _store.read_table(self.store, "edges")

    @cached_property
    def files(self) -> pl.DataFrame:
        """One row per walked file, indexed or skipped with a reason."""
        return _store.read_table(self.store, "files")

    @cached_property
    def tokens(self) -> pl.DataFrame:
        """The exploded (node_id, token) table the ranker scores."""
        return _store.read_table(self.store, "tokens")

    @cached_property
    def token_weights(self) -> pl.DataFrame:
        """The df table: per token, how many nodes contain it and its weight
        `0.1 + ln(N / (1 + df))`, N = number of nodes (the ranker's IDF)."""
        from ctxframe._rank.tokens import token_frequencies

        return token_frequencies(self.tokens, self.nodes.height).rename({"idf": "weight"})

    @cached_property
    def config(self) -> Config:
        """Scope levers from `.ctxframe/config.toml` or `[tool.ctxframe]`."""
        return load_config(self.root) if self.root and os.path.isdir(self.root) else Config()

    @cached_property
    def _duck(self):
        import duckdb

        con = duckdb.connect()
        for name in ("nodes", "edges", "files", "tokens"):
            con.register(name, getattr(self, name))
        return con

    def sql(self, query: str, params: list | dict | None = None) -> pl.DataFrame:
        """Run DuckDB SQL over the tables `nodes`, `edges`, `files`, `tokens`; a Polars frame."""
        return self._duck.sql(query, params=params).pl()

    @cached_property
    def _rank_index(self):
        from ctxframe._rank.query import RankIndex

        state = _cache.load(self.store, self.meta, _cache.RANK_TABLES)
        if state is not None:
            index = RankIndex.from_state(self.nodes, state)
        else:
            index = RankIndex(self.nodes, self.tokens)
            _cache.save(self.store, self.meta, index.state())
        # A full edge lookup only when one exists already (card built it); a one-shot query
        # filters the few edges of its hits instead of building one.
        if "_edge_index" in self.__dict__:
            index.adopt_edge_index(self.edges, self._edge_index)
        else:
            from ctxframe._rank.query import _EdgeIndex

            index.adopt_edge_index(self.edges, _EdgeIndex.subset(self.edges, self.nodes))
        return index

    def query(
        self,
        text: str,
        limit: int = 20,
        rule=None,
        within: str | None = None,
        include_ambiguous: bool = False,
        deprioritize: list[str] | tuple[str, ...] | None = None,
        abstain: bool = False,
    ):
        """Rank nodes for a question in words; each hit carries its 1-hop neighbourhood.

        ``abstain=True`` (hooks, agents): when the best match is weak — only common tokens and
        no path or name of this graph in the text — return no hits and say "no structural
        match" (``result.abstained`` holds why; see ctxframe._rank.abstain)."""
        cfg = self.config
        self._queries = getattr(self, "_queries", 0) + 1
        if self._queries == 2:  # asked again: worth the full edge lookup for the warm path
            self._rank_index.adopt_edge_index(self.edges, self._edge_index)
        result = self._rank_index.query(
            text,
            edges=self.edges,
            limit=limit,
            rule=rule,
            within=within,
            include_ambiguous=include_ambiguous,
            deprioritize=tuple(cfg.deprioritize if deprioritize is None else deprioritize),
            project_tokens=self._project_tokens,
        )
        if abstain:
            from ctxframe._rank.abstain import assess

            top = result.hits["id"][0] if result.hits.height else None
            decision = assess(self._rank_index, text, top)
            if decision.abstain:
                result.abstained = decision.reason
                result.hits = result.hits.clear()
                result.neighbours = result.neighbours.clear()
                result.total = 0
        return result

    @cached_property
    def _project_tokens(self) -> tuple[str, ...]:
        from ctxframe._rank.tokens import tokenize

        if self.config.project_tokens:
            return tuple(t for p in self.config.project_tokens for t in tokenize(p))
        name = os.path.basename(self.root.rstrip("/")) if self.root else ""
        return tuple(tokenize(name))

    # -- shared indexes for the verbs (built once per Graph) --------------------------------------
    @cached_property
    def _symbols(self):
        from ctxframe._graph.lookup import SymbolIndex

        return SymbolIndex(self.nodes)

    @cached_property
    def _row_of(self) -> dict[str, int]:
        return {node_id: i for i, node_id in enumerate(self.nodes["id"].to_list())}

    @cached_property
    def _file_ids(self) -> set[str]:
        return set(self.nodes.filter(pl.col("kind") == "file")["id"].to_list())

    def _node_rows(self, ids: list[str]) -> pl.DataFrame:
        rows = [self._row_of[i] for i in ids if i in self._row_of]
        return self.nodes[rows]

    @cached_property
    def _edge_index(self):
        from ctxframe._rank.query import _EdgeIndex

        frames = _cache.load(self.store, self.meta, _cache.EDGE_TABLES)
        if frames is not None:
            return _EdgeIndex.from_frames(frames["edges_out"], frames["edges_in"])
        index = _EdgeIndex(self.edges, self.nodes)
        _cache.save(self.store, self.meta, index.frames())
        return index

    def _arrows(self, ids: list[str], include_ambiguous: bool = False) -> pl.DataFrame:
        rows = pl.Series([self._row_of[i] for i in ids if i in self._row_of], dtype=pl.UInt32)
        arrows = self._edge_index.arrows(rows)
        if not include_ambiguous:
            arrows = arrows.filter(pl.col("confidence").fill_null("") != "AMBIGUOUS")
        if len(rows) > 1:  # one node's arrows come pre-sorted from the index
            arrows = arrows.sort(
                "direction", "edge_kind", "other_label", "other_id", nulls_last=True
            )
        return arrows

    @cached_property
    def _traversal(self):
        from ctxframe._graph.traverse import Traversal

        return Traversal(self.nodes, self.edges)

    @cached_property
    def _amb_edges(self) -> pl.DataFrame:
        from ctxframe._graph.traverse import DEPENDENCY_KINDS

        return self.edges.filter(
            pl.col("dst").is_not_null()
            & pl.col("kind").is_in(DEPENDENCY_KINDS)
            & (pl.col("confidence") == "AMBIGUOUS")
        ).select("src", "dst")

    # -- verbs ---------------------------------------------------------------------------------
    def card(self, name: str, include_ambiguous: bool = False):
        """A known symbol: kind, place, signature, doc, parent, callers, callees, members."""
        from ctxframe._graph import verbs as _verbs

        return _verbs.card(self, name, include_ambiguous=include_ambiguous)

    def affected(self, target: str, depth: int = 3, include_ambiguous: bool = False):
        """Blast radius of a symbol or file: who depends on it, by depth (a floor)."""
        from ctxframe._graph import verbs as _verbs

        return _verbs.affected(self, target, depth=depth, include_ambiguous=include_ambiguous)

    def path(self, a: str, b: str, undirected: bool = False, include_ambiguous: bool = False):
        """Shortest paths from symbol A to symbol B, each hop with kind and confidence."""
        from ctxframe._graph import verbs as _verbs

        return _verbs.path(self, a, b, undirected=undirected, include_ambiguous=include_ambiguous)

    def change_plan(self, name: str, depth: int = 2):
        """An ordered checklist of what to look at before editing a symbol."""
        from ctxframe._graph import verbs as _verbs

        return _verbs.change_plan(self, name, depth=depth)

    def explain(self, target: str):
        """A plain-language paragraph about a symbol or file, from graph facts only."""
        from ctxframe._graph import verbs as _verbs

        return _verbs.explain(self, target)

    def hubs(self, top: int = 10):
        """Orientation: most depended-on symbols, largest files, entry points, directories."""
        from ctxframe._graph import verbs as _verbs

        return _verbs.hubs(self, top=top)

    def boundaries(self, target: str | None = None):
        """What the repo consumes and provides (routes, env vars, HTTP, exec, deps, k8s)."""
        from ctxframe._graph import verbs as _verbs

        return _verbs.boundaries(self, target)

    def coverage(self) -> pl.DataFrame:
        """Per language: files, parse errors, nodes (by kind) and the share of call sites
        resolved EXTRACTED or INFERRED (see ctxframe._store.coverage)."""
        from ctxframe._store.coverage import coverage

        return coverage(self.nodes, self.edges, self.files)

    def neighbourhood(
        self, name: str, depth: int = 1, include_ambiguous: bool = False, cap: int = 40
    ):
        """Nodes within `depth` hops of a symbol or file, both ways; `.plot()` draws it."""
        from ctxframe._render import picture as _plot

        return _plot.neighbourhood(
            self, name, depth=depth, include_ambiguous=include_ambiguous, cap=cap
        )

    def summary(self) -> dict:
        """Counts by kind and confidence, for display."""
        return {
            "root": self.root,
            "indexed_at": self.meta.get("indexed_at"),
            "git_head": self.meta.get("git_head"),
            "files": int(self.files["skip_reason"].is_null().sum()),
            "nodes": dict(self.nodes.group_by("kind").len().sort("kind").iter_rows()),
            "edges": dict(self.edges.group_by("kind").len().sort("kind").iter_rows()),
        }

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"<ctxframe.Graph {s['root']}: {s['files']} files, {self.nodes.height} nodes, "
            f"{self.edges.height} edges>"
        )

    def _repr_html_(self) -> str:
        s = self.summary()
        rows = "".join(
            f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>" for k, v in s["nodes"].items()
        )
        erows = "".join(
            f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>" for k, v in s["edges"].items()
        )
        return (
            f"<div><b>ctxframe.Graph</b> <code>{html.escape(str(s['root']))}</code> · "
            f"{s['files']} files · indexed {html.escape(str(s['indexed_at']))}"
            f"<table><tr><th>node kind</th><th>count</th></tr>{rows}</table>"
            f"<table><tr><th>edge kind</th><th>count</th></tr>{erows}</table></div>"
        )


def open_graph(path: str = ".", store: str | None = None) -> Graph:
    """Open the store of the repository at `path` (or the store directory given)."""
    root = os.path.realpath(path)
    return Graph(store or _store.default_store(root), root=root if os.path.isdir(root) else None)

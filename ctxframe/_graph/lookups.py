"""What the verbs look nodes and edges up with: built lazily, once per `Graph`, from its frames.

Node rows are found by binary search over the id column (the store keeps nodes sorted by id),
so no dictionary of every node id is ever built.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import cached_property

import polars as pl

from ctxframe._graph.edges import EdgeIndex, SubsetEdgeIndex
from ctxframe._graph.lookup import SymbolIndex
from ctxframe._graph.testreach import TestReach
from ctxframe._graph.traverse import Traversal
from ctxframe._store import cache as _cache


class Lookups:
    """Symbol names, node rows, 1-hop arrows and traversals over one graph's frames."""

    pending_arrows = False  # the arrow index is being patched elsewhere: filter meanwhile
    arrows_base: Lookups | None = None  # the lookups whose arrow index that patch starts from

    def __init__(
        self,
        nodes: pl.DataFrame,
        edges: pl.DataFrame,
        files: pl.DataFrame,
        *,
        cache_dir: str | None = None,
    ):
        self.nodes, self.edges, self.files = nodes, edges, files
        self._cache_dir = cache_dir  # the store version's directory (see ctxframe._store.cache)
        self._ids = nodes["id"] if nodes["id"].is_sorted() else nodes["id"].sort()
        self._perm = None if nodes["id"].is_sorted() else nodes["id"].arg_sort()

    def with_files(self, files: pl.DataFrame) -> Lookups:
        """These lookups over another version with the same nodes and edges: every index
        built so far is shared, only the files table is the new one's."""
        moved = Lookups.__new__(Lookups)
        moved.__dict__.update(self.__dict__)
        moved.files, moved._cache_dir = files, None
        if self.pending_arrows:  # the arrow index being patched lands in both
            self.__dict__.setdefault("_followers", []).append(moved)
            moved.__dict__.pop("_followers", None)
        return moved

    def land_arrows(self, index: EdgeIndex) -> None:
        """The arrow index patched for these lookups (and those moved from them to another
        files table) is here."""
        for lookups in (self, *self.__dict__.get("_followers", ())):
            lookups.__dict__.setdefault("edge_index", index)
            lookups.pending_arrows, lookups.arrows_base = False, None

    # -- nodes ---------------------------------------------------------------------------------
    @cached_property
    def symbols(self) -> SymbolIndex:
        return SymbolIndex(self.nodes)

    def rows(self, ids: list[str] | pl.Series) -> pl.Series:
        """Row numbers in `nodes` of the given ids, in the given order; unknown ids left out."""
        if len(ids) == 1:  # one id (a card): bisection by element, cheaper than a vector search
            key = ids[0]
            at = bisect_left(self._ids, key)
            found = at < self._ids.len() and self._ids[at] == key
            row = [] if not found else [at if self._perm is None else self._perm[at]]
            return pl.Series("row", row, dtype=pl.UInt32)
        want = pl.Series("id", ids, dtype=pl.String)
        pos = self._ids.search_sorted(want, side="left")
        n = self._ids.len()
        found = pos.cast(pl.Int64) < n
        clipped = pos.clip(upper_bound=max(n - 1, 0))
        hit = found & (self._ids.gather(clipped) == want) if n else found
        rows = clipped.filter(hit)
        if self._perm is not None:
            rows = self._perm.gather(rows)
        return rows.cast(pl.UInt32).rename("row")

    def row(self, node_id: str) -> int | None:
        """Row number of one id, or None."""
        rows = self.rows([node_id])
        return int(rows[0]) if rows.len() else None

    def node_rows(self, ids: list[str]) -> pl.DataFrame:
        """The `nodes` rows of the given ids, in the given order; unknown ids left out."""
        return self.nodes[self.rows(ids)]

    def is_file(self, path: str) -> bool:
        row = self.row(path)
        return row is not None and self.nodes["kind"][row] == "file"

    # -- edges ---------------------------------------------------------------------------------
    @cached_property
    def edge_index(self) -> EdgeIndex:
        """The full 1-hop index (cached in the store version when there is one)."""
        frames = _cache.load(self._cache_dir, _cache.EDGE_TABLES)
        if frames is not None:
            return EdgeIndex.from_frames(frames["edges_out"], frames["edges_in"])
        index = EdgeIndex(self.edges, self.nodes)
        _cache.save(self._cache_dir, index.frames())
        return index

    def arrows_index(self, *, one_shot: bool) -> EdgeIndex | SubsetEdgeIndex:
        """The full index when built already or worth building; a one-shot question (a CLI run)
        filters the few edges of its hits instead."""
        if "edge_index" not in self.__dict__ and (one_shot or self.pending_arrows):
            return SubsetEdgeIndex(self.edges, self.nodes)
        return self.edge_index

    def arrows(self, ids: list[str], include_ambiguous: bool = False) -> pl.DataFrame:
        """Every 1-hop arrow of the given nodes, both ways, in display order."""
        rows = self.rows(ids)
        arrows = self.arrows_index(one_shot=False).arrows(rows)
        if not include_ambiguous:
            arrows = arrows.filter(pl.col("confidence").fill_null("") != "AMBIGUOUS")
        if rows.len() > 1:  # one node's arrows come pre-sorted from the index
            arrows = arrows.sort(
                "direction", "edge_kind", "other_label", "other_id", nulls_last=True
            )
        return arrows

    @cached_property
    def traversal(self) -> Traversal:
        return Traversal(self.nodes, self.edges)

    @cached_property
    def has_coverage(self) -> bool:
        """Whether the index read coverage data (it made `covers` edges)."""
        return bool(self.edges.select((pl.col("kind") == "covers").any()).item())

    def test_reach(self, include_ambiguous: bool = False) -> TestReach:
        """Which test files run what (ctxframe._graph.testreach), built on first use."""
        key = f"_test_reach_{include_ambiguous}"
        if key not in self.__dict__:
            self.__dict__[key] = TestReach(self.nodes, self.edges, include_ambiguous)
        return self.__dict__[key]

"""`open_catalog(DIR)`: one `Graph` over every repository of a catalog.

The catalog's store holds each repository's nodes, edges and files with ids and paths prefixed
`<repo>/` (`payments/services/api/routes.py::create_refund`, `web/route:GET /healthz`) and the
cross-repository links as edges (producer `ctxframe.catalog`), so every verb works across
repositories unchanged, and `query` weighs words by their rarity in the whole catalog.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import NoReturn

import polars as pl

from ctxframe._graph.graph import Graph
from ctxframe._rank.tokens import tokenize
from ctxframe._store import catalog as _cat
from ctxframe._store.catalog_build import scan


class CatalogGraph(Graph):
    """A Graph over a catalog: ids are `<repo>/<id>`; `repos`, `links` and `view()` add what
    a catalog has that a repository does not."""

    def __init__(self, directory: str):
        self.directory = os.path.abspath(directory)
        if not _cat.is_catalog(self.directory):
            _cat.load(self.directory)  # raises StoreNotFound with the fix
        store = _cat.graph_dir(self.directory)
        super().__init__(store, store=store, root=_cat.src_dir(self.directory))

    @property
    def repos(self) -> list[str]:
        """The repositories this graph holds (as of its store version)."""
        return list((self.meta.get("catalog") or {}).get("repos") or [])

    @cached_property
    def links(self) -> pl.DataFrame:
        """The cross-repository edges, with the repository at each end."""
        return (
            self.edges.filter(pl.col("producer") == "ctxframe.catalog")
            .with_columns(
                repo=pl.col("src").str.extract(r"^([^/]+)/", 1),
                dst_repo=pl.col("dst").str.extract(r"^([^/]+)/", 1),
            )
            .filter(pl.col("repo") != pl.col("dst_repo"))
        )

    def view(self, table: str) -> pl.LazyFrame:
        """One table of the catalog's view as a lazy frame with a `repo` column and each
        repository's own ids: `nodes`, `edges`, `files` (Hive-partitioned), `http_calls`,
        `packages`, `links`."""
        if table in _cat.VIEW_TABLES:
            return scan(self.directory, table, self.repos)
        files = {"http_calls": _cat.HTTP_CALLS, "packages": _cat.PACKAGES, "links": _cat.LINKS}
        if table not in files:
            from ctxframe._core.errors import BadInput

            raise BadInput(
                f"no view table {table!r}: nodes, edges, files, http_calls, packages or links"
            )
        return pl.scan_parquet(os.path.join(self.directory, files[table]))

    def refresh(self, reindex: bool | None = None) -> CatalogGraph:
        """Move to the catalog store's newest version; with `reindex` (by default when the
        catalog directory is writable and no watch runs) `catalog index` runs first: every
        repository, in this process, only the changed ones parsed again."""
        if reindex is None:
            reindex = self._reindexable()
        if reindex:
            from ctxframe._store.catalog_run import index_catalog

            self.report = index_catalog(self.directory)  # type: ignore[assignment]
        super().refresh(reindex=False)
        self.__dict__.pop("links", None)
        return self

    def _reindexable(self) -> bool:
        if self._watch is not None and self._watch.running:
            return False
        return os.access(self.directory, os.W_OK)

    def watch(self, **_kwargs) -> NoReturn:
        """Not for a catalog: its repositories live elsewhere; run `catalog index` (or
        `ctxframe watch` in a repository, then `refresh()`)."""
        from ctxframe._core.errors import BadInput

        raise BadInput(
            "a catalog graph cannot watch its repositories: run `ctxframe catalog index` "
            "after changes, then g.refresh()"
        )

    @cached_property
    def _project_tokens(self) -> tuple[str, ...]:
        if self.config.project_tokens:
            return super()._project_tokens
        return tuple(tokenize(os.path.basename(self.directory.rstrip("/"))))

    def summary(self) -> dict:
        return {**super().summary(), "root": self.directory, "repos": self.repos}

    def __repr__(self) -> str:
        return (
            f"<ctxframe.CatalogGraph {self.directory}: {len(self.repos)} repositories, "
            f"{self.nodes.height} nodes, {self.edges.height} edges, {self.links.height} links>"
        )


def open_catalog(directory: str) -> CatalogGraph:
    """The graph of every repository of the catalog at `directory` (after `catalog index`)."""
    return CatalogGraph(directory)

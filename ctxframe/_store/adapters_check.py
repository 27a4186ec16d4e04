"""`ctxframe adapters check`: run and validate every adapter against the stored graph."""

from __future__ import annotations

import os

import polars as pl

from ctxframe._core.errors import RepoNotFound, StoreNotFound
from ctxframe._core.schema import PRODUCER
from ctxframe._ingest.adapters import AdapterRun, run_adapters
from ctxframe._store import tables as _store


def check(path: str, store: str | None = None) -> AdapterRun:
    """Run and validate every adapter without indexing; edges are checked against the stored
    graph's own (ctxframe-built) nodes when an index exists."""
    if not os.path.isdir(path):
        raise RepoNotFound(f"{path} is not a directory: pass the root of a source repository")
    root = os.path.realpath(path)
    store = os.path.abspath(store) if store else _store.default_store(root)
    try:
        _store.read_meta(store)
        stored = _store.read_table(store, "nodes")
        graph_ids: set[str] | None = set(stored.filter(pl.col("producer") == PRODUCER)["id"])
    except (StoreNotFound, FileNotFoundError):
        graph_ids = None
    return run_adapters(root, graph_ids)

"""Derived structures (the ranker's vocabulary and postings, the edge lookup) cached as Arrow IPC
files beside the store, so a cold CLI query maps them in instead of rebuilding.

The cache is keyed by the store's meta.json: a cache written for another index is ignored, and
the next `index` replaces the whole store directory anyway. Writes are best effort (a read-only
store just means no cache) and atomic per table (temp file + rename).
"""

from __future__ import annotations

import json
import os

import polars as pl

from ctxframe._rank.ranker import STATE_TABLES as RANK_TABLES  # noqa: F401  (re-exported)

EDGE_TABLES = ("edges_out", "edges_in")
_DIR = "cache"


CACHE_FORMAT = 3  # bump when a cached structure changes shape or order


def _key(meta: dict) -> str:
    keys = ("indexed_at", "counts", "schema_version", "ctxframe_version")
    return json.dumps({"format": CACHE_FORMAT, **{k: meta.get(k) for k in keys}}, sort_keys=True)


def load(store: str, meta: dict, names: tuple[str, ...]) -> dict[str, pl.DataFrame] | None:
    """The cached tables, or None when any is missing or belongs to another index."""
    d = os.path.join(store, _DIR)
    try:
        with open(os.path.join(d, "key.json"), encoding="utf-8") as fh:
            if fh.read() != _key(meta):
                return None
        return {n: pl.read_ipc(os.path.join(d, f"{n}.arrow")) for n in names}
    except (OSError, pl.exceptions.PolarsError):
        return None


def save(store: str, meta: dict, tables: dict[str, pl.DataFrame]) -> None:
    """Write tables into the cache (best effort: any OS error leaves no cache, not an error)."""
    d = os.path.join(store, _DIR)
    try:
        os.makedirs(d, exist_ok=True)
        key_path = os.path.join(d, "key.json")
        key = _key(meta)
        try:
            with open(key_path, encoding="utf-8") as fh:
                stale = fh.read() != key
        except OSError:
            stale = True
        if stale:  # drop tables of another index before claiming the key
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
        for name, frame in tables.items():
            tmp = os.path.join(d, f".{name}.{os.getpid()}.tmp")
            frame.write_ipc(tmp)
            os.replace(tmp, os.path.join(d, f"{name}.arrow"))
        tmp = os.path.join(d, f".key.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(key)
        os.replace(tmp, key_path)
    except OSError:
        return

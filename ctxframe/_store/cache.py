"""Derived structures (the ranker's vocabulary and postings, the edge lookup) cached as Arrow IPC
files inside the store version they were built from (`STORE/v-…/cache/`), so a cold CLI query
maps them in instead of rebuilding.

A version never changes, so a cache is never stale: it is only ever written into its own
version's directory, and goes when the version goes. `key.json` records the cache format, the
ctxframe version and each file's size; a file of another size, or one Arrow cannot decode, is
ignored (and rebuilt). Unlike the store's tables, a cache file is not hashed on read: hashing
the ranker's tables cost a cold query more than decoding them, and a cache is derived data
written atomically into a version that never changes. Writes are best effort (a read-only
store just means no cache) and atomic per file. A legacy store (no versions) gets no cache.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Callable

import polars as pl

from ctxframe._rank.ranker import STATE_TABLES as RANK_TABLES
from ctxframe._rank.ranker import RankIndex

EDGE_TABLES = ("edges_out", "edges_in")
_DIR = "cache"
_KEY = "key.json"

CACHE_FORMAT = 6  # bump when a cached structure changes shape or order


def _head() -> dict:
    from ctxframe._core.version import __version__

    return {"format": CACHE_FORMAT, "ctxframe_version": __version__}


def _read_key(d: str) -> dict:
    try:
        with open(os.path.join(d, _KEY), encoding="utf-8") as fh:
            key = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(key, dict) or {k: key.get(k) for k in _head()} != _head():
        return {}
    return key


def load(version_dir: str | None, names: tuple[str, ...]) -> dict[str, pl.DataFrame] | None:
    """The cached tables, or None when any is missing, damaged or of another format."""
    if version_dir is None:
        return None
    d = os.path.join(version_dir, _DIR)
    files = _read_key(d).get("files") or {}
    out = {}
    try:
        for n in names:
            want = files.get(n)
            if not isinstance(want, dict):
                return None
            path = os.path.join(d, f"{n}.arrow")
            if os.stat(path).st_size != want.get("size"):
                return None
            out[n] = pl.read_ipc(path)
    except (OSError, pl.exceptions.PolarsError, ValueError):
        return None
    return out


def holds(version_dir: str | None, names: tuple[str, ...]) -> bool:
    """Whether the version's cache lists every one of `names` (only its key is read)."""
    if version_dir is None:
        return False
    files = _read_key(os.path.join(version_dir, _DIR)).get("files") or {}
    return all(isinstance(files.get(n), dict) for n in names)


def ranker(snap, nodes: pl.DataFrame | None = None) -> RankIndex:
    """The ranker's index of a store version (a `tables.Snapshot`): from its cache, else built
    from the version's tables and saved into its cache for the next process."""
    nodes = snap.read("nodes") if nodes is None else nodes
    return cached_ranker(
        snap.dir if snap.version else None,
        nodes,
        lambda: RankIndex(nodes, snap.read("tokens"), snap.read("vocab"), edges=snap.scan("edges")),
    )


def cached_ranker(
    version_dir: str | None, nodes: pl.DataFrame, build: Callable[[], RankIndex]
) -> RankIndex:
    """The ranker's index from the version's cache, else `build()` saved into it."""
    state = load(version_dir, RANK_TABLES)
    if state is not None:
        return RankIndex.from_state(nodes, state)
    index = build()
    save(version_dir, index.state())
    return index


def save(version_dir: str | None, tables: dict[str, pl.DataFrame]) -> None:
    """Write tables into the version's cache (best effort: any OS error leaves no cache)."""
    if version_dir is None:
        return
    d = os.path.join(version_dir, _DIR)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(d)  # never makedirs: a version removed meanwhile must stay removed
        written = {}
        for name, frame in tables.items():
            buf = io.BytesIO()
            frame.write_ipc(buf)
            data = buf.getvalue()
            tmp = os.path.join(d, f".{name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, os.path.join(d, f"{name}.arrow"))
            written[name] = {"size": len(data)}
        key = _read_key(d)
        key = {**_head(), "files": {**(key.get("files") or {}), **written}}
        tmp = os.path.join(d, f".key.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(key, fh, sort_keys=True)
        os.replace(tmp, os.path.join(d, _KEY))
    except (OSError, pl.exceptions.PolarsError):
        return

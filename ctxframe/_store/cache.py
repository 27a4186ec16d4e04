"""Derived structures (the ranker's vocabulary and postings, the edge lookup) cached as Arrow IPC
files inside the store version they were built from (`STORE/v-…/cache/`), so a cold CLI query
maps them in instead of rebuilding.

A version never changes, so a cache is never stale: it is only ever written into its own
version's directory, and goes when the version goes. `key.json` records the cache format, the
ctxframe version, the version directory it was built for and each file's size and SHA-256,
checked like the store's parts: a file of another size or hash, a file that is not a regular
file (a FIFO is refused without blocking), a cache copied from another version, or one Arrow
cannot decode is never an answer: it is ignored and rebuilt. Hashing is done on the mapped
file (SHA-256 at about 2 GB/s here), which Polars then decodes in place. Writes are best
effort (a read-only store just means no cache) and atomic per file. A legacy store (no
versions) gets no cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import mmap
import os
import sys
from collections.abc import Callable

import polars as pl

from ctxframe._core.safeio import open_regular, read_regular
from ctxframe._rank.ranker import STATE_TABLES as RANK_TABLES
from ctxframe._rank.ranker import RankIndex

EDGE_TABLES = ("edges_out", "edges_in")
_DIR = "cache"
_KEY = "key.json"

CACHE_FORMAT = 6  # bump when a cached structure changes shape or order


def _head(version_dir: str) -> dict:
    from ctxframe._core.version import __version__

    return {
        "format": CACHE_FORMAT,
        "ctxframe_version": __version__,
        "version": os.path.basename(os.path.normpath(version_dir)),
    }


def _read_key(version_dir: str) -> dict:
    """The cache's record, or {} when it is missing, damaged, or of another format,
    ctxframe or version (a cache copied from another version is not this one's)."""
    try:
        key = json.loads(read_regular(os.path.join(version_dir, _DIR, _KEY), 1 << 20))
    except (OSError, ValueError):
        return {}
    want = _head(version_dir)
    if not isinstance(key, dict) or {k: key.get(k) for k in want} != want:
        return {}
    return key


def _read_checked(path: str, want: dict) -> pl.DataFrame | None:
    """One cache file, decoded only when it is a regular file of the recorded size and hash."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size != want.get("size") or not size:
            return None
        with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as mapped:
            if hashlib.sha256(mapped).hexdigest() != want.get("sha256"):
                return None
        # the file just checked, through its descriptor (the same inode, even if replaced)
        proc = f"/proc/self/fd/{fd}"
        src = proc if sys.platform.startswith("linux") and os.path.exists(proc) else path
        return pl.read_ipc(src)
    finally:
        os.close(fd)


def load(version_dir: str | None, names: tuple[str, ...]) -> dict[str, pl.DataFrame] | None:
    """The cached tables, or None when any is missing, damaged or of another format or
    version."""
    if version_dir is None:
        return None
    d = os.path.join(version_dir, _DIR)
    files = _read_key(version_dir).get("files") or {}
    out = {}
    try:
        for n in names:
            want = files.get(n)
            if not isinstance(want, dict):
                return None
            frame = _read_checked(os.path.join(d, f"{n}.arrow"), want)
            if frame is None:
                return None
            out[n] = frame
    except Exception:  # any failure to read a derived file: it is rebuilt, never an answer
        return None
    return out


def holds(version_dir: str | None, names: tuple[str, ...]) -> bool:
    """Whether the version's cache lists every one of `names` (only its key is read)."""
    if version_dir is None:
        return False
    files = _read_key(version_dir).get("files") or {}
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
        try:
            return RankIndex.from_state(nodes, state)
        except Exception:  # tables that do not fit these nodes: never an answer, rebuilt
            pass
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
            written[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        key = _read_key(version_dir)
        key = {**_head(version_dir), "files": {**(key.get("files") or {}), **written}}
        tmp = os.path.join(d, f".key.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(key, fh, sort_keys=True)
        os.replace(tmp, os.path.join(d, _KEY))
    except (OSError, pl.exceptions.PolarsError):
        return

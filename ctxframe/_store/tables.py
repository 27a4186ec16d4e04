"""The on-disk store: Parquet tables (Arrow IPC for the small boundary ones) plus meta.json in
one directory, swapped atomically.

A write builds `<store>.tmp-<pid>/`, then renames the old store aside and the new one into
place; a process killed between the two renames leaves `<store>.old-*`, which `read` recovers.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import polars as pl

from ctxframe._core.config import default_store  # noqa: F401  (where a store lives: config)
from ctxframe._core.errors import StoreNotFound, StoreVersionError, StoreWriteError
from ctxframe._core.schema import SCHEMA_VERSION

META = "meta.json"


def _recover(path: str) -> None:
    if os.path.isdir(path):
        return
    olds = sorted(glob.glob(f"{glob.escape(path)}.old-*"))
    if olds:
        os.replace(olds[-1], path)


def read_meta(path: str) -> dict:
    """The store's metadata; raises StoreNotFound or StoreVersionError with the fix."""
    _recover(path)
    meta_path = os.path.join(path, META)
    if not os.path.isfile(meta_path):
        raise StoreNotFound(f"no ctxframe index at {path}: run `ctxframe index` first")
    with open(meta_path, encoding="utf-8") as fh:
        meta = json.load(fh)
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise StoreVersionError(
            f"store at {path} has schema version {meta.get('schema_version')}, this ctxframe "
            f"reads {SCHEMA_VERSION}: run `ctxframe index --rebuild`"
        )
    return meta


# The per-file boundary rows (internal, tiny, rewritten by most runs) are Arrow IPC; every
# other table is Parquet. A table in the other format (an older store's: references were once
# IPC too, and before that every table was Parquet) is read, and converted by the next index.
IPC = frozenset({"bnodes", "bedges"})


def _file(path: str, name: str) -> str:
    return os.path.join(path, f"{name}.arrow" if name in IPC else f"{name}.parquet")


def _existing(path: str, name: str) -> str:
    file = _file(path, name)
    if not os.path.isfile(file):
        other = os.path.splitext(file)[0] + (".parquet" if name in IPC else ".arrow")
        if os.path.isfile(other):
            return other
    return file


def read_table(path: str, name: str) -> pl.DataFrame:
    """One table of the store."""
    file = _existing(path, name)
    return pl.read_ipc(file) if file.endswith(".arrow") else pl.read_parquet(file)


def scan_table(path: str, name: str) -> pl.LazyFrame:
    """One table of the store, scanned lazily."""
    file = _existing(path, name)
    return pl.scan_ipc(file) if file.endswith(".arrow") else pl.scan_parquet(file)


def _write_table(frame: pl.DataFrame, file: str) -> None:
    if file.endswith(".arrow"):
        frame.write_ipc(file, compression="uncompressed")
    else:
        frame.write_parquet(file, compression="snappy", statistics=False)


class Staging:
    """A new store built beside the old one, `<store>.tmp-<pid>/`: tables are written as they
    are ready (so a large index can drop them from memory), and `commit` swaps the directory
    in. Until then the old store is untouched; `abort`, or any error inside `with Staging(…)`,
    removes the new one."""

    def __init__(self, path: str):
        self.path, self.tmp = path, f"{path}.tmp-{os.getpid()}"
        with self._guard():
            os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
            shutil.rmtree(self.tmp, ignore_errors=True)
            os.makedirs(self.tmp)

    @contextmanager
    def _guard(self):
        try:
            yield
        except OSError as exc:
            self.abort()
            raise StoreWriteError(
                f"cannot write the store at {self.path}: {exc.strerror or exc}; "
                "pass a writable --store DIR (the previous store is untouched)"
            ) from exc

    def put(self, tables: dict[str, pl.DataFrame]) -> None:
        """Write these tables into the new store (in parallel: Polars releases the GIL)."""
        with self._guard(), ThreadPoolExecutor(max_workers=max(1, len(tables))) as pool:
            futures = [
                pool.submit(_write_table, frame, _file(self.tmp, name))
                for name, frame in tables.items()
            ]
            for f in futures:
                f.result()

    def sink(self, name: str, query: pl.LazyFrame) -> None:
        """Stream a query's result into the new store without holding it in memory."""
        with self._guard():
            file = _file(self.tmp, name)
            if file.endswith(".arrow"):
                query.sink_ipc(file, compression="uncompressed")
            else:
                query.sink_parquet(file, compression="snappy", statistics=False)

    def keep(self, names: list[str] | tuple) -> None:
        """Carry these tables over unchanged from the old store (hard-linked when possible)."""
        with self._guard():
            for name in names:
                src, dst = (_file(d, name) for d in (self.path, self.tmp))
                if not os.path.isfile(src):  # an older store's format: convert it
                    _write_table(read_table(self.path, name), dst)
                    continue
                try:
                    os.link(src, dst)
                except OSError:
                    shutil.copyfile(src, dst)

    def commit(self, meta: dict) -> None:
        """Write meta.json and swap the new store in for the old one."""
        with self._guard():
            with open(os.path.join(self.tmp, META), "w", encoding="utf-8") as fh:
                json.dump({**meta, "schema_version": SCHEMA_VERSION}, fh, indent=2, sort_keys=True)
            old = f"{self.path}.old-{os.getpid()}"
            if os.path.isdir(self.path):
                os.replace(self.path, old)
            os.replace(self.tmp, self.path)
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        """Drop the new store; the old one stays as it was."""
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:  # any error, an interrupt included: the old store stays
            self.abort()

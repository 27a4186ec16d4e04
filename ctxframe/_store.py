"""The on-disk store: Parquet tables plus meta.json in one directory, swapped atomically.

A write builds `<store>.tmp-<pid>/`, then renames the old store aside and the new one into
place; a process killed between the two renames leaves `<store>.old-*`, which `read` recovers.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import polars as pl

from ctxframe._errors import StoreNotFound, StoreVersionError, StoreWriteError
from ctxframe._schema import SCHEMA_VERSION

META = "meta.json"


def default_store(root: str) -> str:
    """Where the store of the repository at `root` lives unless told otherwise."""
    return os.path.join(root, ".ctxframe", "graph")


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


def read_table(path: str, name: str) -> pl.DataFrame:
    """One table of the store."""
    return pl.read_parquet(os.path.join(path, f"{name}.parquet"))


def write(path: str, tables: dict[str, pl.DataFrame], meta: dict) -> None:
    """Write every table and meta.json, then swap the directory in; all or nothing."""
    parent = os.path.dirname(os.path.abspath(path)) or "."
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        os.makedirs(parent, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        with ThreadPoolExecutor(max_workers=len(tables)) as pool:  # Polars releases the GIL
            futures = [
                pool.submit(
                    frame.write_parquet,
                    os.path.join(tmp, f"{name}.parquet"),
                    compression="snappy",
                    statistics=False,
                )
                for name, frame in tables.items()
            ]
            for f in futures:
                f.result()
        with open(os.path.join(tmp, META), "w", encoding="utf-8") as fh:
            json.dump({**meta, "schema_version": SCHEMA_VERSION}, fh, indent=2, sort_keys=True)
        old = f"{path}.old-{os.getpid()}"
        if os.path.isdir(path):
            os.replace(path, old)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StoreWriteError(
            f"cannot write the store at {path}: {exc.strerror or exc}; "
            "pass a writable --store DIR (the previous store is untouched)"
        ) from exc

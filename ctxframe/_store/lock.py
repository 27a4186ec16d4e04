"""The writer lock: one `index` writes a store at a time (readers never take it, they pin a
version; see ctxframe._store.tables). `filelock` holds an OS lock on `STORE/.lock`, which the
kernel drops when the holder dies, so a killed writer never leaves the store locked."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ctxframe._core.errors import StoreLocked, StoreWriteError

LOCK = ".lock"


@contextmanager
def writer_lock(store: str, wait: bool = True) -> Iterator[None]:
    """Hold the store's writer lock; with `wait`, say once that we wait for another writer,
    else raise StoreLocked at once."""
    from filelock import FileLock, Timeout

    try:
        os.makedirs(store, exist_ok=True)
        lock = FileLock(os.path.join(store, LOCK))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if not wait:
                raise StoreLocked(
                    f"another `ctxframe index` is writing the store at {store}: wait for it, "
                    "or run again without --no-wait to queue behind it"
                ) from None
            print(
                f"ctxframe: waiting for another `ctxframe index` writing {store} to finish "
                "(--no-wait fails instead)",
                file=sys.stderr,
                flush=True,
            )
            lock.acquire()
    except OSError as exc:
        raise StoreWriteError(
            f"cannot write the store at {store}: {exc.strerror or exc}; pass a writable "
            "--store DIR (the previous store is untouched)"
        ) from exc
    try:
        yield
    finally:
        lock.release()

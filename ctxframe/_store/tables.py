"""The on-disk store: immutable versions behind one pointer, each part sized and hashed.

    STORE/current          -> v-<time>-<pid>   the pointer (a symlink; a one-line file where
                                               symlinks are not allowed), swapped atomically
    STORE/v-<time>-<pid>/  one version: meta.json (with the size and SHA-256 of every part),
                           nodes.parquet, edges.parquet, files.parquet, tokens.parquet,
                           refs.parquet, bnodes.arrow, bedges.arrow, cache/ (derived, this
                           version only)
    STORE/meta.json, STORE/{nodes,edges,files,tokens}.parquet
                           the current version's meta.json and contract tables (hard links),
                           where dashboards read them; ctxframe itself reads through `current`
    STORE/.lock            the writer lock (see ctxframe._store.lock)

A write stages a new version in `STORE/.staging-<pid>/`, renames it to its version name and
swaps the pointer: a reader sees the old version or the new one, never a mix. A `Snapshot`
pins one version by holding its files open, so it reads that version for its whole life even
after newer writes remove it. Every part read is checked against its recorded size and hash.

Stores written before versions (every table directly in STORE, schema version 2) are read as
they are and converted by the next index.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import io
import json
import os
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import polars as pl

from ctxframe._core.config import default_store  # noqa: F401  (where a store lives: config)
from ctxframe._core.errors import (
    StoreCorrupt,
    StoreNotFound,
    StoreVersionError,
    StoreWriteError,
)
from ctxframe._core.schema import EDGES, FILES, NODES, SCHEMA_VERSION, TOKENS, VOCAB

META = "meta.json"
CURRENT = "current"
LEGACY_SCHEMA = 2  # tables directly in the store directory, no hashes
TABLES = ("nodes", "edges", "files", "tokens", "vocab", "refs", "bnodes", "bedges")
CONTRACT = {"nodes": NODES, "edges": EDGES, "files": FILES, "tokens": TOKENS, "vocab": VOCAB}
# The per-file boundary rows (internal, tiny, rewritten by most runs) are Arrow IPC; every
# other table is Parquet. A table in the other format (an older store's) is read, and
# converted by the next index.
IPC = frozenset({"bnodes", "bedges"})
_FIX = "run `ctxframe index` to rebuild it"
_READ_RETRIES = 8


def part_name(name: str) -> str:
    """The file one table is stored in, inside its version directory."""
    return f"{name}.arrow" if name in IPC else f"{name}.parquet"


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _damaged(store: str, what: str) -> StoreCorrupt:
    exc = StoreCorrupt(f"the store at {store} is damaged ({what}): {_FIX}")
    exc.detail = what  # type: ignore[attr-defined]
    return exc


class _Memo:
    """Decoded tables by their part's SHA-256, kept while a watcher runs (`remembering`): the
    next index and a graph in this process take the frames the last index wrote instead of
    reading, hashing and decoding them again. A frame is remembered only as written or as read
    after its hash was checked, so what it serves is what the recorded hash vouches for."""

    def __init__(self) -> None:
        self.users = 0
        self.frames: dict[str, pl.DataFrame] = {}
        self.lock = threading.Lock()

    def get(self, info: dict) -> pl.DataFrame | None:
        digest = info.get("sha256")
        return self.frames.get(digest) if self.users and digest else None

    def put(self, info: dict, frame: pl.DataFrame) -> None:
        if self.users and info.get("sha256"):
            # a spliced table is many slices: one copy now keeps every later pass fast
            self.frames[info["sha256"]] = frame.rechunk() if frame.n_chunks() > 4 else frame

    def only(self, parts: dict) -> None:
        """Forget every frame but those of these parts (a version just committed)."""
        keep = {p.get("sha256") for p in parts.values()}
        with self.lock:
            self.frames = {k: f for k, f in self.frames.items() if k in keep}


_MEMO = _Memo()


@contextmanager
def remembering():
    """Within this block (any thread), the tables this process writes or reads are kept
    decoded, one version's worth, and served again for a part with the same hash."""
    with _MEMO.lock:
        _MEMO.users += 1
    try:
        yield
    finally:
        with _MEMO.lock:
            _MEMO.users -= 1
            if not _MEMO.users:
                _MEMO.frames = {}


def _read_json(path: str, store: str) -> dict:
    try:
        with open(path, "rb") as fh:
            meta = json.loads(fh.read().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _damaged(store, f"{os.path.basename(path)} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict):
        raise _damaged(store, f"{os.path.basename(path)} is not a JSON object")
    return meta


def current_version(store: str) -> str | None:
    """The version directory name the pointer names, or None (no pointer: legacy or none)."""
    ptr = os.path.join(store, CURRENT)
    if os.path.isdir(ptr) and not os.path.islink(ptr):  # a copy that followed the symlink
        return CURRENT
    try:
        target = os.readlink(ptr)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # EINVAL: a regular file (no symlinks here)
            raise
        with open(ptr, encoding="utf-8", errors="replace") as fh:
            target = fh.read().strip()
    name = os.path.basename(target.rstrip("/"))
    if not name.startswith("v-") or "/" in target.rstrip("/").removeprefix("./"):
        raise _damaged(store, f"the pointer `current` names {target!r}")
    return name


def _recover(path: str) -> None:
    """A legacy store killed between its two renames left `STORE.old-*`: put it back."""
    if os.path.isdir(path):
        return
    olds = sorted(glob.glob(f"{glob.escape(path)}.old-*"))
    if olds:
        os.replace(olds[-1], path)


def _check_version(meta: dict, store: str) -> None:
    got = meta.get("schema_version")
    if got not in (SCHEMA_VERSION, LEGACY_SCHEMA):
        raise StoreVersionError(
            f"store at {store} has schema version {got}, this ctxframe reads {SCHEMA_VERSION}: "
            "run `ctxframe index --rebuild`"
        )


class Snapshot:
    """One version of a store, pinned: its part files are opened now and read through these
    descriptors, so a newer index that swaps in another version and removes this one does not
    change (or break) what this snapshot reads."""

    def __init__(self, store: str):
        self.store = os.path.abspath(store)
        for _ in range(_READ_RETRIES):
            if self._pin():
                return
            time.sleep(0.02)  # a writer swapped versions between our reads: read again
        raise _damaged(self.store, "the pointer keeps naming a missing version")

    def _pin(self) -> bool:
        store = self.store
        _recover(store)
        try:
            version = current_version(store)
        except OSError as exc:
            raise _damaged(store, f"cannot read the pointer: {exc.strerror}") from None
        self.version = version
        self._fds: dict[str, int] = {}
        self._checked: set[str] = set()  # parts whose hash this snapshot has checked
        if version is None:  # legacy layout, or no store at all
            meta_path = os.path.join(store, META)
            if not os.path.isfile(meta_path):
                raise StoreNotFound(f"no ctxframe index at {store}: run `ctxframe index` first")
            self.dir = store
            self.meta = _read_json(meta_path, store)
            _check_version(self.meta, store)
            self.parts = {}
            for name in TABLES:
                file = _legacy_file(store, name)
                if os.path.isfile(file):
                    rel = os.path.basename(file)
                    self.parts[rel] = {"table": name}
                    self._open(rel)
            return True
        self.dir = os.path.join(store, version)
        try:
            self.meta = _read_json(os.path.join(self.dir, META), store)
        except FileNotFoundError:
            return self._moved(version, f"{version}/{META} is missing")
        _check_version(self.meta, store)
        parts = self.meta.get("parts")
        if not isinstance(parts, dict):
            raise _damaged(store, f"{version}/{META} lists no parts")
        self.parts = parts
        try:
            for rel in parts:
                self._open(rel)
        except FileNotFoundError:
            self.close()
            return self._moved(version, "a part file is missing")
        return True

    def _moved(self, version: str, what: str) -> bool:
        if current_version(self.store) != version:
            return False
        raise _damaged(self.store, what)

    def _open(self, rel: str) -> None:
        flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
        self._fds[rel] = os.open(os.path.join(self.dir, rel), flags)

    def close(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = {}

    def __del__(self) -> None:
        self.close()

    # -- reading -------------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        return any(p.get("table") == name for p in self.parts.values())

    def files_of(self, name: str) -> list[str]:
        """The part files (relative to the version directory) of one table, in order."""
        rels = sorted(r for r, p in self.parts.items() if p.get("table") == name)
        if not rels:
            raise _damaged(self.store, f"table {name} is missing")
        return rels

    def _bytes(self, rel: str) -> bytes:
        """A part's bytes, checked against its recorded size and hash."""
        fd, info = self._fds[rel], self.parts[rel]
        size = os.fstat(fd).st_size
        if "size" in info and size != info["size"]:
            raise _damaged(self.store, f"{rel} has {size} bytes, {info['size']} were written")
        data = os.pread(fd, size, 0)
        if "sha256" in info and file_hash(data) != info["sha256"]:
            raise _damaged(self.store, f"{rel} does not match its hash")
        self._checked.add(rel)
        return data

    def check_sizes(self) -> None:
        """Every part's size against the recorded one (a stat each: cheap)."""
        for rel, info in self.parts.items():
            size = os.fstat(self._fds[rel]).st_size
            if "size" in info and size != info["size"]:
                raise _damaged(self.store, f"{rel} has {size} bytes, {info['size']} were written")

    def verify_all(self) -> None:
        """Every part's size and hash (a read of the whole version: `status`)."""
        self.check_sizes()
        for rel in self.parts:
            self._bytes(rel)

    def verify(self, name: str) -> None:
        """Check one table's parts (size and hash) without decoding them; a part this
        snapshot checked already (through the same descriptor) is not read again."""
        for rel in self.files_of(name):
            if rel not in self._checked:
                self._bytes(rel)

    def _remembered(self, name: str) -> pl.DataFrame | None:
        """The decoded table from the memo (see `remembering`), its part's size checked."""
        rels = self.files_of(name)
        if len(rels) != 1 or (frame := _MEMO.get(self.parts[rels[0]])) is None:
            return None
        info = self.parts[rels[0]]
        if os.fstat(self._fds[rels[0]]).st_size != info.get("size"):
            return None
        return frame

    def read(self, name: str) -> pl.DataFrame:
        """One table, verified and decoded; damage raises StoreCorrupt naming the fix."""
        if (frame := self._remembered(name)) is not None:
            return frame
        frames = []
        for rel in self.files_of(name):
            data = self._bytes(rel)
            try:
                buf = io.BytesIO(data)
                frame = pl.read_ipc(buf) if rel.endswith(".arrow") else pl.read_parquet(buf)
            except Exception as exc:  # any decoder error: the bytes are not a table
                raise _damaged(self.store, f"{rel}: {_short(exc)}") from None
            frames.append(frame)
        frame = frames[0] if len(frames) == 1 else pl.concat(frames)
        want = CONTRACT.get(name)
        if want is not None and frame.schema != want:
            raise _damaged(self.store, f"{name} has columns {list(frame.schema)}, not the schema")
        if len(frames) == 1 and self.version is not None:
            _MEMO.put(self.parts[self.files_of(name)[0]], frame)
        return frame

    def path(self, rel: str) -> str:
        """A path that opens this snapshot's file even after it was removed (Linux), else
        the file's own path."""
        proc = f"/proc/self/fd/{self._fds[rel]}"
        return (
            proc
            if sys.platform.startswith("linux") and os.path.exists(proc)
            else (os.path.join(self.dir, rel))
        )

    def scan(self, name: str, verify: bool = True) -> pl.LazyFrame:
        """One table scanned lazily (its parts verified first unless told not to)."""
        if (frame := self._remembered(name)) is not None:
            return frame.lazy()
        if _MEMO.users and verify and self.version is not None:
            return self.read(name).lazy()  # read once, remembered for the next run
        rels = self.files_of(name)
        if verify:
            for rel in rels:
                self._bytes(rel)
        paths = [self.path(r) for r in rels]
        if rels[0].endswith(".arrow"):
            return pl.scan_ipc(paths)
        return pl.scan_parquet(paths)

    def info(self, name: str) -> list[tuple[str, dict]]:
        return [(rel, self.parts[rel]) for rel in self.files_of(name)]


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _legacy_file(path: str, name: str) -> str:
    file = os.path.join(path, part_name(name))
    if not os.path.isfile(file):
        other = os.path.splitext(file)[0] + (".parquet" if name in IPC else ".arrow")
        if os.path.isfile(other):
            return other
    return file


def read_meta(path: str) -> dict:
    """The current version's metadata; raises StoreNotFound, StoreVersionError or
    StoreCorrupt with the fix."""
    return Snapshot(path).meta


def read_table(path: str, name: str) -> pl.DataFrame:
    """One table of the store's current version."""
    return Snapshot(path).read(name)


def scan_table(path: str, name: str) -> pl.LazyFrame:
    """One table of the store's current version, scanned lazily."""
    return Snapshot(path).scan(name)


def _write_table(frame: pl.DataFrame, file: str) -> None:
    if file.endswith(".arrow"):
        frame.write_ipc(file, compression="uncompressed")
    else:
        frame.write_parquet(file, compression="snappy", statistics=False)


def _digest(file: str) -> dict:
    with open(file, "rb") as fh:
        data = fh.read()
    return {"size": len(data), "sha256": file_hash(data)}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_of(name: str, prefix: str) -> int | None:
    try:
        return int(name[len(prefix) :].split("-")[0])
    except ValueError:
        return None


def clean_stale(store: str, keep: int = 2) -> list[str]:
    """Remove what dead or finished writers left: staging directories, versions older than
    the newest `keep` (the current one always stays), legacy `STORE.tmp-*`/`STORE.old-*`
    siblings of dead processes. Call with the writer lock held."""
    removed = []
    try:
        current = current_version(store)
    except (OSError, StoreCorrupt):
        current = None
    try:
        names = sorted(os.listdir(store))
    except OSError:
        names = []
    versions = [n for n in names if n.startswith("v-")]
    old = [v for v in versions if v != current]
    drop = old[: max(0, len(old) - (keep - 1))] if current else []
    for n in names:
        if n.startswith(".staging-") and n != f".staging-{os.getpid()}":
            drop.append(n)
    for n in drop:
        shutil.rmtree(os.path.join(store, n), ignore_errors=True)
        removed.append(n)
    parent, base = os.path.split(store.rstrip("/"))
    for pattern in (f"{base}.tmp-", f"{base}.old-"):
        for p in glob.glob(os.path.join(glob.escape(parent or "."), glob.escape(pattern) + "*")):
            pid = _pid_of(os.path.basename(p), pattern)
            if pid is not None and pid != os.getpid() and not _pid_alive(pid):
                if pattern.endswith("old-") and not os.path.isdir(store):
                    continue  # the legacy recovery still needs it
                shutil.rmtree(p, ignore_errors=True)
                removed.append(os.path.basename(p))
    return removed


class Staging:
    """A new version built in `STORE/.staging-<pid>/`: tables are written as they are ready
    (so a large index can drop them from memory), each part's size and hash recorded, and
    `commit` renames it to its version and swaps the pointer. Until then readers see the old
    version; `abort`, or any error inside `with Staging(…)`, removes the new one."""

    def __init__(self, path: str, base: Snapshot | None = None):
        self.path, self.base = path, base
        self.tmp = os.path.join(path, f".staging-{os.getpid()}")
        self.parts: dict[str, dict] = {}
        with self._guard():
            os.makedirs(path, exist_ok=True)
            shutil.rmtree(self.tmp, ignore_errors=True)
            os.makedirs(self.tmp)

    @contextmanager
    def _guard(self):
        try:
            yield
        except OSError as exc:
            self.abort()
            if exc.errno == errno.ENOSPC:
                fix = "free some disk space, or pass --store DIR on another disk"
            else:
                fix = "pass a writable --store DIR"
            raise StoreWriteError(
                f"cannot write the store at {self.path}: {exc.strerror or exc}; {fix} "
                "(the previous store is untouched)"
            ) from exc
        except pl.exceptions.PolarsError as exc:  # Polars wraps OS errors of its writers
            self.abort()
            text = _short(exc)
            full = "No space left" in text or "os error 28" in text
            if full:
                text = "no space left on the device"
            fix = (
                "free some disk space, or pass --store DIR on another disk"
                if full
                else "pass a writable --store DIR"
            )
            raise StoreWriteError(
                f"cannot write the store at {self.path}: {text}; {fix} "
                "(the previous store is untouched)"
            ) from exc

    def _record(self, name: str) -> None:
        rel = part_name(name)
        self.parts[rel] = {"table": name, **_digest(os.path.join(self.tmp, rel))}

    def _write(self, name: str, frame: pl.DataFrame) -> None:
        _write_table(frame, os.path.join(self.tmp, part_name(name)))
        self._record(name)
        _MEMO.put(self.parts[part_name(name)], frame)

    def put(self, tables: dict[str, pl.DataFrame]) -> None:
        """Write these tables into the new version (in parallel: Polars releases the GIL)."""
        with self._guard(), ThreadPoolExecutor(max_workers=max(1, len(tables))) as pool:
            futures = [pool.submit(self._write, name, frame) for name, frame in tables.items()]
            for f in futures:
                f.result()

    def sink(self, name: str, query: pl.LazyFrame) -> None:
        """Stream a query's result into the new version without holding it in memory."""
        with self._guard():
            file = os.path.join(self.tmp, part_name(name))
            if file.endswith(".arrow"):
                query.sink_ipc(file, compression="uncompressed")
            else:
                query.sink_parquet(file, compression="snappy", statistics=False)
            self._record(name)

    def keep(self, names: list[str] | tuple) -> None:
        """Carry these tables over unchanged from the base version (hard-linked when
        possible), each part checked against its size and hash first."""
        base = self.base
        if base is None:
            raise StoreWriteError("nothing to keep: no previous version")
        with self._guard():
            for name in names:
                for rel, info in base.info(name):
                    if base.version is None or rel != part_name(name):  # older format: convert
                        self._write(name, base.read(name))
                        continue
                    base.verify(name)
                    dst = os.path.join(self.tmp, rel)
                    try:
                        os.link(os.path.join(base.dir, rel), dst)
                    except OSError:
                        with open(dst, "wb") as fh:
                            fh.write(base._bytes(rel))
                    self.parts[rel] = dict(info)

    def commit(self, meta: dict) -> str:
        """Write meta.json, rename the staged directory to its version and swap the pointer
        to it; returns the version name."""
        with self._guard():
            version = f"v-{time.time_ns():020d}-{os.getpid()}"
            full = {**meta, "schema_version": SCHEMA_VERSION, "version": version,
                    "parts": self.parts}  # fmt: skip
            text = json.dumps(full, indent=2, sort_keys=True)
            with open(os.path.join(self.tmp, META), "w", encoding="utf-8") as fh:
                fh.write(text)
            final = os.path.join(self.path, version)
            os.rename(self.tmp, final)
            _swap_pointer(self.path, version)
            _legacy_cleanup(self.path)
            _mirror(self.path, final)
            tmp = os.path.join(self.path, f".{META}.{os.getpid()}")
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, os.path.join(self.path, META))
        if _MEMO.users:
            _MEMO.only(self.parts)
        clean_stale(self.path)
        return version

    def abort(self) -> None:
        """Drop the new version; the old one stays as it was."""
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:  # any error, an interrupt included: the old store stays
            self.abort()


def _swap_pointer(store: str, version: str) -> None:
    ptr = os.path.join(store, CURRENT)
    if os.path.isdir(ptr) and not os.path.islink(ptr):  # a copied store: make it a version
        os.rename(ptr, os.path.join(store, f"v-{0:020d}-copied-{os.getpid()}"))
    tmp = os.path.join(store, f".{CURRENT}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    try:
        os.symlink(version, tmp)
    except OSError:  # no symlinks on this file system: a one-line file
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(version + "\n")
    os.replace(tmp, os.path.join(store, CURRENT))


def _mirror(store: str, version_dir: str) -> None:
    """The current version's contract tables also at `STORE/<table>.parquet` (hard links,
    each swapped in atomically), where dashboards read them; ctxframe itself reads versions."""
    for name in CONTRACT:
        rel = part_name(name)
        tmp = os.path.join(store, f".{rel}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        try:
            os.link(os.path.join(version_dir, rel), tmp)
        except OSError:
            shutil.copyfile(os.path.join(version_dir, rel), tmp)
        os.replace(tmp, os.path.join(store, rel))


def _legacy_cleanup(store: str) -> None:
    """After the first versioned commit: the legacy layout's internal tables and cache go
    (the contract tables are replaced by the current version's, see `_mirror`)."""
    for name in set(TABLES) - set(CONTRACT):
        for ext in (".parquet", ".arrow"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(store, name + ext))
    shutil.rmtree(os.path.join(store, "cache"), ignore_errors=True)

"""The on-disk store: immutable versions behind one pointer, each part sized and hashed.

    STORE/current          -> v-<time>-<pid>   the pointer (a symlink; a one-line file where
                                               symlinks are not allowed), swapped atomically
    STORE/v-<time>-<pid>/  one version: meta.json (the size and SHA-256 of every part, and
                           the part key), the tables as Parquet datasets — nodes/, edges/,
                           files/, tokens/, vocab/, refs/, each part-NNN.parquet (see
                           ctxframe._store.parts) — bnodes.arrow, bedges.arrow, cache/
                           (derived, this version only)
    STORE/meta.json, STORE/{nodes,edges,files,tokens,vocab}/
                           the current version's meta.json and contract tables (symlinks
                           through `current`), where dashboards read them; ctxframe itself
                           reads through `current`
    STORE/.lock            the writer lock (see ctxframe._store.lock)

A write stages a new version in `STORE/.staging-<pid>/`, renames it to its version name and
swaps the pointer: a reader sees the old version or the new one, never a mix. A `Snapshot`
pins one version by holding its files open, so it reads that version for its whole life even
after newer writes remove it. Every part read is checked against its recorded size and hash.

Stores written before versions (every table directly in STORE, schema version 2) and before
parts (one file per table, schema version 4) are read as they are and converted by the next
index.
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
from ctxframe._core.safeio import NotRegular, open_regular, read_regular
from ctxframe._core.schema import (
    EDGES,
    FILES,
    NODES,
    SCHEMA_VERSION,
    TOKENS,
    VOCAB,
    conform_edges,
)
from ctxframe._store import parts as _parts
from ctxframe._store import tokenparts as _tokenparts

META = "meta.json"
CURRENT = "current"
LEGACY_SCHEMA = 2  # tables directly in the store directory, no hashes
# 7: nodes without the function metrics; 6: also edges without `via` and `bound`; 5: tokens in
# one part; 4: a file per table
READABLE = (SCHEMA_VERSION, 7, 6, 5, 4, LEGACY_SCHEMA)
TABLES = ("nodes", "edges", "files", "tokens", "vocab", "refs", "bnodes", "bedges", "coverage")
CONTRACT = {"nodes": NODES, "edges": EDGES, "files": FILES, "tokens": TOKENS, "vocab": VOCAB}
OPTIONAL = ("commits", "changes")  # the git history (ctxframe._store.history), when read
# The per-file boundary rows and the coverage table (internal, small, rewritten by most runs)
# are Arrow IPC; every other table is Parquet. A table in the other format (an older store's)
# is read, and converted by the next index.
IPC = frozenset({"bnodes", "bedges", "coverage"})
_FIX = "run `ctxframe index` to rebuild it"
_READ_RETRIES = 8


def part_name(name: str) -> str:
    """The file a table in one part is stored in, inside its version directory."""
    if name in IPC:
        return f"{name}.arrow"
    return _parts.rel(name) if name in _parts.DATASETS else f"{name}.parquet"


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
        self.wholes: dict[tuple, pl.DataFrame] = {}  # a table in one piece, by its parts' hashes
        self.lock = threading.Lock()

    def get(self, info: dict) -> pl.DataFrame | None:
        digest = info.get("sha256")
        return self.frames.get(digest) if self.users and digest else None

    def put(self, info: dict, frame: pl.DataFrame) -> None:
        if self.users and info.get("sha256"):
            # a spliced table is many slices: one copy now keeps every later pass fast
            self.frames[info["sha256"]] = frame.rechunk() if frame.n_chunks() > 4 else frame

    def get_whole(self, key: tuple) -> pl.DataFrame | None:
        return self.wholes.get(key) if self.users else None

    def put_whole(self, key: tuple, frame: pl.DataFrame) -> None:
        """A whole table, as written or as its checked parts put together: a reader of the
        same parts takes it instead of putting them together again."""
        if self.users and key and all(key):
            self.wholes[key] = frame.rechunk() if frame.n_chunks() > 4 else frame

    def only(self, parts: dict) -> None:
        """Forget every frame but those of these parts (a version just committed)."""
        keep = {p.get("sha256") for p in parts.values()}
        with self.lock:
            self.frames = {k: f for k, f in self.frames.items() if k in keep}
            self.wholes = {k: f for k, f in self.wholes.items() if keep.issuperset(k)}


_MEMO = _Memo()


def _rels(parts: dict, name: str) -> list[str]:
    """The part files of one table in a version's parts, in order."""
    return sorted(r for r, p in parts.items() if p.get("table") == name)


def _whole_key(parts: dict, rels: list[str]) -> tuple:
    """What the memo keeps a whole table under: its parts' hashes, in order."""
    return tuple(parts[r].get("sha256") for r in rels)
_WHOLE_LOCK = threading.Lock()  # one token table put back whole at a time


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
                _MEMO.frames, _MEMO.wholes = {}, {}


def _read_json(path: str, store: str) -> dict:
    try:
        meta = json.loads(read_regular(path).decode("utf-8"))
    except NotRegular as exc:
        raise _damaged(store, f"{os.path.basename(path)} is {exc.strerror}") from None
    except FileNotFoundError:
        raise
    except OSError as exc:  # a directory, a link loop, a version that is not a directory
        raise _damaged(store, f"{os.path.basename(path)}: {exc.strerror}") from None
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
        try:  # never blocks: a FIFO or a device in its place is refused
            target = read_regular(ptr, 4096).decode("utf-8", "replace").strip()
        except NotRegular as bad:
            raise _damaged(store, f"the pointer `current` is {bad.strerror}") from None
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
    if got not in READABLE:
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
        self._fds: dict[str, int] = {}
        if os.path.lexists(self.store) and not os.path.isdir(self.store):
            raise StoreNotFound(
                f"the store {self.store} is not a directory: give the store's directory "
                "(--store DIR), or remove it and run `ctxframe index`"
            )
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
        except OSError as exc:  # a FIFO, a device, a directory or a link loop in its place
            self.close()
            raise _damaged(store, f"{exc.filename or 'a part'}: {exc.strerror}") from None
        return True

    def _moved(self, version: str, what: str) -> bool:
        if current_version(self.store) != version:
            return False
        raise _damaged(self.store, what)

    def _open(self, rel: str) -> None:
        """Pin one part: a regular file, opened without blocking (a FIFO is refused)."""
        try:
            self._fds[rel] = open_regular(os.path.join(self.dir, rel))
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            raise OSError(exc.errno, exc.strerror, rel) from None

    def close(self) -> None:
        for fd in getattr(self, "_fds", {}).values():
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
        rels = _rels(self.parts, name)
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
        snapshot checked already (through the same descriptor), or whose decoded frame the
        memo serves (it vouches for that hash, see `_Memo`), is not read again."""
        for rel in self.files_of(name):
            if rel not in self._checked and self._memo_part(rel) is None:
                self._bytes(rel)

    def _remembered(self, name: str, rechunk: bool = True) -> pl.DataFrame | None:
        """The decoded table from the memo (see `remembering`), every part's size checked;
        without `rechunk`, its parts stay separate chunks (a lazy query needs no copy)."""
        rels = self.files_of(name)
        key = _whole_key(self.parts, rels)
        whole = _MEMO.get_whole(key)
        if whole is not None and all(self._size_ok(rel) for rel in rels):
            return whole
        frames = [self._memo_part(rel) for rel in rels]
        if any(f is None for f in frames):
            return None
        if len(frames) == 1:
            return frames[0]
        whole = pl.concat(frames, rechunk=rechunk)
        if rechunk:
            _MEMO.put_whole(key, whole)
        return whole

    def _size_ok(self, rel: str) -> bool:
        return os.fstat(self._fds[rel]).st_size == self.parts[rel].get("size")

    def _memo_part(self, rel: str) -> pl.DataFrame | None:
        info = self.parts[rel]
        if (frame := _MEMO.get(info)) is None:
            return None
        return frame if self._size_ok(rel) else None

    def _decode(self, rel: str) -> pl.DataFrame:
        if (frame := self._memo_part(rel)) is not None:
            return frame
        data = self._bytes(rel)
        try:
            buf = io.BytesIO(data)
            frame = pl.read_ipc(buf) if rel.endswith(".arrow") else pl.read_parquet(buf)
        except Exception as exc:  # any decoder error: the bytes are not a table
            raise _damaged(self.store, f"{rel}: {_short(exc)}") from None
        if rel.startswith("nodes") and frame.width < len(NODES):
            frame = with_metric_columns(frame)
        if self.version is not None:
            _MEMO.put(self.parts[rel], frame)
        return frame

    def read(self, name: str) -> pl.DataFrame:
        """One table, verified and decoded; damage raises StoreCorrupt naming the fix."""
        if name in _tokenparts.BY_NODES and self.local_tokens():
            return self._whole_tokens(name)
        if (frame := self._remembered(name)) is not None:
            return frame
        rels = self.files_of(name)
        if len(rels) == 1:
            frames = [self._decode(rels[0])]
        else:  # parts decode side by side (Polars frees the GIL)
            with ThreadPoolExecutor(max_workers=min(4, len(rels))) as pool:
                frames = list(pool.map(self._decode, rels))
        # one chunk, as a table in one file reads: chunked columns make every later gather slow
        frame = frames[0] if len(frames) == 1 else pl.concat(frames, rechunk=True)
        want = CONTRACT.get(name)
        if name == "edges" and frame.schema != want and self._older_edges(frame):
            frame = conform_edges(frame)
        if want is not None and frame.schema != want:
            raise _damaged(self.store, f"{name} has columns {list(frame.schema)}, not the schema")
        return frame

    def _older_edges(self, frame: pl.DataFrame) -> bool:
        """Edges of a store before `via` and `bound` (schema 6 and older): read with them null."""
        version = self.meta.get("schema_version")
        return isinstance(version, int) and version < 7 and list(frame.schema) == [
            c for c in EDGES.names() if c not in ("via", "bound")
        ]

    def local_tokens(self) -> bool:
        """Whether `tokens` and `vocab` are stored in the nodes' parts, each part with codes
        of its own (ctxframe._store.tokenparts); `read` gives them whole either way."""
        version = self.meta.get("schema_version")
        return (
            isinstance(version, int)
            and version >= _tokenparts.LOCAL_SINCE
            and len(self.files_of("tokens")) > 1
        )

    def _whole_tokens(self, name: str) -> pl.DataFrame:
        """`tokens` or `vocab` put back whole; both are made at once, and the other one is
        held until it is read (the pair's codes agree), never longer."""
        with _WHOLE_LOCK:
            held = self.__dict__.setdefault("_whole_held", {})
            if name not in held:
                parts = [_parts.number(r) for r in self.files_of("tokens")]
                tokens, vocab = self.read_parts("tokens", parts), self.read_parts("vocab", parts)
                got = _tokenparts.whole(tokens, vocab, self.part_rows("nodes"))
                for table, frame in zip(_tokenparts.BY_NODES, got, strict=True):
                    if frame.schema != CONTRACT[table]:
                        raise _damaged(self.store, f"{table} has columns {list(frame.schema)}")
                    held[table] = frame
            return held.pop(name)

    def part_rows(self, name: str) -> dict[int, int]:
        """Each part's row count (recorded when written; else read from the part)."""
        out = {}
        for rel in self.files_of(name):
            rows = self.parts[rel].get("rows")
            out[_parts.number(rel)] = rows if isinstance(rows, int) else self._decode(rel).height
        return out

    def bounds(self) -> list[str] | None:
        """The part key of this version's datasets (ctxframe._store.parts); None for a store
        written before tables were stored in parts."""
        got = self.meta.get("part_bounds")
        return list(got) if isinstance(got, list) else None

    def read_from(self, name: str, old: Snapshot, frame: pl.DataFrame) -> pl.DataFrame:
        """One table sorted by its part key (ctxframe._store.parts.RANGED), its parts that hold
        the same bytes as in `old` taken from `frame` (`old`'s table, decoded) instead of read:
        a graph moving on by one edit reads the parts the edit wrote. Kept as chunks."""
        key, bounds = _parts.RANGED.get(name), self.bounds()
        if key is None or not bounds or old.bounds() != bounds or not old.has(name):
            return self.read(name)
        if frame[key].null_count():
            return self.read(name)
        cuts = frame[key].search_sorted(pl.Series(bounds, dtype=pl.String), side="left")
        at = [0, *cuts.to_list(), frame.height]
        before = dict(old.info(name))
        pieces = []
        for rel in self.files_of(name):
            info, was = self.parts[rel], before.get(rel, {})
            lo, hi = at[_parts.number(rel)], at[_parts.number(rel) + 1]
            same = info.get("sha256") is not None and info.get("sha256") == was.get("sha256")
            if same and info.get("rows") == hi - lo and self._size_ok(rel):
                pieces.append(frame.slice(lo, hi - lo))
            else:
                pieces.append(self._decode(rel))
        return pl.concat(pieces, rechunk=False) if len(pieces) > 1 else pieces[0]

    def remember(self) -> None:
        """Decode every part into the memo (see `remembering`): a watcher whose store needed no
        change reads it ahead of the first save, whose re-index reads what it touches."""
        if _MEMO.users and self.version is not None:
            for rel in self.parts:
                self._decode(rel)

    def read_parts(self, name: str, parts: list[int]) -> dict[int, pl.DataFrame]:
        """These parts of a table stored in parts, verified and decoded (a part holding no
        rows is absent)."""
        want = {_parts.rel(name, i): i for i in parts}
        return {want[rel]: self._decode(rel) for rel in self.files_of(name) if rel in want}

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
        if name in _tokenparts.BY_NODES and self.local_tokens():
            return self.read(name).lazy()
        if (frame := self._remembered(name, rechunk=False)) is not None:
            return frame.lazy()
        if _MEMO.users and verify and self.version is not None:
            return self.read(name).lazy()  # read once, remembered for the next run
        rels = self.files_of(name)
        if verify:
            self.verify(name)
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
    file = os.path.join(path, f"{name}.arrow" if name in IPC else f"{name}.parquet")
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


def with_metric_columns(nodes: pl.DataFrame) -> pl.DataFrame:
    """Nodes written before the function metrics (schema 6 and older), read as they are:
    the metric columns null. The next `index` rebuilds such a store."""
    missing = [c for c in NODES.names() if c not in nodes.columns]
    return nodes.with_columns(pl.lit(None, NODES[c]).alias(c) for c in missing).select(
        NODES.names()
    )


def has_metrics(snap: Snapshot) -> bool:
    """Whether the version's nodes hold the function metrics (schema 7 and later)."""
    try:
        return set(NODES.names()) <= set(snap.scan("nodes", verify=False).collect_schema())
    except Exception:
        return False


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

    def __init__(self, path: str, base: Snapshot | None = None,
                 bounds: list[str] | None = None):  # fmt: skip
        self.path, self.base = path, base
        self.tmp = os.path.join(path, f".staging-{os.getpid()}")
        self.parts: dict[str, dict] = {}
        self._queued: list | None = None  # writes queued by `together`
        self._wholes: dict[str, pl.DataFrame] = {}  # tables `put` whole: remembered at commit
        # the part key (ctxframe._store.parts): the one given, else the base's
        if bounds is None and base is not None:
            bounds = base.bounds()
        self.bounds = list(bounds or [])
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

    def _record(self, name: str, rel: str | None = None, rows: int | None = None) -> None:
        rel = rel or part_name(name)
        file = os.path.join(self.tmp, rel)
        extra = {"part": _parts.number(rel)} if name in _parts.DATASETS else {}
        if rows is None:  # a streamed part: its footer says
            scan = pl.scan_ipc(file) if file.endswith(".arrow") else pl.scan_parquet(file)
            rows = scan.select(pl.len()).collect().item()
        self.parts[rel] = {"table": name, **extra, "rows": rows, **_digest(file)}

    def _write(self, name: str, frame: pl.DataFrame, rel: str | None = None) -> None:
        rel = rel or part_name(name)
        file = os.path.join(self.tmp, rel)
        os.makedirs(os.path.dirname(file), exist_ok=True)
        _write_table(frame, file)
        self._record(name, rel, frame.height)
        _MEMO.put(self.parts[rel], frame)

    def put(self, tables: dict[str, pl.DataFrame],
            old: dict[str, pl.DataFrame] | None = None,
            within: dict[str, list[str]] | None = None) -> None:  # fmt: skip
        """Write these tables into the new version, each in its parts (in parallel: Polars
        releases the GIL). With `old` (a table as the base version stores it), a part whose
        rows are the same is carried over instead of written again. `within` (a table sorted
        by node id, some paths): its rows differ from `old`'s only among those keyed by these
        paths, the rest in place: a part holding none of them is carried over unread."""
        if self.bounds and any(n in _tokenparts.BY_NODES for n in tables):
            raise ValueError("tokens and vocab are written by put_tokens (in the nodes' parts)")
        if _MEMO.users:  # held to commit only for the memo: a one-shot index drops each table
            self._wholes.update(tables)
        jobs = []
        for name, frame in tables.items():
            parts = _parts.split(name, frame, self.bounds)
            if old is not None and name in old:
                before = _parts.split(name, old[name], self.bounds)
                parts = self._changed(name, parts, before, (within or {}).get(name))
            jobs += [(name, f, _parts.rel(name, i) if name in _parts.DATASETS else None)
                     for i, f in parts.items()]  # fmt: skip
        self._write_all(jobs)

    def scan(self, name: str) -> pl.LazyFrame:
        """A table as this version holds it so far, read back from its part files in order
        (so a large caller need not keep what it has written)."""
        rels = _rels(self.parts, name)
        return pl.scan_parquet([os.path.join(self.tmp, r) for r in rels])

    def put_tokens(self, tokens: pl.DataFrame, vocab: pl.DataFrame, ids: pl.Series) -> None:
        """Write the whole token table (codes into the sorted node `ids` and `vocab`) in the
        nodes' parts, each with codes of its own (ctxframe._store.tokenparts), a part at a
        time."""
        with self._guard(), ThreadPoolExecutor(max_workers=2) as pool:
            pending: list = []
            for i, t, v in _tokenparts.split(tokens, vocab, ids, self.bounds):
                while len(pending) >= 4:  # a few parts in memory at once, written meanwhile
                    pending.pop(0).result()
                for name, frame in (("tokens", t), ("vocab", v)):
                    pending.append(pool.submit(self._write, name, frame, _parts.rel(name, i)))
            for f in pending:
                f.result()

    @contextmanager
    def together(self):
        """Inside: `put` and `put_parts` queue their writes, run at the end in one pool (a
        few small parts are written side by side instead of one call after another)."""
        self._queued = []
        try:
            yield self
            jobs = self._queued
        finally:
            self._queued = None
        self._write_all(jobs)

    def _write_all(self, jobs: list[tuple[str, pl.DataFrame, str | None]]) -> None:
        """Write (table, frame, part file) jobs, four at a time (Polars releases the GIL)."""
        if self._queued is not None:
            self._queued += jobs
            return
        with self._guard(), ThreadPoolExecutor(max_workers=max(1, min(4, len(jobs)))) as pool:
            for f in [pool.submit(self._write, *job) for job in jobs]:
                f.result()

    def _changed(self, name: str, parts: dict, before: dict,
                 paths: list[str] | None = None) -> dict[int, pl.DataFrame]:  # fmt: skip
        """The parts to write: the others are the base's own, linked (see `put`: `paths`)."""
        base = self.base
        stored = {} if base is None or base.bounds() != self.bounds else dict(base.info(name))
        touched = None
        if paths is not None and self.bounds:
            ends = pl.Series([k for p in paths for k in (p, p + ":;")], dtype=pl.String)
            at = _parts.part_of(self.bounds, ends).to_list()
            touched = {i for lo, hi in zip(at[::2], at[1::2], strict=True)
                       for i in range(lo, hi + 1)}  # fmt: skip
        out = {}
        for i, frame in parts.items():
            rel = _parts.rel(name, i)
            same = touched is not None and i not in touched and i in before
            same = same and frame.height == before[i].height
            if rel in stored and i in before and (same or frame.equals(before[i])):
                self._link(name, rel, stored[rel])
            else:
                out[i] = frame
        return out

    def sink(self, name: str, query: pl.LazyFrame) -> None:
        """Stream a query's result into the new version without holding it in memory."""
        with self._guard():
            file = os.path.join(self.tmp, part_name(name))
            os.makedirs(os.path.dirname(file), exist_ok=True)
            if file.endswith(".arrow"):
                query.sink_ipc(file, compression="uncompressed")
            else:
                query.sink_parquet(file, compression="snappy", statistics=False)
            self._record(name)

    def sink_parts(self, name: str, query: pl.LazyFrame, files: pl.DataFrame) -> None:
        """Stream a table whose rows are placed by path (ctxframe._store.parts.PLACED) into
        its parts without holding it in memory."""
        if not self.bounds:
            self.sink(name, query)
            return
        places = _parts.mapping(self.bounds, files).lazy()
        key = _parts.PLACED[name]
        folder = os.path.join(self.tmp, name)
        with self._guard():
            os.makedirs(folder)
            placed = query.join(
                places, left_on=key, right_on="path", how="left", maintain_order="left"
            ).with_columns(pl.col("part").fill_null(0))
            placed.sink_parquet(
                pl.PartitionBy(
                    folder,
                    key="part",
                    include_key=False,
                    file_path_provider=lambda a: os.path.join(
                        self.tmp, _parts.rel(name, int(a.partition_keys[0, 0]))
                    ),
                ),
                compression="snappy",
                statistics=False,
                # each open part buffers a row group: small ones keep tens of parts cheap
                row_group_size=8192,
            )
            for file in sorted(os.listdir(folder)):
                self._record(name, f"{name}/{file}")
            if _parts.rel(name) not in self.parts:  # the first part exists, maybe empty
                self._write(name, query.clear().collect(), _parts.rel(name))

    def put_parts(self, name: str, parts: dict[int, pl.DataFrame]) -> None:
        """Write these parts of a table (an empty one is left out, but for part 0) and carry
        every other part of the base version over (hard-linked)."""
        self._write_all(
            [(name, f, _parts.rel(name, i)) for i, f in parts.items() if f.height or not i]
        )
        with self._guard():
            if self.base is not None:
                for rel, info in self.base.info(name):
                    if info.get("part") not in parts:
                        self._link(name, rel, info)

    def _link(self, name: str, rel: str, info: dict) -> None:
        base = self.base
        # a part this process wrote or read checked (the memo) needs only its size checked
        if rel not in base._checked and base._memo_part(rel) is None:
            base._bytes(rel)
        dst = os.path.join(self.tmp, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        try:
            os.link(os.path.join(base.dir, rel), dst)
        except OSError:
            with open(dst, "wb") as fh:
                fh.write(base._bytes(rel))
        self.parts[rel] = dict(info)

    def keep(self, names: list[str] | tuple) -> None:
        """Carry these tables over unchanged from the base version (hard-linked when
        possible), each part checked against its size and hash first; a table in an older
        layout is written again in this one."""
        base = self.base
        if base is None:
            raise StoreWriteError("nothing to keep: no previous version")
        with self._guard():
            tokens = [n for n in names if n in _tokenparts.BY_NODES]
            if tokens:
                if sorted(tokens) != sorted(_tokenparts.BY_NODES):
                    raise ValueError("tokens and vocab are kept together")
                if not self._same_token_layout():  # another layout: written in this one
                    self.put_tokens(base.read("tokens"), base.read("vocab"),
                                    base.read("nodes")["id"])  # fmt: skip
                    names = [n for n in names if n not in tokens]
            for name in names:
                rels = base.info(name)
                if name in _tokenparts.BY_NODES:
                    same = True
                elif name in _parts.RANGED or name in _parts.PLACED:
                    same = base.bounds() == self.bounds
                else:
                    same = [r for r, _ in rels] == [part_name(name)]
                if base.version is None or not same:
                    self.put({name: base.read(name)})  # another layout: written in this one
                    continue
                for rel, info in rels:
                    self._link(name, rel, info)

    def _same_token_layout(self) -> bool:
        """Whether the base's token parts are laid out as this version's would be."""
        base = self.base
        if base.version is None or base.bounds() != self.bounds:
            return False
        one = base.files_of("tokens") == [_parts.rel("tokens")]
        return not self.bounds or base.local_tokens() or (one and len(base.files_of("nodes")) == 1)

    def commit(self, meta: dict) -> str:
        """Write meta.json, rename the staged directory to its version and swap the pointer
        to it; returns the version name."""
        with self._guard():
            version = f"v-{time.time_ns():020d}-{os.getpid()}"
            full = {**meta, "schema_version": SCHEMA_VERSION, "version": version,
                    "parts": self.parts, "part_bounds": self.bounds}  # fmt: skip
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
            for name, frame in self._wholes.items():
                _MEMO.put_whole(_whole_key(self.parts, _rels(self.parts, name)), frame)
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
    """`STORE/<table>/` for each contract table, where dashboards read them: a symlink to
    `current/<table>`, so it follows the pointer's atomic swap (a copy of the current
    version's parts where the file system has no symlinks). ctxframe itself reads versions."""
    for name in (*CONTRACT, *OPTIONAL):
        link = os.path.join(store, name)
        if name in OPTIONAL and not os.path.isdir(os.path.join(version_dir, name)):
            if os.path.islink(link):  # a version without it: no mirror
                os.unlink(link)
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(link + ".parquet")  # the single-file layout's mirror
        if os.path.islink(link):
            continue
        tmp = os.path.join(store, f".{name}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        try:
            os.symlink(os.path.join(CURRENT, name), tmp)
        except OSError:  # no symlinks: a copy, replaced part by part
            shutil.rmtree(link, ignore_errors=True)
            shutil.copytree(os.path.join(version_dir, name), link, copy_function=_link_or_copy)
            continue
        if os.path.isdir(link):
            shutil.rmtree(link, ignore_errors=True)
        os.replace(tmp, link)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _legacy_cleanup(store: str) -> None:
    """After the first versioned commit: the legacy layout's internal tables and cache go
    (the contract tables are replaced by the current version's, see `_mirror`)."""
    for name in set(TABLES) - set(CONTRACT):
        for ext in (".parquet", ".arrow"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(store, name + ext))
    shutil.rmtree(os.path.join(store, "cache"), ignore_errors=True)

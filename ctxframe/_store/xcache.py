"""The extraction cache: what extraction made of a file's bytes, kept in the user cache
directory and shared by every index on the machine, so indexing another checkout, branch or
release of a project re-parses only the files whose bytes differ.

An entry is keyed by the file's repo-relative path (ids and module names derive from it), the
BLAKE2b hash of its bytes, the hash of its language's `.scm` query (after `; inherits:`), and a
fingerprint of the code that makes the rows (the ctxframe, Polars and tree-sitter versions and
the source of `_core`, `_ingest`, the body tokenizer and the indexer). No configuration setting
changes what one file yields (`exclude` only picks files); user language packs do, so their
files never use the cache.

What is stored is what the indexer keeps of a file after redaction (`_ingest.redact`) and
after its bodies became token counts (`_rank.fields.body_counts`): never raw text, so never a
secret's value. A run's new entries go to one *pack*: a directory of six Parquet files
(files, defs, refs, bnodes, bedges, content: rows of many files each; zstd Parquet is a
seventh of lz4 Arrow IPC on Django, where ids and paths repeat, and reads back faster) and a
`manifest.json` holding each file's size and BLAKE2b hash. A pack is written under a
temporary name and renamed into place, so concurrent indexers never see half of one; a pack
whose bytes do not match its manifest is deleted and its files re-extracted. Packs are
evicted least recently used first (a pack is used when a run takes an entry from it) once
the total passes the cap.

`CTXFRAME_CACHE_DIR` moves the cache (default `$XDG_CACHE_HOME/ctxframe/extract`, else
`~/.cache/ctxframe/extract`); `CTXFRAME_CACHE_MAX_MB` sets the cap (default 2048);
`CTXFRAME_NO_CACHE=1` or `ctxframe index --no-cache` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass
from functools import cache

import polars as pl

from ctxframe._core.languages import query_source
from ctxframe._core.safeio import open_regular, read_regular
from ctxframe._ingest.extract import MAX_FILE_BYTES, Batch, FileResult, file_language
from ctxframe._ingest.metrics import query_text as metrics_query

LAYOUT = "v1"  # the pack format; another one lives beside it (old packs age out)
DEFAULT_MAX_MB = 2048
MIN_JOBS = 64  # fewer files to extract (an edit, a watcher's update): the cache is not used
_TABLES = ("files", "defs", "refs", "bnodes", "bedges", "content")
_FILES = {
    "key": pl.String, "path": pl.String, "language": pl.String, "lines": pl.Int32,
    "hash": pl.String, "parse_errors": pl.Int32,
}  # fmt: skip
# Beyond `_core` and `_ingest`: the modules whose code shapes an entry.
_ALSO = (("_rank", "tokens.py"), ("_rank", "fields.py"), ("_store", "build.py"),
         ("_store", "xcache.py"), ("_core", "callbacks.toml"))  # fmt: skip
# A large lookup's scratch parts: this many files each, at most so many parts per pack.
_PART_FILES, _MAX_PARTS = 1024, 64
_STALE_TMP_S = 6 * 3600  # a temporary pack this old belongs to a run that died


def cache_dir() -> str:
    """Where the extraction cache lives (`CTXFRAME_CACHE_DIR`, else the user cache dir)."""
    env = os.environ.get("CTXFRAME_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ctxframe", "extract")


def max_bytes() -> int:
    """The size cap (`CTXFRAME_CACHE_MAX_MB`, default DEFAULT_MAX_MB)."""
    try:
        mb = float(os.environ.get("CTXFRAME_CACHE_MAX_MB", DEFAULT_MAX_MB))
    except ValueError:
        mb = DEFAULT_MAX_MB
    return int(max(mb, 0) * 1024 * 1024)


def enabled() -> bool:
    """False when `CTXFRAME_NO_CACHE` is set to anything but 0/empty."""
    return os.environ.get("CTXFRAME_NO_CACHE", "") in ("", "0")


def _packs_dir(root: str | None = None) -> str:
    return os.path.join(root or cache_dir(), LAYOUT)


@cache
def fingerprint() -> str:
    """The code that makes an entry: versions, and the source of every module it runs."""
    from importlib.metadata import PackageNotFoundError, version

    from ctxframe._core.version import __version__

    h = hashlib.blake2b(digest_size=16)
    for dist in ("polars", "tree-sitter", "tree-sitter-language-pack", "pyarrow"):
        try:
            h.update(f"{dist}={version(dist)};".encode())
        except PackageNotFoundError:
            h.update(f"{dist}=?;".encode())
    h.update(__version__.encode())
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = [
        os.path.join(d, f)
        for sub in ("_core", "_ingest")
        for d, _, names in os.walk(os.path.join(pkg, sub))
        for f in names
        if f.endswith(".py")
    ]
    files += [os.path.join(pkg, *p) for p in _ALSO]
    for path in sorted(files):
        h.update(os.path.relpath(path, pkg).encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(hashlib.blake2b(fh.read(), digest_size=16).digest())
    return h.hexdigest()


@cache
def _query_hash(query: str | None) -> str:
    """The language's queries: its own and its function metrics' (ctxframe/queries/metrics)."""
    if not query:  # documents: no query
        return "-"
    text = query_source(query) + "\0" + (metrics_query(query) or "")
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def entry_key(path: str, data: bytes, digest: str) -> str:
    """The key of one file's entry (see the module docstring)."""
    lang = file_language(path, data)
    parts = (fingerprint(), lang.name if lang else "-", _query_hash(lang.query if lang else None),
             path, digest)  # fmt: skip
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=16).hexdigest()


@dataclass
class _Want:
    key: str
    digest: str
    size: int
    mtime_ns: int


def _wanted(root: str, path: str, known: str | None) -> _Want | None:
    """The entry a job would be (None: not one for the cache: too large, unreadable, binary,
    or the same bytes as stored, which extraction reports as unchanged)."""
    try:
        fd = open_regular(os.path.join(root, path))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_size > MAX_FILE_BYTES:
            return None
        data = os.pread(fd, MAX_FILE_BYTES + 1, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    if data.find(b"\0", 0, 8192) != -1:
        return None  # binary: extraction says so at once, from the bytes it reads
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if digest == known:
        return None
    return _Want(entry_key(path, data, digest), digest, st.st_size, st.st_mtime_ns)


class Session:
    """One index run's use of the cache: `lookup` before extraction takes the entries there
    are, `add` collects the new ones batch by batch, `close` puts them in place as one pack."""

    def __init__(self, directory: str | None = None, cap: int | None = None):
        self.dir = _packs_dir(directory)
        self.cap = max_bytes() if cap is None else cap
        self.want: dict[str, _Want] = {}  # path -> its entry's key, for the files to extract
        self.hits = 0
        self._tmp: str | None = None
        self._writers: dict = {}
        self._rows = 0
        self._broken = False  # a write failed (disk full, read-only): add nothing more

    # ------------------------------------------------------------------ lookup

    def lookup(
        self, root: str, jobs: list[tuple[str, str | None]], spill: str | None = None
    ) -> tuple[list[Batch], list[tuple[str, str | None]]]:
        """The jobs' entries found in the cache as framed batches (none when there is none),
        and the jobs left to extract. A job whose bytes equal its stored hash is left to
        extraction (it says so). With a scratch directory `spill`, references and body counts
        are streamed there in parts of whole files, one batch scanning each part: a large
        tree's would not fit in memory at once, and resolution and the token table read
        them a part at a time."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=4) as pool:  # reads and hashes free the GIL
            found = pool.map(lambda job: _wanted(root, *job), jobs, chunksize=64)
            want = {job[0]: w for job, w in zip(jobs, found, strict=True) if w is not None}
        self.want = want
        if not want or not os.path.isdir(self.dir):
            return [], jobs
        by_key = {w.key: p for p, w in want.items()}
        frames: dict[str, list] = {t: [] for t in _TABLES}
        taken: set[str] = set()
        for n, pack in enumerate(self._list()):
            sink = os.path.join(spill, f"cached-{n:03d}") if spill is not None else None
            got = self._take(os.path.join(self.dir, pack), by_key, taken, frames, sink)
            if got:
                taken |= got
                with suppress(OSError):
                    os.utime(os.path.join(self.dir, pack))  # used: last in line for eviction
            if len(taken) == len(by_key):
                break
        if not taken:
            return [], jobs
        batches = self._batches(frames)
        for path in taken:
            del want[path]
        self.hits = len(taken)
        return batches, [j for j in jobs if j[0] not in taken]

    def _list(self) -> list[str]:
        """The packs' names, newest first."""
        try:
            names = os.listdir(self.dir)
        except OSError:
            return []
        return sorted((n for n in names if not n.startswith(".")), reverse=True)

    def _take(
        self, where: str, by_key: dict, taken: set, frames: dict, sink: str | None = None
    ) -> set[str]:
        """The paths whose entries the pack at `where` holds (and no newer pack did), their
        rows appended to `frames` (with `sink`, references and body counts as scans of parts
        written at `sink`-TABLE-NNNN.parquet); a pack that fails its checks is deleted and
        yields none."""
        try:
            manifest = _manifest(where)
            if manifest.get("fingerprint") != fingerprint():
                return set()
            files = _read(where, "files", manifest)
            keys = pl.DataFrame(
                {"key": list(by_key), "want": list(by_key.values())},
                schema={"key": pl.String, "want": pl.String},
            )
            hit = files.join(keys, on="key", maintain_order="left").filter(
                (pl.col("path") == pl.col("want"))
                & ~pl.col("path").is_in(pl.Series(sorted(taken), dtype=pl.String).implode())
            )
            if hit.is_empty():
                return set()
            paths = hit["path"].implode()
            got = {"files": [hit.drop("want")]}
            for name in ("defs", "bnodes", "bedges"):
                got[name] = [_read(where, name, manifest, pl.col("path").is_in(paths))]
            # a body's rows by its node: a file's own, or a definition's (ids are unique)
            owner = pl.concat(
                [
                    got["defs"][0].select(node="id", path="path"),
                    hit.select(node="path", path="path"),
                ]
            )
            if sink is None:
                got["refs"] = [_read(where, "refs", manifest, pl.col("path").is_in(paths))]
                keep = pl.col("node_id").is_in(owner["node"].implode())
                got["content"] = [_read(where, "content", manifest, keep)]
            else:  # parts of whole files, in the pack's order
                per = max(_PART_FILES, -(-hit.height // _MAX_PARTS))
                part = hit.select("path", _part=pl.int_range(pl.len(), dtype=pl.UInt32) // per)
                got["refs"] = _read_parts(where, "refs", manifest, part, f"{sink}-refs")
                part = owner.join(part, on="path").select(node_id="node", _part="_part")
                got["content"] = _read_parts(where, "content", manifest, part, f"{sink}-content")
        except Exception:  # any damage (bytes, manifest, decoding): drop it, extract again
            _remove(where)
            return set()
        for name, parts in got.items():
            frames[name] += parts
        return set(hit["path"].to_list())

    def _batches(self, frames: dict) -> list[Batch]:
        """The entries taken, as the framed batches extraction would have made: one, or with
        references and body counts in scratch parts, one per part (the first holding every
        other table)."""
        files = pl.concat(frames["files"])
        want = self.want
        results = [
            FileResult(
                path=path,
                language=lang,
                size=want[path].size,
                mtime_ns=want[path].mtime_ns,
                lines=lines,
                hash=h,
                parse_errors=errors,
            )
            for path, lang, lines, h, errors in files.select(
                "path", "language", "lines", "hash", "parse_errors"
            ).iter_rows()
        ]
        defs, bnodes, bedges = (pl.concat(frames[t]) for t in ("defs", "bnodes", "bedges"))
        refs, content = frames["refs"], frames["content"]
        if isinstance(refs[0], pl.DataFrame):  # in memory: one batch
            refs, content = [pl.concat(refs)], [pl.concat(content)]
        out = []
        for k in range(max(len(refs), len(content))):
            first = not k
            out.append(
                Batch(
                    results if first else [],
                    defs if first else defs.clear(),
                    refs[k] if k < len(refs) else refs[0].clear(),
                    bnodes if first else bnodes.clear(),
                    bedges if first else bedges.clear(),
                    content[k] if k < len(content) else content[0].clear(),
                )
            )
        return out

    # ------------------------------------------------------------------ write

    def add(self, batch: Batch) -> None:
        """Keep the entries of a framed batch's files that were looked up and read the same
        bytes (a file changed in between is not kept); rows are written as they come."""
        keep = [
            (w.key, f.path, f.language, f.lines, f.hash, f.parse_errors)
            for f in batch.files
            if f.skip_reason is None
            and (w := self.want.get(f.path)) is not None
            and f.hash == w.digest
        ]
        if not keep or self._broken:
            return
        files = pl.DataFrame(keep, schema=_FILES, orient="row")
        tables = {
            "files": files,
            "defs": batch.defs,
            "refs": batch.refs,
            "bnodes": batch.boundary_nodes,
            "bedges": batch.boundary_edges,
            "content": batch.content.with_columns(pl.col("node_id", "token").cast(pl.String)),
        }
        if len(keep) < sum(f.skip_reason is None for f in batch.files):  # rows of others
            paths = files["path"].implode()
            content = tables["content"]
            tables = {k: v.filter(pl.col("path").is_in(paths)) for k, v in tables.items()
                      if k != "content"}  # fmt: skip
            tables["content"] = content.filter(
                pl.col("node_id").is_in(tables["defs"]["id"].append(files["path"]).implode())
            )
        try:
            self._write(tables)
        except Exception:  # a full or read-only cache disk (or any fault) never fails the index
            self.abandon()
            self._broken = True

    def _write(self, tables: dict[str, pl.DataFrame]) -> None:
        import pyarrow.parquet as pq

        if self._tmp is None:
            os.makedirs(self.dir, exist_ok=True)
            self._tmp = os.path.join(self.dir, f".tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
            os.makedirs(self._tmp)
        for name, frame in tables.items():
            # plain (not view) strings: a filtered view column would carry its whole buffers
            arrow = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
            if name not in self._writers:
                where = os.path.join(self._tmp, f"{name}.parquet")
                writer = pq.ParquetWriter(where, arrow.schema, compression="zstd")
                self._writers[name] = (writer, arrow.schema)
            writer, schema = self._writers[name]
            writer.write_table(arrow.cast(schema))
        self._rows += tables["files"].height

    def close(self) -> None:
        """Put the run's pack in place (manifest last, then one rename), then evict."""
        if self._tmp is None:
            return
        tmp, self._tmp = self._tmp, None
        try:
            for writer, _ in self._writers.values():
                writer.close()
            self._writers = {}
            parts = {name: _file_digest(os.path.join(tmp, f"{name}.parquet")) for name in _TABLES}
            manifest = {"fingerprint": fingerprint(), "files": self._rows, "parts": parts}
            with open(os.path.join(tmp, "manifest.json"), "w", encoding="utf-8") as fh:
                json.dump(manifest, fh)
            name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
            os.rename(tmp, os.path.join(self.dir, name))
        except Exception:  # as in `add`: the index goes on without this pack
            _remove(tmp)
            return
        evict(os.path.dirname(self.dir), self.cap)

    def abandon(self) -> None:
        """Drop the run's unfinished pack (the run failed or was interrupted)."""
        for writer, _ in self._writers.values():
            with suppress(Exception):
                writer.close()
        self._writers = {}
        if self._tmp is not None:
            _remove(self._tmp)
            self._tmp = None


def _file_digest(path: str) -> dict:
    """A file's manifest entry: its size and BLAKE2b hash, read a megabyte at a time."""
    h, size = hashlib.blake2b(digest_size=16), 0
    fd = open_regular(path)  # a FIFO or a device in a pack is refused, never waited on
    try:
        while chunk := os.pread(fd, 1 << 20, size):
            h.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return {"bytes": size, "blake2b": h.hexdigest()}


def _manifest(where: str) -> dict:
    manifest = json.loads(read_regular(os.path.join(where, "manifest.json"), 1 << 24))
    if not isinstance(manifest, dict) or set(manifest.get("parts", {})) != set(_TABLES):
        raise ValueError("not a pack manifest")
    return manifest


def _checked(where: str, name: str, manifest: dict) -> pl.LazyFrame:
    """A scan of one table of a pack, its bytes checked against the manifest first. A pack
    is never rewritten in place (only renamed away whole), so the checked file is the one
    read."""
    file = os.path.join(where, f"{name}.parquet")
    if _file_digest(file) != manifest["parts"][name]:
        raise ValueError(f"{name}.parquet does not match the manifest")
    return pl.scan_parquet(file)


def _read(where: str, name: str, manifest: dict, keep: pl.Expr | None = None) -> pl.DataFrame:
    """One table of a pack (the rows `keep` selects, decoded only), checked first."""
    rows = _checked(where, name, manifest)
    return (rows if keep is None else rows.filter(keep)).collect()


def _read_parts(
    where: str, name: str, manifest: dict, part: pl.DataFrame, prefix: str
) -> list[pl.LazyFrame]:
    """The rows of one table of a pack whose key (`part`'s first column) is in `part`, streamed
    to one scratch file per `_part` (`prefix`-NNNN.parquet, at least one) and scanned. Its
    bytes are checked against the manifest first."""
    rows = _checked(where, name, manifest)
    rows.join(part.lazy(), on=part.columns[0], maintain_order="left").sink_parquet(
        pl.PartitionBy(
            os.path.dirname(prefix),
            key="_part",
            include_key=False,
            file_path_provider=lambda a: f"{prefix}-{int(a.partition_keys[0, 0]):04d}.parquet",
        ),
        compression="uncompressed",
        statistics=False,
        row_group_size=8192,  # each open part buffers a row group
    )
    folder, stem = os.path.split(prefix)
    got = sorted(f for f in os.listdir(folder) if f.startswith(f"{stem}-"))
    if not got:
        rows.clear().collect().write_parquet(f"{prefix}-0000.parquet")
        got = [f"{stem}-0000.parquet"]
    return [pl.scan_parquet(os.path.join(folder, f)) for f in got]


def _remove(where: str) -> None:
    """Delete a pack: renamed aside first (atomic), so a reader never meets half of one."""
    trash = os.path.join(os.path.dirname(where), f".trash-{uuid.uuid4().hex[:12]}")
    try:
        os.rename(where, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)


# ---------------------------------------------------------------------- manage


@dataclass
class _Pack:
    name: str
    path: str
    bytes: int
    files: int
    used: float


def _scan(directory: str | None = None) -> list[_Pack]:
    """Every pack (any fingerprint), least recently used first."""
    where = _packs_dir(directory)
    out = []
    try:
        names = os.listdir(where)
    except OSError:
        return []
    now = time.time()
    for name in names:
        path = os.path.join(where, name)
        if name.startswith("."):  # a dead run's temporary pack, or a deletion cut short
            with suppress(OSError):
                if name.startswith(".trash-") or now - os.stat(path).st_mtime > _STALE_TMP_S:
                    shutil.rmtree(path, ignore_errors=True)
            continue
        try:
            manifest = _manifest(path)
            size = sum(int(p["bytes"]) for p in manifest["parts"].values())
            out.append(_Pack(name, path, size, int(manifest.get("files", 0)),
                             os.stat(path).st_mtime))  # fmt: skip
        except (OSError, ValueError, TypeError, KeyError):
            _remove(path)  # no readable manifest: never a usable pack
    return sorted(out, key=lambda p: (p.used, p.name))


def _lock(directory: str | None = None):
    from filelock import FileLock

    root = directory or cache_dir()
    os.makedirs(root, exist_ok=True)
    return FileLock(os.path.join(root, ".lock"))


def evict(directory: str | None = None, cap: int | None = None) -> int:
    """Delete the least recently used packs until the cache fits the cap; the bytes freed.
    Skipped (0) while another process holds the cache lock for a moment."""
    from filelock import Timeout

    cap = max_bytes() if cap is None else cap
    try:
        with _lock(directory).acquire(timeout=5):
            packs = _scan(directory)
            total, freed = sum(p.bytes for p in packs), 0
            for pack in packs:
                if total - freed <= cap:
                    break
                _remove(pack.path)
                freed += pack.bytes
            return freed
    except (Timeout, OSError):
        return 0


def info(directory: str | None = None) -> dict:
    """Where the cache is, how large, how many packs and file entries (JSON-ready)."""
    packs = _scan(directory)
    return {
        "verb": "cache-info",
        "status": "ok",
        "path": directory or cache_dir(),
        "enabled": enabled(),
        "packs": len(packs),
        "entries": sum(p.files for p in packs),
        "bytes": sum(p.bytes for p in packs),
        "max_bytes": max_bytes(),
    }


def clear(directory: str | None = None) -> dict:
    """Delete every pack; what was removed (JSON-ready)."""
    with _lock(directory):
        packs = _scan(directory)
        for pack in packs:
            _remove(pack.path)
    return {
        "verb": "cache-clear",
        "status": "ok",
        "path": directory or cache_dir(),
        "packs": len(packs),
        "entries": sum(p.files for p in packs),
        "bytes": sum(p.bytes for p in packs),
    }

"""Index a repository: walk, extract changed files in a process pool, resolve, write the store.

Incremental by construction: unchanged files (same size and mtime, else same hash) keep their
stored definitions and raw references; resolution then runs over all of them, so the result
equals a full rebuild.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import os
import shutil
import sys
import time
from collections.abc import Collection
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime

import polars as pl

from ctxframe._core.config import load_config
from ctxframe._core.errors import NothingToIndex, RepoNotFound, StoreCorrupt, StoreNotFound
from ctxframe._core.frames import sort_ranges, spread
from ctxframe._core.languages import LANGUAGES
from ctxframe._core.schema import EDGES, FILES, NODES, PRODUCER, SCHEMA_VERSION, conform_edges
from ctxframe._core.trace import mark as _trace
from ctxframe._ingest import testcov as _testcov
from ctxframe._ingest.adapters import AdapterRun, Started
from ctxframe._ingest.adapters import discover as discover_adapters
from ctxframe._ingest.boundaries import code as boundary_code
from ctxframe._ingest.boundaries.code import BOUNDARY_EDGE_COLS, BOUNDARY_NODE_COLS
from ctxframe._ingest.content import CONTENT_COLUMNS
from ctxframe._ingest.extract import (
    _NULL,
    _SEP,
    _UNCHANGED,
    DEF_FRAME_COLUMNS,
    Batch,
    extract_batch,
)
from ctxframe._ingest.metrics import METRIC_COLUMNS
from ctxframe._ingest.redact import REDACTION_VERSION, forget_lines, redact_frame, redact_rows
from ctxframe._ingest.walk import BUILTIN_DIRS, walk, walk_paths
from ctxframe._rank.fields import TokenTable, body_counts, token_table
from ctxframe._render.html import render
from ctxframe._resolve import covers as _covers
from ctxframe._resolve.boundaries import merge_boundaries
from ctxframe._resolve.resolve import Previous, resolve
from ctxframe._store import coverage as _coverage
from ctxframe._store import delta as _delta
from ctxframe._store import history as _history
from ctxframe._store import parts as _parts
from ctxframe._store import tables as _store
from ctxframe._store import tokenparts as _tokenparts
from ctxframe._store import xcache as _xcache
from ctxframe._store.githead import git_head

_POOL_MIN_FILES = 150
_CHUNK = 32
_MAX_CHUNK = 256
_SPILL_FILES = 10_000  # more files than this: spill each batch's frames to scratch files
_REF_SCHEMA = {
    "src": pl.String, "path": pl.String, "language": pl.String, "kind": pl.String,
    "name": pl.String, "receiver": pl.String, "scope": pl.String, "line": pl.Int32,
    "module": pl.String, "alias": pl.String, "candidates": pl.String,
    "sub_candidates": pl.String, "arg": pl.String, "arg_name": pl.String,
    "decorates": pl.String,
}  # fmt: skip
_DEF_SCHEMA = {c: NODES[c] for c in DEF_FRAME_COLUMNS}
_REDACTED_REFS = ("name", "receiver", "arg", "module", "alias")
_CONTENT_SCHEMA = {"node_id": pl.String, "text": pl.String}
_STORED = ("nodes", "edges", "files", "tokens", "vocab", "refs", "bnodes", "bedges", "coverage")


PARSE_ERROR_FILES = 5  # files named in the report's parse-error line


@dataclass
class IndexReport:
    """What one `index` run did: counts for the one-line summary and `--json`."""

    root: str
    store: str
    files: int = 0
    parsed: int = 0
    cached: int = 0  # of the parsed files, those whose rows came from the extraction cache
    reused: int = 0
    deleted: int = 0
    # full | incremental (re-resolved) | delta (changed files' rows only) | unchanged (nothing
    # to write: the current version stays)
    mode: str = "full"
    nodes_by_kind: dict[str, int] = field(default_factory=dict)
    edges_by_kind: dict[str, int] = field(default_factory=dict)
    edges_by_confidence: dict[str, int] = field(default_factory=dict)
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    parse_errors: int = 0
    # the files with the most parse errors, most first: [path, errors] (at most PARSE_ERROR_FILES)
    parse_error_files: list[list] = field(default_factory=list)
    files_with_parse_errors: int = 0
    seconds: float = 0.0
    coverage: list[dict] = field(default_factory=list)  # ctxframe._store.coverage rows
    pack_errors: list[str] = field(default_factory=list)  # broken language packs, one line each
    adapters: dict = field(default_factory=dict)  # _ingest.adapters: accepted, rejected lines
    dial: dict = field(default_factory=dict)  # ctxframe._ingest.dial: dialled, unreachable lines
    repaired: str | None = None  # the previous version failed its checks and was rebuilt
    # the git history (ctxframe._store.history): action, commits, pending, error
    history: dict = field(default_factory=dict)
    flow: str | None = None  # a delta run's value flow: incremental, full, or None (none ran)

    @property
    def nodes(self) -> int:
        return sum(self.nodes_by_kind.values())

    @property
    def edges(self) -> int:
        return sum(self.edges_by_kind.values())

    def to_dict(self) -> dict:
        return {
            "verb": "index",
            "status": "ok",
            "root": self.root,
            "store": self.store,
            "files": self.files,
            "parsed": self.parsed,
            "cached": self.cached,
            "reused": self.reused,
            "deleted": self.deleted,
            "mode": self.mode,
            "nodes": self.nodes,
            "edges": self.edges,
            "nodes_by_kind": self.nodes_by_kind,
            "edges_by_kind": self.edges_by_kind,
            "edges_by_confidence": self.edges_by_confidence,
            "skipped_by_reason": self.skipped_by_reason,
            "parse_errors": self.parse_errors,
            "parse_error_files": self.parse_error_files,
            "files_with_parse_errors": self.files_with_parse_errors,
            "seconds": round(self.seconds, 3),
            "coverage": self.coverage,
            "pack_errors": self.pack_errors,
            "adapters": self.adapters,
            "dial": self.dial,
            "repaired": self.repaired,
            "history": self.history,
        }

    def __str__(self) -> str:
        def fmt(d: dict) -> str:
            return ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1]))

        skipped = sum(self.skipped_by_reason.values())
        return (
            f"indexed {self.files} files ({self.parsed} parsed"
            + (f" ({self.cached} from the extraction cache)" if self.cached else "")
            + f", {self.reused} unchanged, "
            f"{self.deleted} removed) in {self.seconds:.2f}s · {self.nodes} nodes"
            + (f" ({fmt(self.nodes_by_kind)})" if self.nodes else "")
            + f" · {self.edges} edges"
            + (f" ({fmt(self.edges_by_kind)}; {fmt(self.edges_by_confidence)})" * bool(self.edges))
            + f" · {skipped} skipped"
            + (f" ({fmt(self.skipped_by_reason)})" if skipped else "")
            + (f" · {self.parse_errors} parse errors" if self.parse_errors else "")
            + self._parse_error_text()
            + self._coverage_text()
        )

    def _parse_error_text(self) -> str:
        """Which files the parse errors are in: a reader can open them (the grammar may not
        know a construct, or the file is not valid code)."""
        if not self.parse_error_files:
            return ""
        shown = ", ".join(f"{path} ({n})" for path, n in self.parse_error_files)
        more = self.files_with_parse_errors - len(self.parse_error_files)
        return f"\nparse errors in: {shown}" + (f" and {more} more files" if more > 0 else "")

    def _repr_html_(self) -> str:
        return render("report", r={**self.to_dict(), "seconds": self.seconds}, notes=self._notes())

    def _notes(self) -> list[str]:
        """Pack errors, adapters accepted or rejected, dialled sources: one line each."""
        return self._coverage_text(coverage=False).strip().splitlines()

    def _coverage_text(self, coverage: bool = True) -> str:
        from ctxframe._store.coverage import COLUMNS, format_coverage

        text = ""
        if coverage and self.coverage:
            rows = pl.DataFrame(self.coverage, schema_overrides={"resolved_share": pl.Float64})
            text += "\n" + format_coverage(rows.select(COLUMNS))
        text += "".join(f"\npack error: {e}" for e in self.pack_errors)
        extra = [
            *(
                f"adapter accepted: {a['adapter']} (producer {a['producer']}: "
                f"{a['nodes']} nodes, {a['edges']} edges)"
                for a in self.adapters.get("accepted", [])
            ),
            *(f"adapter rejected: {r}" for r in self.adapters.get("rejected", [])),
            *(f"dialled: {d}" for d in self.dial.get("dialled", [])),
            *(f"dial unreachable: {u}" for u in self.dial.get("unreachable", [])),
            *([f"repaired: {self.repaired}"] if self.repaired else []),
            *([_history_line(self.history)] if self.history.get("action") else []),
        ]
        return text + "".join(f"\n{line}" for line in extra)


def _history_line(h: dict) -> str:
    """One line on what the run did with the git history."""
    if h.get("pending"):
        return f"history: {h.get('reason', 'read')}: reading {h['pending']} commits in the " \
            "background (`ctxframe history` waits for it)"
    if h.get("error"):
        return f"history: {h['error']}"
    if h["action"] in ("off", "none"):
        return f"history: none ({h.get('reason')})"
    read = f", {h['read']} read ({h.get('reason')})" if h.get("read") else ""
    return f"history: {h.get('commits', 0)} commits{read}"


def _empty(schema: dict) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


class _Stored(dict):
    """The previous version's tables, each read (and checked against its hash) on first use:
    a fast re-index reads few. The version is pinned (see ctxframe._store.tables.Snapshot)."""

    def __init__(self, snap: _store.Snapshot):
        super().__init__()
        self.snap, self.meta, self.store = snap, snap.meta, snap.store
        self._pending: dict = {}
        self._parts: dict = {}  # table name: future of (paths, parts) (see placed_parts)

    def __missing__(self, name: str) -> pl.DataFrame:
        future = self._pending.pop(name, None)
        frame = self[name] = future.result() if future else self.snap.read(name)
        return frame

    def scan(self, name: str) -> pl.LazyFrame:
        """A lazy scan of a stored table (read only as far as a query needs)."""
        return self.snap.scan(name)

    def prefetch(self, names: list[str], placed: tuple[str, list[str]] | None = None) -> None:
        """Start reading these tables in background threads; `placed` (a table stored by
        path, some paths): also the parts holding those paths' rows (see `placed_parts`),
        and every part's hash checked (what a scan or a carried-over part checks first)."""
        from concurrent.futures import ThreadPoolExecutor

        by_part = self.snap.local_tokens()  # the few parts an edit touches, not the table
        tokens = [n for n in names if n in _tokenparts.BY_NODES] if by_part else []
        names = [n for n in names if n not in tokens]
        pool = ThreadPoolExecutor(max_workers=len(names) + 2 * (placed is not None) + 1)
        self._pending.update({n: pool.submit(self.snap.read, n) for n in names})
        if placed is not None:
            self._parts[placed[0]] = pool.submit(self._read_placed, *placed)
            pool.submit(self.snap.verify, placed[0])
            if tokens:
                self._parts["tokens"] = pool.submit(self._read_token_parts, placed[1])
        pool.shutdown(wait=False)

    def placed_parts(self, name: str, paths: list[str]) -> dict[int, pl.DataFrame] | None:
        """The parts of a table stored by path (ctxframe._store.parts.PLACED) that hold these
        paths' rows, by part number: an edit to a few files reads a few parts, not the
        table. None for a store without parts (read the table whole)."""
        future = self._parts.get(name)
        got = future.result() if future is not None else None
        if got is None or got[0] != sorted(paths):
            got = self._read_placed(name, paths)
            self._parts[name] = _done(got)
        return got[1]

    def _read_placed(self, name: str, paths: list[str]) -> tuple[list[str], dict | None]:
        """(the paths, sorted; the parts holding their rows, or None without part bounds)."""
        bounds = self.snap.bounds()
        if bounds is None:
            return sorted(paths), None
        touched = _parts.part_of(bounds, pl.Series(paths, dtype=pl.String)).unique().to_list()
        return sorted(paths), self.snap.read_parts(name, touched)

    def token_parts(self, paths: list[str]) -> tuple[dict, dict]:
        """The stored token and vocab parts (by part number) of the nodes parts that can hold
        these files' nodes (ctxframe._store.tokenparts)."""
        future = self._parts.get("tokens")
        got = future.result() if future is not None else None
        if got is None or not set(paths) <= set(got[0]):
            got = self._read_token_parts(paths)
            self._parts["tokens"] = _done(got)
        return got[1]

    def _read_token_parts(self, paths: list[str]) -> tuple[list[str], tuple[dict, dict]]:
        of = _tokenparts.parts_of(self.snap.bounds() or [], paths)
        touched = sorted({i for parts in of.values() for i in parts})
        read = self.snap.read_parts
        return sorted(paths), (read("tokens", touched), read("vocab", touched))

    def rows_of(self, name: str, paths: list[str]) -> pl.DataFrame:
        """The rows of these paths in a table stored by path."""
        mine = pl.col("path").is_in(pl.Series(paths, dtype=pl.String).implode())
        parts = self.placed_parts(name, paths)
        if parts is None:
            return self.scan(name).filter(mine).collect()
        frames = [f.filter(mine) for f in parts.values()]
        return pl.concat(frames) if frames else self.scan(name).clear().collect()


def _done(value):
    """A finished future holding `value`."""
    from concurrent.futures import Future

    future: Future = Future()
    future.set_result(value)
    return future


@functools.cache
def code_fingerprint() -> str:
    """The extraction cache's fingerprint of the code that makes rows, and the resolver's
    source: a store made by other code is indexed again whole, not patched."""
    h = hashlib.blake2b(_xcache.fingerprint().encode(), digest_size=16)
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_resolve")
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def _coverage_stamp(run: _Run) -> dict | None:
    return run.coverage.stamp() if run.coverage is not None else None


def _coverage_rows(run: _Run, nodes: pl.DataFrame, files: pl.DataFrame):
    """(covers edges, coverage table) from the run's coverage data (both empty without)."""
    if run.coverage is None:
        return pl.DataFrame(schema=EDGES).drop("producer"), pl.DataFrame(schema=_covers.TABLE)
    measured = _testcov.read(run.coverage, run.root, files["path"])
    edges, table = _covers.covers(measured, nodes, files, run.coverage.mtime_ns)
    _trace("coverage")
    return edges.with_columns(producer=pl.lit(PRODUCER + ".coverage")), table


def _load_previous(store: str) -> _Stored | None:
    """The previous version, its part sizes checked (hashes are checked as parts are read or
    kept); None when there is none. Damage raises StoreCorrupt (the caller rebuilds)."""
    try:
        snap = _store.Snapshot(store)
    except StoreNotFound:
        return None
    if snap.version is None:  # a store from before versions: rebuilt once (hashes, redaction)
        return None
    if snap.meta.get("code") != code_fingerprint():
        return None  # made by other extraction or resolution code: its rows are not these
    if snap.meta.get("redaction") != REDACTION_VERSION:  # rows masked by older rules: once
        return None
    if not _store.has_metrics(snap):  # from before the function metrics: rebuilt once
        return None
    for name in _STORED:
        if not snap.has(name):
            exc = StoreCorrupt(f"the store at {store} is damaged (table {name} is missing)")
            exc.detail = f"table {name} is missing"  # type: ignore[attr-defined]
            raise exc
    snap.check_sizes()
    prev = _Stored(snap)
    prev["files"]
    return prev


def _extract_all(
    root: str,
    jobs: list[tuple[str, str | None]],
    progress: bool,
    packs: tuple = (),
    spill: str | None = None,
    processes: int | None = None,
    xc: _xcache.Session | None = None,
    words: pl.DataType | None = None,
) -> list[Batch]:
    """Extract the jobs (in `processes` worker processes, default one per core); with many
    chunks each batch's references go to a scratch Parquet file under `spill` and stay there
    (`Batch.refs` is then a LazyFrame scanning it). With an extraction cache session `xc`,
    files found there are not parsed, and the others' rows are added to it. `words`: the
    categorical type the body counts' keys are kept in (see `_rank.fields.body_counts`)."""
    if packs:  # user language packs: parsed in a guarded child, one file at a time
        from ctxframe._core.languages import language_for
        from ctxframe._ingest.packs import extract_guarded

        exts = {ext for p in packs for ext in p.language.extensions}
        mine = [j for j in jobs if os.path.splitext(j[0])[1].lower() in exts]
        mine = [j for j in mine if language_for(j[0]) is None]
        if mine:
            taken = {p for p, _ in mine}
            rest = [j for j in jobs if j[0] not in taken]
            guarded = [_framed(b, words) for b in extract_guarded(root, mine, packs)]
            batches = _extract_all(root, rest, progress, spill=spill, processes=processes, xc=xc,
                                   words=words)  # fmt: skip
            return batches + guarded
    hits: list[Batch] = []
    if xc is not None:
        # many files: references and body counts found are streamed to scratch files
        hits, jobs = xc.lookup(root, jobs, spill if len(jobs) > _SPILL_FILES else None)
        if words is not None:
            for hit in hits:
                hit.content = _as_words(hit.content, words)
    return _extract_pool(root, jobs, progress, spill, processes, xc, words) + hits


def _extract_pool(root, jobs, progress, spill, processes, xc, words=None) -> list[Batch]:
    """`_extract_all` for jobs of built-in languages."""
    workers = processes or os.cpu_count() or 1
    if len(jobs) < _POOL_MIN_FILES or workers < 2:
        batch = _framed(extract_batch(root, jobs, packed=False), words)
        if xc is not None:
            xc.add(batch)
        return [batch]
    # Small chunks keep each result (and its unpickled Python objects) small in the parent.
    size = min(_MAX_CHUNK, max(_CHUNK, len(jobs) // (workers * 6)))
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), unit="file", desc="indexing", leave=False)
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    # fork: workers never touch Polars, and unlike spawn/forkserver it does not re-run the
    # caller's __main__ (a notebook or an unguarded script).
    ctx = get_context("fork" if sys.platform.startswith("linux") else "spawn")
    results: list[Batch] = []
    # Each batch's frames go to scratch Parquet files as they arrive: many small frames held
    # in memory cost several times their size. Definitions are read back in one go at the
    # end; references stay on disk, read a slice at a time by resolution.
    spill = spill if len(jobs) > _SPILL_FILES else None
    from ctxframe._store.reap import orphan_proof

    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=orphan_proof, initargs=(os.getpid(),)
    )
    batches = pool.map(extract_batch, [root] * len(chunks), chunks)
    # closed here, on Ctrl-C too: left to the garbage collector, the map's generator cancels
    # its futures at some later moment and prints "Exception ignored" with a traceback
    with _reaped(pool), closing(batches):
        for i, batch in enumerate(batches):
            results.append(_framed(batch, words))  # frees the batch's Python lists
            if xc is not None:
                xc.add(batch)
            if spill is not None:
                for name in ("defs", "refs"):
                    getattr(batch, name).write_parquet(
                        os.path.join(spill, f"{name}-{i:06d}.parquet"),
                        compression="uncompressed",
                        statistics=False,
                    )
                batch.defs = batch.defs.clear()
                batch.refs = pl.scan_parquet(os.path.join(spill, f"refs-{i:06d}.parquet"))
                batch.content = _spilled(
                    batch.content, os.path.join(spill, f"content-{i:06d}.parquet"), words
                )
            if bar is not None:
                bar.update(len(batch.files))
    if spill is not None and results:
        parts = sorted(glob.glob(os.path.join(spill, "defs-*.parquet")))
        results[0].defs = pl.read_parquet(parts)
    if bar is not None:
        bar.close()
    return results


def _spilled(content: pl.DataFrame, path: str, words: pl.DataType | None) -> pl.LazyFrame:
    """Body counts written to a scratch file and scanned back with their keys in `words`: the
    token table, the last stage, is their only reader."""
    content.write_parquet(path, compression="uncompressed", statistics=False)
    return _as_words(pl.scan_parquet(path), words or pl.String)


def _as_words(
    content: pl.DataFrame | pl.LazyFrame, words: pl.DataType
) -> pl.DataFrame | pl.LazyFrame:
    """Body counts with their keys in `words` (categories read back from a file come back as
    the same type, but a foreign categorical goes through String)."""
    if content.collect_schema()["token"] == words:
        return content
    return content.with_columns(pl.col("node_id", "token").cast(pl.String).cast(words))


@contextmanager
def _reaped(pool):
    """The pool shut down on the way out; on an error or Ctrl-C its workers are killed at once
    instead of finishing every queued chunk."""
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            with suppress(OSError, ValueError, AttributeError):
                proc.kill()
        raise
    pool.shutdown(wait=True)


def _unpacked(cols: dict, schema: dict) -> pl.DataFrame:
    """A frame from a worker's packed columns (see ctxframe._ingest.extract._pack)."""
    out = []
    for name, dtype in schema.items():
        col = cols[name]
        if not isinstance(col, tuple):
            out.append(pl.Series(name, col, dtype=dtype))
        elif col[0] == "null":
            out.append(pl.repeat(None, col[1], dtype=dtype, eager=True).alias(name))
        else:
            # a C-level str.split into a list builds the column faster than Polars' split
            s = pl.Series(name, col[1].split(_SEP), dtype=pl.String)
            if col[2]:
                s = pl.select(pl.when(s != _NULL).then(s)).to_series().alias(name)
            out.append(s)
    return pl.DataFrame(out)


def _interactive() -> bool:
    """A terminal, or a Jupyter kernel (tqdm.auto draws a widget bar there)."""
    if sys.stderr.isatty():
        return True
    shell = sys.modules.get("IPython")
    ip = shell.get_ipython() if shell is not None and hasattr(shell, "get_ipython") else None
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _framed(batch: Batch, words: pl.DataType | None = None) -> Batch:
    """The batch with its columns turned into Polars frames (far smaller than Python lists);
    the body counts' keys as categories of `words` when given."""
    # Credentials written in strings are masked before anything is stored (_ingest.redact).
    batch.defs = redact_frame(_unpacked(batch.defs, _DEF_SCHEMA), ("signature", "doc"))
    batch.refs = redact_frame(_unpacked(batch.refs, _REF_SCHEMA), _REDACTED_REFS)
    batch.boundary_nodes = redact_frame(
        pl.DataFrame(batch.boundary_nodes, schema=BOUNDARY_NODE_COLS)
    )
    batch.boundary_edges = redact_frame(
        pl.DataFrame(batch.boundary_edges, schema=BOUNDARY_EDGE_COLS)
    )
    text = _unpacked({c: batch.content.get(c, []) for c in CONTENT_COLUMNS}, _CONTENT_SCHEMA)
    batch.content = body_counts(redact_rows(text, "text"), words)  # far smaller than text
    return batch


def _gomods(root: str, paths: list[str]) -> dict[str, str]:
    mods = {}
    for p in paths:
        if p == "go.mod" or p.endswith("/go.mod"):
            try:
                with open(os.path.join(root, p), encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        if line.startswith("module "):
                            mods[os.path.dirname(p)] = line.split()[1].strip('"')
                            break
            except OSError:
                continue
    return dict(sorted(mods.items(), key=lambda kv: -len(kv[1])))


def index(
    path: str,
    *,
    store: str | None = None,
    rebuild: bool = False,
    progress: bool | None = None,
    dial: bool = False,
    wait: bool = True,
    processes: int | None = None,
    changed: Collection[str] | None = None,
    cache: bool = True,
    coverage: str | bool | None = None,
    history: bool | None = None,
    anonymize: bool | None = None,
) -> IndexReport:
    """Index the repository at `path` into its store (incremental unless `rebuild`); files
    are parsed in `processes` worker processes (default: one per core; 1: in this process).
    Adapters in `.ctxframe/adapters/` always run; with `dial`, env vars whose value is a
    database or bucket URL are dialled (see ctxframe._ingest.dial). One writer at a time:
    another run's lock is waited for, or with `wait=False` raises StoreLocked. A previous
    version that fails its checks (sizes, hashes, decoding) is rebuilt, and the report says so.

    `changed` (a file watcher): the repo-relative paths known to have changed — files or
    directories, present or gone; only they are walked and hashed, every other file keeps its
    stored row. None walks the whole tree.

    `cache`: take the rows of files whose bytes were extracted before (by any index on this
    machine) from the extraction cache, and add the others' (ctxframe._store.xcache).

    `coverage`: a coverage data file to read into `covers` edges and the coverage table
    (ctxframe._ingest.testcov); None reads `.coverage`, `coverage.xml` or `lcov.info` when one
    is at the root; False reads none.

    `history` and `anonymize` override the configuration's `[history]` (None: as configured):
    read the git history into the store, with keyed hashes instead of author names
    (ctxframe._store.history)."""
    t0 = time.perf_counter()
    if not os.path.isdir(path):
        raise RepoNotFound(f"{path} is not a directory: pass the root of a source repository")
    root = os.path.realpath(path)
    store = os.path.abspath(store) if store else _store.default_store(root)
    from ctxframe._store.reap import spill_dir

    made = [d for d in (store, os.path.dirname(store)) if not os.path.exists(d)]
    try:
        report = _locked_index(root, store, wait, progress, dial, spill_dir, processes, changed,
                               cache, rebuild, coverage, (history, anonymize))  # fmt: skip
    except NothingToIndex:
        for d in made:  # leave no `.ctxframe/` behind in a directory with nothing to index
            shutil.rmtree(d, ignore_errors=True)
        raise
    report.seconds = time.perf_counter() - t0
    return report


def _locked_index(root, store, wait, progress, dial, spill_dir, processes, changed, cache,
                  rebuild, coverage, history_terms=(None, None)) -> IndexReport:  # fmt: skip
    from ctxframe._store.lock import writer_lock

    with writer_lock(store, wait=wait):
        _store.clean_stale(store)
        spill = spill_dir()
        try:
            run = _Run(root, store, _interactive() if progress is None else progress, dial, spill)
            run.processes = processes
            run.changed = _relative(changed)
            run.cache = cache
            given = coverage if isinstance(coverage, str) else None
            run.coverage = _testcov.find(root, given, enabled=coverage is not False)
            run.history_terms = history_terms
            try:
                report = _index(run, rebuild)
            except StoreCorrupt as exc:
                shutil.rmtree(spill, ignore_errors=True)
                os.makedirs(spill, exist_ok=True)
                run = _Run(run.root, store, run.progress, dial, spill, coverage=run.coverage)
                run.processes = processes
                run.cache = cache
                run.history_terms = history_terms
                report = _index(run, rebuild=True)
                what = getattr(exc, "detail", None) or str(exc)
                report.repaired = f"the previous store was damaged ({what}); rebuilt it"
        finally:
            shutil.rmtree(spill, ignore_errors=True)
            forget_lines()
    return report


def _relative(paths: Collection[str] | None) -> frozenset[str] | None:
    """Changed paths as the walk names them; None (walk everything) when one is the root."""
    if paths is None:
        return None
    out = frozenset(os.path.normpath(p).replace(os.sep, "/").strip("/") for p in paths)
    return None if "." in out or "" in out else out


@dataclass
class _Run:
    """One index run: where, and what each stage found (filled in stage by stage)."""

    root: str
    store: str
    progress: bool
    dial: bool
    spill: str
    exclude: list[str] = field(default_factory=list)
    prev: _Stored | None = None
    prev_files: pl.DataFrame | None = None
    packs: list = field(default_factory=list)
    pack_errors: list[str] = field(default_factory=list)
    kept: pl.DataFrame | None = None  # stored rows of files whose stat did not change
    batches: list[Batch] = field(default_factory=list)
    fresh: list = field(default_factory=list)  # results of files parsed again
    unchanged: set[str] = field(default_factory=set)  # same bytes under a new stat
    skipped: list[tuple[str, str]] = field(default_factory=list)  # walk skips
    files: pl.DataFrame | None = None
    reparsed: list[str] = field(default_factory=list)
    same_set: bool = False  # the same files are indexed as before
    file_nodes: pl.DataFrame | None = None
    gomods: dict[str, str] = field(default_factory=dict)
    processes: int | None = None  # extraction worker processes (None: one per core)
    changed: frozenset[str] | None = None  # paths a watcher saw change; None: walk everything
    # token counts of the bodies of the files parsed, a frame per batch (kept apart so the
    # token table can drop each as it takes it; a scan of a scratch file in a large run)
    content: list[pl.DataFrame | pl.LazyFrame] = field(default_factory=list)
    cache: bool = True  # use the extraction cache (ctxframe._store.xcache)
    coverage: _testcov.Source | None = None  # coverage data read into `covers` edges
    cached: int = 0  # files whose rows the extraction cache gave
    flow: list = field(default_factory=list)  # the solved value flow (ctxframe._resolve.flow_state)
    adapters: Started | None = None  # the repository's adapters, running since the start
    history_terms: tuple = (None, None)  # `index(history=, anonymize=)`
    history: _history.HistoryRun | None = None  # reading the git history meanwhile

    def take_content(self) -> list[pl.DataFrame | pl.LazyFrame]:
        """The body counts, no longer held by the run (their last user can free them)."""
        content, self.content = self.content, []
        return content


def _index(run: _Run, rebuild: bool) -> IndexReport:
    """The stages: previous version, plan (walk + stat compare), extract, the files table,
    then the delta fast path or a full resolution. Adapters, when the repository has any, run
    from the start, beside every stage, and are collected when their rows are merged."""
    started = Started(run.root) if discover_adapters(run.root) else contextlib.nullcontext()
    with started as run.adapters:
        run.exclude = excludes(run.root, run.store)
        run.prev = None if rebuild else _load_previous(run.store)
        run.history = _start_history(run)
        jobs = _plan(run)
        _extract(run, jobs)
        _files_table(run)
        if (report := _unchanged(run)) is not None:
            return report
        if (
            run.same_set
            and not run.dial
            and not run.packs
            and run.adapters is None
            and (report := _try_delta(run)) is not None
        ):
            return report
        return _full(run)


def _start_history(run: _Run) -> _history.HistoryRun:
    """Start reading the git history beside the index (ctxframe._store.history)."""
    from ctxframe._history.settings import settings

    cfg = load_config(run.root)
    terms = settings(cfg.history, cfg.source, enabled=run.history_terms[0],
                     anonymize=run.history_terms[1])  # fmt: skip
    prev = run.prev.snap if run.prev is not None else None
    return _history.HistoryRun(run.root, run.store, prev, terms, git_head(run.root))


def _finish_history(run: _Run, staged, meta: dict, report: IndexReport) -> None:
    """The history tables into the new version, and the report's line on them."""
    h = run.history
    if h is None:
        return
    h.finish(staged, meta)
    p = h.plan
    state = meta.get("history") or {}
    report.history = {
        "action": p.action if p is not None else "none",
        "reason": p.reason if p is not None else "",
        "commits": state.get("commits", 0),
        "read": h.read_count,
        **({"pending": h.to_read} if h.pending else {}),
        **({"error": h.error} if h.error else {}),
    }


def excludes(root: str, store: str) -> list[str]:
    """The walk's exclude globs: config `exclude`, and the store when it lies in the tree."""
    out = list(load_config(root).exclude)
    rel_store = os.path.relpath(store, root)
    if not rel_store.startswith("..") and rel_store.split(os.sep)[0] not in BUILTIN_DIRS:
        out.append(f"/{rel_store}/")
    return out


_STAT = {"path": pl.String, "size": pl.Int64, "mtime_ns": pl.Int64}


def _walked(run: _Run, prev_files: pl.DataFrame) -> pl.DataFrame:
    """(path, size, mtime_ns) of every file the walk finds. Told which paths changed, only
    those are walked (and stored rows without a stat: walk skips, unreadable files); every
    other stored file keeps its stored stat."""
    if run.changed is None or run.prev is None:
        walked = walk(run.root, run.exclude)
        run.skipped = walked.skipped
        return pl.DataFrame(walked.files, schema=_STAT, orient="row")
    redo = sorted(run.changed | set(prev_files.filter(pl.col("mtime_ns").is_null())["path"]))
    part = walk_paths(run.root, redo, run.exclude)
    run.skipped = part.skipped
    below = [pl.col("path").str.starts_with(p.strip("/") + "/") for p in redo]
    redone = pl.col("path").is_in(pl.Series(redo, dtype=pl.String).implode())
    if below:
        redone = redone | pl.any_horizontal(below)
    kept = prev_files.filter(pl.col("mtime_ns").is_not_null() & ~redone).select(list(_STAT))
    return pl.concat([kept, pl.DataFrame(part.files, schema=_STAT, orient="row")])


def _plan(run: _Run) -> list[tuple[str, str | None]]:
    """Walk the tree and compare each file's stat with the stored one: unchanged files are
    kept, the rest become (path, stored hash) jobs (paths a watcher names always do: two
    writes within one clock tick can leave size and mtime as they were)."""
    prev_files = run.prev_files = run.prev["files"] if run.prev else _empty(FILES)
    current = _walked(run, prev_files)
    _trace("walk")
    if current.is_empty() and run.prev is None and not run.skipped:
        raise NothingToIndex(
            f"{run.root} has no file to index: pass the root of a source repository "
            "(or check the config `exclude` and .gitignore)"
        )
    from ctxframe._ingest.packs import load_packs

    packs, run.pack_errors = load_packs(run.root)
    run.packs = packs
    joined = current.join(
        prev_files.select(
            "path",
            pl.col("size").alias("psize"),
            pl.col("mtime_ns").alias("pm"),
            "hash",
            "skip_reason",
            "lines",
            "language",
            "parse_errors",
        ),
        on="path",
        how="left",
    )
    same = (pl.col("size") == pl.col("psize")) & (pl.col("mtime_ns") == pl.col("pm"))
    # A pack added or removed since the last run re-parses the files of its extensions.
    pack_lang = {ext: p.language.name for p in packs for ext in p.language.extensions}
    ext = pl.col("path").str.extract(r"(\.[^./]+)$", 1).str.to_lowercase()
    want_lang = ext.replace_strict(pack_lang, default=None, return_dtype=pl.String)
    was_pack = pl.col("language").is_not_null() & ~pl.col("language").is_in(
        [lang.name for lang in LANGUAGES]
    )
    same = same & ((want_lang.is_null() & ~was_pack) | (want_lang == pl.col("language")))
    if run.changed:
        same = same & ~pl.col("path").is_in(
            pl.Series(sorted(run.changed), dtype=pl.String).implode()
        )
    run.kept = joined.filter(same.fill_null(False))
    todo = joined.filter(~same.fill_null(False))
    jobs = list(zip(todo["path"].to_list(), todo["hash"].to_list(), strict=True))
    if packs or prev_files["language"].is_in([p.language.name for p in packs]).any():
        # A pack's language changes what the same bytes yield: never take the hash shortcut.
        pack_exts = {ext for p in packs for ext in p.language.extensions}
        jobs = [(p, None if os.path.splitext(p)[1].lower() in pack_exts else h) for p, h in jobs]
    return jobs


def _extract(run: _Run, jobs: list[tuple[str, str | None]]) -> None:
    """Parse the jobs (reading the stored tables meanwhile)."""
    if run.prev is not None and jobs:  # read the stored tables while the files are parsed
        # (Polars frees the GIL); a few changed files likely take the delta path, which
        # also reads the tokens
        few = len(jobs) <= 8  # the changed files' stored references too
        run.prev.prefetch(
            ["nodes", "edges", *(["tokens", "vocab"] if few else [])],
            placed=("refs", sorted(p for p, _ in jobs)) if few else None,
        )
    use = run.cache and _xcache.enabled() and len(jobs) >= _xcache.MIN_JOBS
    xc = _xcache.Session() if use else None
    try:
        # a large tree's body counts keep their keys as categories of their own (freed
        # with this run): strings would be most of its memory
        words = pl.Categorical(pl.Categories.random()) if len(jobs) > _SPILL_FILES else None
        run.batches = _extract_all(
            run.root, jobs, run.progress, tuple(run.packs), run.spill, run.processes, xc, words
        )
    except BaseException:
        if xc is not None:
            xc.abandon()
        raise
    if xc is not None:
        xc.close()
        run.cached = xc.hits
    run.content = [b.content for b in run.batches]
    for b in run.batches:
        b.content = None
    _trace("extract")
    results = [f for b in run.batches for f in b.files]
    run.unchanged = {r.path for r in results if r.skip_reason == _UNCHANGED}
    run.fresh = [r for r in results if r.skip_reason != _UNCHANGED]


def _files_table(run: _Run) -> None:
    """The new files table (kept, parsed and skipped rows), the file nodes, go.mod modules."""
    results = [f for b in run.batches for f in b.files]
    prev_files = run.prev_files
    new_files = pl.DataFrame(
        {
            "path": [r.path for r in results],
            "language": [r.language for r in results],
            "size": [r.size for r in results],
            "mtime_ns": [r.mtime_ns for r in results],
            "lines": [r.lines for r in results],
            "hash": [r.hash for r in results],
            "parse_errors": [r.parse_errors for r in results],
            "skip_reason": [
                None if r.skip_reason == _UNCHANGED else r.skip_reason for r in results
            ],
        },
        schema=FILES,
    )
    # Unchanged bytes under a new mtime: keep the stored language/errors, take the new stat.
    same_bytes = pl.col("path").is_in(pl.Series(sorted(run.unchanged), dtype=pl.String).implode())
    new_files = (
        new_files.join(
            prev_files.select(
                "path", pl.col("language").alias("pl_"), pl.col("parse_errors").alias("pe_")
            ),
            on="path",
            how="left",
        )
        .with_columns(
            language=pl.when(same_bytes).then("pl_").otherwise("language"),
            parse_errors=pl.when(same_bytes).then("pe_").otherwise("parse_errors"),
        )
        .select(FILES.names())
    )
    kept_files = run.kept.select(FILES.names()).cast(FILES)
    walk_skips = pl.DataFrame(
        {"path": [p for p, _ in run.skipped], "skip_reason": [r for _, r in run.skipped]},
        schema={"path": pl.String, "skip_reason": pl.String},
    )
    files = pl.concat([kept_files, new_files, walk_skips], how="diagonal_relaxed").cast(FILES)
    run.files = files = files.sort("path")
    run.reparsed = [r.path for r in run.fresh]
    indexed = files.filter(pl.col("skip_reason").is_null())
    run.same_set = run.prev is not None and prev_files.filter(pl.col("skip_reason").is_null())[
        "path"
    ].sort().equals(indexed["path"].sort())
    run.file_nodes = indexed.select(
        pl.col("path").alias("id"),
        pl.lit("file").alias("kind"),
        pl.col("path").str.extract(r"([^/]*)$", 1).alias("label"),
        pl.col("path").alias("qualname"),
        "language",
        "path",
        pl.lit(1, pl.Int32).alias("line_start"),
        pl.col("lines").alias("line_end"),
        pl.lit(None, pl.String).alias("signature"),
        pl.lit(None, pl.String).alias("doc"),
        pl.lit(None, pl.String).alias("parent"),
        *(pl.lit(None, NODES[c]).alias(c) for c in METRIC_COLUMNS),
    )
    run.gomods = _gomods(run.root, indexed["path"].to_list())


def _unchanged(run: _Run) -> IndexReport | None:
    """The report of a run that found nothing to write (every file's row as stored, same
    root, commit, schema and ctxframe): the current version stays, and with it the caches
    built inside it, so the next cold query does not rebuild them. None otherwise."""
    prev = run.prev
    if prev is None or run.reparsed or run.dial or run.packs or run.adapters is not None:
        return None
    from ctxframe._core.version import __version__

    meta = prev.meta
    same_meta = (
        meta.get("coverage") == _coverage_stamp(run)
        and meta.get("root") == run.root
        and meta.get("ctxframe_version") == __version__
        and meta.get("schema_version") == SCHEMA_VERSION
        and isinstance(meta.get("coverage_counts"), list)
    )
    if not same_meta or not run.files.equals(run.prev_files):
        return None
    if meta.get("git_head") != git_head(run.root):
        return None
    if run.history is not None and run.history.changes_store():
        return None
    nodes = prev.scan("nodes").select("kind").collect()
    edges = prev.scan("edges").select("kind", "confidence").collect()
    none = pl.DataFrame(schema=_coverage.COUNTS)
    report, _ = _report(run, nodes, edges, "unchanged", counts_change=none)
    if run.history is not None and run.history.stored is not None:
        report.history = {"action": "keep", "reason": "", "read": 0,
                          "commits": run.history.stored.get("commits", 0)}  # fmt: skip
    _trace("unchanged")
    return report


def _try_delta(run: _Run) -> IndexReport | None:
    """The fast path (ctxframe._store.delta): only the changed files' rows replaced, the other
    tables kept as stored. None when it does not apply."""
    prev, files, batches = run.prev, run.files, run.batches
    if run.coverage is not None or prev.meta.get("coverage"):
        return None  # tests' lines matched to code: drawn again over the new code
    delta = _delta.update(
        prev,
        files,
        run.file_nodes,
        pl.concat([_empty(_DEF_SCHEMA)] + [b.defs for b in batches]),
        pl.concat([_empty(_REF_SCHEMA).lazy()] + [b.refs.lazy() for b in batches]).collect(),
        run.reparsed,
        run.gomods,
    )
    if delta is None:
        return None
    _trace("delta")
    written = {"nodes": delta.nodes, "edges": delta.edges}
    written = {k: v for k, v in written.items() if k not in delta.same}
    bounds = prev.snap.bounds()
    bounds = _parts.bounds_for(files) if bounds is None else bounds
    token_parts = whole = None
    if run.reparsed:  # the re-read files' bodies changed, if nothing else did
        content = _concat(run.content)
        if bounds and prev.snap.bounds() == bounds and prev.snap.local_tokens():
            token_parts = _delta.token_parts(prev, delta.nodes, run.reparsed, content, bounds)
        else:  # another layout: the whole table, written in this one
            whole = _delta.tokens(prev, delta.nodes, run.reparsed, content)
    _trace("tokens")
    tables = {"files": files, **(written if run.reparsed else {})}
    refs = delta.refs if run.reparsed else None
    from concurrent.futures import ThreadPoolExecutor

    def write() -> None:
        if whole is not None:
            staged.put_tokens(whole.tokens, whole.vocab, delta.nodes["id"])
        with staged.together():
            staged.put(tables, old={n: prev[n] for n in ("nodes", "edges") if n in tables},
                       within={n: run.reparsed for n in delta.spliced})  # fmt: skip
            if token_parts is not None:
                for k, name in enumerate(_tokenparts.BY_NODES):
                    staged.put_parts(name, {i: pair[k] for i, pair in token_parts.items()})
            if refs is not None:
                _write_refs(staged, prev, files, run.reparsed, refs)

    new_tokens = token_parts is not None or whole is not None
    with _store.Staging(run.store, prev.snap, bounds) as staged:
        staged.keep([n for n in _STORED if n not in tables and (n != "refs" or refs is None)
                     and not (new_tokens and n in _tokenparts.BY_NODES)])  # fmt: skip
        with ThreadPoolExecutor(max_workers=1) as pool:  # write while counting
            writing = pool.submit(write)
            report, meta = _report(
                run, delta.nodes, delta.edges, "delta", counts_change=delta.counts_change
            )
            _trace("report")
            writing.result()
        _finish_history(run, staged, meta, report)
        version = staged.commit(meta)
    _trace("write")
    if delta.flow is not None:
        _keep_flow(run, version, delta.flow)
    elif delta.flow_mode is None:  # no Python fact changed: the stored state stands
        _carry_flow(run, version)
    if run.history is not None:  # after the state: a history version links it in
        run.history.start_pending()
    report.flow = delta.flow_mode
    return report


def _keep_flow(run: _Run, version: str, state) -> None:
    """The solved value flow kept with the version just written: for this process (a
    watcher's next edit) and beside the version (the next process's); best effort."""
    if state is None:
        return
    from ctxframe._resolve import flow_state

    flow_state.keep(os.path.join(run.store, version), state)


def _carry_flow(run: _Run, version: str) -> None:
    """The previous version's value-flow state, for a version whose Python facts it holds."""
    from ctxframe._resolve import flow_state

    snap = run.prev.snap
    if snap.version is None:
        return
    flow_state.carry(snap.dir, os.path.join(run.store, version))


def _write_refs(staged, prev: _Stored, files, changed: list[str], refs: pl.DataFrame) -> None:
    """The changed files' references in place of their stored ones: only the parts holding
    those files are read and written again (ctxframe._store.parts)."""
    gone = pl.col("path").is_in(pl.Series(changed, dtype=pl.String).implode())
    bounds = staged.bounds
    if prev.snap.bounds() != bounds:  # another layout (an older store): written whole
        staged.sink_parts("refs", pl.concat([prev.scan("refs").filter(~gone), refs.lazy()]), files)
        return
    old = prev.placed_parts("refs", changed) or {}
    touched = _parts.part_of(bounds, pl.Series(changed, dtype=pl.String)).unique().to_list()
    fresh = _parts.split("refs", refs, bounds)
    empty = refs.clear()
    parts = {i: pl.concat([old.get(i, empty).filter(~gone), fresh.get(i, empty)]) for i in touched}
    staged.put_parts("refs", parts)


def _full(run: _Run) -> IndexReport:
    """Resolve every reference again (incrementally when the file set is the same) and write
    every table. Tables are written as soon as they are final and then dropped: the new
    version is only swapped in by commit, so a failure leaves the old one as it was."""
    prev, files, reparsed, batches = run.prev, run.files, run.reparsed, run.batches
    stay = pl.col("path").is_in(files["path"].implode()) & ~pl.col("path").is_in(
        pl.Series(reparsed, dtype=pl.String).implode()
    )
    old_defs = (
        prev["nodes"]
        .filter(
            ~pl.col("kind").is_in(["file", "module"])
            & (pl.col("producer") == PRODUCER)
            & pl.col("transport").is_null()
        )
        .select(DEF_FRAME_COLUMNS)
        if prev
        else _empty(_DEF_SCHEMA)
    )
    # Rows of files whose bytes turned out unchanged are not in the batches (not re-parsed).
    defs = pl.concat([old_defs.filter(stay)] + [b.defs for b in batches])
    # References as parts holding whole files, read a slice at a time (see resolve).
    old_refs = prev.scan("refs").filter(stay) if prev else _empty(_REF_SCHEMA).lazy()
    refs = [old_refs] + [b.refs.lazy() for b in batches]
    file_bnodes = pl.concat(
        [prev["bnodes"].filter(stay) if prev else _empty(BOUNDARY_NODE_COLS)]
        + [b.boundary_nodes for b in batches]
    )
    file_bedges = pl.concat(
        [prev["bedges"].filter(stay) if prev else _empty(BOUNDARY_EDGE_COLS)]
        + [b.boundary_edges for b in batches]
    )
    bounds = _parts.choose(prev.snap.bounds() if prev else None, files)
    with _store.Staging(run.store, prev.snap if prev else None, bounds) as staged:
        staged.sink_parts("refs", pl.concat(refs), files)
        staged.put({"bnodes": file_bnodes, "bedges": file_bedges})
        previous = None
        if run.same_set:  # same file set: resolve incrementally
            # adapter and dialled rows are made afresh each run: never carried over
            previous = Previous(
                prev["edges"].filter(pl.col("producer") == PRODUCER), old_defs, reparsed
            )
        _trace("refs gathered")
        edges, stubs, bnodes, bedges = _resolve_all(run, defs, refs, file_bnodes, file_bedges,
                                                    previous)  # fmt: skip
        del refs, batches
        run.batches = []
        extra_n, extra_e, adapters_report, dial_report = _extra(run, defs, stubs, bnodes, edges,
                                                                bedges)  # fmt: skip
        nodes = (
            pl.concat([run.file_nodes.cast(_DEF_SCHEMA), defs])
            .with_columns(producer=pl.lit(PRODUCER))
            .pipe(lambda n: pl.concat([n, stubs, bnodes, extra_n], how="diagonal_relaxed"))
            .select(NODES.names())
            .cast(NODES)
            .sort("id")
        )
        del defs
        cov_edges, cov_table = _coverage_rows(run, nodes, files)
        staged.put({"nodes": nodes, "coverage": cov_table})
        # The report reads only these; the token table reads its columns back from the parts
        # written, a slice at a time, once the edges (the peak: the sort) are gone.
        nodes = nodes.select("id", "kind", "label", "language", "path", "producer", "transport")
        _trace("nodes")
        sources = [edges, conform_edges(bedges.lazy()), conform_edges(extra_e.lazy()),
                   conform_edges(cov_edges.lazy())]  # fmt: skip
        del edges, bedges, extra_e, cov_edges
        edges = _sorted_edges(sources)
        _trace("nodes+edges")
        report, meta = _report(
            run, nodes, edges, "incremental" if previous is not None else "full",
            adapters_report=adapters_report, dial_report=dial_report,
        )  # fmt: skip
        _trace("report")
        staged.put({"edges": edges, "files": files})
        del edges
        _trace("edges written")
        del nodes
        table = _tokens(staged.scan("nodes").select(_TOKEN_NODE_COLUMNS), run)
        ids = staged.scan("nodes").select("id").collect()["id"]
        staged.put_tokens(table.tokens, table.vocab, ids)
        del table, ids
        _trace("tokens written")
        _finish_history(run, staged, meta, report)
        version = staged.commit(meta)
    _trace("write")
    _keep_flow(run, version, run.flow[0] if run.flow else None)
    if run.history is not None:  # after the state: a history version links it in
        run.history.start_pending()
    return report


def _resolve_all(run: _Run, defs, refs, file_bnodes, file_bedges, previous):
    """References to edges, and the boundary rows merged with the code's own."""
    code_bnodes, code_bedges, handlers = boundary_code.from_refs(pl.concat(refs))
    _trace("boundaries from refs")
    edges, stubs = resolve(
        defs, run.files, refs, run.gomods, previous=previous, handlers=handlers, spill=run.spill,
        flow_keep=run.flow,
    )  # fmt: skip
    _trace("resolve")
    bnodes, bedges = merge_boundaries(
        pl.concat([file_bnodes, code_bnodes]),
        pl.concat([file_bedges, code_bedges]),
        defs,
        edges,
    )
    _trace("merge boundaries")
    return edges, stubs, bnodes, bedges


def _extra(run: _Run, defs, stubs, bnodes, edges, bedges):
    """Adapters (.ctxframe/adapters/) and, with `dial`, native sources: their own producers."""
    from ctxframe._ingest.extra import extra_rows

    extra_n, extra_e = pl.DataFrame(schema=NODES), pl.DataFrame(schema=EDGES)
    adapters_report, dial_report = AdapterRun().to_dict(), {}
    if run.dial or run.adapters is not None:
        extra_n, extra_e, adapters_report, dial_report = extra_rows(
            run.root,
            pl.concat([run.file_nodes["id"], defs["id"], stubs["id"], bnodes["id"]]),
            pl.concat([conform_edges(edges).collect(), conform_edges(bedges)]),
            bnodes.filter(pl.col("kind") == "env"),
            dial=run.dial,
            adapters=run.adapters,
        )
        extra_n, extra_e = redact_frame(extra_n), redact_frame(extra_e)
    _trace("adapters")
    return extra_n, extra_e, adapters_report, dial_report


def _concat(frames: list[pl.DataFrame | pl.LazyFrame]) -> pl.DataFrame | None:
    return pl.concat([f.lazy() for f in frames]).collect() if frames else None


def _tokens(nodes: pl.LazyFrame, run: _Run) -> TokenTable:
    """The token table of `nodes` (ctxframe._rank.fields; read a slice at a time): `run.content`
    holds the bodies of the files read this run; with a stored index, every other file's nodes
    keep their stored rows (a node's fields depend only on its row and its file's bytes)."""
    prev = run.prev
    if prev is None:  # the body counts are handed over: token_table drops them once keyed
        return token_table(nodes, run.take_content())
    carried = nodes.filter(
        ~pl.col("path").is_in(pl.Series(run.reparsed, dtype=pl.String).implode())
        & (pl.col("kind") != "module")
        & pl.col("transport").is_null()  # merged boundary nodes can change path
        & (pl.col("producer") == PRODUCER)  # adapter rows are made afresh each run
    )
    carry = carried.select("id").collect()["id"]
    previous = TokenTable(prev["tokens"], prev["vocab"])
    return token_table(
        nodes, run.take_content(), previous=previous, previous_ids=prev["nodes"]["id"],
        carry=carry,
    )  # fmt: skip


_SORT_ROWS = 500_000
# the node columns the token table reads (ctxframe._rank.fields)
_TOKEN_NODE_COLUMNS = ["id", "kind", "label", "qualname", "path", "signature", "doc", "producer",
                       "transport"]  # fmt: skip


def _sorted_edges(sources: list[pl.LazyFrame]) -> pl.DataFrame:
    """The edge table in its stored order (src, kind, line, dst, name), from `sources` (taken
    out of the list, so freed, as they are read). A large one is read once in batches, each
    cut into ranges of src, and sorted a range at a time: a whole-table sort of several string
    keys needs a transient copy of every key, and re-reading the sources for each range would
    map their scratch files into memory again and again."""
    order = ["src", "kind", "line", "dst", "name"]
    edges = pl.concat(sources)
    per_src = edges.group_by("src").len().collect().sort("src", nulls_last=True)
    if per_src["len"].sum() <= _SORT_ROWS:
        sources.clear()
        return edges.collect().sort(order, nulls_last=True)
    del edges
    cut = per_src["len"].cum_sum() // _SORT_ROWS
    splits = per_src.filter(cut.diff().fill_null(0) > 0)["src"]
    del per_src
    ranges: list[list[pl.DataFrame]] = [[] for _ in range(splits.len() + 1)]
    while sources:
        for batch in sources.pop(0).collect_batches():
            at = pl.when(pl.col("src").is_null()).then(splits.len())  # nulls last, as sorted
            spread(batch, at.otherwise(splits.search_sorted(batch["src"], side="right")), ranges)
    edges = pl.concat(sort_ranges(ranges, order))
    if edges["src"].null_count():
        return edges
    # sorted by construction: the flag spares later checks a pass (and a rechunk) over src
    return edges.with_columns(pl.col("src").set_sorted())


def _report(
    run: _Run,
    nodes: pl.DataFrame,
    edges: pl.DataFrame,
    mode: str,
    counts_change: pl.DataFrame | None = None,
    adapters_report: dict | None = None,
    dial_report: dict | None = None,
) -> tuple[IndexReport, dict]:
    """The run's report and the store's meta.json."""
    root, store, files, kept, prev = run.root, run.store, run.files, run.kept, run.prev
    fresh, unchanged, prev_files, pack_errors = (
        run.fresh,
        run.unchanged,
        run.prev_files,
        (run.pack_errors),
    )
    indexed = files.filter(pl.col("skip_reason").is_null())
    erring = (
        files.filter(pl.col("parse_errors") > 0)
        .select("path", "parse_errors")
        .sort(["parse_errors", "path"], descending=[True, False])
    )
    base = prev.meta.get("coverage_counts") if prev is not None else None
    if counts_change is not None and base is not None:  # coverage figures add up over files
        counts = pl.concat(
            [pl.DataFrame(base, schema=_coverage.COUNTS, orient="row"), counts_change]
        )
    else:
        counts = _coverage.counts(nodes, edges, files)
    counts = counts.group_by("language", "key").agg(pl.col("n").sum()).sort("language", "key")
    by_kind_conf = edges.group_by("kind", "confidence").len()  # one pass over the edges

    def tally(col: str) -> dict:
        return dict(by_kind_conf.group_by(col).agg(pl.col("len").sum()).iter_rows())

    report = IndexReport(
        root=root,
        store=store,
        files=indexed.height,
        parsed=sum(1 for r in fresh if r.skip_reason is None),
        cached=run.cached,
        reused=kept.height + len(unchanged),
        mode=mode,
        deleted=(prev_files.height - prev_files.join(files, on="path", how="semi").height)
        if prev
        else 0,
        nodes_by_kind=dict(nodes.group_by("kind").len().iter_rows()),
        edges_by_kind=tally("kind"),
        edges_by_confidence={(k or "unresolved"): v for k, v in tally("confidence").items()},
        skipped_by_reason=dict(
            files.filter(pl.col("skip_reason").is_not_null())
            .group_by("skip_reason")
            .len()
            .iter_rows()
        ),
        parse_errors=int(files["parse_errors"].fill_null(0).sum()),
        parse_error_files=[list(r) for r in erring.head(PARSE_ERROR_FILES).iter_rows()],
        files_with_parse_errors=erring.height,
        coverage=_coverage.table(counts).to_dicts(),
        pack_errors=pack_errors,
        adapters=adapters_report or {},
        dial=dial_report or {},
    )
    from ctxframe._core.version import __version__

    meta = {
        "ctxframe_version": __version__,
        "code": code_fingerprint(),
        "coverage": _coverage_stamp(run),
        "redaction": REDACTION_VERSION,
        "root": root,
        "git_head": git_head(root),
        "indexed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "counts": {"files": report.files, "nodes": nodes.height, "edges": edges.height},
        "coverage_counts": counts.rows(),
    }
    return report, meta

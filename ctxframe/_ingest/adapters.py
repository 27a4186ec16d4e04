"""Adapters: programs in `.ctxframe/adapters/` that add to the graph what ctxframe cannot parse.

Every `*.py`, `*.js` or `*.sh` file directly in `REPO/.ctxframe/adapters/` is an adapter — the
file is the registration. `index` runs each one (`python3`/`node`/`sh`, working directory the
repository root, no shell, a time limit, stdout capped) and reads one **Batch** JSON from its
stdout: `{"producer": …, "nodes": […], "edges": […]}` (docs/adapters.md is the contract).

Validation fails closed: a batch with any invalid part is rejected whole, with one line naming
the adapter, the first error and its JSON path; nothing of it is merged and the index goes on.
Accepted rows carry the batch's `producer`, so they can be filtered, and are produced afresh by
every run (the adapter is re-run; nothing of an earlier run's output is kept).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import polars as pl

from ctxframe._core.procs import death_signal_preexec
from ctxframe._core.schema import CONFIDENCES
from ctxframe._ingest.boundaries.code import BOUNDARY_EDGE_COLS, BOUNDARY_NODE_COLS

ADAPTERS_DIR = os.path.join(".ctxframe", "adapters")
TIMEOUT = 30.0  # seconds per adapter
MAX_OUTPUT = 8 * 1024 * 1024  # bytes of stdout
INTERPRETERS = {".py": sys.executable or "python3", ".js": "node", ".sh": "sh"}

NODE_COLS = {**BOUNDARY_NODE_COLS, "producer": pl.String}
EDGE_COLS = {**BOUNDARY_EDGE_COLS, "producer": pl.String}

# field -> (required, type check name); every other key is an error.
_NODE_FIELDS = {
    "id": True,
    "kind": True,
    "label": True,
    "qualname": False,
    "path": False,
    "line_start": False,
    "line_end": False,
    "signature": False,
    "doc": False,
    "transport": False,
    "direction": False,
    "secret": False,
}
_EDGE_FIELDS = {
    "src": True,
    "dst": True,
    "kind": True,
    "confidence": True,
    "name": False,
    "path": False,
    "line": False,
}
_TOP_FIELDS = ("producer", "nodes", "edges")
_INTS = {"line_start", "line_end", "line"}
_BOOLS = {"secret"}
_MAX_LEN = {"signature": 200, "doc": 1000}
_DEFAULT_MAX_LEN = 1000
_PRODUCER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_KIND = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_TRANSPORT = re.compile(r"^[a-z][a-z0-9_.-]{0,39}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_RESERVED_KINDS = ("file", "module")  # the walker's and the resolver's own rows
_DIRECTIONS = ("consumes", "provides")


class BatchError(ValueError):
    """The first thing wrong with a batch, at a JSON path (`$.edges[2].confidence`)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass
class AdapterRun:
    """What the adapters of one repository gave: accepted rows, and one line per rejection."""

    nodes: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=NODE_COLS))
    edges: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=EDGE_COLS))
    accepted: list[dict] = field(default_factory=list)  # adapter, producer, nodes, edges
    rejected: list[str] = field(default_factory=list)
    note: str | None = None  # e.g. edges leaving a batch were not checked (no index)

    @property
    def ok(self) -> bool:
        return not self.rejected

    def to_dict(self) -> dict:
        return {"accepted": self.accepted, "rejected": self.rejected, "note": self.note}

    def lines(self) -> list[str]:
        out = [
            f"adapter accepted: {a['adapter']} (producer {a['producer']}: {a['nodes']} nodes, "
            f"{a['edges']} edges)"
            for a in self.accepted
        ]
        return out + [f"adapter rejected: {r}" for r in self.rejected]

    def __str__(self) -> str:
        if not self.accepted and not self.rejected:
            return f"no adapters in {ADAPTERS_DIR}/"
        lines = self.lines()
        return "\n".join([*lines, self.note] if self.note else lines)


def discover(root: str) -> list[str]:
    """Adapter files (repo-relative, sorted by name): `.py`, `.js`, `.sh` directly in the folder."""
    folder = os.path.join(root, ADAPTERS_DIR)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        f"{ADAPTERS_DIR}/{n}".replace(os.sep, "/")
        for n in names
        if os.path.splitext(n)[1] in INTERPRETERS
        and not n.startswith(".")
        and os.path.isfile(os.path.join(folder, n))
    ]


class _Launched:
    """One adapter process, started at once, its stdout and stderr read by two threads: the
    process runs while the caller goes on, and `finish` collects it."""

    def __init__(self, argv: list[str], cwd: str, timeout: float, max_output: int) -> None:
        self.tag = f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        self.deadline = time.monotonic() + timeout
        self.timeout, self.max_output = timeout, max_output
        self.out, self.err = bytearray(), bytearray()
        self.over = threading.Event()
        env = dict(os.environ, CTXFRAME_ROOT=cwd, CTXFRAME_ADAPTER_RUN=self.tag)
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            shell=False,
            start_new_session=True,
            preexec_fn=death_signal_preexec(),  # dies with us, even when we are SIGKILLed
        )
        self.threads = [
            threading.Thread(target=f, daemon=True) for f in (self._pump_out, self._pump_err)
        ]
        for t in self.threads:
            t.start()

    def kill(self) -> None:
        """SIGKILL the adapter's process group and every descendant carrying its tag."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        kill_tagged(self.tag)  # descendants that left the group (`setsid`) carry the tag

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        while chunk := self.proc.stdout.read(65536):
            if len(self.out) + len(chunk) > self.max_output:
                self.over.set()
                self.kill()
                break
            self.out.extend(chunk)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        while chunk := self.proc.stderr.read(65536):
            self.err.extend(chunk)
            del self.err[:-4096]

    def finish(self) -> tuple[int, bytes, str]:
        """Wait for the exit (the time limit counts from the start); returns (returncode,
        stdout, last stderr line); raises TimeoutError or OverflowError."""
        proc = self.proc
        try:
            # stdout reaches its end when the adapter exits: joining the reader wakes at once,
            # where Popen.wait(timeout) would poll with sleeps of up to 50 ms
            self.threads[0].join(max(0.0, self.deadline - time.monotonic()))
            proc.wait(timeout=max(0.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            proc.wait()
            self._close()
            raise TimeoutError(f"timed out after {self.timeout:g}s") from None
        except BaseException:  # Ctrl-C, or the caller going away: the whole tree goes too
            self.kill()
            raise
        self.kill()  # children it left behind still hold the pipes
        self._close()
        if self.over.is_set():
            raise OverflowError(f"oversize output (more than {self.max_output} bytes on stdout)")
        tail = self.err.decode("utf-8", "replace").strip().splitlines()
        return proc.returncode, bytes(self.out), (tail[-1][:300] if tail else "")

    def abandon(self) -> None:
        """Kill it and reap it: the index it ran for went away."""
        self.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        self._close()

    def _close(self) -> None:
        """Join the pipe readers (the pipes end once the tree is gone) and close the pipes."""
        for t in self.threads:
            t.join(timeout=2)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def kill_tagged(tag: str) -> None:
    """SIGKILL every process whose environment carries CTXFRAME_ADAPTER_RUN=tag (Linux /proc):
    an adapter's descendants, even those that started a session of their own."""
    needle = f"CTXFRAME_ADAPTER_RUN={tag}".encode()
    for _ in range(3):  # a dying parent may still fork: sweep again
        found = 0
        try:
            pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            return
        for pid in pids:
            if pid == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    if needle not in fh.read().split(b"\0"):
                        continue
                os.kill(pid, signal.SIGKILL)
                found += 1
            except (OSError, ValueError):
                continue
        if not found:
            return


def _loads(text: str):
    def pairs(items: list[tuple[str, object]]) -> dict:
        d: dict = {}
        for k, v in items:
            if k in d:
                raise ValueError(f"duplicate key {k!r} in an object")
            d[k] = v
        return d

    def constant(name: str):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def _typename(v: object) -> str:
    if v is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}.get(
        type(v), "object"
    )


def _check_fields(obj: object, path: str, spec: dict[str, bool]) -> dict:
    if not isinstance(obj, dict):
        raise BatchError(path, f"expected an object, got {_typename(obj)}")
    for key in obj:
        if key not in spec:
            raise BatchError(f"{path}.{key}", f"unknown field (allowed: {', '.join(spec)})")
    for key, required in spec.items():
        v = obj.get(key)
        where = f"{path}.{key}"
        if v is None:
            if required:
                raise BatchError(where, "required field is missing or null")
            continue
        if key in _INTS:
            if type(v) is not int:
                raise BatchError(where, f"expected an integer, got {_typename(v)}")
            if not 1 <= v <= 2**31 - 1:
                raise BatchError(where, f"expected a 1-based line number, got {v}")
        elif key in _BOOLS:
            if type(v) is not bool:
                raise BatchError(where, f"expected a boolean, got {_typename(v)}")
        else:
            if not isinstance(v, str):
                raise BatchError(where, f"expected a string, got {_typename(v)}")
            if required and not v.strip():
                raise BatchError(where, "must not be empty")
            limit = _MAX_LEN.get(key, _DEFAULT_MAX_LEN)
            if len(v) > limit:
                raise BatchError(where, f"longer than {limit} characters")
            if key != "doc" and _CONTROL.search(v):
                raise BatchError(where, "contains a control character")
    return obj


def _check_path(v: str | None, where: str) -> None:
    if v is None:
        return
    parts = v.split("/")
    if v.startswith("/") or "\\" in v or re.match(r"^[A-Za-z]:", v) or ".." in parts or "" in parts:
        raise BatchError(where, f"expected a repo-relative POSIX path, got {v!r}")


def validate(
    batch: object,
    graph_ids: set[str] | frozenset[str] | None,
    taken_ids: set[str] | None = None,
    taken_producers: set[str] | None = None,
) -> tuple[str, list[dict], list[dict]]:
    """Check one parsed batch; (producer, node rows, edge rows) or BatchError at the first fault.

    `graph_ids`: the ids of the graph ctxframe built (edges may point there; batch nodes may not
    reuse them); None skips the check of edges leaving the batch. `taken_ids`,
    `taken_producers`: what batches accepted earlier in this run already hold.
    """
    taken_ids = taken_ids or set()
    taken_producers = taken_producers or set()
    if not isinstance(batch, dict):
        raise BatchError("$", f"expected an object, got {_typename(batch)}")
    for key in batch:
        if key not in _TOP_FIELDS:
            raise BatchError(f"$.{key}", "unknown field (allowed: producer, nodes, edges)")
    producer = batch.get("producer")
    if not isinstance(producer, str):
        raise BatchError("$.producer", f"expected a string, got {_typename(producer)}")
    if not _PRODUCER.match(producer):
        raise BatchError("$.producer", f"{producer!r} does not match {_PRODUCER.pattern}")
    if producer == "ctxframe" or producer.startswith("ctxframe."):
        raise BatchError("$.producer", f"{producer!r} is reserved for ctxframe itself")
    if producer in taken_producers:
        raise BatchError("$.producer", f"{producer!r} is already used by another adapter")
    for key in ("nodes", "edges"):
        if not isinstance(batch.get(key), list):
            raise BatchError(f"$.{key}", f"expected an array, got {_typename(batch.get(key))}")

    nodes: list[dict] = []
    ids: set[str] = set()
    for i, raw in enumerate(batch["nodes"]):
        at = f"$.nodes[{i}]"
        n = _check_fields(raw, at, _NODE_FIELDS)
        nid = n["id"]
        if nid in ids:
            raise BatchError(f"{at}.id", f"duplicate id {nid!r} in the batch")
        if graph_ids is not None and nid in graph_ids:
            raise BatchError(f"{at}.id", f"id {nid!r} is already a node of the graph")
        if nid in taken_ids:
            raise BatchError(f"{at}.id", f"id {nid!r} already comes from another adapter")
        if not _KIND.match(n["kind"]):
            raise BatchError(f"{at}.kind", f"{n['kind']!r} does not match {_KIND.pattern}")
        if n["kind"] in _RESERVED_KINDS:
            raise BatchError(f"{at}.kind", f"{n['kind']!r} is reserved for ctxframe's own rows")
        if n.get("transport") is not None and not _TRANSPORT.match(n["transport"]):
            raise BatchError(
                f"{at}.transport", f"{n['transport']!r} does not match {_TRANSPORT.pattern}"
            )
        if n.get("direction") is not None and n["direction"] not in _DIRECTIONS:
            raise BatchError(
                f"{at}.direction", f"expected consumes, provides or null, got {n['direction']!r}"
            )
        _check_path(n.get("path"), f"{at}.path")
        start, end = n.get("line_start"), n.get("line_end")
        if end is not None and (start is None or end < start):
            raise BatchError(f"{at}.line_end", "needs line_start, and must not be before it")
        ids.add(nid)
        nodes.append(
            {
                "id": nid,
                "kind": n["kind"],
                "label": n["label"],
                "qualname": n.get("qualname") or n["label"],
                "language": None,
                "path": n.get("path"),
                "line_start": start,
                "line_end": end if end is not None else start,
                "signature": n.get("signature"),
                "doc": n.get("doc"),
                "parent": None,
                "transport": n.get("transport"),
                "direction": n.get("direction"),
                "secret": n.get("secret"),
                "producer": producer,
            }
        )

    edges: list[dict] = []
    for i, raw in enumerate(batch["edges"]):
        at = f"$.edges[{i}]"
        e = _check_fields(raw, at, _EDGE_FIELDS)
        for end_ in ("src", "dst"):
            v = e[end_]
            if v not in ids and (graph_ids is not None and v not in graph_ids):
                raise BatchError(
                    f"{at}.{end_}", f"{v!r} is a node neither of the batch nor of the graph"
                )
        if not _KIND.match(e["kind"]):
            raise BatchError(f"{at}.kind", f"{e['kind']!r} does not match {_KIND.pattern}")
        if e["confidence"] not in CONFIDENCES:
            raise BatchError(
                f"{at}.confidence",
                f"expected one of {', '.join(CONFIDENCES)}, got {e['confidence']!r}",
            )
        _check_path(e.get("path"), f"{at}.path")
        edges.append(
            {
                "src": e["src"],
                "dst": e["dst"],
                "kind": e["kind"],
                "confidence": e["confidence"],
                "name": e.get("name") or e["dst"],
                "path": e.get("path"),
                "line": e.get("line"),
                "producer": producer,
            }
        )
    return producer, nodes, edges


def _launch(root: str, rel: str, timeout: float, max_output: int) -> _Launched:
    """Start one adapter; raises BatchError (path `$`) when it cannot be started."""
    interpreter = INTERPRETERS[os.path.splitext(rel)[1]]
    exe = shutil.which(interpreter) if not os.path.isabs(interpreter) else interpreter
    if exe is None:
        raise BatchError("$", f"interpreter {interpreter!r} not found on PATH")
    try:
        return _Launched([exe, os.path.join(root, rel)], root, timeout, max_output)
    except OSError as exc:
        raise BatchError("$", f"cannot run {interpreter}: {exc.strerror or exc}") from None


def _batch_of(launched: _Launched) -> object:
    """Wait for a started adapter and parse its stdout; raises BatchError (path `$`)."""
    try:
        code, out, err = launched.finish()
    except (TimeoutError, OverflowError) as exc:
        raise BatchError("$", str(exc)) from None
    if code != 0:
        raise BatchError("$", f"exited with status {code}" + (f": {err}" if err else ""))
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError:
        raise BatchError("$", "stdout is not UTF-8") from None
    if not text.strip():
        raise BatchError("$", "printed nothing on stdout (expected one Batch JSON)")
    try:
        return _loads(text)
    except ValueError as exc:
        raise BatchError("$", f"stdout is not one JSON document: {exc}") from None


def run_one(
    root: str, rel: str, *, timeout: float = TIMEOUT, max_output: int = MAX_OUTPUT
) -> object:
    """Run one adapter and parse its stdout; raises BatchError (path `$`) when that fails."""
    return _batch_of(_launch(root, rel, timeout, max_output))


class Started:
    """Every adapter of a repository, started at once so that they run while the index parses
    and resolves; `run_adapters(..., started=)` collects them. A context manager: leaving it
    kills and reaps whatever was not collected (the index failed or was interrupted)."""

    def __init__(self, root: str, *, timeout: float = TIMEOUT, max_output: int = MAX_OUTPUT):
        self.runs: list[tuple[str, _Launched | BatchError]] = []
        try:
            for rel in discover(root):
                try:
                    self.runs.append((rel, _launch(root, rel, timeout, max_output)))
                except BatchError as exc:
                    self.runs.append((rel, exc))
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Started:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def collect(self) -> list[tuple[str, object | BatchError]]:
        """(adapter, its parsed Batch or the BatchError) in discovery order."""
        out: list[tuple[str, object | BatchError]] = []
        for rel, launched in self.runs:  # on Ctrl-C, close() kills what is left
            if isinstance(launched, _Launched):
                try:
                    launched = _batch_of(launched)
                except BatchError as exc:
                    launched = exc
            out.append((rel, launched))
        self.runs = []
        return out

    def close(self) -> None:
        """Kill and reap every adapter not collected."""
        runs, self.runs = self.runs, []
        for _, launched in runs:
            if isinstance(launched, _Launched):
                launched.abandon()


def run_adapters(
    root: str,
    graph_ids: set[str] | frozenset[str] | None,
    *,
    timeout: float = TIMEOUT,
    max_output: int = MAX_OUTPUT,
    started: Started | None = None,
) -> AdapterRun:
    """Run every adapter of the repository at `root` (or collect those `started` earlier),
    validate, keep the accepted batches."""
    run = AdapterRun()
    if graph_ids is None:
        run.note = (
            "no index yet: edges to nodes outside a batch were not checked (run ctxframe index)"
        )
    nodes: list[dict] = []
    edges: list[dict] = []
    taken_ids: set[str] = set()
    producers: set[str] = set()
    own = started is None
    if own:
        started = Started(root, timeout=timeout, max_output=max_output)
    try:
        results = started.collect()
    finally:
        if own:
            started.close()
    for rel, batch in results:
        try:
            if isinstance(batch, BatchError):
                raise batch
            producer, n, e = validate(batch, graph_ids, taken_ids, producers)
        except BatchError as exc:
            run.rejected.append(f"{rel}: {exc.path}: {exc.message}")
            continue
        producers.add(producer)
        taken_ids.update(r["id"] for r in n)
        nodes.extend(n)
        edges.extend(e)
        run.accepted.append(
            {"adapter": rel, "producer": producer, "nodes": len(n), "edges": len(e)}
        )
    run.nodes = pl.DataFrame(nodes, schema=NODE_COLS).sort("id")
    run.edges = (
        pl.DataFrame(edges, schema=EDGE_COLS)
        .sort(pl.all(), nulls_last=True)
        .unique(["src", "dst", "kind", "name", "line"], keep="first", maintain_order=True)
    )
    return run

"""Shared helpers for the ctxframe benchmarks.

Everything that touches the outside world lives here: fetching the corpora by package name into
a cache outside the repo, measuring a child process (wall time, peak RSS), locating the
``ctxframe`` CLI and the ``codegraph`` peer, ctags, plain-text tables and JSON output.

The cache defaults to ``~/.cache/ctxframe-bench`` and can be moved with ``CTXFRAME_BENCH_CACHE``.
Nothing downloaded is ever copied into the repository.

Every benchmark run gets its own empty extraction cache (``CTXFRAME_CACHE_DIR``, deleted at
exit), so a cold index is cold whatever ran before; set ``CTXFRAME_CACHE_DIR`` to measure
with a given one.
"""

from __future__ import annotations

import atexit
import compileall
import contextlib
import dataclasses
import datetime as dt
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
CODEGRAPH_PACKAGE = "@colbymchenry/codegraph"
SAMPLE_INTERVAL_S = 0.05

# Environment for the codegraph peer: no telemetry, no background daemon, no network fallback.
CODEGRAPH_ENV = {
    "CODEGRAPH_TELEMETRY": "0",
    "DO_NOT_TRACK": "1",
    "CODEGRAPH_NO_DAEMON": "1",
    "CODEGRAPH_NO_DOWNLOAD": "1",
    "NO_COLOR": "1",
}


def _private_extraction_cache() -> None:
    """An empty extraction cache for this run (ctxframe._store.xcache), removed at exit."""
    if "CTXFRAME_CACHE_DIR" in os.environ:
        return
    where = tempfile.mkdtemp(prefix="ctxframe-bench-xcache-")
    os.environ["CTXFRAME_CACHE_DIR"] = where
    atexit.register(shutil.rmtree, where, ignore_errors=True)


_private_extraction_cache()


class Unavailable(RuntimeError):
    """A tool or corpus needed by a benchmark step cannot be used; the message says why."""


@dataclasses.dataclass(frozen=True)
class Corpus:
    """A real code base fetched from PyPI as an sdist."""

    name: str
    version: str
    edit_target: str  # path suffix of the mid-sized .py file edited for the re-index run

    @property
    def key(self) -> str:
        """Directory name of the extracted tree: ``<name>-<version>``."""
        return f"{self.name}-{self.version}"


CORPORA = {
    "django": Corpus("django", "5.1", "django/db/models/query.py"),
    "requests": Corpus("requests", "2.32.3", "requests/models.py"),
}


# --------------------------------------------------------------------------- cache and corpora


def cache_dir() -> Path:
    """Return the download cache, creating it; ``CTXFRAME_BENCH_CACHE`` overrides the default."""
    env = os.environ.get("CTXFRAME_BENCH_CACHE")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "ctxframe-bench"
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


def _find_sdist(cache: Path, corpus: Corpus) -> Path | None:
    """Return the cached sdist tarball of ``corpus`` (file names differ in case), if any."""
    wanted = f"{corpus.key}.tar.gz".lower()
    for path in cache.glob("*.tar.gz"):
        if path.name.lower() == wanted:
            return path
    return None


def _download_sdist(cache: Path, corpus: Corpus) -> Path:
    """Download the sdist with pip (no deps, no wheels) into the cache and return its path."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        f"{corpus.name}=={corpus.version}",
        "-d",
        str(cache),
    ]
    log(f"downloading {corpus.key} sdist into {cache}")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    tarball = _find_sdist(cache, corpus)
    if proc.returncode != 0 or tarball is None:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise Unavailable(f"pip download {corpus.key} failed: {tail[0]}")
    return tarball


def unpack(archive: Path, into: Path) -> None:
    """A wheel/zip or a tarball's members into ``into``, paths as stored."""
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")


def extract_archive(archive: Path, dest: Path) -> None:
    """Extract an sdist (its single top folder becomes ``dest``) or a wheel/zip (as is) into
    ``dest`` atomically: built in a staging folder beside it, then renamed."""
    staging = Path(tempfile.mkdtemp(prefix=".extract-", dir=dest.parent))
    try:
        unpack(archive, staging)
        tops = list(staging.iterdir())
        root = tops[0] if len(tops) == 1 and tops[0].is_dir() else staging
        root.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already when it became dest


def ensure_corpus(corpus: Corpus) -> Path:
    """Return ``CACHE/src/<name>-<version>/``, downloading and extracting it when missing."""
    cache = cache_dir()
    dest = cache / "src" / corpus.key
    if dest.is_dir():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tarball = _find_sdist(cache, corpus) or _download_sdist(cache, corpus)
    log(f"extracting {tarball.name} -> {dest}")
    extract_archive(tarball, dest)
    return dest


def store_for(tree: Path) -> Path:
    """Where the index of an eval tree lives: inside it (``TREE/.ctxframe/graph``), or, with
    ``CTXFRAME_BENCH_STORES`` set, under that folder (``<folder>/<parent>-<tree>``) — so
    branches with different store layouts can share the downloaded trees."""
    env = os.environ.get("CTXFRAME_BENCH_STORES")
    if not env:
        return tree / ".ctxframe" / "graph"
    return Path(env).expanduser().resolve() / f"{tree.parent.parent.name}-{tree.name}"


def open_or_index(tree: Path):
    """The stored index of an eval tree (:func:`store_for`), made (from scratch when the stored
    one is of another layout) when missing or unusable. Every contract table is read once, so
    a store written by another build is rebuilt here rather than failing half-way through a run."""
    import ctxframe as cf

    store = store_for(tree)
    if store.exists():
        try:
            g = cf.open(str(tree), store=str(store))
            _read = (g.nodes, g.edges, g.tokens, g.files)
            return g
        except cf.CtxframeError as exc:
            log(f"{tree.name}: stored index not usable ({exc}); indexing again")
    t0 = time.perf_counter()
    g = cf.index(str(tree), store=str(store), progress=False, rebuild=True)
    log(f"indexed {tree.name}: {g.nodes.height:,} nodes in {time.perf_counter() - t0:.1f} s")
    return g


def eval_data_dir() -> Path:
    """The labelled eval data, ``../shared/eval`` relative to the repo root.

    ``CTXFRAME_EVAL_DATA`` overrides it; from a git worktree nested deeper (``/work/wt/NAME``)
    the first ``shared/eval`` found walking up from the repo root is used. Returns the default
    path even when it does not exist (callers skip with a message then)."""
    env = os.environ.get("CTXFRAME_EVAL_DATA")
    if env:
        return Path(env).expanduser()
    repo = BENCH_DIR.parent
    for parent in repo.parents:
        candidate = parent / "shared" / "eval"
        if candidate.is_dir():
            return candidate
    return repo.parent / "shared" / "eval"


def fresh_copy(src: Path, dest: Path) -> Path:
    """Copy a pristine tree to ``dest`` (removed first) so stores and edits never touch ``src``."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, symlinks=True)
    return dest


def pick_edit_target(tree: Path, suffix: str) -> Path:
    """Return the ``.py`` file whose path ends with ``suffix``, else the largest ``.py`` file."""
    candidates = sorted(p for p in tree.rglob("*.py") if p.as_posix().endswith("/" + suffix))
    if candidates:
        return candidates[0]
    files = [p for p in tree.rglob("*.py") if p.is_file()]
    if not files:
        raise Unavailable(f"no .py file under {tree}")
    return max(files, key=lambda p: p.stat().st_size)


def append_function(path: Path) -> None:
    """Append a small new top-level function to a Python file (the 1-file re-index edit)."""
    stamp = time.time_ns()
    text = (
        f"\n\ndef _ctxframe_bench_added_{stamp}(value):\n"
        '    """Added by bench/index_bench.py to trigger a one-file re-index."""\n'
        "    return value + 1\n"
    )
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def add_call(path: Path) -> None:
    """Append a small function calling the last function append_function added: a new call
    site, so Python's value flow runs again (a definition or body edit does not)."""
    text = path.read_text(encoding="utf-8")
    callee = text.rpartition("\ndef _ctxframe_bench_added_")[2].split("(", 1)[0]
    if not callee.isdigit():
        raise ValueError(f"{path}: no function added by append_function to call")
    stamp = time.time_ns()
    with path.open("a", encoding="utf-8") as handle:
        handle.write(
            f"\n\ndef _ctxframe_bench_caller_{stamp}(value):\n"
            f"    return _ctxframe_bench_added_{callee}(value)\n"
        )


def retarget_call(path: Path) -> None:
    """Point the call of the last function add_call appended at the function append_function
    added before the one it calls (back again the next time): a call site's target changes."""
    text = path.read_text(encoding="utf-8")
    head, sep, tail = text.rpartition("\ndef _ctxframe_bench_caller_")
    if not sep:
        raise ValueError(f"{path}: no call added by add_call to retarget")
    added = re.findall(r"^def (_ctxframe_bench_added_\d+)\(", text, flags=re.M)
    called = re.search(r"return (_ctxframe_bench_added_\d+)\(", tail)
    if len(added) < 2 or called is None:
        raise ValueError(f"{path}: two functions added by append_function needed to retarget")
    other = added[-2] if called.group(1) == added[-1] else added[-1]
    tail = tail[: called.start(1)] + other + tail[called.end(1) :]
    path.write_text(head + sep + tail, encoding="utf-8")


def add_import(path: Path) -> None:
    """A new module-level import (of the standard library, under a fresh name) above the
    file's first import, else at its top: every line below moves."""
    text = path.read_text(encoding="utf-8")
    line = f"import json as _ctxframe_bench_json_{time.time_ns()}\n"
    first = re.search(r"^(?:import|from) ", text, flags=re.M)
    at = first.start() if first else 0
    path.write_text(text[:at] + line + text[at:], encoding="utf-8")


def edit_body(path: Path) -> None:
    """Change the body of the last function append_function added (no definition changes)."""
    text = path.read_text(encoding="utf-8")
    head, sep, tail = text.rpartition("    return value + ")
    if not sep:
        raise ValueError(f"{path}: no function added by append_function to edit")
    number = int(tail.split()[0]) + 1 if tail.split() else 1
    path.write_text(f"{head}{sep}{number}\n", encoding="utf-8")


# --------------------------------------------------------------------------- measurement


@dataclasses.dataclass
class Measurement:
    """Wall time, CPU time and memory of one child process tree."""

    cmd: list[str]
    wall_s: float
    user_s: float
    sys_s: float
    peak_single_mb: float  # ru_maxrss from wait4: the largest single process of the tree
    peak_tree_mb: float  # max over 50 ms samples of the summed VmRSS of the whole tree
    tree_max_procs: int
    returncode: int | None
    timed_out: bool
    stdout: str = dataclasses.field(repr=False, default="")
    stderr: str = dataclasses.field(repr=False, default="")

    @property
    def ok(self) -> bool:
        """True when the command finished in time with exit status 0."""
        return self.returncode == 0 and not self.timed_out

    def failure(self) -> str:
        """One line saying why the command failed."""
        if self.timed_out:
            return f"timed out after {self.wall_s:.0f} s"
        lines = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return f"exit {self.returncode}: {lines[-1][:200] if lines else 'no output'}"

    def to_json(self) -> dict[str, Any]:
        """The figures as a JSON-ready dict (output text left out)."""
        return {
            "cmd": self.cmd,
            "wall_s": round(self.wall_s, 4),
            "user_s": round(self.user_s, 3),
            "sys_s": round(self.sys_s, 3),
            "peak_rss_single_mb": round(self.peak_single_mb, 1),
            "peak_rss_tree_sampled_mb": round(self.peak_tree_mb, 1),
            "tree_max_procs": self.tree_max_procs,
            "returncode": self.returncode,
            "timed_out": self.timed_out,
        }


def _proc_links() -> dict[int, tuple[int, int]]:
    """Map every visible pid to ``(ppid, session id)`` read from ``/proc/<pid>/stat``."""
    links: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        links[int(entry.name)] = (int(fields[1]), int(fields[3]))
    return links


def _tree_pids(root: int) -> set[int]:
    """Pids of ``root``, its descendants, and anything left in its session."""
    links = _proc_links()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _sid) in links.items():
        children.setdefault(ppid, []).append(pid)
    tree = {pid for pid, (_ppid, sid) in links.items() if sid == root}
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in links:
            tree.add(pid)
        stack.extend(c for c in children.get(pid, ()) if c not in tree)
    return tree


def _vm_rss_kb(pid: int) -> int:
    """``VmRSS`` of one process in kB (0 when gone or a zombie)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeSampler(threading.Thread):
    """Background thread summing the VmRSS of a process tree every ``SAMPLE_INTERVAL_S``."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak_kb = 0
        self.max_procs = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        """Sample until stopped."""
        while True:
            self.sample()
            if self._stop_event.wait(SAMPLE_INTERVAL_S):
                return

    def sample(self) -> None:
        """Take one sample of the tree."""
        pids = _tree_pids(self.root)
        total = sum(_vm_rss_kb(pid) for pid in pids)
        self.peak_kb = max(self.peak_kb, total)
        self.max_procs = max(self.max_procs, len(pids))

    def stop(self) -> None:
        """Ask the thread to finish and wait for it."""
        self._stop_event.set()
        self.join()


def _kill_group(pgid: int) -> None:
    """SIGKILL the process group of a child this module started (ignore if already gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def run_measured(
    cmd: Sequence[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> Measurement:
    """Run ``cmd`` with no stdin and measure it.

    Wall time is taken around ``os.wait4``; its ``ru_maxrss`` is the peak RSS of the largest
    single process in the child's tree (Linux keeps the max over reaped descendants). A sampler
    thread also sums ``VmRSS`` over the whole tree (pool workers included) every 50 ms.
    The child gets its own session, so on timeout the whole group is killed.
    """
    full_env = {**os.environ, **(env or {})}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        sampler = TreeSampler(proc.pid)
        sampler.start()
        timed_out = threading.Event()

        def on_timeout() -> None:
            timed_out.set()
            _kill_group(proc.pid)

        timer = threading.Timer(timeout, on_timeout) if timeout else None
        if timer:
            timer.start()
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if timer:
            timer.cancel()
        sampler.stop()
        _kill_group(proc.pid)  # leftovers of our own child's group, e.g. a stray daemon
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    return Measurement(
        cmd=list(cmd),
        wall_s=wall,
        user_s=usage.ru_utime,
        sys_s=usage.ru_stime,
        peak_single_mb=usage.ru_maxrss / 1024,
        peak_tree_mb=sampler.peak_kb / 1024,
        tree_max_procs=sampler.max_procs,
        returncode=proc.returncode,
        timed_out=timed_out.is_set(),
        stdout=stdout,
        stderr=stderr,
    )


# --------------------------------------------------------------------------- ctxframe


def ctxframe_cmd() -> list[str]:
    """The ctxframe CLI: the venv's console script if installed, else ``python -m ctxframe``."""
    script = Path(sys.executable).parent / "ctxframe"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    found = shutil.which("ctxframe")
    if found and Path(found).resolve().parent == Path(sys.executable).resolve().parent:
        return [found]
    return [sys.executable, "-m", "ctxframe"]


def compile_ctxframe() -> None:
    """Byte-compile the ctxframe package, as ``pip install`` does for a regular install: from
    an editable install (or with PYTHONDONTWRITEBYTECODE set) every run would otherwise compile
    each module it imports again, and every timing would include that."""
    spec = importlib.util.find_spec("ctxframe")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(folder, quiet=1)


def check_ctxframe_cli(subcommand: str = "index") -> list[str]:
    """Return the CLI prefix after checking ``<cli> <subcommand> --help`` works.

    Raises ``Unavailable`` with a one-line reason otherwise.
    """
    cmd = ctxframe_cmd()
    compile_ctxframe()
    try:
        proc = subprocess.run(
            [*cmd, subcommand, "--help"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"ctxframe CLI not runnable ({' '.join(cmd)}): {exc}") from exc
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        reason = lines[-1] if lines else f"exit {proc.returncode}"
        raise Unavailable(f"ctxframe CLI '{subcommand}' not available ({' '.join(cmd)}): {reason}")
    return cmd


def ctxframe_version() -> str | None:
    """Installed ctxframe distribution version, or None."""
    try:
        return importlib.metadata.version("ctxframe")
    except importlib.metadata.PackageNotFoundError:
        return None


def parse_json_output(text: str) -> Any:
    """Parse JSON printed by a CLI, tolerating log lines before or after it."""
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start >= 0:
        try:
            return json.loads(text[start:])
        except ValueError:
            pass
    return None


def find_count(data: Any, key: str) -> int | None:
    """Find an integer count named ``key`` anywhere in parsed JSON (breadth first)."""
    queue = [data]
    while queue:
        item = queue.pop(0)
        if isinstance(item, dict):
            value = item.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, list):
                return len(value)
            queue.extend(item.values())
        elif isinstance(item, list):
            queue.extend(x for x in item if isinstance(x, dict | list))
    return None


def store_counts(store: Path) -> dict[str, int | None]:
    """Row counts of ``files``, ``nodes`` and ``edges`` tables in a ctxframe store (polars)."""
    import polars as pl

    counts: dict[str, int | None] = {}
    for table in ("files", "nodes", "edges"):
        single = store / f"{table}.parquet"
        source = single if single.is_file() else store / table / "*.parquet"
        try:
            counts[table] = int(pl.scan_parquet(source).select(pl.len()).collect().item())
        except Exception:  # any read failure just means "unknown"
            counts[table] = None
    return counts


def find_store(root: Path) -> Path:
    """The ctxframe store under ``root``: the folder holding ``nodes.parquet`` (or ``nodes/``)."""
    base = root / ".ctxframe"
    for candidate in (base / "graph", base):
        if (candidate / "nodes.parquet").exists() or (candidate / "nodes").is_dir():
            return candidate
    found = sorted(base.rglob("nodes.parquet")) if base.is_dir() else []
    return found[0].parent if found else base


def ctxframe_counts(stdout: str, root: Path, store: Path | None = None) -> dict[str, Any]:
    """Files/nodes/edges counts from the CLI's JSON, falling back to the Parquet store."""
    data = parse_json_output(stdout)
    counts: dict[str, Any] = {k: find_count(data, k) for k in ("files", "nodes", "edges")}
    counts["source"] = "cli-json"
    if any(v is None for k, v in counts.items() if k != "source"):
        fallback = store_counts(store or find_store(root))
        for key, value in fallback.items():
            if counts.get(key) is None:
                counts[key] = value
        counts["source"] = "cli-json+parquet"
    return counts


# --------------------------------------------------------------------------- peers


def _apt_install(package: str) -> None:
    """``apt-get update`` then install one Debian package (root machine)."""
    log(f"apt-get install {package}")
    subprocess.run(["apt-get", "update"], capture_output=True, check=False)
    subprocess.run(
        ["apt-get", "install", "-y", package],
        capture_output=True,
        check=False,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )


def ctags_version() -> str | None:
    """First line of ``ctags --version`` when it is Universal Ctags, else None."""
    if not shutil.which("ctags"):
        return None
    proc = subprocess.run(["ctags", "--version"], capture_output=True, text=True, check=False)
    first = proc.stdout.splitlines()[0] if proc.stdout else ""
    return first if "Universal Ctags" in first else None


def ensure_ctags() -> str:
    """Return the Universal Ctags version line, installing ``universal-ctags`` if needed."""
    version = ctags_version()
    if version is None:
        _apt_install("universal-ctags")
        version = ctags_version()
    if version is None:
        raise Unavailable("universal-ctags is not installed and apt-get could not install it")
    return version


def codegraph_bin() -> Path:
    """Path of the codegraph launcher inside ``CACHE/npm``."""
    return cache_dir() / "npm" / "node_modules" / ".bin" / "codegraph"


def ensure_codegraph() -> tuple[Path, str]:
    """Install the codegraph peer once into ``CACHE/npm``; return (launcher, version)."""
    binary = codegraph_bin()
    if not binary.exists():
        if not shutil.which("npm"):
            raise Unavailable("npm not found")
        log(f"npm install {CODEGRAPH_PACKAGE} into {binary.parents[2]}")
        proc = subprocess.run(
            [
                "npm",
                "install",
                "--no-fund",
                "--no-audit",
                "--prefix",
                str(binary.parents[2]),
                CODEGRAPH_PACKAGE,
            ],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if proc.returncode != 0 or not binary.exists():
            lines = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
            raise Unavailable(f"npm install failed: {lines[-1] if lines else proc.returncode}")
    proc = subprocess.run(
        [str(binary), "--version"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **CODEGRAPH_ENV},
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise Unavailable(f"codegraph --version failed: {proc.stderr.strip()[:200]}")
    return binary, proc.stdout.strip()


def codegraph_status(binary: Path, tree: Path) -> dict[str, Any]:
    """File/node/edge counts from ``codegraph status -j TREE`` (empty dict on failure)."""
    proc = subprocess.run(
        [str(binary), "status", "-j", str(tree)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **CODEGRAPH_ENV},
        timeout=300,
        check=False,
    )
    data = parse_json_output(proc.stdout)
    if not isinstance(data, dict):
        return {}
    return {
        "files": data.get("fileCount"),
        "nodes": data.get("nodeCount"),
        "edges": data.get("edgeCount"),
    }


def indexed_copy_dir(tool: str, corpus: Corpus) -> Path:
    """Where a persistent indexed copy of a corpus lives: ``CACHE/indexed/<tool>/<key>``."""
    return cache_dir() / "indexed" / tool / corpus.key


# --------------------------------------------------------------------------- reporting


def log(message: str) -> None:
    """Progress message on stderr."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _first_line(cmd: Sequence[str]) -> str | None:
    """First output line of a command, or None if it cannot run."""
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0] if lines else None


def _cpu_model() -> str | None:
    """CPU model name from /proc/cpuinfo."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _mem_total_mb() -> int | None:
    """Total memory in MB from /proc/meminfo."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def machine_info() -> dict[str, Any]:
    """Facts about the machine and tool versions, stored with every result file."""
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "nproc": len(os.sched_getaffinity(0)),
        "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],  # other work skews timings
        "cpu": _cpu_model(),
        "mem_total_mb": _mem_total_mb(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "ctxframe": ctxframe_version(),
        "ctxframe_cmd": ctxframe_cmd(),
        "ctags": ctags_version(),
        "node": _first_line(["node", "--version"]),
    }


def default_out(prefix: str) -> Path:
    """``bench/results/<prefix>-<date>.json``."""
    stamp = dt.datetime.now().strftime("%Y-%m-%d-%H%M%S")
    return RESULTS_DIR / f"{prefix}-{stamp}.json"


def write_json(path: Path, data: Any) -> None:
    """Write pretty JSON, creating the parent folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    log(f"wrote {path}")


def fmt(value: Any, digits: int = 2) -> str:
    """Format a table cell: floats to ``digits``, None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain aligned text table: first column left-aligned, the rest right-aligned."""
    cells = [[str(h) for h in headers]] + [[fmt(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator`` or None when either is missing or zero."""
    if not numerator or not denominator:
        return None
    return numerator / denominator


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))  # ceil without math import
    return ordered[int(rank) - 1]


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)

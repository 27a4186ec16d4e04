"""The history tables (`commits`, `changes`: ctxframe._history) in the store's versions.

An index run starts `HistoryRun` as soon as it has the previous version: a thread decides
what to do (ctxframe._history.update.plan) and reads the new commits while the files are
parsed, and the run puts the tables (or links the stored ones) into its version before it
commits. A long read — a first index or a rewritten history of more than `INLINE_MAX`
commits — would hold the index up for seconds (numpy's 41,819 commits: `git log --numstat`
takes 14 s of one core), so it goes to a background job instead, started once the index
has committed its version (not beside its extraction, which has the cores): a process of its
own, at a lower priority, that reads the history and then, under the writer lock, commits a
version holding every table of the current one plus the history (`pending` in the
meantime, and `wait_history` waits for it).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time

import polars as pl

from ctxframe._history import update as _update
from ctxframe._history.settings import HistorySettings
from ctxframe._store import tables as _tables

HISTORY_TABLES = ("commits", "changes")
INLINE_MAX = 1000  # commits an index run reads itself; more go to a background job
JOB = ".history-job.json"  # in the store: the background job's pid and the head it reads
JOB_LOG = ".history-job.log"  # its errors, if any (the last job's)
_NICE = 10


def inline_max() -> int:
    try:
        return int(os.environ.get("CTXFRAME_HISTORY_INLINE_MAX", INLINE_MAX))
    except ValueError:
        return INLINE_MAX


def stored_state(snap: _tables.Snapshot | None) -> dict | None:
    """The history state a version records, None without history tables."""
    if snap is None or not snap.has("commits") or not snap.has("changes"):
        return None
    got = snap.meta.get("history")
    return got if isinstance(got, dict) else None


class HistoryRun:
    """The history part of one index run (see the module's doc)."""

    def __init__(self, root: str, store: str, prev: _tables.Snapshot | None,
                 settings: HistorySettings, head_sha: str | None):  # fmt: skip
        self.root, self.store, self.prev, self.settings = root, store, prev, settings
        self.head_sha = head_sha
        self.stored = stored_state(prev)
        self.plan: _update.Plan | None = None
        self.frames: tuple[pl.DataFrame, pl.DataFrame] | None = None
        self.state: dict | None = None
        self.pending = False
        self.to_read = 0  # commits this run reads (or leaves to the background job)
        self.read_count = 0  # commits it read itself
        self.error: str | None = None
        self._planned = threading.Event()
        self._thread = threading.Thread(target=self._work, name="ctxframe-history", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            p = self.plan = _update.plan(self.root, self.settings, self.stored, self.head_sha)
        except Exception as exc:  # git missing or failing: the index goes on without history
            self.plan = _update.Plan(_update.NONE, reason=f"history not read: {exc}")
            self.error = str(exc)
            return
        finally:
            self._planned.set()
        try:
            if p.action not in (_update.APPEND, _update.FULL):
                return
            self.to_read = _update.to_read(self.root, p, self.settings)
            if self.to_read > inline_max():  # started by `finish`: off the index's cores
                self.pending = True
                return
            commits, changes, self.state = _update.read(
                self.root, p, self.settings, stored=self._stored_frames
            )
            self.frames = (commits, changes)
            self.read_count = self.to_read
        except Exception as exc:
            self.error = f"history not read: {exc}"

    def start_pending(self) -> None:
        """After the index committed its version: start the background read it left."""
        if self.pending and self.plan is not None and self.plan.head is not None:
            self.pending = start_job(self.root, self.store, self.settings, self.plan.head.sha)

    def _stored_frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        assert self.prev is not None
        return self.prev.read("commits"), self.prev.read("changes")

    def changes_store(self) -> bool:
        """Whether this run has history to write although no file changed (waits for the
        plan only, not for a read)."""
        self._planned.wait()
        p = self.plan
        if p is None or p.action == _update.KEEP:
            return False
        if p.action in (_update.OFF, _update.NONE):
            return self.stored is not None
        return True

    def finish(self, staged: _tables.Staging, meta: dict) -> None:
        """Put the history tables into the new version (or link the stored ones) and record
        their state in `meta`."""
        self._thread.join()
        p = self.plan
        keep = self.stored is not None and self.prev is not None
        if self.frames is not None:
            commits, changes = self.frames
            staged.put({"commits": commits, "changes": changes})
            meta["history"] = self.state
            return
        if p is not None and p.action in (_update.OFF, _update.NONE):
            return  # no tables: off, or not a repository
        if keep:
            staged.keep(list(HISTORY_TABLES))
            meta["history"] = dict(self.stored or {})
        if self.pending:  # the job starts once the version is committed (`start_pending`)
            meta["history"] = {**meta.get("history", {}), "pending": p.head.sha}
        elif self.error and keep:
            meta["history"]["error"] = self.error


# -- the background job --------------------------------------------------------------------------


def start_job(root: str, store: str, settings: HistorySettings, head: str) -> bool:
    """Start the background job reading the history at `head` (unless one is at it)."""
    running = job(store)
    if running is not None and running.get("head") == head:
        return True
    os.makedirs(store, exist_ok=True)
    args = {"root": root, "store": store, "head": head, "settings": settings.__dict__}
    try:
        with open(os.path.join(store, JOB_LOG), "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "ctxframe._store.history", json.dumps(args)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True, close_fds=True,
            )  # fmt: skip
    except OSError:
        return False
    _write_job(store, {"pid": proc.pid, "head": head, "started": time.time()})
    return True


def _write_job(store: str, info: dict) -> None:
    tmp = os.path.join(store, f"{JOB}.{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(info, fh)
    os.replace(tmp, os.path.join(store, JOB))


def job(store: str) -> dict | None:
    """The running background job's record, None when there is none (or it died)."""
    try:
        with open(os.path.join(store, JOB), encoding="utf-8") as fh:
            info = json.load(fh)
    except (OSError, ValueError):
        return None
    pid = info.get("pid") if isinstance(info, dict) else None
    if not isinstance(pid, int) or not _tables._pid_alive(pid):
        return None
    with contextlib.suppress(OSError):  # a finished child of this process: reap it
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return None
    return info


def wait_history(store: str, timeout: float | None = None) -> bool:
    """Wait for the store's background history job; False when it still runs at `timeout`."""
    end = None if timeout is None else time.monotonic() + timeout
    while job(store) is not None:
        if end is not None and time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def run_job(root: str, store: str, head: str, settings: HistorySettings) -> str:
    """Read the history at `head` and commit it into a version holding every table of the
    current one; what it did, in a word."""
    from ctxframe._core.schema import SCHEMA_VERSION
    from ctxframe._store.lock import writer_lock

    p = _update.plan(root, settings, None)
    if p.action != _update.FULL or p.head is None or p.head.sha != head:
        return "moved"  # HEAD moved on: the next index reads it
    commits, changes, state = _update.read(root, p, settings, nice=_NICE)
    with writer_lock(store, wait=True):
        snap = _tables.Snapshot(store)
        current = snap.meta.get("history")
        if snap.meta.get("schema_version") != SCHEMA_VERSION:
            return "other schema"
        if isinstance(current, dict) and not current.get("pending") and stored_state(snap):
            return "written meanwhile"
        names = sorted({i.get("table") for i in snap.parts.values()} - set(HISTORY_TABLES))
        meta = {k: v for k, v in snap.meta.items()
                if k not in ("schema_version", "version", "parts", "part_bounds")}  # fmt: skip
        meta["history"] = state
        with _tables.Staging(store, snap) as staged:
            staged.keep(names)
            staged.put({"commits": commits, "changes": changes})
            _link_caches(snap.dir, staged.tmp)
            staged.commit(meta)
    return "written"


def _link_caches(version: str, staging: str) -> None:
    """The derived caches built in the current version meanwhile (the ranker's, the cards'):
    the new version's contract tables are the same, so they hold for it too (best effort)."""
    src = os.path.join(version, "cache")
    for here, _dirs, files in os.walk(src):
        rel = os.path.relpath(here, version)
        for name in files:
            with contextlib.suppress(OSError):
                os.makedirs(os.path.join(staging, rel), exist_ok=True)
                os.link(os.path.join(here, name), os.path.join(staging, rel, name))


def _main(argv: list[str]) -> int:
    args = json.loads(argv[0])
    store = args["store"]
    with contextlib.suppress(OSError):
        os.nice(_NICE)
    try:
        run_job(args["root"], store, args["head"], HistorySettings(**args["settings"]))
    finally:
        with contextlib.suppress(OSError, ValueError):
            with open(os.path.join(store, JOB), encoding="utf-8") as fh:
                mine = json.load(fh).get("pid") == os.getpid()
            if mine:
                os.unlink(os.path.join(store, JOB))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

"""Re-index on save: watch a repository with `watchfiles` and, once a burst of changes settles,
run an incremental index told which paths changed (`index(changed=…)`), so it walks and hashes
only those.

An event counts when the walk would list its path (the walker's own rules: built-in names,
.gitignore, .ctxframeignore, .git/info/exclude, config `exclude`, the store itself). A change to
an ignore file or to the configuration (`.ctxframe/config.toml`, `pyproject.toml`, language
packs, adapters) re-walks the whole tree, as does a burst of more than FULL_WALK_OVER paths or
an event watchfiles could not name. A moved git HEAD (checkout, commit) re-indexes with no path,
so the store's `git_head` follows it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from ctxframe._core.config import default_store
from ctxframe._core.errors import CtxframeError
from ctxframe._core.newest import Newest
from ctxframe._ingest.adapters import ADAPTERS_DIR
from ctxframe._ingest.packs import PACKS_DIR
from ctxframe._ingest.walk import GIT_EXCLUDE, IGNORE_FILES, Rules
from ctxframe._store import tables as _store
from ctxframe._store.build import IndexReport, excludes, index

DEBOUNCE_MS = 50  # quiet time after the last change before re-indexing
MAX_BATCH_MS = 2000  # a steady stream of changes is still indexed at least this often
FULL_WALK_OVER = 256  # more changed paths than this: walk the whole tree instead
_WAKE_MS = 200  # the watch loop wakes this often when nothing changes (stop checks)
WARM_AFTER_S = 1.0  # quiet time after an update before its version's ranker cache is built
_CONFIG_FILES = frozenset({"pyproject.toml", ".ctxframe/config.toml", GIT_EXCLUDE})
_CONFIG_DIRS = (PACKS_DIR.replace(os.sep, "/") + "/", ADAPTERS_DIR.replace(os.sep, "/") + "/")
_GIT_REFS = (".git/HEAD", ".git/packed-refs")
_MODIFIED = 2  # watchfiles.Change.modified (added 1, deleted 3)
_STEP_MS = 10  # how often watchfiles' loop looks for new events
_POLL_MS = 300  # with --poll: how often the tree is scanned (watchfiles' default)


def _settled(raw) -> set | None:
    """One answer of watchfiles' loop: its events, an empty set when it timed out, None when
    asked to stop; Ctrl-C (in the main thread) raises KeyboardInterrupt."""
    if raw == "timeout":
        return set()
    if raw == "stop":
        return None
    if raw == "signal":
        raise KeyboardInterrupt
    return raw


@dataclass
class Update:
    """One re-index: what set it off, what the index did, how long it took (from the moment
    the changes settled to the new version being current)."""

    trigger: str  # initial | changes | head | rescan
    paths: list[str] = field(default_factory=list)  # repo-relative, sorted
    walked: bool = False  # the whole tree was walked
    report: IndexReport | None = None
    ms: float = 0.0
    version: str | None = None
    error: str | None = None
    at: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def mode(self) -> str | None:
        """`IndexReport.mode`: delta, incremental or full (None when the run failed)."""
        return self.report.mode if self.report is not None else None

    def what(self) -> str:
        """The trigger in a few words."""
        if self.trigger == "initial":
            files = self.report.files if self.report is not None else 0
            return f"initial index: {files} files"
        if self.trigger == "head":
            return "git HEAD moved"
        if self.trigger == "rescan":
            return "re-walked the tree (a change could not be named)"
        n = len(self.paths)
        shown = ", ".join(self.paths[:2]) + (f", +{n - 2} more" if n > 2 else "")
        return f"{n} file{'s' if n != 1 else ''} changed: {shown}"

    def line(self) -> str:
        """The one line `ctxframe watch` prints: when, which files, the index mode, ms."""
        when = datetime.fromtimestamp(self.at).strftime("%H:%M:%S")
        if self.error is not None:
            return f"{when}  {self.what()} · error: {self.error}"
        walked = " (whole tree walked)" if self.walked and self.trigger == "changes" else ""
        return f"{when}  {self.what()}{walked} · {self.mode} · {self.ms:.0f} ms"

    def __str__(self) -> str:
        return self.line()

    def to_dict(self) -> dict:
        """One `--json` line (docs/json.md, verb `watch`)."""
        out = {
            "verb": "watch",
            "status": "ok" if self.ok else "error",
            "at": datetime.fromtimestamp(self.at).astimezone().isoformat(timespec="milliseconds"),
            "trigger": self.trigger,
            "paths": self.paths,
            "walked": self.walked,
            "mode": self.mode,
            "ms": round(self.ms, 1),
            "version": self.version,
            "index": self.report.to_dict() if self.report is not None else None,
        }
        if self.error is not None:
            out["error"] = {"code": "error", "message": self.error, "candidates": []}
        return out


@dataclass
class Batch:
    """The changes of one settled burst that matter to the index."""

    paths: set[str] = field(default_factory=set)
    walk_all: bool = False  # ignore rules or configuration changed, or too many paths
    head: bool = False  # git HEAD or a branch moved

    def __bool__(self) -> bool:
        return bool(self.paths) or self.walk_all or self.head


class Watcher:
    """Keeps the store of one repository current while files change: `run()` blocks, calling
    `on_update` after each re-index; `stop()` (any thread) ends it within a few steps."""

    def __init__(
        self,
        root: str,
        store: str | None = None,
        *,
        debounce_ms: int = DEBOUNCE_MS,
        poll: bool = False,
        warm: bool = False,
    ):
        if not os.path.isdir(root):
            from ctxframe._core.errors import RepoNotFound

            raise RepoNotFound(f"{root} is not a directory: pass the root of a source repository")
        self.root = os.path.realpath(root)
        self.store = os.path.abspath(store) if store else default_store(self.root)
        self.debounce_ms = max(1, int(debounce_ms))
        self.poll = poll
        self._stop = threading.Event()
        self._rules: Rules | None = None
        self.updates = 0
        self._warmer = _Warmer(self.store) if warm else None
        from ctxframe._resolve import flow_state

        flow_state.BACKGROUND = True  # a resident process: the value flow's state is written
        # by a thread while the watcher waits for the next save

    # -- which events count ----------------------------------------------------------------------
    @property
    def rules(self) -> Rules:
        if self._rules is None:
            self._rules = Rules(self.root, excludes(self.root, self.store))
        return self._rules

    def batch(self, changes: Iterable[tuple[object, str]]) -> Batch:
        """The events (watchfiles' (change, absolute path) pairs) that matter to the index."""
        out = Batch()
        store = self.store + os.sep
        for change, path in changes:
            if path.startswith(store) or path == self.store:
                continue  # the store's own writes
            rel = os.path.relpath(path, self.root).replace(os.sep, "/")
            if rel.startswith("../") or rel == ".." or rel == ".":
                continue
            if change == _MODIFIED and os.path.isdir(path) and not os.path.islink(path):
                continue  # a directory's own mtime (polling): its entries have their own events
            if rel in _GIT_REFS or (
                rel.startswith(".git/refs/heads/") and not rel.endswith(".lock")
            ):
                out.head = True
                continue
            name = rel.rpartition("/")[2]
            if rel in _CONFIG_FILES or rel.startswith(_CONFIG_DIRS):
                out.walk_all = True
                continue
            if self._counts(rel, path):
                out.paths.add(rel)
                if name in IGNORE_FILES:
                    out.walk_all = True
        if len(out.paths) > FULL_WALK_OVER:
            out.walk_all = True
        return out

    def _counts(self, rel: str, path: str) -> bool:
        """Would the walk list this path? A path that is gone counts unless ignored both as a
        file and as a directory."""
        rules = self.rules
        if os.path.lexists(path):
            is_dir = os.path.isdir(path) and not os.path.islink(path)
            return not rules.ignored(rel, is_dir)
        return not (rules.ignored(rel, False) and rules.ignored(rel, True))

    # -- re-indexing -----------------------------------------------------------------------------
    def update(self, batch: Batch | None, trigger: str = "changes") -> Update:
        """Re-index for one batch (None: walk everything) and say what happened."""
        walk_all = batch is None or batch.walk_all
        paths = sorted(batch.paths) if batch is not None else []
        up = Update(trigger=trigger, paths=paths, walked=walk_all)
        before = self._version()
        t0 = time.perf_counter()
        try:
            up.report = index(
                self.root,
                store=self.store,
                progress=False,
                changed=None if walk_all else paths,
            )
        except CtxframeError as exc:
            up.error = str(exc)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # a bug in one run must not end the watch
            text = (str(exc).strip().splitlines() or [""])[0][:300]
            up.error = f"internal error ({type(exc).__name__}: {text})"
        up.ms = (time.perf_counter() - t0) * 1000
        if walk_all:
            self._rules = None  # ignore files or configuration may have changed
        up.version = self._version()
        if up.mode == "unchanged":  # nothing read or written: the memo holds no table yet
            threading.Thread(target=self._remember, name="ctxframe-memo", daemon=True).start()
        if self._warmer is not None and up.version not in (None, before):
            self._warmer.offer(before, up.version)
        self.updates += 1
        return up

    def _remember(self) -> None:
        """Read the current version into the memo (best effort: an index reads what it needs)."""
        with contextlib.suppress(Exception):
            _store.Snapshot(self.store).remember()

    def _version(self) -> str | None:
        try:
            return _store.current_version(self.store)
        except (OSError, CtxframeError):
            return None

    def run(self, on_update: Callable[[Update], None], *, initial: bool = True) -> None:
        """Watch until `stop()` (or Ctrl-C in the main thread: KeyboardInterrupt). With
        `initial`, first catch up with what changed while nobody watched (an incremental
        index of the whole tree) — started once the watch is live, so no save is missed."""
        with _store.remembering():  # each index reads what the last one wrote from memory
            self._run(on_update, initial)

    def _run(self, on_update: Callable[[Update], None], initial: bool) -> None:
        pending = "initial" if initial else None  # a whole-tree run owed once the watch is live
        while not self._stop.is_set():
            try:
                for changes in self._changes():
                    if pending is not None:  # it covers whatever this burst changed
                        trigger, pending = pending, None
                        on_update(self.update(None, trigger))
                        continue
                    batch = self.batch(changes)
                    if batch:
                        trigger = "changes" if batch.paths or batch.walk_all else "head"
                        on_update(self.update(batch, trigger))
                return
            except RuntimeError as exc:  # watchfiles' internal error (a name it cannot decode)
                if type(exc).__name__ != "WatchfilesRustInternalError":
                    raise
                pending = "rescan"  # its events were dropped: watch afresh, walk everything

    def _changes(self):
        """Settled bursts of watchfiles' (change, path) events, each once no event came for
        `debounce_ms` (or after MAX_BATCH_MS of a steady stream); an empty set every _WAKE_MS
        while nothing changes. watchfiles' own loop ends a burst after one quiet `step`,
        seen only at the end of a step: 1 to 2 steps after the last event. Here the step is
        short and the rest of the quiet time is waited for as such, so a burst is taken
        between `debounce_ms` and `debounce_ms` + _STEP_MS after its last event."""
        from watchfiles._rust_notify import RustNotify

        step = min(_STEP_MS, self.debounce_ms)
        try:
            notify = RustNotify([self.root], False, self.poll, _POLL_MS, True, False)
        except OSError as exc:
            raise CtxframeError(
                f"cannot watch {self.root}: {exc}; raise the inotify limit "
                "(sysctl fs.inotify.max_user_watches) or pass --poll"
            ) from None
        with notify:
            while True:
                got = _settled(notify.watch(MAX_BATCH_MS, step, _WAKE_MS, self._stop))
                if got is None:
                    return
                if not got:
                    yield got
                    continue
                burst, started = set(got), time.monotonic()
                quiet = self.debounce_ms - step
                while quiet > 0 and (time.monotonic() - started) * 1000 < MAX_BATCH_MS:
                    more = _settled(notify.watch(MAX_BATCH_MS, step, quiet, self._stop))
                    if more is None:
                        return
                    if not more:  # quiet all along
                        break
                    burst |= more
                yield burst

    def stop(self) -> None:
        """End `run()` (from any thread) at its next step."""
        self._stop.set()

    def close(self, timeout: float = 5.0) -> None:
        """Wait (up to `timeout` seconds) for a cache being warmed to be written."""
        if self._warmer is not None:
            self._warmer.close(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()


class _Warmer:
    """Builds the ranker's cache of each new version in a background thread, when the version
    it replaced had one (someone asks this store questions: a prompt hook's next `query` then
    maps the cache in instead of building it). Only the newest version offered is warmed, once
    no newer one came for `after` seconds: what reads a new version at once (a Graph
    refreshing, the next save's update) does not share the cores with it."""

    def __init__(self, store: str, after: float = WARM_AFTER_S):
        self.store = store
        self._worker = Newest(after, name="warm")

    def offer(self, before: str | None, version: str) -> None:
        """Warm `version` if `before` (the version it replaced) had the ranker's cache."""
        from ctxframe._store import cache as _cache

        if before is None or not _cache.holds(os.path.join(self.store, before), _cache.RANK_TABLES):
            return
        self._worker.submit(functools.partial(self._warm, version))

    def _warm(self, version: str) -> None:
        from ctxframe._store import cache as _cache

        snap = _store.Snapshot(self.store)
        if snap.version == version:  # else a newer version is on its way
            _cache.ranker(snap)

    def close(self, timeout: float) -> None:
        """Warm the version owed at once, then stop (waiting up to `timeout` seconds)."""
        self._worker.close(timeout, run_waiting=True)

"""`graph.watch()`: a background thread that keeps one Graph current while the repository's
files change (the watching and re-indexing are ctxframe._store.watcher's)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ctxframe._core.newest import Newest
from ctxframe._render.html import render
from ctxframe._store.watcher import DEBOUNCE_MS, Update, Watcher

if TYPE_CHECKING:
    from ctxframe._graph.graph import Graph

KEEP = 200  # updates kept in `updates` and `log`
REST_AFTER_S = 1.0  # a version's arrow, ranking and traversal indexes are built once no newer
# version came for this long (calls meanwhile read edges directly, or build what they need)


class GraphWatch:
    """A running watch of one graph's repository: after each re-index the graph prepares the
    new version (see `Graph._prepare`) and its listeners (an open explorer) are told.

    `stop()` ends it (also on `with graph.watch(): ...` exit); `log` holds the last lines,
    `updates` the last `Update`s, `error` what ended it when it ended by itself; `offered`
    is set each time a new version is ready for the graph's next call (clear it to wait for
    the next one)."""

    def __init__(
        self,
        graph: Graph,
        *,
        debounce_ms: int | None = None,
        poll: bool = False,
        initial: bool = True,
        on_update: Callable[[Update], Any] | None = None,
    ):
        if not graph.root:
            from ctxframe._core.errors import RepoNotFound

            raise RepoNotFound(
                "this graph does not know its repository (opened from a store directory): "
                "open it with cf.open(REPO) to watch"
            )
        self.graph = graph
        self.watcher = Watcher(
            graph.root, graph.store, debounce_ms=debounce_ms or DEBOUNCE_MS, poll=poll
        )
        self.updates: deque[Update] = deque(maxlen=KEEP)
        self.log: deque[str] = deque(maxlen=KEEP)
        self.error: str | None = None
        self.offered = threading.Event()
        self._on_update = on_update
        # each version's remaining indexes: the newest version's, once saves pause
        self._rest = Newest(REST_AFTER_S, name="ctxframe-rest")
        self._thread = threading.Thread(
            target=self._run, args=(initial,), name="ctxframe-watch", daemon=True
        )
        self._thread.start()

    def _run(self, initial: bool) -> None:
        try:
            self.watcher.run(self._updated, initial=initial)
        except BaseException as exc:  # ends the watch, said in `error` and the log
            self.error = f"{type(exc).__name__}: {exc}"
            self.log.append(f"watch ended: {self.error}")

    def _updated(self, update: Update) -> None:
        if update.ok:
            try:
                self.graph._prepare(
                    update.report, offered=self.offered.set, defer=self._rest.submit
                )
            except Exception as exc:  # the store could not be read: say so, keep watching
                update.error = f"{type(exc).__name__}: {exc}"
        self.updates.append(update)
        self.log.append(update.line())
        self.graph._notify(update)
        if self._on_update is not None:
            self._on_update(update)

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self.watcher.stopped

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching; waits (up to `timeout` s) for an index in progress to finish."""
        self.watcher.stop()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        self._rest.close(timeout)

    def __enter__(self) -> GraphWatch:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _state(self) -> str:
        if self.running:
            return "watching"
        return f"stopped ({self.error})" if self.error else "stopped"

    def __repr__(self) -> str:
        n = len(self.updates)
        last = f"; last: {self.log[-1]}" if self.log else ""
        return (
            f"<ctxframe watch of {self.watcher.root}: {self._state()}, "
            f"{n} update{'s' if n != 1 else ''}{last}>"
        )

    def _repr_html_(self) -> str:
        return render(
            "watch",
            root=self.watcher.root,
            state=self._state(),
            debounce_ms=self.watcher.debounce_ms,
            lines=list(self.log)[-10:],
        )

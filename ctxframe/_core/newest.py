"""A worker thread for jobs where only the newest matters: each runs once no newer one came
for a quiet time, and a job overtaken before it starts is dropped (a watch's work for a
version already replaced)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable


class Newest:
    """Runs the jobs handed to `submit` one at a time, each after `after` seconds without a
    newer one; a job's failure is its own (best effort: what it builds is built on demand)."""

    def __init__(self, after: float, name: str = "ctxframe-newest") -> None:
        self.after, self.name = after, name
        self._job: Callable[[], None] | None = None
        self._wake = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(self, job: Callable[[], None]) -> None:
        with self._wake:
            self._job = job
            self._wake.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._wake:
                while self._job is None and not self._closed:
                    self._wake.wait()
                while self._job is not None and not self._closed:  # quiet for `after` s
                    job = self._job
                    self._wake.wait(self.after)
                    if self._job is job:
                        break
                job, self._job = self._job, None
            if job is not None:
                with contextlib.suppress(Exception):
                    job()
            if self._closed:
                return

    def close(self, timeout: float, run_waiting: bool = False) -> None:
        """Stop after the job running now; a job still waiting for quiet is run at once with
        `run_waiting`, else dropped. Waits up to `timeout` seconds."""
        with self._wake:
            self._closed = True
            if not run_waiting:
                self._job = None
            self._wake.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

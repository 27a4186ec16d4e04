"""`ctxframe watch`: keep a repository's store current while its files change, one line per
update on stdout (a JSON object per line with `--json`); Ctrl-C stops it with exit 130.

The watching itself is ctxframe._store.watcher; a notebook uses `graph.watch()` instead.
"""

from __future__ import annotations

import json
import signal
import sys
from typing import TextIO

from ctxframe._store.watcher import DEBOUNCE_MS, Update, Watcher


def watch_command(
    repo: str,
    store: str | None = None,
    *,
    as_json: bool = False,
    debounce_ms: int | None = None,
    poll: bool = False,
    initial: bool = True,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Watch until Ctrl-C; returns the exit code (130 when interrupted). `debounce_ms`: the
    quiet time after a change before re-indexing (default DEBOUNCE_MS)."""
    out = out or sys.stdout
    err = err or sys.stderr
    # warm: a prompt hook or a `query` asking this store between saves finds the new version's
    # ranker cache built (when the version before had one)
    watcher = Watcher(repo, store, debounce_ms=debounce_ms or DEBOUNCE_MS, poll=poll, warm=True)

    def emit(update: Update) -> None:
        text = json.dumps(update.to_dict(), default=str) if as_json else update.line()
        print(text, file=out, flush=True)

    print(
        f"ctxframe watch: watching {watcher.root} (debounce {watcher.debounce_ms} ms"
        f"{', polling' if poll else ''}); Ctrl-C stops",
        file=err,
        flush=True,
    )
    try:
        watcher.run(emit, initial=initial)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not interrupt this
        watcher.close()
        n = watcher.updates
        print(
            f"ctxframe watch: stopped after {n} update{'s' if n != 1 else ''}; the store holds "
            "the last complete one",
            file=err,
            flush=True,
        )
        return 130
    watcher.close()
    return 0

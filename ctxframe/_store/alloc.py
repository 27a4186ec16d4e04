"""How Polars' allocator (jemalloc) treats freed memory, chosen before Polars is loaded.

Handing freed pages back to the system soon keeps the peak of a very large index ~15-20%
lower, but every later allocation faults its pages in again: on a mid-sized repository that
costs a sixth of a cold index and a tenth of a re-index. So `ctxframe index` and `ctxframe
watch` (and `cf.index` when it is what first loads Polars) return pages early only for a
repository of at least LARGE_FILES files; below that Polars' own default applies. Early is
200 ms after they are freed, not at once: on the Linux kernel that halves the system time
spent faulting pages back in (a tenth of the index) for ~6% more peak memory. A
`_RJEM_MALLOC_CONF` the user set always wins.
"""

from __future__ import annotations

import json
import os
import sys

VAR = "_RJEM_MALLOC_CONF"
EAGER = "dirty_decay_ms:200,muzzy_decay_ms:0"
LARGE_FILES = 20_000
_set_here = False  # whether VAR holds our choice (then it may still be changed)


def default() -> None:
    """On `import ctxframe`: return pages early, unless Polars is loaded or VAR is set."""
    global _set_here
    if VAR not in os.environ and "polars" not in sys.modules:
        os.environ[VAR] = EAGER
        _set_here = True


def for_index(root: str, store: str | None) -> None:
    """Before `index` loads Polars: Polars' default unless the repository is large."""
    global _set_here
    if not _set_here or "polars" in sys.modules:
        return
    if not is_large(root, store):
        del os.environ[VAR]
        _set_here = False


def is_large(root: str, store: str | None) -> bool:
    """At least LARGE_FILES files: the previous index's count, else a count that stops there."""
    from ctxframe._core.config import default_store

    meta = os.path.join(store or default_store(os.path.realpath(root)), "meta.json")
    try:
        with open(meta, encoding="utf-8") as fh:
            return int(json.load(fh)["counts"]["files"]) >= LARGE_FILES
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return _count_files(root, LARGE_FILES) >= LARGE_FILES


def _count_files(root: str, limit: int) -> int:
    """Files under root outside the built-in ignored directories, counted up to `limit`."""
    from ctxframe._ingest.walk import BUILTIN_DIRS

    count, stack = 0, [root]
    while stack and count < limit:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in BUILTIN_DIRS:
                            stack.append(entry.path)
                    else:
                        count += 1
        except OSError:
            continue
    return count

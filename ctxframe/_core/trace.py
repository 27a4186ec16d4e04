"""`CTXFRAME_TRACE=1`: each stage of a run prints seconds so far and current and peak RSS."""

from __future__ import annotations

import os
import sys
import time

_ON = bool(os.environ.get("CTXFRAME_TRACE"))
_T0 = time.perf_counter()


def mark(stage: str) -> None:
    """One line to stderr when tracing is on: seconds since import, RSS now and at peak."""
    if not _ON:
        return
    import resource

    with open("/proc/self/statm") as fh:
        rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    print(
        f"[trace] {time.perf_counter() - _T0:7.2f}s rss {rss:6d} MB peak {peak:6d} MB  {stage}",
        file=sys.stderr,
    )

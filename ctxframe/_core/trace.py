"""`CTXFRAME_TRACE=1`: each stage of a run prints seconds so far, current and peak RSS, and
the CPU seconds and minor page faults of this process and of its finished children."""

from __future__ import annotations

import os
import sys
import time

_ON = bool(os.environ.get("CTXFRAME_TRACE"))
_T0 = time.perf_counter()


def mark(stage: str) -> None:
    """One line to stderr when tracing is on: seconds since import, RSS now and at peak, user
    and system CPU seconds and minor faults (this process + its reaped children)."""
    if not _ON:
        return
    import resource

    with open("/proc/self/statm") as fh:
        rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"[trace] {time.perf_counter() - _T0:7.2f}s rss {rss:6d} MB peak {me.ru_maxrss >> 10:6d} MB"
        f" cpu {me.ru_utime:.1f}u {me.ru_stime:.1f}s {me.ru_minflt // 1000}k flt"
        f" + children {kids.ru_utime:.1f}u {kids.ru_stime:.1f}s {kids.ru_minflt // 1000}k flt"
        f"  {stage}",
        file=sys.stderr,
    )

"""`CTXFRAME_TRACE=1`: each stage of a run prints seconds so far, current and peak RSS (the
process's, and the stage's own as sampled every 10 ms), and the CPU seconds and minor page
faults of this process and of its finished children."""

from __future__ import annotations

import os
import sys
import threading
import time

_ON = bool(os.environ.get("CTXFRAME_TRACE"))
_T0 = time.perf_counter()
_stage_peak = 0  # RSS pages: the largest sample since the last mark


def _rss_pages() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1])


def _sample() -> None:
    global _stage_peak
    while True:
        _stage_peak = max(_stage_peak, _rss_pages())
        time.sleep(0.01)


if _ON and os.path.exists("/proc/self/statm"):
    threading.Thread(target=_sample, name="ctxframe-trace", daemon=True).start()


def mark(stage: str) -> None:
    """One line to stderr when tracing is on: seconds since import, RSS now, at the stage's
    peak and at the process's, user and system CPU seconds and minor faults (this process +
    its reaped children)."""
    global _stage_peak
    if not _ON:
        return
    import resource

    page = os.sysconf("SC_PAGE_SIZE")
    now = _rss_pages()
    rss, top = now * page >> 20, max(_stage_peak, now) * page >> 20
    _stage_peak = now
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"[trace] {time.perf_counter() - _T0:7.2f}s rss {rss:6d} MB stage {top:6d} MB"
        f" peak {me.ru_maxrss >> 10:6d} MB"
        f" cpu {me.ru_utime:.1f}u {me.ru_stime:.1f}s {me.ru_minflt // 1000}k flt"
        f" + children {kids.ru_utime:.1f}u {kids.ru_stime:.1f}s {kids.ru_minflt // 1000}k flt"
        f"  {stage}",
        file=sys.stderr,
    )

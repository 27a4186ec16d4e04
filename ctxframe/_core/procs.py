"""Child processes that die with their parent (Linux `prctl(PR_SET_PDEATHSIG, SIGKILL)`)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    return None


def die_with_parent(parent: int) -> None:
    """In a child: be killed when the parent dies (Linux); exit at once if it already has."""
    libc = _libc()
    if libc is not None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)


def death_signal_preexec() -> Callable[[], None] | None:
    """A `preexec_fn` for subprocess.Popen arming the death signal (None off Linux). libc is
    loaded here, in the parent: the forked child only makes the call."""
    libc = _libc()
    if libc is None:
        return None
    prctl = libc.prctl

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return arm

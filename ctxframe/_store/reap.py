"""No process outlives its parent: pool workers ask the kernel for SIGKILL when the indexer
dies (Linux `prctl(PR_SET_PDEATHSIG)`), ignore Ctrl-C (the parent handles it and kills them),
and scratch folders of dead indexers are removed by the next run."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import tempfile

from ctxframe._core.procs import die_with_parent

SPILL_PREFIX = "ctxframe-spill-"


def orphan_proof(parent: int) -> None:
    """Pool-worker initializer: die with the parent, leave Ctrl-C to it."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def spill_dir() -> str:
    """A fresh scratch folder named after this process (so a later run can tell it is stale);
    stale ones of dead processes are removed first."""
    clean_spills()
    return tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-")


def clean_spills() -> list[str]:
    """Remove scratch folders whose process is gone."""
    removed = []
    for path in glob.glob(os.path.join(tempfile.gettempdir(), SPILL_PREFIX + "*")):
        head = os.path.basename(path)[len(SPILL_PREFIX) :].split("-")[0]
        if head.isdigit() and int(head) != os.getpid() and not _alive(int(head)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed

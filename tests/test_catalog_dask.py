"""`catalog index --executor dask://…` on a local dask.distributed cluster of worker processes,
with a worker killed in the middle of indexing a repository: the catalog still ends complete,
and every store equals a local index of the same repository."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

import ctxframe as cf
from ctxframe._store.reap import SPILL_PREFIX

distributed = pytest.importorskip("distributed")

from test_catalog import REPOS, SAMPLE, _expected, _found  # noqa: E402

TABLES = ("nodes", "edges", "files", "tokens")
_NO_STORES = shutil.ignore_patterns(".ctxframe")  # left in the sample by a local catalog run


class Killer(threading.Thread):
    """Kills (SIGKILL) the first `count` workers seen indexing: an index run owns a scratch
    folder named after its process (`ctxframe-spill-<pid>-…`) from start to end."""

    def __init__(self, tmpdir: Path, pids: set[int], count: int = 1):
        super().__init__(daemon=True)
        self.tmpdir, self.pids, self.count = tmpdir, set(pids), count
        self.killed: list[int] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set() and len(self.killed) < self.count:
            for entry in os.scandir(self.tmpdir):
                if not entry.name.startswith(SPILL_PREFIX):
                    continue
                pid = int(entry.name[len(SPILL_PREFIX) :].split("-")[0])
                if pid in self.pids and pid not in self.killed:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
                    self.pids.discard(pid)
                    break
            time.sleep(0.001)


def _padding(repo: Path, n: int) -> None:
    """Plain modules with no boundary, so indexing this repository takes a while."""
    pad = repo / "padding"
    pad.mkdir()
    for i in range(n):
        body = "".join(f"def f{i}_{j}(x):\n    return f{i}_{j - 1}(x) if x else {j}\n\n"
                       for j in range(1, 30))  # fmt: skip
        (pad / f"m{i}.py").write_text(f"def f{i}_0(x):\n    return x\n\n" + body)


def _run(tmp_path: Path, monkeypatch, names: list[str], workers: int, kills: int, pad: int):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))  # the workers' scratch folders land here
    repos = tmp_path / "repos"
    for name in names:
        shutil.copytree(SAMPLE / name.split("-")[0], repos / name, ignore=_NO_STORES)
    _padding(repos / names[-1], pad)
    directory = tmp_path / "catalog"
    cat = cf.catalog(str(directory))
    cat.add(*(str(repos / n) for n in names))
    cluster = distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        with distributed.Client(cluster) as client:
            pids = set(client.run(os.getpid).values())
            killer = Killer(tmpdir, pids, kills)
            killer.start()
            report = cat.index(executor=f"dask://{cluster.scheduler_address}")
            killer.stop.set()
            killer.join()
    finally:
        cluster.close()
    return repos, directory, report, killer


def _check(tmp_path: Path, repos: Path, directory: Path, report, killer, names, kills):
    assert len(killer.killed) == kills, "no worker was caught mid-index"
    assert report.ok, report.failed
    assert sorted(r["name"] for r in report.results) == sorted(names)
    assert not {r["pid"] for r in report.results} & set(killer.killed)
    assert sorted(cf.open_catalog(str(directory)).repos) == sorted(names)
    # each store equals a local index of the same repository
    for name in names:
        mine = cf.open(str(repos / name))
        local = cf.index(str(repos / name), store=str(tmp_path / "local" / name), progress=False)
        for table in TABLES:
            assert getattr(mine, table).equals(getattr(local, table)), (name, table)
    # the dead workers' scratch folders are gone (the next run in their place removed them)
    left = [e for e in os.listdir(tmp_path / "tmp") if e.startswith(SPILL_PREFIX)]
    assert not [e for e in left if int(e[len(SPILL_PREFIX) :].split("-")[0]) in killer.killed]


def test_a_worker_killed_mid_index_leaves_the_catalog_complete(tmp_path, monkeypatch):
    names = list(REPOS)
    repos, directory, report, killer = _run(tmp_path, monkeypatch, names, 2, 1, pad=40)
    _check(tmp_path, repos, directory, report, killer, names, 1)
    assert report.executor.startswith("dask://")
    assert _found(directory) == _expected()


@pytest.mark.slow
def test_many_repositories_two_workers_killed(tmp_path, monkeypatch):
    names = [f"{r}-{i}" for i in range(4) for r in REPOS]
    repos, directory, report, killer = _run(tmp_path, monkeypatch, names, 3, 2, pad=150)
    _check(tmp_path, repos, directory, report, killer, names, 2)

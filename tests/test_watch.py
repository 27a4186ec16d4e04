"""`ctxframe watch`, `graph.watch()` and `index(changed=…)`, through real file writes: new files,
editor saves (rename over, backup-and-write), deletes, many files at once, a directory moved, a
git branch switch, ignored files and the store's own writes; the watcher in-process and as a
subprocess stopped with Ctrl-C. After each change the store equals a full rebuild."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxframe as cf
from ctxframe._ingest.walk import Rules, walk, walk_paths
from ctxframe._store import tables as _store
from ctxframe._store.watcher import DEBOUNCE_MS, FULL_WALK_OVER, Watcher

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0  # seconds to wait for an update on a loaded machine


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _repo(root: Path) -> Path:
    _write(root, "a.py", "def a():\n    return 1\n")
    _write(root, "lib/util.py", "from a import a\n\n\ndef helper():\n    return a()\n")
    _write(root, ".gitignore", "*.log\ngen/\n.ctxframe/\n")
    return root


def _tables(store: str) -> dict[str, pl.DataFrame]:
    out = {}
    for name in ("nodes", "edges", "files", "tokens", "refs", "bnodes", "bedges"):
        out[name] = _store.read_table(store, name).sort(pl.all(), nulls_last=True)
    return out


def _assert_rebuild_equal(root: Path, store: str, work: Path) -> None:
    full = work / f"full-{time.monotonic_ns()}"
    cf.index(str(root), store=str(full), rebuild=True, progress=False)
    got, want = _tables(store), _tables(str(full))
    for name in want:
        assert got[name].equals(want[name]), name
    shutil.rmtree(full)


def _ids(store: str) -> set[str]:
    return set(_store.read_table(store, "nodes")["id"].to_list())


# -- which events count ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rel", "paths", "walk_all", "head"),
    [
        ("a.py", {"a.py"}, False, False),
        ("lib/new.py", {"lib/new.py"}, False, False),
        ("debug.log", set(), False, False),  # .gitignore: *.log
        ("gen/x.py", set(), False, False),  # .gitignore: gen/
        ("node_modules/x/index.js", set(), False, False),  # built-in
        ("lib/__pycache__/util.cpython-311.pyc", set(), False, False),
        (".ctxframe/graph/v-1/nodes.parquet", set(), False, False),  # the store's own writes
        (".git/index", set(), False, False),
        (".git/HEAD", set(), False, True),  # a checkout
        (".git/refs/heads/main", set(), False, True),  # a commit
        (".git/refs/heads/main.lock", set(), False, False),
        (".gitignore", {".gitignore"}, True, False),  # ignore rules changed: walk all
        ("lib/.ctxframeignore", {"lib/.ctxframeignore"}, True, False),
        (".git/info/exclude", set(), True, False),
        (".ctxframe/config.toml", set(), True, False),
        ("pyproject.toml", set(), True, False),
        (".ctxframe/adapters/x.py", set(), True, False),
        ("gone/deleted.py", {"gone/deleted.py"}, False, False),  # a path that is no more
    ],
)
def test_which_events_count(tmp_path: Path, rel, paths, walk_all, head) -> None:
    root = _repo(tmp_path / "repo")
    batch = Watcher(str(root)).batch([(2, str(root / rel))])
    assert (batch.paths, batch.walk_all, batch.head) == (paths, walk_all, head)


def test_events_outside_or_too_many(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    w = Watcher(str(root), store=str(root / "store"))
    assert not w.batch([(1, str(tmp_path / "elsewhere.py")), (1, str(root / "store/x"))])
    many = w.batch([(1, str(root / f"m{i}.py")) for i in range(FULL_WALK_OVER + 1)])
    assert many.walk_all and len(many.paths) == FULL_WALK_OVER + 1


def test_rules_agree_with_the_walk(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    for rel in ["x.log", "gen/a.py", "sub/gen/b.py", "keep/c.py", "dist/d.js", "e.min.js"]:
        _write(root, rel, "x = 1\n")
    _write(root, "keep/.gitignore", "!*.log\n")
    _write(root, "keep/f.log", "log\n")
    listed = {p for p, _, _ in walk(str(root)).files}
    rules = Rules(str(root))
    everything = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    assert {p for p in everything if not rules.ignored(p)} == listed
    assert "keep/f.log" in listed and "x.log" not in listed


def test_walk_paths_is_the_walk_restricted(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    for i in range(5):
        _write(root, f"pkg/sub{i % 2}/m{i}.py", f"def m{i}():\n    return {i}\n")
    _write(root, "pkg/x.log", "ignored\n")
    (root / "pkg" / "link.py").symlink_to(root / "a.py")
    full = walk(str(root))
    for asked in (["pkg"], ["pkg/sub0", "a.py"], ["pkg/sub1/m1.py", "nope.py"], ["gen/q.py"]):
        part = walk_paths(str(root), asked)
        keep = [f for f in full.files if any(f[0] == a or f[0].startswith(a + "/") for a in asked)]
        skip = [
            s for s in full.skipped if any(s[0] == a or s[0].startswith(a + "/") for a in asked)
        ]
        assert sorted(part.files) == sorted(keep) and sorted(part.skipped) == sorted(skip)


# -- index(changed=…) equals a rebuild, whatever happened -------------------------------------
_OPS = st.lists(
    st.tuples(
        st.sampled_from(["write", "append", "rename_save", "delete", "mkdir", "rmdir", "mvdir",
                         "ignored", "touch"]),
        st.integers(0, 5),
    ),
    min_size=1,
    max_size=5,
)  # fmt: skip


def _op(root: Path, op: str, i: int) -> set[str]:
    """Apply one file operation; returns the paths a watcher would report."""
    rel = f"pkg{i % 2}/m{i}.py"
    path = root / rel
    if op == "write":
        _write(root, rel, f"from a import a\n\n\ndef m{i}():\n    return a()\n")
    elif op == "append" and path.exists():
        with path.open("a") as fh:
            fh.write(f"\n\ndef extra{i}_{time.monotonic_ns()}():\n    return m{i}()\n")
    elif op == "rename_save":
        tmp = path.parent / f".{path.name}.swp"
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(f"def saved{i}():\n    return {i}\n")
        os.replace(tmp, path)
        return {rel, str(tmp.relative_to(root))}
    elif op == "delete" and path.exists():
        path.unlink()
    elif op == "mkdir":
        _write(root, f"d{i}/inner/n{i}.py", f"def n{i}():\n    return {i}\n")
        return {f"d{i}"}
    elif op == "rmdir" and (root / f"d{i}").exists():
        shutil.rmtree(root / f"d{i}")
        return {f"d{i}"}
    elif op == "mvdir" and (root / f"d{i}").exists():
        os.replace(root / f"d{i}", root / f"moved{i}")
        return {f"d{i}", f"moved{i}"}
    elif op == "ignored":
        _write(root, f"gen/g{i}.py", "def g():\n    return 0\n")
        _write(root, f"x{i}.log", "log\n")
        return {f"gen/g{i}.py", f"x{i}.log"}
    elif op == "touch" and path.exists():
        os.utime(path)
    return {rel}


@settings(
    max_examples=int(os.environ.get("CTXFRAME_RANDOM_EDITS", "8")),
    deadline=None,
    derandomize=not os.environ.get("CTXFRAME_RANDOM_EDITS"),
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=_OPS, remember=st.booleans())
def test_changed_paths_index_equals_rebuild(tmp_path_factory, ops, remember) -> None:
    """Also as a watcher runs it: each index reading what the last one wrote from memory."""
    work = tmp_path_factory.mktemp("changed")
    root = _repo(work / "repo")
    store = str(work / "store")
    cf.index(str(root), store=store, progress=False)
    from ctxframe._store.build import index

    with _store.remembering() if remember else contextlib.nullcontext():
        for op, i in ops:
            index(str(root), store=store, progress=False, changed=_op(root, op, i))
    _assert_rebuild_equal(root, store, work)


def test_a_named_path_is_hashed_even_when_its_stat_did_not_move(tmp_path: Path) -> None:
    from ctxframe._store.build import index

    root = _repo(tmp_path / "repo")
    store = str(tmp_path / "store")
    index(str(root), store=store, progress=False)
    st = os.stat(root / "a.py")
    (root / "a.py").write_text("def b():\n    return 2\n")  # same size as before
    os.utime(root / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime: one clock tick
    index(str(root), store=store, progress=False)
    assert "a.py::a" in _ids(store)  # a stat-only re-index cannot see it…
    index(str(root), store=store, progress=False, changed=["a.py"])
    assert "a.py::b" in _ids(store) and "a.py::a" not in _ids(store)  # …a watcher's can


# -- the watcher in-process, through real file writes -----------------------------------------
class _Running:
    """A Watcher in a thread; updates arrive on a queue."""

    def __init__(self, root: Path, store: str | None = None):
        self.w = Watcher(str(root), store, debounce_ms=30)
        self.q: queue.Queue = queue.Queue()
        self.t = threading.Thread(target=self.w.run, args=(self.q.put,), daemon=True)
        self.t.start()
        self.initial = self.q.get(timeout=TIMEOUT)
        assert self.initial.trigger == "initial" and self.initial.ok

    def until(self, check, what: str):
        """Updates until `check()` holds; the last update (at least one: the store shows a
        change a moment before its update is reported)."""
        deadline = time.monotonic() + TIMEOUT
        last = None
        while last is None or not check():
            left = deadline - time.monotonic()
            assert left > 0, f"no update made the store show {what}"
            try:
                last = self.q.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            assert last.ok, last.error
        return last

    def quiet(self, seconds: float = 0.6) -> list:
        """Updates arriving within `seconds` of nothing being done."""
        got = []
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                got.append(self.q.get(timeout=left))
            except queue.Empty:
                break
        return got

    def settle(self, within: float = 15.0) -> list:
        """Updates until none comes for 0.8 s (a save split over two bursts on a busy machine
        is one more update); a watcher that sets itself off never settles."""
        got: list = []
        end = time.monotonic() + within
        while more := self.quiet(0.8):
            got += more
            assert time.monotonic() < end, f"never settled: {[u.paths for u in got]}"
        return got

    def stop(self) -> None:
        self.w.stop()
        self.t.join(TIMEOUT)
        assert not self.t.is_alive()


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root), *args],
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_watcher_follows_saves_deletes_bursts_and_branch_switches(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "one")
    store = str(root / ".ctxframe" / "graph")
    run = _Running(root)
    try:
        assert run.settle() == []  # the initial index's own writes set nothing off
        # a new file
        _write(root, "b.py", "from a import a\n\n\ndef bee():\n    return a()\n")
        up = run.until(lambda: "b.py::bee" in _ids(store), "b.py::bee")
        assert "b.py" in up.paths and up.mode in ("full", "incremental", "delta")
        _assert_rebuild_equal(root, store, tmp_path)
        # an editor's atomic save: write a temp file, rename it over the original
        tmp = root / ".b.py.swp"
        tmp.write_text("from a import a\n\n\ndef bee2():\n    return a()\n")
        os.replace(tmp, root / "b.py")
        run.until(lambda: "b.py::bee2" in _ids(store) and "b.py::bee" not in _ids(store), "bee2")
        # vim's save: the original renamed to a backup, a new file written, the backup deleted
        os.replace(root / "b.py", root / "b.py~")
        _write(root, "b.py", "def bee3():\n    return 3\n")
        (root / "b.py~").unlink()
        run.until(lambda: "b.py::bee3" in _ids(store) and "b.py::bee2" not in _ids(store), "bee3")
        _assert_rebuild_equal(root, store, tmp_path)
        # a delete
        (root / "b.py").unlink()
        run.until(lambda: not any(i.startswith("b.py") for i in _ids(store)), "b.py gone")
        # ignored files and the store's writes: no update at all
        run.settle()
        version = _store.current_version(store)
        _write(root, "debug.log", "x\n")
        _write(root, "gen/out.py", "def g():\n    return 0\n")
        assert run.quiet(0.8) == [] and _store.current_version(store) == version
        # many files at once: more than FULL_WALK_OVER paths walk the whole tree
        n = FULL_WALK_OVER + 20
        for i in range(n):
            _write(root, f"many/m{i}.py", f"def many{i}():\n    return {i}\n")
        up = run.until(lambda: f"many/m{n - 1}.py::many{n - 1}" in _ids(store), "many files")
        assert up.ok
        _assert_rebuild_equal(root, store, tmp_path)
        # a directory moved
        os.replace(root / "many", root / "lots")
        run.until(lambda: "lots/m0.py::many0" in _ids(store) and "many/m0.py" not in _ids(store),
                  "lots/")  # fmt: skip
        shutil.rmtree(root / "lots")
        run.until(lambda: "lots/m0.py" not in _ids(store), "lots/ gone")
        # a branch switch: files added, changed and deleted by git checkout
        _git(root, "checkout", "-qb", "feature")
        _write(root, "feat.py", "def feat():\n    return 1\n")
        _write(root, "a.py", "def a():\n    return 2\n\n\ndef a_more():\n    return a()\n")
        (root / "lib" / "util.py").unlink()
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "feature")
        run.until(lambda: "feat.py::feat" in _ids(store), "feature files")
        _git(root, "checkout", "-q", "main")
        run.until(
            lambda: "feat.py::feat" not in _ids(store) and "lib/util.py::helper" in _ids(store),
            "main after checkout",
        )
        run.settle()  # the checkout's last events
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()  # fmt: skip
        assert _store.read_meta(store)["git_head"] == head
        _assert_rebuild_equal(root, store, tmp_path)
        _git(root, "checkout", "-q", "feature")
        run.until(lambda: "a.py::a_more" in _ids(store) and "lib/util.py::helper" not in
                  _ids(store), "feature after checkout")  # fmt: skip
        run.settle()
        _assert_rebuild_equal(root, store, tmp_path)
    finally:
        run.stop()


@pytest.mark.parametrize("asked", [True, False], ids=["queried", "never-queried"])
def test_a_warming_watcher_builds_the_new_versions_ranker_cache(tmp_path: Path, asked) -> None:
    from ctxframe._store import cache as _cache
    from ctxframe._store.watcher import Batch

    root = _repo(tmp_path / "repo")
    store = str(root / ".ctxframe" / "graph")
    cf.index(str(root), progress=False)
    if asked:
        cf.open(str(root)).query("helper")  # the version's ranker cache is built
    w = Watcher(str(root), warm=True)
    _write(root, "a.py", "def a():\n    return 2\n\n\ndef again():\n    return a()\n")
    up = w.update(Batch(paths={"a.py"}))
    new = os.path.join(store, up.version)
    assert up.ok and up.version == _store.current_version(store)
    assert not _cache.holds(new, _cache.RANK_TABLES)  # not while the new version is fresh
    deadline = time.monotonic() + 60
    while asked and not _cache.holds(new, _cache.RANK_TABLES) and time.monotonic() < deadline:
        time.sleep(0.05)
    w.close()
    assert _cache.holds(new, _cache.RANK_TABLES) == asked
    if asked:  # what it built is what a query builds
        hits = cf.open(str(root)).query("again").hits
        shutil.rmtree(os.path.join(store, up.version, "cache"))
        assert hits.equals(cf.open(str(root)).query("again").hits)


def test_a_custom_store_inside_the_repo_is_not_watched(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    store = str(root / "graphstore")
    run = _Running(root, store)
    try:
        assert run.settle() == []
        _write(root, "c.py", "def c():\n    return 1\n")
        run.until(lambda: "c.py::c" in _ids(store), "c.py::c")
        # its own writes under graphstore/ set nothing off (a second burst of c.py may)
        assert all(u.paths == ["c.py"] for u in run.settle())
        assert not any(i.startswith("graphstore") for i in _ids(store))
    finally:
        run.stop()


@pytest.mark.parametrize("poll", [False, True], ids=["os-events", "polling"])
def test_a_name_watchfiles_cannot_decode_rewalks_the_tree(tmp_path: Path, poll: bool) -> None:
    root = _repo(tmp_path / "repo")
    store = str(root / ".ctxframe" / "graph")
    run = _Running(root)
    if poll:
        run.stop()
        run.w = Watcher(str(root), debounce_ms=30, poll=True)
        run.t = threading.Thread(target=run.w.run, args=(run.q.put,), daemon=True)
        run.t.start()
        assert run.q.get(timeout=TIMEOUT).trigger == "initial"
    try:
        with open(os.path.join(os.fsencode(root), b"bad\xffname.py"), "wb") as fh:
            fh.write(b"x = 1\n")
        up = run.until(
            lambda: "bad\\xffname.py" in set(_store.read_table(store, "files")["path"]),
            "the skipped name",
        )
        assert up.walked
        _write(root, "lib/d.py", "def dee():\n    return 4\n")  # the watch goes on
        up = run.until(lambda: "lib/d.py::dee" in _ids(store), "lib/d.py")
        assert up.paths == ["lib/d.py"]  # a directory's own mtime (polling) is no change
        _assert_rebuild_equal(root, store, tmp_path)
    finally:
        run.stop()


# -- the command: a subprocess, one line per update, Ctrl-C ------------------------------------
def _spawn(root: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "ctxframe", "watch", "--repo", str(root), *extra]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _line(proc: subprocess.Popen) -> str:
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()
    return lines.get(timeout=TIMEOUT)


def test_command_prints_one_line_per_update_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    proc = _spawn(root, "--json", "--debounce", "30")
    try:
        first = json.loads(_line(proc))
        assert first["verb"] == "watch" and first["trigger"] == "initial"
        assert first["status"] == "ok" and first["mode"] == "full"
        _write(root, "c.py", "from a import a\n\n\ndef sea():\n    return a()\n")
        up = json.loads(_line(proc))
        assert up["paths"] == ["c.py"] and up["status"] == "ok" and up["ms"] > 0
        assert up["mode"] == up["index"]["mode"] and up["version"] == _store.current_version(
            str(root / ".ctxframe" / "graph")
        )
        assert cf.open(str(root)).card("sea").ok
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith("ctxframe watch: watching") and len(lines) == 2
    assert (
        lines[1] == "ctxframe watch: stopped after 2 updates; the store holds the last complete one"
    )


def test_text_lines(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    proc = _spawn(root, "--debounce", "30")
    try:
        first = _line(proc)
        assert "initial index: 3 files · full · " in first
        _write(root, "a.py", "def a():\n    return 11\n")
        line = _line(proc)
        assert "1 file changed: a.py · " in line and line.rstrip().endswith(" ms")
        mode = line.split(" · ")[1]
        assert mode in ("delta", "incremental", "full")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130


def test_ctrl_c_in_the_middle_of_an_update_leaves_a_whole_store(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    proc = _spawn(root, "--debounce", "20")
    store = root / ".ctxframe" / "graph"
    try:
        _line(proc)  # the initial index
        body = "".join(f"def f{j}(a):\n    return f{j - 1}(a)\n\n" for j in range(1, 30))
        for i in range(400):
            _write(tmp_path / "big", f"m{i}.py", body)
        os.replace(tmp_path / "big", root / "big")  # one event: one update of 400 files
        _wait_for_writer(store)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (
        "ctxframe watch: stopped after 1 update; the store holds the last complete one"
    ), err  # the initial one: the second was interrupted
    assert not list(store.glob(".staging-*")), err
    _store.Snapshot(str(store)).verify_all()  # whole: the version before, or the new one
    cf.index(str(root), progress=False)
    _assert_rebuild_equal(root, str(store), tmp_path)


def _wait_for_writer(store: Path) -> None:
    """Until an index holds the store's writer lock."""
    from filelock import FileLock, Timeout

    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        lock = FileLock(str(store / ".lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            return
        lock.release()
        time.sleep(0.005)
    raise AssertionError("the watcher never started the update")


def test_bad_debounce_and_missing_repo(tmp_path: Path, capsys) -> None:
    from ctxframe.cli import main

    assert main(["watch", "--repo", str(tmp_path), "--debounce", "0"]) == 2
    assert "--debounce 0" in capsys.readouterr().err
    assert main(["watch", "--repo", str(tmp_path / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_help_states_the_default_debounce(capsys) -> None:
    from ctxframe.cli import main

    with pytest.raises(SystemExit):
        main(["watch", "--help"])
    assert f"(default {DEBOUNCE_MS})" in " ".join(capsys.readouterr().out.split())

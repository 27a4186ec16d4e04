"""A live Graph: `refresh()` re-indexes and moves, `watch()` keeps it current between calls
(never in the middle of one), an open explorer redraws, and `serve` and the MCP server pick up
a new index without a restart."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._store import tables as _store

TIMEOUT = 60.0


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _write(root, "a.py", "def a():\n    return 1\n")
    _write(root, "lib/util.py", "from a import a\n\n\ndef helper():\n    return a()\n")
    return root


def _until(check, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


# -- refresh -------------------------------------------------------------------------------------
def test_refresh_reindexes_by_default(repo: Path) -> None:
    g = cf.index(str(repo), progress=False)
    _write(repo, "b.py", "def bee():\n    return 2\n")
    assert g.refresh(reindex=False) is g and not g.card("bee").ok  # only moves: nothing new
    assert g.refresh() is g and g.card("bee").ok  # re-indexes first
    assert g.report.parsed == 1 and g.report.mode in ("full", "incremental", "delta")


def test_refresh_of_a_graph_without_its_repository_only_moves(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    cf.index(str(repo), store=str(store), progress=False)
    g = cf.open(str(store))  # a store directory: its root is the repository's
    copy = tmp_path / "copied-store"
    shutil.copytree(store, copy, symlinks=True)
    elsewhere = cf.Graph(str(copy))
    elsewhere.root = str(tmp_path / "not-here")
    version = elsewhere.version
    assert elsewhere.refresh() is elsewhere and elsewhere.version == version
    with pytest.raises(cf.RepoNotFound, match="refresh\\(reindex=False\\)"):
        elsewhere.refresh(reindex=True)
    assert g.refresh().card("helper").ok


def test_refresh_keeps_what_it_built_when_nothing_changed(repo: Path) -> None:
    g = cf.index(str(repo), progress=False)
    assert g.card("helper").ok
    lookups, before = g._lookups, g.version
    g.refresh()  # nothing to write: the same version
    assert g.version == before and g._lookups is lookups
    os.utime(repo / "a.py")  # a new version (the files row's mtime) with the same tables
    g.refresh()
    assert g.version != before and g._lookups.symbols is lookups.symbols
    _write(repo, "a.py", "def a():\n    return 2\n\n\ndef a2():\n    return 3\n")
    g.refresh()
    assert g._lookups is not lookups and g.card("a2").ok


# -- watch ---------------------------------------------------------------------------------------
_EDITS = {
    "add a function": ("a.py", "def a():\n    return 1\n\n\ndef added(x):\n    return a()\n"),
    "rename the called one": ("a.py", "def b():\n    return 1\n"),
    "change a body": ("a.py", "def a():\n    return 2  # two\n"),
    "a new caller": ("lib/util.py", "from a import a\n\n\ndef helper():\n    return a()\n\n"
                     "\nclass Tool:\n    def run(self):\n        return helper()\n"),
    "remove a file's code": ("lib/util.py", "from a import a\n"),
}  # fmt: skip


@pytest.mark.parametrize("edit", sorted(_EDITS))
def test_a_move_patches_the_lookups_it_had_built_equal_to_a_fresh_build(
    repo: Path, edit: str
) -> None:
    g = cf.index(str(repo), progress=False)
    assert g.card("a").ok and g.card("helper").ok  # symbols and arrows built
    old = g._lookups
    _write(repo, *_EDITS[edit])
    g.refresh()
    new, fresh = g._lookups, cf.open(str(repo))._lookups
    assert new is not old
    for attr in ("_ids", "_by_qual", "_by_label", "_by_lower"):
        assert getattr(new.symbols, attr) == getattr(fresh.symbols, attr), attr
    for attr in ("out", "inn"):
        got, want = getattr(new.edge_index, attr), getattr(fresh.edge_index, attr)
        assert got.sort(pl.all(), nulls_last=True).equals(want.sort(pl.all(), nulls_last=True))
        assert got.select("_s", "_d").equals(want.select("_s", "_d")), attr  # display order
    for name in g.nodes["id"].to_list():
        assert g.card(name).to_dict() == cf.open(str(repo)).card(name).to_dict(), name


def test_watch_answers_a_new_function_with_its_indexes_built(repo: Path) -> None:
    g = cf.index(str(repo), progress=False)
    assert g.card("helper").ok and g.query("helper").hits.height  # lookups and ranking built
    seen = []
    with g.watch(debounce_ms=30, on_update=seen.append) as w:
        _until(lambda: len(w.updates) >= 1, "the initial update")
        assert w.updates[0].trigger == "initial" and w.running
        before = g.version
        _write(repo, "b.py", "from a import a\n\n\ndef bee():\n    return a()\n")
        _until(lambda: g.__dict__.get("_pending") is not None or g.version != before, "b.py")
        _until(lambda: g.version != before, "the switch")
        # switched at that call with the symbols already patched off to the side, the arrows
        # patched or answered from the edges meanwhile…
        lookups = g._lookups
        assert "symbols" in lookups.__dict__
        assert "edge_index" in lookups.__dict__ or lookups.pending_arrows
        # …and the arrow and ranking indexes handed over when ready (no call built them here)
        _until(lambda: "edge_index" in lookups.__dict__, "the arrow index")
        assert not lookups.pending_arrows
        _until(lambda: "_rank_index" in g.__dict__, "the ranking index")
        assert "b.py::bee" in set(g._rank_index.nodes["id"])
        card = g.card("bee")
        assert card.ok and any(a["other_label"] == "a" for a in card.to_dict()["arrows"])
        assert g.nodes.equals(_store.read_table(g.store, "nodes"))
        assert "b.py" in w.log[-1] and seen[-1].paths == ["b.py"]
        assert g.refresh() is g and g.report is not None  # a running watch: refresh only moves
        assert "watching" in repr(w) and "watching" in w._repr_html_()
    assert not w.running and "stopped" in repr(w)
    assert g.watch(debounce_ms=30) is not w  # a stopped watch is replaced
    g._watch.stop()


def test_a_call_never_sees_two_versions(repo: Path) -> None:
    g = cf.index(str(repo), progress=False)
    g.card("helper")
    old = g.version
    _write(repo, "b.py", "def bee():\n    return 2\n")
    cf.index(str(repo), progress=False)
    with g._call():  # a call in progress…
        assert g._prepare() is not None  # …while a watch prepares the next version
        assert g.version == old and "b.py::bee" not in set(g.nodes["id"])
    assert g.version != old and "b.py::bee" in set(g.nodes["id"])  # the next call switched


def test_a_prepared_version_never_takes_the_graph_back(repo: Path) -> None:
    g = cf.index(str(repo), progress=False)
    _write(repo, "b.py", "def bee():\n    return 2\n")
    cf.index(str(repo), progress=False)
    g._prepare()
    stale = dict(g._pending)
    _write(repo, "c.py", "def sea():\n    return 3\n")
    g.refresh()
    newest = g.version
    g._pending = stale  # a watch thread that finished after the refresh
    assert g.version == newest and g.card("sea").ok


def test_watch_needs_the_repository(repo: Path, tmp_path: Path) -> None:
    cf.index(str(repo), progress=False)
    g = cf.open(str(repo))
    g.root = None
    with pytest.raises(cf.RepoNotFound, match=r"cf\.open"):
        g.watch()


# -- the explorer --------------------------------------------------------------------------------
def test_explorer_redraws_when_the_graph_moves(repo: Path) -> None:
    g = cf.index(str(repo), progress=False)
    ex = cf.explore(g)
    ex.search("bee helper")
    ex.tabs.selected_index = 1
    hubs = ex.hubs.value
    assert hubs and not any("bee" in label for label, _ in ex.hits.options)
    _write(repo, "b.py", "from lib.util import helper\n\n\ndef bee():\n    return helper()\n")
    g.refresh()  # the explorer is told: it asks again and redraws the open tab
    assert any("bee" in label for label, _ in ex.hits.options)
    assert "updated" in ex.live.value and ex.hubs.value and ex.hubs.value != hubs
    assert "bee" in ex.card.value or ex.selected is not None


def test_explorer_follows_a_watch(repo: Path) -> None:
    g = cf.index(str(repo), progress=False)
    ex = cf.explore(g)
    ex.search("sea")
    with g.watch(debounce_ms=30) as w:
        _until(lambda: len(w.updates) >= 1, "the initial update")
        _write(repo, "c.py", "def sea():\n    return 3\n")
        _until(lambda: any("sea" in label for label, _ in ex.hits.options), "the explorer")
    assert "1 file changed: c.py" in ex.live.value
    assert "c.py" in ex.card.value


def test_explorer_checks_the_version_on_interaction(repo: Path) -> None:
    g = cf.index(str(repo), progress=False)
    other = cf.open(str(repo))  # the explorer's graph is moved by someone else's refresh
    ex = cf.explore(other)
    ex.tabs.selected_index = 1
    hubs = ex.hubs.value
    _write(repo, "b.py", "".join(f"def b{i}():\n    return a()\n\n" for i in range(5)))
    g.refresh()
    other._listeners.clear()  # no push: only the check on the next interaction
    other.refresh(reindex=False)
    ex.tabs.selected_index = 0
    ex.tabs.selected_index = 1
    assert ex.hubs.value != hubs and "updated" in ex.live.value


# -- serve and MCP ---------------------------------------------------------------------------------
def test_serve_picks_up_a_new_index(repo: Path) -> None:
    from ctxframe._apps.serve import App

    app = App(cf.index(str(repo), progress=False))
    status, data = app.api("/api/card", {"name": ["bee"]})
    assert data["status"] == "not-found"
    _write(repo, "b.py", "def bee():\n    return 2\n")
    cf.index(str(repo), progress=False)
    status, data = app.api("/api/card", {"name": ["bee"]})
    assert status == 200 and data["status"] == "ok" and app.moves == 1
    app.api("/api/summary", {})
    assert app.moves == 1  # a request per version check, one move per new version


def test_mcp_picks_up_what_a_watcher_wrote(repo: Path) -> None:
    pytest.importorskip("mcp")
    from ctxframe._apps.mcp import LiveGraph, call
    from ctxframe._store.watcher import Batch, Watcher

    cf.index(str(repo), progress=False)
    live = LiveGraph(str(repo))
    data, is_error = call(live, "card", {"name": "helper"})
    assert not is_error and live.opened == 1
    _write(repo, "b.py", "def bee():\n    return 2\n")
    up = Watcher(str(repo)).update(Batch(paths={"b.py"}))
    assert up.ok and up.version == _store.current_version(live.store)
    data, is_error = call(live, "card", {"name": "bee"})
    assert not is_error and data["status"] == "ok" and live.opened == 2


def test_the_rest_of_a_version_is_built_only_for_the_newest_once_quiet() -> None:
    from ctxframe._core.newest import Newest

    ran: list[int] = []
    worker = Newest(after=0.2)
    for i in range(5):  # a run of saves: each job overtakes the one before
        worker.submit(lambda i=i: ran.append(i))
        time.sleep(0.02)
    _until(lambda: ran, "the newest job")
    time.sleep(0.3)
    assert ran == [4]
    worker.submit(lambda: ran.append(5))
    _until(lambda: ran[-1] == 5, "a job after a quiet time")
    worker.close(5)
    waiting = Newest(after=5)
    waiting.submit(lambda: ran.append(6))
    waiting.close(5)  # a job still waiting for quiet is dropped…
    assert 6 not in ran
    owed = Newest(after=5)
    owed.submit(lambda: ran.append(7))
    owed.close(5, run_waiting=True)  # …or run at once when asked
    assert ran[-1] == 7


def test_a_version_whose_rest_was_dropped_still_gives_the_next_one_its_arrows(repo: Path):
    from ctxframe._store.build import index

    g = cf.index(str(repo), progress=False)
    assert g.card("a").ok and g.card("helper").ok  # symbols and arrows built
    rests: list = []
    for n in (2, 3):
        _write(repo, "a.py", f"def a():\n    return {n}\n\n\ndef a{n}():\n    return a()\n")
        index(str(repo), progress=False)
        g._prepare(None, defer=rests.append)
        assert g.card(f"a{n}").ok  # switched: its arrows read from the edges meanwhile
        assert g._lookups.pending_arrows
    started = time.monotonic()
    rests[-1]()  # a run of saves: only the newest version's rest runs, waiting for no other
    assert time.monotonic() - started < 10
    lookups, fresh = g._lookups, cf.open(str(repo))._lookups
    assert "edge_index" in lookups.__dict__ and not lookups.pending_arrows
    for attr in ("out", "inn"):
        got, want = getattr(lookups.edge_index, attr), getattr(fresh.edge_index, attr)
        assert got.sort(pl.all(), nulls_last=True).equals(want.sort(pl.all(), nulls_last=True))
    for name in g.nodes["id"].to_list():
        assert g.card(name).to_dict() == cf.open(str(repo)).card(name).to_dict(), name

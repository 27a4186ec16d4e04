"""Faults: never a wrong answer, never a traceback (issue 17).

Store versions and snapshot isolation, damaged stores, the writer lock, malformed files,
fuzzed input to every verb, a full disk, killed and interrupted indexes, planted secrets,
adapters' process trees and the server's connections. The experiments are those of
bench/faults_bench.py, run small here; `-m slow` runs them at the benchmark's size.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import random
import shutil
import signal
import socket
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
from ctxframe._core.errors import CtxframeError, StoreCorrupt, StoreLocked
from ctxframe._store import tables as _tables
from ctxframe.cli import main

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("faults_bench", ROOT / "bench" / "faults_bench.py")
fb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fb)

FUZZ = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(autouse=True)
def _slow_only_when_asked(request) -> None:
    """This module's `slow` tests (minutes at the benchmark's size) run under `-m slow` only."""
    if request.node.get_closest_marker("slow") and "slow" not in (
        request.config.getoption("-m") or ""
    ):
        pytest.skip("slow: run with -m slow")


def _version_dir(store: str) -> Path:
    return Path(store) / os.readlink(Path(store) / "current")


# -- wrong answers ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "route",
    [fb.route_stale_cache, fb.route_mixed_versions, fb.route_accepted_corruption,
     fb.route_false_stale],
    ids=["stale-cache", "mixed-versions", "accepted-corruption", "false-stale"],
)  # fmt: skip
def test_no_wrong_answer_route(tmp_path: Path, route) -> None:
    assert route(tmp_path) is False


def test_graph_pins_its_version_until_refresh(indexed_shop: Path) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    before = g.version
    (shop / "services" / "extra.py").write_text("def brand_new_fn():\n    return 1\n")
    cf.index(str(shop), progress=False)
    assert g.version == before
    assert "services/extra.py::brand_new_fn" not in set(g.nodes["id"])
    assert not g.query("brand_new_fn").hits.filter(pl.col("id").str.contains("brand_new")).height
    assert g.refresh() is g and g.version != before
    assert "services/extra.py::brand_new_fn" in set(g.nodes["id"])
    (shop / "services" / "extra.py").write_text("def renamed_fn():\n    return 1\n")
    g.refresh(reindex=True)
    assert "services/extra.py::renamed_fn" in set(g.nodes["id"])
    assert g.report.parsed == 1


def test_old_versions_are_removed_but_pinned_readers_keep_reading(indexed_shop: Path) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    n = g.nodes.height
    old_dir = _version_dir(g.store)
    for i in range(3):
        (shop / f"gen{i}.py").write_text(f"def gen{i}():\n    return {i}\n")
        cf.index(str(shop), progress=False)
    assert not old_dir.exists()  # only the newest two versions stay on disk
    assert len(list(Path(g.store).glob("v-*"))) == 2
    assert g.edges.height > 0 and g.nodes.height == n  # read through the pinned files


def test_cache_lives_in_its_version(indexed_shop: Path) -> None:
    shop = indexed_shop
    g = cf.open(str(shop)).warm()
    cache = _version_dir(g.store) / "cache"
    assert {p.name for p in cache.iterdir()} >= {"key.json", "vocab.arrow", "edges_out.arrow"}
    # damaged: ignored and rebuilt (put in place by a rename, as a writer would: `g` still has
    # the old file mapped, and shrinking a mapped file under it is a SIGBUS, not a damaged cache)
    (cache / "vocab.arrow.tmp").write_bytes(b"\0" * 64)
    os.replace(cache / "vocab.arrow.tmp", cache / "vocab.arrow")
    hits = cf.open(str(shop)).query("refund processing").hits
    assert hits.height and hits.equals(g.query("refund processing").hits)


# -- damaged stores --------------------------------------------------------------------------
def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at % len(data)] ^= 0x10
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("table", ["nodes", "edges", "tokens", "refs"])
def test_damaged_part_every_verb_says_so_and_index_rebuilds(indexed_shop: Path, table: str) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    part = _version_dir(g.store) / _tables.part_name(table)
    _flip(part, part.stat().st_size // 2)
    if table in ("nodes", "edges", "files", "tokens"):
        with pytest.raises(StoreCorrupt, match="ctxframe index"):
            getattr(cf.open(str(shop)), table)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["card", "PaymentGateway", "--repo", str(shop)])
    if table in ("nodes", "edges"):
        assert code == 2 and err.getvalue().count("\n") == 1 and "ctxframe index" in err.getvalue()
    with pytest.raises(StoreCorrupt):  # a damaged store is never "fresh"
        cf.status(str(shop))
    report = cf.index(str(shop), progress=False).report
    assert report.repaired and "rebuilt" in report.repaired and "repaired:" in str(report)
    assert cf.status(str(shop)).fresh
    assert cf.open(str(shop)).card("PaymentGateway").status in ("ok", "ambiguous")


@pytest.mark.parametrize("damage", ["pointer", "meta", "missing-part", "truncated-meta"])
def test_damaged_structure(indexed_shop: Path, damage: str) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    version = _version_dir(g.store)
    if damage == "pointer":
        os.unlink(Path(g.store) / "current")
        os.symlink("v-gone", Path(g.store) / "current")
    elif damage == "meta":
        (version / "meta.json").write_text("{not json")
    elif damage == "missing-part":
        os.unlink(version / "edges" / "part-000.parquet")
    else:
        (version / "meta.json").write_text('["a list"]')
    with pytest.raises(StoreCorrupt, match="ctxframe index"):
        cf.open(str(shop)).edges  # noqa: B018
    report = cf.index(str(shop), progress=False).report
    assert report.repaired
    assert cf.open(str(shop)).edges.height == g.edges.height


@pytest.mark.parametrize("n", [6])
def test_bit_flips_fast(tmp_path: Path, n: int) -> None:
    res = fb.bit_flips(tmp_path, n)
    assert res["count"] == 0, res["examples"]
    assert res["accepted"] == 0


@pytest.mark.slow
def test_bit_flips_full(tmp_path: Path) -> None:
    res = fb.bit_flips(tmp_path, 88)
    assert res["count"] == 0, res["examples"]
    assert res["accepted"] == 0


# -- the writer lock, concurrent writers and readers -----------------------------------------
def test_second_writer_waits_or_fails_fast(shop: Path, capsys) -> None:
    from filelock import FileLock

    g = cf.index(str(shop), progress=False)
    held = FileLock(os.path.join(g.store, ".lock"))
    held.acquire()
    try:
        with pytest.raises(StoreLocked, match="--no-wait"):
            cf.index(str(shop), progress=False, wait=False)
        assert main(["index", "--repo", str(shop), "--no-wait", "--no-progress"]) == 2
        assert "another `ctxframe index`" in capsys.readouterr().err
        done = []
        t = threading.Thread(target=lambda: done.append(cf.index(str(shop), progress=False)))
        t.start()
        time.sleep(0.5)
        assert not done  # waiting for the lock
    finally:
        held.release()
    t.join(timeout=60)
    assert done and "waiting for another" in capsys.readouterr().err


def test_concurrent_writers_and_readers(indexed_shop: Path) -> None:
    shop = indexed_shop
    errors: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                g = cf.open(str(shop))
                ids = set(g.nodes["id"])
                srcs = set(g.edges["src"])
                if not srcs <= ids:
                    errors.append("edges of another version")
                g.query("refund", limit=3)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")

    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers:
        t.start()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = []
    for i in range(2):
        (shop / f"w{i}.py").write_text(f"def w{i}():\n    return {i}\n")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "ctxframe", "index", "--repo", str(shop), "--no-progress"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    outs = [p.communicate(timeout=120)[1].decode() for p in procs]
    stop.set()
    for t in readers:
        t.join()
    assert [p.returncode for p in procs] == [0, 0], outs
    assert not errors, errors[:3]
    assert not list(Path(shop / ".ctxframe" / "graph").glob(".staging-*"))
    assert cf.status(str(shop)).fresh


# -- malformed files -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(fb.MALFORMED))
def test_malformed_file_is_skipped_not_fatal(tmp_path: Path, name: str) -> None:
    rel, content = fb.MALFORMED[name]
    repo = tmp_path / "repo"
    fb._write(repo, {"ok.py": "def ok():\n    return 1\n"})
    if isinstance(rel, bytes):
        with open(os.path.join(os.fsencode(str(repo)), rel), "wb") as fh:
            fh.write(content.encode())
    else:
        fb._write(repo, {rel: content})
    g = cf.index(str(repo), progress=False)
    assert "ok.py::ok" in set(g.nodes["id"])
    if name.startswith("deep") or isinstance(rel, bytes):
        reasons = g.files.filter(pl.col("skip_reason").is_not_null())["skip_reason"].to_list()
        assert reasons and all(("nested too deeply" in r) or ("UTF-8" in r) for r in reasons)
    assert cf.status(str(repo)).fresh


def test_extraction_error_is_a_skip_reason(tmp_path: Path, monkeypatch) -> None:
    from ctxframe._ingest import docs

    def boom(*a, **kw):
        raise ValueError("a reader bug")

    monkeypatch.setattr(docs, "extract_document", boom)
    fb._write(tmp_path, {"README.md": "# Title\n", "ok.py": "def ok():\n    return 1\n"})
    g = cf.index(str(tmp_path), progress=False)
    row = g.files.filter(pl.col("path") == "README.md")
    assert row["skip_reason"].to_list() == ["read error (ValueError: a reader bug)"]


# -- fuzzed input ----------------------------------------------------------------------------
_TEXT = st.one_of(st.text(max_size=30), st.sampled_from(fb._FUZZ_TEXT))
_INTS = st.sampled_from(fb._FUZZ_INTS)


@FUZZ
@given(
    verb=st.sampled_from(["query", "rank", "card", "affected", "path", "change_plan",
                          "explain", "hubs", "boundaries", "neighbourhood"]),
    a=_TEXT, b=_TEXT, n=_INTS,
)  # fmt: skip
def test_fuzzed_graph_verbs_never_traceback(shop_graph, verb, a, b, n) -> None:
    call = {
        "query": lambda: shop_graph.query(a, limit=n),
        "rank": lambda: shop_graph.rank(a, limit=n, within=b or None),
        "card": lambda: shop_graph.card(a),
        "affected": lambda: shop_graph.affected(a, depth=n),
        "path": lambda: shop_graph.path(a, b),
        "change_plan": lambda: shop_graph.change_plan(a, depth=n),
        "explain": lambda: shop_graph.explain(a),
        "hubs": lambda: shop_graph.hubs(top=n),
        "boundaries": lambda: shop_graph.boundaries(a or None),
        "neighbourhood": lambda: shop_graph.neighbourhood(a, depth=n),
    }[verb]
    try:
        str(call())
    except CtxframeError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(
    verb=st.sampled_from(["query", "card", "affected", "path", "change-plan", "explain",
                          "boundaries", "hubs"]),
    a=_TEXT, b=_TEXT,
)  # fmt: skip
def test_fuzzed_cli_never_traceback(shop_graph, verb, a, b) -> None:
    argv = {
        "path": [verb, a, b], "hubs": [verb, "--top", "3"], "boundaries": [verb],
    }.get(verb, [verb, a])  # fmt: skip
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main([*argv, "--repo", shop_graph.root])
        except SystemExit as exc:  # argparse: usage and one error line
            code = exc.code
    assert code in (0, 1, 2)
    assert "Traceback" not in err.getvalue()


def test_non_utf8_and_dash_arguments(shop_graph, capsys) -> None:
    bad = os.fsdecode(b"caf\xe9 refund")  # what a shell hands Python for Latin-1 bytes
    assert main(["query", bad, "--repo", shop_graph.root, "--limit", "3"]) == 0
    assert "\ufffd" in capsys.readouterr().out or True
    assert main(["query", "--repo", shop_graph.root, "--", "--limit=5"]) == 0
    assert main(["card", "\ud800", "--repo", shop_graph.root]) == 1
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.slow
def test_fuzz_full(tmp_path: Path) -> None:
    res = fb.fuzz(tmp_path, 600)
    assert res["count"] == 0, res["examples"]


# -- disk full, permissions ------------------------------------------------------------------
def test_disk_full_is_one_clean_line(tmp_path: Path) -> None:
    res = fb.disk_full(tmp_path)
    if "skipped" in res:
        pytest.skip(res["skipped"])
    assert res["count"] == 0, res["result"]


def test_unwritable_store_is_one_line(shop: Path, tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    assert main(["index", "--repo", str(shop), "--store", str(blocker / "s"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--store" in err


# -- killed and interrupted ------------------------------------------------------------------
def _big_repo(root: Path, files: int) -> Path:
    def body(i: int) -> str:
        return "".join(f"def f{i}_{j}(a):\n    return f{i}_{j - 1}(a)\n\n" for j in range(1, 25))

    fb._write(root, {f"pkg/m{i}.py": body(i) for i in range(files)})
    return root


def _kill_and_check(repo: Path, sig: int, after: float) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "ctxframe", "index", "--repo", str(repo), "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(after)
    proc.send_signal(sig)
    err = proc.communicate(timeout=60)[1].decode()
    assert "Traceback" not in err
    time.sleep(0.5)
    assert fb._descendants_of(str(repo)) == []  # no worker outlives the indexer
    store = repo / ".ctxframe" / "graph"
    with contextlib.suppress(cf.StoreNotFound):
        cf.open(str(repo)).nodes  # noqa: B018  the store is loadable (old or new)
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=300)
    assert not list(store.glob(".staging-*")) and not list(store.parent.glob("graph.tmp-*"))
    full = repo.parent / "full"
    cf.index(str(repo), store=str(full), rebuild=True, progress=False)
    assert fb._same_tables(str(store), str(full))
    shutil.rmtree(full)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timer")
def test_an_interrupt_in_a_weakref_callback_still_stops_the_run() -> None:
    """Ctrl-C that lands in a weakref callback (Python prints such an exception and drops
    it) stops the command with its one line and exit code 130, no traceback."""
    code = (
        "import sys, time, weakref\n"
        "from ctxframe import cli\n"
        "class T: pass\n"
        "def cb(_): raise KeyboardInterrupt\n"
        "def run(args):\n"
        "    t = T(); r = weakref.ref(t, cb); del t\n"
        "    for _ in range(200): time.sleep(0.01)\n"
        "    return 0\n"
        "cli._COMMANDS['card'] = run\n"
        "sys.exit(cli.main(['card', 'x']))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 130
    assert "Traceback" not in done.stderr and "interrupted" in done.stderr


def test_sigint_mid_index(tmp_path: Path) -> None:
    repo = _big_repo(tmp_path / "repo", 200)
    _kill_and_check(repo, signal.SIGINT, 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
def test_sigkill_and_sigint_at_random_points(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    repo = _big_repo(tmp_path / "repo", 800)
    for sig in (signal.SIGKILL, signal.SIGINT):
        _kill_and_check(repo, sig, rng.uniform(0.3, 4.0))


@pytest.mark.slow
def test_orphans_after_sigkills(tmp_path: Path) -> None:
    res = fb.orphans(tmp_path, 20)
    assert res["count"] == 0 and not res["temp_left"] and not res["dead_spills_left"], res


def test_stale_spill_and_staging_dirs_are_removed(shop: Path) -> None:
    import tempfile

    g = cf.index(str(shop), progress=False)
    dead = 2**22 + 12345  # above the default pid_max: never a live process
    spill = Path(tempfile.gettempdir()) / f"ctxframe-spill-{dead}-abc"
    spill.mkdir(exist_ok=True)
    staging = Path(g.store) / f".staging-{dead}"
    staging.mkdir()
    legacy_tmp = Path(g.store + f".tmp-{dead}")
    legacy_tmp.mkdir()
    (shop / "new.py").write_text("def n():\n    return 1\n")
    cf.index(str(shop), progress=False)
    assert not spill.exists() and not staging.exists() and not legacy_tmp.exists()


# -- secrets ---------------------------------------------------------------------------------
def test_planted_secrets_never_reach_the_store(tmp_path: Path) -> None:
    """The older planted set: every credential is absent from every byte and every decoded
    cell of the store, caches included."""
    res = fb.secrets(tmp_path)
    assert res["count"] == 0, res["found"]
    g = cf.open(str(tmp_path / "secrets"))
    assert g.card("connect").status == "ok"  # the rows are there, the values are not
    assert 'password="***"' in g.nodes.filter(pl.col("label") == "connect")["signature"][0]


def test_planted_forms_leave_by_no_way_out(tmp_path: Path) -> None:
    """Every planted form (58, every language and file kind) is absent from every output
    verb (CLI text and JSON, context in three formats, the hook, MCP tool results, serve's
    pages, explain, export), from every byte of the store and its caches and of the
    extraction cache; none is found by `query VALUE`."""
    res = fb.planted_secrets(tmp_path, quick=True)
    assert res["total"] >= 40 and res["outputs"] > 300
    assert res["count"] == 0, res["leaks"]
    assert res["searchable"] == []


# -- adapters' process trees -----------------------------------------------------------------
def test_adapter_tree_killed_on_timeout(tmp_path: Path) -> None:
    from ctxframe._ingest.adapters import BatchError, run_one

    folder = tmp_path / ".ctxframe" / "adapters"
    folder.mkdir(parents=True)
    marker = f"ctxframe-test-{os.getpid()}-{time.time_ns()}"
    script = folder / "slow.py"
    script.write_text(
        "import subprocess, time\n"
        f"subprocess.Popen(['bash', '-c', 'exec -a {marker} sleep 300'], start_new_session=True)\n"
        f"subprocess.Popen(['bash', '-c', 'exec -a {marker} sleep 300'])\n"
        "time.sleep(300)\n"
    )
    with pytest.raises(BatchError, match="timed out"):
        run_one(str(tmp_path), ".ctxframe/adapters/slow.py", timeout=2.0)
    time.sleep(0.3)
    assert fb._descendants_of(marker) == []


# -- serve -----------------------------------------------------------------------------------
@pytest.fixture()
def quick_server(shop_graph, monkeypatch):
    from ctxframe._apps import serve

    monkeypatch.setattr(serve, "CONNECTION_TIMEOUT", 0.5)
    srv = serve.make_server(shop_graph, port=0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _raw(port: int, data: bytes, wait: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        chunks = []
        with contextlib.suppress(TimeoutError):
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


def test_serve_http09_and_idle_clients(quick_server, capfd) -> None:
    port = quick_server.server_port
    t0 = time.monotonic()
    body = _raw(port, b"GET /api/summary\r\n")  # HTTP/0.9: an answer, then the close
    assert b"loopback hosts only" in body and time.monotonic() - t0 < 0.9  # no Host header
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(30)]
    t0 = time.monotonic()
    assert b"200 OK" in _raw(port, b"GET /api/summary HTTP/1.1\r\nHost: localhost\r\n\r\n", 1.5)
    for s in idle:  # dropped by the server after its timeout
        s.settimeout(5)
        assert s.recv(10) == b""
        s.close()
    assert time.monotonic() - t0 < 8
    err = capfd.readouterr().err
    assert "dropped 127.0.0.1" in err and "Traceback" not in err
    assert threading.active_count() < 60


def test_store_copied_without_symlinks_still_reads_and_indexes(
    indexed_shop: Path, tmp_path: Path
) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    copy = tmp_path / "copy"
    shutil.copytree(g.store, copy)  # follows `current`: a plain directory in the copy
    assert cf.open(str(shop), store=str(copy)).nodes.height == g.nodes.height
    (shop / "more.py").write_text("def more():\n    return 1\n")
    cf.index(str(shop), store=str(copy), progress=False)
    assert os.path.islink(copy / "current")
    assert "more.py::more" in set(cf.open(str(shop), store=str(copy)).nodes["id"])

"""A hostile run (issue 45): damaged derived files never answer, reads never block, invalid
ignore patterns never abort an index, long inputs cost little, JSON is always whole, idle
clients never starve `serve`, and the remaining tracebacks are one-line errors. The
experiments are bench/faults_bench.py's, run small."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxframe as cf
from ctxframe._core.errors import StoreCorrupt
from ctxframe.cli import main

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("faults_bench", ROOT / "bench" / "faults_bench.py")
fb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fb)


def _run(argv: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    """One CLI run in process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="strict")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: usage and one error line
                code = exc.code
    finally:
        sys.stdin = old
    return code, out.getvalue(), err.getvalue()


def _clean(err: str) -> bool:
    errors = [ln for ln in err.splitlines() if ln.startswith("ctxframe: error")]
    return "Traceback" not in err and "internal error" not in err and len(errors) <= 1


# -- damaged derived files ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_versions(tmp_path_factory) -> tuple[Path, Path, Path, dict]:
    """The sample indexed twice (two versions on disk), both with every derived file, and the
    answers of the undamaged store."""
    work = tmp_path_factory.mktemp("damage")
    repo = work / "repo"
    shutil.copytree(fb.SAMPLE, repo)
    shutil.rmtree(repo / ".ctxframe" / "adapters", ignore_errors=True)
    cf.index(str(repo), progress=False)
    (repo / "services" / "extra.py").write_text("def extra_fn():\n    return 1\n")
    cf.index(str(repo), progress=False)
    store = Path(cf.open(str(repo)).store)
    versions = sorted(store.glob("v-*"))
    for v in versions:
        os.unlink(store / "current")
        os.symlink(v.name, store / "current")
        cf.open(str(repo)).warm()
        _run(["card", "PaymentGateway", "--repo", str(repo)])  # the card cache
    os.unlink(store / "current")
    os.symlink(versions[-1].name, store / "current")
    want = _answers(repo)
    pristine = work / "pristine"
    shutil.copytree(store, pristine, symlinks=True)
    return repo, store, pristine, want


def _answers(repo: Path) -> dict:
    g = cf.open(str(repo))
    return {
        "query": g.query("refund processing", limit=8).hits.select("id", "score").to_dicts(),
        "card": _run(["card", "PaymentGateway", "--json", "--repo", str(repo)])[:2],
        "affected": str(g.affected("PaymentGateway")),
    }


_DERIVED = ["cache/node_attrs.arrow", "cache/trigrams.arrow", "cache/vocab.arrow",
            "cache/edges_out.arrow", "cache/key.json", "cache/card.sqlite", "cache/card.blobs",
            "cache/card.json"]  # fmt: skip
_HOW = ["flip", "truncate", "swap", "other-version", "fifo", "link-root", "link-dotdot",
        "link-loop"]  # fmt: skip


@pytest.mark.parametrize("how", _HOW)
@pytest.mark.parametrize("rel", _DERIVED)
def test_damaged_derived_file_never_answers(two_versions, rel: str, how: str) -> None:
    """Every derived file damaged every way: the answers are the undamaged store's (the
    cache is rebuilt) or one clean error, never another answer, never a hang."""
    repo, store, pristine, want = two_versions
    shutil.rmtree(store)
    shutil.copytree(pristine, store, symlinks=True)
    versions = sorted(store.glob("v-*"))
    version, older = versions[-1], versions[0]
    if not (version / rel).exists():
        pytest.skip(f"{rel} not written here")
    fb._apply(version / rel, how, version, older)
    try:
        got = _answers(repo)
    except StoreCorrupt:
        return
    assert got == want


def test_cache_dir_from_another_version_is_rebuilt(two_versions) -> None:
    repo, store, pristine, want = two_versions
    shutil.rmtree(store)
    shutil.copytree(pristine, store, symlinks=True)
    versions = sorted(store.glob("v-*"))
    fb._apply(versions[-1] / "cache", "other-cache-dir", versions[-1], versions[0])
    assert _answers(repo) == want


@pytest.mark.parametrize("how", ["fifo", "link-root", "link-dotdot", "link-loop"])
@pytest.mark.parametrize("verb", [["query", "refund"], ["status"], ["hubs"],
                                  ["affected", "PaymentGateway"], ["index", "--no-progress"]])
def test_a_part_that_is_not_a_file_is_one_line(two_versions, verb: list[str], how: str) -> None:
    """A FIFO or a link in place of a part: every verb answers at once with one line (index
    repairs the store), never hangs."""
    repo, store, pristine, want = two_versions
    shutil.rmtree(store)
    shutil.copytree(pristine, store, symlinks=True)
    version = sorted(store.glob("v-*"))[-1]
    fb._apply(version / "nodes" / "part-000.parquet", how, version, version)
    t0 = time.monotonic()
    code, _out, err = _run([*verb, "--repo", str(repo)])
    assert time.monotonic() - t0 < 30 and _clean(err)
    if verb[0] == "index":
        assert code == 0 and _answers(repo) == want
    else:
        assert code == 2 and "ctxframe index" in err


# -- invalid ignore patterns ------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(fb.IGNORE_CASES))
def test_invalid_ignore_pattern_is_skipped(tmp_path: Path, name: str, capfd) -> None:
    from ctxframe._ingest import walk

    walk._WARNED.clear()  # said once per process: this test wants to hear it
    rel, text = fb.IGNORE_CASES[name]
    fb._write(tmp_path, {"ok.py": "def ok():\n    return 1\n", "sub/keep.py": "x = 1\n", rel: text})
    g = cf.index(str(tmp_path), progress=False)
    assert "ok.py::ok" in set(g.nodes["id"]) and g.query("ok").hits.height
    if "[z-a]" in text and "deprioritize" not in name:
        err = capfd.readouterr().err
        assert "invalid ignore pattern" in err and "[z-a]" in err and "skipped" in err


def test_within_an_invalid_glob_is_one_line(shop_graph) -> None:
    code, _out, err = _run(["query", "refund", "--within", "[z-a]", "--repo", shop_graph.root])
    assert code == 2 and "--within" in err and _clean(err)


# -- long inputs ------------------------------------------------------------------------------
_LONG = fb._long_inputs()


@pytest.mark.parametrize("kind", sorted(_LONG))
@pytest.mark.parametrize("verb", ["query", "context", "card", "affected", "explain",
                                  "change_plan", "path", "neighbourhood", "boundaries"])
def test_long_input_is_cut_and_fast(shop_graph, verb: str, kind: str, capsys) -> None:
    text = _LONG[kind]
    call = {"path": lambda: shop_graph.path(text, text)}.get(
        verb, lambda: getattr(shop_graph, verb)(text))  # fmt: skip
    t0 = time.perf_counter()
    str(call())
    assert time.perf_counter() - t0 < 2.0
    assert "was cut to its first" in capsys.readouterr().err


def test_cut_is_said_in_the_echo(shop_graph) -> None:
    card = shop_graph.card("x" * 5000)
    assert card.name.endswith("…") and len(card.name) == 1001
    assert shop_graph.query("refund " * 2000).query.endswith("…")


# -- JSON is always whole ---------------------------------------------------------------------
_QUESTIONS = st.one_of(
    st.text(min_size=1, max_size=60),
    st.sampled_from(["refund " * 2000, "x" * 20000, '"\\\n' * 500, "where is refund processing",
                     "</context>]]>", "PaymentGateway"]),
)


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(q=_QUESTIONS, budget=st.integers(min_value=1, max_value=5000))
def test_context_json_parses_at_any_budget(shop_graph, q: str, budget: int) -> None:
    """Random questions at random budgets: the JSON rendering is one whole document, within
    the budget whenever the bare skeleton fits."""
    if not q.strip():
        return
    with contextlib.redirect_stderr(io.StringIO()):
        ctx = shop_graph.context(q, budget_tokens=budget, format="json")
        text = ctx.render()
    data = json.loads(text)
    assert data["verb"] == "context"
    assert len(text) <= budget * 4 or not data["hits"]
    assert ctx.to_dict() == data


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    verb=st.sampled_from(["query", "context", "card", "affected", "explain", "change-plan"]),
    q=_QUESTIONS,
    budget=st.integers(min_value=1, max_value=3000),
)
def test_every_json_output_parses(shop_graph, verb: str, q: str, budget: int) -> None:
    argv = ["context", "--format", "json"] if verb == "context" else [verb, "--json"]
    code, out, err = _run([*argv, "--budget", str(budget), "--repo", shop_graph.root, "--", q])
    if code in (0, 1):
        json.loads(out)
    assert _clean(err)


# -- serve ------------------------------------------------------------------------------------
def test_serve_answers_while_300_connections_idle(shop_graph) -> None:
    from ctxframe._apps import serve

    with contextlib.redirect_stderr(io.StringIO()):
        srv = serve.make_server(shop_graph, port=0)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        port = srv.server_port
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
        for _ in range(20):  # slow senders: half a request head
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /api/summary HTTP/1.1\r\nHo")
            held.append(s)
        try:
            time.sleep(0.3)
            t0 = time.monotonic()
            got = fb_raw(port, b"GET /api/summary HTTP/1.1\r\nHost: localhost\r\n\r\n")
            assert b" 200 " in got[:20] and time.monotonic() - t0 < 1.0
            dup = fb_raw(port, b"GET /api/summary HTTP/1.1\r\nHost: localhost\r\n"
                               b"Host: evil.test\r\n\r\n")  # fmt: skip
            assert b" 400 " in dup[:20]
        finally:
            for s in held:
                s.close()
            srv.shutdown()
            srv.server_close()


def fb_raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


# -- one-line errors (item 9, and issue 43's overlap) -----------------------------------------
@pytest.mark.parametrize("how", ["garbage", "link to /", "link to ..", "loop", "fifo"])
def test_damaged_pointer_is_one_line_without_del_traceback(indexed_shop: Path, how: str,
                                                           capfd) -> None:  # fmt: skip
    cur = Path(indexed_shop) / ".ctxframe" / "graph" / "current"
    cur.unlink()
    {"garbage": lambda: cur.write_bytes(b"\x00\xffgarbage"),
     "link to /": lambda: os.symlink("/", cur), "link to ..": lambda: os.symlink("..", cur),
     "loop": lambda: os.symlink("current", cur), "fifo": lambda: os.mkfifo(cur)}[how]()  # fmt: skip
    for verb in (["query", "refund"], ["card", "PaymentGateway"], ["status"]):
        code, _out, err = _run([*verb, "--repo", str(indexed_shop)])
        assert code == 2 and _clean(err) and "ctxframe index" in err
    import gc

    gc.collect()  # a Snapshot that failed half-way is collected without an AttributeError
    assert "Exception ignored" not in capfd.readouterr().err
    assert cf.index(str(indexed_shop), progress=False).report.repaired


def test_store_a_regular_file_is_one_line(shop_graph, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    code, _out, err = _run(["query", "refund", "--repo", shop_graph.root, "--store", str(plain)])
    assert code == 2 and _clean(err) and "not a directory" in err


@pytest.mark.parametrize("port", ["-1", "70000", "99999", "x"])
def test_serve_bad_port_is_one_line(port: str) -> None:
    code, _out, err = _run(["serve", f"--port={port}"])
    assert code == 2 and _clean(err) and "--port" in err


def test_eval_on_a_binary_file_is_one_line(shop_graph, tmp_path: Path) -> None:
    binary = tmp_path / "q.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)
    code, _out, err = _run(["eval", str(binary), "--repo", shop_graph.root])
    assert code == 2 and _clean(err) and "JSONL" in err


@pytest.mark.parametrize("raw", [b"\xff\xfe refund \xc3(", b'{"prompt": "refund \\udc80 gateway"}'])
def test_hook_with_bad_bytes_still_answers(shop_graph, raw: bytes) -> None:
    code, out, err = _run(["hook", "prompt", "--repo", shop_graph.root], stdin=raw)
    assert code == 0 and "Error" not in err and "refund" in out.lower()


def test_status_never_blocks_on_a_fifo_in_the_tree(indexed_shop: Path) -> None:
    target = Path(indexed_shop) / "services" / "payments" / "gateway.py"
    target.unlink()
    os.mkfifo(target)
    st = cf.status(str(indexed_shop))
    assert not st.fresh
    ctx = cf.open(str(indexed_shop)).context("refund gateway")  # the source reader too
    assert ctx.render()
    assert pl.DataFrame({"x": [1]}).height == 1


def test_a_store_masked_by_older_rules_is_rebuilt_once(indexed_shop: Path) -> None:
    """A store written before the current secret rules holds rows they would mask: the next
    index parses every file again (once), so no such value stays searchable."""
    g = cf.open(str(indexed_shop))
    meta_path = Path(g.store) / os.readlink(Path(g.store) / "current") / "meta.json"
    meta = json.loads(meta_path.read_text())
    assert meta["redaction"] >= 2
    meta.pop("redaction")
    meta_path.write_text(json.dumps(meta))
    files = g.files.filter(pl.col("language").is_not_null()).height
    assert cf.index(str(indexed_shop), progress=False).report.parsed >= files
    assert cf.index(str(indexed_shop), progress=False).report.parsed == 0

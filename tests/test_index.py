"""Indexing end to end: store layout, incremental == full rebuild, atomicity, bad input."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxframe as cf
from ctxframe._core.schema import EDGES, FILES, NODES, TOKENS, VOCAB
from ctxframe._ingest import extract as _extract
from ctxframe._rank import fields as _fields
from ctxframe._store import build as _indexer
from ctxframe._store import tables as _store


def _tables(store: str) -> dict[str, pl.DataFrame]:
    names = ("nodes", "edges", "files", "tokens", "vocab")
    return {n: _store.read_table(store, n) for n in names}


def _version_dir(store: str) -> str:
    """The directory of the store's current version."""
    return os.path.join(store, os.readlink(os.path.join(store, "current")))


def _canonical(t: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    files = t["files"].drop("mtime_ns")  # stat facts differ between copies, content does not
    return {
        "nodes": t["nodes"].sort(pl.all()),
        "edges": t["edges"].sort(pl.all(), nulls_last=True),
        "files": files.sort(pl.all(), nulls_last=True),
        "tokens": t["tokens"].sort(pl.all()),
        "vocab": t["vocab"],
    }


def test_store_tables_match_schema(shop_graph) -> None:
    assert shop_graph.nodes.schema == NODES
    assert shop_graph.edges.schema == EDGES
    assert shop_graph.files.schema == FILES
    assert _store.read_table(shop_graph.store, "tokens").schema == TOKENS
    assert _store.read_table(shop_graph.store, "vocab").schema == VOCAB
    assert shop_graph.tokens.columns == ["node_id", "field", "token", "tf"]  # decoded
    meta = json.loads((Path(shop_graph.store) / "meta.json").read_text())
    assert {"schema_version", "ctxframe_version", "git_head", "indexed_at", "root"} <= set(meta)


def test_sample_has_the_refund_flow(shop_graph) -> None:
    ids = set(shop_graph.nodes["id"])
    proc = "services/payments/refund_processor.py::PaymentRefundProcessor.ProcessRefund"
    assert proc in ids
    assert "module://requests" in ids
    calls = shop_graph.edges.filter(pl.col("kind") == "calls")
    callers = set(calls.filter(pl.col("dst") == proc)["src"])
    assert "services/payments/checkout.py::CheckoutHandler.handle_refund_request" in callers
    callees = set(calls.filter(pl.col("src") == proc)["dst"].drop_nulls())
    assert "services/payments/gateway.py::PaymentGateway.Refund" in callees


def test_sql_runs_duckdb_over_frames(shop_graph) -> None:
    out = shop_graph.sql("select kind, count(*) as n from nodes group by kind order by kind")
    assert isinstance(out, pl.DataFrame)
    assert dict(out.iter_rows())["file"] == shop_graph.nodes.filter(pl.col("kind") == "file").height


def _edit_sequence(root: Path):
    """Scripted edits: add a file, modify one, rename a function, delete a file."""
    pay = root / "services" / "payments"
    yield lambda: (pay / "audit.py").write_text(
        "from services.payments.refund_processor import validate_refund_amount\n\n"
        "def audit_refund(amount):\n    return validate_refund_amount(amount, amount)\n"
    )
    yield lambda: (pay / "checkout.py").write_text(
        (pay / "checkout.py").read_text()
        + "\n\ndef checkout_summary():\n    return audit_refund(1)\n"
    )
    yield lambda: (pay / "refund_processor.py").write_text(
        (pay / "refund_processor.py")
        .read_text()
        .replace("validate_refund_amount", "check_refund_amount")
    )
    yield lambda: (root / "services" / "billing" / "format.py").unlink()


def test_incremental_equals_full_rebuild(shop: Path, tmp_path: Path) -> None:
    inc_store = str(tmp_path / "inc")
    cf.index(str(shop), store=inc_store, progress=False)
    for n, edit in enumerate(_edit_sequence(shop)):
        edit()
        report = cf.index(str(shop), store=inc_store, progress=False).report
        assert report.parsed <= 2, f"step {n} re-parsed {report.parsed} files"
        full_store = str(tmp_path / f"full{n}")
        cf.index(str(shop), store=full_store, rebuild=True, progress=False)
        inc, full = _canonical(_tables(inc_store)), _canonical(_tables(full_store))
        for name in inc:
            assert inc[name].equals(full[name]), f"step {n}: {name} differs from a full rebuild"


def _prepend(line: str):
    return lambda text: line + text


# (file, edit, expected mode): body-only edits take the delta path; anything that can change
# another file's resolution (a new definition, an import, a boundary read) resolves again.
_REINDEX_EDITS = [
    ("services/payments/refund_processor.py", _prepend("# moved down\n\n"), "delta"),
    (
        "services/payments/checkout.py",
        lambda t: t.replace(
            "    def handle_refund_request", "    # audit\n    def handle_refund_request", 1
        ),
        "delta",
    ),
    ("gateway-go/refund/service.go", _prepend("// moved\n"), "delta"),
    ("apps/desktop/context/format.ts", _prepend("// moved\n\n"), "delta"),
    ("docs/refunds.md", lambda t: t.replace("\n", "\n\n", 3), "delta"),
    ("services/payments/checkout.py", lambda t: t + "\n\ndef added():\n    pass\n", "delta"),
    (  # a rename: callers elsewhere resolve again
        "services/payments/refund_processor.py",
        lambda t: t.replace("validate_refund_amount", "check_refund_amount"),
        "delta",
    ),
    ("gateway-go/refund/service.go", lambda t: t + "\nfunc Added() {}\n", "delta"),
    ("services/payments/checkout.py", lambda t: t.replace("(", "(\n", 1), "delta"),
    (  # the graph does not change (a message inside a body): only the body's tokens change
        "services/payments/refund_processor.py",
        lambda t: t.replace("must be positive", "must be above zero"),
        "delta",
    ),
    (  # a new function at the end: nodes, edges and tokens change, the references do not
        "services/payments/refund_processor.py",
        lambda t: t + "\n\ndef appended(value):\n    pass\n",
        "delta",
    ),
    # a Python import: read by its own file's resolution alone (the value flow solves it)
    ("services/payments/checkout.py", _prepend("import json\n"), "delta"),
    # a module no file imported before: a new module stub, a whole resolution
    ("services/payments/checkout.py", _prepend("import never_imported_before\n"), "incremental"),
    ("services/payments/gateway.py", _prepend("# reads env vars\n"), "incremental"),
]


def _part_files(version: str) -> list[str]:
    """Every file of a version directory, relative to it (the tables' parts included)."""
    return [str(p.relative_to(version)) for p in Path(version).rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    ("path", "edit", "mode"), _REINDEX_EDITS, ids=[f"{p}-{m}" for p, _, m in _REINDEX_EDITS]
)
def test_reindex_modes_equal_full_rebuild(bare_shop, tmp_path: Path, path, edit, mode) -> None:
    shop, store = bare_shop  # without adapters: they are re-run, never a delta
    target = shop / path
    target.write_text(edit(target.read_text()))
    old = _version_dir(store)
    before = {n: os.stat(os.path.join(old, n)).st_ino for n in _part_files(old)}
    report = cf.index(str(shop), store=store, progress=False).report
    assert (report.mode, report.parsed) == (mode, 1)
    new = _version_dir(store)
    assert new != old  # a new version, the old one left as it was
    kept = {n for n, ino in before.items() if os.stat(os.path.join(new, n)).st_ino == ino}
    if "above zero" in target.read_text():  # files, meta and the body's tokens written
        assert kept >= {"nodes/part-000.parquet", "edges/part-000.parquet", "refs/part-000.parquet"}
        assert "tokens/part-000.parquet" not in kept
    if "def appended" in target.read_text():
        assert "refs/part-000.parquet" in kept and "nodes/part-000.parquet" not in kept
    full = str(tmp_path / "full")
    cf.index(str(shop), store=full, rebuild=True, progress=False)
    inc, want = _canonical(_tables(store)), _canonical(_tables(full))
    for name in inc:
        assert inc[name].equals(want[name]), f"{name} differs from a full rebuild"
    refs = [_store.read_table(s, "refs") for s in (store, full)]
    assert refs[0].sort(pl.all(), nulls_last=True).equals(refs[1].sort(pl.all(), nulls_last=True))


@pytest.mark.parametrize("spill", [False, True], ids=["pooled", "pooled-spilled"])
def test_pooled_extraction_equals_one_batch(shop: Path, tmp_path: Path, monkeypatch, spill) -> None:
    """The process pool (large repositories), with or without each batch's rows spilled to
    scratch files (very large ones: body counts too, the token table made a few node rows
    at a time, the edges sorted a range at a time), makes the same store as one batch."""
    plain = str(tmp_path / "plain")
    cf.index(str(shop), store=plain, progress=False)
    monkeypatch.setattr(_indexer, "_POOL_MIN_FILES", 1)
    monkeypatch.setattr(_indexer, "_CHUNK", 4)
    monkeypatch.setattr(_indexer, "_SPILL_FILES", 0 if spill else 10**9)
    if spill:
        monkeypatch.setattr(_fields, "_SLICE", 7)
        monkeypatch.setattr(_indexer, "_SORT_ROWS", 50)  # edges through a scratch file, by range
    pooled = str(tmp_path / "pooled")
    cf.index(str(shop), store=pooled, progress=False)
    got, want = _canonical(_tables(pooled)), _canonical(_tables(plain))
    for name in want:
        assert got[name].equals(want[name]), name
    refs = [_store.read_table(s, "refs").sort(pl.all(), nulls_last=True) for s in (pooled, plain)]
    assert refs[0].equals(refs[1])


def test_unchanged_run_reparses_nothing(indexed_shop: Path) -> None:
    shop = indexed_shop
    os.utime(shop / "services" / "payments" / "gateway.py")  # new mtime, same bytes
    report = cf.index(str(shop), progress=False).report
    assert report.parsed == 0


def test_run_that_finds_nothing_keeps_the_version_and_its_caches(indexed_shop: Path) -> None:
    shop = indexed_shop
    store = _store.default_store(str(shop))
    first = cf.index(str(shop), progress=False).report  # the adapters' rows settle
    shutil.rmtree(shop / ".ctxframe" / "adapters")  # adapters always resolve again
    written = cf.index(str(shop), progress=False).report
    version = _store.current_version(store)
    g = cf.open(str(shop)).warm()
    cache = sorted(p.name for p in (Path(store) / version / "cache").iterdir())
    again = cf.index(str(shop), progress=False).report
    assert again.mode == "unchanged" and again.parsed == 0, (first.mode, again.mode)
    assert _store.current_version(store) == version
    assert sorted(p.name for p in (Path(store) / version / "cache").iterdir()) == cache
    keys = ("nodes_by_kind", "edges_by_kind", "edges_by_confidence", "coverage", "files")
    assert {k: again.to_dict()[k] for k in keys} == {k: written.to_dict()[k] for k in keys}
    assert g.query("refund processing").hits.equals(
        cf.open(str(shop)).query("refund processing").hits
    )
    os.utime(shop / "services" / "payments" / "gateway.py")  # new mtime: the files row changes
    touched = cf.index(str(shop), progress=False).report
    assert touched.mode != "unchanged" and _store.current_version(store) != version


def test_failed_write_leaves_previous_store(indexed_shop: Path, monkeypatch) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    before = _canonical(_tables(g.store))
    (shop / "services" / "payments" / "new.py").write_text("def fresh():\n    pass\n")
    calls = {"n": 0}
    real = pl.DataFrame.write_parquet

    def dying(self, *a, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # killed mid-write
        return real(self, *a, **kw)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", dying)
    with pytest.raises(KeyboardInterrupt):
        cf.index(str(shop), progress=False)
    monkeypatch.undo()
    after = _canonical(_tables(g.store))
    for name in before:
        assert before[name].equals(after[name])


def test_killed_between_renames_recovers(indexed_shop: Path) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    os.replace(g.store, g.store + ".old-12345")  # the state a kill between renames leaves
    again = cf.open(str(shop))
    assert again.nodes.height == g.nodes.height


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("bin.py", b"\x00\x01\x02binary", "binary"),
        ("latin.py", "caf\xe9 = 1\n".encode("latin-1"), "invalid UTF-8"),
        ("huge.js", b"// x\n" * 250_000, "too large (> 1 MB)"),
    ],
)
def test_bad_files_are_skipped_with_reason(tmp_path: Path, name, content, reason) -> None:
    (tmp_path / name).write_bytes(content)
    (tmp_path / "ok.py").write_text("def ok():\n    pass\n")
    g = cf.index(str(tmp_path), progress=False)
    row = g.files.filter(pl.col("path") == name)
    assert row["skip_reason"].to_list() == [reason]
    assert "ok.py::ok" in set(g.nodes["id"])
    assert name not in set(g.nodes["id"])


def test_syntax_errors_keep_what_parses(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def good():\n    return 1\n\ndef bad(:\n    pass\n")
    g = cf.index(str(tmp_path), progress=False)
    assert g.files.filter(pl.col("path") == "broken.py")["parse_errors"][0] > 0
    assert "broken.py::good" in set(g.nodes["id"])


def test_unreadable_and_vanished_files(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "locked.py").write_text("x = 1\n")
    real_open = open

    def guarded(path, *a, **kw):
        if str(path).endswith("locked.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **kw)

    monkeypatch.setattr(_extract, "open", guarded, raising=False)
    monkeypatch.setattr(_extract, "read_regular", lambda path, *a: guarded(path), raising=False)
    assert _extract.extract_file(str(tmp_path), "locked.py").skip_reason.startswith("unreadable")
    assert _extract.extract_file(str(tmp_path), "gone.py").skip_reason == "vanished while reading"


def test_not_a_directory(tmp_path: Path) -> None:
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(cf.RepoNotFound, match="not a directory"):
        cf.index(str(f))
    with pytest.raises(cf.RepoNotFound):
        cf.index(str(tmp_path / "missing"))


def test_unwritable_store_leaves_old_store(shop: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a directory should be")
    with pytest.raises(cf.StoreWriteError, match="--store"):
        cf.index(str(shop), store=str(blocker / "store"), progress=False)


def test_other_schema_version_fails_with_fix(indexed_shop: Path) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    meta_path = Path(_version_dir(g.store)) / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["schema_version"] = 999
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(cf.StoreVersionError, match="--rebuild"):
        cf.open(str(shop))
    cf.index(str(shop), rebuild=True, progress=False)  # the named fix works
    assert cf.open(str(shop)).nodes.height == g.nodes.height


def test_store_is_not_indexed_into_itself(shop: Path) -> None:
    store = shop / "custom-store"
    cf.index(str(shop), store=str(store), progress=False)
    g = cf.index(str(shop), store=str(store), progress=False)
    assert not g.files.filter(pl.col("path").str.starts_with("custom-store")).height


def test_status_fresh_then_stale(indexed_shop: Path) -> None:
    shop = indexed_shop
    assert cf.status(str(shop)).fresh
    (shop / "services" / "payments" / "gateway.py").write_text("x = 2\n")
    (shop / "new_file.py").write_text("y = 1\n")
    (shop / "services" / "billing" / "format.py").unlink()
    st = cf.status(str(shop))
    assert not st.fresh
    assert st.modified == ["services/payments/gateway.py"]
    assert st.added == ["new_file.py"]
    assert st.deleted == ["services/billing/format.py"]
    shutil.rmtree(shop / "services" / "billing")


def test_status_against_git_head(tmp_path: Path) -> None:
    import subprocess

    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(tmp_path), *args], check=True, env=env, capture_output=True
        )

    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / ".gitignore").write_text(".ctxframe/\n")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "one")
    cf.index(str(tmp_path), progress=False)
    st = cf.status(str(tmp_path))
    assert st.fresh and st.head == st.indexed_head and st.head
    git("commit", "-q", "--allow-empty", "-m", "two")
    moved = cf.status(str(tmp_path))
    assert not moved.fresh and moved.head != moved.indexed_head
    assert "HEAD moved" in str(moved)


def _as_parquet(file: Path) -> None:
    pl.read_ipc(file).write_parquet(file.with_suffix(".parquet"))
    file.unlink()


def _as_ipc(file: Path) -> None:
    pl.read_parquet(file).write_ipc(file.with_suffix(".arrow"))
    file.unlink()


# Older stores: every table Parquet (0.1.0), then the references as Arrow IPC too.
_OLD_FORMATS = {
    "all-parquet": [("bnodes.arrow", _as_parquet), ("bedges.arrow", _as_parquet)],
    "refs-ipc": [("refs.parquet", _as_ipc)],
}


def _as_legacy(store: str) -> None:
    """Turn a store into the layout before versions (0.1.0): every table directly in the store
    directory, meta.json of schema version 2 without parts."""
    version = _version_dir(store)
    for f in Path(version).iterdir():
        if f.is_file() and f.name != "meta.json":
            shutil.copyfile(f, Path(store) / f.name)
        elif f.is_dir() and f.name != "cache":  # a table's parts: one file, as then
            (Path(store) / f.name).unlink(missing_ok=True)  # the mirror's symlink
            pl.read_parquet(f / "*.parquet").write_parquet(Path(store) / f"{f.name}.parquet")
    meta = json.loads((Path(version) / "meta.json").read_text())
    for key in ("parts", "version"):
        meta.pop(key)
    (Path(store) / "meta.json").write_text(json.dumps({**meta, "schema_version": 2}))
    os.unlink(Path(store) / "current")
    for d in Path(store).glob("v-*"):
        shutil.rmtree(d)


@pytest.mark.parametrize("old", sorted(_OLD_FORMATS))
def test_older_store_is_read_and_converted(shop: Path, tmp_path: Path, old: str) -> None:
    """A store of the layout before versions, whose internal tables may have an older format
    too, is read as it is, and the next index converts it."""
    store = str(tmp_path / "store")
    cf.index(str(shop), store=store, progress=False)
    _as_legacy(store)
    for name, convert in _OLD_FORMATS[old]:
        convert(Path(store) / name)
    legacy = cf.open(str(shop), store=store)
    assert legacy.version is None and legacy.query("refund").hits.height
    (shop / "services" / "payments" / "checkout.py").write_text(
        "# moved\n" + (shop / "services" / "payments" / "checkout.py").read_text()
    )
    cf.index(str(shop), store=store, progress=False)
    names = set(_part_files(_version_dir(store)))
    assert names >= {"refs/part-000.parquet", "bnodes.arrow", "bedges.arrow"}
    assert not names & {"refs.arrow", "bnodes.parquet", "bedges.parquet", "refs.parquet"}
    top = {p.name for p in Path(store).iterdir()}
    assert not {n for n in top if n.endswith((".parquet", ".arrow"))}  # legacy ones go
    assert {n for n in top if (Path(store) / n / "part-000.parquet").is_file()} == {
        "nodes", "edges", "files", "tokens", "vocab"}  # fmt: skip
    full = str(tmp_path / "full")
    cf.index(str(shop), store=full, rebuild=True, progress=False)
    inc, want = _canonical(_tables(store)), _canonical(_tables(full))
    for name in inc:
        assert inc[name].equals(want[name]), name


def test_stored_tables_are_sorted(shop_graph) -> None:
    assert shop_graph.nodes["id"].is_sorted()
    keys = shop_graph.edges.select("src", "kind", "line", "dst", "name")
    assert keys.equals(keys.sort(keys.columns, nulls_last=True))


# -- Python edits the delta path takes without running the value flow again, and ones it must --
_PY_REPO = {
    "pkg/__init__.py": "",
    "pkg/core/__init__.py": "",
    "pkg/core/validators.py": "class RegexValidator:\n    def __init__(self, rx):\n"
    "        self.rx = rx\n",
    "pkg/auth/__init__.py": "",
    "pkg/auth/validators.py": "from pkg.core import validators\n\n\n"
    "class AsciiValidator(validators.RegexValidator):\n    pass\n",
    "pkg/shop.py": "from pkg.core.validators import RegexValidator\n\n\nclass Cart:\n"
    '    """A cart."""\n\n    def check(self, rx):\n        return RegexValidator(rx)\n\n'
    "    def total(self):\n        return self.check('x')\n",
}


def _py_repo(root: Path) -> Path:
    for rel, text in _PY_REPO.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _assert_rebuild_equal(root: Path, store: str, work: Path) -> None:
    full = str(work / f"full-{len(os.listdir(work))}")
    cf.index(str(root), store=full, rebuild=True, progress=False)
    got, want = _canonical(_tables(store)), _canonical(_tables(full))
    for name in want:
        assert got[name].equals(want[name]), name


@pytest.mark.parametrize(
    ("edit", "flow_runs"),
    [
        ("    # a comment\n\n    def check", False),  # lines move: the edges follow them
        ('    """A cart.\n\n    More words.\n    """\n\n    def check', False),
        ("    def helper(self):\n        return self.total()\n\n    def check", True),
    ],
    ids=["comment-lines", "docstring-lines", "new-call"],
)
def test_python_delta_equals_rebuild(tmp_path: Path, monkeypatch, edit, flow_runs) -> None:
    from ctxframe._resolve import flow_edges

    root = _py_repo(tmp_path / "repo")
    store = str(tmp_path / "store")
    cf.index(str(root), store=store, progress=False)
    runs = []
    real = flow_edges.python_edges
    monkeypatch.setattr(flow_edges, "python_edges", lambda *a: runs.append(1) or real(*a))
    shop = root / "pkg" / "shop.py"
    shop.write_text(shop.read_text().replace("    def check", edit, 1))
    report = cf.index(str(root), store=store, progress=False).report
    # solved again (from the state kept with the version: not whole) or left standing
    assert report.mode == "delta" and (report.flow == "incremental") == flow_runs and not runs
    _assert_rebuild_equal(root, store, tmp_path)
    edges = _store.read_table(store, "edges").filter(pl.col("kind") == "calls")
    line = 1 + shop.read_text().splitlines().index("        return RegexValidator(rx)")
    assert edges.filter(pl.col("path") == "pkg/shop.py", pl.col("name") == "RegexValidator")[
        "line"
    ].to_list() == [line]


_SRC = st.one_of(st.none(), st.sampled_from(["a", "b", "b/c", "d", "e", "f"]))


@given(
    rows=st.lists(
        st.tuples(_SRC, st.sampled_from(["calls", "contains"]), st.integers(0, 3)), max_size=60
    ),
    cut=st.integers(1, 70),
    limit=st.integers(1, 20),
)
@settings(max_examples=60, deadline=None, database=None)
def test_sorted_edges_by_range_equals_one_sort(tmp_path_factory, rows, cut, limit) -> None:
    """Edges read once from several sources (in memory and a scratch file), cut into ranges of
    src and sorted range by range, equal one sort of them all, nulls last."""
    schema = {"src": pl.String, "kind": pl.String, "line": pl.Int32}
    frame = pl.DataFrame(rows, schema=schema, orient="row").with_columns(
        dst=pl.format("n{}", pl.int_range(pl.len())), name=pl.lit("x")
    )
    ipc = tmp_path_factory.mktemp("edges") / "part.arrow"
    frame.slice(cut).write_ipc(ipc)
    sources = [frame.head(cut).lazy(), pl.scan_ipc(ipc)]
    old = _indexer._SORT_ROWS
    _indexer._SORT_ROWS = limit
    try:
        got = _indexer._sorted_edges(sources)
    finally:
        _indexer._SORT_ROWS = old
    assert sources == []
    assert got.equals(frame.sort(["src", "kind", "line", "dst", "name"], nulls_last=True))

"""Tables as Parquet datasets in parts (ctxframe._store.parts): the parts read in order are
the table, dashboards read the folders as one table, a one-file edit rewrites only the parts
holding that file, and a store of the one-file-per-table layout converts on the next index."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxframe as cf
from ctxframe._core.schema import SCHEMA_VERSION
from ctxframe._store import parts as _parts
from ctxframe._store import tables as _store

_TABLES = ("nodes", "edges", "files", "tokens", "vocab")


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of a few kilobytes of source: the sample shop is stored in several."""
    monkeypatch.setattr(_parts, "PART_BYTES", 2000)


def _version(store: str) -> Path:
    return Path(store) / os.readlink(os.path.join(store, "current"))


def _files(version: Path) -> dict[str, int]:
    """Every file of a version directory (relative path -> inode)."""
    return {str(p.relative_to(version)): p.stat().st_ino for p in version.rglob("*") if p.is_file()}


def _tables(store: str) -> dict[str, pl.DataFrame]:
    return {n: _store.read_table(store, n) for n in (*_TABLES, "refs")}


def _canonical(tables: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    out = {n: f.sort(pl.all(), nulls_last=True) for n, f in tables.items()}
    out["files"] = tables["files"].drop("mtime_ns").sort("path")
    return out


def _assert_equal_to_rebuild(repo: Path, store: str, tmp: Path) -> None:
    full = str(tmp / "full")
    cf.index(str(repo), store=full, rebuild=True, progress=False)
    got, want = _canonical(_tables(store)), _canonical(_tables(full))
    for name in got:
        assert got[name].equals(want[name]), f"{name} differs from a full rebuild"
    # the parts read in order are the sorted tables themselves
    assert _store.read_table(store, "nodes")["id"].is_sorted()
    assert _store.read_table(store, "edges")["src"].is_sorted()


def test_shop_in_several_parts_reads_as_one_table(shop, tmp_path, small_parts) -> None:
    pd = pytest.importorskip("pandas")
    g = cf.index(str(shop), store=str(tmp_path / "store"), progress=False)
    store = Path(g.store)
    meta = json.loads((store / "meta.json").read_text())
    assert len(meta["part_bounds"]) >= 3
    nodes_parts = sorted((store / "nodes").glob("part-*.parquet"))
    assert len(nodes_parts) >= 3 and nodes_parts[0].name == "part-000.parquet"
    assert len(list((store / "refs").glob("*"))) == 0  # internal: not mirrored
    assert len(list((_version(g.store) / "refs").glob("part-*.parquet"))) >= 3
    for name in _TABLES:
        want = _store.read_table(g.store, name)
        if name not in ("tokens", "vocab"):  # codes of their own part: decoded below
            assert pl.read_parquet(store / name / "*.parquet").equals(want), name
        sql = f"select count(*) from read_parquet('{store / name}/*.parquet')"
        assert duckdb.sql(sql).fetchall()[0][0] == want.height or name == "vocab", name
        assert len(pd.read_parquet(store / name)) == duckdb.sql(sql).fetchall()[0][0], name
    assert g.nodes.equals(pl.read_parquet(store / "nodes" / "*.parquet"))
    assert len(list((store / "tokens").glob("part-*.parquet"))) == len(nodes_parts)
    decoded = duckdb.sql(_DECODE_TOKENS.format(store=store)).pl()
    want = g.tokens.with_columns(pl.col("field").replace_strict(_FIELDS, return_dtype=pl.UInt8))
    key = ["node_id", "field", "token"]
    assert decoded.sort(key).equals(want.sort(key))


# docs/schema.md: the token table decoded in DuckDB (a part's codes are rows of the same part)
_DECODE_TOKENS = """
SELECT n.id AS node_id, t.field, v.token, t.tf
FROM read_parquet('{store}/tokens/*.parquet', filename = true) t
JOIN read_parquet('{store}/nodes/*.parquet', filename = true, file_row_number = true) n
  ON parse_filename(n.filename) = parse_filename(t.filename) AND n.file_row_number = t.node
JOIN read_parquet('{store}/vocab/*.parquet', filename = true, file_row_number = true) v
  ON parse_filename(v.filename) = parse_filename(t.filename) AND v.file_row_number = t.token
"""
_FIELDS = {f: i for i, f in enumerate(("name", "qualname", "path", "signature", "doc", "body"))}


def test_one_file_edit_rewrites_only_its_parts(shop, tmp_path, small_parts) -> None:
    store = str(tmp_path / "store")
    shutil.rmtree(shop / ".ctxframe" / "adapters")  # adapters force a full resolution
    cf.index(str(shop), store=store, progress=False)
    before = _files(_version(store))
    target = "services/payments/refund_processor.py"
    bounds = json.loads((Path(store) / "meta.json").read_text())["part_bounds"]
    (shop / target).write_text(
        (shop / target).read_text() + "\n\ndef appended_helper(x):\n    return len(str(x))\n"
    )
    report = cf.index(str(shop), store=store, progress=False).report
    assert report.mode.startswith("delta"), report.mode
    after = _files(_version(store))
    part = int(_parts.part_of(bounds, pl.Series([target]))[0])
    for name in ("nodes", "refs", "tokens", "vocab"):
        mine = _parts.rel(name, part)
        others = [r for r in before if r.startswith(f"{name}/") and r != mine]
        assert others, name
        assert all(after.get(r) == before[r] for r in others), f"{name}: other parts rewritten"
        assert after.get(mine) != before.get(mine), f"{name}: the edited file's part kept"
    _assert_equal_to_rebuild(shop, store, tmp_path)


@pytest.mark.parametrize(
    "edit",
    [
        "\n\ndef appended_helper(x):\n    return len(str(x))\n",  # a new function at the end
        "\n# a comment\n",  # no row moves
    ],
)
def test_a_graph_moving_on_reads_only_the_written_parts(shop, tmp_path, small_parts, edit):
    store = str(tmp_path / "store")
    shutil.rmtree(shop / ".ctxframe" / "adapters")  # adapters force a full resolution
    g = cf.index(str(shop), store=store, progress=False)
    old = _store.Snapshot(store)
    frames = {name: old.read(name) for name in ("nodes", "edges")}
    target = shop / "services/payments/refund_processor.py"
    target.write_text(target.read_text() + edit)
    cf.index(str(shop), store=store, progress=False)
    new = _store.Snapshot(store)
    assert new.version != old.version
    for name, frame in frames.items():
        got = new.read_from(name, old, frame)
        assert got.equals(new.read(name)), name  # rows in order: the table as stored
        assert got.n_chunks() > 1 or len(new.files_of(name)) == 1, name  # slices, not read
    g.refresh(reindex=False)  # moves through read_from
    assert g.nodes.equals(new.read("nodes")) and g.edges.equals(new.read("edges"))


def test_store_of_one_file_per_table_converts(shop, tmp_path, small_parts) -> None:
    """A store written before parts (schema version 4: `nodes.parquet`, …) is read as it is,
    and the next index writes every table in parts."""
    store = str(tmp_path / "store")
    cf.index(str(shop), store=store, progress=False)
    version = _version(store)
    meta = json.loads((version / "meta.json").read_text())
    parts = {}
    folders = [p for p in version.iterdir() if p.is_dir() and p.name != "cache"]
    whole = {p.name: _store.read_table(store, p.name) for p in folders if p.name != "refs"}
    for folder in folders:
        frame = whole.get(folder.name, pl.read_parquet(folder / "*.parquet"))
        shutil.rmtree(folder)
        frame.write_parquet(version / f"{folder.name}.parquet")
        data = (version / f"{folder.name}.parquet").read_bytes()
        parts[f"{folder.name}.parquet"] = {"table": folder.name, "size": len(data),
                                           "sha256": _store.file_hash(data)}  # fmt: skip
    parts.update({r: i for r, i in meta["parts"].items() if r.endswith(".arrow")})
    meta.update(parts=parts, schema_version=4)
    meta.pop("part_bounds")
    (version / "meta.json").write_text(json.dumps(meta))
    old = cf.open(str(shop), store=store)
    assert old.query("refund").hits.height and old.nodes["id"].is_sorted()
    (shop / "services" / "payments" / "gateway.py").write_text(
        (shop / "services" / "payments" / "gateway.py").read_text() + "\n# touched\n"
    )
    cf.index(str(shop), store=store, progress=False)
    names = set(_files(_version(store)))
    assert not {n for n in names if n.endswith(".parquet") and "/" not in n}
    assert {"nodes/part-000.parquet", "refs/part-000.parquet"} <= names
    _assert_equal_to_rebuild(shop, store, tmp_path)


_PATHS = st.lists(st.text(alphabet="ab/._-:", min_size=1, max_size=6), max_size=30)


@settings(max_examples=60, deadline=None, database=None)
@given(_PATHS, _PATHS)
def test_split_parts_are_the_table_in_order(keys: list[str], bounds: list[str]) -> None:
    bounds = sorted(set(bounds))
    frame = pl.DataFrame({"id": sorted(keys), "n": range(len(keys))})
    got = _parts.split("nodes", frame, bounds)
    assert 0 in got
    assert pl.concat([got[i] for i in sorted(got)]).equals(frame)
    for i, part in got.items():
        assert (_parts.part_of(bounds, part["id"]) == i).all()
    placed = _parts.split("refs", frame.rename({"id": "path"}), bounds)
    assert sum(p.height for p in placed.values()) == frame.height
    for i, part in placed.items():
        assert (_parts.part_of(bounds, part["path"]) == i).all()


@pytest.mark.parametrize("edit", [True, False], ids=["edited", "as-is"])
def test_store_with_tokens_in_one_part_converts(shop, tmp_path, small_parts, edit) -> None:
    """A store of schema version 5 (`tokens` and `vocab` one part, codes into the whole
    `nodes`) is read as it is; the next index, with or without an edit, writes them in the
    nodes' parts."""
    store = str(tmp_path / "store")
    shutil.rmtree(shop / ".ctxframe" / "adapters")  # adapters force a full resolution
    cf.index(str(shop), store=store, progress=False)
    version = _version(store)
    meta = json.loads((version / "meta.json").read_text())
    want = cf.open(str(shop), store=store).tokens
    whole = {name: _store.read_table(store, name) for name in ("tokens", "vocab")}
    for name, frame in whole.items():
        shutil.rmtree(version / name)
        (version / name).mkdir()
        frame.write_parquet(version / name / "part-000.parquet")
        data = (version / name / "part-000.parquet").read_bytes()
        meta["parts"] = {r: i for r, i in meta["parts"].items() if not r.startswith(name + "/")}
        meta["parts"][f"{name}/part-000.parquet"] = {"table": name, "part": 0, "size": len(data),
                                                     "sha256": _store.file_hash(data)}  # fmt: skip
    meta["schema_version"] = 5
    (version / "meta.json").write_text(json.dumps(meta))
    old = cf.open(str(shop), store=store)
    assert old.tokens.equals(want)
    assert old.query("refund").hits.height
    if edit:
        target = shop / "services" / "payments" / "refund_processor.py"
        target.write_text(target.read_text() + "\n\ndef appended_helper(x):\n    return x\n")
    report = cf.index(str(shop), store=store, progress=False).report
    assert report.mode.startswith("delta") if edit else report.mode != "unchanged", report.mode
    names = set(_files(_version(store)))
    assert sum(n.startswith("tokens/part-") for n in names) > 1
    assert json.loads((Path(store) / "meta.json").read_text())["schema_version"] == SCHEMA_VERSION
    _assert_equal_to_rebuild(shop, store, tmp_path)


@pytest.mark.parametrize("watched", [False, True])
def test_staging_holds_a_put_table_only_for_the_memo(tmp_path, watched: bool) -> None:
    # a one-shot index drops each table once written (the kernel's edges: 1 GB of peak RSS);
    # under a watch the memo takes the whole table at commit
    frame = pl.DataFrame({"id": ["a::f", "b::g"], "path": ["a.py", "b.py"]})
    memo = _store.remembering() if watched else contextlib.nullcontext()
    with memo, _store.Staging(str(tmp_path / "store")) as staged:
        staged.put({"files": frame})
        assert bool(staged._wholes) is watched
        staged.commit({})

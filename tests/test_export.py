"""`ctxframe export DIR`: one file per contract table, readable by Polars and DuckDB, equal to
the graph's frames; bad input is one line; a failed write leaves no partial file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import polars as pl
import pytest

import ctxframe as cf
from ctxframe._core.errors import BadInput
from ctxframe._store import export as _export
from ctxframe._store.tables import CONTRACT
from ctxframe.cli import main

_READ = {
    "parquet": lambda path, schema: pl.read_parquet(path),
    "csv": lambda path, schema: pl.read_csv(path, schema=schema),
    "ndjson": lambda path, schema: pl.read_ndjson(path, infer_schema_length=None).cast(schema),
}


@pytest.mark.parametrize("fmt", ["parquet", "csv", "ndjson"])
def test_tables_read_back_equal(shop_graph, tmp_path: Path, fmt: str) -> None:
    out = shop_graph.export(str(tmp_path / "x"), format=fmt)
    assert isinstance(out, cf.Exported) and [t[0] for t in out.tables] == list(CONTRACT)
    for name, path, rows in out.tables:
        assert path == str(tmp_path / "x" / f"{name}.{fmt}")
        want = getattr(shop_graph, name) if name in ("nodes", "edges", "files") else None
        got = _READ[fmt](path, CONTRACT[name])
        assert got.height == rows
        if want is not None:
            assert got.equals(want)
    assert sorted(os.listdir(tmp_path / "x")) == sorted(f"{n}.{fmt}" for n in CONTRACT)


def test_duckdb_reads_the_export(shop_graph, tmp_path: Path) -> None:
    shop_graph.export(str(tmp_path), format="csv")
    n = duckdb.sql(f"select count(*) from read_csv_auto('{tmp_path}/edges.csv')").fetchall()[0][0]
    assert n == shop_graph.edges.height


def test_cli_json_and_text(indexed_shop: Path, tmp_path: Path, capsys) -> None:
    assert main(["export", str(tmp_path / "j"), "--repo", str(indexed_shop), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verb"] == "export" and data["status"] == "ok" and data["format"] == "parquet"
    assert [t["name"] for t in data["tables"]] == list(CONTRACT)
    argv = ["export", str(tmp_path / "t"), "--repo", str(indexed_shop), "--format", "csv"]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith(f"exported 5 tables as csv to {tmp_path / 't'}: ")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--format", "xlsx"], "use one of parquet, csv, ndjson"),
        (["--repo", "NOWHERE"], "nowhere is not a directory"),
    ],
)
def test_bad_input_is_one_line(indexed_shop, tmp_path, capsys, args, says) -> None:
    repo = str(tmp_path / "nowhere") if "NOWHERE" in args else str(indexed_shop)
    args = [repo if a == "NOWHERE" else a for a in args]
    argv = ["export", str(tmp_path / "out"), *args]
    if "--repo" not in args:
        argv += ["--repo", repo]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err


def test_a_file_is_not_a_directory(shop_graph, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(BadInput, match="is a file"):
        shop_graph.export(str(tmp_path / "f"))


def test_a_failed_write_leaves_no_partial_file(shop_graph, tmp_path, monkeypatch) -> None:
    real = _export._write

    def failing(frame, path, fmt):
        if ".edges." in path:
            Path(path).write_bytes(b"half")
            raise OSError(28, "No space left on device")
        real(frame, path, fmt)

    monkeypatch.setattr(_export, "_write", failing)
    with pytest.raises(OSError):
        shop_graph.export(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["nodes.parquet"]


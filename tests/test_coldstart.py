"""A fresh CLI process: the version without importlib.metadata, `card` from the card cache
without Polars (the same text, JSON and exit code as the normal path, and the normal path
whenever the cache is missing or damaged), `query` reading only its hits' edges."""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe import cli
from ctxframe._graph import coldcard
from ctxframe._graph.graph import Graph
from ctxframe._store import cardcache


def test_version_literal_is_the_installed_version():
    assert cf.__version__ == importlib.metadata.version("ctxframe")


def _normal(g: Graph, name: str, inc: bool, as_json: bool, budget: int | None):
    res = g.card(name, include_ambiguous=inc)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cli._emit(res, as_json, budget)
    return buf.getvalue(), 0 if res.ok else 1


@pytest.fixture(scope="module")
def cached_shop(tmp_path_factory) -> Graph:
    """A private indexed shop whose card cache is built (by a normal-path card)."""
    repo = tmp_path_factory.mktemp("cold") / "shop"
    shutil.copytree(Path(__file__).resolve().parent.parent / "data-samples" / "shop", repo)
    cf.index(str(repo), progress=False)
    assert cli.main(["card", "CheckoutHandler", "--repo", str(repo)]) in (0, 1)
    g = Graph(str(repo))
    assert os.path.isfile(os.path.join(g._cache_dir, "cache", cardcache.KEY))
    return g


def _names(g: Graph) -> list[str]:
    names = {"no_such_symbol_anywhere", "  CheckoutHandler  "}
    for r in g.nodes.iter_rows(named=True):
        names.update(n for n in (r["id"], r["qualname"], r["label"]) if n)
        if r["label"]:
            names.add(r["label"].upper())
        if r["qualname"] and "::" in r["id"]:
            names.add(r["id"].split("::")[0][-6:] + "::" + r["qualname"])
    return sorted(names)


@pytest.mark.parametrize(
    "every", [pytest.param(4, id="a-quarter"), pytest.param(1, id="all", marks=pytest.mark.slow)]
)
def test_cold_card_answers_as_the_normal_path(cached_shop, capsys, every: int):
    g = cached_shop
    answered = 0
    classes = set(g.nodes.filter(pl.col("kind") == "class")["label"])
    names = [n for i, n in enumerate(_names(g)) if i % every == 0 or n.strip() in classes]
    names = sorted({*names, "no_such_symbol_anywhere", "  CheckoutHandler  "})
    for name in names:
        for inc, as_json, budget in [(False, False, None), (True, True, None), (False, True, 60)]:
            got = coldcard.answer(g.store, name, include_ambiguous=inc, as_json=as_json,
                                  budget=budget)  # fmt: skip
            if got is None:
                continue
            answered += 1
            text, code = got
            assert (text + "\n", code) == _normal(g, name, inc, as_json, budget), name
    classes = g.nodes.filter(pl.col("kind") == "class").height
    assert answered >= 0.9 * 3 * (len(names) - 1)  # all but the unknown name, nearly
    assert classes > 0
    assert coldcard.answer(g.store, "no_such_symbol_anywhere", include_ambiguous=False,
                           as_json=False, budget=None) is None  # fmt: skip


def test_fresh_card_process_imports_no_polars(cached_shop):
    code = (
        "import sys\nfrom ctxframe.cli import main\n"
        f"rc = main(['card', 'CheckoutHandler', '--repo', {cached_shop.root!r}, '--json'])\n"
        "assert rc in (0, 1), rc\n"
        "heavy = [m for m in ('polars', 'pyarrow', 'numpy', 'duckdb') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verb"] == "card"


@pytest.mark.parametrize("damage", ["db", "blobs", "key", "version", "gone"])
def test_a_damaged_card_cache_falls_back(indexed_shop, capsys, damage):
    shop = indexed_shop
    assert cli.main(["card", "CheckoutHandler", "--repo", str(shop)]) in (0, 1)
    want = capsys.readouterr().out
    g = Graph(str(shop))
    d = Path(g._cache_dir) / "cache"
    assert coldcard.answer(g.store, "CheckoutHandler", include_ambiguous=False, as_json=False,
                           budget=None) is not None  # fmt: skip
    if damage == "db":
        data = bytearray((d / cardcache.FILE).read_bytes())
        data[len(data) // 2] ^= 0xFF
        (d / cardcache.FILE).write_bytes(bytes(data))
    elif damage == "blobs":
        data = bytearray((d / cardcache.BLOBS).read_bytes())
        for i in range(0, len(data), 97):  # every payload is hit
            data[i] ^= 0xFF
        (d / cardcache.BLOBS).write_bytes(bytes(data))
    elif damage == "key":
        (d / cardcache.KEY).write_text("{not json")
    elif damage == "version":
        key = json.loads((d / cardcache.KEY).read_text())
        (d / cardcache.KEY).write_text(json.dumps({**key, "ctxframe_version": "0.0.0"}))
    else:
        (d / cardcache.BLOBS).unlink()
    assert coldcard.answer(g.store, "CheckoutHandler", include_ambiguous=False, as_json=False,
                           budget=None) is None  # fmt: skip
    assert cli.main(["card", "CheckoutHandler", "--repo", str(shop)]) in (0, 1)
    assert capsys.readouterr().out == want
    # the normal path wrote a good cache again: the next process answers from it
    assert coldcard.answer(g.store, "CheckoutHandler", include_ambiguous=False, as_json=False,
                           budget=None) is not None  # fmt: skip


def test_one_shot_query_reads_only_its_hits_edges(shop_graph):
    Graph(shop_graph.store, root=shop_graph.root).query("refund")  # the rank cache is written
    fresh = Graph(shop_graph.store, root=shop_graph.root)
    first = fresh.query("where is refund processing implemented")
    assert "edges" not in fresh._tables and "_lookups" not in fresh.__dict__
    again = fresh.query("where is refund processing implemented")  # the full lookup now
    assert first.hits.equals(again.hits)
    assert first.neighbours.equals(again.neighbours)

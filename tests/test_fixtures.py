"""Per-language oracle fixtures: tests/fixtures/<language>/ is a tiny repository whose
expected.json was written by hand from the code, independently of the engine.

Every embedded language must have a fixture folder; a missing one fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._core.languages import LANGUAGES

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NAMES = [lang.name for lang in LANGUAGES]
SHOW = 12  # nearest actual rows shown per failure


def _fmt(rows: pl.DataFrame, cols: list[str]) -> str:
    if rows.height == 0:
        return "      (none)"
    lines = [f"      {r}" for r in rows.select(cols).head(SHOW).iter_rows(named=True)]
    if rows.height > SHOW:
        lines.append(f"      ... {rows.height - SHOW} more")
    return "\n".join(lines)


def _report(lang: str, what: str, problems: list[str]) -> str:
    return f"{lang}: {len(problems)} {what} problem(s)\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """Index each fixture folder once per module; returns (expected, graph) by language."""
    cache: dict[str, tuple[dict, cf.Graph]] = {}

    def get(lang: str) -> tuple[dict, cf.Graph]:
        if lang not in cache:
            folder = FIXTURES / lang
            expected_file = folder / "expected.json"
            if not expected_file.is_file():
                pytest.fail(f"no fixture for language {lang!r}: create {expected_file}")
            expected = json.loads(expected_file.read_text(encoding="utf-8"))
            store = tmp_path_factory.mktemp(f"fixture-{lang}") / "store"
            graph = cf.index(str(folder), store=str(store), progress=False)
            cache[lang] = (expected, graph)
        return cache[lang]

    return get


@pytest.mark.parametrize("lang", NAMES)
def test_fixture_is_well_formed(lang: str, indexed) -> None:
    expected, _ = indexed(lang)
    for key in ("nodes", "edges", "absent_edges", "unresolved_calls"):
        assert expected.get(key), f"{lang}: expected.json has no {key!r}"


@pytest.mark.parametrize("lang", NAMES)
def test_fixture_nodes(lang: str, indexed) -> None:
    expected, graph = indexed(lang)
    nodes = graph.nodes
    cols = ["id", "kind", "line_start", "line_end"]
    problems = []
    for want in expected["nodes"]:
        got = nodes.filter(pl.col("id") == want["id"])
        if got.height == 1:
            row = got.row(0, named=True)
            if all(row[k] == want[k] for k in cols[1:] if k in want):
                continue
            problems.append(f"  node differs: want {want}\n    got:\n{_fmt(got, cols)}")
            continue
        if got.height > 1:
            problems.append(f"  node id not unique: {want['id']}\n{_fmt(got, cols)}")
            continue
        tail = want["id"].rsplit("::", 1)[-1].rsplit(".", 1)[-1].split("#")[0]
        path = want["id"].split("::", 1)[0]
        near = nodes.filter(
            pl.col("id").str.ends_with(tail) | (pl.col("path") == path) & (pl.col("kind") != "file")
        )
        problems.append(f"  missing node: {want}\n    nearest actual nodes:\n{_fmt(near, cols)}")
    assert not problems, _report(lang, "node", problems)


@pytest.mark.parametrize("lang", NAMES)
def test_fixture_edges(lang: str, indexed) -> None:
    expected, graph = indexed(lang)
    edges = graph.edges
    cols = ["src", "dst", "kind", "confidence", "name", "line"]
    problems = []
    for want in expected["edges"]:
        hit = edges.filter(
            (pl.col("src") == want["src"])
            & (pl.col("dst") == want["dst"])
            & (pl.col("kind") == want["kind"])
            & (pl.col("confidence") == want["confidence"])
        )
        if hit.height:
            continue
        near = edges.filter(
            (pl.col("src") == want["src"]) & (pl.col("kind") == want["kind"])
            | (pl.col("src") == want["src"]) & (pl.col("dst") == want["dst"])
        )
        problems.append(
            f"  missing edge: {want}\n    actual {want['kind']!r} edges from the same src:\n"
            f"{_fmt(near, cols)}"
        )
    assert not problems, _report(lang, "edge", problems)


@pytest.mark.parametrize("lang", NAMES)
def test_fixture_absent_edges(lang: str, indexed) -> None:
    expected, graph = indexed(lang)
    edges = graph.edges
    cols = ["src", "dst", "kind", "confidence", "name", "line"]
    problems = []
    for banned in expected["absent_edges"]:
        hit = edges.filter(
            (pl.col("src") == banned["src"])
            & (pl.col("dst") == banned["dst"])
            & (pl.col("kind") == banned["kind"])
        )
        if hit.height:
            problems.append(f"  edge should be absent: {banned}\n    found:\n{_fmt(hit, cols)}")
    assert not problems, _report(lang, "absent-edge", problems)


@pytest.mark.parametrize("lang", NAMES)
def test_fixture_unresolved_calls(lang: str, indexed) -> None:
    expected, graph = indexed(lang)
    edges = graph.edges
    cols = ["src", "dst", "kind", "confidence", "name", "line"]
    problems = []
    for want in expected["unresolved_calls"]:
        hit = edges.filter(
            (pl.col("src") == want["src"])
            & (pl.col("kind") == "calls")
            & (pl.col("name") == want["name"])
            & pl.col("dst").is_null()
        )
        if hit.height:
            continue
        near = edges.filter(
            (pl.col("kind") == "calls")
            & ((pl.col("src") == want["src"]) | (pl.col("name") == want["name"]))
        )
        problems.append(
            f"  missing unresolved call: {want}\n    actual calls from that src or by that name:\n"
            f"{_fmt(near, cols)}"
        )
    assert not problems, _report(lang, "unresolved-call", problems)

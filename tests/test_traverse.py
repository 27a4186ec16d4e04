"""The traversal's level walk against a plain breadth-first search over random graphs."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._core.schema import EDGES, NODES
from ctxframe._graph.traverse import DEPENDENCY_KINDS, Traversal

KINDS = [*DEPENDENCY_KINDS, "reads"]  # "reads" is not a dependency: never walked
CONFIDENCES = ["AMBIGUOUS", "EXTRACTED", "INFERRED"]
N = 9

edge = st.tuples(
    st.integers(0, N - 1),
    st.integers(0, N - 1),
    st.sampled_from(KINDS),
    st.sampled_from(CONFIDENCES),
)


def _graph(edges: list[tuple[int, int, str, str]]) -> Traversal:
    nodes = pl.DataFrame({"id": [f"n{i}" for i in range(N)]}).with_columns(
        pl.lit(None, dtype=t).alias(c) for c, t in NODES.items() if c != "id"
    )
    frame = pl.DataFrame(
        {
            "src": [f"n{s}" for s, *_ in edges],
            "dst": [f"n{d}" for _, d, *_ in edges],
            "kind": [k for *_, k, _ in edges],
            "confidence": [c for *_, c in edges],
        },
        schema_overrides={c: EDGES[c] for c in ("src", "dst", "kind", "confidence")},
    )
    rest = [pl.lit(None, t).alias(c) for c, t in EDGES.items() if c not in frame.columns]
    return Traversal(nodes, frame.with_columns(rest).select(EDGES.names()))


def _bfs(edges, start, depth, *, reverse, undirected, ambiguous, kinds, stop_at):
    """Each row once at its first depth, through the least (prev, via, confidence)."""
    steps = set()
    for s, d, k, c in edges:
        if k not in DEPENDENCY_KINDS or (c == "AMBIGUOUS" and not ambiguous):
            continue
        if kinds and k not in kinds:
            continue
        if undirected:
            steps |= {(s, d, k, c), (d, s, k, c)}
        else:
            steps.add((d, s, k, c) if reverse else (s, d, k, c))
    found = {r: (0, None, None, None) for r in start}
    frontier = sorted(set(start))
    for level in range(1, depth + 1):
        if not frontier or (stop_at is not None and stop_at in found):
            break
        best: dict[int, tuple] = {}
        for f, t, k, c in steps:
            if f in frontier and t not in found:
                best[t] = min(best.get(t, (f, k, c)), (f, k, c))
        for t, (f, k, c) in best.items():
            found[t] = (level, f, k, c)
        frontier = sorted(best)
    return sorted((d, r, p, k, c) for r, (d, p, k, c) in found.items())


@settings(max_examples=150, deadline=None, database=None)
@given(
    edges=st.lists(edge, max_size=30),
    start=st.lists(st.integers(0, N - 1), min_size=1, max_size=3),
    depth=st.integers(0, 5),
    way=st.sampled_from(["forward", "reverse", "both"]),
    ambiguous=st.booleans(),
    kinds=st.sampled_from([None, ["calls"], ["calls", "contains"]]),
    stop_at=st.one_of(st.none(), st.integers(0, N - 1)),
)
def test_reach_is_a_breadth_first_search(edges, start, depth, way, ambiguous, kinds, stop_at):
    got = _graph(edges).reach(
        start,
        reverse=way == "reverse",
        depth=depth,
        include_ambiguous=ambiguous,
        undirected=way == "both",
        stop_at=stop_at,
        kinds=kinds,
    )
    want = _bfs(edges, start, depth, reverse=way == "reverse", undirected=way == "both",
                ambiguous=ambiguous, kinds=kinds, stop_at=stop_at)  # fmt: skip
    assert sorted(got.select("depth", "row", "prev", "via", "confidence").rows()) == want


@settings(max_examples=60, deadline=None, database=None)
@given(edges=st.lists(edge, max_size=30), inside=st.sets(st.integers(0, N - 1), min_size=1))
def test_ambiguous_left_out_counts_every_edge_in(edges, inside):
    want = sum(
        1
        for s, d, k, c in edges
        if k in DEPENDENCY_KINDS and c == "AMBIGUOUS" and d in inside and s not in inside
    )
    assert _graph(edges).ambiguous_left_out(pl.Series(sorted(inside))) == want

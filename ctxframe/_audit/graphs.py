"""Graph algorithms the audit needs on small derived graphs (modules, packages): strongly
connected components, a shortest cycle, reachability with one shortest chain.

Edges are (src, dst) string frames. Whatever grows with the repository is Polars: the trim
that removes every node no cycle can pass through (repeatedly, what has no edge in or no edge
out) and the breadth-first steps; only the cyclic core left after the trim is walked node by
node (Tarjan's algorithm, iterative), and a real code base's core is a small part of it.
"""

from __future__ import annotations

import polars as pl

_EDGE = {"src": pl.String, "dst": pl.String}


def _pairs(edges: pl.DataFrame) -> pl.DataFrame:
    return (
        edges.select(pl.col("src").cast(pl.String), pl.col("dst").cast(pl.String))
        .filter(pl.col("src").is_not_null() & pl.col("dst").is_not_null())
        .filter(pl.col("src") != pl.col("dst"))
        .unique()
    )


def cyclic_core(edges: pl.DataFrame) -> pl.DataFrame:
    """The edges left once every node with no edge in or no edge out (among what is left) is
    removed, repeatedly: no cycle passes through a removed node."""
    e = _pairs(edges)
    while e.height:
        keep = e.filter(
            pl.col("src").is_in(e["dst"].implode()) & pl.col("dst").is_in(e["src"].implode())
        )
        if keep.height == e.height:
            break
        e = keep
    return e


def strongly_connected(edges: pl.DataFrame) -> pl.DataFrame:
    """(node, component) for every node in a strongly connected component of two or more
    nodes; components numbered from 0 by their smallest node, nodes sorted."""
    core = cyclic_core(edges)
    if core.is_empty():
        return pl.DataFrame(schema={"node": pl.String, "component": pl.Int32})
    adjacency: dict[str, list[str]] = {
        src: dsts
        for src, dsts in core.group_by("src").agg(pl.col("dst").sort()).sort("src").iter_rows()
    }
    comps = _tarjan(adjacency)
    rows = [(node, min(comp)) for comp in comps if len(comp) > 1 for node in comp]
    out = pl.DataFrame(rows, schema={"node": pl.String, "first": pl.String}, orient="row")
    order = out.select("first").unique().sort("first").with_row_index("component")
    return (
        out.join(order, on="first")
        .select("node", pl.col("component").cast(pl.Int32))
        .sort("component", "node")
    )


def _tarjan(adjacency: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components, iteratively (no recursion limit on long chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    comps: list[list[str]] = []
    for root in sorted(adjacency):
        if root in index:
            continue
        work = [(root, iter(adjacency.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(adjacency.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                comps.append(sorted(comp))
    return comps


def shortest_cycle(edges: pl.DataFrame, start: str) -> list[str]:
    """A shortest cycle through `start` ([start, …, start]), or [] when there is none."""
    e = _pairs(edges)
    path = shortest_chain(e, [start], None, targets_of=e.filter(pl.col("dst") == start)["src"])
    return [*path, start] if path else []


def shortest_chain(
    edges: pl.DataFrame,
    sources: list[str] | pl.Series,
    blocked: pl.Series | None = None,
    *,
    targets_of: pl.Series,
) -> list[str]:
    """One shortest chain of nodes from any of `sources` to any of `targets_of` (the chain's
    last node is in it) through nodes not in `blocked`; [] when none. A source that is a target
    is a chain of one node."""
    targets = pl.Series(targets_of, dtype=pl.String).unique()
    frontier = pl.DataFrame({"node": pl.Series(sources, dtype=pl.String)}).unique()
    if blocked is not None and blocked.len():
        edges = edges.filter(~pl.col("dst").is_in(blocked.implode()))
    seen = frontier.with_columns(prev=pl.lit(None, pl.String))
    while frontier.height:
        hit = frontier.filter(pl.col("node").is_in(targets.implode()))
        if hit.height:
            node = hit["node"].sort()[0]
            chain = [node]
            prev = dict(seen.select("node", "prev").iter_rows())
            while prev.get(chain[-1]) is not None:
                chain.append(prev[chain[-1]])
            return chain[::-1]
        step = (
            frontier.join(edges, left_on="node", right_on="src")
            .select(node="dst", prev="node")
            .join(seen.select("node"), on="node", how="anti")
            .sort("node", "prev")
            .unique("node", keep="first", maintain_order=True)
        )
        seen = pl.concat([seen, step])
        frontier = step.select("node")
    return []


def reachable(
    edges: pl.DataFrame, sources: pl.Series, blocked: pl.Series | None = None
) -> pl.DataFrame:
    """(node, depth) of every node reachable from `sources` (depth 0) through nodes not in
    `blocked`; one Polars join per level."""
    e = _pairs(edges)
    if blocked is not None and blocked.len():
        e = e.filter(~pl.col("dst").is_in(blocked.implode()))
    frontier = pl.DataFrame({"node": pl.Series(sources, dtype=pl.String)}).unique()
    seen = frontier.with_columns(depth=pl.lit(0, pl.Int32))
    depth = 0
    while frontier.height:
        depth += 1
        step = (
            frontier.join(e, left_on="node", right_on="src")
            .select(node="dst")
            .unique()
            .join(seen.select("node"), on="node", how="anti")
        )
        seen = pl.concat([seen, step.with_columns(depth=pl.lit(depth, pl.Int32))])
        frontier = step
    return seen

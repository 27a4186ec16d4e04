"""Graph traversal as DuckDB recursive queries over the edge table.

`USING KEY (id)` keeps one row per node (its first, shortest depth), and the recursive step
skips nodes already reached (`recurring.r`), so cycles end and work stays linear in edges.
"""

from __future__ import annotations

import duckdb
import polars as pl

DEPENDENCY_KINDS = ("calls", "imports", "extends", "implements", "contains")


def _edges_view(edges: pl.DataFrame, include_ambiguous: bool, kinds: tuple[str, ...]):
    keep = pl.col("dst").is_not_null() & pl.col("kind").is_in(list(kinds))
    if not include_ambiguous:
        keep = keep & (pl.col("confidence") != "AMBIGUOUS")
    return edges.filter(keep).select("src", "dst", "kind", "confidence").unique()


def reach(
    con: duckdb.DuckDBPyConnection,
    edges: pl.DataFrame,
    start: list[str],
    *,
    reverse: bool,
    depth: int,
    include_ambiguous: bool = False,
    kinds: tuple[str, ...] = DEPENDENCY_KINDS,
) -> pl.DataFrame:
    """Nodes reachable from `start` within `depth` hops: (id, depth, prev, via, confidence).

    reverse=True walks edges backwards (dst → src): who depends on the start nodes.
    """
    view = _edges_view(edges, include_ambiguous, kinds)
    frm, to = ("dst", "src") if reverse else ("src", "dst")
    con.register("_reach_edges", view)
    con.register("_reach_start", pl.DataFrame({"id": start}, schema={"id": pl.String}))
    sql = f"""
    WITH RECURSIVE r(id, depth, prev, via, confidence) USING KEY (id) AS (
        SELECT id, 0, NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR FROM _reach_start
        UNION
        SELECT id, depth, step.prev, step.via, step.confidence FROM (
            -- one row per newly reached node: the smallest (prev, via) wins, deterministically
            SELECT e.{to} AS id, min(r.depth) + 1 AS depth,
                   min({{'prev': r.id, 'via': e.kind, 'confidence': e.confidence}}) AS step
            FROM r JOIN _reach_edges e ON e.{frm} = r.id
            WHERE r.depth < $depth
              AND NOT EXISTS (SELECT 1 FROM recurring.r seen WHERE seen.id = e.{to})
            GROUP BY e.{to}
        )
    )
    SELECT * FROM r
    """
    out = con.sql(sql, params={"depth": depth}).pl()
    # Several edges can reach a node at the same depth; keep the smallest, deterministically.
    return (
        out.sort("depth", "id", "prev", "via", nulls_last=False)
        .unique("id", keep="first", maintain_order=True)
        .cast({"depth": pl.Int32})
    )


def shortest_paths(
    con: duckdb.DuckDBPyConnection,
    edges: pl.DataFrame,
    a: str,
    b: str,
    *,
    undirected: bool = False,
    include_ambiguous: bool = False,
    max_depth: int = 12,
    max_paths: int = 5,
) -> tuple[list[list[dict]], pl.DataFrame, pl.DataFrame]:
    """Up to `max_paths` shortest paths a → b (each a list of hops), plus both reach frames.

    Nodes on some shortest path satisfy dist(a, n) + dist(n, b) = dist(a, b); paths are
    enumerated only inside that small sub-graph, in a fixed order.
    """
    view = _edges_view(edges, include_ambiguous, DEPENDENCY_KINDS)
    if undirected:
        flipped = view.select(
            pl.col("dst").alias("src"), pl.col("src").alias("dst"), "kind", "confidence"
        )
        view = pl.concat([view, flipped]).unique()
    fwd = reach(
        con,
        view,
        [a],
        reverse=False,
        depth=max_depth,
        include_ambiguous=True,
        kinds=DEPENDENCY_KINDS,
    )
    bwd = reach(
        con,
        view,
        [b],
        reverse=True,
        depth=max_depth,
        include_ambiguous=True,
        kinds=DEPENDENCY_KINDS,
    )
    hit = fwd.filter(pl.col("id") == b)
    if hit.is_empty():
        return [], fwd, bwd
    total = hit["depth"][0]
    on_path = (
        fwd.select("id", da="depth")
        .join(bwd.select("id", db="depth"), on="id")
        .filter(pl.col("da") + pl.col("db") == total)
    )
    dist = dict(on_path.select("id", "da").iter_rows())
    steps = (
        view.filter(pl.col("src").is_in(list(dist)) & pl.col("dst").is_in(list(dist)))
        .with_columns(
            ds=pl.col("src").replace_strict(dist, default=None),
            dd=pl.col("dst").replace_strict(dist, default=None),
        )
        .filter(pl.col("dd") == pl.col("ds") + 1)
        .sort("src", "dst", "kind")
    )
    nxt: dict[str, list[dict]] = {}
    for row in steps.iter_rows(named=True):
        nxt.setdefault(row["src"], []).append(row)
    paths: list[list[dict]] = []

    def walk(node: str, acc: list[dict]) -> None:
        if len(paths) >= max_paths:
            return
        if node == b:
            paths.append(list(acc))
            return
        for step in nxt.get(node, []):
            acc.append(step)
            walk(step["dst"], acc)
            acc.pop()

    walk(a, [])
    return paths, fwd, bwd


def pagerank(edges: pl.DataFrame, damping: float = 0.85, iterations: int = 30) -> pl.DataFrame:
    """PageRank over the given (src, dst) edges by power iteration in Polars: (id, pagerank)."""
    e = edges.select("src", "dst").unique()
    ids = pl.concat([e["src"], e["dst"]]).unique().sort()
    n = len(ids)
    if n == 0:
        return pl.DataFrame(schema={"id": pl.String, "pagerank": pl.Float64})
    out_deg = e.group_by("src").len("deg")
    e = e.join(out_deg, on="src")
    rank = pl.DataFrame({"id": ids, "pagerank": [1.0 / n] * n})
    for _ in range(iterations):
        flow = (
            e.join(rank.rename({"id": "src"}), on="src")
            .group_by("dst")
            .agg((pl.col("pagerank") / pl.col("deg")).sum().alias("inflow"))
        )
        dangling = rank.join(out_deg.rename({"src": "id"}), on="id", how="anti")["pagerank"].sum()
        rank = (
            rank.select("id")
            .join(flow.rename({"dst": "id"}), on="id", how="left")
            .select(
                "id",
                pagerank=(1 - damping) / n
                + damping * (pl.col("inflow").fill_null(0.0) + dangling / n),
            )
        )
    return rank

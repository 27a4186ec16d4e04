"""Graph traversal as DuckDB recursive queries over the edge table.

`USING KEY (id)` keeps one row per node (its first, shortest depth), and the recursive step
skips nodes already reached (`recurring.r`), so cycles end and work stays linear in edges.
"""

from __future__ import annotations

import polars as pl

DEPENDENCY_KINDS = ["calls", "imports", "extends", "implements", "contains"]


class Traversal:
    """Edge tables keyed by integer node rows, materialised once in DuckDB, and the walks."""

    def __init__(self, nodes: pl.DataFrame, edges: pl.DataFrame):
        self.ids = nodes["id"]
        rows = nodes.select("id", r=pl.int_range(pl.len(), dtype=pl.Int32))
        dep = (
            edges.filter(pl.col("dst").is_not_null() & pl.col("kind").is_in(DEPENDENCY_KINDS))
            .join(rows.rename({"id": "src", "r": "s"}), on="src")
            .join(rows.rename({"id": "dst", "r": "d"}), on="dst")
            .select("s", "d", "kind", "confidence")
            .unique()
        )
        import duckdb  # only a traversal needs it: a CLI card or query does not pay its import

        self.con = duckdb.connect()
        self.con.execute("SET threads = 1")  # small recursive steps: threads cost more than win
        for name, frame in (
            ("dep_all", dep),
            ("dep_sure", dep.filter(pl.col("confidence") != "AMBIGUOUS")),
        ):
            self.con.register("_frame", frame)
            self.con.execute(f"CREATE TABLE {name} AS SELECT * FROM _frame")
            self.con.unregister("_frame")
        for name in ("dep_all", "dep_sure"):  # both directions, for undirected paths
            self.con.execute(
                f"CREATE TABLE {name}_both AS SELECT s, d, kind, confidence FROM {name} "
                f"UNION SELECT d AS s, s AS d, kind, confidence FROM {name}"
            )

    def _table(self, include_ambiguous: bool, undirected: bool = False) -> str:
        return ("dep_all" if include_ambiguous else "dep_sure") + ("_both" if undirected else "")

    def reach(
        self,
        start: list[int],
        *,
        reverse: bool,
        depth: int,
        include_ambiguous: bool = False,
        undirected: bool = False,
        stop_at: int | None = None,
        kinds: list[str] | None = None,
    ) -> pl.DataFrame:
        """Rows reachable from `start` within `depth` hops: (row, depth, prev, via, confidence).

        reverse=True walks edges backwards (who depends on the start); `stop_at` ends the walk
        at the first depth that reaches that row.
        """
        frm, to = ("d", "s") if reverse else ("s", "d")
        table = self._table(include_ambiguous, undirected)
        stop = (
            ""
            if stop_at is None
            else "AND NOT EXISTS (SELECT 1 FROM recurring.r x WHERE x.row = $stop)"
        )
        if kinds:  # only these edge kinds (names are fixed identifiers, never user text)
            stop += (
                " AND e.kind IN (" + ", ".join(f"'{k}'" for k in kinds if k.isidentifier()) + ")"
            )
        sql = f"""
        WITH RECURSIVE r(row, depth, prev, via, confidence) USING KEY (row) AS (
            SELECT unnest($start::INTEGER[]), 0, NULL::INTEGER, NULL::VARCHAR, NULL::VARCHAR
            UNION
            SELECT row, depth, step.prev, step.via, step.confidence FROM (
                -- one row per newly reached node: the smallest (prev, via) wins, deterministically
                SELECT e.{to} AS row, min(r.depth) + 1 AS depth,
                       min({{'prev': r.row, 'via': e.kind, 'confidence': e.confidence}}) AS step
                FROM r JOIN {table} e ON e.{frm} = r.row
                WHERE r.depth < $depth
                  AND NOT EXISTS (SELECT 1 FROM recurring.r seen WHERE seen.row = e.{to})
                  {stop}
                GROUP BY e.{to}
            )
        )
        SELECT * FROM r
        """
        params = {"start": start, "depth": depth}
        if stop_at is not None:
            params["stop"] = stop_at
        out = self.con.sql(sql, params=params).pl()
        return out.sort("depth", "row").cast({"depth": pl.Int32, "row": pl.Int32})

    def with_ids(self, r: pl.DataFrame) -> pl.DataFrame:
        """Replace integer rows by node ids."""
        ids = self.ids
        return r.with_columns(
            id=ids.gather(r["row"]),
            prev=pl.when(pl.col("prev").is_not_null()).then(
                pl.lit(ids).gather(pl.col("prev").fill_null(0))
            ),
        ).select("id", "depth", "prev", "via", "confidence")

    def shortest_paths(
        self,
        a: int,
        b: int,
        *,
        undirected: bool = False,
        include_ambiguous: bool = False,
        max_depth: int = 12,
        max_paths: int = 5,
    ) -> tuple[list[list[dict]], pl.DataFrame, pl.DataFrame]:
        """Up to `max_paths` shortest paths a → b (lists of hops), and both reach frames.

        Nodes on a shortest path satisfy dist(a, n) + dist(n, b) = dist(a, b); paths are
        enumerated only inside that small sub-graph, in a fixed order.
        """
        kw = {"include_ambiguous": include_ambiguous, "undirected": undirected}
        fwd = self.reach([a], reverse=False, depth=max_depth, stop_at=b, **kw)
        if fwd.filter(pl.col("row") == b).is_empty():
            bwd = self.reach([b], reverse=True, depth=max_depth, **kw)
            return [], fwd, bwd
        # Edges between consecutive BFS layers form a DAG holding every shortest path from a;
        # keep the part that leads to b.
        self.con.register("_fwd", fwd.select("row", "depth"))
        layered = self.con.sql(
            f"""SELECT e.s, e.d, e.kind, e.confidence FROM {self._table(**kw)} e
                JOIN _fwd x ON x.row = e.s JOIN _fwd y ON y.row = e.d
                WHERE y.depth = x.depth + 1 ORDER BY e.s, e.d, e.kind"""
        ).pl()
        self.con.unregister("_fwd")
        into: dict[int, list[int]] = {}
        for s_, d_ in layered.select("s", "d").iter_rows():
            into.setdefault(d_, []).append(s_)
        useful, todo = {b}, [b]
        while todo:
            for s_ in into.get(todo.pop(), []):
                if s_ not in useful:
                    useful.add(s_)
                    todo.append(s_)
        steps = layered.filter(pl.col("s").is_in(useful) & pl.col("d").is_in(useful))
        bwd = fwd.filter(pl.col("row").is_in(useful))
        ids = self.ids
        nxt: dict[int, list[dict]] = {}
        for s_, d_, kind, conf in steps.iter_rows():
            nxt.setdefault(s_, []).append(
                {"src": ids[s_], "dst": ids[d_], "kind": kind, "confidence": conf, "_d": d_}
            )
        paths: list[list[dict]] = []

        def walk(node: int, acc: list[dict]) -> None:
            if len(paths) >= max_paths:
                return
            if node == b:
                paths.append([{k: v for k, v in h.items() if k != "_d"} for h in acc])
                return
            for hop in nxt.get(node, []):
                acc.append(hop)
                walk(hop["_d"], acc)
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

"""Graph traversal: breadth-first walks over the dependency edges, a level at a time.

The edges are kept sorted by the end a walk leaves from, with each node row's range of them
(an adjacency in compressed rows), so a level is one gather of its frontier's ranges: the work
is linear in the edges the walk touches, not in the graph. A recursive SQL join scans every
edge at every level instead, which on a kernel-sized graph is most of a deep walk's time.
"""

from __future__ import annotations

import polars as pl

DEPENDENCY_KINDS = ["calls", "imports", "extends", "implements", "contains"]
_RUNS_NESTED = ["function", "method", "lambda", "script"]


class _Adjacency:
    """Edges sorted by (from, to, kind, confidence) and each node row's range of them; kind
    and confidence are codes into sorted lists (`kinds` for the kinds), so their order is the
    strings' order."""

    def __init__(self, edges: pl.DataFrame, n: int, kinds: pl.Series):
        e = edges.sort("f", "t", "kind", "confidence")
        self.to, self.kind, self.confidence = e["t"], e["kind"], e["confidence"]
        bounds = pl.int_range(0, n + 1, dtype=pl.Int32, eager=True)
        self.offsets = e["f"].search_sorted(bounds, side="left").cast(pl.Int64)
        self.kinds = kinds

    def step(self, frontier: pl.Series, kinds: list[str] | None) -> pl.DataFrame:
        """(prev, row, kind, confidence) of every edge leaving `frontier` (sorted rows), in
        (prev, row, kind, confidence) order."""
        ranges = pl.DataFrame(
            {
                "prev": frontier,
                "lo": self.offsets.gather(frontier),
                "hi": self.offsets.gather(frontier + 1),
            }
        ).filter(pl.col("hi") > pl.col("lo"))
        at = ranges.select("prev", i=pl.int_ranges("lo", "hi")).explode("i")
        out = at.select(
            "prev",
            row=self.to.gather(at["i"]),
            kind=self.kind.gather(at["i"]),
            confidence=self.confidence.gather(at["i"]),
        )
        if kinds:
            codes = self.kinds.is_in(pl.Series(kinds, dtype=pl.String).implode()).arg_true()
            out = out.filter(pl.col("kind").is_in(codes.cast(out.schema["kind"]).implode()))
        return out


class Traversal:
    """Dependency edges keyed by integer node rows, and the walks over them."""

    def __init__(self, nodes: pl.DataFrame, edges: pl.DataFrame):
        self.ids = nodes["id"]
        self._n = nodes.height
        # a body that runs the definitions nested in it: what changes them changes it
        self._runs_nested = nodes["kind"].is_in(_RUNS_NESTED)
        rows = nodes.select("id", r=pl.int_range(pl.len(), dtype=pl.Int32))
        every = (
            edges.filter(pl.col("dst").is_not_null() & pl.col("kind").is_in(DEPENDENCY_KINDS))
            .join(rows.rename({"id": "src", "r": "s"}), on="src")
            .join(rows.rename({"id": "dst", "r": "d"}), on="dst")
            .select("s", "d", "kind", "confidence")
        )
        # every AMBIGUOUS edge, repeats kept: what a walk that leaves them out reports
        self._ambiguous = every.filter(pl.col("confidence") == "AMBIGUOUS").select(
            f="d", t="s", kind=pl.lit(0, pl.UInt8), confidence=pl.lit(0, pl.UInt8)
        )
        dep = every.unique()
        del every
        self._kinds = dep["kind"].unique().sort()
        self._contains = self._kinds.index_of("contains")  # None when no edge contains
        self._confs = dep["confidence"].drop_nulls().unique().sort()
        self._dep = dep.select(
            "s",
            "d",
            kind=pl.col("kind").cast(pl.Enum(self._kinds)).to_physical(),
            confidence=pl.col("confidence").cast(pl.Enum(self._confs)).to_physical(),
            sure=pl.col("confidence") != "AMBIGUOUS",
        )
        self._walks: dict[object, _Adjacency] = {}

    def _adjacency(self, include_ambiguous: bool, direction: str) -> _Adjacency:
        """Built on first use: a CLI run walks one way over one confidence set."""
        key = (include_ambiguous, direction)
        if key not in self._walks:
            dep = self._dep if include_ambiguous else self._dep.filter("sure")
            forward = dep.select(f="s", t="d", kind="kind", confidence="confidence")
            reverse = dep.select(f="d", t="s", kind="kind", confidence="confidence")
            edges = {"forward": forward, "reverse": reverse}.get(direction)
            if edges is None:  # both ways: a pair linked both ways is one step
                edges = pl.concat([forward, reverse]).unique()
            self._walks[key] = _Adjacency(edges, self._n, self._kinds)
        return self._walks[key]

    def ambiguous_left_out(self, rows: pl.Series) -> int:
        """AMBIGUOUS dependency edges into `rows` from outside them (repeats counted)."""
        if "ambiguous" not in self._walks:
            self._walks["ambiguous"] = _Adjacency(self._ambiguous, self._n, self._kinds)
        into = self._walks["ambiguous"].step(rows.cast(pl.Int32).unique().sort(), None)
        inside = pl.zeros(self._n, dtype=pl.Boolean, eager=True).scatter(rows, True)
        return into.height - int(inside.gather(into["row"]).sum())

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
        past_containers: bool = True,
    ) -> pl.DataFrame:
        """Rows reachable from `start` within `depth` hops: (row, depth, prev, via, confidence).

        reverse=True walks edges backwards (who depends on the start); `stop_at` ends the walk
        at the first depth that reaches that row. A row is reached once, at its first depth,
        through the smallest (prev, via, confidence) of the edges that reach it there. Without
        `past_containers`, a file or class reached through `contains` (it holds what changed)
        is walked on from only through `contains`: what imports a module, or calls a class,
        does not use all of it.
        """
        way = "both" if undirected else ("reverse" if reverse else "forward")
        adj = self._adjacency(include_ambiguous, way)
        frontier = pl.Series("row", start, dtype=pl.Int32).unique().sort()
        seen = pl.zeros(self._n, dtype=pl.Boolean, eager=True).scatter(frontier, True)
        levels = [  # the start: no step, so null step columns of the steps' types
            frontier.to_frame().with_columns(
                prev=pl.lit(None, pl.Int32),
                kind=pl.lit(None, adj.kind.dtype),
                confidence=pl.lit(None, adj.confidence.dtype),
                depth=pl.lit(0, pl.Int32),
            )
        ]
        held = frontier.clear()  # rows walked on from through `contains` only
        for level in range(1, depth + 1):
            if (frontier.is_empty() and held.is_empty()) or (stop_at is not None and seen[stop_at]):
                break
            step = adj.step(frontier, kinds)
            if not held.is_empty() and (kinds is None or "contains" in kinds):
                up = adj.step(held, ["contains"])
                step = pl.concat([step, up]).sort("prev", "row", "kind", "confidence")
            # Steps come in (prev, row, kind, confidence) order, so a row's first is its least.
            new = (
                step.filter(~seen.gather(step["row"]))
                .unique("row", keep="first", maintain_order=True)
                .sort("row")
            )
            seen = seen.scatter(new["row"], True)
            levels.append(new.with_columns(depth=pl.lit(level, pl.Int32)))
            frontier = new["row"]
            if not past_containers and self._contains is not None:
                up = (new["kind"] == self._contains) & ~self._runs_nested.gather(frontier)
                held, frontier = frontier.filter(up), frontier.filter(~up)
        out = pl.concat(levels, how="diagonal")
        return out.select(
            "row",
            "depth",
            prev=pl.col("prev").cast(pl.Int32),
            via=self._kinds.gather(out["kind"]),
            confidence=self._confs.gather(out["confidence"]),
        )

    def reach_each(
        self, starts: pl.Series, *, depth: int, undirected: bool = False,
        include_ambiguous: bool = False,
    ) -> pl.DataFrame:  # fmt: skip
        """Every row each start reaches within `depth` forward hops, walked from all starts at
        once: (start, row, depth), the starts themselves not listed."""
        adj = self._adjacency(include_ambiguous, "both" if undirected else "forward")
        rows = starts.cast(pl.Int32).unique().sort()
        frontier = pl.DataFrame({"start": rows, "row": rows})
        seen = frontier
        levels = []
        for level in range(1, depth + 1):
            if frontier.is_empty():
                break
            step = adj.step(frontier["row"].unique().sort(), None).select("prev", "row")
            new = (
                frontier.join(step.rename({"row": "next"}), left_on="row", right_on="prev")
                .select("start", row="next")
                .unique()
                .join(seen, on=["start", "row"], how="anti")
            )
            seen = pl.concat([seen, new])
            levels.append(new.with_columns(depth=pl.lit(level, pl.Int32)))
            frontier = new
        if not levels:
            return pl.DataFrame(schema={"start": pl.Int32, "row": pl.Int32, "depth": pl.Int32})
        return pl.concat(levels)

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
        adj = self._adjacency(include_ambiguous, "both" if undirected else "forward")
        depth_of = pl.repeat(-1, self._n, dtype=pl.Int32, eager=True).scatter(
            fwd["row"], fwd["depth"]
        )
        step = adj.step(fwd["row"].sort(), None)
        step = step.filter(depth_of.gather(step["row"]) == depth_of.gather(step["prev"]) + 1)
        layered = pl.DataFrame(
            {
                "s": step["prev"],
                "d": step["row"],
                "kind": self._kinds.gather(step["kind"]),
                "confidence": self._confs.gather(step["confidence"]),
            }
        )
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

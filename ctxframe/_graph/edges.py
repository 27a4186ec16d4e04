"""1-hop lookups: every edge sorted by source row and by target row, with display labels, so
the arrows of a few nodes are bisects and zero-copy slices; and the capped, best-first
neighbourhood a query hit shows."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import polars as pl

from ctxframe._core.frames import changed_rows, splice_sorted
from ctxframe._rank.tokens import ENGINE

MAX_NEIGHBOURS = 12
_KIND_RANK = {"calls": 0, "extends": 1, "implements": 2, "imports": 3, "contains": 5}
_CONF_RANK = {"EXTRACTED": 0, "INFERRED": 1, "AMBIGUOUS": 2}

NEIGHBOURS_SCHEMA = pl.Schema(
    {
        "hit_id": pl.String,
        "direction": pl.String,
        "edge_kind": pl.String,
        "confidence": pl.String,
        "other_id": pl.String,
        "other_label": pl.String,
        "other_kind": pl.String,
        "line": pl.Int32,
        "via": pl.String,  # how the call runs its target (edges' `via`), else null
    }
)


def _display_label_expr() -> pl.Expr:
    """How a node is named in an arrow: its path for files, else qualname, label or id."""
    return (
        pl.when(pl.col("kind") == "file")
        .then(pl.col("id"))
        .otherwise(pl.coalesce(pl.col("qualname"), pl.col("label"), pl.col("id")))
    )


_ARROW_COLUMNS = ["src", "dst", "kind", "confidence", "name", "line", "via", "_s", "_d",
                  "src_label", "src_kind", "dst_label", "dst_kind"]  # fmt: skip


def _sorted_arrows(edges: pl.DataFrame, nodes: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every edge with its ends' node rows, display labels and kinds, sorted by source row and
    by target row in display order (kind, label, id per node), so a slice needs no sort. A
    few edges (a card's) read only the node rows they touch."""
    info = nodes.lazy().with_row_index("_r")
    if edges.height * 4 < nodes.height:
        ends = pl.concat([edges["src"], edges["dst"]]).drop_nulls().unique().implode()
        info = info.filter(pl.col("id").is_in(ends))
    info = info.select("id", "_r", _label=_display_label_expr(), _kind="kind")

    def end(side: str, row: str) -> pl.LazyFrame:
        names = {"id": side, "_r": row, "_label": f"{side}_label", "_kind": f"{side}_kind"}
        return info.rename(names)

    base = (
        edges.lazy()
        .select("src", "dst", "kind", "confidence", "name", pl.col("line").cast(pl.Int32),
                pl.col("via") if "via" in edges.columns else pl.lit(None, pl.String).alias("via"))
        .join(end("src", "_s"), on="src", how="left")
        .join(end("dst", "_d"), on="dst", how="left")
        .select(_ARROW_COLUMNS)
        .collect(engine=ENGINE)
    )
    out = (
        base.filter(pl.col("_s").is_not_null())
        .with_columns(_label=pl.coalesce("dst_label", "name", "dst"))
        .sort("_s", "kind", "_label", "dst", "line", nulls_last=True)
        .drop("_label")
    )
    inn = (
        base.filter(pl.col("_d").is_not_null())
        .with_columns(_label=pl.coalesce("src_label", "src"))
        .sort("_d", "kind", "_label", "src", "line", nulls_last=True)
        .drop("_label")
    )
    return out, inn


_BISECT_ROWS = 8  # up to this many rows, `EdgeIndex._slices` bisects row by row


class EdgeIndex:
    """Edges sorted by source row and by target row, with display labels, for 1-hop lookups.

    Lookups are binary searches over integer node rows, so a query never scans the edges.
    """

    def __init__(self, edges: pl.DataFrame, nodes: pl.DataFrame):
        self.out, self.inn = _sorted_arrows(edges, nodes)
        self._views()

    def patched(
        self,
        nodes0: pl.DataFrame,
        edges0: pl.DataFrame,
        nodes: pl.DataFrame,
        edges: pl.DataFrame,
    ) -> EdgeIndex | None:
        """This index (built from `nodes0`, `edges0`) for the tables `nodes`, `edges`: the
        arrows of the nodes whose edges or whose neighbours' names changed are made again, the
        rest re-keyed to the new node rows (a monotone map: they stay in order) and kept.
        Equals `EdgeIndex(edges, nodes)`. None when the node ids are not sorted."""
        ids0, ids = nodes0["id"], nodes["id"]
        if not (ids0.is_sorted() and ids.is_sorted()):
            return None
        shown = ["id", "kind", "label", "qualname"]
        moved = changed_rows(nodes0.select(shown), nodes.select(shown))["id"].unique()
        cols = ["src", "dst", "kind", "confidence", "name", "line", "via"]
        diff = changed_rows(edges0.select(cols), edges.select(cols))
        near = pl.col("src").is_in(moved.implode()) | pl.col("dst").is_in(moved.implode())
        ends = [e.select("src", "dst").filter(near) for e in (edges0, edges)]
        srcs = pl.concat([diff["src"], *(e["src"] for e in ends), moved]).unique().implode()
        dsts = pl.concat([diff["dst"], *(e["dst"] for e in ends), moved]).drop_nulls().unique()
        dsts = dsts.implode()
        touching = edges.filter(pl.col("src").is_in(srcs) | pl.col("dst").is_in(dsts))
        out_new, inn_new = _sorted_arrows(touching, nodes)
        out_new = out_new.filter(pl.col("src").is_in(srcs))
        inn_new = inn_new.filter(pl.col("dst").is_in(dsts))
        row = ids.search_sorted(ids0).cast(pl.UInt32)  # old row -> new row (kept nodes)

        def rekeyed(frame: pl.DataFrame, drop: pl.Expr) -> pl.DataFrame:
            kept = frame.filter(~drop)
            return kept.with_columns(_s=row.gather(kept["_s"]), _d=row.gather(kept["_d"]))

        out = rekeyed(self.out, pl.col("src").is_in(srcs))
        inn = rekeyed(self.inn, pl.col("dst").is_in(dsts))
        self = EdgeIndex.__new__(EdgeIndex)
        self.out, self.inn = splice_sorted(out, "_s", out_new), splice_sorted(inn, "_d", inn_new)
        self._views()
        return self

    def _views(self) -> None:
        """Display-shaped copies of the two sorted frames and their sorted keys, so a lookup
        is two binary searches and two zero-copy slices."""
        self._src = self.out["_s"]
        self._dst = self.inn["_d"]
        self._out_view = self.out.select(
            hit_id="src",
            direction=pl.lit("out"),
            edge_kind="kind",
            confidence="confidence",
            other_id="dst",
            other_label=pl.coalesce("dst_label", "name", "dst"),
            other_kind="dst_kind",
            line="line",
            via="via",
        ).cast(dict(NEIGHBOURS_SCHEMA))
        self._in_view = self.inn.select(
            hit_id="dst",
            direction=pl.lit("in"),
            edge_kind="kind",
            confidence="confidence",
            other_id="src",
            other_label=pl.coalesce("src_label", "src"),
            other_kind="src_kind",
            line="line",
            via="via",
        ).cast(dict(NEIGHBOURS_SCHEMA))

    @classmethod
    def subset(cls, edges: pl.DataFrame, nodes: pl.DataFrame) -> SubsetEdgeIndex:
        """A lookup that filters the edges of the asked rows per call: no build cost, for a
        one-shot query (a CLI run) where building the full index would dominate."""
        return SubsetEdgeIndex(edges, nodes)

    @classmethod
    def from_frames(cls, out: pl.DataFrame, inn: pl.DataFrame) -> EdgeIndex:
        """Rebuild from the two sorted frames `frames()` returned (a cache read back)."""
        self = cls.__new__(cls)
        self.out, self.inn = out, inn
        self._views()
        return self

    def frames(self) -> dict[str, pl.DataFrame]:
        """The state worth caching: edges sorted by source row and by target row."""
        return {"edges_out": self.out, "edges_in": self.inn}

    @staticmethod
    def _slices(frame: pl.DataFrame, keys: pl.Series, rows: pl.Series) -> list[pl.DataFrame]:
        """The parts of `frame` whose sorted key is in `rows`: binary searches and zero-copy
        slices. A few rows (a card) are bisected element by element: a vector search is a
        Polars query of its own, several times the cost of a card's other work."""
        if rows.len() <= _BISECT_ROWS:
            want = rows.to_list()
            los = [bisect_left(keys, r) for r in want]
            his = [bisect_right(keys, r, lo) for r, lo in zip(want, los, strict=True)]
        else:
            los = keys.search_sorted(rows, side="left").to_list()
            his = keys.search_sorted(rows, side="right").to_list()
        return [frame.slice(lo, hi - lo) for lo, hi in zip(los, his, strict=True) if hi > lo]

    def arrows(self, rows: pl.Series) -> pl.DataFrame:
        """All 1-hop arrows of the nodes at the given rows, both directions (uncapped):
        "in" before "out", each already in (kind, label, id) order per node."""
        if rows.is_empty():
            return pl.DataFrame(schema=NEIGHBOURS_SCHEMA)
        rows = rows.cast(pl.UInt32).unique().sort()
        parts = self._slices(self._in_view, self._dst, rows) + self._slices(
            self._out_view, self._src, rows
        )
        return pl.concat(parts) if parts else pl.DataFrame(schema=NEIGHBOURS_SCHEMA)


class SubsetEdgeIndex:
    """`EdgeIndex.arrows` over only the edges that touch the asked rows."""

    def __init__(self, edges: pl.DataFrame, nodes: pl.DataFrame):
        self._edges, self._nodes = edges, nodes

    def arrows(self, rows: pl.Series) -> pl.DataFrame:
        ids = self._nodes["id"].gather(rows.cast(pl.UInt32)).implode()
        touching = self._edges.filter(pl.col("src").is_in(ids) | pl.col("dst").is_in(ids))
        return EdgeIndex(touching, self._nodes).arrows(rows)


def neighbours_of(
    arrows: pl.DataFrame,
    hit_ids: Sequence[str],
    *,
    include_ambiguous: bool = False,
    cap: int = MAX_NEIGHBOURS,
) -> pl.DataFrame:
    """Deduplicate, filter and cap the arrows: at most ``cap`` per hit, best-first, stable.

    Selection order: confidence (EXTRACTED first), edge kind (calls, extends, implements,
    imports, others, contains), direction, label; display order: in-arrows first.
    """
    if arrows.is_empty():
        return pl.DataFrame(schema=NEIGHBOURS_SCHEMA)
    lf = arrows.lazy()
    if not include_ambiguous:
        lf = lf.filter(pl.col("confidence").fill_null("") != "AMBIGUOUS")
    order = pl.LazyFrame(
        {"hit_id": list(hit_ids), "_hit": range(len(hit_ids))},
        schema={"hit_id": pl.String, "_hit": pl.Int64},
    )
    conf = pl.col("confidence").replace_strict(_CONF_RANK, default=3, return_dtype=pl.Int8)
    kind = pl.col("edge_kind").replace_strict(_KIND_RANK, default=4, return_dtype=pl.Int8)
    back = {v: k for k, v in _CONF_RANK.items()}
    return (
        lf.with_columns(_conf=conf, _kind=kind)
        .group_by("hit_id", "direction", "edge_kind", "other_id", "other_label")
        .agg(
            pl.col("_conf").min(),
            pl.col("_kind").first(),
            pl.col("other_kind").first(),
            pl.col("line").min(),
            pl.col("via").drop_nulls().first(),
        )
        .with_columns(
            confidence=pl.col("_conf").replace_strict(back, default=None, return_dtype=pl.String)
        )
        .join(order, on="hit_id", how="inner")
        .sort(
            ["_hit", "_conf", "_kind", "direction", "other_label", "other_id", "line"],
            nulls_last=True,
        )
        .filter(pl.int_range(pl.len()).over("_hit") < cap)
        .sort(["_hit", "direction", "_kind", "other_label", "other_id", "line"], nulls_last=True)
        .select(list(NEIGHBOURS_SCHEMA))
        .cast(dict(NEIGHBOURS_SCHEMA))
        .collect(engine=ENGINE)
    )

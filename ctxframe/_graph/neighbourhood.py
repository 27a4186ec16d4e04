"""`g.neighbourhood(NAME, depth)`: the nodes within a few hops of a symbol or file, capped for
drawing, as a result that renders as text, HTML and a picture."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ctxframe._graph.lookups import Lookups
from ctxframe._graph.verbs import OK, card
from ctxframe._render.html import render
from ctxframe._render.picture import (
    _CONF_RANK,
    _KIND_RANK,
    DEFAULT_CAP,
    PICTURE_KINDS,
    Picture,
    _dedupe_edges,
    cap_subgraph,
    vis_data,
    vis_options,
)

_NB_COLS = ["id", "kind", "label", "qualname", "path", "line_start", "line_end", "signature"]


@dataclass
class Neighbourhood:
    """The nodes within `depth` hops of a symbol or file (either direction), capped for drawing."""

    name: str
    depth: int = 1
    centre: list[str] = field(default_factory=list)  # the focus: the node(s) it grows from
    nodes: pl.DataFrame = field(default_factory=pl.DataFrame)  # _NB_COLS + depth
    edges: pl.DataFrame = field(default_factory=pl.DataFrame)  # src, dst, kind, confidence
    more: dict[str, int] = field(default_factory=dict)
    total: int = 0
    include_ambiguous: bool = False
    cap: int = DEFAULT_CAP
    card: Any = None  # a Card when the name did not resolve to one node

    @property
    def found(self) -> bool:
        return bool(self.centre)

    def render(self) -> str:
        if not self.found:
            return str(self.card)
        head = (
            f"neighbourhood of {self.name} (depth {self.depth}): {self.nodes.height} nodes, "
            f"{self.edges.height} edges"
        )
        if self.more:
            head += f", +{sum(self.more.values())} more not shown (cap {self.cap})"
        labels = dict(self.nodes.select("id", "label").iter_rows())
        lines = [head]
        for r in self.nodes.filter(pl.col("depth") > 0).iter_rows(named=True):
            lines.append(f"  d{r['depth']} {r['kind']:<9} {r['qualname'] or r['label']}")
        for r in self.edges.iter_rows(named=True):
            conf = "" if r["confidence"] == "EXTRACTED" else f" ({(r['confidence'] or '').lower()})"
            lines.append(
                f"  {labels.get(r['src'], r['src'])} → {r['kind']} → "
                f"{labels.get(r['dst'], r['dst'])}{conf}"
            )
        for parent, n in self.more.items():
            lines.append(f"  +{n} more around {labels.get(parent, parent)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, the shape every verb has (docs/json.md), plus draw-ready `vis` data."""
        if not self.found:
            return {
                "verb": "neighbourhood",
                "status": self.card.status,
                "name": self.name,
                "error": self.card.error(),
            }
        vn, ve = vis_data(self.nodes.to_dicts(), self.edges.to_dicts(), self.more, self.centre)
        return {
            "verb": "neighbourhood",
            "status": OK,
            "name": self.name,
            "depth": self.depth,
            "centre": self.centre,
            "nodes": self.nodes.to_dicts(),
            "edges": self.edges.to_dicts(),
            "more": [{"parent": p, "count": n} for p, n in self.more.items()],
            "total": self.total,
            "include_ambiguous": self.include_ambiguous,
            "vis": {"nodes": vn, "edges": ve, "options": vis_options(vn)},
        }

    def plot(self, height: int = 520) -> Picture:
        """Draw it (pyvis / vis-network, offline)."""
        title = f"neighbourhood of {self.name} · depth {self.depth}"
        if not self.found:
            return Picture(title=f"{self.name}: not found", nodes=[], edges=[], height=height)
        vn, ve = vis_data(self.nodes.to_dicts(), self.edges.to_dicts(), self.more, self.centre)
        return Picture(
            title, vn, ve, more=sum(self.more.values()), height=height, centre=self.centre
        )

    def _repr_html_(self) -> str:
        if not self.found:
            return self.card.failure_html("neighbourhood")
        return render(
            "neighbourhood",
            name=self.name,
            depth=self.depth,
            nodes=self.nodes.to_dicts(),
            edges=self.edges.height,
            more=sum(self.more.values()),
            cap=self.cap,
            picture=self.plot()._repr_html_(),
        )

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = {"text/plain": self.render(), "text/html": self._repr_html_()}
        if self.found:  # the picture as static SVG too (viewers that show no HTML)
            bundle["image/svg+xml"] = self.plot().svg()
        return bundle


def neighbourhood(
    lk: Lookups,
    name: str,
    *,
    depth: int = 1,
    include_ambiguous: bool = False,
    cap: int = DEFAULT_CAP,
) -> Neighbourhood:
    """Breadth-first over calls/imports/extends/implements/contains (both ways) from `name`."""
    t = name.strip().removeprefix("./")
    if lk.is_file(t):
        start = [t]
    else:
        c = card(lk, name)
        if c.status != OK:
            return Neighbourhood(name=name, depth=depth, card=c, cap=cap)
        start = [c.node["id"]]
    e = lk.edges.filter(pl.col("dst").is_not_null() & pl.col("kind").is_in(PICTURE_KINDS))
    if not include_ambiguous:
        e = e.filter(pl.col("confidence") != "AMBIGUOUS")
    e = e.select("src", "dst", "kind", "confidence")
    conf = pl.col("confidence").replace_strict(_CONF_RANK, default=3, return_dtype=pl.Int8)
    kind = pl.col("kind").replace_strict(_KIND_RANK, default=4, return_dtype=pl.Int8)
    depth_of = {i: 0 for i in start}
    order = list(start)
    frontier = list(start)
    for d in range(1, max(0, depth) + 1):
        if not frontier:
            break
        f = pl.Series(frontier, dtype=pl.String).implode()
        cand = pl.concat(
            [
                e.filter(pl.col("src").is_in(f)).select(other="dst", c=conf, k=kind),
                e.filter(pl.col("dst").is_in(f)).select(other="src", c=conf, k=kind),
            ]
        )
        cand = (
            cand.filter(
                ~pl.col("other").is_in(pl.Series(list(depth_of), dtype=pl.String).implode())
            )
            .group_by("other")
            .agg(pl.col("c").min(), pl.col("k").min())
            .sort("c", "k", "other")
        )
        frontier = cand["other"].to_list()
        for i in frontier:
            depth_of[i] = d
        order.extend(frontier)
    rows = lk.node_rows(order).select(_NB_COLS)
    rows = rows.with_columns(depth=pl.col("id").replace_strict(depth_of, return_dtype=pl.Int32))
    by_id = {r["id"]: r for r in rows.iter_rows(named=True)}
    all_nodes = [by_id[i] for i in order if i in by_id]
    ids = pl.Series(list(by_id), dtype=pl.String).implode()
    inner = e.filter(pl.col("src").is_in(ids) & pl.col("dst").is_in(ids)).to_dicts()
    kept, shown, more = cap_subgraph(all_nodes, _dedupe_edges(inner), cap)
    edge_schema = {"src": pl.String, "dst": pl.String, "kind": pl.String, "confidence": pl.String}
    return Neighbourhood(
        name=name,
        depth=depth,
        centre=start,
        nodes=pl.DataFrame(kept, schema=rows.schema),
        edges=pl.DataFrame(shown, schema=edge_schema).sort("src", "dst", "kind"),
        more=more,
        total=len(all_nodes),
        include_ambiguous=include_ambiguous,
        cap=cap,
    )

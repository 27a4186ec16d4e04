"""Pictures of subgraphs (pyvis / vis-network, fully offline) and the `Neighbourhood` result.

Every picture is one self-contained HTML page: vis-network's JS and CSS are read from the pyvis
package and inlined, nothing is fetched from the network (pyvis's own template links Bootstrap
from a CDN, so we render the page with our own small template instead). In a notebook the page
is shown in an ``<iframe srcdoc=…>``, which works in JupyterLab, classic Notebook and VS Code.

Styling: node colour by kind (the same palette as the HTML badges), edge style by confidence
(EXTRACTED solid, INFERRED thin grey, AMBIGUOUS dashed orange). A picture never shows more than
``cap`` nodes: the rest are folded into visible ``+N more`` boxes next to the node they hang off.

pyvis is imported only when a picture is built, so ``import ctxframe`` stays light.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import polars as pl

from ctxframe._render.html import render
from ctxframe._render.palette import CONFIDENCE_STYLES, kind_colour, text_colour
from ctxframe._render.text import location

MORE_COLOUR = "#f2f2f2"
DEFAULT_CAP = 40
PICTURE_KINDS = ("calls", "imports", "extends", "implements", "contains", "mentions")
_KIND_RANK = {"calls": 0, "extends": 1, "implements": 2, "imports": 3, "contains": 5}
_CONF_RANK = {"EXTRACTED": 0, "INFERRED": 1, "AMBIGUOUS": 2}
VIS_DIR = "lib/vis-9.1.2"




# -- vis-network assets from the pyvis package -------------------------------------------------


@lru_cache(maxsize=1)
def focus_js() -> str:
    """The script that frames a picture around its focus node (the page and `serve` share it)."""
    return resources.files("ctxframe._render").joinpath("templates/focus.js").read_text("utf-8")


@lru_cache(maxsize=4)
def vis_asset(name: str) -> str:
    """`vis-network.min.js` or `vis-network.css`, as shipped inside the pyvis package."""
    if name not in ("vis-network.min.js", "vis-network.css"):
        raise ValueError(name)
    return resources.files("pyvis").joinpath(VIS_DIR).joinpath(name).read_text("utf-8")


# -- capping -----------------------------------------------------------------------------------


def cap_subgraph(
    nodes: list[dict], edges: list[dict], cap: int = DEFAULT_CAP
) -> tuple[list[dict], list[dict], dict[str, int]]:
    """Keep the first `cap` nodes (callers order them best-first); count the rest per kept node.

    Each dropped node is charged to the first kept node an edge links it to (else the first
    node), giving the ``+N more`` boxes. Edges between kept nodes are kept.
    """
    cap = max(1, cap)
    kept = nodes[:cap]
    keep_ids = {n["id"] for n in kept}
    more: dict[str, int] = {}
    if len(nodes) > cap:
        adj: dict[str, list[str]] = {}
        for e in edges:
            adj.setdefault(e["src"], []).append(e["dst"])
            adj.setdefault(e["dst"], []).append(e["src"])
        owner: dict[str, str] = {}  # dropped node -> the kept node it hangs off
        for n in nodes[cap:]:  # best-first (BFS) order: a node's way in is seen before it
            parent = kept[0]["id"]
            for other in adj.get(n["id"], ()):
                if other in keep_ids:
                    parent = other
                    break
                if other in owner:
                    parent = owner[other]
                    break
            owner[n["id"]] = parent
            more[parent] = more.get(parent, 0) + 1
    shown = [e for e in edges if e["src"] in keep_ids and e["dst"] in keep_ids]
    return kept, shown, more


def _dedupe_edges(edges: list[dict]) -> list[dict]:
    best: dict[tuple, dict] = {}
    for e in edges:
        key = (e["src"], e["dst"], e["kind"])
        old = best.get(key)
        if old is None or _CONF_RANK.get(e.get("confidence") or "", 3) < _CONF_RANK.get(
            old.get("confidence") or "", 3
        ):
            best[key] = e
    return list(best.values())


# -- vis data ----------------------------------------------------------------------------------


def _label_width(n: dict) -> float:
    return 9.0 * len(str(n.get("label") or n["id"])) + 24


def _ellipse(angle: float, rx: float) -> tuple[float, float]:
    return rx * math.cos(angle), rx * 0.5 * math.sin(angle)


def radial_layout(
    nodes: list[dict], edges: list[dict], focus: str
) -> dict[str, tuple[float, float]] | None:
    """Positions on rings around the focus, one ring per `depth`: each node near the node it
    was reached from, so a depth-2 picture reads as a tree of rings, not a hairball. None when
    the nodes carry no depth."""
    if not nodes or any(n.get("depth") is None for n in nodes):
        return None
    depth = {n["id"]: int(n["depth"]) for n in nodes}
    if depth.get(focus) != 0:
        return None
    if any(d == 0 for i, d in depth.items() if i != focus):  # a file and its own symbols
        depth = {i: 0 if i == focus else d + 1 for i, d in depth.items()}
    adj: dict[str, list[str]] = {}
    for e in edges:
        adj.setdefault(e["src"], []).append(e["dst"])
        adj.setdefault(e["dst"], []).append(e["src"])
    pos: dict[str, tuple[float, float]] = {focus: (0.0, 0.0)}
    angle: dict[str, float] = {focus: 0.0}
    rx = 0.0
    for d in range(1, max(depth.values()) + 1):
        ring = [n for n in nodes if depth[n["id"]] == d]
        if not ring:
            break
        parent = {}
        for n in ring:
            ups = [o for o in adj.get(n["id"], ()) if depth.get(o) == d - 1 and o in angle]
            parent[n["id"]] = ups[0] if ups else focus
        order = sorted(
            range(len(ring)), key=lambda i: (angle[parent[ring[i]["id"]]] % (2 * math.pi), i)
        )
        ring = [ring[i] for i in order]
        # an ellipse twice as wide as tall suits wide labels; big enough for the ring's labels
        rx = max(rx + 280, 260, 0.8 * sum(_label_width(n) for n in ring) / 4.84)
        step = 2 * math.pi / len(ring)
        # turn the ring so that nodes sit, on average, towards the node they came from
        shift = (
            math.atan2(
                sum(math.sin(angle[parent[n["id"]]] - i * step) for i, n in enumerate(ring)),
                sum(math.cos(angle[parent[n["id"]]] - i * step) for i, n in enumerate(ring)),
            )
            if d > 1
            else -math.pi / 2
        )
        for i, n in enumerate(ring):
            a = shift + i * step
            angle[n["id"]] = a
            pos[n["id"]] = _ellipse(a, rx)
    return pos


def _fixed(xy: tuple[float, float]) -> dict[str, Any]:
    return {"x": round(xy[0]), "y": round(xy[1]), "physics": False}


def vis_data(
    nodes: list[dict], edges: list[dict], more: dict[str, int], centre: list[str] | tuple = ()
) -> tuple[list[dict], list[dict]]:
    """vis-network node and edge dicts (plain JSON) for the given subgraph. With one focus and
    nodes that carry their `depth`, positions are fixed on rings around the focus
    (`radial_layout`); otherwise the focus is pinned at the origin and physics lays out the
    rest around it."""
    pin = centre[0] if len(centre) == 1 else None
    rings = radial_layout(nodes, edges, pin) if pin else None
    centre = set(centre)
    vn, ve = [], []
    for n in nodes:
        kind = n.get("kind")
        bg = kind_colour(kind)
        tip = [n.get("qualname") or n.get("label") or n["id"], f"[{kind or '?'}]"]
        if n.get("path"):
            tip.append(location(n))
        if n.get("signature"):
            tip.append(str(n["signature"])[:160])
        is_centre = n["id"] in centre
        vn.append(
            {
                "id": n["id"],
                "label": str(n.get("label") or n["id"]),
                "title": "\n".join(tip),
                "shape": "box",
                "color": {
                    "background": bg,
                    "border": "#111111" if is_centre else bg,
                    "highlight": {"background": bg, "border": "#000000"},
                },
                "borderWidth": 3 if is_centre else 1,
                "font": {
                    "color": text_colour(kind),
                    "size": 18 if is_centre else 15,
                    "face": "system-ui, sans-serif",
                },
                "margin": 8,
                "kind": kind,
                **({"x": 0, "y": 0, "fixed": True} if n["id"] == pin else {}),
                **(_fixed(rings[n["id"]]) if rings and n["id"] in rings else {}),
            }
        )
    for e in edges:
        conf = e.get("confidence") or "EXTRACTED"
        st = CONFIDENCE_STYLES.get(conf, CONFIDENCE_STYLES["INFERRED"])
        ve.append(
            {
                "from": e["src"],
                "to": e["dst"],
                "label": e["kind"],
                "title": f"{e['kind']} ({conf.lower()})",
                "arrows": "to",
                "color": {"color": st["color"], "highlight": "#000000"},
                "width": st["width"],
                "dashes": st["dashes"],
                "font": {"size": 10, "color": "#555555", "strokeWidth": 3, "align": "middle"},
                "confidence": conf,
            }
        )
    for parent, count in more.items():
        mid = f"more:{parent}"
        spot = {}
        if rings and parent in rings:  # just outside the node it hangs off
            x, y = rings[parent]
            r = math.hypot(x, y)
            dx, dy = (x / r, y / r) if r else (0.0, 1.0)
            spot = {"x": round(x + dx * 150), "y": round(y + dy * 75), "physics": False}
        vn.append(
            {
                **spot,
                "id": mid,
                "label": f"+{count} more",
                "title": f"{count} more nodes not drawn (cap reached)",
                "shape": "box",
                "color": {"background": MORE_COLOUR, "border": "#999999"},
                "shapeProperties": {"borderDashes": [4, 3]},
                "font": {"color": "#333333", "size": 12},
                "margin": 6,
                "kind": "more",
            }
        )
        ve.append(
            {
                "from": parent,
                "to": mid,
                "color": {"color": "#bbbbbb"},
                "dashes": [2, 4],
                "width": 1,
                "confidence": "more",
            }
        )
    return vn, ve


VIS_OPTIONS: dict[str, Any] = {
    "physics": {
        "solver": "barnesHut",
        "barnesHut": {
            "gravitationalConstant": -3500,
            "centralGravity": 0.6,
            "springLength": 100,
            "springConstant": 0.06,
            "avoidOverlap": 1,
        },
        "stabilization": {"iterations": 250, "fit": True},
    },
    "edges": {"smooth": {"type": "continuous"}},
    "interaction": {"hover": True, "tooltipDelay": 150},
    "layout": {"improvedLayout": True, "randomSeed": 7},
}


def vis_options(nodes: list[dict]) -> dict[str, Any]:
    """The options for these nodes: no physics when every node has its place already."""
    if nodes and all(n.get("physics") is False for n in nodes):
        return {**VIS_OPTIONS, "physics": {"enabled": False}}
    return VIS_OPTIONS


def _script_json(obj: Any) -> str:
    """JSON safe inside a <script> element."""
    return (
        json.dumps(obj, ensure_ascii=False)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )


@dataclass
class Picture:
    """A drawn subgraph: `html()` is a standalone offline page, shown inline in notebooks."""

    title: str
    nodes: list[dict]
    edges: list[dict]
    more: int = 0
    height: int = 520
    centre: list[str] = field(default_factory=list)  # the focus: drawn in the middle

    @property
    def network(self):
        """The pyvis `Network` holding these nodes and edges (for pyvis's own API)."""
        from pyvis.network import Network

        net = Network(
            height=f"{self.height}px", width="100%", directed=True, cdn_resources="in_line"
        )
        for n in self.nodes:
            opts = {k: v for k, v in n.items() if k not in ("id", "label", "shape", "color")}
            net.add_node(n["id"], label=n["label"], shape=n["shape"], color=n["color"], **opts)
        for e in self.edges:
            opts = {k: v for k, v in e.items() if k not in ("from", "to")}
            net.add_edge(e["from"], e["to"], **opts)
        net.options = dict(vis_options(self.nodes))
        return net

    def html(self) -> str:
        """The page: vis-network inlined from the pyvis package, no external URL."""
        net = self.network
        counts: dict[str, int] = {}
        for n in self.nodes:
            if n.get("kind") not in (None, "more"):
                counts[n["kind"]] = counts.get(n["kind"], 0) + 1
        return render(
            "picture_page",
            title=self.title,
            vis_css=vis_asset("vis-network.css"),
            vis_js=vis_asset("vis-network.min.js"),
            focus_js=focus_js(),
            height=self.height,
            counts=sorted(counts.items()),
            more=self.more,
            nodes=_script_json(net.nodes),
            edges=_script_json(net.edges),
            options=_script_json(net.options),
            centre=_script_json(list(self.centre)),
        )

    def save(self, path: str) -> str:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html())
        return path

    def _repr_html_(self) -> str:
        return render("picture_frame", page=self.html(), title=self.title, height=self.height)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": repr(self), "text/html": self._repr_html_()}

    def __repr__(self) -> str:
        more = f", +{self.more} more" if self.more else ""
        n = sum(1 for x in self.nodes if x.get("kind") != "more")
        return f"<ctxframe.Picture {self.title!r}: {n} nodes, {len(self.edges)} edges{more}>"




def picture(
    title: str,
    nodes: list[dict],
    edges: list[dict],
    *,
    centre: list[str] | tuple = (),
    cap: int = DEFAULT_CAP,
    height: int = 520,
) -> Picture:
    """Cap, style and wrap a subgraph: nodes best-first with id/kind/label…; edges src/dst/kind."""
    seen: set[str] = set()
    uniq = [n for n in nodes if not (n["id"] in seen or seen.add(n["id"]))]
    kept, shown, more = cap_subgraph(uniq, _dedupe_edges(edges), cap)
    vn, ve = vis_data(kept, shown, more, centre)
    return Picture(
        title=title,
        nodes=vn,
        edges=ve,
        more=sum(more.values()),
        height=height,
        centre=[i for i in centre if i in {n["id"] for n in kept}],
    )


def arrows_picture(title: str, centre: dict, arrows: pl.DataFrame, cap: int = DEFAULT_CAP):
    """A node and its 1-hop arrows (a card's `arrows` frame or a query hit's neighbours)."""
    nodes, edges = [{**centre, "depth": 0}], []
    for a in _sorted_arrows(arrows):
        if a.get("other_id") is None:
            continue
        other = {"id": a["other_id"], "kind": a.get("other_kind"), "label": a["other_label"]}
        nodes.append({**other, "depth": 1})
        src, dst = (
            (centre["id"], a["other_id"])
            if a["direction"] == "out"
            else (a["other_id"], centre["id"])
        )
        edges.append(
            {"src": src, "dst": dst, "kind": a["edge_kind"], "confidence": a["confidence"]}
        )
    return picture(title, nodes, edges, centre=[centre["id"]], cap=cap)


def query_picture(result: Any, top: int = 10, cap: int = DEFAULT_CAP) -> Picture:
    """A query's top hits (ranked first) with their 1-hop neighbours."""
    hits = result.hits.head(top).to_dicts()
    nodes = [dict(h, label=f"{h['rank']}. {h['label']}") for h in hits]
    edges = []
    keep = {h["id"] for h in hits}
    nb = result.neighbours.filter(pl.col("hit_id").is_in(list(keep)))
    for a in _sorted_arrows(nb):
        if a.get("other_id") is None:
            continue
        nodes.append({"id": a["other_id"], "kind": a.get("other_kind"), "label": a["other_label"]})
        src, dst = (
            (a["hit_id"], a["other_id"])
            if a["direction"] == "out"
            else (a["other_id"], a["hit_id"])
        )
        edges.append(
            {"src": src, "dst": dst, "kind": a["edge_kind"], "confidence": a["confidence"]}
        )
    return picture(f"query: {result.query}", nodes, edges, centre=[h["id"] for h in hits], cap=cap)


def _sorted_arrows(arrows: pl.DataFrame) -> list[dict]:
    if arrows.is_empty():
        return []
    rows = arrows.to_dicts()
    return sorted(
        rows,
        key=lambda a: (
            _CONF_RANK.get(a.get("confidence") or "", 3),
            _KIND_RANK.get(a.get("edge_kind") or "", 4),
            a.get("other_label") or "",
        ),
    )

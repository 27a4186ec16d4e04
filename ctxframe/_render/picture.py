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

from ctxframe._render.html import render, render_svg
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


def node_size(label: str, font: float, margin: float = 8) -> tuple[float, float]:
    """The box a label takes at `font` px (system-ui averages 0.6 em a character): the layout
    spaces boxes by it, the SVG draws it."""
    return 0.6 * font * len(label) + 2 * margin + 2, 1.25 * font + 2 * margin


def force_layout(
    nodes: list[dict], edges: list[dict], centre: list[str] | tuple = ()
) -> dict[str, tuple[float, float]]:
    """Positions for a subgraph without rings (several foci, no depths): a deterministic
    force-directed layout (Fruchterman-Reingold, numpy, fixed start), one focus pinned at
    the origin, then boxes pushed apart until no two labels overlap."""
    import numpy as np

    ids = [n["id"] for n in nodes]
    if not ids:
        return {}
    if len(ids) == 1:
        return {ids[0]: (0.0, 0.0)}
    at = {i: k for k, i in enumerate(ids)}
    n = len(ids)
    adj = np.zeros((n, n))
    for e in edges:
        a, b = at.get(e["src"]), at.get(e["dst"])
        if a is not None and b is not None and a != b:
            adj[a, b] = adj[b, a] = 1.0
    # start: the foci on an inner circle, the rest on an outer one, in the given order; two
    # foci (a path): left to right by hops from the first
    focus = [at[c] for c in centre if c in at]
    angle = np.linspace(0, 2 * np.pi, n, endpoint=False)
    radius = np.where(np.isin(np.arange(n), focus), 0.4, 1.0)
    pos = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    if len(focus) == 2:
        hops = np.full(n, np.inf)
        hops[focus[0]], frontier = 0, [focus[0]]
        while frontier:
            nxt = [j for i in frontier for j in np.flatnonzero(adj[i]) if hops[j] == np.inf]
            for j in nxt:
                hops[j] = min(hops[j], hops[frontier[0]] + 1)
            frontier = list(dict.fromkeys(nxt))
        far = hops[np.isfinite(hops)].max() or 1.0
        hops[~np.isfinite(hops)] = far / 2
        pos = np.stack([2 * hops / far - 1, 0.3 * np.sin(np.arange(n) * 2.1)], axis=1)
    pin = focus[0] if len(focus) == 1 else None
    k = 1.0 / np.sqrt(n) * 2.2
    step = 0.2
    for _ in range(250):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.sqrt((delta**2).sum(-1)) + 1e-9
        force = k * k / dist - adj * dist * dist / k
        np.fill_diagonal(force, 0.0)
        disp = (delta / dist[..., None] * force[..., None]).sum(1) - 0.08 * pos
        length = np.sqrt((disp**2).sum(1)) + 1e-9
        pos += disp / length[:, None] * np.minimum(length, step)[:, None]
        if pin is not None:
            pos -= pos[pin]
        step *= 0.985
    # to pixels: the median edge as long as a wide label, then no two boxes overlapping
    sizes = np.array([node_size(str(nd.get("label") or nd["id"]), 15) for nd in nodes])
    lengths = [np.linalg.norm(pos[at[e["src"]]] - pos[at[e["dst"]]]) for e in edges
               if e["src"] in at and e["dst"] in at and e["src"] != e["dst"]]  # fmt: skip
    unit = float(np.median(lengths)) if lengths else 1.0
    pos *= (0.8 * np.median(sizes[:, 0]) + 50) / max(unit, 1e-6)
    pos[:, 1] *= 0.6  # wide boxes: an ellipse reads better than a circle
    for _ in range(60):
        dx = pos[:, None, 0] - pos[None, :, 0]
        dy = pos[:, None, 1] - pos[None, :, 1]
        # linked boxes keep room for the edge's arrow and label between them
        ox = (sizes[:, None, 0] + sizes[None, :, 0]) / 2 + 24 + 56 * adj - np.abs(dx)
        oy = (sizes[:, None, 1] + sizes[None, :, 1]) / 2 + 16 + 24 * adj - np.abs(dy)
        hit = (ox > 0) & (oy > 0)
        np.fill_diagonal(hit, False)
        if not hit.any():
            break
        along_x = hit & (ox / sizes[:, None, 0] <= oy / sizes[:, None, 1])
        sx = np.where(dx >= 0, 1.0, -1.0)
        sy = np.where(dy >= 0, 1.0, -1.0)
        push = np.stack([(np.where(along_x, ox, 0) * sx).sum(1),
                         (np.where(hit & ~along_x, oy, 0) * sy).sum(1)], axis=1)  # fmt: skip
        pos += 0.5 * push
        if pin is not None:
            pos -= pos[pin]
    return {i: (float(pos[at[i], 0]), float(pos[at[i], 1])) for i in ids}


def layout(
    nodes: list[dict], edges: list[dict], centre: list[str] | tuple = ()
) -> dict[str, tuple[float, float]]:
    """Where each node goes, computed once here (the interactive view and the SVG draw the
    same picture): rings around one focus when the nodes carry their depth, else a
    force-directed layout."""
    pin = centre[0] if len(centre) == 1 else None
    rings = radial_layout(nodes, edges, pin) if pin else None
    return rings if rings is not None else force_layout(nodes, edges, centre)


def vis_data(
    nodes: list[dict], edges: list[dict], more: dict[str, int], centre: list[str] | tuple = ()
) -> tuple[list[dict], list[dict]]:
    """vis-network node and edge dicts (plain JSON) for the given subgraph, every node at its
    place from `layout` (no physics: the browser draws what the SVG draws)."""
    pos = layout(nodes, edges, list(centre))
    pin = centre[0] if len(centre) == 1 else None
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
                **({"fixed": True} if n["id"] == pin else {}),
                **(_fixed(pos[n["id"]]) if n["id"] in pos else {}),
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
    if pos:  # "+N more" boxes just outside the node they hang off, away from the focus
        focus = [pos[c] for c in centre if c in pos] or list(pos.values())
        fx = sum(p[0] for p in focus) / len(focus)
        fy = sum(p[1] for p in focus) / len(focus)
    taken = [(*pos[n["id"]], *node_size(vn[i]["label"], vn[i]["font"]["size"]))
             for i, n in enumerate(nodes) if n["id"] in pos]  # fmt: skip
    labels = {n["id"]: str(n.get("label") or n["id"]) for n in nodes}
    for parent, count in more.items():
        mid = f"more:{parent}"
        spot = {}
        if parent in pos:
            x, y = pos[parent]
            r = math.hypot(x - fx, y - fy)
            dx, dy = ((x - fx) / r, (y - fy) / r) if r else (0.0, 1.0)
            w, h = node_size(f"+{count} more", 12, 6)
            for step in range(40):  # outward until it overlaps no box drawn
                sx, sy = x + dx * (150 + 20 * step), y + dy * (75 + 10 * step)
                if not any(abs(sx - bx) < (w + bw) / 2 + 8 and abs(sy - by) < (h + bh) / 2 + 6
                           for bx, by, bw, bh in taken):  # fmt: skip
                    break
            taken.append((sx, sy, w, h))
            spot = {"x": round(sx), "y": round(sy), "physics": False}
        vn.append(
            {
                **spot,
                "id": mid,
                "label": f"+{count} more",
                "title": f"{count} more nodes next to {labels.get(parent, parent)} not drawn "
                "(cap reached)",
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

    def svg(self, standalone: bool = True) -> str:
        """The same picture as static SVG, drawn here from the same places (no JavaScript):
        what exported HTML, notebook viewers and code hosts show. `standalone`: sized in
        pixels (an `image/svg+xml` output, a file); else it fills its box."""
        return render_svg("picture", **svg_scene(self), standalone=standalone)

    def html(self, embedded: bool = False) -> str:
        """The page: vis-network inlined from the pyvis package, no external URL; the SVG
        is its content until the script draws the interactive view over it. `embedded`: the
        page of a notebook's frame, which lies over the SVG: see-through until its script
        runs (a viewer without JavaScript shows the SVG under it)."""
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
            svg="" if embedded else self.svg(standalone=False),
            embedded=embedded,
        )

    def _repr_html_(self) -> str:
        """The interactive page in an iframe, over the same picture as inline SVG (shown where
        iframes or scripts are not: exported HTML, notebook viewers, code hosts)."""
        return render(
            "picture_frame",
            page=self.html(embedded=True),
            svg=self.svg(standalone=False),
            title=self.title,
            height=self.height,
        )

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {
            "text/plain": repr(self),
            "text/html": self._repr_html_(),
            "image/svg+xml": self.svg(),
        }

    def save(self, path: str) -> str:
        """Write the picture: `.svg` the static SVG, anything else the interactive page."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg() if str(path).lower().endswith(".svg") else self.html())
        return path

    def __repr__(self) -> str:
        more = f", +{self.more} more" if self.more else ""
        n = sum(1 for x in self.nodes if x.get("kind") != "more")
        return f"<ctxframe.Picture {self.title!r}: {n} nodes, {len(self.edges)} edges{more}>"




SVG_WIDTH = 960
_HEADER = 32


def svg_scene(pic: Picture) -> dict[str, Any]:
    """What the SVG template draws: boxes, clipped edges with arrows and labels, the header
    (title, kind counts, edge legend) and a view framed as the interactive page frames it
    (the focus in the middle, every box inside)."""
    boxes: dict[str, dict[str, Any]] = {}
    for n in pic.nodes:
        if "x" not in n:
            continue
        font = float(n.get("font", {}).get("size", 15))
        w, h = node_size(n["label"], font, float(n.get("margin", 8)))
        colour = n.get("color", {})
        boxes[n["id"]] = {
            "x": round(n["x"] - w / 2, 1), "y": round(n["y"] - h / 2, 1),
            "w": round(w, 1), "h": round(h, 1), "cx": n["x"], "cy": n["y"],
            "font": font, "label": n["label"], "title": n.get("title") or n["label"],
            "fill": colour.get("background", MORE_COLOUR),
            "border": colour.get("border", "#999999"),
            "border_width": n.get("borderWidth", 1),
            "text": n.get("font", {}).get("color", "#333333"),
            "dashed": n.get("kind") == "more", "bold": n.get("borderWidth", 1) > 1,
        }  # fmt: skip
    edges = []
    for e in pic.edges:
        a, b = boxes.get(e["from"]), boxes.get(e["to"])
        if a is None or b is None or a is b:
            continue
        (x1, y1), (x2, y2) = _clip(a, b), _clip(b, a)
        dashes = e.get("dashes")
        edges.append({
            "x1": x1, "y1": y1, "x2": x2, "y2": y2,
            "colour": e.get("color", {}).get("color", "#444444"),
            "width": e.get("width", 1),
            "dashes": " ".join(map(str, dashes)) if isinstance(dashes, list) else "",
            "arrow": e.get("arrows") == "to", "label": e.get("label") or "",
            "lx": round((x1 + x2) / 2, 1), "ly": round((y1 + y2) / 2, 1),
            "title": e.get("title") or "",
        })  # fmt: skip
    height = pic.height
    view = "-100 -50 200 100"
    if boxes:
        focus = [boxes[c] for c in pic.centre if c in boxes] or list(boxes.values())
        fx = sum(b["cx"] for b in focus) / len(focus)
        fy = sum(b["cy"] for b in focus) / len(focus)
        dx = max(max(abs(b["x"] - fx), abs(b["x"] + b["w"] - fx)) for b in boxes.values())
        dy = max(max(abs(b["y"] - fy), abs(b["y"] + b["h"] - fy)) for b in boxes.values())
        dx, dy = dx + 16, dy + 16
        # never larger than 1.25 times life size, as the page frames it
        dx = max(dx, SVG_WIDTH / 2 / 1.25)
        dy = max(dy, (height - _HEADER) / 2 / 1.25)  # (the header's height, at most)
        view = f"{fx - dx:.1f} {fy - dy:.1f} {2 * dx:.1f} {2 * dy:.1f}"
    counts: dict[str, int] = {}
    for n in pic.nodes:
        if n.get("kind") not in (None, "more"):
            counts[n["kind"]] = counts.get(n["kind"], 0) + 1
    x, row = 8 + 7.8 * len(pic.title) + 12, 0
    badges, legend = [], []

    def place(w: float) -> tuple[float, int]:
        nonlocal x, row
        if x + w > SVG_WIDTH - 8:  # the header wraps
            x, row = 8.0, row + 1
        at = (round(x, 1), row)
        x += w
        return at

    for kind, n in sorted(counts.items()):
        label = f"{kind} {n}"
        w = 7.2 * len(label) + 10
        (bx, brow) = place(w + 4)
        badges.append({"x": bx, "y": 7 + 22 * brow, "w": round(w, 1), "label": label,
                       "fill": kind_colour(kind), "text": text_colour(kind)})  # fmt: skip
    for label, colour in (("── extracted", CONFIDENCE_STYLES["EXTRACTED"]["color"]),
                          ("── inferred", CONFIDENCE_STYLES["INFERRED"]["color"]),
                          ("- - ambiguous", CONFIDENCE_STYLES["AMBIGUOUS"]["color"]),
                          *([(f"+{pic.more} more not drawn", "#8a6d00")] if pic.more else [])):
        (lx, lrow) = place(7.2 * len(label) + 10)
        legend.append({"x": lx + 8, "y": 20 + 22 * lrow, "label": label, "colour": colour})
    header = _HEADER + 22 * row  # fmt: skip
    return {
        "title": pic.title,
        "width": SVG_WIDTH,
        "height": height,
        "header": header,
        "view": view,
        "nodes": list(boxes.values()),
        "edges": edges,
        "badges": badges,
        "legend": legend,
        "arrow_colours": sorted({e["colour"] for e in edges if e["arrow"]}),
    }


def _clip(a: dict, b: dict) -> tuple[float, float]:
    """Where the line from box `a`'s centre towards box `b`'s leaves `a` (a small gap kept)."""
    dx, dy = b["cx"] - a["cx"], b["cy"] - a["cy"]
    if dx == 0 and dy == 0:
        return a["cx"], a["cy"]
    hw, hh = a["w"] / 2 + 3, a["h"] / 2 + 3
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return round(a["cx"] + dx * t, 1), round(a["cy"] + dy * t, 1)


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

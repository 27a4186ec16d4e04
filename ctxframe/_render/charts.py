"""Charts as inline SVG, for pages that must work offline (the audit report, notebooks):
matplotlib draws bars, histograms and scatters; the package graph is laid out here (layers
by dependency, cycles in red) and written as SVG directly. Plain lists in, SVG text out —
this layer knows no Graph. matplotlib is imported on first use.
"""

from __future__ import annotations

import html
import io
import math

ACCENT = "#4e79a7"
WARN = "#e15759"
MUTED = "#bab0ac"
ORANGE = "#f28e2b"
_FONT = "system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"


def _svg(fig, salt: str) -> str:
    """The figure as an SVG element (text kept as text; ids salted so that several charts can
    share one page)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def _figure(width: float, height: float):
    """A figure of its own (no pyplot: a notebook's backend and open figures stay as they
    are)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    ax = fig.subplots()
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=9)
    return fig, ax


def bars(
    labels: list[str], values: list[float], *, title: str, xlabel: str = "",
    highlight: list[bool] | None = None, salt: str = "bars", percent: bool = False,
) -> str:  # fmt: skip
    """Horizontal bars, first label on top."""
    if not labels:
        return ""
    fig, ax = _figure(6.4, 0.28 * len(labels) + 0.9)
    colours = [WARN if h else ACCENT for h in (highlight or [False] * len(labels))]
    ys = list(range(len(labels)))[::-1]
    ax.barh(ys, values, color=colours, height=0.7)
    ax.set_yticks(ys, [_short(x, 48) for x in labels])
    ax.set_title(title, fontsize=11, loc="left")
    ax.set_xlabel(xlabel, fontsize=9)
    if percent:
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    return _svg(fig, salt)


def histogram(values: list[float], *, title: str, xlabel: str, mark: float | None = None,
              salt: str = "histogram") -> str:  # fmt: skip
    """A histogram with a log count axis; `mark` draws a threshold line."""
    if not values:
        return ""
    fig, ax = _figure(6.4, 2.6)
    top = max(values)
    bins = list(range(1, int(top) + 2)) if top <= 40 else 40
    ax.hist(values, bins=bins, color=ACCENT, log=True)
    if mark is not None:
        ax.axvline(mark, color=WARN, linestyle="--", linewidth=1)
        ax.text(mark, ax.get_ylim()[1], f" {mark:g}", color=WARN, fontsize=8, va="top")
    ax.set_title(title, fontsize=11, loc="left")
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel("functions", fontsize=9)
    return _svg(fig, salt)


def scatter(
    x: list[float], y: list[float], *, flagged: list[bool], labels: list[str], title: str,
    xlabel: str, ylabel: str, flag_name: str, salt: str = "scatter",
) -> str:  # fmt: skip
    """A scatter on log-scaled axes; flagged points in orange, the labelled ones named."""
    if not x:
        return ""
    fig, ax = _figure(6.4, 3.4)
    xs = [v + 1 for v in x]
    plain = [i for i, f in enumerate(flagged) if not f]
    hot = [i for i, f in enumerate(flagged) if f]
    ax.scatter([xs[i] for i in plain], [y[i] for i in plain], s=14, color=ACCENT, alpha=0.6,
               label="reached by a test")  # fmt: skip
    ax.scatter([xs[i] for i in hot], [y[i] for i in hot], s=18, color=ORANGE, alpha=0.8,
               label=flag_name)  # fmt: skip
    for i, name in enumerate(labels):
        if name:
            ax.annotate(_short(name, 28), (xs[i], y[i]), fontsize=8, xytext=(4, 2),
                        textcoords="offset points")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=11, loc="left")
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig, salt)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else "…" + text[-(n - 1) :]


# -- the package graph --------------------------------------------------------------------------


def package_graph(packages: list[dict], edges: list[dict], *, title: str,
                  limit: int = 30, max_width: float = 1100) -> str:  # fmt: skip
    """Packages (dicts with `package`, `lines`, `cycle`) and their dependencies (`src`, `dst`,
    `weight`, `in_cycle`) as an SVG: importers above what they import, a package's box as
    wide as its name, packages in a cycle and the edges that close it in red; a layer wider
    than `max_width` pixels wraps. At most `limit` packages (the largest); the rest are
    counted in the title."""
    shown = sorted(packages, key=lambda p: (-(p.get("lines") or 0), p["package"]))[:limit]
    names = [p["package"] for p in shown]
    keep = set(names)
    es = [e for e in edges if e["src"] in keep and e["dst"] in keep and e["src"] != e["dst"]]
    layer = _layers(names, es)
    order = _order(names, es, layer)
    box_h, gap_x, gap_y, pad = 26, 18, 70, 24
    width_of = {n: 7.2 * len(n) + 18 for n in names}
    by_layer: dict[int, list[str]] = {}
    for n in names:
        by_layer.setdefault(layer[n], []).append(n)
    # a layer wider than the page (a cycle of many modules) wraps onto rows of its own
    rows: dict[int, list[str]] = {}
    for k in sorted(by_layer):
        line: list[str] = []
        for n in sorted(by_layer[k], key=lambda n: order[n]):
            width = sum(width_of[m] + gap_x for m in line) + width_of[n]
            if line and width > max_width:
                rows[len(rows)] = line
                line = []
            line.append(n)
        rows[len(rows)] = line
    row_w = {k: sum(width_of[n] for n in v) + gap_x * (len(v) - 1) for k, v in rows.items()}
    more = len(packages) - len(shown)
    head = f"{title}" + (f" (the {len(shown)} largest of {len(packages)})" if more else "")
    total_w = max(max(row_w.values(), default=200), 7.6 * len(head)) + 2 * pad
    pos: dict[str, tuple[float, float]] = {}
    for k, row in rows.items():
        x = pad + (total_w - 2 * pad - row_w[k]) / 2
        for n in row:
            pos[n] = (x, pad + 28 + k * (box_h + gap_y))
            x += width_of[n] + gap_x
    height = pad + 28 + (max(rows, default=0) + 1) * (box_h + gap_y) - gap_y + pad
    cyc = {p["package"] for p in shown if p.get("cycle") is not None}
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {total_w:.0f} {height:.0f}" font-family="{_FONT}" font-size="12" '
        f'role="img" aria-label="{html.escape(head)}">',
        '<defs><marker id="cf-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#777"/></marker><marker id="cf-arrow-red" viewBox="0 0 10 10" refX="10" '
        f'refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path '
        f'd="M0,0 L10,5 L0,10 z" fill="{WARN}"/></marker></defs>',
        f'<text x="{pad}" y="{pad}" font-size="13" font-weight="600">{html.escape(head)}</text>',
    ]
    top_w = max((e.get("weight") or 1) for e in es) if es else 1
    for e in sorted(es, key=lambda e: bool(e.get("in_cycle"))):
        (x1, y1), (x2, y2) = pos[e["src"]], pos[e["dst"]]
        sx, sy = x1 + width_of[e["src"]] / 2, y1 + (box_h if y2 > y1 else 0)
        tx, ty = x2 + width_of[e["dst"]] / 2, y2 + (0 if y2 > y1 else box_h)
        if y1 == y2:  # same layer: arc below
            sy = ty = y1 + box_h
        red = bool(e.get("in_cycle"))
        stroke = WARN if red else "#999"
        w = 1 + 2.5 * math.sqrt((e.get("weight") or 1) / top_w)
        bend = 40 if y1 == y2 else 0
        mid_x, mid_y = (sx + tx) / 2, (sy + ty) / 2 + bend
        tip = (f"{e['src']} → {e['dst']}: {e.get('imports', 0)} imports, "
               f"{e.get('calls', 0)} calls")  # fmt: skip
        out.append(
            f'<path d="M{sx:.1f},{sy:.1f} Q{mid_x:.1f},{mid_y:.1f} {tx:.1f},{ty:.1f}" '
            f'fill="none" stroke="{stroke}" stroke-width="{w:.1f}" opacity="0.8" '
            f'marker-end="url(#{"cf-arrow-red" if red else "cf-arrow"})">'
            f"<title>{html.escape(tip)}</title></path>"
        )
    for p in shown:
        n = p["package"]
        x, y = pos[n]
        red = n in cyc
        fill = "#fbe3e3" if red else "#e8eef6"
        stroke = WARN if red else ACCENT
        tip = f"{n}: {p.get('files', 0)} files, {p.get('lines', 0)} lines"
        out.append(
            f'<g><rect x="{x:.1f}" y="{y:.1f}" width="{width_of[n]:.1f}" height="{box_h}" '
            f'rx="4" fill="{fill}" stroke="{stroke}" stroke-width="{2 if red else 1}"/>'
            f'<text x="{x + width_of[n] / 2:.1f}" y="{y + 17:.1f}" text-anchor="middle">'
            f"{html.escape(n)}</text><title>{html.escape(tip)}</title></g>"
        )
    out.append("</svg>")
    return "".join(out)


def _layers(names: list[str], edges: list[dict]) -> dict[str, int]:
    """Layer of each package: importers above what they import (longest path down to a
    package that imports nothing shown), packages of one cycle on one layer."""
    comp = _components(names, edges)
    down: dict[int, set[int]] = {}
    for e in edges:
        a, b = comp[e["src"]], comp[e["dst"]]
        if a != b:
            down.setdefault(a, set()).add(b)
    depth: dict[int, int] = {}

    def height(c: int, seen: frozenset = frozenset()) -> int:
        if c in depth:
            return depth[c]
        if c in seen:
            return 0
        h = 1 + max((height(d, seen | {c}) for d in down.get(c, ())), default=-1)
        depth[c] = h
        return h

    heights = {c: height(c) for c in set(comp.values())}
    top = max(heights.values(), default=0)
    return {n: top - heights[comp[n]] for n in names}


def _components(names: list[str], edges: list[dict]) -> dict[str, int]:
    """Strongly connected components of a small graph (Kosaraju), as a number per name."""
    out: dict[str, list[str]] = {n: [] for n in names}
    back: dict[str, list[str]] = {n: [] for n in names}
    for e in edges:
        out[e["src"]].append(e["dst"])
        back[e["dst"]].append(e["src"])
    order, seen = [], set()
    for n in names:
        if n in seen:
            continue
        stack = [(n, iter(out[n]))]
        seen.add(n)
        while stack:
            node, it = stack[-1]
            nxt = next((m for m in it if m not in seen), None)
            if nxt is None:
                stack.pop()
                order.append(node)
            else:
                seen.add(nxt)
                stack.append((nxt, iter(out[nxt])))
    comp: dict[str, int] = {}
    for n in reversed(order):
        if n in comp:
            continue
        todo, c = [n], len(set(comp.values()))
        comp[n] = c
        while todo:
            for m in back[todo.pop()]:
                if m not in comp:
                    comp[m] = c
                    todo.append(m)
    return comp


def _order(names: list[str], edges: list[dict], layer: dict[str, int]) -> dict[str, float]:
    """Position within a layer: a few rounds of the barycentre heuristic."""
    order = {n: float(i) for i, n in enumerate(sorted(names))}
    nbrs: dict[str, list[str]] = {n: [] for n in names}
    for e in edges:
        nbrs[e["src"]].append(e["dst"])
        nbrs[e["dst"]].append(e["src"])
    for _ in range(4):
        new = {}
        for n in names:
            others = [order[m] for m in nbrs[n] if layer[m] != layer[n]]
            new[n] = sum(others) / len(others) if others else order[n]
        ranked: dict[int, list[str]] = {}
        for n in names:
            ranked.setdefault(layer[n], []).append(n)
        for row in ranked.values():
            row.sort(key=lambda n: (new[n], n))
            for i, n in enumerate(row):
                order[n] = float(i)
    return order

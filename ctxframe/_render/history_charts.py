"""Static charts (matplotlib, drawn off screen with Agg): a PNG inline in notebooks, in
exported HTML and in reports, with no JavaScript and no network. They take plain lists
and frames and know no Graph: the history's scatter, coupling matrix and timeline.

matplotlib is imported only when a chart is drawn, so `import ctxframe` stays light.
"""

from __future__ import annotations

import base64
import io
import math
import os
from dataclasses import dataclass
from typing import Any

import polars as pl

DPI = 100  # a 7x4.5 in chart is ~40 KB of PNG: notebook outputs stay small


@dataclass
class Chart:
    """A drawn chart: `figure` (a matplotlib Figure), `png()`, `save(path)` (.png, .svg or
    .pdf by the name), shown inline in Jupyter as a PNG."""

    title: str
    figure: Any

    def png(self) -> bytes:
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
        return buf.getvalue()

    def save(self, path: str) -> str:
        fmt = os.path.splitext(path)[1].lstrip(".").lower() or "png"
        self.figure.savefig(path, format=fmt, dpi=DPI, bbox_inches="tight")
        return path

    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png()).decode("ascii")

    def _repr_png_(self) -> bytes:
        return self.png()

    def __repr__(self) -> str:
        return f"<ctxframe.Chart {self.title!r}>"


def _figure(width: float = 7.0, height: float = 4.5):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained", dpi=DPI)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _short(path: str, keep: int = 2) -> str:
    parts = path.split("/")
    return "/".join(parts[-keep:]) if len(parts) > keep else path


def scatter(frame: pl.DataFrame, *, x: str, y: str, score: str, label: str, title: str,
            xlabel: str, ylabel: str, annotate: int = 8) -> Chart:  # fmt: skip
    """One point per row (`x` against `y`), coloured and sized by `score`; the best
    `annotate` rows named. Log axes when the values span more than two decades."""
    fig, ax = _figure()
    if frame.is_empty():
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title)
        return Chart(title, fig)
    xs, ys = frame[x].cast(pl.Float64).to_list(), frame[y].cast(pl.Float64).to_list()
    sc = frame[score].cast(pl.Float64).fill_null(0).to_list()
    top = max(sc) or 1.0  # the colours span the scores there are
    points = ax.scatter(
        xs, ys, c=sc, s=[12 + 140 * v / top for v in sc], cmap="YlOrRd", vmin=0, vmax=top,
        edgecolors="#444444", linewidths=0.4, alpha=0.85,
    )  # fmt: skip
    for axis, values in (("x", xs), ("y", ys)):
        pos = [v for v in values if v > 0]
        if pos and max(pos) / min(pos) > 100:
            getattr(ax, f"set_{axis}scale")("log")
    best = frame.with_row_index("_i").sort(score, descending=True).head(annotate)["_i"]
    _labels(ax, [(xs[i], ys[i], _short(str(frame[label][i]))) for i in best.to_list()])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.25)
    fig.colorbar(points, ax=ax, label=score, shrink=0.8)
    return Chart(title, fig)


def _labels(ax, points: list[tuple[float, float, str]]) -> None:
    """Name points without two names overlapping: each takes the first of a few places
    around its point (in display pixels) that no earlier name covers."""
    ax.autoscale_view()
    ax.figure.canvas.draw()  # the axes' final limits, scales and place
    placed: list[tuple[float, float, float, float]] = []
    tries = [(4, 3), (4, -11), (-4, 3), (-4, -11), (4, 13), (4, -21), (-4, 13), (-4, -21)]
    pt = ax.figure.dpi / 72  # pixels per point
    for x, y, text in points:
        px, py = ax.transData.transform((x, y))
        w, h = 4.8 * pt * len(text), 8.5 * pt
        for dx, dy in tries:
            left = px + dx * pt if dx > 0 else px + dx * pt - w
            box = (left, py + dy * pt, left + w, py + dy * pt + h)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3]
                       for b in placed):  # fmt: skip
                break
        placed.append(box)
        ax.annotate(text, (x, y), fontsize=7, xytext=(dx, dy), textcoords="offset points",
                    ha="left" if dx > 0 else "right")  # fmt: skip


def matrix(pairs: pl.DataFrame, *, a: str, b: str, value: str, title: str,
           limit: int = 20) -> Chart:  # fmt: skip
    """A symmetric matrix of the entities in the strongest pairs (at most `limit` of them),
    each cell coloured by `value` (0-100)."""
    n_ent = max(2, limit)
    names: list[str] = []
    for row in pairs.iter_rows(named=True):  # strongest first: bounded by `limit` names
        new = [n for n in dict.fromkeys((row[a], row[b])) if n not in names]
        if len(names) + len(new) <= n_ent:  # a pair is shown whole or not at all
            names.extend(new)
        if len(names) >= n_ent:
            break
    size = max(4.0, 0.32 * len(names) + 2.5)
    fig, ax = _figure(size + 1.2, size)
    if not names:
        ax.text(0.5, 0.5, "no coupled pairs", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title)
        return Chart(title, fig)
    at = {n: i for i, n in enumerate(names)}
    grid = [[math.nan] * len(names) for _ in names]
    for row in pairs.filter(pl.col(a).is_in(names) & pl.col(b).is_in(names)).iter_rows(
        named=True
    ):
        i, j = at[row[a]], at[row[b]]
        grid[i][j] = grid[j][i] = float(row[value])
    image = ax.imshow(grid, cmap="Blues", vmin=0, vmax=100)
    labels = [_short(n) for n in names]
    ax.set_xticks(range(len(names)), labels, rotation=70, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), labels, fontsize=7)
    for i in range(len(names)):
        for j in range(len(names)):
            if not math.isnan(grid[i][j]):
                ax.text(j, i, f"{grid[i][j]:.0f}", ha="center", va="center", fontsize=6,
                        color="white" if grid[i][j] > 60 else "#222222")  # fmt: skip
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label=value, shrink=0.7)
    return Chart(title, fig)


def timeline(frame: pl.DataFrame, *, group: str, period: str, value: str, title: str,
             top: int = 8) -> Chart:  # fmt: skip
    """Stacked areas of `value` per `period`, one band per `group` (the `top` largest; the
    rest as `other`)."""
    fig, ax = _figure(8.0, 4.2)
    if frame.is_empty():
        ax.text(0.5, 0.5, "no changes", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title)
        return Chart(title, fig)
    totals = frame.group_by(group).agg(pl.col(value).sum()).sort([value, group],
                                                                  descending=[True, False])
    keep = totals[group].head(top).to_list()
    named = frame.with_columns(
        pl.when(pl.col(group).is_in(keep)).then(pl.col(group)).otherwise(pl.lit("other"))
    )
    wide = (
        named.group_by(period, group).agg(pl.col(value).sum())
        .pivot(on=group, index=period, values=value).sort(period).fill_null(0)
    )  # fmt: skip
    order = [g for g in [*keep, "other"] if g in wide.columns]
    xs = wide[period].to_list()
    from matplotlib import colormaps

    tab = colormaps["tab10"]
    colours = [tab(i % 10) for i in range(len(order) - 1)] + ["#c8c8c8"]
    if order[-1] != "other":
        colours[-1] = tab((len(order) - 1) % 10)
    ax.stackplot(xs, *[wide[g].to_list() for g in order], labels=[_short(g) for g in order],
                 colors=colours, alpha=0.9)  # fmt: skip
    ax.set_ylabel(value)
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=7, frameon=False, ncol=2)
    ax.grid(alpha=0.25)
    return Chart(title, fig)

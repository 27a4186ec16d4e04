"""HTML pieces every notebook repr shares: kind badges, `path:L10-L40`, confidence, tables."""

from __future__ import annotations

import html
from typing import Any

import polars as pl

from ctxframe._render.palette import kind_colour, text_colour
from ctxframe._render.text import location, name_of

STYLE = (
    "<style>.ctxframe table{border-collapse:collapse;font-size:13px;margin:2px 0 8px 0}"
    ".ctxframe td,.ctxframe th{padding:1px 8px 1px 0;text-align:left;vertical-align:top}"
    "</style>"
)


def esc(x: Any) -> str:
    """Escaped text of any value; empty for None."""
    return html.escape("" if x is None else str(x))


def box(inner: str) -> str:
    """One result's HTML: a div with the few table rules every repr shares."""
    return f"<div class='ctxframe'>{STYLE}{inner}</div>"


def badge(kind: str | None) -> str:
    """A small coloured label for a node kind (same palette as the pictures)."""
    return (
        f"<span style='background:{kind_colour(kind)};color:{text_colour(kind)};"
        "border-radius:3px;padding:0 5px;font-size:85%;white-space:nowrap'>"
        f"{html.escape(str(kind or '?'))}</span>"
    )


def where_html(row: dict) -> str:
    """`path:L10-L40` in code style; in italics for nodes outside the repo."""
    if not row.get("path"):
        return f"<i>{html.escape(location(row))}</i>"
    return f"<code>{html.escape(location(row))}</code>"


def conf_html(conf: str | None) -> str:
    """The confidence of an edge when it is not EXTRACTED, in a muted colour."""
    if conf == "EXTRACTED":
        return ""
    colour = "#d98c00" if conf == "AMBIGUOUS" else "#777"
    text = html.escape((conf or "unresolved").lower())
    return f" <span style='color:{colour};font-size:85%'>({text})</span>"


def table(head: list[str], rows: list[list[str]], limit: int = 50) -> str:
    """An HTML table from already-escaped cells; `… N more` when cut."""
    if not rows:
        return "<p><i>none</i></p>"
    th = "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" if head else ""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows[:limit])
    more = f"<p>… {len(rows) - limit} more</p>" if len(rows) > limit else ""
    return f"<table>{th}{body}</table>{more}"


def frame_html(df: pl.DataFrame, cols: list[str], limit: int = 50) -> str:
    """Some columns of a frame as a plain HTML table; `… N more` past `limit` rows."""
    if df.is_empty():
        return "<p><i>none</i></p>"
    rows = [[esc(r.get(c, "")) for c in cols] for r in df.head(limit).iter_rows(named=True)]
    more = f"<p>… {df.height - limit} more</p>" if df.height > limit else ""
    return table([html.escape(c) for c in cols], rows, limit=limit) + more


def node_title(n: dict) -> str:
    """Name, kind badge and place of a node, for a result's heading."""
    return f"<b>{esc(name_of(n))}</b> {badge(n.get('kind'))} {where_html(n)}"

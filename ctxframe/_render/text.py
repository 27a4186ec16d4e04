"""How a node is written in text and HTML alike: its name, its place, a one-line excerpt."""

from __future__ import annotations

from typing import Any

OUTSIDE = "(outside the repo)"
ARROWS = {"in": "←", "out": "→"}


def location(row: dict[str, Any]) -> str:
    """`path:L10-L40` (`path:L7` for one line, `path` without lines); `(outside the repo)` for a
    node with no path, such as an import stub."""
    path = row.get("path")
    if not path:
        return OUTSIDE
    start, end = row.get("line_start"), row.get("line_end")
    if start is None:
        return path
    if end is None or end == start:
        return f"{path}:L{start}"
    return f"{path}:L{start}-L{end}"


def name_of(row: dict[str, Any]) -> str:
    """The name a person reads: qualified name, else label, else id."""
    return row.get("qualname") or row.get("label") or row["id"]


def hit_name(row: dict[str, Any]) -> str:
    """The name a hit is listed by: a file's base name, else the qualified name
    (`SimpleTemplate.render`, not one of several `render`s)."""
    return row["label"] if row["kind"] == "file" else name_of(row)


def one_line(text: str | None, limit: int) -> str:
    """All of `text` on one line (white space folded), cut at `limit` characters with `…`."""
    if not text:
        return ""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def first_line(text: str | None, limit: int) -> str:
    """The first non-blank line of `text`, cut at `limit` characters with `…`."""
    if not text:
        return ""
    for line in text.strip().splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def arrow_text(arrow: dict[str, Any]) -> str:
    """`← calls checkout` for a 1-hop arrow, with its confidence when it is not EXTRACTED."""
    text = f"{ARROWS.get(arrow['direction'], '-')} {arrow['edge_kind']} {arrow['other_label']}"
    conf = arrow.get("confidence")
    if arrow.get("other_id") is None:
        text += " (unresolved)"
    elif conf and conf != "EXTRACTED":
        text += f" ({conf.lower()})"
    return text


def _shown_via(via: str | None) -> str | None:
    """What a card line says of an edge's `via`: a decorator, a library, a property; not the
    fixture and coverage marks its kind already says."""
    return None if via in (None, "fixture", "coverage") else via


def card_section(title: str, rows: list[dict[str, Any]], arrow: str) -> list[list[str]]:
    """A card section's blocks: its title with the number of lines, then one line per linked
    node (`← calls checkout`): the same caller reached through several call names is one
    line, `×2` for the times it repeats; two nodes of one name say their files."""
    counts: dict[tuple, int] = {}
    for r in rows:
        key = (r["edge_kind"], r["other_id"] or r["other_label"], r["other_label"], r["confidence"],
               _shown_via(r.get("via")))  # fmt: skip
        counts[key] = counts.get(key, 0) + 1
    ids_of: dict[str, set] = {}
    for _kind, other, label, _conf, _via in counts:
        ids_of.setdefault(label, set()).add(other)
    lines = []
    for (kind, other, label, conf, via), n in counts.items():
        tag = "" if conf == "EXTRACTED" else f" ({(conf or 'unresolved').lower()})"
        tag += f" via {via}" if via else ""
        where = f"  {other.split('::')[0]}" if len(ids_of[label]) > 1 and "::" in other else ""
        lines.append([f"    {arrow} {kind} {label}{tag}{where}" + (f"  ×{n}" if n > 1 else "")])
    return [[f"  {title} ({len(counts)}):"], *lines]

"""How a node is written in text and HTML alike: its name, its place, a one-line excerpt."""

from __future__ import annotations

import builtins
import re
from typing import Any

OUTSIDE = "(outside the repo)"
ARROWS = {"in": "←", "out": "→"}

# What a language gives every file without an import: a call to one of these is a builtin,
# not a name the index failed to resolve (by language name; families share a list).
_JS_BUILTINS = frozenset(
    "Array ArrayBuffer BigInt Boolean DataView Date Error EvalError Function Int8Array "
    "Int16Array Int32Array Map Number Object Promise Proxy RangeError ReferenceError RegExp Set "
    "String Symbol SyntaxError TypeError URIError Uint8Array Uint16Array Uint32Array URL "
    "URLSearchParams WeakMap WeakSet clearInterval clearTimeout decodeURI decodeURIComponent "
    "encodeURI encodeURIComponent isFinite isNaN parseFloat parseInt queueMicrotask require "
    "setInterval setTimeout structuredClone".split()
)
BUILTINS: dict[str, frozenset[str]] = {
    "python": frozenset(n for n in dir(builtins) if not n.startswith("_")) | {"__import__"},
    "go": frozenset(
        "append cap clear close complex copy delete imag len make max min new panic print "
        "println real recover".split()
    ),
    "javascript": _JS_BUILTINS,
    "typescript": _JS_BUILTINS,
    "tsx": _JS_BUILTINS,
    "rust": frozenset("Some None Ok Err Box Vec String".split()),
}
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_INNER = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}")


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


def doc_summary(doc: str | None, limit: int = 200) -> str:
    """A docstring's first paragraph on one line (a sentence may run over several physical
    lines), cut at `limit` characters with `…`."""
    if not doc:
        return ""
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    return one_line(para, limit)


def callee_label(label: str | None, limit: int = 60) -> str:
    """A callee as a person reads it: a name as written (`self.save`), or an expression whose
    arguments are folded (`self.ensure_sync(…)` for `self.ensure_sync(self.view_functions[…])`)."""
    if not label or _DOTTED.fullmatch(label):
        return label or ""
    text = " ".join(label.split())
    marks = {"(": "\x01", "[": "\x02", "{": "\x03"}
    while True:  # innermost brackets first, until none is left: `f(g[x])` -> `f(…)`
        folded = _INNER.sub(lambda m: marks[m.group(0)[0]], text)
        if folded == text:
            break
        text = folded
    for bracket, mark in marks.items():
        text = text.replace(mark, bracket + "…" + {"(": ")", "[": "]", "{": "}"}[bracket])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_builtin(name: str | None, language: str | None) -> bool:
    """Whether `name` is one of the language's builtins (`ValueError`, `len`, `parseInt`)."""
    return bool(name) and name in BUILTINS.get(language or "", ())


def unresolved_tag(label: str | None, language: str | None) -> str:
    """What an arrow to no node says: `builtin` for the language's own names, else
    `unresolved` (a library, a dynamic call, an over-ambiguous name)."""
    return "builtin" if is_builtin(label, language) else "unresolved"


def arrow_text(arrow: dict[str, Any], language: str | None = None) -> str:
    """`← calls checkout` for a 1-hop arrow, with its confidence when it is not EXTRACTED; an
    arrow to no node says `(builtin)` for a builtin of `language`, else `(unresolved)`."""
    label = arrow["other_label"]
    if arrow.get("other_id") is None:
        label = callee_label(label)
    text = f"{ARROWS.get(arrow['direction'], '-')} {arrow['edge_kind']} {label}"
    conf = arrow.get("confidence")
    if arrow.get("other_id") is None:
        text += f" ({unresolved_tag(arrow['other_label'], language)})"
    elif conf and conf != "EXTRACTED":
        text += f" ({conf.lower()})"
    return text


def _shown_via(via: str | None) -> str | None:
    """What a card line says of an edge's `via`: a decorator, a library, a property; not the
    fixture and coverage marks its kind already says."""
    return None if via in (None, "fixture", "coverage") else via


def card_section(
    title: str, rows: list[dict[str, Any]], arrow: str, language: str | None = None
) -> list[list[str]]:
    """A card section's blocks: its title with the number of lines, then one line per linked
    node (`← calls checkout`): the same caller reached through several call names is one
    line, `×2` for the times it repeats; two nodes of one name say their files. An arrow to
    no node is `(builtin)` for a builtin of the card's `language`, else `(unresolved)`."""
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
        where = f"  {other.split('::')[0]}" if len(ids_of[label]) > 1 and "::" in other else ""
        if conf is None:
            tag = f" ({unresolved_tag(label, language)})"
            label = callee_label(label)
        else:
            tag = "" if conf == "EXTRACTED" else f" ({conf.lower()})"
        tag += f" via {via}" if via else ""
        lines.append([f"    {arrow} {kind} {label}{tag}{where}" + (f"  ×{n}" if n > 1 else "")])
    return [[f"  {title} ({len(counts)}):"], *lines]

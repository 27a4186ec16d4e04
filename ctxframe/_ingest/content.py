"""A definition's own text: the lines of its span that no nested definition owns.

The ranker reads what a definition *says* as well as its name (docs/schema.md, tokens): the
identifiers, comments and string literals of its body. Each line of a file belongs to exactly
one node — the innermost definition whose line range holds it, else the file — so a method's
body belongs to the method, a class keeps its header lines, docstring and class-level
statements, and a file node keeps its module docstring, imports and top-level statements. A
definition's first line is left out (it is the ``signature`` field; a section's first line is
its heading, the ``name`` field).

Runs in the extraction workers where the file's bytes are already in memory (no Polars here);
the indexer tokenizes the text (ctxframe._rank.fields).
"""

from __future__ import annotations

CONTENT_COLUMNS = ("node_id", "text")
MAX_CHARS = 200_000  # a node's own text beyond this (generated tables) adds nothing to ranking

# Positions in an extraction definition row (ctxframe._ingest.extract.DEF_COLUMNS).
_ID, _KIND, _START, _END = 0, 1, 6, 7
_SHARED = frozenset({"script"})  # a `__main__` block's lines stay its file's text


def own_text(defs: list[tuple], path: str, data: bytes) -> list[tuple[str, str]]:
    """``(node_id, text)`` for the file (id ``path``) and each definition with own lines.

    ``defs`` are the file's definition rows (id, …, line_start, line_end, …) as extraction
    makes them; lines are 1-based and inclusive. A definition reaching past its enclosing one
    is cut at the enclosing end."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    n = len(lines)
    if not defs:
        return [(path, text[:MAX_CHARS])] if text.strip() else []
    spans = sorted(
        ((d[_START], -d[_END], d[_ID]) for d in defs if d[_START] and d[_KIND] not in _SHARED),
        key=lambda s: s[:2],
    )
    parts: dict[str, list[str]] = {}
    stack: list[tuple[str, int]] = [(path, n)]  # (owner, last line)
    pos = 1  # the next line to hand out

    def give(owner: str, lo: int, hi: int) -> None:
        if hi >= lo:
            parts.setdefault(owner, []).append("\n".join(lines[lo - 1 : hi]))

    for start, neg_end, node_id in spans:
        end = -neg_end
        while len(stack) > 1 and stack[-1][1] < start:
            owner, last = stack.pop()
            give(owner, pos, last)
            pos = max(pos, last + 1)
        owner, last = stack[-1]
        give(owner, pos, start - 1)
        end = min(end, last)
        stack.append((node_id, end))
        pos = max(pos, start + 1)  # the first line is the signature / heading
    while stack:
        owner, last = stack.pop()
        give(owner, pos, last)
        pos = max(pos, last + 1)
    out = []
    for owner, chunks in parts.items():
        body = "\n".join(chunks)
        if body.strip():
            out.append((owner, body[:MAX_CHARS]))
    return out

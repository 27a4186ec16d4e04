"""SQL: `CREATE PROCEDURE` statements, which tree-sitter-sql does not parse."""

from __future__ import annotations

import re

_PROCEDURE = re.compile(
    rb"^[ \t]*create[ \t]+(?:or[ \t]+replace[ \t]+)?procedure[ \t]+([\w.\"`\[\]]+)",
    re.IGNORECASE | re.MULTILINE,
)


class _Span:
    """A stand-in for a tree-sitter node over a byte range (definitions the grammar misses)."""

    def __init__(self, data: bytes, start: int, end: int):
        self.start_byte, self.end_byte = start, end
        self.start_point = (data.count(b"\n", 0, start), 0)
        self.end_point = (data.count(b"\n", 0, max(start, end - 1)), 0)
        self.parent = self.prev_named_sibling = None
        self.type = "span"

    def child_by_field_name(self, _name):
        return None


def procedures(data: bytes, defs: list) -> list:
    """`CREATE PROCEDURE name …` statements, which tree-sitter-sql does not parse."""
    del defs
    out = []
    for m in _PROCEDURE.finditer(data):
        start, after = m.start(), m.end()
        dollar = data.find(b"$$", after)
        semi = data.find(b";", after)
        if dollar != -1 and (semi == -1 or dollar < semi):
            close = data.find(b"$$", dollar + 2)
            semi = data.find(b";", close if close != -1 else dollar + 2)
        end = len(data) if semi == -1 else semi + 1
        span, name = _Span(data, start, end), _Span(data, m.start(1), m.end(1))
        out.append(("procedure", span, {"definition.procedure": [span], "name": [name]}))
    return out

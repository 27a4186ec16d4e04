"""One bad file never stops an index: what an error while reading one file becomes (its
`skip_reason`), and the nesting limit for data files (JSON, YAML, TOML) checked before parsing."""

from __future__ import annotations

import re

MAX_DEPTH = 100  # brackets nested deeper than this: no manifest or spec is shaped so
_BRACKETS = re.compile(r"[^\[\]{}]+")


class TooNested(ValueError):
    """A data file nested deeper than MAX_DEPTH."""


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """Raise TooNested when `[`/`{` nest deeper than `limit` (brackets inside strings count
    too: a rough bound that costs one regex pass)."""
    if text.count("[") + text.count("{") <= limit:
        return
    depth = 0
    for ch in _BRACKETS.sub("", text):
        if ch in "[{":
            depth += 1
            if depth > limit:
                raise TooNested(f"nested deeper than {limit} levels")
        elif depth:
            depth -= 1


def skip_reason(exc: BaseException) -> str:
    """The one-line `skip_reason` of a file whose reading raised `exc`."""
    if isinstance(exc, RecursionError | TooNested):
        return f"nested too deeply (> {MAX_DEPTH} levels)"
    if isinstance(exc, MemoryError):
        return "too large to read"
    text = str(exc).strip().splitlines()
    detail = f": {text[0][:160]}" if text else ""
    return f"read error ({type(exc).__name__}{detail})"

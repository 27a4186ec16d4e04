"""Boundaries on the explorer and the page: shown when the graph has them, a placeholder when
it does not (an older store, or a graph object without the verb)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

NOT_INDEXED = "boundaries: not indexed yet"


@dataclass
class NotIndexed:
    """Placeholder for a view the graph cannot give yet."""

    message: str = NOT_INDEXED

    def to_dict(self) -> dict[str, Any]:
        return {"verb": "boundaries", "status": "not-indexed", "message": self.message}

    def __str__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        return f"<p><i>{html.escape(self.message)}</i></p>"


def boundaries_of(g: Any) -> Any:
    """`g.boundaries()` when the graph has it and it works, else a `NotIndexed` placeholder."""
    fn = getattr(g, "boundaries", None)
    if not callable(fn):
        return NotIndexed()
    try:
        res = fn()
    except Exception:  # a half-built index or an older store: degrade, never break the page
        return NotIndexed()
    return res if res is not None else NotIndexed()

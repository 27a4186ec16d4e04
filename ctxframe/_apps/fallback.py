"""Boundaries on the explorer and the page: shown when the graph has them, a placeholder when
it does not (an older store, or a graph object without the verb)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxframe._render.html import render

NOT_INDEXED = "boundaries: not indexed yet"


@dataclass
class NotIndexed:
    """Placeholder for a view the graph cannot give yet (status `not-indexed`)."""

    message: str = NOT_INDEXED
    verb: str = "boundaries"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verb": self.verb,
            "status": "not-indexed",
            "error": {"code": "not-indexed", "message": self.message, "candidates": []},
        }

    def __str__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        return render("message", message=self.message)


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

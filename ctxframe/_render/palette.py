"""The one palette: node colour by kind, edge style by confidence (pictures, badges, the page)."""

from __future__ import annotations

from typing import Any

# Tableau-10 derived; readable with white text except the light ones (see _TEXT_DARK).
KIND_COLOURS: dict[str, str] = {
    "file": "#79706e",
    "module": "#bab0ac",
    "class": "#4e79a7",
    "struct": "#4e79a7",
    "interface": "#76b7b2",
    "enum": "#edc948",
    "type": "#b07aa1",
    "function": "#f28e2b",
    "method": "#e15759",
    "section": "#9c755f",
    "document": "#9c755f",
    "route": "#59a14f",
    "env": "#59a14f",
}
DEFAULT_COLOUR = "#8c8c8c"
_TEXT_DARK = {"module", "enum", "interface"}

# Edge style by confidence. AMBIGUOUS is dashed so a guess never looks like a fact.
CONFIDENCE_STYLES: dict[str, dict[str, Any]] = {
    "EXTRACTED": {"color": "#444444", "width": 2, "dashes": False},
    "INFERRED": {"color": "#8a8a8a", "width": 1.5, "dashes": False},
    "AMBIGUOUS": {"color": "#d98c00", "width": 1.5, "dashes": [6, 5]},
}
def kind_colour(kind: str | None) -> str:
    return KIND_COLOURS.get(kind or "", DEFAULT_COLOUR)


def text_colour(kind: str | None) -> str:
    return "#222222" if (kind or "") in _TEXT_DARK else "#ffffff"


def style() -> dict[str, Any]:
    """The palette as JSON, for the served page (one source of truth with the pictures)."""
    return {
        "kinds": KIND_COLOURS,
        "default": DEFAULT_COLOUR,
        "dark_text": sorted(_TEXT_DARK),
        "confidence": CONFIDENCE_STYLES,
    }

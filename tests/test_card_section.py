"""A card section's lines: one per linked node, repeats counted, same-named nodes told apart
by their files (ctxframe._render.text.card_section, used by `card` and the cold card)."""

from __future__ import annotations

import pytest

from ctxframe._render.text import card_section


def _row(other_id, label, conf="EXTRACTED", kind="calls") -> dict:
    return {"edge_kind": kind, "other_id": other_id, "other_label": label, "confidence": conf}


CASES = [
    ("one caller", [_row("a.py::f", "f")], ["  callers (1):", "    ← calls f"]),
    (
        "the same caller through two call names",
        [_row("t.py::test_get", "test_get"), _row("t.py::test_get", "test_get")],
        ["  callers (1):", "    ← calls test_get  ×2"],
    ),
    (
        "two nodes of one name",
        [_row("b/fmt.py::fmt", "fmt"), _row("p/fmt.py::fmt", "fmt")],
        ["  callers (2):", "    ← calls fmt  b/fmt.py", "    ← calls fmt  p/fmt.py"],
    ),
    (
        "unresolved and inferred",
        [_row(None, "join", None), _row("u.py::URL.join", "URL.join", "INFERRED")],
        ["  callers (2):", "    ← calls join (unresolved)", "    ← calls URL.join (inferred)"],
    ),
]


@pytest.mark.parametrize(("name", "rows", "want"), CASES, ids=[c[0] for c in CASES])
def test_card_section(name: str, rows: list[dict], want: list[str]) -> None:
    assert [line for block in card_section("callers", rows, "←") for line in block] == want

"""Output budget shared by every verb: whole blocks of lines in, text that fits out.

The size of a text is estimated as ``ceil(len(text) / 4)`` tokens, counting every printed
character including newlines. Blocks (one per hit, say) are kept whole and in order; when one
is cut, a marker line says how many more there were and why, and the marker is counted too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CHARS_PER_TOKEN = 4
DEFAULT_BUDGET_TOKENS = 2000
ELLIPSIS = "…"


def estimate_tokens(text: str) -> int:
    """Token estimate of a text: characters / 4, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Fitted:
    """The rendered text and how many blocks made it in."""

    text: str
    shown: int
    total: int

    @property
    def truncated(self) -> bool:
        """True when some blocks (or items beyond the blocks given) were left out."""
        return self.shown < self.total


def truncation_marker(
    remaining: int, noun: str, *, budget_tokens: int | None = None, limit: int | None = None
) -> str:
    """The line that says output was cut: ``… truncated: 7 more hits (budget 2000 tokens)``."""
    why = f"budget {budget_tokens} tokens" if budget_tokens is not None else f"limit {limit}"
    return f"{ELLIPSIS} truncated: {remaining} more {noun} ({why})"


def _clip(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[: max(0, max_chars - 1)] + ELLIPSIS if max_chars > 0 else ""


def fit_blocks(
    blocks: Sequence[Sequence[str]],
    *,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    max_blocks: int | None = None,
    total: int | None = None,
    noun: str = "hits",
    header: Sequence[str] = (),
) -> Fitted:
    """Join ``header`` and as many leading whole ``blocks`` as fit in ``budget_tokens``.

    At most ``max_blocks`` blocks are shown; ``total`` (default ``len(blocks)``) is the number
    of items that exist, so a caller that already cut to a limit can still report the rest.
    The returned text never exceeds the budget, marker line included.
    """
    total = len(blocks) if total is None else max(total, len(blocks))
    max_chars = max(0, budget_tokens) * CHARS_PER_TOKEN
    cap = len(blocks) if max_blocks is None else min(max(0, max_blocks), len(blocks))

    lines: list[str] = list(header)
    used = sum(len(line) for line in lines) + max(0, len(lines) - 1)

    def with_lines(size: int, extra: Sequence[str]) -> int:
        n_before = len(lines)
        add = sum(len(x) for x in extra) + len(extra)
        return size + add - (1 if n_before == 0 and extra else 0)

    shown = 0
    by_budget = False
    for block in blocks[:cap]:
        block = list(block)
        after = with_lines(used, block)
        remaining = total - shown - 1
        need = after
        if remaining > 0:
            marker = truncation_marker(remaining, noun, budget_tokens=budget_tokens)
            need = after + len(marker) + 1
        if need > max_chars:
            by_budget = True
            break
        lines.extend(block)
        used = after
        shown += 1

    if shown < total:
        remaining = total - shown
        if by_budget:
            marker = truncation_marker(remaining, noun, budget_tokens=budget_tokens)
        else:
            marker = truncation_marker(remaining, noun, limit=cap)
        room = max_chars - used - (1 if lines else 0)
        if room > 0:
            lines.append(_clip(marker, room))
    text = _clip("\n".join(lines), max_chars)
    return Fitted(text=text, shown=shown, total=total)

"""How a budget counts text: characters / 4 by default (every printed character, newlines
included), or a real tokenizer when one is installed and asked for (``tiktoken``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ctxframe._core.errors import CtxframeError
from ctxframe._render.budget import CHARS_PER_TOKEN

TOKENIZERS = ("chars", "tiktoken")
TIKTOKEN_ENCODING = "cl100k_base"


@dataclass(frozen=True)
class TokenCounter:
    """A named way to count a text's tokens. ``chars_per_token`` is set for the character
    estimate, whose count is exact arithmetic on lengths (so packing can add lengths)."""

    name: str
    count: Callable[[str], int]
    chars_per_token: int | None = None

    def max_chars(self, budget_tokens: int) -> int | None:
        """The character budget when counting is by characters, else None."""
        if self.chars_per_token is None:
            return None
        return max(0, budget_tokens) * self.chars_per_token


def _chars(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


CHARS = TokenCounter(f"chars/{CHARS_PER_TOKEN}", _chars, CHARS_PER_TOKEN)


def _tiktoken() -> TokenCounter:
    try:
        import tiktoken
    except ImportError:
        raise CtxframeError(
            "tokenizer 'tiktoken' is not installed: `pip install tiktoken`, or leave out "
            "--tokenizer to count characters / 4"
        ) from None
    try:
        enc = tiktoken.get_encoding(TIKTOKEN_ENCODING)
    except Exception as exc:  # its encoding file is fetched on first use
        raise CtxframeError(
            f"tiktoken cannot load {TIKTOKEN_ENCODING} ({type(exc).__name__}): it downloads the "
            "encoding on first use; set TIKTOKEN_CACHE_DIR to a folder holding it, or leave out "
            "--tokenizer"
        ) from None
    return TokenCounter(
        f"tiktoken:{TIKTOKEN_ENCODING}", lambda s: len(enc.encode(s, disallowed_special=()))
    )


def token_counter(spec: str | Callable[[str], int] | TokenCounter | None = None) -> TokenCounter:
    """``None``/``"chars"``: characters / 4; ``"tiktoken"``: OpenAI's cl100k_base; a
    ``TokenCounter``; or any callable ``text -> tokens``."""
    if spec is None or spec == "chars":
        return CHARS
    if isinstance(spec, TokenCounter):
        return spec
    if spec == "tiktoken":
        return _tiktoken()
    if callable(spec):
        return TokenCounter(getattr(spec, "__name__", "custom"), spec)
    raise CtxframeError(f"unknown tokenizer {spec!r}: use one of {', '.join(TOKENIZERS)}")

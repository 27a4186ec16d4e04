"""Arguments as users give them: text made valid UTF-8 (a lone surrogate, or bytes that are not
UTF-8 on a command line, become U+FFFD), anything else refused with one line."""

from __future__ import annotations

from ctxframe._core.errors import BadInput


def clean_text(value: object, what: str = "text") -> str:
    """`value` as valid UTF-8 text; BadInput (one line, with the fix) when it is not text."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise BadInput(f"{what} must be text, not {type(value).__name__}: pass a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a command line's undecodable bytes, or lone surrogates
        try:
            raw = value.encode("utf-8", "surrogateescape")  # the bytes the shell passed
        except UnicodeEncodeError:
            raw = value.encode("utf-8", "surrogatepass")
        value = raw.decode("utf-8", "replace")
    return value.replace("\0", "\ufffd")


NAME_MAX = 1_000  # characters of a name looked up (an id, a qualified name, a label, a path)
QUESTION_MAX = 4_000  # characters of a question ranked (a pasted page is cut here)
ELLIPSIS = "…"


def cut(value: str, limit: int, what: str) -> str:
    """`value` cut to its first `limit` characters, ending in `…` when cut (so the echo of
    the name or question shows it), and said once on stderr: the work a lookup or a ranking
    does never grows past what `limit` characters cost."""
    if len(value) <= limit:
        return value
    import sys

    print(
        f"ctxframe: note: the {what} was cut to its first {limit:,} characters "
        f"(of {len(value):,})",
        file=sys.stderr,
    )
    return value[:limit] + ELLIPSIS


def clean_int(value: object, what: str, lo: int, hi: int) -> int:
    """`value` as an int within [lo, hi]; BadInput otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(value)  # type: ignore[call-overload]
        except (TypeError, ValueError, OverflowError):
            raise BadInput(f"{what} must be a whole number, not {value!r}") from None
    if not lo <= value <= hi:
        raise BadInput(f"{what} must be between {lo} and {hi}, not {value}")
    return value

"""Identifier tokenizer shared by nodes (vectorized, Polars) and queries (pure Python).

Rules, identical in both implementations:

* token characters are unicode letters, combining marks and numbers (``\\p{L}\\p{M}\\p{N}``);
  everything else (``_ - . / :`` spaces, punctuation) separates tokens, so snake_case,
  kebab-case, dotted names, paths and ``__dunder__`` all split;
* camel case: a boundary goes between a non-upper token character and an upper-case one
  (``processRefund``, ``v2Api``), and before the last capital of an acronym that is followed
  by a lower-case letter (``HTTPServer`` -> ``HTTP Server``, ``XMLHttpRequest`` ->
  ``XML Http Request``); "upper" means *changes when lowercased*, "lower" means ``Ll``;
* digits stick to the letters before them (``v2``, ``utf8``, ``sha256``, ``int32``) and a
  capital after a digit starts a new token (``Base64Encoder`` -> ``base64 encoder``); a lone
  digit is a single character and is dropped;
* tokens are lowercased (per token, full Unicode mapping) and tokens shorter than two
  characters are dropped.

Query-only stopwords (question grammar) are removed by :func:`tokenize_query`, never from nodes.
The Python path classifies characters with :mod:`unicodedata`; a query holding a code point that
Python's Unicode database does not know is tokenized by the Polars path so both always agree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

import polars as pl

# Character classes (Rust regex syntax, used by Polars).
_T = r"\p{L}\p{M}\p{N}"
_UPPER = rf"[{_T}&&\p{{Changes_When_Lowercased}}]"
_NOT_UPPER = rf"[{_T}&&\P{{Changes_When_Lowercased}}]"
_LOWER = r"\p{Ll}"
CAMEL_RE = rf"({_NOT_UPPER})({_UPPER})"
ACRONYM_RE = rf"({_UPPER})({_UPPER}{_LOWER})"
TOKEN_RE = rf"[{_T}]+"

# The same patterns over a one-letter-per-character class string (Python side):
# u = upper, U = upper and Ll, l = non-upper Ll, k = other non-upper token char, " " = separator.
_PY_CAMEL = re.compile(r"[lk][uU]")
_PY_ACRONYM = re.compile(r"[uU][uU][lU]")
_PY_TOKEN = re.compile(r"[^ ]+")

MIN_TOKEN_LEN = 2
# Small query-time frames: the in-memory engine avoids the streaming engine's start-up cost.
ENGINE = "in-memory"

QUERY_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "into",
        "about",
        "and",
        "or",
        "nor",
        "not",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "done",
        "doing",
        "has",
        "have",
        "had",
        "where",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "how",
        "when",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "there",
        "here",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "us",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
    ]
)


class _Unknown(Exception):
    """Raised when a character is unassigned in Python's Unicode database."""


@lru_cache(maxsize=65536)
def _char_class(ch: str) -> str:
    """Classify one character for the camel-case and token patterns."""
    cat = unicodedata.category(ch)
    if cat == "Cn":
        raise _Unknown(ch)
    if cat[0] not in "LMN":
        return " "
    upper = ch.lower() != ch
    if upper:
        return "U" if cat == "Ll" else "u"
    return "l" if cat == "Ll" else "k"


_ASCII_CLASS = {chr(i): _char_class(chr(i)) for i in range(128)}


def _classes(text: str) -> str:
    get = _ASCII_CLASS.get
    return "".join([get(ch) or _char_class(ch) for ch in text])


def _split_at(text: str, cls: str, pattern: re.Pattern[str]) -> tuple[str, str]:
    """Insert a space after the first character of every match (like ``$1 $2``)."""
    cuts = [m.start() + 1 for m in pattern.finditer(cls)]
    if not cuts:
        return text, cls
    parts_t, parts_c, prev = [], [], 0
    for cut in cuts:
        parts_t.append(text[prev:cut])
        parts_c.append(cls[prev:cut])
        prev = cut
    parts_t.append(text[prev:])
    parts_c.append(cls[prev:])
    return " ".join(parts_t), " ".join(parts_c)


def _tokenize_py(text: str) -> list[str]:
    cls = _classes(text)
    text, cls = _split_at(text, cls, _PY_CAMEL)
    text, cls = _split_at(text, cls, _PY_ACRONYM)
    out = []
    for m in _PY_TOKEN.finditer(cls):
        tok = text[m.start() : m.end()].lower()
        if len(tok) >= MIN_TOKEN_LEN:
            out.append(tok)
    return out


def tokenize(text: str | None) -> list[str]:
    """Split an identifier, path or query into lowercase word tokens (see module docstring)."""
    if not text:
        return []
    try:
        return _tokenize_py(text)
    except _Unknown:
        return tokenize_series(pl.Series([text], dtype=pl.String)).item().to_list()


def tokenize_query(text: str | None) -> list[str]:
    """Tokenize a query and drop question-grammar stopwords (kept if nothing else remains)."""
    toks = tokenize(text)
    kept = [t for t in toks if t not in QUERY_STOPWORDS]
    return kept or toks


def tokenize_expr(expr: pl.Expr | str) -> pl.Expr:
    """Vectorized :func:`tokenize`: a String expression -> List[String] of tokens."""
    if isinstance(expr, str):
        expr = pl.col(expr)
    return (
        expr.fill_null("")
        .str.replace_all(CAMEL_RE, "${1} ${2}")
        .str.replace_all(ACRONYM_RE, "${1} ${2}")
        .str.extract_all(TOKEN_RE)
        .list.eval(pl.element().str.to_lowercase())
        .list.eval(pl.element().filter(pl.element().str.len_chars() >= MIN_TOKEN_LEN))
    )


def tokenize_series(s: pl.Series) -> pl.Series:
    """Tokenize every string of a Series with the Polars implementation."""
    return pl.select(tokenize_expr(pl.lit(s, dtype=pl.String))).to_series().alias(s.name)


def search_text_expr() -> pl.Expr:
    """A node's label and file path: what its name tokens are made of (the ``qualname`` field
    adds the enclosing names, ctxframe._rank.fields)."""
    return pl.concat_str(
        [pl.col("label").fill_null(""), pl.col("path").fill_null("")], separator=" "
    )


def build_tokens(nodes: pl.DataFrame) -> pl.DataFrame:
    """The unique ``(node_id, token)`` string pairs of label + path tokens: a hand-made token
    table (``RankIndex(nodes, build_tokens(nodes))`` ranks on names only). The stored table,
    with every field and integer codes, is ctxframe._rank.fields.token_table's."""
    return (
        nodes.lazy()
        .select(node_id=pl.col("id"), token=tokenize_expr(search_text_expr()))
        .explode("token")
        .drop_nulls()
        .unique()
        .sort("node_id", "token")
        .collect(engine=ENGINE)
        .cast({"node_id": pl.String, "token": pl.String})
    )


def token_frequencies(tokens: pl.DataFrame, n_nodes: int | None = None) -> pl.DataFrame:
    """Vocabulary with ``df`` (nodes containing the token) and ``idf = 0.1 + ln(N / (1 + df))``."""
    if n_nodes is None:
        n_nodes = tokens["node_id"].n_unique()
    return (
        tokens.unique()
        .group_by("token")
        .agg(df=pl.len().cast(pl.UInt32))
        .sort("token")
        .with_columns(idf=0.1 + (pl.lit(float(n_nodes)) / (1 + pl.col("df"))).log())
    )


def trigrams(token: str) -> set[str]:
    """Character trigram set of a token padded with two spaces on each side."""
    padded = f"  {token}  "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def trigram_table(tokens: pl.DataFrame, token_col: str = "token") -> pl.DataFrame:
    """Explode ``tokens`` into one row per (row, trigram) using the :func:`trigrams` padding."""
    padded = pl.concat_str([pl.lit("  "), pl.col(token_col), pl.lit("  ")])
    return (
        tokens.lazy()
        .with_columns(_p=padded)
        .with_columns(_o=pl.int_ranges(0, pl.col("_p").str.len_chars() - 2))
        .explode("_o")
        .with_columns(tri=pl.col("_p").str.slice(pl.col("_o"), 3))
        .drop("_p", "_o")
        .unique()
        .collect(engine=ENGINE)
    )


def dice(a: Iterable[str], b: Iterable[str]) -> float:
    """Sørensen–Dice coefficient of two sets."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 0.0
    return 2 * len(sa & sb) / (len(sa) + len(sb))

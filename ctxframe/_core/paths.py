"""Path conventions every stage agrees on: what a test file is, and globs as regexes."""

from __future__ import annotations

import re

import polars as pl

# Python: test_*.py, *_test.py, conftest.py, tests/ or test/ dirs; JS/TS: *.test.*, *.spec.*,
# __tests__/; Go: *_test.go.
TEST_PATH_RE = (
    r"(?:^|/)(?:tests?|__tests__)/"
    r"|(?:^|/)test_[^/]*\.py$"
    r"|_test\.(?:py|go)$"
    r"|(?:^|/)conftest\.py$"
    r"|\.(?:test|spec)\.[^/]+$"
)


def is_test_path_expr(path: pl.Expr | str = "path") -> pl.Expr:
    """True where the path follows a Python, JS/TS or Go test-file convention."""
    if isinstance(path, str):
        path = pl.col(path)
    return path.str.contains(TEST_PATH_RE).fill_null(False)


def glob_to_regex(pattern: str) -> str:
    """Translate an fnmatch-style glob to an anchored regex for ``str.contains``.

    ``*`` and ``**`` match any characters including ``/`` (as :mod:`fnmatch` does), ``**/``
    also matches no directory at all, ``?`` one character, ``[...]``/``[!...]`` a class. A
    pattern without wildcards also matches everything below it (``services/payments``), as
    does one ending in ``/``.
    """
    pat = pattern.strip()
    while pat.startswith("./"):
        pat = pat[2:]
    pat = pat.lstrip("/")
    has_wild = any(c in pat for c in "*?[")
    out, i, n = [], 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            if j - i >= 2 and j < n and pat[j] == "/":
                out.append("(?:.*/)?")
                j += 1
            else:
                out.append(".*")
            i = j
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            j = pat.find("]", i + 2 if i + 1 < n and pat[i + 1] == "!" else i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pat[i + 1 : j]
            neg = body.startswith("!")
            if neg:
                body = body[1:]
            esc = "".join(ch if ch.isalnum() or ch == "-" else "\\" + ch for ch in body)
            out.append("[" + ("^" if neg else "") + esc + "]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    if pat.endswith("/"):
        return f"(?s)^{body}.*$"
    if not has_wild:
        return f"(?s)^{body}(?:/.*)?$"
    return f"(?s)^{body}$"

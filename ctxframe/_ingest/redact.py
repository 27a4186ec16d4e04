"""Never store a secret's value: credentials written inside strings are masked in every row
extraction makes, before anything is stored or tokenised.

Masked (the value becomes `***`, the rest of the text stays so the host, program or parameter
is still found): the userinfo of a URL (`scheme://user:pass@host`, `git+https://TOKEN@…`), a
credential query parameter (`?password=…`, `&token=…`), a password flag of a command
(`mysql -pPW`, `--password=PW`, `--token PW`), and the string default of a parameter whose name
says secret (`password="…"`, `api_key: str = '…'`). Vectorised Polars regexes over string
columns, one pass each.
"""

from __future__ import annotations

import polars as pl

MASK = "***"
_SECRET_WORD = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[-_]?key|apikey|access[-_]?key"
    r"|private[-_]?key|auth[-_]?key|credentials?|client[-_]?secret)"
)
# (pattern, replacement): Rust regex syntax (no look-around, no back-references)
RULES: tuple[tuple[str, str], ...] = (
    # scheme://userinfo@host: the whole userinfo (a lone token is a secret as well)
    (r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/\s@'\"`<>]+@", "${1}" + MASK + "@"),
    # ?password=…, &access_token=…
    (r"(?i)([?&;]\w*" + _SECRET_WORD + r"\w*=)[^&\s'\"`#;]+", "${1}" + MASK),
    # --password=PW, --token PW, -password PW
    (r"(?i)(\s|^|['\"`])(--?\w*" + _SECRET_WORD + r"\w*)(=|\s+)[^-\s'\"`][^\s'\"`]*",
     "${1}${2}${3}" + MASK),
    # mysql -pPW (the MySQL/MariaDB clients take the password glued to -p)
    (r"(?i)\b((?:mysql\w*|mariadb\w*)\b[^\n]*?\s-p)[^\s'\"`]+", "${1}" + MASK),
    # password="…", api_key: str = '…' (a parameter default or keyword argument)
    (r"(?i)(\b\w*" + _SECRET_WORD + r"\w*\s*(?::[^=,()\n]{0,60})?=\s*)"
     r"(?:\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`)", "${1}\"" + MASK + "\""),
)  # fmt: skip
_HINTS = ("://", "=", "-p", "--")  # a string holding none of these matches no rule


def redact_expr(col: str) -> pl.Expr:
    """The column with every rule applied (strings without a hint skip the regexes)."""
    expr = pl.col(col)
    out = expr
    for pattern, repl in RULES:
        out = out.str.replace_all(pattern, repl)
    return pl.when(expr.str.contains_any(list(_HINTS))).then(out).otherwise(expr).alias(col)


def redact_frame(frame: pl.DataFrame, columns: tuple[str, ...] | None = None) -> pl.DataFrame:
    """`frame` with the given string columns (default: all) redacted."""
    names = [
        c
        for c, t in frame.schema.items()
        if t == pl.String and (columns is None or c in columns)
    ]
    if not names or frame.is_empty():
        return frame
    return frame.with_columns([redact_expr(c) for c in names])


# Every rule needs one of these (case-insensitive): a cheap test that spares the rules most rows.
_LIKELY = r"(?i)://|" + _SECRET_WORD + r"|mysql|mariadb"


def redact_rows(frame: pl.DataFrame, col: str) -> pl.DataFrame:
    """`frame` with `col` redacted, the rules run only on the rows that could match one (large
    text such as definition bodies; the row order is not kept)."""
    if frame.is_empty():
        return frame
    likely = frame[col].str.contains(_LIKELY).fill_null(False)
    if not likely.any():
        return frame
    return pl.concat([frame.filter(~likely), redact_frame(frame.filter(likely), (col,))])


def redact_text(text: str | None) -> str | None:
    """One string redacted (the same rules, for values outside frames)."""
    if text is None or not any(h in text for h in _HINTS):
        return text
    return pl.select(pl.lit(text, pl.String).alias("t")).select(redact_expr("t")).item()

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
# (pattern, replacement, what every match holds): Rust regex syntax (no look-around, no
# back-references). The third is a looser pattern without a leading `\w*` (which makes a regex
# try every position): a row none of them matches is left as it is, without running the rules.
_RULES: tuple[tuple[str, str, str], ...] = (
    # scheme://userinfo@host: the whole userinfo (a lone token is a secret as well)
    (r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/\s@'\"`<>]+@", "${1}" + MASK + "@", r"://"),
    # ?password=…, &access_token=…
    (r"(?i)([?&;]\w*" + _SECRET_WORD + r"\w*=)[^&\s'\"`#;]+", "${1}" + MASK,
     r"(?i)" + _SECRET_WORD + r"\w*="),
    # --password=PW, --token PW, -password PW
    (r"(?i)(\s|^|['\"`])(--?\w*" + _SECRET_WORD + r"\w*)(=|\s+)[^-\s'\"`][^\s'\"`]*",
     "${1}${2}${3}" + MASK, r"(?i)-\w*" + _SECRET_WORD + r"\w*[=\s]"),
    # mysql -pPW (the MySQL/MariaDB clients take the password glued to -p)
    (r"(?i)\b((?:mysql\w*|mariadb\w*)\b[^\n]*?\s-p)[^\s'\"`]+", "${1}" + MASK,
     r"(?i)mysql|mariadb"),
    # password="…", api_key: str = '…' (a parameter default or keyword argument)
    (r"(?i)(\b\w*" + _SECRET_WORD + r"\w*\s*(?::[^=,()\n]{0,60})?=\s*)"
     r"(?:\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`)", "${1}\"" + MASK + "\"",
     r"(?i)" + _SECRET_WORD + r"\w*\s*(?::[^=,()\n]{0,60})?=\s*[\"'`]"),
)  # fmt: skip
RULES: tuple[tuple[str, str], ...] = tuple((p, r) for p, r, _ in _RULES)

# A row that could match a rule: one pass over the text, which spares the rules most rows.
_LIKELY = "|".join(
    f"(?i:{need.removeprefix('(?i)')})" if need.startswith("(?i)") else f"(?:{need})"
    for _, _, need in _RULES
)


def redact_expr(col: str) -> pl.Expr:
    """The column with every rule applied, on every row."""
    out = pl.col(col)
    for pattern, repl in RULES:
        out = out.str.replace_all(pattern, repl)
    return out.alias(col)


def _redacted(values: pl.Series) -> pl.Series:
    """`values` with the rules run on the rows that could match one, in their places."""
    likely = values.str.contains(_LIKELY).fill_null(False)
    if not likely.any():
        return values
    rows = likely.arg_true()
    before = values.gather(rows)
    fixed = before.to_frame().select(redact_expr(values.name)).to_series()
    if fixed.equals(before):
        return values
    # Rebuilt through Arrow: string views would keep the old values' bytes in shared buffers,
    # and an Arrow IPC file writes whole buffers.
    return pl.Series(values.name, values.clone().scatter(rows, fixed).to_arrow())


def redact_frame(frame: pl.DataFrame, columns: tuple[str, ...] | None = None) -> pl.DataFrame:
    """`frame` with the given string columns (default: all) redacted."""
    names = [
        c
        for c, t in frame.schema.items()
        if t == pl.String and (columns is None or c in columns)
    ]
    if not names or frame.is_empty():
        return frame
    return frame.with_columns([_redacted(frame[c]) for c in names])


def redact_rows(frame: pl.DataFrame, col: str) -> pl.DataFrame:
    """`frame` with one column of large text (definition bodies) redacted, in place."""
    return redact_frame(frame, (col,))

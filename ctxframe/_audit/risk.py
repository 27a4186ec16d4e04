"""Boundaries and risk.

`boundaries`: the inventory of what the code consumes and provides (routes, env vars, HTTP,
programs run, packages, k8s objects), one row per use, with the risky ones marked: a program
run with arguments that are not constants (or through a shell), HTTP without TLS to a host
that is not local, a secret read by name.

`risk`: the functions an auditor should read first — how much depends on them (fan-in), how
complex they are, whether a test reaches them and which boundaries they touch — as one score
with the reasons behind it.
"""

from __future__ import annotations

import math
import os
import re

import polars as pl

from ctxframe._audit.facts import Facts

_USES = ["reads", "http", "exec", "uses", "sets", "declares", "runs", "selects", "routes",
         "calls"]  # fmt: skip
_LOCAL = r"^https?://(?:localhost|127\.|0\.0\.0\.0|\[::1\]|[^/]*\.(?:local|test|example|invalid)\b)"
_STRING = re.compile(r"""(?:[rbfuRBFU]{0,2})("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)""")
_KWARG = re.compile(r"\b\w+\s*=")
_CONST = {"True", "False", "None", "true", "false", "nil", "null", "undefined"}
_BOUNDARY_SCHEMA = {
    "transport": pl.String, "direction": pl.String, "identifier": pl.String, "kind": pl.String,
    "secret": pl.Boolean, "via": pl.String, "user": pl.String, "used_by": pl.String,
    "path": pl.String, "line": pl.Int32, "risky": pl.Boolean, "risk": pl.String,
}  # fmt: skip


def boundaries(f: Facts) -> dict[str, pl.DataFrame]:
    """`boundaries`: one row per boundary and use, risky first."""
    nodes, edges = f.nodes, f.edges
    bnodes = nodes.filter(pl.col("transport").is_not_null())
    ids = bnodes["id"].implode()
    used = edges.filter(pl.col("kind").is_in(_USES) & pl.col("dst").is_in(ids)).select(
        node="dst", user="src", via="kind", literal="name", path="path", line="line"
    )
    handled = edges.filter((pl.col("kind") == "handles") & pl.col("src").is_in(ids)).select(
        node="src", user="dst", via="kind", literal="name", path="path", line="line"
    )
    names = nodes.select(user="id", used_by=pl.coalesce("qualname", "label", "id"))
    rows = (
        pl.concat([used, handled])
        .join(
            bnodes.select(
                node="id",
                identifier="label",
                transport="transport",
                direction=pl.col("direction").fill_null("declares"),
                kind="kind",
                secret=pl.col("secret").fill_null(False),
            ),
            on="node",
        )
        .join(names, on="user", how="left")
    )
    shell = _exec_arguments(f, rows.filter(pl.col("via") == "exec"))
    rows = rows.join(shell, on=["user", "path", "line"], how="left")
    risk = pl.concat_list(
        [
            pl.when((pl.col("via") == "exec") & pl.col("arguments").fill_null(False)).then(
                pl.lit("runs a program with arguments built at run time")
            ),
            pl.when((pl.col("via") == "exec") & pl.col("shell").fill_null(False)).then(
                pl.lit("runs it through a shell")
            ),
            pl.when(
                (pl.col("via") == "exec") & (pl.col("identifier").fill_null("") == "(dynamic)")
            ).then(pl.lit("the program is chosen at run time")),
            pl.when(
                (pl.col("via") == "http")
                & pl.col("literal").fill_null("").str.starts_with("http://")
                & ~pl.col("literal").fill_null("").str.contains(_LOCAL)
            ).then(pl.lit("HTTP without TLS")),
            pl.when(pl.col("secret") & pl.col("via").is_in(["reads", "sets", "declares"])).then(
                pl.lit("a secret, by its name")
            ),
        ]
    ).list.drop_nulls()
    table = (
        rows.with_columns(risk=risk.list.join("; "))
        .with_columns(risky=pl.col("risk") != "", risk=pl.when(pl.col("risk") != "").then("risk"))
        .select(list(_BOUNDARY_SCHEMA))
        .unique()
        .sort(
            ["risky", "transport", "identifier", "via", "path", "line"],
            descending=[True, False, False, False, False, False],
            nulls_last=True,
        )
    )
    return {"boundaries": table.cast(_BOUNDARY_SCHEMA)}


def _exec_arguments(f: Facts, execs: pl.DataFrame) -> pl.DataFrame:
    """Per exec call site (user, path, line): `arguments` (the call passes something that is
    not a literal) and `shell` (`shell=True`), read from the call's source text."""
    schema = {"user": pl.String, "path": pl.String, "line": pl.Int32, "arguments": pl.Boolean,
              "shell": pl.Boolean}  # fmt: skip
    if execs.is_empty() or f.root is None:
        return pl.DataFrame(schema=schema)
    out = []
    cache: dict[str, list[str]] = {}
    for user, path, line in execs.select("user", "path", "line").unique().iter_rows():
        if path is None or line is None:
            continue
        lines = cache.get(path)
        if lines is None:
            try:
                with open(os.path.join(f.root, path), encoding="utf-8", errors="replace") as fh:
                    lines = cache[path] = fh.read().splitlines()
            except OSError:
                continue
        text = _call_text(lines, line - 1)
        bare = _STRING.sub('""', text)
        inside = bare[bare.find("(") + 1 :] if "(" in bare else ""
        names = set(re.findall(r"[A-Za-z_]\w*", _KWARG.sub("", inside))) - _CONST
        out.append((user, path, line, bool(names), bool(re.search(r"shell\s*=\s*True", text))))
    return pl.DataFrame(out, schema=schema, orient="row")


def _call_text(lines: list[str], at: int, most: int = 12) -> str:
    """The text of the call starting on line `at` until its parentheses close."""
    text, depth = "", 0
    for i in range(at, min(at + most, len(lines))):
        text += lines[i] + "\n"
        depth = _STRING.sub('""', text).count("(") - _STRING.sub('""', text).count(")")
        if depth <= 0 and "(" in text:
            break
    return text


def risk(f: Facts, complexity: pl.DataFrame, untested: pl.DataFrame,
         bounds: pl.DataFrame) -> dict[str, pl.DataFrame]:  # fmt: skip
    """`risk`: functions ranked by score = (1 + ln(1 + fan-in)) x (1 + ln cyclomatic) x 1.5
    when no test reaches it x (1 + 0.5 per kind of boundary touched + 1 per risky use)."""
    fns = complexity.filter(~pl.col("is_test"))
    calls = f.edges.filter(
        (pl.col("kind") == "calls")
        & pl.col("dst").is_not_null()
        & (pl.col("confidence") != "AMBIGUOUS")
        & (pl.col("src") != pl.col("dst"))
    )
    fan_in = calls.group_by(id="dst").agg(fan_in=pl.col("src").n_unique().cast(pl.Int32))
    untested_ids = untested.select("id", untested_conf="confidence")
    touches = (
        bounds.filter(pl.col("via").is_in(["reads", "http", "exec", "sets"]))
        .group_by(id="user")
        .agg(
            boundary_kinds=pl.col("via").n_unique().cast(pl.Int32),
            risky_uses=pl.col("risky").sum().cast(pl.Int32),
            touches=pl.format("{} {}", "via", "identifier").unique().sort().head(3).str.join(", "),
        )
    )
    t = (
        fns.join(fan_in, on="id", how="left")
        .join(untested_ids, on="id", how="left")
        .join(touches, on="id", how="left")
        .with_columns(
            pl.col("fan_in", "boundary_kinds", "risky_uses").fill_null(0),
            untested=pl.col("untested_conf").is_not_null(),
        )
    )
    score = (
        (1 + (1 + pl.col("fan_in")).log())
        * (1 + pl.col("cyclomatic").clip(lower_bound=1).log())
        * pl.when(pl.col("untested")).then(1.5).otherwise(1.0)
        * (1 + 0.5 * pl.col("boundary_kinds") + pl.col("risky_uses"))
    )
    why = pl.concat_list(
        [
            pl.when(pl.col("fan_in") > 0).then(pl.format("called from {} place(s)", "fan_in")),
            pl.when(pl.col("cyclomatic") > 1).then(pl.format("cyclomatic {}", "cyclomatic")),
            pl.when(pl.col("untested_conf") == "measured").then(pl.lit("no test ran it")),
            pl.when(pl.col("untested_conf").is_in(["high", "low"])).then(
                pl.lit("no test reaches it")
            ),
            pl.when(pl.col("boundary_kinds") > 0).then(pl.format("touches {}", "touches")),
            pl.when(pl.col("risky_uses") > 0).then(
                pl.format("{} risky boundary use(s)", "risky_uses")
            ),
        ]
    ).list.drop_nulls()
    floor = (1 + math.log(2)) * (1 + math.log(3))  # a single caller and cyclomatic 3
    ranked = (
        t.with_columns(score=score.round(3), why=why.list.join("; "))
        .filter((pl.col("score") >= floor) | (pl.col("boundary_kinds") > 0))
        .sort(["score", "id"], descending=[True, False])
        .with_row_index("rank", offset=1)
        .with_columns(pl.col("rank").cast(pl.Int32))
        .select(
            "rank",
            "id",
            "kind",
            "qualname",
            "path",
            "line_start",
            "package",
            "score",
            "fan_in",
            "cyclomatic",
            "untested",
            "boundary_kinds",
            "risky_uses",
            "why",
        )
    )
    return {"risk": ranked}

"""Coverage data onto the graph: `covers` edges from the tests that ran code to what they ran,
and each definition's covered share.

A line belongs to the innermost definition whose lines hold it (a `def` line to the one
around it: it runs when that one does); a file's lines outside any definition to the file.
Only functions and methods are drawn `covers` edges into: a module's or a class's body runs
when it is imported, not because a test ran it.
A context names the test that ran a line: pytest-cov's `path::Class::test[param]|run` or
coverage.py's `test_function` `module.Class.test` (its module named as pytest imported it:
matched by the longest dotted suffix of a test definition's `path.qualname`). A file changed
after the data was written is *stale*: its rows are kept in the coverage table, flagged, and
no `covers` edge is drawn into it.
"""

from __future__ import annotations

import polars as pl

from ctxframe._core.frames import string_lists
from ctxframe._core.paths import is_test_path_expr

TABLE = {
    "id": pl.String, "path": pl.String, "lines": pl.Int32, "covered": pl.Int32,
    "share": pl.Float64, "stale": pl.Boolean,
}  # fmt: skip
_DEFS = ["function", "method", "class"]


def covers(
    measured: pl.DataFrame, nodes: pl.DataFrame, files: pl.DataFrame, data_mtime_ns: int
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(covers edges, coverage table) from (path, line, context, hit) rows."""
    stale = files.select("path", stale=pl.col("mtime_ns").fill_null(0) > data_mtime_ns)
    lines = measured.select("path", "line").unique()
    owner = _owners(lines, nodes)
    table = _table(measured, owner, stale)
    edges = _edges(measured, owner, nodes, stale)
    return edges, table


def _owners(lines: pl.DataFrame, nodes: pl.DataFrame) -> pl.DataFrame:
    """(path, line, id): the definition each line belongs to, else its file."""
    defs = nodes.filter(pl.col("kind").is_in(_DEFS) & pl.col("path").is_not_null()).select(
        "path", "id", "line_start", "line_end"
    )
    inside = (
        lines.join(defs, on="path")
        .filter((pl.col("line") > pl.col("line_start")) & (pl.col("line") <= pl.col("line_end")))
        .sort("line_start", "id", descending=[True, False])
        .unique(["path", "line"], keep="first", maintain_order=True)
        .select("path", "line", "id")
    )
    rest = lines.join(inside, on=["path", "line"], how="anti").with_columns(id=pl.col("path"))
    return pl.concat([inside, rest.select("path", "line", "id")])


def _table(measured: pl.DataFrame, owner: pl.DataFrame, stale: pl.DataFrame) -> pl.DataFrame:
    """Per definition (and per file, over all its lines): executable lines the data knows,
    those that ran, their share, and whether the file changed since."""
    per_line = measured.group_by("path", "line").agg(hit=pl.col("hit").any())
    owned = per_line.join(owner, on=["path", "line"])
    defs = owned.group_by("id", "path").agg(
        lines=pl.len().cast(pl.Int32), covered=pl.col("hit").sum().cast(pl.Int32)
    )
    whole = (
        per_line.group_by("path")
        .agg(lines=pl.len().cast(pl.Int32), covered=pl.col("hit").sum().cast(pl.Int32))
        .with_columns(id=pl.col("path"))
    )
    every = pl.concat([defs.filter(pl.col("id") != pl.col("path")), whole.select(defs.columns)])
    return (
        every.join(stale, on="path", how="left")
        .with_columns(
            share=pl.col("covered") / pl.col("lines"), stale=pl.col("stale").fill_null(False)
        )
        .select(list(TABLE))
        .cast(TABLE)
        .sort("id")
    )


def _tests(contexts: pl.Series, nodes: pl.DataFrame) -> pl.DataFrame:
    """(context, test): the test definition each context names."""
    ctx = contexts.to_frame("context").filter(pl.col("context") != "").unique()
    tests = nodes.filter(
        pl.col("kind").is_in(["function", "method"]) & is_test_path_expr("path")
    ).select("id", "path", "qualname")
    # pytest-cov: `path::Class::test[param]|run`
    nodeid = ctx.filter(pl.col("context").str.contains("::", literal=True)).with_columns(
        key=pl.col("context").str.replace(r"\|[^|]*$", "").str.replace(r"\[.*$", "")
        .str.replace_all("::", "\x00").str.replace("\x00", "::").str.replace_all("\x00", ".")
    )  # fmt: skip
    by_id = nodeid.join(tests.select(key="id", test="id"), on="key").select("context", "test")
    # coverage.py's test_function: `dotted.module.Class.test`, the module as pytest named it
    dotted = tests.with_columns(
        full=pl.col("path").str.replace(r"\.py$", "").str.replace_all("/", ".") + "."
        + pl.col("qualname"),
        depth=pl.col("path").str.count_matches("/") + 1,
    )  # fmt: skip
    suffixes = (
        dotted.with_columns(i=pl.int_ranges(0, pl.col("depth")))
        .explode("i")
        .select(
            test="id",
            key=pl.col("full").str.split(".").list.slice(pl.col("i")).pipe(string_lists).list.join("."),
        )
    )
    plain = ctx.filter(~pl.col("context").str.contains("::", literal=True)).with_columns(
        key=pl.col("context").str.replace(r"\|[^|]*$", "").str.replace(r"\[.*$", "")
    )
    by_name = plain.join(suffixes, on="key").select("context", "test")
    return pl.concat([by_id, by_name]).unique()


def _edges(
    measured: pl.DataFrame, owner: pl.DataFrame, nodes: pl.DataFrame, stale: pl.DataFrame
) -> pl.DataFrame:
    ran = (
        measured.filter(pl.col("hit") & (pl.col("context") != ""))
        .select("path", "line", "context")
        .unique()
    )
    fresh = stale.filter(~pl.col("stale")).select("path")
    ran = ran.join(fresh, on="path", how="semi")
    who = _tests(ran["context"], nodes)
    info = nodes.select("id", "label", tpath="path", tline="line_start")
    runs = nodes.filter(pl.col("kind").is_in(["function", "method"])).select("id")
    edges = (
        ran.join(owner, on=["path", "line"])
        .join(runs, on="id", how="semi")  # a module's or class's body runs at import
        .join(who, on="context")
        .select(src="test", dst="id")
        .unique()
        .filter(pl.col("src") != pl.col("dst"))
        .join(info.select(dst="id", name="label"), on="dst", how="left")
        .join(info.select(src="id", path="tpath", line="tline"), on="src", how="left")
    )
    return edges.select(
        "src", "dst", kind=pl.lit("covers"), confidence=pl.lit("EXTRACTED"),
        name=pl.coalesce("name", "dst"), path="path", line=pl.col("line").cast(pl.Int32),
        via=pl.lit("coverage"), bound=pl.lit(False),
    )  # fmt: skip

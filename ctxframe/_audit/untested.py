"""Untested code: functions no test reaches through the graph, and, where coverage data was
read into the index, functions no test ran.

The graph's rule is `change-plan`'s: the graph's test reach (ctxframe._graph.testreach: from
every test file's test functions at once, along EXTRACTED and INFERRED calls to any depth, a
call on an instance followed once that test file made one) — the pairs it computes for every
node at once, not a walk per function. Without the graph's (an input built from frames
alone), the calls from test code within six steps. A claim "untested" is `high` confidence
when even a far wider walk
does not get there (AMBIGUOUS calls, any depth, calls the graph could not resolve matched by
name to every function so named, every name a reached file writes, getattr prefixes, the
overrides of a reached method, the special methods of a reached class and every method of one
whose base is a library's); `low` otherwise: the graph may just not see the path — before
properties, protocols and callbacks are edges, most such claims are wrong on real projects
(bench/audit_bench.py), which is why coverage data, where the index has it, decides.

Coverage (the index's `coverage` frame: id, lines, covered, share, stale; and `covers` edges,
test -> function) is measured: where it exists for a function it decides `ran`.
"""

from __future__ import annotations

import polars as pl

from ctxframe._audit.facts import TEST_DEPTH, Facts
from ctxframe._core.paths import is_test_path_expr

_WIDE_DEPTH = 50
_SPECIAL = r"^__\w+__$"


def _starts(f: Facts) -> pl.DataFrame:
    """The nodes a test walk starts from: every node in a test file."""
    return f.nodes.filter(is_test_path_expr("path") & pl.col("kind").is_not_null()).select("id")


def test_reach(f: Facts) -> pl.DataFrame:
    """(id, depth): what the tests reach — the graph's test reach (`change-plan`'s) when the
    input has it (depth null: any), else the calls from test code within TEST_DEPTH."""
    reach = f.input.test_reach
    if reach is not None:
        got = reach() if callable(reach) else reach
        rows = got.pairs["row"].unique()
        ids = f.input.nodes["id"].gather(rows)
        return pl.DataFrame({"id": ids, "depth": pl.Series([None] * len(ids), dtype=pl.Int32)})
    starts = _starts(f)
    t = f.input.traversal
    if t is not None:
        rows = _rows(t.ids, starts["id"])
        r = t.reach(rows.to_list(), reverse=False, depth=TEST_DEPTH, kinds=["calls"])
        return pl.DataFrame({"id": t.ids.gather(r["row"]), "depth": r["depth"]})
    calls = f.edges.filter(
        (pl.col("kind") == "calls")
        & pl.col("dst").is_not_null()
        & (pl.col("confidence") != "AMBIGUOUS")
    ).select("src", "dst")
    return _walk(starts, calls, TEST_DEPTH)


def _rows(ids: pl.Series, want: pl.Series) -> pl.Series:
    """Row numbers of `want` in `ids` (a traversal's node order)."""
    at = pl.DataFrame({"id": ids}).with_row_index("row")
    return at.join(pl.DataFrame({"id": want}), on="id")["row"].cast(pl.Int32)


def _walk(starts: pl.DataFrame, edges: pl.DataFrame, depth: int) -> pl.DataFrame:
    seen = starts.select("id", depth=pl.lit(0, pl.Int32))
    frontier = starts.select("id")
    for level in range(1, depth + 1):
        step = (
            frontier.join(edges, left_on="id", right_on="src")
            .select(id="dst")
            .unique()
            .join(seen, on="id", how="anti")
        )
        if step.is_empty():
            break
        seen = pl.concat([seen, step.with_columns(depth=pl.lit(level, pl.Int32))])
        frontier = step
    return seen


def wide_reach(f: Facts) -> pl.DataFrame:
    """(id): what test code may reach on the widest reading of the graph (see module doc):
    besides every call edge and the by-name matches, a file reached reaches every function
    whose name it writes beyond defining it (a method called on an object the graph does
    not know, a name in generated code, `getattr(x, "name")`) and, for each literal prefix
    it passes to getattr (`getattr(self, "visit_" + …)`), every function so named."""
    calls = f.edges.filter((pl.col("kind") == "calls") & pl.col("dst").is_not_null()).select(
        "src", "dst"
    )
    by_name = (
        f.edges.filter((pl.col("kind") == "calls") & pl.col("dst").is_null())
        .select("src", "name")
        .unique()
    )
    defs = f.definitions.select("id", "label", "parent")
    fn_by_label = defs.select("label", dst="id")
    # a reached class reaches its special methods; a reached method its overrides
    special = defs.filter(pl.col("label").str.contains(_SPECIAL)).select(src="parent", dst="id")
    bases = f.edges.filter(
        pl.col("kind").is_in(["extends", "implements"]) & pl.col("dst").is_not_null()
    )
    overrides = (
        defs.rename({"id": "base_m", "parent": "base"})
        .join(bases.select(sub="src", base="dst"), on="base")
        .join(defs.rename({"id": "sub_m", "parent": "sub"}), on=["sub", "label"])
        .select(src="base_m", dst="sub_m")
    )
    init = defs.filter(pl.col("label") == "__init__").select(src="parent", dst="id")
    # a reached method or attribute of a class reaches the class (an instance exists)
    owner = defs.filter(pl.col("parent").is_in(defs["id"].implode())).select(src="id", dst="parent")
    # a reached class whose base is a library's: the library may call any of its overrides
    from ctxframe._audit.dead import external_base_classes

    external = external_base_classes(f)
    library_calls = defs.filter(pl.col("parent").is_in(external.implode())).select(
        src="parent", dst="id"
    )
    edges = pl.concat([calls, special, overrides, init, owner, library_calls]).unique()
    written = _written(f)
    prefixes = _prefixes(f)
    where = f.nodes.select("id", "path")
    seen = _starts(f).select("id")
    frontier = seen
    files = pl.DataFrame(schema={"path": pl.String})
    words = pl.DataFrame(schema={"label": pl.String})  # names reached so far (by name)
    for _ in range(_WIDE_DEPTH):
        # each step filters the big tables by the frontier (a hash set of the few new ids)
        # rather than joining them: no hash table of every edge is built at every level
        ids = frontier["id"].implode()
        new_files = (
            where.filter(pl.col("id").is_in(ids))
            .select("path")
            .unique()
            .join(files, on="path", how="anti")
        )
        files = pl.concat([files, new_files])
        # the names a new file writes and a call the graph could not resolve spells: every
        # definition so named, once per name
        new_words = (
            pl.concat(
                [
                    written.filter(pl.col("path").is_in(new_files["path"].implode())).select(
                        "label"
                    ),
                    by_name.filter(pl.col("src").is_in(ids)).select(label="name"),
                ]
            )
            .unique()
            .join(words, on="label", how="anti")
        )
        words = pl.concat([words, new_words])
        parts = [
            edges.filter(pl.col("src").is_in(ids)).select(id="dst"),
            fn_by_label.filter(pl.col("label").is_in(new_words["label"].implode())).select(
                id="dst"
            ),
        ]
        hit = new_files.join(prefixes, on="path").select("prefix").unique()
        if hit.height:
            parts.append(
                fn_by_label.join(hit, how="cross")
                .filter(pl.col("label").str.starts_with(pl.col("prefix")))
                .select(id="dst")
            )
        step = pl.concat(parts).unique().join(seen, on="id", how="anti")
        if step.is_empty():
            break
        seen = pl.concat([seen, step])
        frontier = step
    return seen


def _written(f: Facts) -> pl.DataFrame:
    """(path, label): a file that writes a definition's name more often than it defines it."""
    table = f.word_table
    defs = f.definitions.select("label", "path")
    if table is None:
        return pl.DataFrame(schema={"path": pl.String, "label": pl.String})
    here = defs.group_by("path", "label").agg(defined=pl.len().cast(pl.Int32))
    return (
        table.join(defs.select(word="label").unique(), on="word")
        .join(here.rename({"label": "word"}), on=["path", "word"], how="left")
        .filter(pl.col("n") > pl.col("defined").fill_null(0))
        .select("path", label="word")
    )


def _prefixes(f: Facts) -> pl.DataFrame:
    """(path, prefix): literal prefixes each file passes to getattr."""
    from ctxframe._audit.dead import dynamic_prefixes

    return dynamic_prefixes(f, per_file=True)


def untested(f: Facts) -> dict[str, pl.DataFrame]:
    """`untested` (the functions the audit calls untested, with confidence and why) and
    `untested_packages` (per package: functions, tested by the graph, ran under coverage)."""
    fns = f.functions.filter(~pl.col("is_test"))
    reach = test_reach(f)
    wide = wide_reach(f).with_columns(wide=pl.lit(True))
    covered = _coverage(f)
    t = (
        fns.join(reach, on="id", how="left")
        .join(wide, on="id", how="left")
        .join(covered, on="id", how="left")
        .with_columns(
            tested=pl.col("id").is_in(reach["id"].implode()),
            wide=pl.col("wide").fill_null(False),
        )
        .with_columns(
            untested=pl.when(pl.col("ran").is_not_null())
            .then(~pl.col("ran"))
            .otherwise(~pl.col("tested")),
            confidence=pl.when(pl.col("ran").is_not_null())
            .then(pl.lit("measured"))
            .when(pl.col("wide"))
            .then(pl.lit("low"))
            .otherwise(pl.lit("high")),
        )
        .with_columns(
            why=pl.when(pl.col("confidence") == "measured")
            .then(pl.lit("no test ran it (coverage data)"))
            .when(pl.col("confidence") == "high")
            .then(pl.lit("no test reaches it, even through AMBIGUOUS or unresolved calls"))
            .otherwise(pl.lit("no test reaches it through the graph; a wider reading may"))
        )
    )
    claims = (
        t.filter(pl.col("untested"))
        .sort(["confidence", "cyclomatic", "id"], descending=[False, True, False], nulls_last=True)
        .select(
            "id",
            "kind",
            "qualname",
            "path",
            "line_start",
            "package",
            "cyclomatic",
            "confidence",
            "ran",
            "share",
            "why",
        )
    )
    per_package = (
        t.group_by("package")
        .agg(
            functions=pl.len().cast(pl.Int32),
            tested=pl.col("tested").sum().cast(pl.Int32),
            untested=pl.col("untested").sum().cast(pl.Int32),
            untested_high=(pl.col("untested") & (pl.col("confidence") == "high"))
            .sum()
            .cast(pl.Int32),
            measured=pl.col("ran").is_not_null().sum().cast(pl.Int32),
            ran=pl.col("ran").fill_null(False).sum().cast(pl.Int32),
        )
        .with_columns(
            untested_share=pl.col("untested") / pl.col("functions"),
            not_run_share=pl.when(pl.col("measured") > 0).then(
                1 - pl.col("ran") / pl.col("measured")
            ),
        )
        .sort(["untested_share", "functions", "package"], descending=[True, True, False])
    )
    return {"untested": claims, "untested_packages": per_package}


def _coverage(f: Facts) -> pl.DataFrame:
    """Per function what coverage data says: ran (some line ran, data not stale), share."""
    empty = pl.DataFrame(schema={"id": pl.String, "ran": pl.Boolean, "share": pl.Float64})
    cov = f.input.coverage
    covers = f.edges.filter(pl.col("kind") == "covers").select(id="dst").unique()
    if cov is None or cov.is_empty() or not {"id", "covered"} <= set(cov.columns):
        if covers.is_empty():
            return empty
        return covers.with_columns(ran=pl.lit(True), share=pl.lit(None, pl.Float64))
    stale = pl.col("stale").fill_null(False) if "stale" in cov.columns else pl.lit(False)
    share = pl.col("share").cast(pl.Float64) if "share" in cov.columns else pl.lit(None, pl.Float64)
    measured = cov.filter(~stale).select("id", ran=pl.col("covered").fill_null(0) > 0, share=share)
    ran_by_edge = covers.join(measured, on="id", how="anti").with_columns(
        ran=pl.lit(True), share=pl.lit(None, pl.Float64)
    )
    return pl.concat([measured, ran_by_edge]).unique("id", keep="first")

"""Complexity: per function its cyclomatic number (lizard's definition), length, nesting depth
and parameters, read at extraction (node columns); outliers against fixed thresholds and
against the function's own package (Tukey's fence: above Q3 + 1.5 IQR of the package)."""

from __future__ import annotations

import polars as pl

from ctxframe._audit.facts import Facts

_FENCE_FLOOR = 10  # a package outlier must also be at least this complex


def complexity(f: Facts) -> dict[str, pl.DataFrame]:
    """`complexity` (one row per function and method, most complex first) and
    `complexity_packages` (per package: functions, mean, p90, max, outliers)."""
    t = f.config.thresholds
    fn = f.functions.filter(pl.col("cyclomatic").is_not_null())
    code = fn.filter(~pl.col("is_test"))
    fences = code.group_by("package").agg(
        q3=pl.col("cyclomatic").quantile(0.75, "nearest"),
        iqr=pl.col("cyclomatic").quantile(0.75, "nearest")
        - pl.col("cyclomatic").quantile(0.25, "nearest"),
    )
    reasons = [
        pl.when(pl.col("cyclomatic") >= t["cyclomatic"]).then(
            pl.format("cyclomatic {} (>= {})", "cyclomatic", pl.lit(t["cyclomatic"]))
        ),
        pl.when(
            (pl.col("cyclomatic") > pl.col("q3") + 1.5 * pl.col("iqr"))
            & (pl.col("cyclomatic") >= _FENCE_FLOOR)
            & (pl.col("cyclomatic") < t["cyclomatic"])
        ).then(pl.format("cyclomatic {} far above its package (Q3 {})", "cyclomatic", "q3")),
        pl.when(pl.col("nesting") >= t["nesting"]).then(
            pl.format("nested {} deep (>= {})", "nesting", pl.lit(t["nesting"]))
        ),
        pl.when(pl.col("lines") >= t["lines"]).then(
            pl.format("{} lines (>= {})", "lines", pl.lit(t["lines"]))
        ),
        pl.when(pl.col("params") >= t["params"]).then(
            pl.format("{} parameters (>= {})", "params", pl.lit(t["params"]))
        ),
    ]
    table = (
        fn.join(fences, on="package", how="left")
        .with_columns(why=pl.concat_list(reasons).list.drop_nulls().list.join("; "))
        .with_columns(outlier=(pl.col("why") != "") & ~pl.col("is_test"))
        .sort(["cyclomatic", "lines", "id"], descending=[True, True, False])
        .select(
            "id",
            "kind",
            "qualname",
            "path",
            "line_start",
            "package",
            "language",
            "cyclomatic",
            "lines",
            "nesting",
            "params",
            "is_test",
            "outlier",
            "why",
        )
    )
    per_package = (
        table.filter(~pl.col("is_test"))
        .group_by("package")
        .agg(
            functions=pl.len().cast(pl.Int32),
            mean=pl.col("cyclomatic").mean(),
            p90=pl.col("cyclomatic").quantile(0.9, "nearest"),
            max=pl.col("cyclomatic").max(),
            outliers=pl.col("outlier").sum().cast(pl.Int32),
        )
        .sort(["outliers", "max", "package"], descending=[True, True, False])
    )
    return {"complexity": table, "complexity_packages": per_package}

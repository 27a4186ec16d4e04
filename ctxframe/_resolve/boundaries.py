"""Merge boundary rows from every source into one node per id and resolvable edges."""

from __future__ import annotations

import polars as pl

from ctxframe._core.schema import PRODUCER
from ctxframe._ingest.boundaries.code import BOUNDARY_EDGE_COLS, uses_edges
from ctxframe._resolve.resolve import AMBIGUOUS_CAP

_FUNCS = ["function", "method"]


def merge_boundaries(
    nodes: pl.DataFrame, edges: pl.DataFrame, defs: pl.DataFrame, code_edges: pl.LazyFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One row per boundary id (first declaration by path and line; secret if any source says
    so), and edges: file-level, code-level, OpenAPI operationId → handler, imports → deps."""
    secret = nodes.group_by("id").agg(pl.col("secret").fill_null(False).any())
    merged = (
        nodes.sort("id", "path", "line_start", nulls_last=True)
        .unique("id", keep="first", maintain_order=True)
        .drop("secret")
        .join(secret, on="id", how="left")
        .with_columns(
            secret=pl.when(pl.col("kind").is_in(["env", "secret"])).then(pl.col("secret"))
        )
    )
    # OpenAPI `operationId` names a handler: INFERRED when one function has the name.
    by_name = edges.filter(pl.col("dst").str.starts_with("name:"))
    cand = (
        defs.filter(pl.col("kind").is_in(_FUNCS))
        .select(pl.col("label").alias("want"), pl.col("id").alias("target"))
        .with_columns(n=pl.len().over("want"))
        .filter(pl.col("n") <= AMBIGUOUS_CAP)
    )
    named = (
        by_name.with_columns(want=pl.col("dst").str.strip_prefix("name:"))
        .join(cand, on="want", how="inner")
        .with_columns(
            dst=pl.col("target"),
            confidence=pl.when(pl.col("n") == 1)
            .then(pl.lit("INFERRED"))
            .otherwise(pl.lit("AMBIGUOUS")),
        )
        .select(BOUNDARY_EDGE_COLS.keys())
    )
    deps = merged.filter(pl.col("kind") == "dep")
    imports = code_edges.filter(pl.col("kind") == "imports").collect()
    out = pl.concat(
        [
            edges.filter(~pl.col("dst").str.starts_with("name:")),
            named,
            uses_edges(imports, deps),
        ]
    )
    sources = code_edges.select("src").unique().collect()["src"]
    known = pl.concat([merged["id"], defs["id"], sources]).unique().implode()
    out = (
        out.with_columns(dst=pl.when(pl.col("dst").is_in(known)).then(pl.col("dst")))
        .with_columns(confidence=pl.when(pl.col("dst").is_not_null()).then(pl.col("confidence")))
        .sort("src", "kind", "dst", "line", nulls_last=True)
        .unique(["src", "dst", "kind", "name"], keep="first", maintain_order=True)
        .with_columns(producer=pl.lit(PRODUCER))
    )
    return merged.with_columns(producer=pl.lit(PRODUCER)), out

"""The match table every rule scores: one row per query token x node x matched token x tier
(columns documented in :mod:`ctxframe._rank.rules`), and the key rules group it by."""

from __future__ import annotations

import polars as pl


def row_key(matches: pl.DataFrame) -> tuple[str, list[pl.Expr]]:
    """The column a match table groups nodes by (``node_row`` when present, a cheap integer),
    and the aggregations that carry ``node_id`` along when it is not the key."""
    key = "node_row" if "node_row" in matches.columns else "node_id"
    return key, [pl.col("node_id").first()] if key != "node_id" else []

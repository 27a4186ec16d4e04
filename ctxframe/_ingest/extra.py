"""Rows from outside ctxframe's parsers, merged after its own: adapter batches and dialled
sources (docs/adapters.md)."""

from __future__ import annotations

import os

import polars as pl

from ctxframe._ingest.adapters import Started, run_adapters
from ctxframe._ingest.dial import dial as dial_sources


def extra_rows(
    root: str,
    builtin_ids: pl.Series,
    builtin_edges: pl.DataFrame,
    env_nodes: pl.DataFrame,
    *,
    dial: bool = False,
    adapters: Started | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, dict, dict]:
    """What the indexer merges after its own rows: accepted adapter batches and (with `dial`)
    dialled sources, as node and edge frames with their producers, plus the two report dicts.
    Built-in rows win over adapters' rows, adapters' over dialled ones (by node id).
    `adapters`: the repository's adapters already started (else they are run now)."""
    adapted = run_adapters(root, set(builtin_ids.to_list()), started=adapters)
    nodes, edges = [adapted.nodes], [adapted.edges]
    dial_report: dict = {}
    if dial:
        dialled = dial_sources(env_nodes, os.environ)
        nodes.append(dialled.nodes.join(adapted.nodes, on="id", how="anti"))
        edges.append(dialled.edges)
        dial_report = dialled.to_dict()
    extra_n = pl.concat(nodes)
    known = pl.concat([builtin_ids, extra_n["id"]]).implode()
    key = ["src", "dst", "kind", "line", "name"]
    extra_e = (
        pl.concat(edges)
        .filter(pl.col("src").is_in(known) & pl.col("dst").is_in(known))
        .join(builtin_edges.select(key), on=key, how="anti", nulls_equal=True)
    )
    return extra_n, extra_e, adapted.to_dict(), dial_report

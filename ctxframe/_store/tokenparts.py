"""The token table stored in the nodes' parts (ctxframe._store.parts): part `i` of `tokens`
holds the rows of the nodes in part `i` of `nodes`; its `node` codes are rows of that nodes
part and its `token` codes rows of part `i` of `vocab`, the sorted words that part uses. A
part's bytes depend only on its own nodes, so an edit to one file rewrites one part of each
table and a full build writes the same bytes. Readers get the whole table back with codes
into all of `nodes` and one sorted vocabulary (`whole`), as the ranker and `g.tokens` read it.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

import polars as pl

from ctxframe._core.schema import TOKENS, VOCAB

BY_NODES = ("tokens", "vocab")  # stored in the nodes' parts, part for part
LOCAL_SINCE = 6  # the schema version from which a part's codes are its own


def node_ranges(ids: pl.Series, bounds: list[str]) -> list[tuple[int, int]]:
    """Each part's (first, end) row in the sorted node ids: the rows of nodes part `i`."""
    cuts = ids.search_sorted(pl.Series(bounds, dtype=pl.String), side="left").to_list()
    return list(pairwise([0, *cuts, ids.len()]))


def parts_of(bounds: list[str], paths: list[str]) -> dict[str, list[int]]:
    """The nodes parts that can hold each file's nodes: its id is the path, its symbols'
    ids start with `path::`, and a bound may fall between them."""
    probes = pl.Series([k for p in paths for k in (p, p + ":;")], dtype=pl.String)
    at = pl.Series(bounds, dtype=pl.String).search_sorted(probes, side="right").to_list()
    return {p: list(range(at[2 * k], at[2 * k + 1] + 1)) for k, p in enumerate(paths)}


def localized(tokens: pl.DataFrame, vocab: pl.Series, first_node: int):
    """One part's rows (codes into the whole table) with codes of its own: (tokens, vocab)."""
    used = tokens["token"].unique().sort()  # codes of a sorted vocabulary sort like its words
    local = tokens.with_columns(
        node=(pl.col("node") - first_node).cast(pl.UInt32),
        token=used.search_sorted(tokens["token"]).cast(pl.UInt32),
    )
    return local, pl.DataFrame({"token": vocab.gather(used)}, schema=VOCAB)


def split(
    tokens: pl.DataFrame, vocab: pl.DataFrame, ids: pl.Series, bounds: list[str]
) -> Iterator[tuple[int, pl.DataFrame, pl.DataFrame]]:
    """The whole table (codes into `ids` and `vocab`) as (part, tokens, vocab) with each
    part's own codes, one part at a time (a kernel's table is never copied whole). Part 0
    always; another part when its nodes part holds rows."""
    words = vocab["token"]
    if not bounds:
        yield 0, tokens, vocab
        return
    nodes_at = node_ranges(ids, bounds)
    starts = pl.Series([lo for lo, _ in nodes_at] + [ids.len()], dtype=pl.UInt32)
    rows_at = tokens["node"].search_sorted(starts, side="left").to_list()
    for i, ((lo, hi), (r0, r1)) in enumerate(zip(nodes_at, pairwise(rows_at), strict=True)):
        if hi > lo or not i:
            yield i, *localized(tokens.slice(r0, r1 - r0), words, lo)


def whole(
    tokens: dict[int, pl.DataFrame], vocab: dict[int, pl.DataFrame], rows: dict[int, int]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The parts (by part number) as one table with codes into all of `nodes` (whose part
    `i` holds `rows[i]` rows) and into one sorted vocabulary: (tokens, vocab)."""
    order = sorted(tokens)
    if len(order) == 1:
        return tokens[order[0]], vocab[order[0]]
    words = pl.concat([vocab[i]["token"] for i in order]).unique().sort()
    out, first = [], 0
    for i in range(max(order) + 1):
        if i in tokens:
            recode = words.search_sorted(vocab[i]["token"]).cast(pl.UInt32)
            out.append(
                tokens[i].with_columns(
                    node=(pl.col("node") + first).cast(pl.UInt32),
                    token=recode.gather(tokens[i]["token"]),
                )
            )
        first += rows.get(i, 0)
    table = pl.concat(out, rechunk=True) if out else pl.DataFrame(schema=TOKENS)
    return table, pl.DataFrame({"token": words}, schema=VOCAB)

"""The token table: per node, per field, each token with its count, stored as integer codes.

Fields (docs/schema.md, tokens): ``name`` (the label), ``qualname`` (the enclosing names of a
qualified name: ``BaseClient`` for ``BaseClient._redirect_method``), ``path``, ``signature``,
``doc``, and ``body`` (the definition's own text: ctxframe._ingest.content). Every field is
tokenized like an identifier (ctxframe._rank.tokens), so ``_redirect_method``, a comment's
words and a string literal's words all become the same kind of token.

Stored as ``node`` (the node's row in ``nodes.parquet``, which is sorted by id), ``field`` (its
index in :data:`FIELDS`), ``token`` (its row in the vocabulary, which is sorted) and ``tf``;
one row per distinct (node, field, token), sorted by (node, field, token). Integer codes keep a
kernel-sized table a few bytes a row; sorted codes compare like the strings they stand for.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ctxframe._core.frames import sort_ranges, spread
from ctxframe._core.schema import TOKEN_FIELDS, TOKENS, VOCAB
from ctxframe._core.trace import mark
from ctxframe._rank.tokens import ENGINE, TOKEN_RE, tokenize_expr

__all__ = [
    "BODY",
    "CONTENT_FIELDS",
    "DOC",
    "FIELDS",
    "NAME",
    "NAME_FIELDS",
    "PATH",
    "QUALNAME",
    "SIGNATURE",
    "TokenTable",
    "body_counts",
    "node_counts",
    "token_table",
]

FIELDS = TOKEN_FIELDS
NAME, QUALNAME, PATH, SIGNATURE, DOC, BODY = range(len(FIELDS))
NAME_FIELDS = (NAME, QUALNAME, PATH)  # what the name tiers match (seed 000)
CONTENT_FIELDS = (SIGNATURE, DOC, BODY)  # what BM25F reads
MAX_TF = 65_535
_COUNTS = {"node_id": pl.String, "field": pl.UInt8, "token": pl.String, "tf": pl.UInt32}


@dataclass
class TokenTable:
    """The stored token table (``TOKENS``) and its vocabulary (``VOCAB``: row = token code)."""

    tokens: pl.DataFrame
    vocab: pl.DataFrame

    def decoded(self, node_ids: pl.Series) -> pl.DataFrame:
        """``node_id, field, token, tf`` with strings for codes (``node_ids`` = the nodes' ids
        in stored order), for people and SQL."""
        t = self.tokens
        return pl.DataFrame(
            {
                "node_id": node_ids.gather(t["node"]),
                "field": pl.Series(FIELDS, dtype=pl.String).gather(t["field"]),
                "token": self.vocab["token"].gather(t["token"]),
                "tf": t["tf"],
            }
        )


def node_counts(nodes: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """``node_id, field, token, tf`` of the fields a node row holds (all but ``body``)."""
    qual, label = pl.col("qualname"), pl.col("label")
    parents = qual.str.strip_suffix(pl.lit(".") + label)
    parents = pl.when((pl.col("kind") != "file") & (parents != qual)).then(parents)
    cols = {
        NAME: label,
        QUALNAME: parents,
        SIGNATURE: pl.col("signature"),
        DOC: pl.col("doc"),
    }
    nodes = nodes.lazy()
    parts = [
        nodes.select(node_id="id", field=pl.lit(f, pl.UInt8), token=tokenize_expr(e))
        for f, e in cols.items()
    ]
    counted = (
        pl.concat(parts)
        .explode("token")
        .drop_nulls("token")
        .group_by("node_id", "field", "token")
        .agg(tf=pl.len().cast(pl.UInt32))
    )
    # Every node of a file has its path: each distinct path is split once.
    paths = (
        nodes.select(pl.col("path").unique())
        .with_columns(token=tokenize_expr("path"))
        .explode("token")
        .drop_nulls("token")
        .group_by("path", "token")
        .agg(tf=pl.len().cast(pl.UInt32))
    )
    by_path = (
        nodes.select("id", "path")
        .join(paths, on="path")
        .select(node_id="id", field=pl.lit(PATH, pl.UInt8), token="token", tf="tf")
    )
    return pl.concat([counted, by_path])


def body_counts(
    content: pl.DataFrame | pl.LazyFrame, keys: pl.DataType | None = None
) -> pl.DataFrame:
    """``node_id, field, token, tf`` of the ``body`` field from ``node_id, text`` rows (one
    row per node, as ``_ingest.content.own_text`` makes them); with
    ``keys`` (a categorical type), ``node_id`` and ``token`` are its categories: 4 bytes a row
    instead of a string each, which is what a kernel's tens of millions of rows need.

    Words (maximal runs of token characters) are split into tokens once per distinct word (the
    split cannot cross a word, and a body repeats its words); each occurrence then takes its
    word's tokens by a join, and tokens are counted per row."""
    rows = content.lazy().with_row_index("row")
    # Counted per row number, not per node id: each token hashes a small integer instead of a
    # long id string; the ids join the far fewer counts after.
    words = (
        rows.select("row", w=pl.col("text").str.extract_all(TOKEN_RE)).explode("w").drop_nulls("w")
    )
    split = words.select("w").unique().with_columns(token=tokenize_expr("w")).explode("token")
    return (
        words.join(split.drop_nulls("token"), on="w")
        .group_by("row", "token")
        .agg(tf=pl.len().cast(pl.UInt32))
        .join(rows.select("row", pl.col("node_id").cast(keys or pl.String)), on="row")
        .select("node_id", field=pl.lit(BODY, pl.UInt8), token="token", tf="tf")
        .with_columns(pl.col("token").cast(keys or pl.String))
        .collect(engine=ENGINE)
    )


def row_of(ids: pl.Series, keys: pl.Series) -> pl.Series:
    """Each key's position in ``ids`` (binary search when ``ids`` is sorted, as a store's node
    ids are; a key ``ids`` lacks gets a meaningless position then, else null)."""
    if ids.is_sorted():
        return ids.search_sorted(keys).cast(pl.UInt32)
    rows = pl.DataFrame({"k": ids, "r": pl.int_range(ids.len(), dtype=pl.UInt32, eager=True)})
    return pl.DataFrame({"k": keys}).join(rows, on="k", how="left", maintain_order="left")["r"]


def _keyed(counts: pl.DataFrame, rows: pl.DataFrame, words: pl.DataType) -> pl.DataFrame:
    """Counts with the node as its row in the nodes table (`rows`: node_id -> node; a count
    of a node not there is dropped) and the token as a category of `words`."""
    key = rows.schema["node_id"]
    return (
        counts.lazy()
        .with_columns(pl.col("node_id").cast(key), pl.col("token").cast(words))
        .join(rows.lazy(), on="node_id")
        .select(
            "node",
            pl.col("field").cast(pl.UInt8),
            "token",
            tf=pl.col("tf").clip(upper_bound=MAX_TF).cast(pl.UInt16),
        )
        .collect(engine=ENGINE)
    )


def _named(nodes: pl.DataFrame | pl.LazyFrame, ids: pl.Series, words: pl.DataType) -> pl.DataFrame:
    """The name fields' counts (`node_counts`) of `nodes`, each node as its row in `ids` (a
    node `ids` lacks is dropped): counted and keyed by that small integer, not its id."""
    nodes = nodes.lazy().collect(engine=ENGINE)
    got = nodes["id"]
    at = row_of(ids, got)
    if ids.is_sorted():  # a binary search gives an id `ids` lacks some row too: check it
        ok = (at < ids.len()) & (ids.gather(at.clip(upper_bound=max(ids.len() - 1, 0))) == got)
    else:
        ok = at.is_not_null()
    nodes = nodes.with_columns(id=at).filter(ok)
    return (
        node_counts(nodes)
        .select(
            node=pl.col("node_id").cast(pl.UInt32),
            field=pl.col("field").cast(pl.UInt8),
            token=pl.col("token").cast(words),
            tf=pl.col("tf").clip(upper_bound=MAX_TF).cast(pl.UInt16),
        )
        .collect(engine=ENGINE)
    )


def _words_type(content: list[pl.DataFrame | pl.LazyFrame]) -> pl.DataType:
    """The type the body counts' tokens are in: a large tree's categories, else strings."""
    token = content[0].collect_schema()["token"] if content else pl.String
    return token if isinstance(token, pl.Categorical) else pl.String


_SLICE = 100_000  # node rows whose name fields are counted at once


def token_table(
    nodes: pl.DataFrame | pl.LazyFrame,
    content: pl.DataFrame | list[pl.DataFrame | pl.LazyFrame] | None = None,
    *,
    previous: TokenTable | None = None,
    previous_ids: pl.Series | None = None,
    carry: pl.Series | None = None,
) -> TokenTable:
    """The token table of ``nodes`` (sorted by id, as stored; a LazyFrame is read a slice of
    rows at a time).

    ``content`` holds the ``body`` counts (:func:`body_counts`; its keys strings or, for a
    large tree, categories) of the nodes whose files were read this run, as one frame or a
    list of them (frames, or scans of a large run's scratch files; taken out of the list, and
    so freed, one at a time). With ``previous`` (the stored table, its nodes' ids
    ``previous_ids`` in stored order), the rows of the node ids in ``carry`` are taken from
    it, re-coded, instead of being made again (their files were not re-read, so their bodies
    exist only there); every other node's fields are made from its row. The name fields are
    counted a slice of nodes at a time and every count is kept as codes (node row, token
    category) until the vocabulary is known, so the strings of a kernel-sized table are never
    all in memory. The result equals a table made from scratch."""
    lazy = isinstance(nodes, pl.LazyFrame)
    ids = (nodes.select("id").collect() if lazy else nodes)["id"]
    carrying = previous is not None and previous_ids is not None and carry is not None
    if carrying:  # a node the stored table does not hold is made afresh
        carry = carry.filter(carry.is_in(previous_ids.implode()))
        nodes = nodes.filter(~pl.col("id").is_in(carry.implode()))
        nodes = nodes.collect() if lazy else nodes
    fresh = nodes.height if isinstance(nodes, pl.DataFrame) else ids.len()
    content = [content] if isinstance(content, pl.DataFrame) else content or []
    words = _words_type(content)
    key = content[0].collect_schema()["node_id"] if content else pl.String
    rows = pl.DataFrame(
        {"node_id": ids.cast(key), "node": pl.int_range(ids.len(), dtype=pl.UInt32, eager=True)}
    )
    parts = [_named(nodes.slice(lo, _SLICE), ids, words) for lo in range(0, fresh, _SLICE)]
    del nodes
    mark("tokens: names counted")
    while content:
        parts.append(_keyed(content.pop(0), rows, words))
    del rows
    mark("tokens: bodies keyed")
    used = pl.concat([p["token"].unique() for p in parts] or [pl.Series([], dtype=words)])
    used = used.unique()
    names = [used.cast(pl.String)]
    kept = None
    if carrying and carry.len():
        old = previous.tokens
        keep_old = previous_ids.is_in(carry.implode()) & previous_ids.is_in(ids.implode())
        kept = old.filter(keep_old.gather(old["node"]))
        names.append(previous.vocab["token"].gather(kept["token"].unique()))
    vocab = pl.concat(names).unique().sort()
    code = pl.DataFrame(
        {"token": used, "code": vocab.search_sorted(used.cast(pl.String)).cast(pl.UInt32)}
    )
    # Each part, once coded, is cut into ranges of node rows and dropped; a range is sorted
    # once every part is in: the unsorted and the sorted table are never both whole.
    ranges: list[list[pl.DataFrame]] = [[] for _ in range(max(1, -(-ids.len() // _SLICE)))]
    mark("tokens: vocabulary")
    while parts:
        part = parts.pop(0)
        _spread(part.join(code, on="token").select("node", "field", token="code", tf="tf"), ranges)
    mark("tokens: coded")
    if kept is not None and kept.height:
        node_map = row_of(ids, previous_ids)  # only carried (present) nodes are gathered
        token_map = vocab.search_sorted(previous.vocab["token"]).cast(pl.UInt32)
        kept = kept.with_columns(
            node=node_map.gather(kept["node"]), token=token_map.gather(kept["token"])
        )
        _spread(kept, ranges)
    del kept
    out = sort_ranges(ranges, sorted_tokens)
    tokens = pl.concat(out, rechunk=False) if out else pl.DataFrame(schema=TOKENS)
    vocab = pl.DataFrame({"token": vocab}).cast(dict(VOCAB))
    return TokenTable(tokens, vocab)


def sorted_tokens(rows: pl.DataFrame) -> pl.DataFrame:
    """Token rows in their stored order, (node, field, token): sorted on one 64-bit key of
    the three when the rows' nodes span fewer than 2**24 rows (a sort on one integer takes
    a sixth of the time of one on three columns; a token range spans _SLICE nodes)."""
    if rows.height < 2:
        return rows
    lo, hi = rows["node"].min(), rows["node"].max()
    if hi - lo >= 1 << 24:
        return rows.sort("node", "field", "token")
    u64 = pl.UInt64
    key = ((pl.col("node").cast(u64) - lo) * (1 << 40) + pl.col("field").cast(u64) * (1 << 32)
           + pl.col("token").cast(u64))  # fmt: skip
    return rows.sort(key)


def _spread(rows: pl.DataFrame, ranges: list[list[pl.DataFrame]]) -> None:
    """Append `rows` (coded) to the ranges of `_SLICE` node rows their nodes fall in."""
    spread(rows.cast(dict(TOKENS)), pl.col("node") // _SLICE, ranges)

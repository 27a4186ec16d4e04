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

from ctxframe._core.schema import TOKEN_FIELDS, TOKENS, VOCAB
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
        PATH: pl.col("path"),
        SIGNATURE: pl.col("signature"),
        DOC: pl.col("doc"),
    }
    parts = [
        nodes.lazy().select(node_id="id", field=pl.lit(f, pl.UInt8), token=tokenize_expr(e))
        for f, e in cols.items()
    ]
    return (
        pl.concat(parts)
        .explode("token")
        .drop_nulls("token")
        .group_by("node_id", "field", "token")
        .agg(tf=pl.len().cast(pl.UInt32))
    )


def body_counts(content: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """``node_id, field, token, tf`` of the ``body`` field from ``node_id, text`` rows.

    Words (maximal runs of token characters) are counted first and only the distinct words
    are split into tokens: the split cannot cross a word, and a body repeats its words."""
    words = (
        content.lazy()
        .select("node_id", w=pl.col("text").str.extract_all(TOKEN_RE))
        .explode("w")
        .drop_nulls("w")
        .group_by("node_id", "w")
        .agg(n=pl.len().cast(pl.UInt32))
    )
    split = words.select("w").unique().with_columns(token=tokenize_expr("w")).explode("token")
    return (
        words.join(split.drop_nulls("token"), on="w")
        .group_by("node_id", "token")
        .agg(tf=pl.col("n").sum())
        .select("node_id", field=pl.lit(BODY, pl.UInt8), token="token", tf="tf")
        .collect(engine=ENGINE)
    )


def row_of(ids: pl.Series, keys: pl.Series) -> pl.Series:
    """Each key's position in ``ids`` (binary search when ``ids`` is sorted, as a store's node
    ids are; a key ``ids`` lacks gets a meaningless position then, else null)."""
    if ids.is_sorted():
        return ids.search_sorted(keys).cast(pl.UInt32)
    rows = pl.DataFrame({"k": ids, "r": pl.int_range(ids.len(), dtype=pl.UInt32, eager=True)})
    return pl.DataFrame({"k": keys}).join(rows, on="k", how="left", maintain_order="left")["r"]


def _encode(counts: pl.DataFrame, node_ids: pl.Series, vocab: pl.Series) -> pl.DataFrame:
    """Counts with string keys as integer codes (every key present in both; vocab sorted):
    hash joins to each key's row, far cheaper than a binary search over strings."""
    rows = pl.DataFrame(
        {"node_id": node_ids, "node": pl.int_range(node_ids.len(), dtype=pl.UInt32, eager=True)}
    )
    codes = pl.DataFrame(
        {"token": vocab, "code": pl.int_range(vocab.len(), dtype=pl.UInt32, eager=True)}
    )
    return (
        counts.lazy()
        .join(rows.lazy(), on="node_id")
        .join(codes.lazy(), on="token")
        .select(
            "node",
            pl.col("field").cast(pl.UInt8),
            token="code",
            tf=pl.col("tf").clip(upper_bound=MAX_TF).cast(pl.UInt16),
        )
        .collect(engine=ENGINE)
    )


def token_table(
    nodes: pl.DataFrame,
    content: pl.DataFrame | None = None,
    *,
    previous: TokenTable | None = None,
    previous_ids: pl.Series | None = None,
    carry: pl.Series | None = None,
) -> TokenTable:
    """The token table of ``nodes`` (sorted by id, as stored).

    ``content`` holds the ``body`` counts (:func:`body_counts`) of the nodes whose files were
    read this run. With ``previous`` (the stored table, its nodes' ids ``previous_ids`` in
    stored order), the rows of the node ids in ``carry`` are taken from it, re-coded, instead
    of being made again (their files were not re-read, so their bodies exist only there);
    every other node's fields are made from its row. The result equals a table made from
    scratch."""
    ids = nodes["id"]
    carrying = previous is not None and previous_ids is not None and carry is not None
    if carrying:  # a node the stored table does not hold is made afresh
        carry = carry.filter(carry.is_in(previous_ids.implode()))
    fresh_nodes = nodes.filter(~pl.col("id").is_in(carry.implode())) if carrying else nodes
    parts = [node_counts(fresh_nodes).collect(engine=ENGINE).cast(_COUNTS)]
    if content is not None and content.height:
        parts.append(content.cast(_COUNTS))
    fresh = pl.concat(parts).filter(pl.col("node_id").is_in(ids.implode()))
    words = fresh["token"].unique()
    kept = None
    if carrying and carry.len():
        old = previous.tokens
        keep_old = previous_ids.is_in(carry.implode()) & previous_ids.is_in(ids.implode())
        kept = old.filter(keep_old.gather(old["node"]))
        words = pl.concat([words, previous.vocab["token"].gather(kept["token"].unique())])
    vocab = words.unique().sort()
    tokens = _encode(fresh, ids, vocab)
    if kept is not None and kept.height:
        node_map = row_of(ids, previous_ids)  # only carried (present) nodes are gathered
        token_map = vocab.search_sorted(previous.vocab["token"]).cast(pl.UInt32)
        kept = kept.with_columns(
            node=node_map.gather(kept["node"]), token=token_map.gather(kept["token"])
        )
        tokens = pl.concat([kept.cast(tokens.schema), tokens])
    tokens = tokens.sort("node", "field", "token").cast(dict(TOKENS))
    return TokenTable(tokens, pl.DataFrame({"token": vocab}).cast(dict(VOCAB)))

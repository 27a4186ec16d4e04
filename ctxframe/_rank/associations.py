"""Word associations learned from the repository itself: a paraphrase bridge without a model.

A question's word is often not the code's (``duration`` for ``elapsed``, ``callbacks`` for
``hooks``). The repository says which words go together: a docstring, a comment or a test name
that says ``follow`` sits beside ``follow_redirects``. :class:`Associations` counts, over the
token table, in how many nodes two tokens occur together (any field: name, path, signature, doc,
body) and scores a pair by its normalised pointwise mutual information::

    npmi(w, t) = ln(p(w, t) / (p(w) p(t))) / -ln p(w, t),   p(.) = nodes holding it / nodes

(Bouma, 2009: 1 when two tokens always occur together, 0 when independently). A query word
``w`` (its tokens by Snowball stem) reaches the ``terms`` tokens of the highest ``npmi`` with it
that occur with it in at least ``min_count`` nodes, that are not one of the question's own words
and that at most ``max_share`` of the nodes hold. The default rule uses them as a weak tier
(``IdfTiers.bridge``): a node that holds none of a query word's own tokens may stand in with the
associated ones, at ``bridge x npmi`` of their worth.

The node-token pairs are built from the ranker's postings on first use (one sort of the postings,
per process), never at index time: only questions that use the bridge pay for it.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import polars as pl

from ctxframe._rank.tokens import ENGINE

__all__ = ["Associations"]


class Associations:
    """Node-token co-occurrence over one ranker index (see the module docstring)."""

    def __init__(self, index) -> None:
        self.index = index

    @cached_property
    def pairs(self) -> pl.DataFrame:
        """``node, token``: every distinct (node, token) of the index, sorted by node."""
        ix = self.index
        v = ix._vocab
        tok = pl.int_range(v.height, dtype=pl.UInt32, eager=True)
        name = pl.DataFrame(
            {"token": tok.gather(_repeat(v["name_df"])), "node": ix._name_post}
        ).cast({"node": pl.UInt32})
        content = pl.DataFrame(
            {"token": tok.gather(_repeat(v["content_rows"])), "node": ix._c_node}
        ).cast({"node": pl.UInt32})
        return (
            pl.concat([name, content])
            .lazy()
            .unique()
            .sort("node", "token")
            .select("node", "token")
            .collect(engine=ENGINE)
        )

    @cached_property
    def _arrays(self) -> dict[str, np.ndarray]:
        """The pairs as CSR arrays both ways: per node its tokens, per token its nodes."""
        n, v = self.index.n_nodes, self.index._vocab.height
        node = self.pairs["node"].to_numpy()
        token = self.pairs["token"].to_numpy()
        by_node = np.bincount(node, minlength=n)
        by_token = np.bincount(token, minlength=v)
        order = np.argsort(token, kind="stable")
        return {
            "node_start": np.concatenate(([0], np.cumsum(by_node))),
            "node_tokens": token,
            "token_start": np.concatenate(([0], np.cumsum(by_token))),
            "token_nodes": node[order],
            "df": by_token,
            "long": self.index._vocab_token.str.len_chars().to_numpy() >= 3,
        }

    @property
    def df(self) -> np.ndarray:
        """Per token, the nodes holding it in any field."""
        return self._arrays["df"]

    def expand(
        self,
        groups: pl.DataFrame,
        *,
        terms: int = 5,
        min_count: int = 2,
        min_npmi: float = 0.2,
        max_share: float = 0.05,
        max_nodes: int = 2000,
    ) -> pl.DataFrame:
        """``qtoken, token_id, npmi, count``: the associated tokens of each query token.

        ``groups``: ``qtoken, token_id`` — each query token's own tokens (its stem group); the
        tokens of every group are excluded from every expansion. A query token held by more than
        ``max_nodes`` nodes (a common word) is not expanded."""
        schema = {
            "qtoken": pl.String,
            "token_id": pl.UInt32,
            "npmi": pl.Float64,
            "count": pl.UInt32,
        }
        ix = self.index
        n = float(ix.n_nodes)
        if groups.is_empty() or n == 0:
            return pl.DataFrame(schema=schema)
        a = self._arrays
        ts, tn, ns, nt, df = (
            a["token_start"],
            a["token_nodes"],
            a["node_start"],
            a["node_tokens"],
            a["df"],
        )
        own = np.unique(groups["token_id"].to_numpy())
        long = a["long"]
        out: dict[str, list] = {k: [] for k in schema}
        for qtoken, ids in (
            groups.group_by("qtoken", maintain_order=True).agg("token_id").iter_rows()
        ):
            ids = np.asarray(ids, dtype=np.int64)
            nodes = np.unique(np.concatenate([tn[ts[t] : ts[t + 1]] for t in ids]))
            if not nodes.size or nodes.size > max_nodes:
                continue
            starts, ends = ns[nodes], ns[nodes + 1]
            sizes = ends - starts
            flat = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
            co = np.bincount(nt[flat], minlength=df.size)
            co[own] = 0
            cand = np.flatnonzero((co >= min_count) & (df <= max_share * n) & long)
            if not cand.size:
                continue
            p_wt = co[cand] / n
            pmi = np.log(p_wt / ((nodes.size / n) * (df[cand] / n)))
            npmi = pmi / np.maximum(-np.log(p_wt), 1e-9)
            keep = npmi >= min_npmi
            cand, npmi = cand[keep], npmi[keep]
            top = np.lexsort((cand, -npmi))[:terms]
            out["qtoken"] += [qtoken] * top.size
            out["token_id"] += cand[top].tolist()
            out["npmi"] += npmi[top].tolist()
            out["count"] += co[cand[top]].tolist()
        return pl.DataFrame(out, schema=schema)


def _repeat(counts: pl.Series) -> pl.Series:
    """Positions ``i`` repeated ``counts[i]`` times (the owner of each posting)."""
    idx = pl.int_range(counts.len(), dtype=pl.UInt32, eager=True)
    out = pl.select(pl.lit(idx).repeat_by(pl.lit(counts)).explode().alias("i")).to_series()
    return out.drop_nulls().cast(pl.UInt32)

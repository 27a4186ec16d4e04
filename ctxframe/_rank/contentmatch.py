"""Content evidence of one question: where its words occur in signatures, docs and bodies.

:class:`Content` is lazy: a rule asks for the rows it needs, per **unit**:

* ``node`` — each node's own fields (a method's body belongs to the method);
* ``file`` — a file as one document: every node of the file summed (the whole file's text);
* ``symbol`` — a definition with everything nested in it (a class's text holds its methods).

Each row is one (query token, document, field) with the count of the query token's terms there
(``tf``), the document's field length (``len``), the field's average length over the unit's
documents (``avg_len``), the query token's document frequency (``df``: documents holding any
of its terms in the fields asked for), the number of documents (``n_docs``), how often the
question says it (``query_tf``) and the project-token factor (``factor``). A query token's
*terms* are the content tokens with its Snowball stem (``stemmed=True``) or itself only.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import polars as pl

from ctxframe._rank.fields import CONTENT_FIELDS, FIELDS
from ctxframe._rank.tokens import ENGINE

if TYPE_CHECKING:
    from ctxframe._rank.question import Question

__all__ = ["UNITS", "Content", "Units"]

UNITS = ("node", "file", "symbol")
_NOT_TEXT_KINDS = ("document", "section")  # prose files: left out of the file and symbol units
_NON_SYMBOLS = ("file", "module", "document", "section")
_SHIFT = 1 << 32  # two UInt32 keys as one UInt64
_ROWS = {
    "qtoken": pl.String,
    "doc_row": pl.UInt32,
    "field": pl.UInt8,
    "tf": pl.UInt32,
}


class Units:
    """Per unit: each node's document row, each document's field lengths, the averages and the
    number of documents (built on first use, once per index)."""

    def __init__(self, index) -> None:
        self.index = index
        self._totals: dict[tuple, Any] = {}

    @cached_property
    def _text_rows(self) -> pl.Series:
        """Node rows whose text belongs to the file and symbol units (prose left out)."""
        kinds = self.index.nodes["kind"]
        return pl.Series(range(kinds.len()), dtype=pl.UInt32).filter(
            ~kinds.is_in(list(_NOT_TEXT_KINDS))
        )

    @cached_property
    def membership(self) -> dict[str, pl.DataFrame]:
        """``node_row, doc_row`` per unit (a node belongs to one file, to several symbols)."""
        ix = self.index
        n = ix.n_nodes
        rows = pl.Series("node_row", range(n), dtype=pl.UInt32)
        node = pl.DataFrame({"node_row": rows, "doc_row": rows})
        text = pl.DataFrame({"node_row": self._text_rows})
        file = text.with_columns(
            doc_row=pl.lit(ix.file_rows).gather(pl.col("node_row"))
        ).drop_nulls("doc_row")
        kinds = ix.nodes["kind"]
        is_sym = ~kinds.is_in(list(_NON_SYMBOLS)) & ix.parent_rows.is_not_null()
        sym_rows = rows.filter(is_sym)
        parts, cur = [], pl.DataFrame({"node_row": sym_rows, "doc_row": sym_rows})
        while cur.height:
            parts.append(cur)
            up = ix.parent_rows.gather(cur["doc_row"])
            cur = cur.with_columns(doc_row=up).drop_nulls("doc_row")
            cur = cur.filter(is_sym.gather(cur["doc_row"]))
        symbol = pl.concat(parts) if parts else node.clear()
        return {"node": node, "file": file, "symbol": symbol}

    @cached_property
    def file_of(self) -> pl.Series:
        """Per node row, the row of the file document it belongs to (null: none, or prose)."""
        ix = self.index
        kinds = ix.nodes["kind"]
        prose = kinds.is_in(list(_NOT_TEXT_KINDS))
        return pl.select(
            pl.when(pl.lit(prose)).then(None).otherwise(pl.lit(ix.file_rows))
        ).to_series()

    def frame(self) -> pl.DataFrame:
        """The file and symbol units' field lengths and document flags, one row per node
        (``file_<field>``, ``symbol_<field>``, ``file_is_doc``, ``symbol_is_doc``): what a cached
        index reads back instead of grouping every node by its documents again."""
        n = self.index.n_nodes
        cols: dict[str, pl.Series] = {}
        for unit in ("file", "symbol"):
            cols |= {f"{unit}_{f}": s for f, s in self.lengths[unit].items()}
            is_doc = pl.Series([False] * n, dtype=pl.Boolean)
            cols[f"{unit}_is_doc"] = is_doc.scatter(self.docs[unit], True) if n else is_doc
        return pl.DataFrame(cols)

    @cached_property
    def lengths(self) -> dict[str, dict[str, pl.Series]]:
        """Per unit and field, each document's length (dense over node rows)."""
        ix = self.index
        out: dict[str, dict[str, pl.Series]] = {"node": dict(ix.field_len)}
        if (saved := ix.saved_units) is not None:
            for unit in ("file", "symbol"):
                out[unit] = {f: saved[f"{unit}_{f}"] for f in FIELDS}
            return out
        lens = pl.DataFrame({f: ix.field_len[f] for f in FIELDS}).with_row_index("node_row")
        for unit in ("file", "symbol"):
            agg = (
                self.membership[unit]
                .join(lens, on="node_row")
                .group_by("doc_row")
                .agg(pl.col(f).sum() for f in FIELDS)
            )
            full = pl.DataFrame({"doc_row": pl.Series(range(ix.n_nodes), dtype=pl.UInt32)})
            full = full.join(agg, on="doc_row", how="left").sort("doc_row").fill_null(0)
            out[unit] = {f: full[f].cast(pl.UInt32) for f in FIELDS}
        return out

    @cached_property
    def docs(self) -> dict[str, pl.Series]:
        """Per unit, the document rows."""
        if (saved := self.index.saved_units) is not None:
            rows = pl.Series("doc_row", range(self.index.n_nodes), dtype=pl.UInt32)
            out = {u: rows.filter(saved[f"{u}_is_doc"]) for u in ("file", "symbol")}
            return {"node": rows, **out}
        m = self.membership
        return {u: m[u]["doc_row"].unique().sort() for u in UNITS}

    def avg_len(self, unit: str, field: str) -> float:
        """Average field length over the unit's documents holding that field."""
        key = ("avg", unit, field)
        if key not in self._totals:
            s = self.lengths[unit][field].gather(self.docs[unit])
            s = s.filter(s > 0)
            self._totals[key] = float(s.mean()) if s.len() else 0.0
        return self._totals[key]

    def flat_lengths(self, unit: str) -> pl.Series | None:
        """The unit's field lengths as one Series, field ``f`` of document ``d`` at
        ``f x n_nodes + d`` (None for an empty index)."""
        key = ("flat", unit)
        if key not in self._totals:
            lens = self.lengths[unit]
            n = self.index.n_nodes
            self._totals[key] = pl.concat([lens[f] for f in FIELDS]) if n else None
        return self._totals[key]

    def norms(self, unit: str, fields: Sequence[int], b: float) -> pl.Series:
        """BM25F's length normalisation ``1 - b + b x len / avg_len`` of every document of the
        unit in each of ``fields``, field ``fields[i]`` of document ``d`` at ``i x n_nodes +
        d``, computed once per index, unit, fields and ``b``."""
        key = ("norm", unit, tuple(fields), b)
        if key not in self._totals:
            lens = self.lengths[unit]
            self._totals[key] = pl.concat(
                [
                    1
                    - b
                    + b
                    * lens[FIELDS[f]].cast(pl.Float64)
                    / max(self.avg_len(unit, FIELDS[f]), 1e-9)
                    for f in fields
                ]
            )
        return self._totals[key]

    def total_length(self, unit: str, fields: Sequence[int]) -> tuple[pl.Series, float]:
        """Each document's length over ``fields`` together (dense over node rows), and the
        average over the unit's documents."""
        key = (unit, tuple(fields))
        if key not in self._totals:
            lens = self.lengths[unit]
            total = pl.Series("len", [0.0] * self.index.n_nodes, dtype=pl.Float64)
            for f in fields:
                total = total + lens[FIELDS[f]].cast(pl.Float64)
            docs = self.docs[unit]
            avg = float(total.gather(docs).mean()) if docs.len() else 0.0
            self._totals[key] = (total, avg)
        return self._totals[key]


class Content:
    """Content evidence of one question over one index (see the module docstring)."""

    def __init__(
        self,
        index,
        question: Question,
        *,
        project: set[str],
        project_factor: float,
        terms: pl.DataFrame | None = None,
    ) -> None:
        self.index = index
        self.question = question
        self.project = project
        self.project_factor = project_factor
        self._cache: dict[tuple, pl.DataFrame] = {}
        if terms is not None:  # given: each query token reaches exactly these tokens
            self._cache[("terms", True, False)] = terms

    def terms(self, *, stemmed: bool = True, stopwords: bool = False) -> pl.DataFrame:
        """``qtoken, token_id``: the vocabulary tokens each query token reaches."""
        key = ("terms", stemmed, stopwords)
        if key not in self._cache:
            self._cache[key] = self._terms(stemmed, stopwords)
        return self._cache[key]

    def _terms(self, stemmed: bool, stopwords: bool) -> pl.DataFrame:
        q = self.question
        toks = q.all_tokens if stopwords else q.tokens
        distinct = sorted(set(toks) - (set() if stopwords else q.intent_words))
        if stemmed:
            from ctxframe._rank.question import stems

            return self.index.stem_codes(dict(zip(distinct, stems(distinct), strict=True)))
        codes = self.index.token_codes(distinct)
        return pl.DataFrame(
            {"qtoken": list(codes), "token_id": list(codes.values())},
            schema={"qtoken": pl.String, "token_id": pl.UInt32},
        )

    def _raw(
        self, fields: Sequence[int], stemmed: bool, stopwords: bool, max_share: float | None
    ) -> pl.LazyFrame | None:
        """``qtoken, doc_row, field, tf`` per content posting the question's terms reach (a
        query token's stem variants apart), or None when there is none."""
        ix = self.index
        terms = self.terms(stemmed=stemmed, stopwords=stopwords)
        if terms.height:
            terms = terms.with_columns(
                start=ix._c_start.gather(terms["token_id"]),
                rows=ix._c_rows.gather(terms["token_id"]),
                cdf=ix._c_df.gather(terms["token_id"]),
            ).filter(pl.col("rows") > 0)
            if max_share is not None:
                terms = terms.filter(pl.col("cdf") <= max_share * ix.n_nodes)
        if not terms.height:
            return None
        return (
            terms.lazy()
            .select("qtoken", _p=pl.int_ranges("start", pl.col("start") + pl.col("rows")))
            .explode("_p")
            .select(
                "qtoken",
                doc_row=pl.lit(ix._c_node).gather(pl.col("_p")),
                field=pl.lit(ix._c_field).gather(pl.col("_p")),
                tf=pl.lit(ix._c_tf).gather(pl.col("_p")).cast(pl.UInt32),
            )
            .filter(pl.col("field").is_in(list(fields)))
        )

    @cached_property
    def _tokens(self) -> list[str]:
        """The question's distinct query tokens, sorted: ``q`` codes are positions here."""
        return sorted(self.question.counts)

    def _coded(self, fields: Sequence[int], max_share: float | None) -> pl.DataFrame | None:
        """``q, doc_row, field, tf`` per content posting the question's (stemmed) terms reach,
        ``q`` the query token's position in :attr:`_tokens` (an integer key groups faster than
        the string); shared by the node and file units of one question."""
        key = ("coded", tuple(fields), max_share)
        if key in self._cache:
            return self._cache[key]
        ix = self.index
        terms = self.terms(stemmed=True, stopwords=False)
        out = None
        if terms.height:
            codes = {t: i for i, t in enumerate(self._tokens)}
            tid, p = pl.col("token_id"), pl.col("_p")
            keep = pl.lit(ix._c_rows).gather(tid) > 0
            if max_share is not None:
                keep = keep & (pl.lit(ix._c_df).gather(tid) <= max_share * ix.n_nodes)
            start = pl.lit(ix._c_start).gather(tid)
            raw = (
                terms.lazy()
                .filter(keep)
                .select(
                    q=pl.col("qtoken").replace_strict(codes, return_dtype=pl.UInt32),
                    _p=pl.int_ranges(start, start + pl.lit(ix._c_rows).gather(tid)),
                )
                .explode("_p")
                .select(
                    "q",
                    doc_row=pl.lit(ix._c_node).gather(p),
                    field=pl.lit(ix._c_field).gather(p),
                    tf=pl.lit(ix._c_tf).gather(p).cast(pl.UInt32),
                )
            )
            if set(fields) != set(CONTENT_FIELDS):  # the postings hold content fields only
                raw = raw.filter(pl.col("field").is_in(list(fields)))
            out = raw.collect(engine=ENGINE)
            if not out.height:
                out = None
        self._cache[key] = out
        return out

    def bm25f(
        self,
        *,
        unit: str,
        fields: Sequence[int],
        field_weights: dict[int, float],
        k1: float,
        b: float,
        max_share: float | None = None,
        token_weights: dict[str, float] | None = None,
        per_token: bool = False,
        codes: bool = False,
    ) -> pl.DataFrame:
        """BM25F of ``unit`` (``node`` or ``file``) documents straight from the postings: the
        same figures as ``ctxframe._rank.rules.bm25f(self.rows(...))`` (the field-normalised
        counts are linear, so each posting is normalised before one grouping by query token and
        document instead of after two). ``per_token`` with ``codes``: each query token as its
        position ``q`` (UInt32) among the question's sorted distinct tokens, not ``qtoken``."""
        if unit not in ("node", "file"):
            raise ValueError(f"unit {unit!r}: use rows() and rules.bm25f")
        schema = {"doc_row": pl.UInt32, "score": pl.Float64}
        first = {"q": pl.UInt32} if codes else {"qtoken": pl.String}
        out_schema = (first | schema) if per_token else schema
        raw = self._coded(fields, max_share)
        if raw is None:
            return pl.DataFrame(schema=out_schema)
        ix, units = self.index, self.index.units
        n = ix.n_nodes
        lazy = raw.lazy()
        if unit == "file":
            lazy = lazy.with_columns(
                doc_row=pl.lit(units.file_of).gather(pl.col("doc_row"))
            ).drop_nulls("doc_row")
        norms = units.norms(unit, fields, b)
        field = pl.col("field")
        fw = [float(field_weights.get(f, 0.0)) for f in range(len(FIELDS))]
        w = pl.lit(pl.Series(fw, dtype=pl.Float64)).gather(field)
        slots = [list(fields).index(f) if f in fields else 0 for f in range(len(FIELDS))]
        slot = pl.lit(pl.Series(slots, dtype=pl.UInt32)).gather(field)
        norm = pl.lit(norms).gather(slot * n + pl.col("doc_row"))
        # per query token (by code): its weight and project factor
        tokens = self._tokens
        qw = [float(token_weights.get(t, 1.0)) for t in tokens] if token_weights else None
        factor = (
            [self.project_factor if t in self.project else 1.0 for t in tokens]
            if self.project
            else None
        )
        q, t = pl.col("q"), pl.col("_t")
        df = pl.len().over("q").cast(pl.Float64)
        idf = (1 + (float(units.docs[unit].len()) - df + 0.5) / (df + 0.5)).log()
        score = idf * t / (k1 + t)
        score = score * (pl.lit(pl.Series(factor, dtype=pl.Float64)).gather(q) if factor else 1.0)
        score = score * (pl.lit(pl.Series(qw, dtype=pl.Float64)).gather(q) if qw else 1.0)
        # one integer key per (query token, document): q x 2^32 + doc_row
        scored = (
            lazy.select(
                _k=pl.col("q").cast(pl.UInt64) * _SHIFT + pl.col("doc_row"),
                _t=w * pl.col("tf").cast(pl.Float64) / norm,
            )
            .group_by("_k")
            .agg(pl.col("_t").sum())
            .select(
                q=(pl.col("_k") // _SHIFT).cast(pl.UInt32),
                doc_row=(pl.col("_k") % _SHIFT).cast(pl.UInt32),
                _t="_t",
            )
            .with_columns(score=score)
        )
        if per_token and codes:
            out = scored.select("q", "doc_row", "score")
        elif per_token:
            names = pl.lit(pl.Series(tokens, dtype=pl.String))
            out = scored.select(qtoken=names.gather(q), doc_row="doc_row", score="score")
        else:
            out = scored.group_by("doc_row").agg(pl.col("score").sum())
        return out.collect(engine=ENGINE)

    def postings(
        self,
        *,
        fields: Sequence[int] = CONTENT_FIELDS,
        stemmed: bool = True,
        stopwords: bool = False,
        max_share: float | None = None,
    ) -> pl.DataFrame:
        """``qtoken, doc_row (= node row), field, tf`` straight from the content postings.

        ``max_share``: a term in more than this share of nodes is left out (it says nothing and
        costs the most rows)."""
        key = ("post", tuple(fields), stemmed, stopwords, max_share)
        if key in self._cache:
            return self._cache[key]
        raw = self._raw(fields, stemmed, stopwords, max_share)
        if raw is None:
            out = pl.DataFrame(schema=_ROWS)
        else:
            out = raw.group_by("qtoken", "doc_row", "field").agg(pl.col("tf").sum())
            out = out.collect(engine=ENGINE)
        self._cache[key] = out
        return out

    def rows(
        self,
        *,
        unit: str = "node",
        fields: Sequence[int] = CONTENT_FIELDS,
        stemmed: bool = True,
        stopwords: bool = False,
        max_share: float | None = None,
    ) -> pl.DataFrame:
        """One row per (query token, document, field) of ``unit`` (see the module docstring)."""
        if unit not in UNITS:
            raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(UNITS)}")
        key = ("rows", unit, tuple(fields), stemmed, stopwords, max_share)
        if key in self._cache:
            return self._cache[key]
        ix = self.index
        units = ix.units
        post = self.postings(
            fields=fields, stemmed=stemmed, stopwords=stopwords, max_share=max_share
        )
        if unit == "file":  # a node belongs to at most one file: a gather, not a join
            post = (
                post.with_columns(doc_row=pl.lit(units.file_of).gather(pl.col("doc_row")))
                .drop_nulls("doc_row")
                .group_by("qtoken", "doc_row", "field")
                .agg(pl.col("tf").sum())
            )
        elif unit != "node":
            post = (
                post.rename({"doc_row": "node_row"})
                .join(units.membership[unit], on="node_row")
                .group_by("qtoken", "doc_row", "field")
                .agg(pl.col("tf").sum())
            )
        q = self.question
        counts = q.counts if not stopwords else _counts(q.all_tokens)
        flat = units.flat_lengths(unit)
        avg = {f: units.avg_len(unit, FIELDS[f]) for f in fields}
        n = ix.n_nodes
        out = post.with_columns(
            df=pl.col("doc_row").n_unique().over("qtoken").cast(pl.UInt32),
            len=(
                pl.lit(flat).gather(pl.col("field").cast(pl.UInt32) * n + pl.col("doc_row"))
                if flat is not None
                else pl.lit(0, pl.UInt32)
            ),
            avg_len=pl.col("field").replace_strict(avg, default=0.0, return_dtype=pl.Float64),
            n_docs=pl.lit(units.docs[unit].len(), pl.UInt32),
            query_tf=pl.col("qtoken").replace_strict(counts, default=1, return_dtype=pl.UInt32),
            factor=(
                pl.when(pl.col("qtoken").is_in(sorted(self.project)))
                .then(self.project_factor)
                .otherwise(1.0)
                if self.project
                else pl.lit(1.0)
            ),
        )
        self._cache[key] = out
        return out


def _counts(tokens: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tokens:
        out[t] = out.get(t, 0) + 1
    return out

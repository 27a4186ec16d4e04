"""The query pipeline: a parsed question -> name tiers and content evidence -> rule -> intent ->
hits, each stage a method of :class:`RankIndex` reading the same :class:`Question`.

Name matching (seed 000's tiers) works on the vocabulary (unique tokens of the ``name``,
``qualname`` and ``path`` fields), never node by node:

* **named** (tier 0): the stripped query equals a node's id, label or qualname
  (case-insensitively; boundary nodes such as ``env:PAYMENTS_API_KEY`` match on their label
  ``PAYMENTS_API_KEY``), or the query's tokens are exactly the label's tokens (``usage reporter``
  names ``UsageReporter``). Named hits sort above every scored row by the sort key.
* **exact** (tier 1): the query token is a name token.
* **prefix** (tier 2): the query token (>= 3 chars) is a proper prefix of a name token
  (``refund`` -> ``refunds``, ``refunding``). One direction only.
* **stem** (tier 3): the query token and a name token have the same Snowball English stem
  (``hostnames`` -> ``hostname``, ``grouping`` -> ``groupby``'s ``group``), when neither exact
  nor prefix.
* **trigram** (tier 4): Sørensen–Dice of the trigram sets (tokens padded with two spaces on
  both sides, so ``refnud`` ~ ``refund`` = 0.5) >= the rule's ``dice`` (0.5).

Content (``signature``, ``doc``, ``body``) is matched by stem: a query token reaches every
content token with its stem (:class:`ctxframe._rank.contentmatch.Content`); rules that read
content (``reads_content``) get it as a second argument.

After the rule the pipeline applies the intent multipliers (from the rule's ``stub``/``test``/
``doc`` attributes): module stubs x0.25 unless the question says import/module, test files x0.5
unless it says test, doc nodes x0.5 unless it says doc/spec/readme/adr; then the scope levers:
``within`` keeps only matching paths, ``deprioritize`` multiplies matching paths by
``deprioritize_factor`` (0.5), ``kinds`` keeps only nodes of those kinds. ``project_tokens`` (the
project's own name) weigh ``project_factor`` (0.1) as much, in the name and content tables.
Rows sort by (named first, score desc, id asc): same store, same query, same answer.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import polars as pl

from ctxframe._core.errors import BadInput, CtxframeError
from ctxframe._core.paths import glob_to_regex, is_test_path_expr
from ctxframe._core.schema import BOUNDARY_KINDS, NODE_KINDS, TOKENS
from ctxframe._rank import rules as _rules
from ctxframe._rank.contentmatch import Content, Units
from ctxframe._rank.evidence import node_parts
from ctxframe._rank.fields import FIELDS, NAME, NAME_FIELDS, TokenTable, sorted_tokens, token_table
from ctxframe._rank.parts import Trace
from ctxframe._rank.question import Question, stems
from ctxframe._rank.registry import resolve
from ctxframe._rank.tokens import ENGINE, tokenize, tokenize_expr, trigram_table, trigrams

__all__ = ["RankIndex", "Ranking"]

NAMED, EXACT, PREFIX, STEM, TRIGRAM = 0, 1, 2, 3, 4
SCORE_DECIMALS = 6

DOC_KINDS = ("section", "document")
LINK_KINDS = ("calls", "reads", "uses", "extends", "implements")  # what graph evidence follows
KNOWN_KINDS = frozenset(NODE_KINDS) | frozenset(BOUNDARY_KINDS) | {"command"}
UNRANKED = ("script",)  # no words of their own (a `__main__` block's are its file's)
_CALLABLE = ("function", "method", "lambda")  # definitions whose nested ones fold into them
STUB_PREFIX = "module://"

DEFAULT_DEPRIORITIZE_FACTOR = 0.5
DEFAULT_PROJECT_FACTOR = 0.1

HIT_COLUMNS = (
    "rank",
    "id",
    "kind",
    "label",
    "qualname",
    "path",
    "line_start",
    "line_end",
    "signature",
    "doc",
    "score",
    "tier",
)
# Frames of the prepared state (`state()`), cached beside the store (ctxframe._store.cache).
STATE_TABLES = (
    "vocab",
    "name_postings",
    "content_postings",
    "node_attrs",
    "trigrams",
    "names",
    "links",
    "units",
)


def _valid_regex(regex: str) -> str | None:
    """Why Polars cannot use a regex (a glob's bad range, `[z-a]`), or None."""
    try:
        pl.Series([""], dtype=pl.String).str.contains(regex)
    except pl.exceptions.PolarsError:
        return "not a valid pattern (a bad [...] range?)"
    return None


_WARNED: set[str] = set()


def _globs_expr(globs: Iterable[str], path: pl.Expr) -> pl.Expr | None:
    """Paths matching any glob; a glob that is no valid pattern is skipped with one warning
    line (a configuration's `deprioritize`)."""
    regexes = []
    for g in globs:
        if not g or not g.strip():
            continue
        r = glob_to_regex(g)
        why = _valid_regex(r)
        if why is None:
            regexes.append(r)
        elif g not in _WARNED:
            _WARNED.add(g)
            print(f"ctxframe: warning: deprioritize glob {g!r} skipped: {why}", file=sys.stderr)
    if not regexes:
        return None
    return path.str.contains("|".join(f"(?:{r})" for r in regexes)).fill_null(False)


def _successor(s: str) -> str:
    """Smallest string greater than every string that starts with ``s``."""
    while s:
        last = ord(s[-1])
        if last < 0x10FFFF:  # surrogates cannot be encoded: the next code point is U+E000
            return s[:-1] + chr(0xE000 if 0xD7FF <= last < 0xE000 else last + 1)
        s = s[:-1]
    return "\U0010ffff" * 2


def _dense(keys: pl.Series, values: pl.Series, n: int, dtype) -> pl.Series:
    """A length-``n`` Series holding ``values`` at positions ``keys`` and 0 elsewhere."""
    out = pl.zeros(n, dtype=dtype, eager=True)
    if keys.len():
        out = out.scatter(keys, values.cast(dtype))
    return out


def _as_table(nodes: pl.DataFrame, tokens: Any, vocab: pl.DataFrame | None) -> TokenTable:
    """The token table from what a caller has: nothing (made from the nodes, no bodies), the
    stored coded table with its vocabulary, a TokenTable, or ``node_id, token`` strings (a
    hand-made table: every token a ``name`` token)."""
    if tokens is None:
        return token_table(nodes)
    if isinstance(tokens, TokenTable):
        return tokens
    if vocab is not None and "node" in tokens.columns:
        return TokenTable(tokens, vocab)
    counts = tokens.select(
        "node_id",
        field=pl.col("field").cast(pl.UInt8)
        if "field" in tokens.columns
        else pl.lit(NAME, pl.UInt8),
        token="token",
        tf=pl.col("tf").cast(pl.UInt32) if "tf" in tokens.columns else pl.lit(1, pl.UInt32),
    )
    counts = counts.group_by("node_id", "field", "token").agg(pl.col("tf").sum())
    rows = nodes.select(node_id="id", node=pl.int_range(nodes.height, dtype=pl.UInt32))
    counts = counts.join(rows, on="node_id")
    vocab_s = counts["token"].unique().sort()
    table = pl.DataFrame(
        {
            "node": counts["node"],
            "field": counts["field"],
            "token": vocab_s.search_sorted(counts["token"]).cast(pl.UInt32),
            "tf": counts["tf"].clip(upper_bound=65_535).cast(pl.UInt16),
        }
    ).pipe(sorted_tokens)
    return TokenTable(table.cast(dict(TOKENS)), pl.DataFrame({"token": vocab_s}))


@dataclass
class Ranking:
    """The ranked hits of one question (``HIT_COLUMNS``), their node rows, how many nodes scored
    in all, the rule's name and the query's tokens."""

    query: str
    hits: pl.DataFrame
    rows: pl.Series
    total: int
    rule: str
    tokens: list[str] = field(default_factory=list)
    question: Question | None = None
    evidence: pl.DataFrame | None = None  # explain=True: why each hit ranks where it does
    pre: pl.Series | None = None  # explain=True: each hit's score before the intent multipliers
    parts: pl.DataFrame | None = None  # parts=True: each hit's part columns (RankIndex.rank)


def _hit_parts(ranking: Ranking, trace: Trace) -> pl.DataFrame:
    """Per hit of ``ranking``: ``node_row``, the rule's part columns (``other`` = its whole
    score when it records no parts), ``graph`` (what the graph stage added), ``pre`` (the score
    before the intent multipliers) and ``named``."""
    from ctxframe._rank.parts import add_missing

    hits = pl.DataFrame({"node_row": ranking.rows, "named": ranking.hits["tier"] == NAMED})
    if trace.nodes is not None:
        wide = trace.nodes
    elif trace.scores is not None:
        wide = trace.scores.rename({"score": "other"})
    else:
        wide = pl.DataFrame(schema={"node_row": pl.UInt32})
    out = add_missing(hits.join(wide, on="node_row", how="left", maintain_order="left"))
    graph = (
        trace.graph.group_by("node_row").agg(graph=pl.col("contribution").sum())
        if trace.graph is not None
        else pl.DataFrame(schema={"node_row": pl.UInt32, "graph": pl.Float64})
    )
    pre = ranking.pre if ranking.pre is not None else ranking.hits["score"]
    return (
        out.join(graph, on="node_row", how="left", maintain_order="left")
        .with_columns(graph=pl.col("graph").fill_null(0.0), pre=pre)
    )


class RankIndex:
    """Prepared ranking state for one store, built once and reused by every query.

    Holds the vocabulary (sorted, with each token's stem and its ``name`` and content document
    frequencies), postings (token -> nodes) for the name fields and for the content fields (with
    field and count), per node and field the text length, the name-token trigram table, intent
    flags, each node's file, and the lowercased name table for named hits. ``nodes`` must be
    sorted by id (as stored) when ``tokens`` is the stored coded table.
    """

    source_root: str | None = None  # the repository (a dense rule reads node source there)
    vector_dir: str | None = None  # where a dense rule keeps its vectors (the store version's)

    def __init__(
        self,
        nodes: pl.DataFrame,
        tokens: Any = None,
        vocab: pl.DataFrame | None = None,
        edges: pl.DataFrame | pl.LazyFrame | None = None,
    ):
        table = _as_table(nodes, tokens, vocab)
        self._set_nodes(nodes)
        n, t = self.n_nodes, table.tokens
        voc = table.vocab["token"]
        v = voc.len()
        is_name = pl.col("field").is_in(list(NAME_FIELDS))

        name = t.lazy().filter(is_name).select("token", "node").unique().sort("token", "node")
        name = name.collect(engine=ENGINE)
        per_tok = name.group_by("token").agg(df=pl.len())
        name_df = _dense(per_tok["token"], per_tok["df"], v, pl.UInt32)
        per_node = name.group_by("node").agg(n=pl.len())
        name_len = _dense(per_node["node"], per_node["n"], n, pl.UInt32)

        content = (
            t.lazy()
            .filter(~is_name)
            .select("token", "node", "field", "tf")
            .sort("token", "node", "field")
            .collect(engine=ENGINE)
        )
        per_tok = content.group_by("token").agg(rows=pl.len(), df=pl.col("node").n_unique())
        c_rows = _dense(per_tok["token"], per_tok["rows"], v, pl.UInt32)
        c_df = _dense(per_tok["token"], per_tok["df"], v, pl.UInt32)
        lens = t.group_by("node", "field").agg(pl.col("tf").cast(pl.UInt32).sum())
        flat = (lens["node"].cast(pl.UInt32) * len(FIELDS) + lens["field"]).alias("k")
        field_len = _dense(flat, lens["tf"], n * len(FIELDS), pl.UInt32)

        st = stems(voc.to_list())
        vocab_state = pl.DataFrame(
            {
                "token": voc,
                "stem": pl.Series(st, dtype=pl.String),
                "name_df": name_df,
                "name_start": (name_df.cum_sum() - name_df).cast(pl.UInt32),
                "content_rows": c_rows,
                "content_df": c_df,
                "content_start": (c_rows.cum_sum() - c_rows).cast(pl.UInt32),
            }
        )
        tri = (
            trigram_table(
                vocab_state.with_row_index("token_id").filter(pl.col("name_df") > 0),
            )
            .select("tri", "token_id")
            .sort("tri", "token_id")
        )
        attrs = self._node_attrs(nodes, name_len, field_len)
        self._set_state(
            {
                "vocab": vocab_state,
                "name_postings": name.select(pl.col("node").alias("_idx")),
                "content_postings": content.select("node", "field", "tf"),
                "node_attrs": attrs,
                "trigrams": tri,
                "names": self._names_table(nodes),
                "links": self._links_table(nodes, edges),
            }
        )
        self._state["units"] = self.units.frame()
        self.saved_units = self._state["units"]

    # ----------------------------------------------------------------- build

    def _set_nodes(self, nodes: pl.DataFrame) -> None:
        self.nodes = nodes
        self.n_nodes = nodes.height
        self._ids, self._labels, self._paths = nodes["id"], nodes["label"], nodes["path"]
        self._kinds = nodes["kind"]
        self._unranked = [k for k in UNRANKED if (self._kinds == k).any()]

    @staticmethod
    def _node_attrs(nodes: pl.DataFrame, name_len: pl.Series, field_len: pl.Series) -> pl.DataFrame:
        """Per node: intent flags, its file's row, its parent's row, and per field its length
        (``len_<field>``)."""
        n = nodes.height
        path = pl.col("path")
        rows = nodes.select("id", "kind", _r=pl.int_range(n, dtype=pl.UInt32))
        files = rows.filter(pl.col("kind") == "file").select(path="id", file_row="_r")
        rows = rows.drop("kind")
        flags = nodes.select(
            stub=pl.col("id").str.starts_with(STUB_PREFIX).fill_null(False),
            test=is_test_path_expr(path),
            doc=pl.col("kind").is_in(DOC_KINDS).fill_null(False),
            path=path,
            parent=pl.col("parent"),
        )
        flags = (
            flags.with_row_index("_i")
            .join(files, on="path", how="left")
            .join(rows.rename({"id": "parent", "_r": "parent_row"}), on="parent", how="left")
            .sort("_i")
        )
        wide = field_len.reshape((n, len(FIELDS))) if n else None
        lens = {
            f"len_{f}": (wide.arr.get(i) if wide is not None else pl.Series([], dtype=pl.UInt32))
            for i, f in enumerate(FIELDS)
        }
        return pl.DataFrame(
            {
                "stub": flags["stub"],
                "test": flags["test"],
                "doc": flags["doc"],
                "file_row": flags["file_row"],
                "parent_row": flags["parent_row"],
                "name_len": name_len,
                **lens,
            }
        )

    @staticmethod
    def _links_table(
        nodes: pl.DataFrame, edges: pl.DataFrame | pl.LazyFrame | None
    ) -> pl.DataFrame:
        """``src, dst`` node rows of the references graph evidence reads (calls, reads, uses,
        extends, implements; EXTRACTED or INFERRED), one row per distinct pair."""
        schema = {"src": pl.UInt32, "dst": pl.UInt32}
        if edges is None or nodes.is_empty():
            return pl.DataFrame(schema=schema)
        rows = nodes.lazy().select("id", _r=pl.int_range(nodes.height, dtype=pl.UInt32))
        return (
            edges.lazy()
            .filter(
                pl.col("kind").is_in(list(LINK_KINDS))
                & pl.col("confidence").is_in(["EXTRACTED", "INFERRED"])
                & pl.col("dst").is_not_null()
            )
            .select("src", "dst")
            .join(rows.rename({"id": "src", "_r": "s"}), on="src")
            .join(rows.rename({"id": "dst", "_r": "d"}), on="dst")
            .select(src="s", dst="d")
            .filter(pl.col("src") != pl.col("dst"))
            .unique()
            .sort("dst", "src")
            .collect(engine=ENGINE)
            .cast(schema)
        )

    @staticmethod
    def _names_table(nodes: pl.DataFrame) -> pl.DataFrame:
        idx = pl.int_range(nodes.height, dtype=pl.UInt32)
        names = pl.concat(
            [
                nodes.select(name=pl.col(c).str.strip_chars().str.to_lowercase(), _idx=idx)
                for c in ("id", "label", "qualname")
            ]
            + [nodes.select(name=tokenize_expr(pl.col("label")).list.join(" "), _idx=idx)]
        )
        names = names.filter(pl.col("name").is_not_null() & (pl.col("name") != "")).unique()
        return names.sort("name", "_idx")

    def _set_state(self, state: dict[str, pl.DataFrame]) -> None:
        v, a = state["vocab"], state["node_attrs"]
        self._vocab = v
        self._vocab_token = v["token"]
        self._name_df, self._name_start = v["name_df"], v["name_start"]
        self._c_rows, self._c_df, self._c_start = (
            v["content_rows"],
            v["content_df"],
            v["content_start"],
        )
        by_stem = v.select("stem", code=pl.int_range(v.height, dtype=pl.UInt32)).sort(
            "stem", "code"
        )
        self._stem_sorted, self._stem_code = by_stem["stem"], by_stem["code"]
        self._name_post = state["name_postings"]["_idx"]
        cp = state["content_postings"]
        self._c_node, self._c_field, self._c_tf = cp["node"], cp["field"], cp["tf"]
        self._attrs = a
        self._is_stub, self._is_test, self._is_doc = a["stub"], a["test"], a["doc"]
        self._file_row, self._parent_row = a["file_row"], a["parent_row"]
        self._name_len = a["name_len"].cast(pl.Float64)
        n = self.n_nodes
        self.avg_doc_len = float(self._name_post.len()) / n if n else 0.0
        self.field_len = {f: a[f"len_{f}"] for f in FIELDS}
        self.avg_field_len = {
            f: (float(s.filter(s > 0).mean() or 0.0) if s.len() else 0.0)
            for f, s in self.field_len.items()
        }
        tri = state["trigrams"]
        self._tri_tok = tri["token_id"]
        self._n_tri = _dense(
            *(lambda g: (g["token_id"], g["len"]))(tri.group_by("token_id").len()),
            v.height,
            pl.UInt32,
        )
        self._tri_sorted = tri["tri"]
        self._state = state
        names = state["names"]
        self._names, self._name_idx = names["name"], names["_idx"]
        self._links = state["links"]
        self.saved_units: pl.DataFrame | None = state.get("units")

    # ----------------------------------------------------------------- cache

    def state(self) -> dict[str, pl.DataFrame]:
        """Everything built from the store, as frames, so a later process can skip building."""
        return dict(self._state)

    @classmethod
    def from_state(cls, nodes: pl.DataFrame, state: dict[str, pl.DataFrame]) -> RankIndex:
        """The index `state()` described, over the same nodes (a cache read back)."""
        self = cls.__new__(cls)
        self._set_nodes(nodes)
        self._set_state(state)
        return self

    # ----------------------------------------------------------------- lookups

    def named(self, text: str | Question) -> pl.Series:
        """Row indices of the nodes the whole query names (tier 0)."""
        q = text if isinstance(text, Question) else Question.parse(text)
        keys = {q.text.strip().lower(), " ".join(q.all_tokens)} - {""}
        if not keys or self._names.is_empty():
            return pl.Series("_idx", [], dtype=pl.UInt32)
        k = pl.Series(sorted(keys), dtype=pl.String)
        lo = self._names.search_sorted(k, side="left")
        hi = self._names.search_sorted(k, side="right")
        found = [i for a, b in zip(lo.to_list(), hi.to_list(), strict=True) for i in range(a, b)]
        if not found:
            return pl.Series("_idx", [], dtype=pl.UInt32)
        return self._name_idx.gather(found).unique().sort().alias("_idx")

    def _bisect(self, tokens: list[str]) -> tuple[list[int], list[bool]]:
        """Per token, where it falls in the sorted vocabulary and whether it is there."""
        vocab = self._vocab_token
        if not tokens or vocab.is_empty():
            return [0] * len(tokens), [False] * len(tokens)
        probe = pl.Series(tokens, dtype=pl.String)
        at = vocab.search_sorted(probe, side="left")
        there = (vocab.gather(at.clip(upper_bound=vocab.len() - 1)) == probe) & (at < vocab.len())
        return at.to_list(), there.to_list()

    def token_codes(self, tokens: Iterable[str]) -> dict[str, int]:
        """Vocabulary codes of the tokens the vocabulary holds."""
        toks = list(dict.fromkeys(tokens))
        at, there = self._bisect(toks)
        return {t: i for t, i, ok in zip(toks, at, there, strict=True) if ok}

    def _tri_spans(self, grams: list[str]) -> tuple[list[int], list[int]]:
        """Per trigram, the row range of the trigram table holding it (empty: none)."""
        if not grams:
            return [], []
        probe = pl.Series(grams, dtype=pl.String)
        lo = self._tri_sorted.search_sorted(probe, side="left").to_list()
        hi = self._tri_sorted.search_sorted(probe, side="right").to_list()
        return lo, hi

    def stem_codes(self, stem_of: dict[str, str]) -> pl.DataFrame:
        """``qtoken, token_id``: every vocabulary token sharing each query token's stem."""
        if not stem_of or self._stem_sorted.is_empty():
            return pl.DataFrame(schema={"qtoken": pl.String, "token_id": pl.UInt32})
        q = pl.Series(list(stem_of.values()), dtype=pl.String)
        lo = self._stem_sorted.search_sorted(q, side="left")
        hi = self._stem_sorted.search_sorted(q, side="right")
        return (
            pl.LazyFrame({"qtoken": list(stem_of), "lo": lo, "hi": hi})
            .select("qtoken", r=pl.int_ranges("lo", "hi", dtype=pl.UInt32))
            .explode("r")
            .drop_nulls("r")
            .select("qtoken", token_id=pl.lit(self._stem_code).gather(pl.col("r")))
            .collect(engine=ENGINE)
        )

    def _vocab_matches(
        self, q: Question, *, fuzzy: bool, dice: float, min_prefix: int, trigram: bool = True
    ) -> pl.LazyFrame:
        """(qtoken, token_id, tier, dice) for every name token each query token matches.

        Exact and prefix matches are ranges of the sorted vocabulary found by bisection; stem
        matches share the query token's stem; trigram candidates share trigrams with it."""
        exact_q, exact_t = [], []
        pre_q, pre_lo, pre_hi = [], [], []
        tri: dict[str, list] = {k: [] for k in ("qtoken", "nq", "lo", "hi", "a", "b")}
        toks = sorted(q.counts)
        fuzzed = [t for t in toks if fuzzy and len(t) >= min_prefix]
        at, there = self._bisect(toks + [_successor(t) for t in fuzzed])
        n = len(toks)
        lo_of = dict(zip(toks, at[:n], strict=True))
        hi_of = dict(zip(fuzzed, at[n:], strict=True))
        grams_of = {t: sorted(trigrams(t)) if trigram else [] for t in fuzzed}
        flat = [g for t in fuzzed for g in grams_of[t]]
        spans = iter(zip(*self._tri_spans(flat), strict=True))
        for tok, is_exact in zip(toks, there[:n], strict=True):
            lo = lo_of[tok]
            if is_exact:
                exact_q.append(tok)
                exact_t.append(lo)
            if tok not in hi_of:
                continue
            hi = hi_of[tok]
            plo = lo + 1 if is_exact else lo
            if hi > plo:
                pre_q.append(tok)
                pre_lo.append(plo)
                pre_hi.append(hi)
            grams = grams_of[tok]
            for a, b in (next(spans) for _ in grams):
                if b > a:
                    for key, val in zip(tri, (tok, len(grams), lo, hi, a, b), strict=True):
                        tri[key].append(val)

        u32 = pl.UInt32
        schema = {"qtoken": pl.String, "token_id": u32, "tier": pl.Int8, "dice": pl.Float64}
        parts = [
            pl.LazyFrame(
                {"qtoken": exact_q, "token_id": exact_t},
                schema={"qtoken": pl.String, "token_id": u32},
            ).with_columns(tier=pl.lit(EXACT, pl.Int8), dice=pl.lit(1.0))
        ]
        if pre_q:
            parts.append(
                pl.LazyFrame(
                    {"qtoken": pre_q, "lo": pre_lo, "hi": pre_hi},
                    schema={"qtoken": pl.String, "lo": u32, "hi": u32},
                )
                .select("qtoken", token_id=pl.int_ranges("lo", "hi", dtype=u32))
                .explode("token_id")
                .with_columns(tier=pl.lit(PREFIX, pl.Int8), dice=pl.lit(1.0))
            )
        if fuzzy:
            long_enough = {t: s for t, s in q.stems.items() if len(t) >= min_prefix}
            st = self.stem_codes(long_enough)
            if st.height:
                parts.append(st.lazy().with_columns(tier=pl.lit(STEM, pl.Int8), dice=pl.lit(1.0)))
        if tri["qtoken"]:
            sim = 2 * pl.col("shared").cast(pl.Float64) / (pl.col("nq") + pl.col("nt"))
            outside = (pl.col("token_id") < pl.col("lo")) | (pl.col("token_id") >= pl.col("hi"))
            parts.append(
                pl.LazyFrame(tri, schema={"qtoken": pl.String} | {k: u32 for k in list(tri)[1:]})
                .with_columns(r=pl.int_ranges("a", "b", dtype=u32))
                .explode("r")
                .with_columns(token_id=pl.lit(self._tri_tok).gather(pl.col("r")))
                .group_by("qtoken", "token_id")
                .agg(shared=pl.len(), nq=pl.first("nq"), lo=pl.first("lo"), hi=pl.first("hi"))
                .filter(outside)
                .with_columns(nt=pl.lit(self._n_tri).gather(pl.col("token_id")))
                .with_columns(dice=sim)
                .filter(pl.col("dice") >= dice)
                .with_columns(tier=pl.lit(TRIGRAM, pl.Int8))
            )
        # one row per (query token, name token): its best tier
        return (
            pl.concat([p.select(list(schema)).cast(schema) for p in parts])
            .sort("qtoken", "token_id", "tier")
            .unique(["qtoken", "token_id"], keep="first")
        )

    def match_table(
        self,
        text: str | Question,
        *,
        fuzzy: bool = True,
        dice: float = _rules.DEFAULT_DICE,
        min_prefix: int = 3,
        trigram: bool = True,
        project_tokens: Iterable[str] = (),
        project_factor: float = DEFAULT_PROJECT_FACTOR,
        max_share: float | None = None,
        lean: bool = False,
    ) -> pl.DataFrame:
        """The name match table rules score (columns documented in :mod:`ctxframe.rules`).

        ``node_row`` is the node's row in ``nodes``: an integer key rules may group on.
        ``max_share``: name tokens held by more than this share of the nodes are left out.
        ``lean``: without the string columns (``node_id``, ``token``, ``label``, ``query``),
        for a rule that keys on ``node_row`` and ``token_id`` (a long question's table holds
        hundreds of thousands of rows), and with ``q``, the query token's position among the
        question's sorted distinct tokens (an integer to group by instead of ``qtoken``)."""
        q = text if isinstance(text, Question) else Question.parse(text)
        counts = q.counts
        factor = self._project_factor(project_tokens, project_factor)
        n = float(self.n_nodes)
        tid, row = pl.col("token_id"), pl.col("_idx")
        start = pl.col("start")
        idf = (0.1 + (n / (1 + pl.col("df").cast(pl.Float64))).log()).clip(
            lower_bound=_rules.MIN_WEIGHT
        )
        empty = self.n_nodes == 0 or self._vocab_token.is_empty()
        vm = self._vocab_matches(q, fuzzy=fuzzy, dice=dice, min_prefix=min_prefix, trigram=trigram)
        query_tf = pl.col("qtoken").replace_strict(counts, default=1, return_dtype=pl.UInt32)
        if empty:
            vm = vm.clear()
            gather = lambda s, col: pl.lit(None, s.dtype)  # noqa: E731
        else:
            gather = lambda s, col: pl.lit(s).gather(col)  # noqa: E731
        strings = {
            "node_id": gather(self._ids, row),
            "token": gather(self._vocab_token, tid),
            "label": gather(self._labels, row),
            "query": pl.lit(q.text, pl.String),
        }
        cols = [
            *([] if lean else [strings["node_id"].alias("node_id")]),
            pl.col("qtoken"),
            *([pl.col("q")] if lean else []),
            tid.alias("token_id") if lean else strings["token"].alias("token"),
            pl.col("tier"),
            pl.col("dice"),
            pl.col("df"),
            pl.lit(self.n_nodes, pl.UInt32).alias("n_nodes"),
            pl.col("factor"),
            pl.lit(1, pl.UInt32).alias("tf"),
            gather(self._name_len, row).alias("doc_len"),
            pl.lit(self.avg_doc_len, pl.Float64).alias("avg_doc_len"),
            pl.col("query_tf"),
            *([] if lean else [strings["label"].alias("label"), strings["query"].alias("query")]),
            row.alias("node_row"),
        ]
        if lean:  # the query token's position among the question's sorted tokens
            codes = {t: i for i, t in enumerate(sorted(counts))}
            vm = vm.with_columns(
                q=pl.col("qtoken").replace_strict(codes, default=0, return_dtype=pl.UInt32)
            )
        return (
            vm.with_columns(df=gather(self._name_df, tid), start=gather(self._name_start, tid))
            .filter(
                (pl.col("df") > 0)
                & (pl.lit(True) if max_share is None else pl.col("df") <= max_share * n)
            )
            # per (query token, name token) before the rows multiply by the postings
            .with_columns(factor=factor, query_tf=query_tf)
            .with_columns(idf=idf * pl.col("factor"))
            .with_columns(_p=pl.int_ranges(start, start + pl.col("df"), dtype=pl.UInt32))
            .explode("_p")
            .drop_nulls("_p")
            .with_columns(_idx=gather(self._name_post, pl.col("_p")))
            .select(*cols, "idf")
            .collect(engine=ENGINE)
        )

    @staticmethod
    def _project_factor(project_tokens: Iterable[str], project_factor: float) -> pl.Expr:
        project = sorted({t for p in project_tokens for t in tokenize(p)})
        if not project:
            return pl.lit(1.0)
        return pl.when(pl.col("qtoken").is_in(project)).then(project_factor).otherwise(1.0)

    def content(
        self,
        text: str | Question,
        *,
        project_tokens: Iterable[str] = (),
        project_factor: float = DEFAULT_PROJECT_FACTOR,
    ) -> Content:
        """The content evidence of a question (lazy: rows are gathered when a rule asks)."""
        q = text if isinstance(text, Question) else Question.parse(text)
        project = {t for p in project_tokens for t in tokenize(p)}
        return Content(self, q, project=project, project_factor=project_factor)

    # ----------------------------------------------------------------- graph facts

    @cached_property
    def associations(self):
        """Word associations over this index's tokens (ctxframe._rank.associations), built on
        first use."""
        from ctxframe._rank.associations import Associations

        return Associations(self)

    @cached_property
    def units(self) -> Units:
        """Documents of the content units (node, file, symbol), built on first use."""
        return Units(self)

    @cached_property
    def node_parts(self) -> pl.DataFrame:
        """Per node row: lowercased path, qualified name, definition or not (what long
        questions' path and name hints match; ctxframe._rank.evidence.node_parts)."""
        return node_parts(self._ids)

    @cached_property
    def file_rows(self) -> pl.Series:
        """Per node, the row of its file's node (null for nodes outside files)."""
        return self._file_row

    @cached_property
    def parent_rows(self) -> pl.Series:
        """Per node, the row of its parent node (null for files, stubs, boundaries)."""
        return self._parent_row

    @cached_property
    def nested_rows(self) -> pl.DataFrame:
        """(node_row, host_row) of every function nested in a function or method: the
        enclosing definition whose text it is part of."""
        kind = self.nodes["kind"]
        callable_ = kind.is_in(_CALLABLE)
        host = self._parent_row
        nested = callable_ & callable_.gather(host.fill_null(0)) & host.is_not_null()
        rows = pl.int_range(self.n_nodes, dtype=pl.UInt32, eager=True)
        return pl.DataFrame(
            [rows.filter(nested).alias("node_row"), host.filter(nested).alias("host_row")]
        )

    # ------------------------------------------------------------------- query

    def rank(
        self,
        text: str | Question,
        *,
        limit: int = 20,
        rule: Any = None,
        within: str | None = None,
        deprioritize: Sequence[str] = (),
        project_tokens: Iterable[str] = (),
        deprioritize_factor: float = DEFAULT_DEPRIORITIZE_FACTOR,
        project_factor: float = DEFAULT_PROJECT_FACTOR,
        kinds: Sequence[str] | None = None,
        explain: bool = False,
        parts: bool = False,
    ) -> Ranking:
        """The best ``limit`` nodes for ``text``, best first.

        ``rule`` is a registry name, rule class or object (default IdfTiers); ``within`` keeps
        only nodes whose path matches the glob; ``deprioritize`` globs multiply matching nodes by
        ``deprioritize_factor``; query tokens among ``project_tokens`` weigh ``project_factor``
        as much; ``kinds`` keeps only nodes of these kinds (``["function", "method",
        "class"]``: symbols only). ``explain``: the ranking's ``evidence`` holds, per hit, the
        rows its score is made of (ctxframe._rank.explain); ``parts``: its ``parts`` holds, per
        hit, the rule's part columns (ctxframe._rank.parts), what the graph stage added
        (``graph``), the score before the intent multipliers (``pre``) and whether the question
        names it (``named``): what fitting weighs."""
        rule = resolve(rule)
        project = tuple(project_tokens)
        if getattr(rule, "members", None) is not None:  # a fusion of rules
            from ctxframe._rank.fusion import rank_fused

            return rank_fused(
                self,
                text if isinstance(text, Question) else Question.parse(text),
                rule,
                limit=limit,
                within=within,
                deprioritize=deprioritize,
                project_tokens=project,
                deprioritize_factor=deprioritize_factor,
                project_factor=project_factor,
                kinds=kinds,
                explain=explain,
            )
        q = (
            text
            if isinstance(text, Question)
            else Question.parse(text, getattr(rule, "weights", None))
        )
        trace = Trace() if explain or parts else None
        ranking = self.run(
            q,
            rule,
            limit=limit,
            within=within,
            deprioritize=deprioritize,
            project=project,
            deprioritize_factor=deprioritize_factor,
            project_factor=project_factor,
            kinds=kinds,
            trace=trace,
        )
        if parts:
            ranking.parts = _hit_parts(ranking, trace)
        if explain:
            from ctxframe._rank.explain import evidence_rows

            ranking.evidence = evidence_rows(
                self,
                ranking,
                rule,
                trace,
                deprioritize=deprioritize,
                deprioritize_factor=deprioritize_factor,
            )
        return ranking

    def run(
        self,
        q: Question,
        rule: Any,
        *,
        limit: int,
        within: str | None,
        deprioritize: Sequence[str],
        project: tuple[str, ...],
        deprioritize_factor: float,
        project_factor: float,
        kinds: Sequence[str] | None,
        trace: Trace | None = None,
    ) -> Ranking:
        """The stages of :meth:`rank` for one (resolved) rule, recording into ``trace``."""
        scored = self._score(q, rule, project, project_factor, trace)
        scored = self._graph(q, rule, scored, trace)
        cand = self._candidates(q, scored)
        cand = self._intents(q, rule, cand, deprioritize, deprioritize_factor, trace)
        cand = self._scope(cand, within, kinds)
        return self._top(q, rule, cand, limit, traced=trace is not None)

    def match_args(
        self, q: Question, rule: Any, project: tuple[str, ...], project_factor: float
    ) -> dict[str, Any]:
        """The keyword arguments of :meth:`match_table` a rule's question is matched with."""
        long = q.long and bool(getattr(rule, "evidence", False))
        fuzzy = bool(getattr(rule, "fuzzy", True))
        return {
            "fuzzy": fuzzy and (not long or bool(getattr(rule, "long_fuzzy", True))),
            "trigram": not long or bool(getattr(rule, "long_trigram", True)),
            "dice": float(getattr(rule, "dice", _rules.DEFAULT_DICE)),
            "min_prefix": int(getattr(rule, "min_prefix", 3)),
            "project_tokens": project,
            "project_factor": project_factor,
            "max_share": getattr(rule, "long_name_share", None) if long else None,
            "lean": bool(getattr(rule, "lean", False)),
        }

    def _score(
        self,
        q: Question,
        rule: Any,
        project: tuple[str, ...],
        project_factor: float,
        trace: Trace | None = None,
    ) -> pl.LazyFrame:
        """Stage 1: the rule's ``node_row, node_id, score, tier`` from the name matches (and
        the content evidence, for a rule that reads it)."""
        matches = self.match_table(q, **self.match_args(q, rule, project, project_factor))
        traced = trace is not None and bool(getattr(rule, "explains", False))
        kw = {"trace": trace} if traced else {}
        if getattr(rule, "reads_content", False):
            content = self.content(q, project_tokens=project, project_factor=project_factor)
            scored = rule.score(matches, content, **kw)
        else:
            content = None
            scored = rule.score(matches, **kw)
        have = set(scored.columns)
        if "node_row" not in have and "node_id" in have:
            rows = self.nodes.select(
                node_id="id", node_row=pl.int_range(self.n_nodes, dtype=pl.UInt32)
            )
            scored = scored.join(rows, on="node_id")
            if "tier" not in have:  # a user rule: each node's best matched tier
                best = matches.group_by("node_row").agg(tier=pl.col("tier").min())
                scored = scored.join(best, on="node_row", how="left")
        elif "node_id" not in have:
            scored = scored.with_columns(node_id=self._ids.gather(scored["node_row"]))
        if "tier" not in scored.columns:
            scored = scored.with_columns(tier=pl.lit(None, pl.Int8))
        out = scored.lazy().select(
            pl.col("node_row").cast(pl.UInt32),
            pl.col("node_id").cast(pl.String),
            score=pl.col("score").cast(pl.Float64),
            tier=pl.col("tier").cast(pl.Int8),
        )
        if trace is not None:
            trace.matches = matches
            trace.content = content
            trace.question = q
            trace.scores = out.select("node_row", "score").collect(engine=ENGINE)
        return out

    def _graph(
        self, q: Question, rule: Any, scored: pl.LazyFrame, trace: Trace | None = None
    ) -> pl.LazyFrame:
        """Stage 1b, graph evidence (each weight a rule attribute, 0 = off):

        * ``callers`` — the question asks who calls/reads/uses/raises a thing it names
          (:attr:`Question.intents`): the named things' score is multiplied by
          ``callers_named`` and every node referring to them (calls, reads, uses, extends,
          implements edges; a class's members count as the class) gains ``callers`` x the
          named things' best score;
        * ``prior`` — ``prior x ln(1 + in-degree)`` added to every scored node;
        * ``agreement`` — among the ``agreement_top`` best nodes, each gains ``agreement`` x
          the score of the best of them referring to it.

        With a trace, each step's change per node is recorded (``trace.graph``)."""
        callers = float(getattr(rule, "callers", 0.0) or 0.0)
        prior = float(getattr(rule, "prior", 0.0) or 0.0)
        agree = float(getattr(rule, "agreement", 0.0) or 0.0)
        links = self._links
        if links.is_empty() or not (callers or prior or agree):
            return scored
        steps = []
        if callers and "callers" in q.intents:
            scored = self._callers(q, rule, scored, callers)
            steps.append("callers")
        if prior:
            indeg = self._in_degree
            scored = scored.with_columns(
                score=pl.col("score") + prior * pl.lit(indeg).gather(pl.col("node_row")).log1p()
            )
            steps.append("prior")
        if agree:
            scored = self._agreement(scored, agree, int(getattr(rule, "agreement_top", 50)))
            steps.append("agreement")
        if trace is not None and steps:
            after = scored.select("node_row", "score").collect(engine=ENGINE)
            trace.graph = after.join(
                trace.scores.rename({"score": "before"}), on="node_row", how="left"
            ).select(
                "node_row",
                part=pl.lit("+".join(steps)),
                contribution=pl.col("score") - pl.col("before").fill_null(0.0),
            ).filter(pl.col("contribution") != 0)
        return scored

    @cached_property
    def _in_degree(self) -> pl.Series:
        per = self._links.group_by("dst").len()
        return _dense(per["dst"], per["len"], self.n_nodes, pl.UInt32).cast(pl.Float64)

    def _callers(self, q: Question, rule: Any, scored: pl.LazyFrame, weight: float) -> pl.LazyFrame:
        names = [n for n in q.evidence.identifiers if "." not in n] + [
            n.rsplit(".", 1)[-1] for n in q.evidence.identifiers if "." in n
        ]
        rows = [self.named(Question.parse(n)) for n in dict.fromkeys(names)]
        named = pl.concat(rows).unique() if rows else pl.Series("_idx", [], dtype=pl.UInt32)
        if not named.len():
            return scored
        members = pl.Series(range(self.n_nodes), dtype=pl.UInt32).filter(
            self._parent_row.is_in(named.implode()).fill_null(False)
        )
        targets = pl.concat([named, members]).unique()
        refs = self._links.filter(pl.col("dst").is_in(targets.implode()))["src"].unique()
        refs = refs.filter(~refs.is_in(targets.implode()))
        if not refs.len():
            return scored
        frame = scored.collect(engine=ENGINE)
        best = frame.filter(pl.col("node_row").is_in(named.implode()))["score"].max()
        best = float(best) if best is not None else float(frame["score"].max() or 0.0)
        demote = float(getattr(rule, "callers_named", 0.3))
        add = pl.DataFrame(
            {
                "node_row": refs,
                "node_id": self._ids.gather(refs),
                "score": [best * weight] * refs.len(),
                "tier": pl.Series([None] * refs.len(), dtype=pl.Int8),
            }
        )
        frame = frame.with_columns(
            score=pl.when(pl.col("node_row").is_in(targets.implode()))
            .then(pl.col("score") * demote)
            .otherwise(pl.col("score"))
        )
        merged = (
            pl.concat([frame, add.cast(frame.schema)])
            .group_by("node_row")
            .agg(
                node_id=pl.col("node_id").first(),
                score=pl.col("score").sum(),
                tier=pl.col("tier").min(),
            )
        )
        return merged.lazy()

    def _agreement(self, scored: pl.LazyFrame, weight: float, top: int) -> pl.LazyFrame:
        frame = scored.collect(engine=ENGINE)
        best = frame.sort("score", descending=True).head(top).select("node_row", "score")
        pairs = (
            self._links.join(best.rename({"node_row": "src", "score": "s"}), on="src")
            .join(best.select(dst="node_row"), on="dst")
            .group_by("dst")
            .agg(bonus=pl.col("s").max() * weight)
        )
        return (
            frame.join(pairs.rename({"dst": "node_row"}), on="node_row", how="left")
            .with_columns(score=pl.col("score") + pl.col("bonus").fill_null(0.0))
            .drop("bonus")
            .lazy()
        )

    def _candidates(self, q: Question, scored: pl.LazyFrame) -> pl.LazyFrame:
        """Stage 2: scored nodes plus the nodes the whole question names (tier 0)."""
        named = self.named(q)
        base = scored
        if named.len():
            extra = pl.LazyFrame({"node_row": named}).select(
                "node_row",
                node_id=pl.lit(self._ids).gather(pl.col("node_row")),
                score=pl.lit(0.0),
                tier=pl.lit(None, pl.Int8),
            )
            base = pl.concat([base, extra]).unique("node_row", keep="first")
        return base.with_columns(
            named=pl.col("node_row").is_in(named.implode()),
            score=pl.col("score").fill_null(0.0),
        )

    def _flag(self, s: pl.Series) -> pl.Expr:
        return pl.lit(s).gather(pl.col("node_row"))

    def _intents(
        self,
        q: Question,
        rule: Any,
        cand: pl.LazyFrame,
        deprioritize: Sequence[str],
        deprioritize_factor: float,
        trace: Trace | None = None,
    ) -> pl.LazyFrame:
        """Stage 3: intent multipliers (stubs, tests, docs unless asked for) and the
        ``deprioritize`` globs (with a trace, the score before them is kept as ``_pre``)."""
        mult = pl.lit(1.0)
        if "import" not in q.intents:
            stub = getattr(rule, "stub", _rules.DEFAULT_STUB)
            mult = mult * pl.when(self._flag(self._is_stub)).then(stub).otherwise(1.0)
        if "test" not in q.intents:
            test = getattr(rule, "test", _rules.DEFAULT_TEST)
            mult = mult * pl.when(self._flag(self._is_test)).then(test).otherwise(1.0)
        if "doc" not in q.intents:
            doc = getattr(rule, "doc", _rules.DEFAULT_DOC)
            mult = mult * pl.when(self._flag(self._is_doc)).then(doc).otherwise(1.0)
        dep = _globs_expr(deprioritize, self._flag(self._paths))
        if dep is not None:
            mult = mult * pl.when(dep).then(deprioritize_factor).otherwise(1.0)
        if trace is not None:
            cand = cand.with_columns(_pre=pl.col("score"))
        return cand.with_columns(score=(pl.col("score") * mult).round(SCORE_DECIMALS))

    def _scope(
        self, cand: pl.LazyFrame, within: str | None, kinds: Sequence[str] | None
    ) -> pl.LazyFrame:
        """Stage 4: ``within`` (a path glob) and ``kinds`` keep only what they name; nodes of
        an UNRANKED kind only when ``kinds`` names it."""
        hidden = [k for k in self._unranked if k not in (kinds or ())]
        if hidden:
            cand = cand.filter(~self._flag(self._kinds).is_in(hidden))
        if within:
            if _valid_regex(glob_to_regex(within)) is not None:
                raise BadInput(f"--within {within!r} is not a valid glob (a bad [...] range?)")
            path = self._flag(self._paths)
            cand = cand.filter(path.str.contains(glob_to_regex(within)).fill_null(False))
        if kinds:
            unknown = sorted(set(kinds) - KNOWN_KINDS)
            if unknown:
                known = ", ".join(sorted(KNOWN_KINDS))
                raise CtxframeError(f"unknown node kind {unknown[0]!r}; use one of: {known}")
            cand = cand.filter(self._flag(self._kinds).is_in(list(kinds)))
        return cand

    def _top(
        self, q: Question, rule: Any, cand: pl.LazyFrame, limit: int, traced: bool = False
    ) -> Ranking:
        """Stage 5: named first, then by score (ids break ties), the first ``limit`` as hits."""
        ranked = (
            cand.filter(pl.col("named") | (pl.col("score") > 0))
            .with_columns(
                tier=pl.when("named")
                .then(pl.lit(NAMED, pl.Int8))
                .otherwise(pl.col("tier"))
                .cast(pl.Int8)
            )
            .select(
                "node_row",
                "node_id",
                "named",
                "score",
                "tier",
                *(["_pre"] if traced else []),
                _total=pl.len(),
            )
        )
        order = {"by": ["named", "score", "node_id"], "descending": [True, True, False]}
        k = max(0, limit)
        if k:  # ids are unique: the best k, then their order, are exact
            keep = ranked.top_k(k, by=order["by"], reverse=[False, False, True])
            top = keep.sort(**order).collect(engine=ENGINE)
            total = int(top["_total"][0]) if top.height else 0
        else:
            top = ranked.head(0).collect(engine=ENGINE)
            total = ranked.select(pl.len()).collect(engine=ENGINE).item()
        extra = {
            "score": top["score"],
            "tier": top["tier"],
            "rank": pl.int_range(1, top.height + 1, dtype=pl.Int32, eager=True).alias("rank"),
        }
        rows = self.nodes.select(c for c in HIT_COLUMNS if c not in extra)[top["node_row"]]
        hits = pl.DataFrame([extra[c] if c in extra else rows[c] for c in HIT_COLUMNS])
        ranking = Ranking(
            query=q.text,
            hits=hits,
            rows=top["node_row"],
            total=total,
            rule=str(getattr(rule, "name", type(rule).__name__)),
            tokens=list(q.tokens),
            question=q,
        )
        if "_pre" in top.columns:
            ranking.pre = top["_pre"]
        return ranking

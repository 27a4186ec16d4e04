"""Scoring rules: objects that turn the match table into one score per node.

A rule is any object with ``name: str`` and ``score(matches) -> DataFrame(node_id, score)``;
it may also return ``tier`` (the best tier that contributed) and ``node_row``. ``matches`` has
one row per query token x node x matched node token x tier, with the columns:

* ``node_id``; ``node_row`` (the node's row in the nodes frame, an integer key that groups
  faster than ``node_id``);
* ``qtoken``, ``token``, ``tier`` (1 exact, 2 prefix, 3 stem, 4 trigram), ``dice`` (trigram
  similarity, 1.0 otherwise);
* ``df`` (nodes holding ``token``), ``n_nodes``, ``factor`` (project-token discount, 1.0 or
  e.g. 0.1), ``idf`` (``max(0.1 + ln(n_nodes / (1 + df)), 0.01) * factor``);
* ``tf`` (always 1: the token table is a set), ``doc_len`` (distinct tokens of the node),
  ``avg_doc_len``, ``query_tf`` (count of ``qtoken`` in the query);
* ``label`` (node label) and ``query`` (the raw query text).

Intent multipliers (module stubs, test files, doc nodes) and the scope levers are applied by the
query pipeline after ``score`` for every rule; the pipeline reads the multipliers from the rule's
``stub``, ``test`` and ``doc`` attributes when present (defaults 0.25, 0.5, 0.5), and the trigram
candidate threshold from ``dice`` (default 0.5). Rules with ``fuzzy = False`` get exact matches
only. A rule with ``reads_content = True`` is called as ``score(matches, content)``, ``content``
being the question's :class:`ctxframe._rank.contentmatch.Content` (signatures, docs, bodies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import polars as pl

from ctxframe._core.errors import CtxframeError
from ctxframe._rank import evidence as _evidence
from ctxframe._rank.evidence import EvidenceWeights
from ctxframe._rank.matches import row_key
from ctxframe._rank.parts import PARTS, Trace, add_missing, name_sums, tier_part, tier_trace
from ctxframe._rank.tokens import ENGINE

__all__ = [
    "BM25",
    "RULES",
    "BM25Text",
    "EvidenceRule",
    "FlatNameBonus",
    "IdfTiers",
    "Rule",
    "UnknownRule",
    "get_rule",
]

DEFAULT_STUB = 0.25
DEFAULT_TEST = 0.5
DEFAULT_DOC = 0.5
DEFAULT_DICE = 0.5
MIN_WEIGHT = 0.01  # idf is clamped here so a match never lowers a score in tiny graphs


class UnknownRule(CtxframeError, ValueError):
    """A rule name that is not in the registry."""


@runtime_checkable
class Rule(Protocol):
    """What the pipeline needs from a scoring rule."""

    name: str

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        """Return one ``(node_id, score)`` row per scored node (optionally ``tier``)."""
        ...


def _empty_scores() -> pl.DataFrame:
    return pl.DataFrame(schema={"node_id": pl.String, "score": pl.Float64, "tier": pl.Int8})


@dataclass(frozen=True)
class IdfTiers:
    """Default rule: per query token the best name tier (exact > prefix > stem > trigram) times
    its IDF, plus BM25F content evidence.

    **Names** (fields ``name``, ``qualname``, ``path``): ``weight(t) = floor + ln(N / (1 +
    df(t)))`` (clamped at 0.01, times the project-token factor); exact counts ``exact x
    weight``, prefix ``prefix x weight``, stem ``stem x weight``, trigram (Dice >= ``dice``)
    ``trigram x weight``. Within the best tier of a (node, query token) the rarest node token
    wins. A node's name score sums over query tokens (times ``query_tf``).

    **Content** (fields ``signature``, ``doc``, ``body``; a query token reaches every content
    token with its stem): BM25F, ``tf~ = sum_f w_f tf_f / (1 - b + b len_f / avglen_f)``,
    ``idf (tf~ / (k1 + tf~))`` per query token, summed; added as ``content x`` that sum, so a
    name match (a full IDF per token) leads unless the content says clearly more. A file node
    adds ``file_content x`` the BM25F of the whole file's text (every node of it), so long
    questions rank files as whole-file BM25 does, and a share ``file_best`` of its best
    definition's score. Terms in more than ``max_share`` (``long_max_share`` for a long
    question) of the nodes are left out of content. A short question's node also adds
    ``parent_share x`` its parent's score (a method says what its class says), per query token
    the better of its own value and ``parent_tokens x`` its parent's (a class's words the
    method lacks), and a function ``nested_share x`` the content score of its best nested
    function (a closure's body is part of its host's text).

    Long queries (a paragraph, several lines: bug reports, tracebacks) with ``evidence`` on are
    scored by :func:`ctxframe._rank.evidence.evidence_score`: identifier-shaped words and paths
    weigh more than prose, repeated words count sublinearly instead of ``query_tf`` times, and
    files, modules, definitions and traceback frames the text names get a bonus; the same
    token weights scale the content evidence. Their words get no trigram (typo) name tier
    unless ``long_trigram``.
    """

    exact: float = 1.0
    prefix: float = 0.7
    stem: float = 0.6
    trigram: float = 0.4
    dice: float = DEFAULT_DICE
    floor: float = 0.1
    stub: float = DEFAULT_STUB
    test: float = DEFAULT_TEST
    doc: float = DEFAULT_DOC
    min_prefix: int = 3  # query tokens shorter than this get no prefix/stem/trigram matches
    name: str = "idf-tiers"
    evidence: bool = True  # long queries: query-side evidence (ctxframe._rank.evidence)
    content: float = 1.5  # short questions: weight of a node's own BM25F (0: names only)
    content_long: float = 3.0  # long questions: the same
    file_content: float = 1.0  # long questions, a file node: weight of its whole text's BM25F
    file_best: float = 0.5  # long questions, a file node: + this x its best definition's total
    file_share: float = 0.3  # long questions, a definition: + this x its file's total
    mix: float = 0.25  # short questions, per token: max(name, content) + mix x min(name, content)
    parent_share: float = 0.1  # short questions: a node + this x its parent's score
    short_file: float = 0.0  # short questions: a definition + this x its whole file's BM25F
    parent_tokens: float = 0.2  # short questions, per token: max(own, this x the parent's)
    nested_share: float = 0.25  # short questions: a function + this x its best nested one's content
    bridge: float = 0.3  # short questions: the associated words' weight (0: off; associations.py)
    bridge_terms: int = 5  # ... at most this many associated tokens per query word
    bridge_count: int = 2  # ... each in at least this many nodes with the word
    bridge_npmi: float = 0.2  # ... with at least this normalised PMI
    bridge_share: float = 0.05  # ... and in at most this share of the nodes
    bridge_names: bool = False  # ... matched in names as well as content
    bridge_common: int = 2000  # query words held by more nodes than this are not bridged
    k1: float = 1.2
    b: float = 0.75
    w_signature: float = 1.0
    w_doc: float = 1.0
    w_body: float = 1.0
    max_share: float = 0.35  # short questions: content terms in more nodes than this share skipped
    long_max_share: float = 0.15  # long questions: the same
    long_name_share: float | None = None  # long questions: name tokens in more nodes skipped
    long_fuzzy: bool = True  # long questions: prefix, stem and trigram name tiers too
    long_trigram: bool = False  # long questions: the trigram name tier (with long_fuzzy)
    callers: float = 1.0  # "what calls X": X's referrers gain this x X's score (graph stage)
    callers_named: float = 0.3  # ... and X itself is multiplied by this
    prior: float = 0.0  # + prior x ln(1 + in-degree)
    agreement: float = 0.0  # a top hit referred to by another gains this x the referrer's score
    agreement_top: int = 50
    weights: EvidenceWeights = field(default_factory=EvidenceWeights)  # long questions
    explains = True  # score(..., trace=) records its parts (ctxframe._rank.parts)

    @property
    def reads_content(self) -> bool:
        """Content evidence is asked for (``score(matches, content)``)."""
        return bool(self.content or self.content_long)

    @property
    def lean(self) -> bool:
        """The match table may leave out its string columns (the question comes with the
        content evidence, node names from the index)."""
        return self.reads_content

    def tier_weight(self, col: str) -> pl.Expr:
        """The weight of the tier in column ``col`` (1 exact, 2 prefix, 3 stem, else trigram)."""
        tier = pl.col(col)
        return (
            pl.when(tier == 1)
            .then(self.exact)
            .when(tier == 2)
            .then(self.prefix)
            .when(tier == 3)
            .then(self.stem)
            .otherwise(self.trigram)
        )

    def weighted(self, matches: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
        """Add ``weight`` (IDF with this rule's floor) and ``value`` (tier weight x weight)."""
        weight = (
            (self.floor + (pl.col("n_nodes").cast(pl.Float64) / (1 + pl.col("df"))).log())
            .clip(lower_bound=MIN_WEIGHT)
            .mul(pl.col("factor"))
        )
        return (
            matches.lazy()
            .filter((pl.col("tier") != 4) | (pl.col("dice") >= self.dice))
            .with_columns(weight=weight)
            .with_columns(value=self.tier_weight("tier") * pl.col("weight"))
        )

    def best_matches(self, matches: pl.DataFrame) -> pl.DataFrame:
        """One row per (node, query token): lowest tier, then highest weight, then token."""
        return (
            self.weighted(matches)
            .sort(
                ["node_id", "qtoken", "tier", "weight", "token"],
                descending=[False, False, False, True, False],
            )
            .unique(["node_id", "qtoken"], keep="first", maintain_order=True)
            .collect(engine=ENGINE)
        )

    def score(
        self, matches: pl.DataFrame, content: Any = None, trace: Trace | None = None
    ) -> pl.DataFrame:
        """Name score per node, plus the content evidence when ``content`` is given. ``trace``
        (:class:`ctxframe._rank.parts.Trace`): also record the parts of every score."""
        q = content.question if content is not None else None
        if q is not None:
            long = self.evidence and q.long
        else:
            long = (
                self.evidence and not matches.is_empty() and _evidence.is_long(matches["query"][0])
            )
        short = not long and self.content and self.mix < 1.0 and not matches.is_empty()
        if content is not None and self.reads_content and short:
            return combine_short(self, matches, content, trace)  # scores names per token itself
        traced = trace is not None and "node_row" in matches.columns
        if matches.is_empty():
            names = _empty_scores()
        elif long:
            ev = q.evidence if q is not None and q.weights == self.weights else None
            nodes = None
            if "node_id" not in matches.columns:  # a lean table: names from the index
                ix = content.index
                rows = matches["node_row"].unique()
                nodes = pl.DataFrame(
                    {
                        "node_row": rows,
                        "node_id": ix._ids.gather(rows),
                        "label": ix._labels.gather(rows),
                    }
                ).hstack(ix.node_parts[rows])
            names = _evidence.evidence_score(
                self, matches, self.weights, evidence=ev, nodes=nodes, trace=trace
            )
        else:
            key, _carry = row_key(matches)
            per = self.best_per_token(matches, pl.col("query_tf"))
            if traced:
                per = per.collect(engine=ENGINE)
                qtok = "qtoken" if "qtoken" in per.columns else None
                if qtok is None:  # a lean table: codes of the question's sorted tokens
                    codes = matches.group_by("q").agg(pl.col("qtoken").first())
                    per = per.join(codes.cast({"q": per.schema["q"]}), on="q")
                trace.tokens.append(tier_trace(per))
            names = (
                per.lazy()
                .group_by(key)
                .agg(
                    *(name_sums("value", "t") if traced else []),
                    score=pl.col("value").sum(),
                    tier=pl.col("t").min().cast(pl.Int8),
                )
                .collect(engine=ENGINE)
            )
        if content is None or not self.reads_content:
            if traced:
                trace.nodes = add_missing(
                    names.select("node_row", *[p for p in PARTS if p in names.columns])
                    if "node_row" in names.columns
                    else pl.DataFrame(schema={"node_row": pl.UInt32})
                )
            return names
        weights = content.question.evidence.weights if long else None
        kept = trace if traced or matches.is_empty() else None
        return combine(self, names, content, weights, kept)

    def best_per_token(self, matches: pl.DataFrame, weight: pl.Expr) -> pl.LazyFrame:
        """Per (node, query token): the best tier ``t`` and its value times ``weight`` (an
        expression over the match table, e.g. ``query_tf``) as ``value``. Keyed by ``node_row``
        when the table has it (``node_id`` is then left to the caller), else ``node_id``; the
        query token is ``q`` when the table has that code (a lean table), else ``qtoken``.

        The best tier, then the highest weight within it, is one ``min`` of ``tier x 10^4 -
        weight`` (weights are IDFs, far below 10^4), decoded after the aggregation."""
        key, _carry = row_key(matches)
        big = 1e4
        agg = {
            "_k": (pl.col("tier") * big - pl.col("weight")).min(),
            "_w": pl.first("_w"),
        }
        table = self.weighted(matches.with_columns(_w=weight))
        if key == "node_row" and "q" in matches.columns:  # one integer key: row x 2^32 + q
            grouped = (
                table.group_by(_g=pl.col("node_row").cast(pl.UInt64) * _SHIFT + pl.col("q"))
                .agg(**agg)
                .with_columns(
                    node_row=(pl.col("_g") // _SHIFT).cast(pl.UInt32),
                    q=(pl.col("_g") % _SHIFT).cast(pl.UInt32),
                )
                .drop("_g")
            )
        else:
            grouped = table.group_by(key, "qtoken").agg(**agg)
        return (
            grouped.with_columns(t=(pl.col("_k") / big).ceil().cast(pl.Int8))
            .with_columns(
                value=self.tier_weight("t") * (pl.col("t") * big - pl.col("_k")) * pl.col("_w")
            )
            .drop("_k", "_w")
        )


_SHIFT = 1 << 32  # two UInt32 keys as one UInt64 (groups faster than two columns)
CONTENT_TIER = 5  # the `tier` of a node matched by its content only


def bm25f(
    rows: pl.DataFrame,
    *,
    k1: float,
    b: float,
    field_weights: dict[int, float],
    token_weights: dict[str, float] | None = None,
    per_token: bool = False,
) -> pl.DataFrame:
    """``doc_row, score``: BM25F over content rows (ctxframe._rank.contentmatch.Content.rows);
    ``per_token``: ``qtoken, doc_row, score``, each query token's share apart.

    Per (query token, document): ``tf~ = sum_f w_f tf_f / (1 - b + b len_f / avg_len_f)``, then
    ``idf x tf~ / (k1 + tf~) x qw x factor``, idf = ``ln(1 + (N - df + 0.5) / (df + 0.5))``,
    qw the token's weight (``token_weights``, else 1: each distinct token once)."""
    if rows.is_empty():
        schema = {"doc_row": pl.UInt32, "score": pl.Float64}
        return pl.DataFrame(schema=({"qtoken": pl.String} | schema) if per_token else schema)
    fw = {k: float(v) for k, v in field_weights.items()}
    w = pl.col("field").replace_strict(fw, default=0.0, return_dtype=pl.Float64)
    norm = 1 - b + b * pl.col("len").cast(pl.Float64) / pl.col("avg_len").clip(lower_bound=1e-9)
    n, df = pl.col("n_docs").cast(pl.Float64), pl.col("df").cast(pl.Float64)
    idf = (1 + (n - df + 0.5) / (df + 0.5)).log()
    qw = (
        pl.col("qtoken").replace_strict(token_weights, default=1.0, return_dtype=pl.Float64)
        if token_weights
        else pl.lit(1.0)
    )
    terms = (
        rows.lazy()
        .with_columns(_t=w * pl.col("tf").cast(pl.Float64) / norm)
        .group_by("qtoken", "doc_row")
        .agg(_t=pl.col("_t").sum(), _idf=idf.first(), _f=pl.col("factor").first())
        .with_columns(_s=pl.col("_idf") * pl.col("_t") / (k1 + pl.col("_t")) * pl.col("_f") * qw)
    )
    if per_token:
        return terms.select("qtoken", "doc_row", score="_s").collect(engine=ENGINE)
    return terms.group_by("doc_row").agg(score=pl.col("_s").sum()).collect(engine=ENGINE)


def _content_args(rule: IdfTiers) -> dict[str, Any]:
    """The BM25F arguments of the rule's content fields (those of non-zero weight)."""
    from ctxframe._rank.fields import BODY, DOC, SIGNATURE

    fw = {SIGNATURE: rule.w_signature, DOC: rule.w_doc, BODY: rule.w_body}
    fields = tuple(f for f, x in fw.items() if x)
    return {"fields": fields, "field_weights": fw, "k1": rule.k1, "b": rule.b}


def combine(
    rule: IdfTiers,
    names: pl.DataFrame,
    content: Any,
    token_weights: dict[str, float] | None,
    trace: Trace | None = None,
) -> pl.DataFrame:
    """The default rule's total (see :class:`IdfTiers`): name score + ``content x`` the node's
    BM25F; for a long question, files and definitions together: a file node adds
    ``file_content x`` its whole text's BM25F and ``file_best x`` its best definition's total,
    then every definition adds ``file_share x`` its file's total."""
    kw = {**_content_args(rule), "token_weights": token_weights}
    ix = content.index
    long = rule.evidence and content.question.long
    if "node_row" not in names.columns:
        from ctxframe._rank.fields import row_of

        names = names.with_columns(node_row=row_of(ix._ids, names["node_id"]))
    own = [p for p in PARTS if p in names.columns] if trace is not None else []
    names = names.select(
        pl.col("node_row").cast(pl.UInt32), pl.col("score").cast(pl.Float64), pl.col("tier"), *own
    )
    if names["node_row"].n_unique() != names.height:
        names = _sum_parts([names])
    if trace is not None and not own:  # a name score not split by tier: all of it is `other`
        names = names.with_columns(other=pl.col("score"))
        own = ["other"]
    share = rule.long_max_share if long else rule.max_share
    # dense over the node rows: each part scattered and added in turn, `seen` marks the rows
    # any part scored (what one grouping of all parts by node row would give, in its order)
    acc = _Dense(ix.n_nodes, traced=trace is not None)
    acc.add(names["node_row"], names["score"], names["tier"], {p: names[p] for p in own})

    def add(unit: str, weight: float, part: str) -> None:
        scores = content.bm25f(unit=unit, max_share=share, **kw)
        value = scores["score"] * weight
        acc.add(scores["doc_row"], value, CONTENT_TIER, {part: value})
        if trace is not None:
            _trace_content_tokens(trace, content, unit, share, kw, weight, part)

    weight = rule.content_long if long else rule.content
    if weight:
        add("node", weight, "content")
    if long and rule.file_content:
        add("file", rule.file_content, "file_text")
    file_row = ix.file_rows
    is_file = (file_row == acc.rows).fill_null(False)
    if long and rule.file_best:
        defs = acc.seen & ~is_file & file_row.is_not_null()
        best = (
            pl.DataFrame({"f": file_row.filter(defs), "s": acc.score.filter(defs)})
            .group_by("f")
            .agg(best=pl.col("s").max())
        )
        value = best["best"] * rule.file_best
        acc.add(best["f"], value, CONTENT_TIER, {"file_best": value})
    if long and rule.file_share:
        fscore = acc.score.zip_with(
            is_file & acc.seen, pl.repeat(None, ix.n_nodes, dtype=pl.Float64, eager=True)
        )
        fscore = fscore.gather(file_row).fill_null(0.0)
        gain = rule.file_share * fscore
        acc.score = acc.score.zip_with(is_file, acc.score + gain)
        if trace is not None:
            acc.parts["file_share"] = pl.zeros(ix.n_nodes, dtype=pl.Float64, eager=True).zip_with(
                is_file, gain
            )
    rows = acc.rows.filter(acc.seen)
    if trace is not None:
        trace.nodes = add_missing(
            pl.DataFrame(
                [
                    rows.alias("node_row"),
                    *(s.filter(acc.seen).alias(p) for p, s in acc.parts.items()),
                ]
            )
        )
    return pl.DataFrame(
        {
            "node_row": rows,
            "node_id": ix._ids.gather(rows),
            "score": acc.score.filter(acc.seen),
            "tier": acc.tier.filter(acc.seen),
        }
    )


def _trace_content_tokens(
    trace: Trace, content: Any, unit: str, share: float | None, kw: dict, weight: float, part: str
) -> None:
    """The content evidence of ``unit`` per (document, query token) as trace rows."""
    per = content.bm25f(unit=unit, max_share=share, per_token=True, **kw)
    trace.tokens.append(
        per.select(
            node_row="doc_row",
            qtoken="qtoken",
            part=pl.lit(part),
            tier=pl.lit(CONTENT_TIER, pl.Int8),
            weight=pl.lit(None, pl.Float64),
            value="score",
            contribution=pl.col("score") * weight,
        )
    )


class _Dense:
    """Scores, best tiers and a scored mask over every node row, parts added one by one (and,
    when ``traced``, each part's values apart in ``parts``)."""

    def __init__(self, n: int, traced: bool = False) -> None:
        self.n = n
        self.rows = pl.int_range(n, dtype=pl.UInt32, eager=True)
        self.score = pl.zeros(n, dtype=pl.Float64, eager=True)
        self.tier = pl.repeat(None, n, dtype=pl.Int8, eager=True)
        self.seen = pl.repeat(False, n, dtype=pl.Boolean, eager=True)
        self.traced = traced
        self.parts: dict[str, pl.Series] = {}

    def add(
        self,
        rows: pl.Series,
        score: pl.Series,
        tier: pl.Series | int,
        parts: dict[str, pl.Series] | None = None,
    ) -> None:
        """Add one part (each row at most once): scores add, the lower tier wins."""
        if not rows.len():
            return
        n, rows = self.n, rows.cast(pl.UInt32)
        part = pl.zeros(n, dtype=pl.Float64, eager=True).scatter(rows, score.cast(pl.Float64))
        self.score = self.score + part
        tiers = pl.repeat(None, n, dtype=pl.Int8, eager=True).scatter(rows, tier)
        self.tier = pl.select(pl.min_horizontal(pl.lit(self.tier), pl.lit(tiers))).to_series()
        self.seen = self.seen | pl.repeat(False, n, dtype=pl.Boolean, eager=True).scatter(
            rows, True
        )
        if self.traced:
            for name, values in (parts or {}).items():
                dense = pl.zeros(n, dtype=pl.Float64, eager=True).scatter(
                    rows, values.cast(pl.Float64)
                )
                self.parts[name] = self.parts[name] + dense if name in self.parts else dense


def combine_short(
    rule: IdfTiers, matches: pl.DataFrame, content: Any, trace: Trace | None = None
) -> pl.DataFrame:
    """A short question's total: per query token the better of the name tier value and
    ``content x`` its BM25F share, plus ``mix x`` the lesser, summed over tokens."""
    args = _content_args(rule)
    coded = "q" in matches.columns  # a lean table: query tokens as codes of sorted tokens
    qcol = "q" if coded else "qtoken"
    per_c = content.bm25f(
        unit="node", max_share=rule.max_share, per_token=True, codes=coded, **args
    )
    per_n = rule.best_per_token(matches, pl.col("query_tf")).select(
        pl.col("node_row").cast(pl.UInt32), qcol, n="value", t="t"
    )
    both = per_n.join(
        per_c.lazy().select(node_row="doc_row", **{qcol: qcol}, c=pl.col("score") * rule.content),
        on=["node_row", qcol],
        how="full",
        coalesce=True,
    ).with_columns(pl.col("n", "c").fill_null(0.0))
    hi, lo = pl.max_horizontal("n", "c"), pl.min_horizontal("n", "c")
    ix = content.index
    value = hi + rule.mix * lo
    bridged = _bridge(rule, content, qcol, trace) if rule.bridge else None
    if bridged is not None:  # a node holding none of a word's own tokens: its associated ones
        both = both.join(bridged.lazy(), on=["node_row", qcol], how="full", coalesce=True)
        both = both.with_columns(pl.col("n", "c", "b").fill_null(0.0))
        value = value + pl.when((pl.col("n") == 0) & (pl.col("c") == 0)).then("b").otherwise(0.0)
    per = both.select("node_row", qcol, "t", "c", v=value, **_split(rule, trace, bridged))
    if rule.parent_tokens:
        per = _parent_tokens(rule, per.collect(engine=ENGINE), qcol, ix.parent_rows, trace)
    elif trace is not None:
        per = per.with_columns(pw=pl.lit(0.0), pv=pl.lit(0.0))
    out = (
        per.lazy()
        .group_by("node_row")
        .agg(
            *_short_parts(trace, bridged is not None),
            score=pl.col("v").sum(),
            tier=pl.col("t").min().fill_null(CONTENT_TIER).cast(pl.Int8),
            body=pl.col("c").sum(),
        )
        .collect(engine=ENGINE)
    )
    if trace is not None:
        _trace_short_tokens(trace, per, qcol, content, bridged is not None)
    out = _propagate_short(rule, out, content, args, trace)
    rows = out["node_row"]
    if trace is not None:
        trace.nodes = add_missing(out.select("node_row", *[p for p in PARTS if p in out.columns]))
    return pl.DataFrame([rows, ix._ids.gather(rows).alias("node_id"), out["score"], out["tier"]])


def _split(rule: IdfTiers, trace: Trace | None, bridged: Any = None) -> dict[str, pl.Expr]:
    """With a trace, the shares of a (node, token) value ``max(n, c) + mix x min(n, c)`` (+ the
    bridge's ``b`` when neither): ``nv`` the name's, ``cv`` the content's, ``bv`` the bridge's
    (their sum is the value)."""
    if trace is None:
        return {}
    n, c = pl.col("n"), pl.col("c")
    first = n >= c
    out = {
        "n": n,
        "nv": pl.when(first).then(n).otherwise(rule.mix * n),
        "cv": pl.when(first).then(rule.mix * c).otherwise(c),
    }
    if bridged is not None:
        out |= {
            "bv": pl.when((n == 0) & (c == 0)).then(pl.col("b")).otherwise(0.0),
            "b": pl.col("b"),
            "b_token": pl.col("b_token"),
            "b_npmi": pl.col("b_npmi"),
        }
    return out


def _bridge(rule: IdfTiers, content: Any, qcol: str, trace: Trace | None) -> pl.DataFrame | None:
    """Per (node, query token): ``b`` = ``bridge x`` the best of ``npmi x`` an associated
    token's value there, for the tokens the repository associates with the query token
    (ctxframe._rank.associations); an associated token's value is what it would be worth as a
    query token of its own: its exact name match and its content (BM25F), combined the same way
    (``max + mix x min``)."""
    from ctxframe._rank.contentmatch import Content
    from ctxframe._rank.question import Question
    from ctxframe._rank.tokens import QUERY_STOPWORDS

    ix = content.index
    exp = ix.associations.expand(
        content.terms(stemmed=True, stopwords=False),
        terms=rule.bridge_terms,
        min_count=rule.bridge_count,
        min_npmi=rule.bridge_npmi,
        max_share=rule.bridge_share,
        max_nodes=rule.bridge_common,
    )
    token = pl.lit(ix._vocab_token).gather(pl.col("token_id"))
    exp = exp.with_columns(token=token).filter(~pl.col("token").is_in(sorted(QUERY_STOPWORDS)))
    if exp.is_empty():
        return None
    words = sorted(set(exp["token"].to_list()))
    q2 = Question(" ".join(words), tuple(words), tuple(words), content.question.weights)
    project = {"project_tokens": tuple(content.project), "project_factor": content.project_factor}
    args = _content_args(rule)
    exact = exp.select(qtoken="token", token_id="token_id").unique().sort("qtoken")
    per_c = (
        Content(ix, q2, project=content.project, project_factor=content.project_factor, terms=exact)
        .bm25f(unit="node", max_share=rule.max_share, per_token=True, **args)
        .lazy()
        .select(node_row="doc_row", token="qtoken", c=pl.col("score") * rule.content)
    )
    per_n = pl.LazyFrame(schema={"node_row": pl.UInt32, "token": pl.String, "n": pl.Float64})
    if rule.bridge_names:
        m2 = ix.match_table(q2, fuzzy=False, **project)
        if m2.height:
            per_n = rule.best_per_token(m2, pl.col("query_tf")).select(
                pl.col("node_row").cast(pl.UInt32), token="qtoken", n="value"
            )
    worth = (
        per_n.join(per_c, on=["node_row", "token"], how="full", coalesce=True)
        .with_columns(pl.col("n", "c").fill_null(0.0))
        .select(
            "node_row",
            "token",
            w=pl.max_horizontal("n", "c") + rule.mix * pl.min_horizontal("n", "c"),
        )
    )
    out = (
        exp.lazy()
        .select("qtoken", "token", "npmi")
        .join(worth, on="token")
        .with_columns(b=rule.bridge * pl.col("npmi") * pl.col("w"))
        .sort(["node_row", "qtoken", "b", "token"], descending=[False, False, True, False])
        .unique(["node_row", "qtoken"], keep="first", maintain_order=True)
        .select(pl.col("node_row").cast(pl.UInt32), "qtoken", "b", b_token="token", b_npmi="npmi")
    )
    if qcol == "q":
        codes = {t: i for i, t in enumerate(content._tokens)}
        out = out.with_columns(q=pl.col("qtoken").replace_strict(codes, return_dtype=pl.UInt32))
        out = out.drop("qtoken")
    return out.collect(engine=ENGINE)


def _short_parts(trace: Trace | None, bridged: bool = False) -> list[pl.Expr]:
    """With a trace, the per-node sums of the shares (name per tier, content, parent words,
    the bridge)."""
    if trace is None:
        return []
    return [
        *name_sums("nv", "t"),
        pl.col("cv").sum().alias("content"),
        pl.col("pw").sum().alias("parent_word"),
        *([pl.col("bv").sum().alias("bridge")] if bridged else []),
    ]


def _trace_short_tokens(
    trace: Trace, per: Any, qcol: str, content: Any, bridged: bool = False
) -> None:
    """A short question's (node, token) shares as trace rows: the name match (its tier), the
    content, the parent's word and the bridge, each with its value and what it added."""
    per = per.lazy() if isinstance(per, pl.DataFrame) else per
    if qcol == "q":
        names = pl.Series(content._tokens, dtype=pl.String)
        per = per.with_columns(qtoken=pl.lit(names).gather(pl.col("q")))
    base = per.select("node_row", "qtoken", "t", "n", "c", "nv", "cv", "pw", "pv")
    name = base.filter(pl.col("n") > 0).select(
        "node_row", "qtoken", part=tier_part(pl.col("t")), tier="t", value="n", contribution="nv"
    )
    body = base.filter(pl.col("c") > 0).select(
        "node_row",
        "qtoken",
        part=pl.lit("content"),
        tier=pl.lit(CONTENT_TIER, pl.Int8),
        value="c",
        contribution="cv",
    )
    said = base.filter(pl.col("pw") > 0).select(
        "node_row",
        "qtoken",
        part=pl.lit("parent_word"),
        tier=pl.lit(None, pl.Int8),
        value="pv",
        contribution="pw",
    )
    parts = [name, body, said]
    if bridged:
        parts.append(
            per.filter(pl.col("bv") > 0).select(
                "node_row",
                "qtoken",
                part=pl.lit("bridge"),
                tier=pl.lit(None, pl.Int8),
                value="b",
                contribution="bv",
                token="b_token",
                weight="b_npmi",
            )
        )
    for part in parts:
        if "weight" not in part.collect_schema().names():
            part = part.with_columns(weight=pl.lit(None, pl.Float64))
        trace.tokens.append(part.collect(engine=ENGINE))


def _parent_tokens(
    rule: IdfTiers,
    per: pl.DataFrame,
    qcol: str,
    parents: pl.Series,
    trace: Trace | None = None,
) -> pl.DataFrame:
    """Per (node, query token) values where each scored node also reads, for every token, its
    parent's value x ``parent_tokens`` when that is more than its own: a method takes the
    words its class says and it does not (the tokens of one question, split across the
    class's docstring and the method's body)."""
    rows = per["node_row"].unique()
    kids = pl.DataFrame([rows, parents.gather(rows).alias("p")]).drop_nulls("p")
    said = per.select(p="node_row", **{qcol: qcol}, pv=pl.col("v") * rule.parent_tokens)
    taken = kids.join(said, on="p").select("node_row", qcol, "pv")
    joined = per.join(taken, on=["node_row", qcol], how="full", coalesce=True)
    if trace is None:
        return joined.with_columns(
            v=pl.max_horizontal(pl.col("v").fill_null(0.0), pl.col("pv").fill_null(0.0)),
            c=pl.col("c").fill_null(0.0),
        ).drop("pv")
    own, pv = pl.col("v").fill_null(0.0), pl.col("pv").fill_null(0.0)
    took = pv > own
    return joined.with_columns(
        v=pl.max_horizontal(own, pv),
        c=pl.col("c").fill_null(0.0),
        n=pl.col("n").fill_null(0.0),
        nv=pl.when(took).then(0.0).otherwise(pl.col("nv").fill_null(0.0)),
        cv=pl.when(took).then(0.0).otherwise(pl.col("cv").fill_null(0.0)),
        pw=pl.when(took).then(pv).otherwise(0.0),
        pv=pv,
        **(
            {"bv": pl.when(took).then(0.0).otherwise(pl.col("bv").fill_null(0.0)),
             "b": pl.col("b").fill_null(0.0)}
            if "bv" in joined.columns
            else {}
        ),
    )


def _propagate_short(
    rule: IdfTiers, out: pl.DataFrame, content: Any, args: dict, trace: Trace | None = None
) -> pl.DataFrame:
    """A short question's scores with what a node's surroundings say: ``parent_share x`` its
    parent's score (a method says what its class says; a top-level definition what its
    module says), ``nested_share x`` its best nested function's content score (a closure's
    body is part of its host's text) and ``short_file x`` its whole file's BM25F. With a trace,
    each of these is a part column too."""
    if not (rule.parent_share or rule.short_file or rule.nested_share) or out.is_empty():
        return out
    ix = content.index
    own = [p for p in PARTS if p in out.columns]
    parts = [out.select(pl.col("node_row").cast(pl.UInt32), "score", "tier", *own)]
    if rule.parent_share or rule.nested_share:  # dense over the nodes
        n = ix.n_nodes
        rows = parts[0]["node_row"]
        score = pl.zeros(n, dtype=pl.Float64, eager=True).scatter(rows, parts[0]["score"])
        tier = pl.repeat(CONTENT_TIER, n, dtype=pl.Int8, eager=True).scatter(
            rows, parts[0]["tier"].fill_null(CONTENT_TIER)
        )
        parent = rule.parent_share * score.gather(ix.parent_rows).fill_null(0.0)
        total = score + parent
        if rule.nested_share:  # a nested function's body is part of its host's text
            nested = rule.nested_share * _best_nested(ix.nested_rows, out, n)
            total = total + nested
        keep = total > 0
        cols = [
            pl.int_range(n, dtype=pl.UInt32, eager=True).filter(keep).alias("node_row"),
            total.filter(keep).alias("score"),
            tier.filter(keep).alias("tier"),
        ]
        if trace is not None:
            dense = {
                p: pl.zeros(n, dtype=pl.Float64, eager=True).scatter(rows, parts[0][p])
                for p in own
            }
            dense["parent"] = parent
            if rule.nested_share:
                dense["nested"] = nested
            cols += [s.filter(keep).alias(p) for p, s in dense.items()]
        parts[0] = pl.DataFrame(cols)
    if rule.short_file:
        files = content.bm25f(unit="file", max_share=rule.max_share, **args).select(
            f="doc_row", fs="score"
        )
        if files.height:
            kids = (
                pl.DataFrame({"node_row": pl.int_range(ix.n_nodes, dtype=pl.UInt32, eager=True)})
                .with_columns(f=ix.file_rows)
                .filter(pl.col("f") != pl.col("node_row"))
                .join(files, on="f")
            )
            extra = {"file_text": pl.col("fs") * rule.short_file} if trace is not None else {}
            parts.append(
                kids.select(
                    "node_row",
                    score=pl.col("fs") * rule.short_file,
                    tier=pl.lit(CONTENT_TIER, pl.Int8),
                    **extra,
                )
            )
    return parts[0] if len(parts) == 1 else _sum_parts(parts)


def _best_nested(nested: pl.DataFrame, out: pl.DataFrame, n: int) -> pl.Series:
    """Per node, the best content score (`out`'s `body`) among the functions nested in it (0
    for none)."""
    best = (
        nested.join(out.select(pl.col("node_row").cast(pl.UInt32), "body"), on="node_row")
        .group_by("host_row")
        .agg(pl.col("body").max())
    )
    return pl.zeros(n, dtype=pl.Float64, eager=True).scatter(best["host_row"], best["body"])


def _sum_parts(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Rows of several parts summed per node row (scores and part columns; the lower tier)."""
    extra = [p for p in PARTS if any(p in f.columns for f in parts)]
    key = {"node_row": pl.UInt32, "score": pl.Float64, "tier": pl.Int8}
    frames = [
        f.cast(key).with_columns(
            pl.col(p).cast(pl.Float64) if p in f.columns else pl.lit(0.0).alias(p) for p in extra
        ).select(*key, *extra)
        for f in parts
    ]
    return (
        pl.concat(frames)
        .group_by("node_row")
        .agg(
            *[pl.col(p).sum() for p in extra],
            score=pl.col("score").sum(),
            tier=pl.col("tier").min(),
        )
    )


@dataclass(frozen=True)
class BM25:
    """Okapi BM25 over label + path tokens, exact token matches only (tf is 0/1: a token set)."""

    k1: float = 1.2
    b: float = 0.75
    stub: float = DEFAULT_STUB
    test: float = DEFAULT_TEST
    doc: float = DEFAULT_DOC
    name: str = "bm25"
    fuzzy = False

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        """Sum over exact query tokens of ``idf * tf (k1 + 1) / (tf + k1 (1 - b + b dl/avgdl))``."""
        exact = matches.filter(pl.col("tier") == 1)
        if exact.is_empty():
            return _empty_scores()
        n = pl.col("n_nodes").cast(pl.Float64)
        df = pl.col("df").cast(pl.Float64)
        idf = (1 + (n - df + 0.5) / (df + 0.5)).log() * pl.col("factor")
        tf = pl.col("tf").cast(pl.Float64)
        norm = 1 - self.b + self.b * pl.col("doc_len") / pl.col("avg_doc_len")
        term = idf * tf * (self.k1 + 1) / (tf + self.k1 * norm) * pl.col("query_tf")
        key = "node_row" if "node_row" in exact.columns else "node_id"
        carry = [pl.col("node_id").first()] if key != "node_id" else []
        return (
            exact.lazy()
            .unique([key, "qtoken"], keep="first")
            .group_by(key)
            .agg(*carry, score=term.sum(), tier=pl.lit(1, pl.Int8).first())
            .collect(engine=ENGINE)
        )


@dataclass(frozen=True)
class FlatNameBonus:
    """Known-bad baseline (competitor bug report, seed 001): BM25 + a flat exact-name bonus.

    +``whole`` (80) when the stripped query equals the node label case-insensitively, else
    +``token`` (60) when any single query token equals the whole label. The flat bonus swamps
    the text score, so a generic ``usage()`` helper outranks the code the question is about.
    """

    k1: float = 1.2
    b: float = 0.75
    whole: float = 80.0
    token: float = 60.0
    stub: float = DEFAULT_STUB
    test: float = DEFAULT_TEST
    doc: float = DEFAULT_DOC
    name: str = "flat-name-bonus"
    fuzzy = False

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        """BM25 score plus the flat bonus of each matched node."""
        base = BM25(k1=self.k1, b=self.b).score(matches)
        if base.is_empty():
            return base
        label = pl.col("label").fill_null("").str.to_lowercase()
        bonus = (
            matches.lazy()
            .group_by("node_id")
            .agg(
                whole=(pl.col("query").str.strip_chars().str.to_lowercase() == label).any(),
                tok=(pl.col("qtoken") == label).any(),
            )
            .select(
                "node_id",
                bonus=pl.when("whole").then(self.whole).when("tok").then(self.token).otherwise(0.0),
            )
        )
        return (
            base.lazy()
            .join(bonus, on="node_id", how="left")
            .select(
                pl.exclude("score", "bonus"),
                score=pl.col("score") + pl.col("bonus").fill_null(0.0),
            )
            .collect(engine=ENGINE)
        )


@dataclass(frozen=True)
class BM25Text:
    """Okapi BM25 over whole texts, the classic baseline: ``unit="file"`` (``bm25-file``: a
    file's whole text, every node of it) or ``"symbol"`` (``bm25-symbol``: a definition with
    everything nested in it). Every query token counts once (stopwords too), exact tokens only,
    k1 = 1.2, b = 0.75, idf = ``ln(1 + (N - df + 0.5)/(df + 0.5))``; no intent multipliers;
    ``src_only`` leaves test files out. Prose files (Markdown, reST) are not documents."""

    unit: str = "file"
    k1: float = 1.2
    b: float = 0.75
    src_only: bool = False
    name: str = "bm25-file"
    stub: float = 1.0
    doc: float = 1.0
    fuzzy = False
    reads_content = True
    lean = True

    @property
    def test(self) -> float:
        """Intent multiplier of test files: 0 (left out) with ``src_only``, else 1."""
        return 0.0 if self.src_only else 1.0

    def score(self, matches: pl.DataFrame, content: Any = None) -> pl.DataFrame:
        """BM25 of each document of ``unit`` holding a query token."""
        from ctxframe._rank.fields import BODY, SIGNATURE

        if content is None:
            return _empty_scores()
        fields = (SIGNATURE, BODY)
        rows = content.rows(unit=self.unit, fields=fields, stemmed=False, stopwords=True)
        if rows.is_empty():
            return _empty_scores()
        dl, avg = content.index.units.total_length(self.unit, fields)
        n, df = pl.col("n_docs").cast(pl.Float64), pl.col("df").cast(pl.Float64)
        idf = (1 + (n - df + 0.5) / (df + 0.5)).log()
        tf = pl.col("tf").cast(pl.Float64)
        norm = 1 - self.b + self.b * pl.lit(dl).gather(pl.col("doc_row")) / max(avg, 1e-9)
        ix = content.index
        return (
            rows.lazy()
            .group_by("qtoken", "doc_row")
            .agg(tf=pl.col("tf").sum(), df=pl.col("df").first(), n_docs=pl.col("n_docs").first())
            .with_columns(_s=idf * tf * (self.k1 + 1) / (tf + self.k1 * norm))
            .group_by("doc_row")
            .agg(score=pl.col("_s").sum())
            .select(
                node_row="doc_row",
                node_id=pl.lit(ix._ids).gather(pl.col("doc_row")),
                score="score",
                tier=pl.lit(CONTENT_TIER, pl.Int8),
            )
            .collect(engine=ENGINE)
        )


def _bm25_file() -> BM25Text:
    return BM25Text()


def _bm25_file_src() -> BM25Text:
    return BM25Text(src_only=True, name="bm25-file-src")


def _bm25_symbol() -> BM25Text:
    return BM25Text(unit="symbol", name="bm25-symbol")


def _bm25_symbol_src() -> BM25Text:
    return BM25Text(unit="symbol", src_only=True, name="bm25-symbol-src")


RULES: dict[str, Any] = {
    "idf-tiers": IdfTiers,
    "bm25": BM25,
    "flat-name-bonus": FlatNameBonus,
    "bm25-file": _bm25_file,
    "bm25-file-src": _bm25_file_src,
    "bm25-symbol": _bm25_symbol,
    "bm25-symbol-src": _bm25_symbol_src,
}


def get_rule(name_or_obj: Any = None) -> Any:
    """Resolve ``None`` (default IdfTiers), a registry name, a rule class, or a rule object
    (rule files too: ctxframe._rank.registry.resolve)."""
    if name_or_obj is None:
        return IdfTiers()
    if isinstance(name_or_obj, str):
        try:
            return RULES[name_or_obj]()
        except KeyError:
            known = ", ".join(sorted(RULES))
            raise UnknownRule(f"unknown rule {name_or_obj!r}; use one of: {known}") from None
    if isinstance(name_or_obj, type):
        name_or_obj = name_or_obj()
    if not callable(getattr(name_or_obj, "score", None)) or not hasattr(name_or_obj, "name"):
        raise TypeError("a rule needs a `name` attribute and a `score(matches)` method")
    return name_or_obj


@dataclass(frozen=True)
class EvidenceRule:
    """IdfTiers with query-side evidence for every query, long or short (for experiments; the
    default rule applies it to long queries, see :class:`ctxframe.rules.IdfTiers`)."""

    weights: EvidenceWeights = field(default_factory=EvidenceWeights)
    name: str = "idf-tiers+evidence"
    base: object = None

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        base = self.base or IdfTiers(evidence=False)
        if matches.is_empty():
            return base.score(matches)
        return _evidence.evidence_score(base, matches, self.weights)

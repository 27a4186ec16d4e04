"""Why a hit ranks where it does: the evidence rows its score is made of.

``RankIndex.rank(..., explain=True)`` traces the rule (ctxframe._rank.parts) and the stages
around it and turns what they recorded into one frame, one row per piece of evidence of each hit
(:data:`EVIDENCE_SCHEMA`):

* ``part`` — the kind of evidence (ctxframe._rank.parts.PARTS: ``name_exact`` ...
  ``name_trigram``, ``content``, ``parent_word``, ``parent``, ``nested``, ``file_text``,
  ``hint_path`` ... ``hint_title``, ``file_best``, ``file_share``), ``graph`` steps
  (``callers``, ``prior``, ``agreement``), ``intent`` (the test/stub/doc/deprioritize
  multipliers) and ``named`` (the question names the node: it sorts first);
* ``field`` — where the token was found (``name``, ``qualname``, ``path``, ``signature``,
  ``doc``, ``body``; ``file`` for a whole file's text), ``qtoken`` the question's token and
  ``token`` the node's token it matched, ``tier`` (1 exact, 2 prefix, 3 stem, 4 trigram,
  5 content);
* ``weight`` — the token's IDF (names) or BM25 idf (content); an intent row's multiplier;
* ``value`` — what the piece is worth before the rule combines it (a name tier's value, a token's
  BM25F), ``contribution`` — what it adds to the hit's score;
* ``source`` — the node or hint a non-token piece comes from (the parent, the file, the path the
  text names).

The contributions of a hit's rows add up to its score (within the 1e-6 the scores are rounded
to). A rule that does not split its score gets one ``other`` row; a fusion's rows are its members'
rows with ``rule`` naming the member, plus one ``fusion`` row per member (those add up to the
fused score).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from ctxframe._core.paths import glob_to_regex
from ctxframe._rank.fields import FIELDS
from ctxframe._rank.parts import PARTS, Trace
from ctxframe._rank.tokens import ENGINE, tokenize

__all__ = ["EVIDENCE_SCHEMA", "evidence_rows", "explain_text"]

EVIDENCE_SCHEMA = {
    "rank": pl.Int32,
    "id": pl.String,
    "rule": pl.String,
    "part": pl.String,
    "field": pl.String,
    "qtoken": pl.String,
    "token": pl.String,
    "tier": pl.Int8,
    "weight": pl.Float64,
    "value": pl.Float64,
    "contribution": pl.Float64,
    "source": pl.String,
}
_PART_ORDER = {
    p: i for i, p in enumerate(("fusion", "named", *PARTS, "dense", "graph", "intent"))
}


def empty() -> pl.DataFrame:
    """An evidence frame without rows."""
    return pl.DataFrame(schema=EVIDENCE_SCHEMA)


def _frame(rows: Iterable[pl.DataFrame]) -> pl.DataFrame:
    parts = [
        r.select(
            [pl.col(c) if c in r.columns else pl.lit(None).alias(c) for c in EVIDENCE_SCHEMA]
        ).cast(EVIDENCE_SCHEMA)
        for r in rows
        if r.height
    ]
    return pl.concat(parts) if parts else empty()


def evidence_rows(
    index,
    ranking,
    rule: Any,
    trace: Trace,
    *,
    deprioritize: Sequence[str] = (),
    deprioritize_factor: float = 0.5,
) -> pl.DataFrame:
    """The evidence rows of every hit of ``ranking`` (see the module docstring)."""
    hits = ranking.hits
    if hits.is_empty():
        return empty()
    rule_name = str(getattr(rule, "name", type(rule).__name__))
    pre = ranking.pre if ranking.pre is not None else hits["score"]
    base = pl.DataFrame(
        {
            "rank": hits["rank"],
            "id": hits["id"],
            "node_row": ranking.rows,
            "score": hits["score"],
            "tier": hits["tier"],
            "_pre": pre,
        }
    )
    frames = [_rule_rows(index, base, rule, trace)]
    if trace.graph is not None and trace.graph.height:
        frames.append(
            base.select("rank", "id", "node_row")
            .join(trace.graph, on="node_row")
            .select("rank", "id", "part", "contribution", source=pl.lit("graph"))
        )
    frames.append(
        _intent_rows(index, base, rule, trace.question, deprioritize, deprioritize_factor)
    )
    named = base.filter(pl.col("tier") == 0)
    if named.height:
        frames.append(
            named.select(
                "rank",
                "id",
                part=pl.lit("named"),
                tier=pl.lit(0, pl.Int8),
                contribution=pl.lit(0.0),
                source=pl.lit("the question names it: it sorts first"),
            )
        )
    out = _frame(frames).with_columns(rule=pl.col("rule").fill_null(rule_name))
    return _order(out)


def _order(out: pl.DataFrame) -> pl.DataFrame:
    return (
        out.with_columns(
            _o=pl.col("part").replace_strict(
                _PART_ORDER, default=len(_PART_ORDER), return_dtype=pl.Int32
            )
        )
        .sort(
            ["rank", "_o", "contribution", "qtoken", "field", "token"],
            descending=[False, False, True, False, False, False],
            nulls_last=True,
        )
        .drop("_o")
    )


def _rule_rows(index, base: pl.DataFrame, rule: Any, trace: Trace) -> pl.DataFrame:
    """The rows of what the rule itself scored: its recorded parts, else one ``other`` row."""
    keys = base.select("rank", "id", "node_row")
    if trace.nodes is None:
        if trace.scores is None:
            return empty()
        part = str(getattr(rule, "part", "other"))  # what a rule calls its whole score
        return keys.join(trace.scores, on="node_row").select(
            "rank", "id", part=pl.lit(part), contribution="score"
        )
    tok = trace.token_rows().join(keys, on="node_row")
    frames = []
    if tok.height:
        frames.append(
            _name_details(index, tok.filter(pl.col("part").str.starts_with("name_")), rule, trace)
        )
        frames.append(_content_details(index, tok.filter(pl.col("part") == "content"), rule, trace))
        frames.append(
            tok.filter(pl.col("part") == "bridge").with_columns(
                source=pl.lit("words the repository associates with it (weight: npmi)")
            )
        )
        frames.append(
            tok.filter(pl.col("part") == "parent_word").with_columns(
                source=pl.lit(index._ids).gather(
                    pl.lit(index.parent_rows).gather(pl.col("node_row"))
                )
            )
        )
        frames.append(
            tok.filter(pl.col("part") == "file_text").with_columns(
                field=pl.lit("file"),
                source=pl.lit(index._paths).gather(pl.col("node_row")),
            )
        )
    covered = tok.select("node_row", "part").unique() if tok.height else None
    wide = keys.join(trace.nodes, on="node_row")
    long = wide.unpivot(
        index=["rank", "id", "node_row"],
        on=list(PARTS),
        variable_name="part",
        value_name="contribution",
    ).filter(pl.col("contribution") != 0)
    if covered is not None:
        long = long.join(covered, on=["node_row", "part"], how="anti")
    hints = long.filter(pl.col("part").str.starts_with("hint_"))
    if hints.height and trace.hints is not None and trace.hints.height:
        detail = trace.hints.rename({"bonus": "contribution"}).with_columns(
            part=pl.lit("hint_") + pl.col("kind")
        )
        frames.append(
            keys.join(detail, on="node_row").select(
                "rank", "id", "part", "contribution", source="hint"
            )
        )
        long = long.filter(~pl.col("part").str.starts_with("hint_"))
    frames.append(_sources(index, long))
    return _frame(frames)


def _sources(index, long: pl.DataFrame) -> pl.DataFrame:
    """Non-token parts with the node they come from: the parent, the file."""
    if long.is_empty():
        return long
    parent = pl.lit(index._ids).gather(pl.lit(index.parent_rows).gather(pl.col("node_row")))
    file = pl.lit(index._paths).gather(pl.col("node_row"))
    return long.with_columns(
        source=pl.when(pl.col("part") == "parent")
        .then(parent)
        .when(pl.col("part").is_in(["file_share", "file_text"]))
        .then(file)
        .when(pl.col("part") == "nested")
        .then(pl.lit("the functions nested in it"))
        .when(pl.col("part") == "file_best")
        .then(pl.lit("its file's best definition"))
        .otherwise(None),
        field=pl.when(pl.col("part") == "file_text").then(pl.lit("file")).otherwise(None),
    )


def _name_details(index, tok: pl.DataFrame, rule: Any, trace: Trace) -> pl.DataFrame:
    """Name rows with the node token each query token matched, its field and its IDF."""
    if tok.is_empty() or trace.matches is None or trace.matches.is_empty():
        return tok
    m = trace.matches.filter(pl.col("node_row").is_in(tok["node_row"].unique().implode()))
    if "token" not in m.columns:
        m = m.with_columns(token=pl.lit(index._vocab_token).gather(pl.col("token_id")))
    weighted = getattr(rule, "weighted", None)
    if callable(weighted):
        m = weighted(m).collect(engine=ENGINE)
    else:
        m = m.with_columns(weight=pl.col("idf"))
    best = (
        m.sort(
            ["node_row", "qtoken", "tier", "weight", "token"],
            descending=[False, False, False, True, False],
        )
        .unique(["node_row", "qtoken"], keep="first", maintain_order=True)
        .select("node_row", "qtoken", "token", "weight")
    )
    out = tok.drop("weight", "token").join(best, on=["node_row", "qtoken"], how="left")
    rows = out["node_row"].unique()
    fields = _name_fields(index, rows)
    return out.join(fields, on=["node_row", "token"], how="left").with_columns(
        field=pl.col("field").fill_null("path")
    )


def _name_fields(index, rows: pl.Series) -> pl.DataFrame:
    """``node_row, token, field``: each name token of the nodes and the first name field
    holding it (the label, then the enclosing names, then the path)."""
    nodes = index.nodes
    out: dict[str, list] = {"node_row": [], "token": [], "field": []}
    for r in rows.to_list():
        label, qual, kind, path = (nodes[c][r] for c in ("label", "qualname", "kind", "path"))
        parent = ""
        if qual and label and kind != "file" and qual.endswith("." + label):
            parent = qual[: -len(label) - 1]
        seen: set[str] = set()
        for field, text in (("name", label), ("qualname", parent), ("path", path)):
            for t in tokenize(text):
                if t not in seen:
                    seen.add(t)
                    out["node_row"].append(r)
                    out["token"].append(t)
                    out["field"].append(field)
    return pl.DataFrame(out, schema={"node_row": pl.UInt32, "token": pl.String, "field": pl.String})


def _content_details(index, tok: pl.DataFrame, rule: Any, trace: Trace) -> pl.DataFrame:
    """Content rows split by field and node token: each posting's share of its query token's
    BM25F (``w_f tf / (1 - b + b len_f / avg_f)`` over their sum), with the token's idf."""
    content = trace.content
    if tok.is_empty() or content is None or not hasattr(rule, "k1"):
        return tok.with_columns(field=pl.lit("content"))
    from ctxframe._rank.rules import _content_args

    args = _content_args(rule)
    fields, fw, b = args["fields"], args["field_weights"], args["b"]
    q = trace.question
    long = bool(getattr(rule, "evidence", False)) and q.long
    share = rule.long_max_share if long else rule.max_share
    terms = content.terms(stemmed=True, stopwords=False)
    terms = terms.filter(pl.col("qtoken").is_in(tok["qtoken"].unique().implode()))
    if terms.is_empty():
        return tok.with_columns(field=pl.lit("content"))
    n = index.n_nodes
    tid = pl.col("token_id")
    keep = pl.lit(index._c_rows).gather(tid) > 0
    if share is not None:
        keep = keep & (pl.lit(index._c_df).gather(tid) <= share * n)
    start = pl.lit(index._c_start).gather(tid)
    p = pl.col("_p")
    post = (
        terms.lazy()
        .filter(keep)
        .select(
            "qtoken", "token_id", _p=pl.int_ranges(start, start + pl.lit(index._c_rows).gather(tid))
        )
        .explode("_p")
        .select(
            "qtoken",
            "token_id",
            node_row=pl.lit(index._c_node).gather(p),
            fnum=pl.lit(index._c_field).gather(p),
            tf=pl.lit(index._c_tf).gather(p).cast(pl.Float64),
        )
        .filter(pl.col("fnum").is_in(list(fields)))
        .collect(engine=ENGINE)
    )
    df = post.group_by("qtoken").agg(df=pl.col("node_row").n_unique())
    docs = float(index.units.docs["node"].len())
    post = post.filter(pl.col("node_row").is_in(tok["node_row"].unique().implode()))
    norms = index.units.norms("node", fields, b)
    slots = [list(fields).index(f) if f in fields else 0 for f in range(len(FIELDS))]
    w = [float(fw.get(f, 0.0)) for f in range(len(FIELDS))]
    post = post.with_columns(
        term=pl.lit(pl.Series(w, dtype=pl.Float64)).gather(pl.col("fnum"))
        * pl.col("tf")
        / pl.lit(norms).gather(
            pl.lit(pl.Series(slots, dtype=pl.UInt32)).gather(pl.col("fnum")) * n
            + pl.col("node_row")
        ),
        field=pl.lit(pl.Series(FIELDS, dtype=pl.String)).gather(pl.col("fnum")),
        token=pl.lit(index._vocab_token).gather(pl.col("token_id")),
    ).with_columns(share=pl.col("term") / pl.col("term").sum().over("node_row", "qtoken"))
    idf = df.select("qtoken", idf=(1 + (docs - pl.col("df") + 0.5) / (pl.col("df") + 0.5)).log())
    split = (
        tok.drop("weight", "token")
        .join(
            post.select("node_row", "qtoken", "field", "token", "share"),
            on=["node_row", "qtoken"],
            how="left",
        )
        .join(idf, on="qtoken", how="left")
        .with_columns(
            contribution=pl.col("contribution") * pl.col("share").fill_null(1.0),
            weight=pl.col("idf"),
            field=pl.col("field").fill_null("content"),
        )
    )
    return split.drop("share", "idf")


def _intent_rows(
    index,
    base: pl.DataFrame,
    rule: Any,
    q,
    deprioritize: Sequence[str],
    deprioritize_factor: float,
) -> pl.DataFrame:
    """One row per hit the intent multipliers changed: the multiplier (``weight``), which ones
    (``source``) and what they took away (``contribution``, rounding included)."""
    from ctxframe._rank import rules as _rules

    intents = q.intents if q is not None else frozenset()
    rows = base["node_row"]
    factors: list[tuple[str, pl.Series, float]] = []
    if "import" not in intents:
        factors.append(
            ("stub", index._is_stub.gather(rows), float(getattr(rule, "stub", _rules.DEFAULT_STUB)))
        )
    if "test" not in intents:
        factors.append(
            ("test", index._is_test.gather(rows), float(getattr(rule, "test", _rules.DEFAULT_TEST)))
        )
    if "doc" not in intents:
        factors.append(
            ("doc", index._is_doc.gather(rows), float(getattr(rule, "doc", _rules.DEFAULT_DOC)))
        )
    regexes = [glob_to_regex(g) for g in deprioritize if g and g.strip()]
    if regexes:
        dep = (
            index._paths.gather(rows)
            .str.contains("|".join(f"(?:{r})" for r in regexes))
            .fill_null(False)
        )
        factors.append(("deprioritize", dep, float(deprioritize_factor)))
    mult = [1.0] * base.height
    why: list[list[str]] = [[] for _ in range(base.height)]
    for name, flag, f in factors:
        if f == 1.0:
            continue
        for i, on in enumerate(flag.to_list()):
            if on:
                mult[i] *= f
                why[i].append(f"{name} x{f:g}")
    out = base.select("rank", "id", "score", "_pre").with_columns(
        weight=pl.Series(mult, dtype=pl.Float64),
        source=pl.Series([", ".join(w) or None for w in why], dtype=pl.String),
    )
    return out.filter(pl.col("weight") != 1.0).select(
        "rank",
        "id",
        "weight",
        "source",
        part=pl.lit("intent"),
        value="_pre",
        contribution=pl.col("score") - pl.col("_pre"),
    )


def explain_text(evidence: pl.DataFrame, limit: int = 12) -> str:
    """Plain text of evidence rows: per hit its biggest pieces of evidence (``limit`` each)."""
    if evidence.is_empty():
        return "(no evidence)"
    lines = []
    for (rank, hid), rows in evidence.group_by(["rank", "id"], maintain_order=True):
        several = rows["rule"].n_unique() > 1  # a fusion: say which member each row is from
        lines.append(f"{rank}. {hid}")
        rows = rows.sort("contribution", descending=True, maintain_order=True)
        for r in rows.head(limit).iter_rows(named=True):
            what = r["part"]
            if r["qtoken"]:
                what += f"  {r['qtoken']}"
                if r["token"] and r["token"] != r["qtoken"]:
                    what += f" -> {r['token']}"
            if r["field"]:
                what += f"  [{r['field']}]"
            if r["source"]:
                what += f"  ({r['source']})"
            if several:
                what = f"{r['rule']}: {what}"
            lines.append(f"    {r['contribution']:+9.3f}  {what}")
        if rows.height > limit:
            rest = rows.tail(rows.height - limit)["contribution"].sum()
            lines.append(f"    {rest:+9.3f}  ({rows.height - limit} more)")
    return "\n".join(lines)

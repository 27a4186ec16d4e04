"""The query pipeline: query tokens -> tier matches (vocabulary joins) -> rule -> intent -> hits.

Matching works on the vocabulary (unique tokens), never node by node:

* **named** (tier 0): the stripped query equals a node's id, label or qualname
  (case-insensitively; boundary nodes such as ``env:PAYMENTS_API_KEY`` match on their label
  ``PAYMENTS_API_KEY``), or the query's tokens are exactly the label's tokens (``usage reporter``
  names ``UsageReporter``). Named hits sort above every scored row by the sort key.
* **exact** (tier 1): the query token is a vocabulary token.
* **prefix** (tier 2): the query token (>= 3 chars) is a proper prefix of a node token
  (``refund`` -> ``refunds``, ``refunding``). One direction only: a short node token such as
  ``ref`` never matches the query ``refund``; plural queries still reach singular tokens
  through the trigram tier.
* **trigram** (tier 3): Sørensen–Dice of the trigram sets (tokens padded with two spaces on
  both sides, so ``refnud`` ~ ``refund`` = 0.5) >= the rule's ``dice`` (0.5).

Prefix ranges come from bisecting the sorted vocabulary, trigram candidates from a sorted
(trigram, token) table; both are expanded to nodes through the postings (token -> nodes),
giving the match table the rule scores (see :mod:`ctxframe.rules`).

After the rule, the pipeline applies, for every rule, the intent multipliers (taken from the
rule's ``stub``/``test``/``doc`` attributes when present): module stubs x0.25 unless the query
says import/module, test files x0.5 unless it says test, doc nodes x0.5 unless it says
doc/spec/readme/adr; then the scope levers: ``within`` keeps only matching paths,
``deprioritize`` multiplies matching paths by ``deprioritize_factor`` (0.5). ``project_tokens``
(the project's own name) multiply the weight of query tokens that are project tokens by
``project_factor`` (0.1) inside the match table, so every rule sees the discount.
Rows sort by (named first, score desc, id asc): same store, same query, same answer.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ctxframe._core.paths import glob_to_regex, is_test_path_expr
from ctxframe._rank import rules as _rules
from ctxframe._rank.tokens import (
    ENGINE,
    tokenize,
    tokenize_expr,
    tokenize_query,
    trigram_table,
    trigrams,
)

__all__ = ["RankIndex", "Ranking"]

NAMED, EXACT, PREFIX, TRIGRAM = 0, 1, 2, 3
SIG_CHARS = 160
DOC_CHARS = 160
SCORE_DECIMALS = 6

TEST_WORDS = frozenset({"test", "tests", "testing"})
IMPORT_WORDS = frozenset({"import", "imports", "module", "modules"})
DOC_WORDS = frozenset({"doc", "docs", "documentation", "adr", "spec", "readme"})
DOC_KINDS = ("section", "document")
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


def _globs_expr(globs: Iterable[str], path: pl.Expr) -> pl.Expr | None:
    regexes = [glob_to_regex(g) for g in globs if g and g.strip()]
    if not regexes:
        return None
    return path.str.contains("|".join(f"(?:{r})" for r in regexes)).fill_null(False)


def _successor(s: str) -> str:
    """Smallest string greater than every string that starts with ``s``."""
    while s:
        last = ord(s[-1])
        if last < 0x10FFFF:
            return s[:-1] + chr(last + 1)
        s = s[:-1]
    return "\U0010ffff" * 2


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


class RankIndex:
    """Prepared ranking state for one store, built once and reused by every query.

    Holds the vocabulary (sorted, with df), postings (token -> nodes), the vocabulary trigram
    table, per-node token counts and intent flags, and the lowercased name table for named hits.
    """

    def __init__(
        self,
        nodes: pl.DataFrame,
        tokens: pl.DataFrame | None = None,
    ):
        if tokens is None:
            from ctxframe._rank.tokens import build_tokens

            tokens = build_tokens(nodes)
        self.nodes = nodes
        n = nodes.height
        self.n_nodes = n
        self._ids = nodes["id"]
        self._labels = nodes["label"]
        idx_of = nodes.select(node_id="id", _idx=pl.int_range(n, dtype=pl.UInt32))

        tok = (
            tokens.lazy()
            .select("node_id", "token")
            .join(idx_of.lazy(), on="node_id", how="inner")
            .select("_idx", "token")
            .unique()
            .collect(engine=ENGINE)
        )
        vocab = (
            tok.group_by("token")
            .agg(df=pl.len().cast(pl.UInt32))
            .sort("token")
            .with_columns(token_id=pl.int_range(pl.len(), dtype=pl.UInt32))
            .with_columns(start=(pl.col("df").cum_sum() - pl.col("df")).cast(pl.UInt32))
        )
        postings = (
            tok.join(vocab.select("token", "token_id"), on="token")
            .select("token_id", "_idx")
            .sort("token_id", "_idx")
        )
        self._vocab_list: list[str] = vocab["token"].to_list()
        self._vocab_token = vocab["token"]
        self._df = vocab["df"]
        self._start = vocab["start"]
        self._post_node = postings["_idx"]

        doc_len = tok.group_by("_idx").len()
        self._doc_len = (
            idx_of.select("_idx")
            .join(doc_len, on="_idx", how="left")
            .sort("_idx")["len"]
            .fill_null(0)
            .cast(pl.Float64)
        )
        self.avg_doc_len = float(tok.height) / n if n else 0.0

        tri = (
            trigram_table(vocab.select("token_id", "token"))
            .select("tri", "token_id")
            .sort("tri", "token_id")
        )
        n_tri = tri.group_by("token_id").len()
        self._n_tri = (
            vocab.select("token_id")
            .join(n_tri, on="token_id", how="left")
            .sort("token_id")["len"]
            .fill_null(0)
            .cast(pl.UInt32)
        )
        self._tri_tok = tri["token_id"]
        spans = (
            tri.with_row_index("_r")
            .group_by("tri")
            .agg(lo=pl.col("_r").min(), hi=pl.col("_r").max() + 1)
        )
        self._tri_span: dict[str, tuple[int, int]] = {
            t: (lo, hi) for t, lo, hi in spans.iter_rows()
        }

        path = pl.col("path")
        flags = nodes.select(
            stub=pl.col("id").str.starts_with(STUB_PREFIX).fill_null(False),
            test=is_test_path_expr(path),
            doc=pl.col("kind").is_in(DOC_KINDS).fill_null(False),
        )
        self._is_stub = flags["stub"]
        self._is_test = flags["test"]
        self._is_doc = flags["doc"]
        self._paths = nodes["path"]

        names = pl.concat(
            [
                nodes.select(
                    name=pl.col(c).str.strip_chars().str.to_lowercase(), _idx=idx_of["_idx"]
                )
                for c in ("id", "label", "qualname")
            ]
            + [
                nodes.select(
                    name=tokenize_expr(pl.col("label")).list.join(" "), _idx=idx_of["_idx"]
                )
            ]
        )
        names = names.filter(pl.col("name").is_not_null() & (pl.col("name") != "")).unique()
        names = names.sort("name", "_idx")
        self._names = names["name"]
        self._name_idx = names["_idx"]

    # ----------------------------------------------------------------- cache

    def state(self) -> dict[str, pl.DataFrame]:
        """Everything built from the store, as frames, so a later process can skip building."""
        spans = list(self._tri_span.items())
        return {
            "vocab": pl.DataFrame(
                {
                    "token": self._vocab_token,
                    "df": self._df,
                    "start": self._start,
                    "n_tri": self._n_tri,
                }
            ),
            "postings": pl.DataFrame({"_idx": self._post_node}),
            "node_attrs": pl.DataFrame(
                {
                    "doc_len": self._doc_len,
                    "stub": self._is_stub,
                    "test": self._is_test,
                    "doc": self._is_doc,
                }
            ),
            "trigrams": pl.DataFrame({"token_id": self._tri_tok}),
            "trigram_spans": pl.DataFrame(
                {
                    "tri": [t for t, _ in spans],
                    "lo": [a for _, (a, _) in spans],
                    "hi": [b for _, (_, b) in spans],
                },
                schema={"tri": pl.String, "lo": pl.Int64, "hi": pl.Int64},
            ),
            "names": pl.DataFrame({"name": self._names, "_idx": self._name_idx}),
        }

    @classmethod
    def from_state(cls, nodes: pl.DataFrame, state: dict[str, pl.DataFrame]) -> RankIndex:
        """The index `state()` described, over the same nodes (a cache read back)."""
        self = cls.__new__(cls)
        self.nodes, self.n_nodes = nodes, nodes.height
        self._ids, self._labels, self._paths = nodes["id"], nodes["label"], nodes["path"]
        v, a = state["vocab"], state["node_attrs"]
        self._vocab_token, self._df, self._start, self._n_tri = (
            v["token"],
            v["df"],
            v["start"],
            v["n_tri"],
        )
        self._vocab_list = v["token"].to_list()
        self._post_node = state["postings"]["_idx"]
        self._doc_len = a["doc_len"]
        self.avg_doc_len = float(self._post_node.len()) / self.n_nodes if self.n_nodes else 0.0
        self._is_stub, self._is_test, self._is_doc = a["stub"], a["test"], a["doc"]
        self._tri_tok = state["trigrams"]["token_id"]
        sp = state["trigram_spans"]
        self._tri_span = dict(
            zip(
                sp["tri"].to_list(),
                zip(sp["lo"].to_list(), sp["hi"].to_list(), strict=True),
                strict=True,
            )
        )
        self._names, self._name_idx = state["names"]["name"], state["names"]["_idx"]
        return self

    # ----------------------------------------------------------------- lookups

    def named(self, text: str) -> pl.Series:
        """Row indices of the nodes the whole query names (tier 0)."""
        keys = {text.strip().lower(), " ".join(tokenize(text))} - {""}
        if not keys or self._names.is_empty():
            return pl.Series("_idx", [], dtype=pl.UInt32)
        k = pl.Series(sorted(keys), dtype=pl.String)
        lo = self._names.search_sorted(k, side="left")
        hi = self._names.search_sorted(k, side="right")
        found = [i for a, b in zip(lo.to_list(), hi.to_list(), strict=True) for i in range(a, b)]
        if not found:
            return pl.Series("_idx", [], dtype=pl.UInt32)
        return self._name_idx.gather(found).unique().sort().alias("_idx")

    def _vocab_matches(
        self, counts: dict[str, int], *, fuzzy: bool, dice: float, min_prefix: int
    ) -> pl.LazyFrame:
        """(qtoken, token_id, tier, dice) for every vocabulary token each query token matches.

        Exact and prefix matches are ranges of the sorted vocabulary found by bisection;
        trigram candidates share trigrams with the query token (sorted trigram table spans).
        """
        vocab = self._vocab_list
        exact_q, exact_t = [], []
        pre_q, pre_lo, pre_hi = [], [], []
        tri: dict[str, list] = {k: [] for k in ("qtoken", "nq", "lo", "hi", "a", "b")}
        for q in sorted(counts):
            lo = bisect_left(vocab, q)
            is_exact = lo < len(vocab) and vocab[lo] == q
            if is_exact:
                exact_q.append(q)
                exact_t.append(lo)
            if not fuzzy or len(q) < min_prefix:
                continue
            hi = bisect_left(vocab, _successor(q), lo)
            plo = lo + 1 if is_exact else lo
            if hi > plo:
                pre_q.append(q)
                pre_lo.append(plo)
                pre_hi.append(hi)
            grams = trigrams(q)
            for g in sorted(grams):
                span = self._tri_span.get(g)
                if span is not None:
                    for key, val in zip(tri, (q, len(grams), lo, hi, *span), strict=True):
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
        return pl.concat([p.select(list(schema)).cast(schema) for p in parts])

    def match_table(
        self,
        text: str,
        *,
        fuzzy: bool = True,
        dice: float = _rules.DEFAULT_DICE,
        min_prefix: int = 3,
        project_tokens: Iterable[str] = (),
        project_factor: float = DEFAULT_PROJECT_FACTOR,
    ) -> pl.DataFrame:
        """The match table rules score (columns documented in :mod:`ctxframe.rules`).

        ``node_row`` is the node's row in ``nodes``: an integer key rules may group on.
        """
        counts = dict(Counter(tokenize_query(text)))
        project = sorted({t for p in project_tokens for t in tokenize(p)})
        factor = (
            pl.when(pl.col("qtoken").is_in(project)).then(project_factor).otherwise(1.0)
            if project
            else pl.lit(1.0)
        )
        n = float(self.n_nodes)
        tid, row = pl.col("token_id"), pl.col("_idx")
        start = pl.col("start")
        idf = (0.1 + (n / (1 + pl.col("df").cast(pl.Float64))).log()).clip(
            lower_bound=_rules.MIN_WEIGHT
        )
        empty = self.n_nodes == 0 or not self._vocab_list
        vm = self._vocab_matches(counts, fuzzy=fuzzy, dice=dice, min_prefix=min_prefix)
        if empty:
            vm = vm.clear()
            gather = lambda s, col: pl.lit(None, s.dtype)  # noqa: E731
        else:
            gather = lambda s, col: pl.lit(s).gather(col)  # noqa: E731
        return (
            vm.with_columns(df=gather(self._df, tid), start=gather(self._start, tid))
            .with_columns(_p=pl.int_ranges(start, start + pl.col("df"), dtype=pl.UInt32))
            .explode("_p")
            .drop_nulls("_p")
            .with_columns(_idx=gather(self._post_node, pl.col("_p")))
            .select(
                node_id=gather(self._ids, row),
                qtoken="qtoken",
                token=gather(self._vocab_token, tid),
                tier="tier",
                dice="dice",
                df="df",
                n_nodes=pl.lit(self.n_nodes, pl.UInt32),
                factor=factor,
                tf=pl.lit(1, pl.UInt32),
                doc_len=gather(self._doc_len, row),
                avg_doc_len=pl.lit(self.avg_doc_len, pl.Float64),
                query_tf=pl.col("qtoken").replace_strict(counts, default=1, return_dtype=pl.UInt32),
                label=gather(self._labels, row),
                query=pl.lit(text, pl.String),
                node_row="_idx",
            )
            .with_columns(idf=idf * pl.col("factor"))
            .collect(engine=ENGINE)
        )

    # ------------------------------------------------------------------- query

    def rank(
        self,
        text: str,
        *,
        limit: int = 20,
        rule: Any = None,
        within: str | None = None,
        deprioritize: Sequence[str] = (),
        project_tokens: Iterable[str] = (),
        deprioritize_factor: float = DEFAULT_DEPRIORITIZE_FACTOR,
        project_factor: float = DEFAULT_PROJECT_FACTOR,
    ) -> Ranking:
        """The best ``limit`` nodes for ``text``, best first.

        ``rule`` is a registry name, rule class or object (default IdfTiers); ``within`` keeps
        only nodes whose path matches the glob; ``deprioritize`` globs multiply matching nodes by
        ``deprioritize_factor``; query tokens among ``project_tokens`` weigh ``project_factor``
        as much.
        """
        rule = _rules.get_rule(rule)
        text = text or ""
        words = set(tokenize(text))
        matches = self.match_table(
            text,
            fuzzy=bool(getattr(rule, "fuzzy", True)),
            dice=float(getattr(rule, "dice", _rules.DEFAULT_DICE)),
            min_prefix=int(getattr(rule, "min_prefix", 3)),
            project_tokens=project_tokens,
            project_factor=project_factor,
        )
        scored = rule.score(matches)
        have = set(scored.columns)
        base = scored.lazy().select(
            *([pl.col("node_row").cast(pl.UInt32)] if "node_row" in have else []),
            pl.col("node_id").cast(pl.String),
            score=pl.col("score").cast(pl.Float64),
            tier=pl.col("tier").cast(pl.Int8) if "tier" in have else pl.lit(None, pl.Int8),
        )
        if "node_row" not in have or "tier" not in have:
            # a user rule: recover each node's row and best matched tier from the matches
            by_node = (
                matches.lazy()
                .group_by("node_row")
                .agg(node_id=pl.first("node_id"), mtier=pl.min("tier"))
            )
            base = (
                base.drop("node_row", strict=False)
                .join(by_node, on="node_id", how="inner")
                .select("node_row", "node_id", "score", tier=pl.coalesce("tier", "mtier"))
            )
        named = self.named(text)
        if named.len():
            extra = pl.LazyFrame({"node_row": named}).select(
                "node_row",
                node_id=pl.lit(self._ids).gather(pl.col("node_row")),
                score=pl.lit(0.0),
                tier=pl.lit(None, pl.Int8),
            )
            base = pl.concat([base, extra]).unique("node_row", keep="first")
        flag = lambda s: pl.lit(s).gather(pl.col("node_row"))  # noqa: E731
        path = pl.col("path")
        cand = base.with_columns(
            named=pl.col("node_row").is_in(named.implode()),
            score=pl.col("score").fill_null(0.0),
            path=flag(self._paths),
        )
        if within:
            cand = cand.filter(path.str.contains(glob_to_regex(within)).fill_null(False))
        mult = pl.lit(1.0)
        if not words & IMPORT_WORDS:
            stub = getattr(rule, "stub", _rules.DEFAULT_STUB)
            mult = mult * pl.when(flag(self._is_stub)).then(stub).otherwise(1.0)
        if not words & TEST_WORDS:
            test = getattr(rule, "test", _rules.DEFAULT_TEST)
            mult = mult * pl.when(flag(self._is_test)).then(test).otherwise(1.0)
        if not words & DOC_WORDS:
            doc = getattr(rule, "doc", _rules.DEFAULT_DOC)
            mult = mult * pl.when(flag(self._is_doc)).then(doc).otherwise(1.0)
        dep = _globs_expr(deprioritize, path)
        if dep is not None:
            mult = mult * pl.when(dep).then(deprioritize_factor).otherwise(1.0)

        ranked = (
            cand.with_columns(score=(pl.col("score") * mult).round(SCORE_DECIMALS))
            .filter(pl.col("named") | (pl.col("score") > 0))
            .with_columns(
                tier=pl.when("named")
                .then(pl.lit(NAMED, pl.Int8))
                .otherwise(pl.col("tier"))
                .cast(pl.Int8)
            )
            .select("node_row", "node_id", "named", "score", "tier")
            .collect(engine=ENGINE)
        )
        total = ranked.height
        top = ranked.sort(["named", "score", "node_id"], descending=[True, True, False]).head(
            max(0, limit)
        )
        hits = (
            self.nodes[top["node_row"]]
            .with_columns(
                score=top["score"],
                tier=top["tier"],
                rank=pl.int_range(1, top.height + 1, dtype=pl.Int32),
            )
            .select(list(HIT_COLUMNS))
        )

        return Ranking(
            query=text,
            hits=hits,
            rows=top["node_row"],
            total=total,
            rule=str(getattr(rule, "name", type(rule).__name__)),
            tokens=tokenize_query(text),
        )

"""Query-side evidence: what a long question (a bug report, a traceback) says about the code.

A paragraph names the code it is about in a few places: file paths (``django/db/models/query.py``,
``File "x.py", line 3, in f`` frames, GitHub blob links), dotted names (``QuerySet.filter``,
``sklearn.compose``), backticked spans, and words shaped like identifiers (``CamelCase``,
``snake_case``, ``call()``). The rest is prose, whose words repeat without saying more.

:func:`extract` turns the text into an :class:`Evidence`:

* ``weights`` — one weight per query token (the tokens of :func:`ctxframe.tokenize_query`):
  ``ident`` for tokens of identifier-shaped words, ``path`` for tokens of paths, ``prose``
  otherwise (the best kind a token was seen as wins), times a sublinear term frequency
  ``1 + tf_log * ln(count)`` so a word repeated ten times is not ten times the evidence, times
  ``title`` for the tokens of the first line of a text of several lines (a bug report's title
  states the problem in a few words; the body adds context, output and template noise);
* ``paths`` — file paths the text names (relative, lowercased, leading ``/`` and ``./`` and
  anything up to ``site-packages/`` dropped), ``modules`` — dotted names read as module paths
  (``django.db.models.query`` -> ``django/db/models/query``), and ``names`` — identifiers that
  may name a definition (``QuerySet.filter``, ``set_output``; the qualname as written);
* ``frames`` — ``(path, function)`` pairs from Python traceback lines;
* ``title`` — the query tokens of the title (the first line of a text of several lines).

:func:`hint_bonus` scores nodes of a match table against those hints; the ranking rule
(:class:`ctxframe._rank.rules.EvidenceRule`, and the default rule for long questions) adds
it to the token score.
Everything is deterministic and pure Python/Polars; no model.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

from ctxframe._core.paths import is_test_path_expr
from ctxframe._rank.matches import row_key
from ctxframe._rank.tokens import QUERY_STOPWORDS, tokenize, tokenize_query

__all__ = [
    "Evidence",
    "EvidenceWeights",
    "evidence_score",
    "extract",
    "hint_bonus",
    "is_long",
    "node_parts",
]

# File paths: at least one folder or a source extension (x.py, a/b/c.py, a/b/c).
_EXT = (
    r"(?:py|pyi|pyx|js|jsx|ts|tsx|go|rs|java|c|h|cc|cpp|hpp|rb|php|cs|rst|md|txt|cfg|toml"
    r"|ini|yml|yaml|json|html|css|sql)"
)
_PATH_RE = re.compile(
    rf"(?<![\w/.-])((?:[A-Za-z]:)?[\w.~-]*(?:/[\w.-]+)+\.{_EXT}|[\w-]+(?:\.[\w-]+)*\.{_EXT})(?![\w/])"
)
_FRAME_RE = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([\w<>.]+))?')
_URL_RE = re.compile(r"https?://\S+")
_BLOB_RE = re.compile(r"/(?:blob|tree)/[^/\s]+/([\w./-]+?)(?:#L\d+(?:-L\d+)?)?(?=[\s)\]>'\"]|$)")
_BACKTICK_RE = re.compile(r"``?([^`\n]{1,120}?)``?")
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_DOTTED_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w(]*\.\w)")
_CALL_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(")
_CAMEL_RE = re.compile(
    r"(?<![\w.])([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[a-z][a-z0-9]*(?:[A-Z][A-Za-z0-9]*)+)(?!\w)"
)
_SNAKE_RE = re.compile(r"(?<![\w.])(_{0,2}[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_{0,2})(?!\w)")
_WORD_RE = re.compile(r"[^\W\d_][\w]*")

# Words that look dotted or called but are English or shell noise, never code names.
_NOT_NAMES = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a", "print", "self", "cls", "super"})
_NAME_SKIP_PREFIXES = ("self.", "cls.")


@dataclass(frozen=True)
class EvidenceWeights:
    """Tunable weights of query-side evidence (defaults measured on SWE-bench dev, see
    docs/ranking.md)."""

    prose: float = 1.0
    ident: float = 2.0
    path: float = 1.5
    tf_log: float = 0.5  # weight x (1 + tf_log * ln(count)); 0 counts a word once
    path_bonus: float = 36.0  # a file the text names: its nodes get this (file node: x2)
    module_bonus: float = 6.0  # a module the text names by dotted path
    name_bonus: float = 18.0  # a definition the text names (x its rarity, at most 1)
    frame_bonus: float = 24.0  # a (file, function) of a traceback frame
    long_tokens: int = 12  # at least this many distinct query tokens: a long query
    bonus_scale: str = "max"  # bonus unit: "max" query-token weight, or "one"
    title: float = 1.5  # tokens of a several-line text's first line (its title): weight x this
    title_tokens: int = 20  # ...when that line has at most this many distinct query tokens
    title_file_bonus: float = 4.0  # a source file named like a title word (split between them)
    fence_names: float = 0.2  # names seen only inside ``` fenced code: name bonus x this
    env_tokens: float = 0.2  # tokens seen only in an environment section (versions): weight x this


@dataclass(frozen=True)
class Evidence:
    """What :func:`extract` found in a text (see the module docstring)."""

    weights: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    paths: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    frames: tuple[tuple[str, str], ...] = ()
    identifiers: tuple[str, ...] = ()
    title: tuple[str, ...] = ()  # the query tokens of the text's title (first line), if any
    fenced: tuple[str, ...] = ()  # names the text gives only inside ``` fenced code

    @property
    def long(self) -> bool:
        """A paragraph rather than a phrase (by distinct query tokens)."""
        return len(self.weights) >= EvidenceWeights().long_tokens

    @property
    def has_code_evidence(self) -> bool:
        """The text names a path, a module, a dotted or identifier-shaped name."""
        return bool(self.paths or self.modules or self.names or self.frames)


def _norm_path(p: str) -> str:
    p = p.strip().strip("'\"`()[]<>,;:").replace("\\", "/")
    if "site-packages/" in p:
        p = p.split("site-packages/")[-1]
    elif "dist-packages/" in p:
        p = p.split("dist-packages/")[-1]
    while p.startswith("./"):
        p = p[2:]
    p = re.sub(r"^[A-Za-z]:/", "", p)
    return p.lstrip("/").lower()


def _is_name(s: str) -> bool:
    if not s or s.lower() in _NOT_NAMES or len(s) < 3:
        return False
    return not re.fullmatch(r"[\d.]+", s)


def _names_of_dotted(d: str) -> list[str]:
    """``self.x.y`` -> ``x.y``; a dotted name also names its last one or two parts."""
    for pre in _NAME_SKIP_PREFIXES:
        if d.startswith(pre):
            d = d[len(pre) :]
    parts = [p for p in d.split(".") if p]
    out = []
    if len(parts) >= 2:
        out.append(".".join(parts[-2:]))
    if parts:
        out.append(parts[-1])
    return [n for n in out if _is_name(n)]


def extract(
    text: str | None, weights: EvidenceWeights | None = None, counts: dict[str, int] | None = None
) -> Evidence:
    """Read paths, module names, identifiers and traceback frames out of ``text`` (``counts``:
    its query tokens' counts when already known)."""
    w = weights or EvidenceWeights()
    text = text or ""
    paths: list[str] = []
    modules: list[str] = []
    names: list[str] = []
    idents: list[str] = []
    frames: list[tuple[str, str]] = []
    path_spans: list[str] = []

    for m in _FRAME_RE.finditer(text):
        p = _norm_path(m.group(1))
        if p:
            paths.append(p)
            path_spans.append(m.group(1))
            if m.group(3) and m.group(3) not in ("<module>", "<lambda>"):
                frames.append((p, m.group(3).split(".")[-1]))
                names.append(m.group(3))
    for m in _BLOB_RE.finditer(text):
        paths.append(_norm_path(m.group(1)))
        path_spans.append(m.group(1))
    scrubbed = _URL_RE.sub(" ", text)
    for m in _PATH_RE.finditer(scrubbed):
        raw = m.group(1)
        if "/" not in raw and raw.count(".") > 1:
            # a dotted module name ending in a word like .py/.json: leave it to the dotted pass
            continue
        paths.append(_norm_path(raw))
        path_spans.append(raw)
    no_paths = _PATH_RE.sub(" ", scrubbed)

    idents = _identifiers(no_paths, modules)
    for ident in idents:
        if "." in ident:
            names.extend(_names_of_dotted(ident))
        elif _is_name(ident):
            names.append(ident)
    fenced: set[str] = set()
    if "```" in text and w.fence_names != 1.0:
        prose = _FENCE_RE.sub(" ", no_paths)
        outside = set()
        for ident in _identifiers(prose, []):
            outside.update(_names_of_dotted(ident) if "." in ident else [ident])
        fenced = {n for n in names if n not in outside}

    # token weights: best kind seen x sublinear tf
    if counts is None:
        counts = Counter(tokenize_query(text))
    kind: dict[str, float] = dict.fromkeys(counts, w.prose)
    for span in path_spans:
        for t in tokenize(span):
            if t in kind:
                kind[t] = max(kind[t], w.path)
    for ident in idents:
        for t in tokenize(ident):
            if t in kind:
                kind[t] = max(kind[t], w.ident)
    weights_out = {t: kind[t] * (1.0 + w.tf_log * math.log(c)) for t, c in sorted(counts.items())}
    if w.env_tokens != 1.0 and text.count("\n") >= 2:
        env, rest = _environment(text)
        if env:
            for t in (set(tokenize_query(env)) - set(tokenize_query(rest))) & weights_out.keys():
                weights_out[t] *= w.env_tokens
    title = _title_tokens(text, w.title_tokens) & weights_out.keys()
    if w.title != 1.0:
        for t in title:
            weights_out[t] *= w.title
    return Evidence(
        weights=weights_out,
        counts=dict(counts),
        paths=_dedupe(p for p in paths if p),
        modules=_dedupe(modules),
        names=_dedupe(n for n in names if n.lower() not in QUERY_STOPWORDS),
        frames=tuple(dict.fromkeys(frames)),
        identifiers=_dedupe(idents),
        title=tuple(sorted(title)),
        fenced=tuple(sorted(fenced)),
    )


_HEADING_RE = re.compile(r"^\s{0,3}(?:#{1,6}\s*|\*\*)?(.{1,60}?)(?:\*\*)?\s*:?\s*$")
_ENV_RE = re.compile(
    r"\b(environment|system info(?:rmation)?|versions?|installed versions|show_versions|"
    r"platform|pip (?:list|freeze)|dependencies)\b",
    re.I,
)
_VERSION_LINE_RE = re.compile(r"^\s*[\w.\-\[\]\" ]{1,40}\s*(?::|==|=|>=)\s*\"?v?\d+(?:\.\d+)+")


def _environment(text: str) -> tuple[str, str]:
    """``(environment, rest)``: the text's environment sections — a heading that says
    environment, versions or system information, up to the next heading — and its runs of
    three or more ``name: 1.2.3`` lines; and the rest of the text."""
    env, rest = [], []
    inside = fenced = False
    lines = text.splitlines()
    version = [bool(_VERSION_LINE_RE.match(ln)) for ln in lines]
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
        elif not fenced:
            heading = stripped.startswith(("#", "**", "<summary")) or (
                stripped.endswith(":") and len(stripped) <= 40
            )
            if heading and _HEADING_RE.match(line):
                inside = bool(_ENV_RE.search(line))
        run = sum(version[max(0, i - 2) : i + 3]) >= 3 and version[i]
        (env if inside or run else rest).append(line)
    return "\n".join(env), "\n".join(rest)


def _identifiers(text: str, modules: list[str]) -> list[str]:
    """Identifier-shaped words of ``text`` (backticked, dotted, called, CamelCase, snake_case);
    dotted ones are also read as module paths into ``modules``."""
    idents: list[str] = []
    for m in _BACKTICK_RE.finditer(text):
        span = m.group(1).strip()
        for d in _DOTTED_RE.findall(span):
            idents.append(d)
        for word in re.findall(r"[A-Za-z_][\w.]*", span):
            if _is_name(word.strip(".")):
                idents.append(word.strip("."))
    for d in _DOTTED_RE.findall(text):
        if _is_name(d) and not re.fullmatch(r"[a-z]{1,3}\.[a-z]{1,3}", d):
            idents.append(d)
            parts = d.split(".")
            if len(parts) >= 2 and parts[0] not in ("self", "cls"):
                modules.append("/".join(p.lower() for p in parts))
    for rx in (_CALL_RE, _CAMEL_RE, _SNAKE_RE):
        for s in rx.findall(text):
            if _is_name(s):
                idents.append(s)
    return idents


def _title_tokens(text: str, limit: int) -> set[str]:
    """The query tokens of the text's title: its first non-empty line, when more lines follow
    and that line has at most ``limit`` distinct query tokens (a summary, not a paragraph)."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) < 2:
        return set()
    toks = set(tokenize_query(lines[0]))
    return toks if len(toks) <= limit else set()


def _has_hints(ev: Evidence, w: EvidenceWeights) -> bool:
    """The text names code (paths, modules, names, frames) or has a title that may name a
    file."""
    return ev.has_code_evidence or bool(w.title_file_bonus and ev.title)


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def node_parts(ids: pl.Series) -> pl.DataFrame:
    """Per node id: lowercased path (``_path``), qualified name (``_qual``) and whether it is
    a definition (``_sym``) — what :func:`hint_bonus` matches hints against, computed once per
    index instead of once per question."""
    return pl.DataFrame({"node_id": ids}).select(_node_parts())


def _node_parts() -> list[pl.Expr]:
    nid = pl.col("node_id")
    has = nid.str.contains("::", literal=True)
    path = pl.when(has).then(nid.str.split("::").list.first()).otherwise(nid)
    qual = (
        pl.when(has)
        .then(nid.str.split("::").list.last().str.replace(r"#\d+$", ""))
        .otherwise(pl.lit(None, pl.String))
    )
    return [path.str.to_lowercase().alias("_path"), qual.alias("_qual"), has.alias("_sym")]


def hint_bonus(
    nodes: pl.DataFrame, ev: Evidence, weights: EvidenceWeights | None = None
) -> pl.DataFrame:
    """``node_id, bonus`` for nodes (a frame with ``node_id`` and ``label``) the hints name.

    * a named file (path equal, or one a suffix of the other at a ``/``): its file node gets
      ``2 x path_bonus``, its symbols ``path_bonus``; split between the files one hint matches;
    * a named module (``a/b/c`` -> ``a/b/c.py`` or ``a/b/c/__init__.py``): ``module_bonus``
      (file node x2), likewise split;
    * a named definition (qualname equal to a name, or label equal to an undotted one):
      ``name_bonus x ln(1 + N / matches)``, N the nodes given — rare names count more;
    * a traceback frame (file and function): ``frame_bonus`` to that function;
    * a title word that names a source file (its name without the extension and leading or
      trailing ``_``, a package's ``__init__`` by its folder: ``colorbar`` -> ``colorbar.py``,
      ``autodoc`` -> ``autodoc/__init__.py``; test and prose files left out): ``title_file_bonus``
      (file node x2), split between the files it names like a module hint.

    Path and module hints are matched against the distinct files of ``nodes`` (a few thousand
    at most), then spread to their nodes with one join. ``nodes`` may carry the columns of
    :func:`node_parts` already (one row per node then), else they are computed here."""
    return _hint_bonus(nodes, ev, weights or EvidenceWeights(), "node_id")


def _hint_bonus(
    nodes: pl.DataFrame, ev: Evidence, w: EvidenceWeights, key: str, detail: bool = False
) -> pl.DataFrame:
    """:func:`hint_bonus` keyed by ``key`` (``node_id``, or ``node_row`` when ``nodes`` has
    one row per node with it and the :func:`node_parts` columns). ``detail``: one row per
    (node, hint) instead, with the hint's ``kind`` (path, module, name, frame, title) and the
    ``hint`` itself (what explains a bonus)."""
    schema = {key: nodes.schema[key], "bonus": pl.Float64}
    if detail:
        schema = {key: nodes.schema[key], "kind": pl.String, "hint": pl.String, "bonus": pl.Float64}
    if nodes.is_empty() or not _has_hints(ev, w):
        return pl.DataFrame(schema=schema)
    if {"_path", "_qual", "_sym"} <= set(nodes.columns):
        base = nodes.select(*dict.fromkeys([key, "node_id"]), "label", "_path", "_qual", "_sym")
    else:
        base = nodes.select("node_id", "label").unique("node_id").with_columns(_node_parts())
    files = base.select("_path").unique().drop_nulls()
    slash_path = pl.lit("/") + pl.col("_path")
    # (the files a hint names, its bonus, its kind, the hint)
    hints: list[tuple[pl.Expr, float, str, str]] = []
    for p in ev.paths[:40] if w.path_bonus else ():
        hit = (pl.col("_path") == p) | pl.lit("/" + p).str.ends_with(slash_path)
        if "/" in p:
            hit = hit | slash_path.str.ends_with("/" + p)
        else:
            hit = hit | pl.col("_path").str.ends_with("/" + p)
        hints.append((hit, w.path_bonus, "path", p))
    if w.module_bonus:
        stem = pl.col("_path").str.replace(r"(?:/__init__)?\.pyi?$", "")
        is_py = pl.col("_path").str.contains(r"\.pyi?$")
        modules = [m for m in ev.modules[:40] if m.count("/") >= 1]
        if modules:
            files = files.with_columns(_stem=stem, _py=is_py)
        for m in modules:
            hit = pl.col("_py") & (
                (pl.col("_stem") == m) | (pl.lit("/") + pl.col("_stem")).str.ends_with("/" + m)
            )
            hints.append((hit, w.module_bonus, "module", m))
    title = [t for t in ev.title if len(t) >= 3] if w.title_file_bonus else []
    if title:  # a source file whose name (a package's: its folder's) is a word of the title
        name = (
            pl.col("_path")
            .str.replace(r"/__init__\.pyi?$", "")
            .str.extract(r"([^/]+?)(?:\.[a-z0-9]+)?$")
            .str.strip_chars("_")
        )
        prose = pl.col("_path").str.contains(r"\.(?:md|markdown|rst|txt)$")
        files = files.with_columns(_name=name, _src=~is_test_path_expr(pl.col("_path")) & ~prose)
        for t in title:
            hints.append((pl.col("_src") & (pl.col("_name") == t), w.title_file_bonus, "title", t))
    parts: list[pl.DataFrame] = []
    if hints and files.height:
        # every hint at once: one flag column per hint, its bonus split between its files
        flags = files.select(
            h.fill_null(False).alias(f"_h{i}") for i, (h, _b, _k, _t) in enumerate(hints)
        )
        counts = flags.sum().row(0)
        used = [i for i, (h, c) in enumerate(zip(hints, counts, strict=True)) if c and h[1]]
        if used:
            share = [pl.col(f"_h{i}").cast(pl.Float64) * (hints[i][1] / counts[i]) for i in used]
            file_mult = pl.when(pl.col("_sym")).then(1.0).otherwise(2.0)
            flagged = pl.concat([files.select("_path"), flags], how="horizontal").filter(
                pl.any_horizontal(pl.col(f"_h{i}") for i in used)
            )
            if detail:
                for i, expr in zip(used, share, strict=True):
                    one = flagged.select("_path", fbonus=expr).filter(pl.col("fbonus") > 0)
                    parts.append(
                        base.join(one, on="_path").select(
                            key,
                            kind=pl.lit(hints[i][2]),
                            hint=pl.lit(hints[i][3]),
                            bonus=pl.col("fbonus") * file_mult,
                        )
                    )
            else:
                fb = flagged.select("_path", fbonus=pl.sum_horizontal(share))
                parts.append(
                    base.join(fb, on="_path").select(key, bonus=pl.col("fbonus") * file_mult)
                )
    names = list(ev.names[:80]) if w.name_bonus else []
    if names:
        dotted = [n for n in names if "." in n]
        plain = [n for n in names if "." not in n]
        hit = (pl.col("_qual").is_in(dotted) | pl.col("label").is_in(plain)).fill_null(False)
        named = base.filter(hit & pl.col("_sym"))
        if named.height:
            n_total = float(max(base.height, 1))
            which = pl.when(pl.col("_qual").is_in(dotted)).then(pl.col("_qual")).otherwise("label")
            named = named.with_columns(_k=which).with_columns(_n=pl.len().over("_k"))
            rare = (1.0 + n_total / pl.col("_n").cast(pl.Float64)).log()
            if ev.fenced and w.fence_names != 1.0:  # named only in a code sample
                fenced = pl.col("_k").is_in(list(ev.fenced))
                rare = rare * pl.when(fenced).then(w.fence_names).otherwise(1.0)
            label = {"kind": pl.lit("name"), "hint": pl.col("_k")} if detail else {}
            parts.append(
                named.select(key, **label, bonus=w.name_bonus * rare / math.log(1 + n_total))
            )
    if w.frame_bonus:
        for fpath, func in ev.frames[:40]:
            hit = (
                pl.col("_sym")
                & (pl.col("label") == func)
                & ((pl.col("_path") == fpath) | pl.lit("/" + fpath).str.ends_with(slash_path))
            )
            framed = base.filter(hit.fill_null(False))
            if framed.height:
                label = {"kind": pl.lit("frame"), "hint": pl.lit(f"{fpath}:{func}")}
                parts.append(
                    framed.select(
                        key, **(label if detail else {}), bonus=pl.lit(float(w.frame_bonus))
                    )
                )
    if not parts:
        return pl.DataFrame(schema=schema)
    if detail:
        out = pl.concat([p.cast(schema) for p in parts]).group_by(key, "kind", "hint").agg(
            pl.col("bonus").sum()
        )
        return out.filter(pl.col("bonus") > 0).cast(schema).sort(key, "kind", "hint")
    out = pl.concat(parts).group_by(key).agg(pl.col("bonus").sum())
    return out.filter(pl.col("bonus") > 0).cast(schema)


def evidence_score(
    base,
    matches: pl.DataFrame,
    weights: EvidenceWeights | None = None,
    evidence: Evidence | None = None,
    nodes: pl.DataFrame | None = None,
    trace=None,
) -> pl.DataFrame:
    """Score a match table with ``base`` (an :class:`~ctxframe.rules.IdfTiers`) and evidence:
    per-token evidence weights replace ``query_tf``, and :func:`hint_bonus` (in units of the
    query's strongest token weight) is added. ``score, tier`` per node, keyed like the match
    table (``node_row`` when it has one, else ``node_id``). ``evidence``: the question's, when
    already extracted (with the same ``weights``); ``nodes``: ``node_row, node_id, label`` of
    the matched nodes when the table does not carry them (a lean table). ``trace`` (a
    :class:`ctxframe._rank.parts.Trace`): the name score per tier and each kind of hint bonus
    as part columns too, and the name matches and hints recorded."""
    from ctxframe._rank.parts import HINT_KINDS, name_sums, tier_trace

    w = weights or EvidenceWeights()
    ev = evidence if evidence is not None else extract(matches["query"][0], w)
    key, _carry = row_key(matches)
    traced = trace is not None and key == "node_row"
    if "q" in matches.columns:  # a lean table: each token's weight gathered by its code
        codes = matches.group_by("q").agg(pl.col("qtoken").first())
        size = int(codes["q"].max()) + 1 if codes.height else 0
        by_code = pl.Series([1.0] * size, dtype=pl.Float64).scatter(
            codes["q"], [float(ev.weights.get(t, 1.0)) for t in codes["qtoken"].to_list()]
        )
        qw = pl.lit(by_code).gather(pl.col("q"))
    else:
        qw = pl.col("qtoken").replace_strict(ev.weights, default=1.0, return_dtype=pl.Float64)
    per = base.best_per_token(matches, qw)
    if traced:
        per = per.collect()
        named = per.lazy()
        if "q" in per.columns:
            named = named.join(codes.lazy().cast({"q": per.schema["q"]}), on="q")
        trace.tokens.append(tier_trace(named).collect())
    scored = (
        per.lazy()
        .group_by(key)
        .agg(
            *(name_sums("value", "t") if traced else []),
            score=pl.col("value").sum(),
            tier=pl.col("t").min().cast(pl.Int8),
        )
        .collect()
    )
    if not _has_hints(ev, w):
        return scored
    if nodes is None:
        nodes = (
            matches.select(key, "node_id", "label")
            if key == "node_id"
            else matches.select(key, "node_id", "label").unique(key)
        )
    direct = (
        key != "node_id"
        and key in nodes.columns
        and {"_path", "_qual", "_sym"} <= set(nodes.columns)
    )  # one row per node with its parts (a lean table's): keyed by row, no join by id
    scale = max(ev.weights.values(), default=1.0) if w.bonus_scale == "max" else 1.0
    if traced:
        hints = _hint_bonus(nodes, ev, w, key if direct else "node_id", detail=True)
        if not direct and hints.height:
            hints = hints.join(nodes.select(key, "node_id"), on="node_id").drop("node_id")
        hints = hints.with_columns(bonus=pl.col("bonus") * scale)
        trace.hints = hints
        bonus = hints.group_by(key).agg(
            pl.col("bonus").sum(),
            *[
                pl.col("bonus").filter(pl.col("kind") == k).sum().alias(f"hint_{k}")
                for k in HINT_KINDS
            ],
        )
        if bonus.is_empty():
            return scored
        return (
            scored.join(bonus, on=key, how="full", coalesce=True)
            .filter(pl.col("score").is_not_null())
            .with_columns(
                pl.col(f"hint_{k}").fill_null(0.0) for k in HINT_KINDS
            )
            .with_columns(score=pl.col("score") + pl.col("bonus").fill_null(0.0))
            .drop("bonus")
        )
    bonus = _hint_bonus(nodes, ev, w, key if direct else "node_id")
    if not bonus.is_empty():
        if key != "node_id" and not direct:
            bonus = bonus.join(nodes.select(key, "node_id"), on="node_id").drop("node_id")
        scored = (
            scored.join(bonus, on=key, how="left")
            .with_columns(score=pl.col("score") + pl.col("bonus").fill_null(0.0) * scale)
            .drop("bonus")
        )
    return scored


def is_long(text: str | None, weights: EvidenceWeights | None = None) -> bool:
    """A paragraph (at least ``long_tokens`` distinct query tokens) or several lines."""
    w = weights or EvidenceWeights()
    if not text:
        return False
    return "\n" in text.strip() or len(set(tokenize_query(text))) >= w.long_tokens

"""`context`: a question's ranked hits as text to paste into an agent's prompt — per hit its
place, signature and source (trimmed around the lines holding the question's words), then its
1-hop neighbours as one-liners — packed into a token budget that counts every printed
character, never overflows, and ends with a marker saying what was left out.

Hits go in rank order; each is tried at decreasing detail (more source lines and neighbours for
the first hits, fewer further down, then signature only) and packing stops at the first hit that
fits at no detail. Sources are read through :class:`SourceReader`, checked against the indexed
content hash. Markdown, XML and JSON are rendered by the same packer, each within the budget.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ctxframe._core.errors import CtxframeError
from ctxframe._graph.excerpt import Excerpt, WordMatcher, excerpt, line_scores
from ctxframe._graph.query import QueryResult
from ctxframe._graph.source import NONE, OK, SourceReader, Span
from ctxframe._render.budget import ELLIPSIS
from ctxframe._render.text import arrow_text, location, one_line
from ctxframe._render.tokencount import TokenCounter, token_counter

DEFAULT_BUDGET_TOKENS = 4000
FORMATS = ("md", "xml", "json")
SIG_CHARS = 200


@dataclass(frozen=True)
class Detail:
    """How much of one hit to show: source lines and neighbour one-liners at most."""

    lines: int
    neighbours: int


def details(rank: int) -> tuple[Detail, ...]:
    """The detail levels tried for the hit at ``rank``, richest first."""
    if rank <= 3:
        first = Detail(30, 4)
    elif rank <= 8:
        first = Detail(12, 2)
    else:
        first = Detail(5, 1)
    levels = [first, Detail(8, 2), Detail(3, 0), Detail(0, 0)]
    out: list[Detail] = []
    for d in levels:
        if d.lines <= first.lines and d.neighbours <= first.neighbours and d not in out:
            out.append(d)
    return tuple(out)


@dataclass
class Item:
    """One hit ready to quote: its node row, its span as read now, its neighbour lines."""

    row: dict[str, Any]
    span: Span
    neighbours: list[str]
    tokens: WordMatcher
    language: str | None = None
    _cache: dict[tuple[int, frozenset[int]], Excerpt] = field(default_factory=dict, repr=False)
    _scores: list[int] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.row.get("qualname") or self.row.get("label") or self.row["id"]

    def where(self) -> str:
        """``path:L10-L40`` as found now (a changed file's re-located lines)."""
        if self.span.lines and self.span.first:
            last = self.span.first + len(self.span.lines) - 1
            return location(
                {"path": self.row["path"], "line_start": self.span.first, "line_end": last}
            )
        return location(self.row)

    def excerpt(self, cap: int, skip: frozenset[int] = frozenset()) -> Excerpt:
        """At most ``cap`` lines of the span, leaving out lines in ``skip`` (quoted above)."""
        if not self.span.lines:
            return Excerpt((), 0, self.span.first or 1)
        lo, hi = self.span.first, self.span.first + len(self.span.lines)
        skip = frozenset(i for i in skip if lo <= i < hi)
        key = (cap, skip)
        if key not in self._cache:
            if self._scores is None and cap < len(self.span.lines):
                self._scores = line_scores(self.span.lines, self.tokens)
            self._cache[key] = excerpt(
                self.span.lines, lo, self.tokens, cap, skip, scores=self._scores
            )
        return self._cache[key]


@dataclass(frozen=True)
class Shown:
    """A packed hit: the item and the detail it got."""

    item: Item
    excerpt: Excerpt
    neighbours: tuple[str, ...]


@dataclass(frozen=True)
class LeftOut:
    """What the packed text does not hold."""

    hits: int  # ranked hits fetched but not shown
    first_rank: int | None  # rank of the first hit not shown
    unfetched: int  # matches beyond the ranked limit
    trimmed: int  # shown hits whose source was cut
    neighbours: int  # neighbour lines of shown hits left out

    def __bool__(self) -> bool:
        return bool(self.hits or self.unfetched or self.trimmed or self.neighbours)

    def text(self, budget_tokens: int, tokenizer: str) -> str:
        parts = []
        if self.hits:
            r = self.first_rank
            parts.append(f"{self.hits} more hit{'s' if self.hits != 1 else ''} (rank {r}+)")
        if self.unfetched:
            parts.append(f"{self.unfetched} lower-ranked matches")
        if self.trimmed:
            parts.append(f"{self.trimmed} excerpt{'s' if self.trimmed != 1 else ''} trimmed")
        if self.neighbours:
            parts.append(f"{self.neighbours} neighbour line{'s' if self.neighbours != 1 else ''}")
        return (
            f"{ELLIPSIS} truncated: {', '.join(parts)} left out "
            f"(budget {budget_tokens} tokens, {tokenizer})"
        )

    def to_dict(self) -> dict[str, int | None]:
        return {
            "hits": self.hits,
            "first_rank": self.first_rank,
            "unfetched": self.unfetched,
            "trimmed": self.trimmed,
            "neighbours": self.neighbours,
        }


# -- formats -------------------------------------------------------------------------------------


def _fence(lines: Sequence[str]) -> str:
    longest = max((len(s) - len(s.lstrip("`")) for s in lines if s.startswith("`")), default=0)
    run = 0
    for s in lines:  # a backtick run anywhere in a line can close a fence too
        cur = 0
        for ch in s:
            cur = cur + 1 if ch == "`" else 0
            run = max(run, cur)
    return "`" * max(3, longest + 1, run + 1)


class Markdown:
    """Headings, fenced source, bullet one-liners; the marker as the last line."""

    name = "md"
    sep = first_sep = "\n\n"

    def header(self, ctx: Context) -> str:
        return f"# {ctx.title}" if ctx.title else f"# Context: {one_line(ctx.question, 300)}"

    def block(self, s: Shown) -> str:
        it = s.item
        lines = [f"## {it.row['rank']}. {it.name} ({it.row['kind']}) {it.where()}"]
        if it.span.note:
            lines.append(f"> {it.span.note}")
        src = s.excerpt.lines()
        if src:
            fence = _fence(src)
            lines.append(f"{fence}{it.language or ''}")
            lines.extend(src)
            lines.append(fence)
        else:
            sig = one_line(it.row.get("signature"), SIG_CHARS)
            if sig:
                lines.append(f"`{sig}`" if "`" not in sig else sig)
        lines.extend(f"- {n}" for n in s.neighbours)
        return "\n".join(lines)

    def tail(self, ctx: Context, left: LeftOut) -> str:
        return f"\n\n{left.text(ctx.budget_tokens, ctx.tokenizer)}" if left else ""

    def empty(self, ctx: Context, message: str) -> str:
        return message


def _x(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cdata(lines: Sequence[str]) -> str:
    """Source kept verbatim in XML: one CDATA section (a ``]]>`` inside is split)."""
    body = "\n".join(lines).replace("]]>", "]]]]><![CDATA[>")
    return f"<![CDATA[\n{body}\n]]>"


class Xml:
    """``<context>`` with one ``<hit>`` per hit, source in ``<source>``; always closed."""

    name = "xml"
    sep = first_sep = "\n"

    def header(self, ctx: Context) -> str:
        return (
            f'<context question="{_x(one_line(ctx.question, 300))}" '
            f'budget_tokens="{ctx.budget_tokens}" '
            f'tokenizer="{_x(ctx.tokenizer)}">'
        )

    def block(self, s: Shown) -> str:
        it = s.item
        attrs = (
            f'rank="{it.row["rank"]}" id="{_x(it.row["id"])}" kind="{_x(it.row["kind"])}" '
            f'location="{_x(it.where())}"'
        )
        if it.span.status not in (OK, NONE):
            attrs += f' status="{_x(it.span.status)}"'
        lines = [f"<hit {attrs}>"]
        if it.span.note:
            lines.append(f"<note>{html.escape(it.span.note, quote=False)}</note>")
        sig = one_line(it.row.get("signature"), SIG_CHARS)
        src = s.excerpt.lines()
        if src:
            lang = f' language="{_x(it.language)}"' if it.language else ""
            lines.append(f"<source{lang}>{_cdata(src)}</source>")
        elif sig:
            lines.append(f"<signature>{_x(sig)}</signature>")
        lines.extend(f"<neighbour>{html.escape(n, quote=False)}</neighbour>" for n in s.neighbours)
        lines.append("</hit>")
        return "\n".join(lines)

    def tail(self, ctx: Context, left: LeftOut) -> str:
        mark = ""
        if left:
            a = " ".join(f'{k}="{v}"' for k, v in left.to_dict().items() if v is not None)
            mark = f"\n<truncated {a}>{_x(left.text(ctx.budget_tokens, ctx.tokenizer))}</truncated>"
        return f"{mark}\n</context>"

    def empty(self, ctx: Context, message: str) -> str:
        return f"{self.header(ctx)}\n<empty>{_x(message)}</empty>\n</context>"


def _j(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


class Json:
    """One compact JSON object: the result's fields, ``hits`` and ``truncated`` (null when
    nothing was left out); built by concatenation so its exact size is known."""

    name = "json"
    sep, first_sep = ",", ""

    def _head(self, ctx: Context) -> dict[str, Any]:
        return {
            "verb": "context",
            "status": "ok",
            "question": ctx.question,
            "budget_tokens": ctx.budget_tokens,
            "tokenizer": ctx.tokenizer,
            "rule": ctx.rule,
            "abstained": ctx.abstained,
        }

    def header(self, ctx: Context) -> str:
        return _j(self._head(ctx))[:-1] + ',"hits":['

    def block(self, s: Shown) -> str:
        it, ex = s.item, s.excerpt
        start, end = it.row.get("line_start"), it.row.get("line_end")
        if it.span.lines and it.span.first:
            start, end = it.span.first, it.span.first + len(it.span.lines) - 1
        return _j(
            {
                "rank": it.row["rank"],
                "id": it.row["id"],
                "kind": it.row["kind"],
                "name": it.name,
                "path": it.row.get("path"),
                "line_start": start,
                "line_end": end,
                "signature": one_line(it.row.get("signature"), SIG_CHARS) or None,
                "status": it.span.status,
                "note": it.span.note,
                "source": "\n".join(ex.lines()) if ex.runs else None,
                "shown": ex.ranges(),
                "trimmed": ex.trimmed,
                "neighbours": list(s.neighbours),
            }
        )

    def tail(self, ctx: Context, left: LeftOut) -> str:
        trunc = (
            {**left.to_dict(), "message": left.text(ctx.budget_tokens, ctx.tokenizer)}
            if left
            else None
        )
        return f'],"truncated":{_j(trunc)}}}'

    def empty(self, ctx: Context, message: str) -> str:
        return _j({**self._head(ctx), "hits": [], "truncated": None, "message": message})


_FORMATS: dict[str, Any] = {"md": Markdown(), "xml": Xml(), "json": Json()}


# -- packing ------------------------------------------------------------------------------------


def _clip(text: str, counter: TokenCounter, budget_tokens: int) -> str:
    """The longest prefix of ``text`` within the budget, ending in ``…`` when cut."""
    if counter.count(text) <= budget_tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix + ellipsis that fits
        mid = (lo + hi + 1) // 2
        if counter.count(text[:mid] + ELLIPSIS) <= budget_tokens:
            lo = mid
        else:
            hi = mid - 1
    out = text[:lo] + ELLIPSIS
    return out if counter.count(out) <= budget_tokens else ""


@dataclass
class Packed:
    """One rendering: its text, the hits shown, what was left out, its size in tokens."""

    text: str
    shown: list[Shown]
    left: LeftOut
    tokens: int


def pack(ctx: Context, fmt: str, budget_tokens: int | None = None) -> Packed:
    """Render ``ctx`` as ``fmt`` within ``budget_tokens`` (default: the context's budget)."""
    f = _FORMATS[fmt]
    budget = ctx.budget_tokens if budget_tokens is None else budget_tokens
    counter = ctx.counter
    if ctx.abstained or not ctx.items:
        text = f.empty(ctx, ctx.message())
        text = _clip(text, counter, budget)
        return Packed(text, [], LeftOut(0, None, 0, 0, 0), counter.count(text))

    max_chars = counter.max_chars(budget)

    def size(parts: Sequence[str]) -> int:
        if max_chars is not None:
            return sum(len(p) for p in parts)
        return sum(counter.count(p) for p in parts)

    limit = max_chars if max_chars is not None else budget
    head = f.header(ctx)
    shown: list[Shown] = []
    parts: list[str] = [head]
    used = size(parts)
    n = len(ctx.items)

    def left_out(k: int, shown_now: list[Shown]) -> LeftOut:
        trimmed = sum(1 for s in shown_now if s.excerpt.trimmed)
        hidden_nb = sum(len(s.item.neighbours) - len(s.neighbours) for s in shown_now)
        return LeftOut(
            hits=n - k,
            first_rank=ctx.items[k].row["rank"] if k < n else None,
            unfetched=max(0, ctx.total - n),
            trimmed=trimmed,
            neighbours=hidden_nb,
        )

    quoted: dict[str, set[int]] = {}  # path -> line numbers quoted so far
    for k, item in enumerate(ctx.items):
        placed = False
        skip = frozenset(quoted.get(item.row.get("path") or "", ()))
        for d in details(item.row["rank"]):
            s = Shown(item, item.excerpt(d.lines, skip), tuple(item.neighbours[: d.neighbours]))
            block = (f.sep if shown else f.first_sep) + f.block(s)
            tail = f.tail(ctx, left_out(k + 1, [*shown, s]))
            if used + size([block]) + size([tail]) <= limit:
                shown.append(s)
                parts.append(block)
                used += size([block])
                placed = True
                if s.excerpt.runs and item.row.get("path"):
                    lines = quoted.setdefault(item.row["path"], set())
                    for a, b in s.excerpt.ranges():
                        lines.update(range(a, b + 1))
                break
        if not placed:
            break
    left = left_out(len(shown), shown)
    text = "".join(parts) + f.tail(ctx, left)
    # a real tokenizer is not additive: drop hits until the whole text fits
    while counter.count(text) > budget and shown:
        shown.pop()
        parts.pop()
        left = left_out(len(shown), shown)
        text = "".join(parts) + f.tail(ctx, left)
    if counter.count(text) > budget:  # not even the header and the marker fit
        bare = f.tail(ctx, left).strip()
        text = bare if counter.count(bare) <= budget else _clip(bare or text, counter, budget)
    return Packed(text, shown, left, counter.count(text))


# -- the result ---------------------------------------------------------------------------------


@dataclass
class Context:
    """A question's hits packed for a prompt; ``str()`` is the Markdown (or the chosen
    ``format``), ``to_dict()`` the JSON rendering, each within ``budget_tokens``."""

    question: str
    items: list[Item]
    total: int
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    format: str = "md"
    rule: str = "idf-tiers"
    abstained: str | None = None
    title: str | None = None  # the Markdown heading (default: "Context: QUESTION")
    counter: TokenCounter = field(default_factory=token_counter, repr=False)
    _packed: dict[tuple[str, int], Packed] = field(default_factory=dict, repr=False)

    @property
    def tokenizer(self) -> str:
        """The name of what counts the budget (``chars/4``, ``tiktoken:cl100k_base``)."""
        return self.counter.name

    def message(self) -> str:
        if self.abstained:
            return f"no structural match for {self.question!r} ({self.abstained})"
        return f"no matches for {self.question!r}"

    def packed(self, fmt: str | None = None, budget_tokens: int | None = None) -> Packed:
        """The packing of one format and budget (cached)."""
        fmt = fmt or self.format
        if fmt not in _FORMATS:
            raise CtxframeError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
        key = (fmt, self.budget_tokens if budget_tokens is None else budget_tokens)
        if key not in self._packed:
            self._packed[key] = pack(self, fmt, key[1])
        return self._packed[key]

    def render(self, format: str | None = None, budget_tokens: int | None = None) -> str:
        """The text in ``format`` (md, xml, json), never over ``budget_tokens``."""
        return self.packed(format, budget_tokens).text

    @property
    def text(self) -> str:
        """The rendering in this context's format."""
        return self.render()

    @property
    def used_tokens(self) -> int:
        """Tokens the rendering in this context's format takes."""
        return self.packed().tokens

    @property
    def shown(self) -> list[str]:
        """Ids of the hits the rendering in this context's format holds, in rank order."""
        return [s.item.row["id"] for s in self.packed().shown]

    @property
    def truncated(self) -> bool:
        """True when the rendering left something out."""
        return bool(self.packed().left)

    def __str__(self) -> str:
        return self.render()

    def __len__(self) -> int:
        return len(self.packed().shown)

    def __repr__(self) -> str:
        p = self.packed()
        return (
            f"<Context {self.question!r}: {len(p.shown)} of {len(self.items)} hits, "
            f"{p.tokens}/{self.budget_tokens} tokens ({self.tokenizer})>"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON rendering (within the budget) as a dict."""
        return json.loads(self.render("json"))

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return {"text/plain": self.render("md"), "text/html": self._repr_html_()}

    def _repr_html_(self) -> str:
        p = self.packed("md")
        head = (
            f"<div><b>context</b> <code>{html.escape(self.question)}</code> · "
            f"{len(p.shown)} of {len(self.items)} hits · {p.tokens}/{self.budget_tokens} tokens "
            f"({html.escape(self.tokenizer)})"
        )
        if not p.shown:
            return f"{head}<p><i>{html.escape(self.message())}</i></p></div>"
        parts = [head]
        for s in p.shown:
            it = s.item
            note = f"<div><i>{html.escape(it.span.note)}</i></div>" if it.span.note else ""
            src = "\n".join(s.excerpt.lines()) or one_line(it.row.get("signature"), SIG_CHARS)
            nb = "".join(f"<li>{html.escape(n)}</li>" for n in s.neighbours)
            parts.append(
                f"<details open><summary>{it.row['rank']}. <b>{html.escape(it.name)}</b> "
                f"<span style='font-size:80%'>{html.escape(str(it.row['kind']))}</span> "
                f"<code>{html.escape(it.where())}</code></summary>{note}"
                f"<pre style='font-size:85%'>{html.escape(src)}</pre>"
                f"{f'<ul>{nb}</ul>' if nb else ''}</details>"
            )
        if p.left:
            parts.append(
                f"<p><i>{html.escape(p.left.text(self.budget_tokens, self.tokenizer))}</i></p>"
            )
        return "".join(parts) + "</div>"


def _neighbour_lines(result: QueryResult, places: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for a in result.neighbours.iter_rows(named=True):
        text = arrow_text(a)
        where = places.get(a.get("other_id") or "")
        out.setdefault(a["hit_id"], []).append(f"{text} ({where})" if where else text)
    return out


def build_context(
    result: QueryResult,
    *,
    nodes: pl.DataFrame,
    files: pl.DataFrame,
    root: str | None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    format: str = "md",
    tokenizer: str | Callable[[str], int] | TokenCounter | None = None,
) -> Context:
    """The :class:`Context` of a query result: each hit's span read from ``root`` and checked
    against ``files``' hashes, its neighbours placed with ``nodes``' paths and lines."""
    if format not in _FORMATS:
        raise CtxframeError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    if budget_tokens < 1:
        raise CtxframeError(f"budget must be at least 1 token, got {budget_tokens}")
    counter = token_counter(tokenizer)
    hits = result.hits
    ids = set(hits["id"].to_list()) | set(result.neighbours["other_id"].drop_nulls().to_list())
    info = nodes.filter(pl.col("id").is_in(list(ids))).select(
        "id", "language", "path", "line_start"
    )
    places = {
        i: (f"{p}:L{ln}" if ln is not None else p) for i, _lang, p, ln in info.iter_rows() if p
    }
    langs = {i: lang for i, lang, _p, _ln in info.iter_rows()}
    arrows = _neighbour_lines(result, places)
    reader = SourceReader(root, files)
    reader.prefetch(hits["path"].drop_nulls().to_list())
    matcher = WordMatcher(result.tokens)
    items = [
        Item(
            row=row,
            span=reader.span(row),
            neighbours=arrows.get(row["id"], []),
            tokens=matcher,
            language=langs.get(row["id"]),
        )
        for row in hits.iter_rows(named=True)
    ]
    return Context(
        question=result.query,
        items=items,
        total=max(int(result.total), len(items)),
        budget_tokens=budget_tokens,
        format=format,
        rule=result.rule,
        abstained=result.abstained,
        counter=counter,
    )

"""`context`: a question's ranked hits as text to paste into an agent's prompt, packed into a
token budget that counts every printed character, never overflows, and ends with a marker
saying what was left out.

Two tiers, in rank order. The first hits are *detailed*: place, source (trimmed around the
lines holding the question's words; more lines for the first hits) and 1-hop neighbours as
one-liners. The hits after them are *compact*: one line each (rank, name, kind, lines, the
declaration's first source line), grouped under their file's path, so the budget reaches far
down the ranking at a few tokens a hit. Detailed blocks may spend the budget only down to a
reserve kept for the compact entries of the hits after them (at most ``COMPACT_SHARE`` of the
budget); a hit that fits no detailed level starts the compact tier. Sources are read through
:class:`SourceReader`, checked against the indexed content hash. Markdown, XML and JSON are
rendered by the same packer, each within the budget.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from ctxframe._core.errors import CtxframeError
from ctxframe._graph.excerpt import Excerpt, WordMatcher, excerpt, head_text, line_scores
from ctxframe._graph.query import QueryResult, hit_language
from ctxframe._graph.source import NONE, OK, SourceReader, Span
from ctxframe._render.budget import ELLIPSIS
from ctxframe._render.text import OUTSIDE, arrow_text, location, one_line
from ctxframe._render.tokencount import TokenCounter, token_counter

DEFAULT_BUDGET_TOKENS = 4000
FORMATS = ("md", "xml", "json")
SIG_CHARS = 200
COMPACT_CHARS = 120  # the longest declaration head a compact entry quotes
COMPACT_SHARE = 0.5  # at most this share of the budget is kept back for compact entries


@dataclass(frozen=True)
class Detail:
    """How much of one hit to show: source lines and neighbour one-liners at most."""

    lines: int
    neighbours: int


def details(rank: int) -> tuple[Detail, ...]:
    """The detailed levels tried for the hit at ``rank``, richest first (the compact entry is
    the level after the last)."""
    if rank <= 3:
        first = Detail(30, 4)
    elif rank <= 8:
        first = Detail(12, 2)
    else:
        first = Detail(5, 1)
    levels = [first, Detail(8, 2), Detail(3, 0)]
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
    _compact: Shown | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.row.get("qualname") or self.row.get("label") or self.row["id"]

    @property
    def path(self) -> str | None:
        return self.row.get("path") or None

    def lines_range(self) -> tuple[int | None, int | None]:
        """First and last line as found now (a changed file's re-located lines)."""
        if self.span.lines and self.span.first:
            return self.span.first, self.span.first + len(self.span.lines) - 1
        return self.row.get("line_start"), self.row.get("line_end")

    def where(self) -> str:
        """``path:L10-L40`` as found now (a changed file's re-located lines)."""
        start, end = self.lines_range()
        return location({"path": self.path, "line_start": start, "line_end": end})

    def lines_text(self) -> str:
        """``L10-L40`` (``L7`` for one line; empty without lines): the place within its file."""
        where, path = self.where(), self.path
        return where[len(path) + 1 :] if path and where.startswith(path + ":") else ""

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

    def compact(self) -> Shown:
        """This hit as a compact entry: its declaration head on one line (the indexed
        signature, not quoted as source, when the span cannot be read)."""
        if self._compact is None:
            lines, first = self.span.lines, self.span.first or 1
            n, text = head_text(lines, COMPACT_CHARS)
            runs = ((first, tuple(lines[:n])),) if n else ()
            if not n:
                text = one_line(self.row.get("signature"), COMPACT_CHARS)
            self._compact = Shown(self, Excerpt(runs, len(lines), first), (), True, text)
        return self._compact


@dataclass(frozen=True)
class Shown:
    """A packed hit: the item and the detail it got; ``compact`` entries show ``head`` only
    (the declaration head on one line, or the indexed signature when no source was read)."""

    item: Item
    excerpt: Excerpt
    neighbours: tuple[str, ...]
    compact: bool = False
    head: str = ""


@dataclass(frozen=True)
class LeftOut:
    """What the packed text does not hold."""

    hits: int  # ranked hits fetched but not shown
    first_rank: int | None  # rank of the first hit not shown
    unfetched: int  # matches beyond the ranked limit
    trimmed: int  # detailed hits whose source was cut
    neighbours: int  # neighbour lines of detailed hits left out
    compact: int = 0  # hits shown as a one-line entry only

    def __bool__(self) -> bool:
        return bool(self.hits or self.unfetched or self.trimmed or self.neighbours or self.compact)

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
        if self.compact:
            c = self.compact
            parts.append(f"{c} hit bod{'ies' if c != 1 else 'y'} (one-line entries)")
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
            "compact": self.compact,
        }


# -- formats -------------------------------------------------------------------------------------
#
# A rendering is: header, detailed blocks (``first_sep`` before the first, ``sep`` between),
# ``hits_close``, the compact section, tail. The compact section is ``more_open``, the file
# groups (``group_sep`` between; each ``group_open(path)``, entries joined by ``entry_sep``,
# ``group_close``), ``more_close``; ``empty_more`` when there are no compact entries. Every
# piece's size adds up to the text's, so packing adds lengths instead of rendering.


def _fence(lines: Sequence[str]) -> str:
    longest = max((len(s) - len(s.lstrip("`")) for s in lines if s.startswith("`")), default=0)
    return "`" * max(3, longest + 1, _backtick_run(lines) + 1)


def _backtick_run(lines: Sequence[str]) -> int:
    run = 0
    for s in lines:  # a backtick run anywhere in a line can close a fence too
        cur = 0
        for ch in s:
            cur = cur + 1 if ch == "`" else 0
            run = max(run, cur)
    return run


def _code_span(text: str) -> str:
    """``text`` as Markdown inline code, its delimiter longer than any backtick run inside."""
    if "`" not in text:
        return f"`{text}`"
    tick = "`" * (_backtick_run([text]) + 1)
    return f"{tick} {text} {tick}"


class Markdown:
    """Headings, fenced source, bullet one-liners; the compact entries as bullets under
    ``### path`` headings; the marker as the last line."""

    name = "md"
    sep = first_sep = "\n\n"
    hits_close = ""
    more_open = "\n\n## More hits (one line each: rank. name (kind) lines `first line`)"
    more_close = empty_more = ""
    group_sep = entry_sep = group_close = ""

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

    def group_open(self, path: str | None) -> str:
        return f"\n\n### {path or OUTSIDE}"

    def entry(self, s: Shown) -> str:
        it = s.item
        parts = [f"\n- {it.row['rank']}."]
        if it.name != it.path:
            parts.append(it.name)
        parts.append(f"({it.row['kind']})")
        if lines := it.lines_text():
            parts.append(lines)
        if it.span.status not in (OK, NONE):
            parts.append(f"[{it.span.status}]")
        if s.head:
            parts.append(_code_span(s.head))
        return " ".join(parts)

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
    """``<context>`` with one ``<hit>`` per detailed hit, source in ``<source>``; then
    ``<more>`` with ``<file path>`` groups of one-line ``<hit>`` entries; always closed."""

    name = "xml"
    sep = first_sep = "\n"
    hits_close = ""
    more_open, more_close, empty_more = "\n<more>", "\n</more>", ""
    group_sep = entry_sep = ""
    group_close = "\n</file>"

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

    def group_open(self, path: str | None) -> str:
        return f'\n<file path="{_x(path or OUTSIDE)}">'

    def entry(self, s: Shown) -> str:
        it = s.item
        attrs = f'rank="{it.row["rank"]}" id="{_x(it.row["id"])}" kind="{_x(it.row["kind"])}"'
        if lines := it.lines_text():
            attrs += f' lines="{lines}"'
        if it.span.status not in (OK, NONE):
            attrs += f' status="{_x(it.span.status)}"'
        tag = "source" if s.excerpt.runs else "signature"
        body = f"<{tag}>{html.escape(s.head, quote=False)}</{tag}>" if s.head else ""
        return f"\n<hit {attrs}>{body}</hit>"

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
    """One compact JSON object: the result's fields, ``hits`` (detailed), ``more`` (compact
    entries grouped by file) and ``truncated`` (null when nothing was left out); built by
    concatenation so its exact size is known."""

    name = "json"
    sep, first_sep = ",", ""
    hits_close = "]"
    more_open, more_close, empty_more = ',"more":[', "]", ',"more":[]'
    group_sep = entry_sep = ","
    group_close = "]}"

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
        start, end = it.lines_range()
        return _j(
            {
                "rank": it.row["rank"],
                "id": it.row["id"],
                "kind": it.row["kind"],
                "name": it.name,
                "path": it.path,
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

    def group_open(self, path: str | None) -> str:
        return '{"path":' + _j(path) + ',"hits":['

    def entry(self, s: Shown) -> str:
        it = s.item
        start, end = it.lines_range()
        obj: dict[str, Any] = {
            "rank": it.row["rank"],
            "id": it.row["id"],
            "kind": it.row["kind"],
            "line_start": start,
            "line_end": end,
        }
        if s.excerpt.runs:
            obj["source"] = s.head
        elif s.head:
            obj["signature"] = s.head
        if it.span.status not in (OK, NONE):
            obj["status"] = it.span.status
        return _j(obj)

    def tail(self, ctx: Context, left: LeftOut) -> str:
        message = ELLIPSIS if ctx.terse else left.text(ctx.budget_tokens, ctx.tokenizer)
        trunc = {**left.to_dict(), "message": message} if left else None
        return f',"truncated":{_j(trunc)}}}'

    def empty(self, ctx: Context, message: str) -> str:
        message = ELLIPSIS if ctx.terse else message
        return _j(
            {**self._head(ctx), "hits": [], "more": [], "truncated": None, "message": message}
        )


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
    """One rendering: its text, the hits shown (detailed, then compact; rank order), what was
    left out, its size in tokens."""

    text: str
    shown: list[Shown]
    left: LeftOut
    tokens: int

    @property
    def detailed(self) -> list[Shown]:
        return [s for s in self.shown if not s.compact]

    @property
    def compact(self) -> list[Shown]:
        return [s for s in self.shown if s.compact]


def _compose(f: Any, ctx: Context, blocks: Sequence[str], entries: Sequence[Shown]) -> str:
    """Header, blocks, the compact section of ``entries`` grouped by file (files in order of
    their first entry) — everything but the tail."""
    out = [f.header(ctx), *blocks, f.hits_close]
    if not entries:
        out.append(f.empty_more)
        return "".join(out)
    groups: dict[str | None, list[str]] = {}
    for s in entries:
        groups.setdefault(s.item.path, []).append(f.entry(s))
    out.append(f.more_open)
    out.append(
        f.group_sep.join(
            f.group_open(p) + f.entry_sep.join(es) + f.group_close for p, es in groups.items()
        )
    )
    out.append(f.more_close)
    return "".join(out)


def _fit_question(ctx: Context, f: Any, budget: int) -> Context:
    """``ctx`` with its question cut (``…``) until the bare document — header, no hits, the
    longest marker, or the empty answer — fits the budget: a JSON or XML document is cut in
    its text fields, never in its structure. Below the bare skeleton (a question of no
    characters) the skeleton is given whole, over the budget."""
    if f.name == "md":
        return ctx
    counter = ctx.counter
    n = len(ctx.items)
    worst = LeftOut(n, ctx.items[0].row["rank"] if n else None, max(0, ctx.total - n), n, n, n)

    def bare(c: Context) -> str:
        if c.abstained or not c.items:
            return f.empty(c, c.message())
        return _compose(f, c, [], []) + f.tail(c, worst)

    if counter.count(bare(ctx)) <= budget:
        return ctx
    q = ctx.question
    lo, hi = 0, len(q)
    while lo < hi:  # the longest prefix of the question whose bare document fits
        mid = (lo + hi + 1) // 2
        if counter.count(bare(replace(ctx, question=q[:mid] + ELLIPSIS, _packed={}))) <= budget:
            lo = mid
        else:
            hi = mid - 1
    out = replace(ctx, question=(q[:lo] + ELLIPSIS) if lo < len(q) else q, _packed={})
    if counter.count(bare(out)) > budget:  # the messages go too: the skeleton, over budget
        out = replace(out, terse=True)
    return out


def pack(ctx: Context, fmt: str, budget_tokens: int | None = None) -> Packed:
    """Render ``ctx`` as ``fmt`` within ``budget_tokens`` (default: the context's budget).
    JSON and XML stay whole documents: their question is cut to make room, never the text."""
    f = _FORMATS[fmt]
    budget = ctx.budget_tokens if budget_tokens is None else budget_tokens
    counter = ctx.counter
    ctx = _fit_question(ctx, f, budget)
    if ctx.abstained or not ctx.items:
        text = f.empty(ctx, ctx.message())
        if f.name == "md":
            text = _clip(text, counter, budget)
        return Packed(text, [], LeftOut(0, None, 0, 0, 0), counter.count(text))

    max_chars = counter.max_chars(budget)

    def size(text: str) -> int:
        return len(text) if max_chars is not None else counter.count(text)

    limit = max_chars if max_chars is not None else budget
    items = ctx.items
    n = len(items)

    def left_out(k: int, shown_now: Sequence[Shown]) -> LeftOut:
        detailed = [s for s in shown_now if not s.compact]
        return LeftOut(
            hits=n - k,
            first_rank=items[k].row["rank"] if k < n else None,
            unfetched=max(0, ctx.total - n),
            trimmed=sum(1 for s in detailed if s.excerpt.trimmed),
            neighbours=sum(len(s.item.neighbours) - len(s.neighbours) for s in detailed),
            compact=len(shown_now) - len(detailed),
        )

    # what the compact entries of the hits after k would take, capped at the reserve
    entry_cost = [size(f.entry(it.compact())) for it in items]
    after = [0] * (n + 1)
    for k in range(n - 1, -1, -1):
        after[k] = after[k + 1] + entry_cost[k]
    reserve_cap = int(COMPACT_SHARE * limit)

    shown: list[Shown] = []
    blocks: list[str] = []
    used = size(f.header(ctx)) + size(f.hits_close) + size(f.empty_more)
    quoted: dict[str, set[int]] = {}  # path -> line numbers quoted so far
    k = 0
    for k, item in enumerate(items):  # the detailed tier
        reserve = min(reserve_cap, after[k + 1])
        skip = frozenset(quoted.get(item.path or "", ()))
        placed = None
        for d in details(item.row["rank"]):
            s = Shown(item, item.excerpt(d.lines, skip), tuple(item.neighbours[: d.neighbours]))
            block = (f.sep if shown else f.first_sep) + f.block(s)
            tail = f.tail(ctx, left_out(k + 1, [*shown, s]))
            if used + size(block) + reserve + size(tail) <= limit:
                placed = (s, block)
                break
        if placed is None:
            break
        s, block = placed
        shown.append(s)
        blocks.append(block)
        used += size(block)
        if s.excerpt.runs and item.path:
            lines = quoted.setdefault(item.path, set())
            for a, b in s.excerpt.ranges():
                lines.update(range(a, b + 1))
    else:
        k = n
    entries: list[Shown] = []
    groups: set[str | None] = set()
    for item in items[k:]:  # the compact tier
        s = item.compact()
        grow = size(f.entry(s))
        if not entries:
            grow += size(f.more_open) + size(f.more_close) - size(f.empty_more)
        if item.path in groups:
            grow += size(f.entry_sep)
        else:
            grow += size(f.group_open(item.path)) + size(f.group_close)
            grow += size(f.group_sep) if groups else 0
        tail = f.tail(ctx, left_out(len(shown) + 1, [*shown, s]))
        if used + grow + size(tail) > limit:
            break
        shown.append(s)
        entries.append(s)
        groups.add(item.path)
        used += grow

    def render(shown_now: list[Shown]) -> tuple[str, LeftOut]:
        nd = sum(1 for s in shown_now if not s.compact)
        left = left_out(len(shown_now), shown_now)
        body = _compose(f, ctx, blocks[:nd], shown_now[nd:])
        return body + f.tail(ctx, left), left

    text, left = render(shown)
    # a real tokenizer is not additive: drop hits until the whole text fits
    while counter.count(text) > budget and shown:
        shown.pop()
        text, left = render(shown)
    # not even the header and the marker fit (a JSON or XML document stays whole: its
    # question was cut as far as it goes)
    if counter.count(text) > budget and f.name == "md":
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
    terse: bool = field(default=False, repr=False)  # JSON's messages cut (a tiny budget)
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
        for s in p.detailed:
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
        if p.compact:
            more = "".join(
                f"<li>{s.item.row['rank']}. <b>{html.escape(s.item.name)}</b> "
                f"<span style='font-size:80%'>{html.escape(str(s.item.row['kind']))}</span> "
                f"<code>{html.escape(s.item.where())}</code> "
                f"<code>{html.escape(s.head)}</code></li>"
                for s in p.compact
            )
            parts.append(f"<details><summary>{len(p.compact)} more hits</summary><ul>{more}</ul>")
            parts.append("</details>")
        if p.left:
            parts.append(
                f"<p><i>{html.escape(p.left.text(self.budget_tokens, self.tokenizer))}</i></p>"
            )
        return "".join(parts) + "</div>"


def _neighbour_lines(result: QueryResult, places: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    langs = {h["id"]: hit_language(h) for h in result.hits.iter_rows(named=True)}
    for a in result.neighbours.iter_rows(named=True):
        text = arrow_text(a, langs.get(a["hit_id"]))
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

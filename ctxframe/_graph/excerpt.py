"""A long span cut down to what matters: its declaration head plus the lines that hold the
question's words (with a line of context each side), gaps marked; a short span whole."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ctxframe._rank.tokens import tokenize

HEAD_MAX = 4  # lines of a declaration kept as its head (a signature spread over lines)
SIGNATURE_MAX = 20  # lines of a declaration a one-line signature may join
PREFIX_MIN = 4  # two words match when one starts with the other and the shorter has 4+ chars
GAP = "⋮"


@dataclass(frozen=True)
class Excerpt:
    """The lines shown of a span: runs of consecutive lines, each ``(first line number,
    lines)``; ``total`` lines in the span from line ``first``; ``above``: line numbers of the
    span already quoted earlier (their gaps say so)."""

    runs: tuple[tuple[int, tuple[str, ...]], ...]
    total: int
    first: int = 1
    above: frozenset[int] = frozenset()

    @property
    def shown(self) -> int:
        """How many lines of the span are quoted."""
        return sum(len(lines) for _, lines in self.runs)

    @property
    def trimmed(self) -> bool:
        """True when some lines of the span were left out."""
        return self.shown < self.total

    def ranges(self) -> list[list[int]]:
        """The quoted line ranges, ``[[first, last], ...]`` (1-based, inclusive)."""
        return [[start, start + len(lines) - 1] for start, lines in self.runs]

    def lines(self) -> list[str]:
        """The quoted text line by line, a gap line wherever lines are left out between and
        after the runs."""
        out: list[str] = []
        nxt = self.first
        for start, lines in self.runs:
            if start > nxt and out:
                out.append(self._gap(nxt, start - 1))
            out.extend(lines)
            nxt = start + len(lines)
        last = self.first + self.total - 1
        if out and nxt <= last:
            out.append(self._gap(nxt, last))
        return out

    def _gap(self, first: int, last: int) -> str:
        seen = bool(self.above) and all(i in self.above for i in range(first, last + 1))
        return gap_line(first, last, above=seen)


def gap_line(first: int, last: int, above: bool = False) -> str:
    """``⋮ L12-L30 (19 lines)``: the lines an excerpt leaves out (``shown above`` when they
    were quoted earlier)."""
    n = last - first + 1
    where = f"L{first}" if n == 1 else f"L{first}-L{last}"
    return f"{GAP} {where} ({n} line{'s' if n != 1 else ''}{', shown above' if above else ''})"


class WordMatcher:
    """Whether a word matches one of the query's words: equal, or one a prefix of the other
    with at least ``PREFIX_MIN`` letters (``redirect`` ~ ``redirecting``); answers memoized."""

    def __init__(self, query_tokens: Iterable[str]):
        self.query = {t for t in query_tokens if t}
        self._sorted = sorted(self.query)
        self._memo: dict[str, bool] = {}

    def __call__(self, word: str) -> bool:
        ok = self._memo.get(word)
        if ok is None:
            ok = self._memo[word] = self._match(word)
        return ok

    def _match(self, word: str) -> bool:
        if word in self.query:
            return True
        # a query word that is a prefix of this word
        if any(word[:k] in self.query for k in range(PREFIX_MIN, len(word))):
            return True
        # this word a prefix of a query word
        if len(word) >= PREFIX_MIN:
            i = bisect_left(self._sorted, word)
            return i < len(self._sorted) and self._sorted[i].startswith(word)
        return False


def line_scores(lines: Sequence[str], query_tokens: Iterable[str] | WordMatcher) -> list[int]:
    """Per line, how many distinct query words it holds (see :class:`WordMatcher`)."""
    match = query_tokens if isinstance(query_tokens, WordMatcher) else WordMatcher(query_tokens)
    if not match.query:
        return [0] * len(lines)
    return [len({w for w in tokenize(line) if match(w)}) for line in lines]


def head_length(lines: Sequence[str], most: int = HEAD_MAX) -> int:
    """How many leading lines make the declaration: up to the first that ends it (``:``,
    ``{``, ``=>``, ``;``), at most ``most``; one line when no such end is seen."""
    for i, line in enumerate(lines[:most]):
        if _ends_declaration(line):
            return i + 1
    return 1 if lines else 0


def _ends_declaration(line: str) -> bool:
    s = line.split("#", 1)[0].rstrip() if "#" in line else line.rstrip()
    return s.endswith((":", "{", "=>", ";", "{}"))


def head_text(lines: Sequence[str], limit: int) -> tuple[int, str]:
    """The declaration of a span on one line: ``(n, text)``, its first ``n`` lines with their
    indentation stripped and joined by a space — the first line, or up to the line that ends
    the declaration when the first leaves a bracket open (a signature spread over lines, at
    most ``SIGNATURE_MAX``). When that is longer than ``limit`` characters: the whole lines
    that fit and ``…``; ``n == 0`` when not even the first line fits."""
    if not lines:
        return 0, ""
    first = lines[0]
    opened = first.count("(") + first.count("[") - first.count(")") - first.count("]")
    text, n = "", 0
    for i, line in enumerate(lines[: SIGNATURE_MAX if opened > 0 else 1]):
        part = line.strip()
        if part:
            joined = f"{text} {part}" if text else part
            if len(joined) > limit:
                return (n, f"{text} …") if n else (0, "")
            text, n = joined, i + 1
        if i and _ends_declaration(line):
            break
    return n, text


def excerpt(
    lines: Sequence[str],
    first: int,
    query_tokens: Iterable[str] | WordMatcher,
    cap: int,
    skip: Collection[int] = (),
    scores: Sequence[int] | None = None,
) -> Excerpt:
    """At most ``cap`` lines of the span ``lines`` (line ``first`` onwards): all of it when it
    fits; else its head, then the best-scoring lines with one line of context each side, in
    line order; with no line scoring, the lines right after the head. Line numbers in ``skip``
    (quoted earlier) are left out, the head excepted; ``scores`` are the lines'
    :func:`line_scores` when known already."""
    n = len(lines)
    above = frozenset(i for i in skip if first <= i < first + n)
    if cap <= 0 or n == 0:
        return Excerpt((), n, first, above)
    head = min(head_length(lines), cap)
    free = [i for i in range(head, n) if first + i not in above]
    if head + len(free) <= cap:
        keep = set(range(head)) | set(free)
    else:
        keep = set(range(head))
        allowed = set(free)
        if scores is None:
            scores = line_scores(lines, query_tokens)
        order = sorted((i for i in free if scores[i] > 0), key=lambda i: (-scores[i], i))
        for i in order:
            if len(keep) >= cap:
                break
            for j in (i, i - 1, i + 1):
                if j not in allowed or j in keep or len(keep) >= cap:
                    continue
                if j != i and not lines[j].strip():
                    continue  # a blank line is no context
                keep.add(j)
        for j in free:  # room left: the body from the top, as read
            if len(keep) >= cap:
                break
            keep.add(j)
    runs: list[tuple[int, tuple[str, ...]]] = []
    start = prev = None
    for i in sorted(keep):
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            runs.append((first + start, tuple(lines[start : prev + 1])))
            start = prev = i
    if start is not None:
        runs.append((first + start, tuple(lines[start : prev + 1])))
    return Excerpt(tuple(runs), n, first, above)

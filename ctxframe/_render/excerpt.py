"""A long span cut down to what matters: its declaration head plus the lines that hold the
question's words (with a line of context each side), gaps marked; a short span whole."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ctxframe._rank.tokens import tokenize

HEAD_MAX = 4  # lines of a declaration kept as its head (a signature spread over lines)
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


def _matches(word: str, query: set[str]) -> bool:
    if word in query:
        return True
    for q in query:
        short, long_ = (word, q) if len(word) <= len(q) else (q, word)
        if len(short) >= PREFIX_MIN and long_.startswith(short):
            return True
    return False


def line_scores(lines: Sequence[str], query_tokens: Iterable[str]) -> list[int]:
    """Per line, how many distinct query words it holds (exact, or one a prefix of the other
    with 4+ letters: ``redirect`` ~ ``redirecting``)."""
    query = {t for t in query_tokens if t}
    if not query:
        return [0] * len(lines)
    memo: dict[str, bool] = {}
    scores = []
    for line in lines:
        hit = set()
        for w in tokenize(line):
            ok = memo.get(w)
            if ok is None:
                ok = memo[w] = _matches(w, query)
            if ok:
                hit.add(w)
        scores.append(len(hit))
    return scores


def head_length(lines: Sequence[str]) -> int:
    """How many leading lines make the declaration: up to the first that ends it (``:``,
    ``{``, ``=>``, ``;``), at most ``HEAD_MAX``; one line when no such end is seen."""
    for i, line in enumerate(lines[:HEAD_MAX]):
        s = line.split("#", 1)[0].rstrip() if "#" in line else line.rstrip()
        if s.endswith((":", "{", "=>", ";", "{}")):
            return i + 1
    return 1 if lines else 0


def excerpt(
    lines: Sequence[str],
    first: int,
    query_tokens: Iterable[str],
    cap: int,
    skip: Collection[int] = (),
) -> Excerpt:
    """At most ``cap`` lines of the span ``lines`` (line ``first`` onwards): all of it when it
    fits; else its head, then the best-scoring lines with one line of context each side, in
    line order; with no line scoring, the lines right after the head. Line numbers in ``skip``
    (quoted earlier) are left out, the head excepted."""
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

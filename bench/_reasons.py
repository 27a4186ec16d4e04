"""Why a test that runs a function is not named: the first traced call the graph lacks.

For each missed (function, test file) pair, the calls that test file's tests made
(bench/_calltrace.py) give a graph; its shortest chain from the test file's own code to the
function is walked, and its first call with no EXTRACTED or INFERRED `calls` edge in ctxframe's
graph is classified by what the traced call and the line it was made on show.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, deque
from pathlib import Path

import polars as pl
from _calltrace import traced_calls
from _testruns import PROJECTS, project_tree

DEPTH = 6  # as far as change-plan walks (ctxframe._graph.verbs.TEST_DEPTH)
_COMPREHENSIONS = {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>"}
_CONSTRUCT = {"__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__"}


class _Places:
    """Traced code objects -> node ids: a def by its name and first line (decorators come
    first), a comprehension or lambda by the function holding it, module code by its file."""

    def __init__(self, g):
        fns = g.nodes.filter(pl.col("kind").is_in(["function", "method"])).select(
            "id", "path", "label", "line_start", "line_end"
        )
        self.by_path: dict[str, list] = {}
        for row in fns.sort("path", "line_start").iter_rows(named=True):
            self.by_path.setdefault(row["path"], []).append(row)
        self.starts = {p: [r["line_start"] for r in rows] for p, rows in self.by_path.items()}
        self.memo: dict = {}

    def node(self, path: str, first: int, name: str) -> str | None:
        key = (path, first, name)
        if key in self.memo:
            return self.memo[key]
        rows, starts = self.by_path.get(path, []), self.starts.get(path, [])
        hit = None
        if name == "<module>":
            hit = path
        elif name in _COMPREHENSIONS:
            inside = [r for r in rows if r["line_start"] <= first <= r["line_end"]]
            hit = max(inside, key=lambda r: r["line_start"])["id"] if inside else path
        else:
            i = bisect.bisect_left(starts, first)
            for r in rows[i : i + 40]:
                if r["label"] == name and r["line_start"] - first <= 40:
                    hit = r["id"]
                    break
        self.memo[key] = hit
        return hit


def _source(tree: Path):
    cache: dict[str, list[str]] = {}

    def line(path: str, n: int) -> str:
        if path not in cache:
            try:
                cache[path] = (tree / path).read_text(errors="replace").splitlines()
            except OSError:
                cache[path] = []
        lines = cache[path]
        return lines[n - 1] if 0 < n <= len(lines) else ""

    def decorators(path: str, first: int, def_line: int) -> str:
        return " ".join(line(path, n) for n in range(first, def_line))

    return line, decorators


def classify(name: str, g, truth: dict[str, set[str]], named: dict[str, set[str]]) -> dict:
    """reason -> number of missed (function, test file) pairs."""
    tree = project_tree(PROJECTS[name])
    calls = pl.read_parquet(traced_calls(name))
    places = _Places(g)
    line, decorators = _source(tree)
    nodes = g.nodes.select("id", "label", "parent", "line_start", "kind")
    info = {r["id"]: r for r in nodes.iter_rows(named=True)}
    static = g.edges.filter(
        (pl.col("kind") == "calls") & pl.col("confidence").is_in(["EXTRACTED", "INFERRED"])
    )
    have = set(static.select("src", "dst").iter_rows())
    ambiguous = set(
        g.edges.filter((pl.col("kind") == "calls") & (pl.col("confidence") == "AMBIGUOUS"))
        .select("src", "dst")
        .iter_rows()
    )
    wanted = {t for f in truth for t in truth[f] - named.get(f, set())}
    graphs: dict[str, dict[str, list]] = {}
    for r in calls.filter(pl.col("test_file").is_in(list(wanted))).iter_rows(named=True):
        a = places.node(r["caller_path"], r["caller_first"], r["caller_name"])
        b = places.node(r["callee_path"], r["callee_first"], r["callee_name"])
        if a is None or b is None or a == b:
            continue
        graphs.setdefault(r["test_file"], {}).setdefault(a, []).append((b, r))
    out: Counter = Counter()
    for f, files in truth.items():
        for t in sorted(files - named.get(f, set())):
            out[_why(f, t, graphs.get(t, {}), have, ambiguous, info, line, decorators)] += 1
    return dict(out)


def _why(f, t, graph, have, ambiguous, info, line, decorators) -> str:
    starts = [a for a in graph if a == t or a.startswith(t + "::")]
    prev: dict[str, tuple] = {s: None for s in starts}
    queue = deque(starts)
    while queue and f not in prev:
        a = queue.popleft()
        for b, r in graph.get(a, ()):
            if b not in prev:
                prev[b] = (a, r)
                queue.append(b)
    if f not in prev:
        return "no traced chain (fixture/setup code, or a thread)"
    chain = []
    x = f
    while prev[x] is not None:
        a, r = prev[x]
        chain.append((a, x, r))
        x = a
    chain.reverse()
    for a, b, r in chain:
        if (a, b) in have:
            continue
        return _kind(a, b, r, ambiguous, info, line, decorators)
    return f"chain whole but deeper than {DEPTH} calls" if len(chain) > DEPTH else "chain whole"


def _kind(a, b, r, ambiguous, info, line, decorators) -> str:
    via, callee = r["via"], r["callee_name"]
    text = line(r["caller_path"], r["site_line"])
    node = info.get(b, {})
    deco = decorators(r["callee_path"], r["callee_first"], node.get("line_start") or 0)
    if via == "?":
        return "generated code (exec, templates) calls it"
    if via and not via.startswith(("functools", "contextlib", "abc", "typing", "dataclasses")):
        return f"a library calls back ({via.split('.')[0]})"
    if (a, b) in ambiguous:
        return "AMBIGUOUS edge left out"
    if re.search(r"@\w*(property|setter|getter|deleter)\b", deco):
        return "property (or setter)"
    if callee in _CONSTRUCT:
        return "construction (__init__, __new__, ...)"
    if callee.startswith("__") and callee.endswith("__"):
        return f"implicit dunder ({callee})"
    if re.search(rf"\b(self|cls)\s*\.\s*{re.escape(callee)}\s*\(", text):
        return "self/cls method (an override or inherited)"
    if re.search(rf"\bsuper\(\)\s*\.\s*{re.escape(callee)}\b", text):
        return "super() call"
    if via.startswith(("functools", "contextlib")):
        return f"a decorator's wrapper ({via})"
    if a in info and info[a]["kind"] in ("function", "method") and "wrapper" in a.split("::")[-1]:
        return "a decorator's wrapper"
    if re.search(rf"\.\s*{re.escape(callee)}\s*\(", text):
        return "method on a receiver of unknown value"
    if re.search(rf"\b{re.escape(callee)}\s*\(", text):
        return "call of a plain name not linked"
    return "a value called (stored callable, callback, dynamic name)"

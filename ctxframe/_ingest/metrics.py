"""Per-function metrics read off the tree-sitter tree at extraction time: cyclomatic number
(lizard's definition), maximum nesting depth, parameter count and decorators.

What counts is data, not code: `ctxframe/queries/metrics/<language>.scm` names, per language,
the function bodies that own their decisions (`@scope`), the decision points (`@decision`:
lizard counts condition tokens, so mostly the keyword and operator tokens themselves), the
structures that nest (`@nest`, `@flat` for an `else if`), the parameters (`@param`) and the
decorators (`@decorator`, `@decorator.next`); see its README. This module only attributes the
captures to definitions by their byte spans. Runs in pool workers: no Polars.
"""

from __future__ import annotations

import bisect
from functools import cache
from importlib import resources

from ctxframe._core.languages import Language, query_source

METRIC_COLUMNS = ("cyclomatic", "nesting", "params", "decorators", "unreachable")
NO_METRICS = (None, None, None, None, None)
# definitions that get metrics (a class's or a declaration's are null)
FUNCTION_KINDS = frozenset({"function", "method", "lambda"})
_DECORATOR_CHARS = 80


@cache
def query_text(stem: str) -> str | None:
    """The text of `queries/metrics/<stem>.scm` (with what it inherits), None when absent."""
    path = resources.files("ctxframe").joinpath("queries", "metrics", f"{stem}.scm")
    return query_source(f"metrics/{stem}") if path.is_file() else None


@cache
def compiled(lang: Language):
    """The language's compiled metrics query, or None when it has none (SQL, documents) or
    it does not compile against this grammar (metrics are never worth losing a file over)."""
    text = query_text(lang.query) if lang.query else None
    if text is None:
        return None
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    try:
        return Query(get_language(lang.grammar), text)
    except Exception:
        return None


def decorator_name(text: str) -> str:
    """`@app.route("/x")` -> `app.route`, `#[tokio::test]` -> `tokio.test`, `Fact` -> `Fact`
    (never a comma: the names are stored joined by one)."""
    t = text.strip()
    for prefix in ("#![", "#[", "@"):
        if t.startswith(prefix):
            t = t[len(prefix) :]
            break
    t = t.removesuffix("]").split("(", 1)[0].split("\n", 1)[0]
    return "".join(t.split()).replace("::", ".").replace(",", "")[:_DECORATOR_CHARS]


def _assign(spans: list[tuple[int, int]], positions: list[int]) -> list[int | None]:
    """For each of `positions` (sorted), the index of the innermost of `spans` (sorted by
    (start, -end), nested or apart) holding it, or None: one sweep with a stack."""
    out: list[int | None] = []
    stack: list[int] = []
    i, n = 0, len(spans)
    for pos in positions:
        while i < n and spans[i][0] <= pos:
            while stack and spans[stack[-1]][1] <= spans[i][0]:
                stack.pop()
            stack.append(i)
            i += 1
        while stack and spans[stack[-1]][1] <= pos:
            stack.pop()
        out.append(stack[-1] if stack else None)
    return out


def measure(
    lang: Language, root, items: list[dict], text: str, matches: list | None = None
) -> dict[str, tuple]:
    """Definition id -> (cyclomatic, nesting, params, decorators, unreachable) for the
    definitions in `items` (the extractor's, each with `id`, `kind`, `node`, `start`, `end`).
    A function gets them all (`unreachable`: the line of the first statement of its own body
    that follows a return, raise, break or continue in the same block, None when there is
    none); any other definition only its decorators. `matches`: the metrics query's matches
    when the caller ran it already (the extractor runs it with its own: one walk of the
    tree)."""
    if not items:
        return {}
    if matches is None:
        query = compiled(lang)
        if query is None:
            return {}
        from tree_sitter import QueryCursor

        matches = QueryCursor(query).matches(root)
    scopes: list[tuple[int, int]] = []
    decisions: list[int] = []
    nests: list[tuple[int, int]] = []
    flats: set[tuple[int, int]] = set()
    params: list[int] = []
    muted: list[tuple[int, int]] = []
    merged: set[int] = set()  # scopes that are not: their decisions count for the enclosing one
    top: list[tuple[int, int]] = []  # scopes unless inside another one
    unreachable: list[tuple[int, int]] = []  # (position, line) of a statement nothing reaches
    decorators: list[tuple[int, int, str]] = []  # (where what it decorates starts, own, text)
    for _pattern, caps in matches:
        for name, nodes in caps.items():
            if name == "decision":
                decisions.extend(n.start_byte for n in nodes)
            elif name == "scope":
                scopes.extend((n.start_byte, n.end_byte) for n in nodes)
            elif name == "scope.top":
                top.extend((n.start_byte, n.end_byte) for n in nodes)
            elif name == "scope.line":
                scopes.extend((n.start_byte, _line_end(n)) for n in nodes)
            elif name == "merge":
                merged.update(n.start_byte for n in nodes)
            elif name == "nest":
                nests.extend((n.start_byte, n.end_byte) for n in nodes)
            elif name == "flat":
                flats.update((n.start_byte, n.end_byte) for n in nodes)
            elif name == "param":
                params.extend(n.start_byte for n in nodes)
            elif name == "mute":
                muted.extend((n.start_byte, n.end_byte) for n in nodes)
            elif name == "mute.paren":
                muted.extend((n.start_byte, n.end_byte) for n in nodes if n.text[:1] == b"(")
            elif name == "decorator":
                decorators.extend((n.start_byte, n.start_byte, _text(text, n)) for n in nodes)
            elif name == "terminator":
                for n in nodes:
                    after = _next_statement(n)
                    if after is not None:
                        unreachable.append((after.start_byte, after.start_point[0] + 1))
            elif name == "decorator.next":
                for n in nodes:
                    target = n.next_named_sibling
                    while target is not None and (
                        target.type == n.type or "comment" in target.type
                    ):
                        target = target.next_named_sibling
                    if target is not None:
                        decorators.append((target.start_byte, n.start_byte, _text(text, n)))
    if top:  # a function inside a function where none can be: a macro read as a definition
        top.sort(key=lambda s: (s[0], -s[1]))
        end = -1
        for s, e in top:
            if s >= end:
                scopes.append((s, e))
                end = e
    scopes = sorted({s for s in scopes if s[0] not in merged}, key=lambda s: (s[0], -s[1]))
    scope_starts = [s for s, _ in scopes]
    owned = [0] * len(scopes)  # decisions whose innermost scope is this one
    sorted_decisions = sorted(decisions)
    if muted:  # inside a span whose decisions count as one (a preprocessor condition)
        muted.sort(key=lambda s: (s[0], -s[1]))
        sorted_decisions = [
            p
            for p, m in zip(sorted_decisions, _assign(muted, sorted_decisions), strict=True)
            if m is None
        ]
    for i in _assign(scopes, sorted_decisions):
        if i is not None:
            owned[i] += 1
    depth = _depths(sorted(set(nests) - flats, key=lambda s: (s[0], -s[1])), scopes)

    defs = sorted((it for it in items if it.get("id")), key=lambda it: (it["start"], -it["end"]))
    def_spans = [(it["start"], it["end"]) for it in defs]
    # a definition's body: the outermost scope inside its span (itself, or the arrow function
    # a `const f = () => …` holds)
    body: dict[int, int] = {}  # definition index -> scope index
    for i, it in enumerate(defs):
        j = bisect.bisect_left(scope_starts, it["start"])
        if j < len(scopes) and scopes[j][1] <= it["end"]:
            body.setdefault(i, j)
    owner_of_scope = {j: i for i, j in body.items()}
    # a parameter belongs to the innermost definition or scope holding it: a scope that is no
    # definition's body (a callback's arrow function) keeps its parameters to itself
    tagged = sorted(
        [(a, b, 0, i) for i, (a, b) in enumerate(def_spans)]
        + [(a, b, 1, j) for j, (a, b) in enumerate(scopes)],
        key=lambda t: (t[0], -t[1], t[2]),
    )
    holders = _assign([(a, b) for a, b, _, _ in tagged], sorted(params))
    n_params: dict[int, int] = {}
    for h in holders:
        if h is None:
            continue
        _, _, is_scope, k = tagged[h]
        i = owner_of_scope.get(k) if is_scope else k
        if i is not None:
            n_params[i] = n_params.get(i, 0) + 1
    # decorators go to the innermost definition holding them (one written before its
    # definition: the one starting where it points)
    decos: dict[int, list[str]] = {}  # joined by "," below (CSV exports take no lists)
    decorators.sort()
    for i, (_at, _own, raw) in zip(_assign(def_spans, [d[0] for d in decorators]), decorators,
                                   strict=True):  # fmt: skip
        name = decorator_name(raw)
        if i is not None and name:
            decos.setdefault(i, []).append(name)
    # the first unreachable statement of each scope
    first_dead: dict[int, int] = {}
    unreachable.sort()
    for j, (_pos, line) in zip(_assign(scopes, [u[0] for u in unreachable]), unreachable,
                               strict=True):  # fmt: skip
        if j is not None and j not in first_dead:
            first_dead[j] = line
    out: dict[str, tuple] = {}
    for i, it in enumerate(defs):
        deco = ",".join(decos[i]) if i in decos else None
        if it["kind"] not in FUNCTION_KINDS:
            if deco:
                out[it["id"]] = (None, None, None, deco, None)
            continue
        j = body.get(i)
        dead_line = first_dead.get(j) if j is not None else None
        if j is not None:
            cyclomatic, nest = 1 + owned[j], depth.get(j, 0)
        elif it["kind"] == "lambda":  # not a scope of its own (lizard): count what it holds
            lo = bisect.bisect_left(sorted_decisions, it["start"])
            hi = bisect.bisect_left(sorted_decisions, it["end"])
            cyclomatic, nest = 1 + hi - lo, 0
        else:  # a declaration without a body (an interface's method)
            if deco:
                out[it["id"]] = (None, None, None, deco, None)
            continue
        out[it["id"]] = (cyclomatic, nest, n_params.get(i, 0), deco, dead_line)
    return out


def _depths(nests: list[tuple[int, int]], scopes: list[tuple[int, int]]) -> dict[int, int]:
    """Scope index -> the deepest nesting of `nests` (sorted) inside it, not counting the
    structures of a nested scope, nor those of an enclosing one."""
    out: dict[int, int] = {}
    stack: list[tuple[int, int | None]] = []  # (end, scope) of the open structures
    owners = _assign(scopes, [start for start, _ in nests])
    for (start, end), scope in zip(nests, owners, strict=True):
        while stack and stack[-1][0] <= start:
            stack.pop()
        d = 1 + sum(1 for _, s in stack if s == scope)
        stack.append((end, scope))
        if scope is not None and d > out.get(scope, 0):
            out[scope] = d
    return out


def _next_statement(node):
    """The statement after `node` in its block, when there is one some path could still be
    meant to reach (not a comment, a declaration hoisted or jumped to, a label or a case)."""
    after = node.next_named_sibling
    while after is not None and "comment" in after.type:
        after = after.next_named_sibling
    if after is None:
        return None
    t = after.type
    if t.endswith("_declaration") or "label" in t or "case" in t or t == "default_statement":
        return None
    return after


_OPENERS = frozenset({"(", "[", "{", "`"})


def _line_end(node) -> int:
    """Where a `@scope.line` scope ends: at the first token of its body that starts a new line
    at the body's own level (not inside brackets), else (or for a `{ … }` body) where the node
    ends. lizard ends an
    arrow function with an expression body at such a line break; what follows counts for the
    enclosing function."""
    body = node.child_by_field_name("body")
    before = body.prev_sibling if body is not None else None
    if body is None or before is None or (body.child_count and body.child(0).type == "{"):
        return node.end_byte  # a block body: the whole of it
    row = before.end_point[0]
    stack = [body]
    while stack:
        n = stack.pop()
        first = n.child(0) if n.child_count else None
        if n.child_count == 0 or (first is not None and first.type in _OPENERS):
            if n.start_point[0] > row:
                return n.start_byte
            row = n.end_point[0]
            continue
        stack.extend(reversed(n.children))
    return node.end_byte


def _text(text: str, node) -> str:
    """The node's first characters (`text` is the file read as Latin-1: one per byte)."""
    raw = text[node.start_byte : min(node.end_byte, node.start_byte + 200)]
    return raw if raw.isascii() else raw.encode("latin-1").decode("utf-8", "replace")

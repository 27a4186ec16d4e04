"""The graph verbs beyond `query`: card, affected, path, change-plan, explain, hubs, boundaries.

Each returns a result object: DataFrames first, then `to_dict()` (the CLI's `--json`, one shape
for every verb: `verb`, `status`, and `error: {code, message, candidates}` on failure — see
docs/json.md), text within the output budget (`str()`), and `_repr_html_` for notebooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ctxframe._core.paths import is_test_path_expr
from ctxframe._graph.lookup import Match
from ctxframe._graph.lookups import Lookups
from ctxframe._graph.traverse import pagerank
from ctxframe._render.budget import DEFAULT_BUDGET_TOKENS, fit_blocks
from ctxframe._render.html import render
from ctxframe._render.picture import DEFAULT_CAP, Picture, arrows_picture, picture
from ctxframe._render.text import (
    callee_label,
    card_section,
    doc_summary,
    is_builtin,
    location,
    name_of,
)

OK, NOT_FOUND, AMBIGUOUS, NOT_INDEXED = "ok", "not-found", "ambiguous", "not-indexed"
_CANDIDATE_COLS = ["id", "kind", "label", "qualname", "path", "line_start", "line_end"]

_NODE_COLS = ["id", "kind", "label", "qualname", "path", "line_start", "line_end"]


def is_test_path() -> pl.Expr:
    """True for paths that follow a test-file convention (the ranker's definition)."""
    return is_test_path_expr("path")


@dataclass
class VerbResult:
    """Shared shape and rendering: subclasses give a header, blocks of lines, a payload dict and
    an HTML view; a result that wraps a failed name lookup (`card`) reports the card's failure."""

    verb = "verb"
    budget_tokens: int = field(default=DEFAULT_BUDGET_TOKENS, kw_only=True)

    @property
    def failure(self) -> Card | None:
        """The card of a name that did not resolve to exactly one node, else None."""
        card = getattr(self, "card", None)
        return card if card is not None and card.status != OK else None

    @property
    def ok(self) -> bool:
        return self.failure is None

    def error(self) -> dict[str, Any] | None:
        """`{code, message, candidates}` when the verb failed, else None."""
        return self.failure.error() if self.failure is not None else None

    def payload(self) -> dict[str, Any]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: `verb`, `status` (ok | not-found | ambiguous), the verb's own fields, and
        `error: {code, message, candidates}` when it failed."""
        failure = self.failure
        status = OK if failure is None else failure.status
        out = {"verb": self.verb, "status": status, **self.payload()}
        if failure is not None:
            out["error"] = failure.error()
        return out

    def header(self) -> list[str]:
        return []

    def blocks(self) -> list[list[str]]:
        return []

    noun = "lines"

    def render(self, budget_tokens: int | None = None) -> str:
        """The text form, never over the budget, with a marker when cut."""
        fitted = fit_blocks(
            self.blocks(),
            budget_tokens=budget_tokens or self.budget_tokens,
            noun=self.noun,
            header=self.header(),
        )
        return fitted.text

    def __str__(self) -> str:
        return self.render()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": self.render(), "text/html": self._repr_html_()}

    def _repr_html_(self) -> str:
        if self.failure is not None:
            return self.failure.failure_html(self.verb)
        return self.html()

    def html(self) -> str:
        return render("message", message=self.render())


# -- card ---------------------------------------------------------------------------------------


@dataclass
class Card(VerbResult):
    """A known symbol: where it is, what it is, who calls it, what it calls, what it holds."""

    verb = "card"
    name: str = ""
    status: str = OK  # ok | ambiguous | not-found
    node: dict | None = None
    arrows: pl.DataFrame = field(default_factory=pl.DataFrame)
    candidates: pl.DataFrame = field(default_factory=pl.DataFrame)  # the nodes it may mean
    suggestions: list[str] = field(default_factory=list)  # closest names when none matched
    inherited_from: str | None = None  # `App.register` found as a base's member: that base
    noun = "lines"

    @property
    def failure(self) -> Card | None:
        return self if self.status != OK else None

    def error(self) -> dict[str, Any] | None:
        if self.status == OK:
            return None
        cands = self.candidates.select([c for c in _CANDIDATE_COLS if c in self.candidates.columns])
        return {"code": self.status, "message": self.header()[0], "candidates": cands.to_dicts()}

    def failure_html(self, verb: str) -> str:
        err = self.error()
        return render(
            "failure", verb=verb, code=err["code"], message=err["message"],
            candidates=err["candidates"],
        )  # fmt: skip

    def section(self, direction: str, kinds: tuple[str, ...]) -> pl.DataFrame:
        if self.arrows.is_empty():
            return self.arrows
        return self.arrows.filter(
            (pl.col("direction") == direction) & pl.col("edge_kind").is_in(list(kinds))
        )

    @property
    def callers(self) -> pl.DataFrame:
        return self.section("in", ("calls",))

    @property
    def callees(self) -> pl.DataFrame:
        return self.section("out", ("calls",))

    @property
    def members(self) -> pl.DataFrame:
        return self.section("out", ("contains",))

    @property
    def parent(self) -> str | None:
        parent = self.section("in", ("contains",))
        return None if parent.is_empty() else parent["other_label"][0]

    def header(self) -> list[str]:
        if self.status == NOT_FOUND:
            near = ", ".join(self.suggestions) or "nothing close"
            return [f"no symbol named {self.name!r}; closest names: {near}"]
        if self.status == AMBIGUOUS:
            return [
                f"{self.candidates.height} symbols are named {self.name!r}; "
                "ask again with a qualified name or an id:"
            ]
        n = self.node
        lines = [f"{name_of(n)}  [{n['kind']}]  {location(n)}", f"  id: {n['id']}"]
        if n.get("signature"):
            lines.append(f"  sig: {n['signature']}")
        if n.get("doc"):
            lines.append(f"  doc: {doc_summary(n['doc'])}")
        if self.parent:
            lines.append(f"  parent: {self.parent}")
        if self.inherited_from:
            lines.append(f"  {self.name}: inherited from {self.inherited_from}")
        return lines

    def blocks(self) -> list[list[str]]:
        if self.status == AMBIGUOUS:
            return [[f"  {r['id']}  [{r['kind']}]"] for r in self.candidates.iter_rows(named=True)]
        if self.status != OK:
            return []
        out = []
        for title, frame, arrow in self._sections():
            if frame.is_empty():
                continue
            out += card_section(title, frame.to_dicts(), arrow, self.node.get("language"))
        return out

    def _sections(self) -> list[tuple[str, pl.DataFrame, str]]:
        return [
            ("callers", self.callers, "←"),
            ("callees", self.callees, "→"),
            ("members", self.members, "→"),
            ("extends/implements", self.section("out", ("extends", "implements")), "→"),
            ("subtypes", self.section("in", ("extends", "implements")), "←"),
            ("imports", self.section("out", ("imports",)), "→"),
            ("imported by", self.section("in", ("imports",)), "←"),
            ("mentioned by", self.section("in", ("mentions",)), "←"),
            ("touches", self._other("out"), "→"),
            ("touched by", self._other("in"), "←"),
        ]

    _LISTED = ("calls", "contains", "extends", "implements", "imports", "mentions")

    def _other(self, direction: str) -> pl.DataFrame:
        """Links of the kinds no section above lists: reads, handles, declares, http, exec…"""
        if self.arrows.is_empty():
            return self.arrows
        return self.arrows.filter(
            (pl.col("direction") == direction) & ~pl.col("edge_kind").is_in(self._LISTED)
        )

    def html(self) -> str:
        sections = [
            {"title": title, "arrow": arrow, "rows": frame.to_dicts()}
            for title, frame, arrow in self._sections()
            if not frame.is_empty()
        ]
        return render("card", node=self.node, parent=self.parent, sections=sections)

    def plot(self, cap: int | None = None):
        """Draw the symbol and its arrows (pyvis, offline)."""
        if self.status != OK:
            return Picture(title=f"{self.name}: {self.status}", nodes=[], edges=[])
        return arrows_picture(
            f"card {name_of(self.node)}", self.node, self.arrows, cap or DEFAULT_CAP
        )

    def payload(self) -> dict[str, Any]:
        if self.status != OK:
            return {"name": self.name}
        out = {"name": self.name, "node": self.node, "arrows": self.arrows.to_dicts()}
        if self.inherited_from:
            out["inherited_from"] = self.inherited_from
        return out


# -- affected -----------------------------------------------------------------------------------


@dataclass
class Affected(VerbResult):
    """Blast radius: everything that depends on a symbol or file, by depth (a floor)."""

    verb = "affected"
    name: str = ""
    centre: list[str] = field(default_factory=list)  # the ids the traversal starts from
    depth: int = 3
    nodes: pl.DataFrame = field(default_factory=pl.DataFrame)  # id, kind, label, path, depth…
    ambiguous_left_out: int = 0
    include_ambiguous: bool = False
    card: Card | None = None  # set when the name did not name exactly one symbol
    noun = "nodes"

    @property
    def tests(self) -> list[str]:
        """Test files reached."""
        return sorted(set(self.nodes.filter(is_test_path())["path"].drop_nulls().to_list()))

    @property
    def reached(self) -> pl.DataFrame:
        """The nodes reached (depth > 0), in display order."""
        if self.nodes.is_empty():
            return self.nodes
        return self.nodes.filter(pl.col("depth") > 0).sort("depth", "kind", "id")

    def by_depth_kind(self) -> pl.DataFrame:
        return (
            self.nodes.filter(pl.col("depth") > 0)
            .group_by("depth", "kind")
            .len()
            .sort("depth", "kind")
        )

    def header(self) -> list[str]:
        if self.card is not None:
            return self.card.header()
        floor = (
            "AMBIGUOUS edges included"
            if self.include_ambiguous
            else f"{self.ambiguous_left_out} AMBIGUOUS edges left out (--include-ambiguous)"
        )
        lines = [
            f"affected by {self.name}: {self.reached.height} nodes within depth {self.depth} "
            f"— blast radius is a floor: {floor}",
        ]
        summary = ", ".join(f"d{d} {k} {n}" for d, k, n in self.by_depth_kind().iter_rows())
        if summary:
            lines.append(f"  by depth and kind: {summary}")
        tests = self.tests
        lines.append(f"  tests reached ({len(tests)}): {', '.join(tests) if tests else 'none'}")
        return lines

    def blocks(self) -> list[list[str]]:
        if self.card is not None:
            return self.card.blocks()
        return [
            [f"  d{r['depth']} {r['kind']:<9} {name_of(r)}  {location(r)}  ({r['via']})"]
            for r in self.reached.iter_rows(named=True)
        ]

    def payload(self) -> dict[str, Any]:
        if self.card is not None:
            return {"name": self.name}
        return {
            "name": self.name,
            "centre": self.centre,
            "depth": self.depth,
            "nodes": self.reached.to_dicts(),
            "tests": self.tests,
            "ambiguous_left_out": self.ambiguous_left_out,
            "include_ambiguous": self.include_ambiguous,
        }

    def html(self) -> str:
        return render("affected", header=self.header(), rows=self.reached.to_dicts())

    def plot(self, cap: int | None = None):
        """Draw the blast radius: each reached node with the edge that reached it."""
        if self.card is not None:
            return Picture(title=f"{self.name}: {self.card.status}", nodes=[], edges=[])
        rows = self.nodes.sort("depth", "kind", "id").to_dicts()
        edges = [
            {"src": r["id"], "dst": r["prev"], "kind": r["via"], "confidence": r["confidence"]}
            for r in rows
            if r.get("prev") is not None and r["depth"] > 0
        ]
        return picture(
            f"affected by {self.name} · depth {self.depth}",
            rows,
            edges,
            centre=self.centre[:1],
            cap=cap or DEFAULT_CAP,
        )


# -- path ---------------------------------------------------------------------------------------


@dataclass
class PathResult(VerbResult):
    """Shortest paths from A to B, hop by hop, or where the graph stops from each side."""

    verb = "path"
    a: str = ""
    b: str = ""
    paths: list[list[dict]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    stops_a: list[str] = field(default_factory=list)
    stops_b: list[str] = field(default_factory=list)
    reach_a: int = 0
    reach_b: int = 0
    undirected: bool = False
    card: Card | None = None  # set when A or B did not name exactly one symbol
    noun = "paths"

    @property
    def hops(self) -> pl.DataFrame:
        rows = [
            {"path": i, "hop": j, **{k: s[k] for k in ("src", "dst", "kind", "confidence")}}
            for i, p in enumerate(self.paths)
            for j, s in enumerate(p)
        ]
        schema = {
            "path": pl.Int32,
            "hop": pl.Int32,
            "src": pl.String,
            "dst": pl.String,
            "kind": pl.String,
            "confidence": pl.String,
        }
        return pl.DataFrame(rows, schema=schema)

    def header(self) -> list[str]:
        if self.card is not None:
            return self.card.header()
        how = "undirected" if self.undirected else "directed"
        if not self.paths:
            return [
                f"no {how} path from {self.a} to {self.b}",
                f"  from {self.a}: reaches {self.reach_a} nodes; the graph stops at "
                + (", ".join(self.stops_a) or "the start itself (no outgoing edges)"),
                f"  into {self.b}: reached from {self.reach_b} nodes; the graph stops at "
                + (", ".join(self.stops_b) or "the end itself (no incoming edges)"),
            ]
        return [f"{len(self.paths)} shortest {how} path(s), {len(self.paths[0])} hops:"]

    def blocks(self) -> list[list[str]]:
        if self.card is not None:
            return self.card.blocks()
        out = []
        for i, p in enumerate(self.paths, 1):
            if not p:  # from a node to itself: no hop
                out.append([f"  path {i}: {self.labels.get(self.a, self.a)} (start is the end)"])
                continue
            lines = [f"  path {i}: {self.labels.get(p[0]['src'], p[0]['src'])}"]
            for s in p:
                conf = (s["confidence"] or "unresolved").lower()
                lines.append(f"    → {s['kind']} ({conf}) {self.labels.get(s['dst'], s['dst'])}")
            out.append(lines)
        return out

    def html(self) -> str:
        return render("path", header=self.header(), paths=self.paths, labels=self.labels, a=self.a)

    def plot(self, cap: int | None = None):
        """Draw the shortest paths, hop by hop."""
        ids = list(
            dict.fromkeys(
                [self.a] + [s[k] for p in self.paths for s in p for k in ("src", "dst")] + [self.b]
            )
        )
        nodes = [
            {
                "id": i,
                "label": self.labels.get(i, i).split(".")[-1],
                "qualname": self.labels.get(i, i),
            }
            for i in ids
        ]
        edges = [dict(s) for p in self.paths for s in p]
        return picture(
            f"path {self.a} → {self.b}",
            nodes,
            edges,
            centre=[self.a, self.b],
            cap=cap or DEFAULT_CAP,
        )

    def payload(self) -> dict[str, Any]:
        if self.card is not None:
            return {"a": self.a, "b": self.b}
        return {
            "a": self.a,
            "b": self.b,
            "undirected": self.undirected,
            "paths": self.paths,
            "stops_a": self.stops_a,
            "stops_b": self.stops_b,
        }


# -- change-plan --------------------------------------------------------------------------------


@dataclass
class ChangePlan(VerbResult):
    """What to look at before editing a symbol, as an ordered checklist."""

    verb = "change-plan"
    card: Card | None = None
    affected: Affected | None = None
    touches: pl.DataFrame = field(default_factory=pl.DataFrame)  # env vars, routes…
    tests: list[str] | None = None  # test files whose test functions run it (the graph's)
    tests_left_out: int = 0  # more test files only AMBIGUOUS calls reach
    depths: dict[str, int] = field(default_factory=dict)  # test file -> calls it takes
    measured: list[str] | None = None  # test files coverage data saw run it; None: no data
    include_ambiguous: bool = False
    noun = "checklist items"

    @property
    def nearest_test_files(self) -> list[str]:
        """The test files closest to it (at most one call further than the closest): the ones
        to run first, and the ones most surely running it (bench/testimpact.py)."""
        if not self.depths:
            return []
        first = min(self.depths.values())
        return [t for t in self.test_files if self.depths.get(t, first) <= first + 1]

    @property
    def measured_test_files(self) -> list[str]:
        """The test files coverage data (read by `index`) saw run it; empty without data."""
        return self.measured or []

    @property
    def name(self) -> str:
        return self.card.name

    @property
    def test_files(self) -> list[str]:
        """The test files to run: those whose calls reach the symbol, else the blast radius's."""
        return self.affected.tests if self.tests is None else self.tests

    def header(self) -> list[str]:
        return self.card.header()

    def items(self) -> list[tuple[str, list[str]]]:
        """The checklist: (title, detail lines) in the order to work through them."""
        callers = self.card.callers
        docs = self.card.section("in", ("mentions",))
        a = self.affected
        out = [
            (
                f"check the {callers.height} direct caller(s)",
                [
                    f"{r['other_label']} ({(r['confidence'] or 'unresolved').lower()})"
                    for r in callers.iter_rows(named=True)
                ]
                or ["none found"],
            ),
            (
                f"review the blast radius: {a.reached.height} nodes within depth {a.depth} "
                f"(a floor; {a.ambiguous_left_out} AMBIGUOUS edges left out)",
                [", ".join(f"d{d} {k} {c}" for d, k, c in a.by_depth_kind().iter_rows()) or "none"],
            ),
            *self._test_items(),
            (
                f"update the {docs.height} doc section(s) that mention it",
                [r["other_label"] for r in docs.iter_rows(named=True)] or ["none"],
            ),
        ]
        if not self.touches.is_empty():
            out.append(
                (
                    "mind the boundaries it touches",
                    [
                        f"{r['edge_kind']} {r['other_label']}"
                        for r in self.touches.iter_rows(named=True)
                    ],
                )
            )
        return out

    def _test_items(self) -> list[tuple[str, list[str]]]:
        """The tests to run: those coverage saw run it (when its data was read), then the
        ones the graph's calls reach, with how many more only AMBIGUOUS calls reach."""
        graph = self.test_files
        floor = (
            f"; {self.tests_left_out} more through AMBIGUOUS calls (--include-ambiguous)"
            if self.tests_left_out
            else ""
        )
        out = []
        if self.measured is not None:
            out.append((
                f"run the {len(self.measured)} test file(s) coverage saw run it (measured)",
                self.measured or ["none ran it"],
            ))  # fmt: skip
            graph = [t for t in graph if t not in set(self.measured)]
            title = f"and the {len(graph)} other test file(s) whose calls reach it{floor}"
        else:
            title = f"run the {len(graph)} test file(s) whose tests run it, closest first{floor}"
        return [*out, (title, [self._reach(t) for t in graph] or ["none reached"])]

    def _reach(self, test: str) -> str:
        d = self.depths.get(test)
        return test if d is None else f"{test}  ({'calls it' if d <= 1 else f'{d} calls in'})"

    def blocks(self) -> list[list[str]]:
        if self.card.status != OK:
            return self.card.blocks()
        return [
            [f"[ ] {n}. {title}"] + [f"      {x}" for x in lines]
            for n, (title, lines) in enumerate(self.items(), 1)
        ]

    def html(self) -> str:
        items = [{"title": t, "lines": lines} for t, lines in self.items()]
        return render("change_plan", node=self.card.node, items=items)

    def plot(self, cap: int | None = None):
        """Draw the blast radius the plan reviews."""
        return self.affected.plot(cap) if self.affected is not None else self.card.plot(cap)

    def payload(self) -> dict[str, Any]:
        if self.card.status != OK:
            return {"name": self.card.name}
        return {
            "name": self.card.name,
            "node": self.card.node,
            "callers": self.card.callers.to_dicts(),
            "affected": self.affected.payload(),
            "tests": self.test_files,
            "tests_depth": self.depths,
            "tests_nearest": self.nearest_test_files,
            "tests_measured": self.measured,
            "tests_left_out": self.tests_left_out,
            "docs": self.card.section("in", ("mentions",)).to_dicts(),
            "touches": self.touches.to_dicts(),
        }


# -- explain ------------------------------------------------------------------------------------


@dataclass
class Explanation(VerbResult):
    """A plain-language paragraph built from graph facts by templates — no model."""

    verb = "explain"
    card: Card | None = None
    text: str = ""
    tests: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.card.name

    def header(self) -> list[str]:
        if self.card is not None and self.card.status != OK:
            return self.card.header()
        return [self.text]

    def blocks(self) -> list[list[str]]:
        return self.card.blocks() if self.card and self.card.status == AMBIGUOUS else []

    def payload(self) -> dict[str, Any]:
        if self.card.status != OK:
            return {"name": self.card.name}
        return {"name": self.card.name, "text": self.text, "node": self.card.node,
                "tests": self.tests}  # fmt: skip

    def html(self) -> str:
        return render("explain", node=self.card.node, text=self.text)

    def plot(self, cap: int | None = None):
        """Draw the symbol the paragraph is about, with its arrows."""
        return self.card.plot(cap)


def _list(names: list[str], limit: int = 5) -> str:
    names = sorted(dict.fromkeys(names))
    if not names:
        return ""
    shown = names[:limit]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    if len(shown) == 1:
        return shown[0] + more
    return ", ".join(shown[:-1]) + (" and " if not more else ", ") + shown[-1] + more


def explain_text(card: Card, tests: list[str]) -> str:
    """Compose the paragraph from the card's facts."""
    n = card.node
    article = "an" if n["kind"][0] in "aeiou" else "a"
    parts = [f"{name_of(n)} is {article} {n['kind']} in {location(n)}"]
    if n.get("language"):
        parts[0] += f" ({n['language']})"
    parts[0] += "."
    if n.get("doc"):
        parts.append(f"Its documentation says: “{doc_summary(n['doc'])}”")
    callers = [r["other_label"] for r in card.callers.iter_rows(named=True)]
    callees = [r["other_label"] for r in card.callees.iter_rows(named=True) if r["other_id"]]
    lang = n.get("language")
    outside = [r["other_label"] for r in card.callees.iter_rows(named=True) if not r["other_id"]]
    external = list(dict.fromkeys(callee_label(x) for x in outside if not is_builtin(x, lang)))
    builtin = list(dict.fromkeys(x for x in outside if is_builtin(x, lang)))
    members = [r["other_label"] for r in card.members.iter_rows(named=True)]
    if n["kind"] == "file":
        importers = [
            r["other_label"] for r in card.section("in", ("imports",)).iter_rows(named=True)
        ]
        imported = [
            r["other_label"] for r in card.section("out", ("imports",)).iter_rows(named=True)
        ]
        parts.append(
            f"It is imported by {_list(importers)}." if importers else "No file imports it."
        )
        if imported:
            parts.append(f"It imports {_list(imported)}.")
    else:
        parts.append(
            f"It is called by {_list(callers)}." if callers else "Nothing in the repo calls it."
        )
    if callees:
        parts.append(f"It calls {_list(callees)} in the repo.")
    if external:
        verb = "resolves" if len(external) == 1 else "resolve"
        parts.append(f"It also calls {_list(external)}, which {verb} outside the repo.")
    if builtin:
        parts.append(f"It uses the builtin{'s' if len(builtin) > 1 else ''} {_list(builtin)}.")
    if members:
        parts.append(f"It contains {_list(members)}.")
    bases = [
        r["other_label"]
        for r in card.section("out", ("extends", "implements")).iter_rows(named=True)
    ]
    if bases:
        parts.append(f"It builds on {_list(bases)}.")
    parts.append(
        f"Tests that reach it: {_list(tests)}." if tests else "No test reaches it in the graph."
    )
    return " ".join(parts)


# -- hubs ---------------------------------------------------------------------------------------


@dataclass
class Hubs(VerbResult):
    """Orientation: most depended-on symbols, largest files, entry points, biggest directories."""

    verb = "hubs"
    limit: int = 10
    depended: pl.DataFrame = field(default_factory=pl.DataFrame)
    largest_files: pl.DataFrame = field(default_factory=pl.DataFrame)
    entry_points: pl.DataFrame = field(default_factory=pl.DataFrame)
    directories: pl.DataFrame = field(default_factory=pl.DataFrame)
    noun = "tables"

    def blocks(self) -> list[list[str]]:
        out = [["most depended-on (in-degree over calls, imports and bases, PageRank):"]]
        for r in self.depended.iter_rows(named=True):
            out[-1].append(
                f"  {r['in_degree']:>5}  {r['pagerank']:.4f}  {r['kind']:<9} {name_of(r)}  "
                f"{r['path'] or ''}"
            )
        out.append(["largest files (lines):"])
        for r in self.largest_files.iter_rows(named=True):
            out[-1].append(f"  {r['lines']:>6}  {r['path']}")
        out.append(["entry points:"])
        for r in self.entry_points.iter_rows(named=True):
            out[-1].append(f"  {r['why']:<12} {name_of(r)}  {location(r)}")
        if self.entry_points.is_empty():
            out[-1].append("  none found")
        out.append(["directories by size:"])
        for r in self.directories.iter_rows(named=True):
            out[-1].append(
                f"  {r['files']:>5} files {r['lines']:>7} lines {r['symbols']:>6} symbols  "
                f"{r['directory']}"
            )
        return out

    def payload(self) -> dict[str, Any]:
        return {
            "limit": self.limit,
            "depended": self.depended.to_dicts(),
            "largest_files": self.largest_files.to_dicts(),
            "entry_points": self.entry_points.to_dicts(),
            "directories": self.directories.to_dicts(),
        }

    def html(self) -> str:
        return render(
            "hubs",
            depended=self.depended.to_dicts(),
            largest_files=self.largest_files.to_dicts(),
            entry_points=self.entry_points.to_dicts(),
            directories=self.directories.to_dicts(),
        )


# -- the verbs ----------------------------------------------------------------------------------


def card(lk: Lookups, name: str, *, include_ambiguous: bool = False) -> Card:
    """Look a symbol up by id, qualified name or label; list candidates rather than guess."""
    match = lk.symbols.find(name)
    inherited = None
    if not match.ids:
        found = _inherited(lk, name)
        if found is not None:
            match, inherited = found
    if not match.ids:
        near = lk.symbols.suggest_ids(name)
        return Card(
            name=name,
            status=NOT_FOUND,
            suggestions=[label for label, _ in near],
            candidates=lk.node_rows([i for _, i in near]).select(_CANDIDATE_COLS),
        )
    if len(match.ids) > 1:
        cands = lk.node_rows(match.ids).select(_CANDIDATE_COLS)
        return Card(name=name, status=AMBIGUOUS, candidates=cands)
    node = lk.node_rows(match.ids).row(0, named=True)
    arrows = lk.arrows([node["id"]], include_ambiguous=include_ambiguous)
    init = _constructor(lk, node)
    if init is not None:  # `C(...)` calls C.__init__: C's callers include them
        ctor = lk.arrows([init], include_ambiguous=include_ambiguous).filter(
            (pl.col("direction") == "in") & (pl.col("edge_kind") == "calls")
        )
        arrows = pl.concat([arrows, ctor.with_columns(hit_id=pl.lit(node["id"]))]).sort(
            "direction", "edge_kind", "other_label", "other_id", nulls_last=True
        )
    return Card(name=name, node=node, arrows=arrows, inherited_from=inherited)


def _inherited(lk: Lookups, name: str) -> tuple[Match, str] | None:
    """`Class.member` that Class inherits: the member of the first base along its bases
    (breadth first, in the order they are written) that defines it, and that base's name."""
    owner, dot, member = name.strip().rpartition(".")
    if not dot or not owner or not member:
        return None
    ids = [i for i in lk.symbols.find(owner).ids if lk.node_rows([i])["kind"][0] == "class"]
    if len(ids) != 1:
        return None
    seen, queue = {ids[0]}, [ids[0]]
    while queue:
        cls = queue.pop(0)
        if cls != ids[0] and lk.row(f"{cls}.{member}") is not None:
            base = lk.node_rows([cls]).select(pl.coalesce("qualname", "label", "id"))[0, 0]
            return Match([f"{cls}.{member}"], "inherited"), base
        bases = lk.arrows([cls]).filter(
            (pl.col("direction") == "out") & (pl.col("edge_kind") == "extends")
        )
        for b in bases.sort("line")["other_id"].drop_nulls().to_list():
            if b not in seen:
                seen.add(b)
                queue.append(b)
    return None


def _constructor(lk: Lookups, node: dict) -> str | None:
    """A class's own `__init__` (what a call of the class runs), when it has one."""
    if node["kind"] != "class":
        return None
    init = f"{node['id']}.__init__"
    return init if lk.row(init) is not None else None


def start_ids(lk: Lookups, name: str) -> tuple[list[str], Card | None]:
    """A symbol's id, or a file's node and every symbol in it."""
    t = name.strip().removeprefix("./")
    if lk.is_file(t):
        return [t, *lk.nodes.filter(pl.col("path") == t)["id"].to_list()], None
    c = card(lk, name)
    if c.status != OK:
        return [], c
    init = _constructor(lk, c.node)  # a class's constructor callers depend on it too
    return [c.node["id"], *([init] if init else [])], c


def affected(
    lk: Lookups, name: str, *, depth: int = 3, include_ambiguous: bool = False
) -> Affected:
    """Reverse transitive closure over calls/imports/extends/implements/contains; the file or
    class holding a changed symbol is affected, but not everything that imports or calls it
    (a function holding a nested one is walked on from: it runs it)."""
    ids, c = start_ids(lk, name)
    if not ids:
        return Affected(name=name, depth=depth, nodes=_empty_nodes(), centre=[], card=c)
    t = lk.traversal
    rows = lk.rows(ids).to_list()
    reach = t.reach(
        rows, reverse=True, depth=depth, include_ambiguous=include_ambiguous, past_containers=False
    )
    r = t.with_ids(reach)
    # the traversal's rows are the rows of `lk.nodes`: a gather, not a join on ids
    columns = lk.nodes.select(_NODE_COLS).drop("id")[reach["row"]]
    nodes = pl.concat([r, columns], how="horizontal")
    left_out = 0 if include_ambiguous else t.ambiguous_left_out(reach["row"])
    return Affected(
        name=name,
        depth=depth,
        nodes=nodes,
        centre=ids,
        ambiguous_left_out=left_out,
        include_ambiguous=include_ambiguous,
    )


def _empty_nodes() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "id": pl.String,
            "depth": pl.Int32,
            "prev": pl.String,
            "via": pl.String,
            "confidence": pl.String,
            "kind": pl.String,
            "label": pl.String,
            "qualname": pl.String,
            "path": pl.String,
            "line_start": pl.Int32,
            "line_end": pl.Int32,
        }
    )


def path(
    lk: Lookups, a: str, b: str, *, undirected: bool = False, include_ambiguous: bool = False
) -> PathResult:
    """Shortest paths between two symbols, each hop with its edge kind and confidence."""
    ends = []
    for name in (a, b):
        match = lk.symbols.find(name)  # a card (with all its arrows) only to explain a miss
        if len(match.ids) != 1:
            return PathResult(a=a, b=b, undirected=undirected, card=card(lk, name))
        ends.append(match.ids[0])
    ia, ib = ends
    t = lk.traversal
    paths, fwd, bwd = t.shortest_paths(
        lk.row(ia), lk.row(ib), undirected=undirected, include_ambiguous=include_ambiguous
    )
    ids = {s["src"] for p in paths for s in p} | {s["dst"] for p in paths for s in p}
    labels = dict(
        lk.node_rows(sorted(ids | {ia, ib}))
        .select("id", pl.coalesce("qualname", "label", "id"))
        .iter_rows()
    )
    res = PathResult(
        a=ia,
        b=ib,
        paths=paths,
        labels=labels,
        undirected=undirected,
        reach_a=fwd.height - 1,
        reach_b=bwd.height - 1,
    )
    if not paths:
        res.stops_a = _frontier(lk, t.with_ids(fwd))
        res.stops_b = _frontier(lk, t.with_ids(bwd))
    return res


def _frontier(lk: Lookups, r: pl.DataFrame, k: int = 5) -> list[str]:
    far = r.filter(pl.col("depth") == r["depth"].max()).sort("id").head(k)
    rows = lk.node_rows(far["id"].to_list())
    return rows.select(pl.coalesce("qualname", "label", "id"))[:, 0].to_list()


def change_plan(
    lk: Lookups, name: str, *, depth: int = 2, include_ambiguous: bool = False
) -> ChangePlan:
    """The card, callers to check, blast radius, tests to run, docs and boundaries to update."""
    c = card(lk, name, include_ambiguous=include_ambiguous)
    if c.status != OK:
        return ChangePlan(card=c)
    a = affected(lk, c.node["id"], depth=depth, include_ambiguous=include_ambiguous)
    touches = (
        c.arrows.filter(
            (pl.col("direction") == "out") & pl.col("edge_kind").is_in(["reads", "handles", "uses"])
        )
        if not c.arrows.is_empty()
        else c.arrows
    )
    handled = c.section("in", ("handles",))
    near = _test_distances(lk, c, include_ambiguous)
    tests = near["path"].to_list()
    more = [] if include_ambiguous else _tests(lk, c, True)
    return ChangePlan(
        card=c, affected=a, touches=pl.concat([touches, handled]), tests=tests,
        tests_left_out=len(set(more) - set(tests)), measured=_measured(lk, c),
        depths=dict(near.iter_rows()),
        include_ambiguous=include_ambiguous,
    )  # fmt: skip


def _tests(lk: Lookups, c: Card, include_ambiguous: bool = False) -> list[str]:
    """The test files whose test functions run the symbol, the closest first: along calls to
    any depth, each call on an instance followed only where that test file makes such an
    instance (ctxframe._graph.testreach). A file's tests are its symbols'."""
    return _test_distances(lk, c, include_ambiguous)["path"].to_list()


def _test_distances(lk: Lookups, c: Card, include_ambiguous: bool = False) -> pl.DataFrame:
    """(path, depth) of `_tests`: how many calls from a test function each takes."""
    if c.node["kind"] == "file":
        ids, _ = start_ids(lk, c.node["id"])
    else:
        ids = [c.node["id"], *([init] if (init := _constructor(lk, c.node)) else [])]
    return lk.test_reach(include_ambiguous).distances(lk.rows(ids))


def _measured(lk: Lookups, c: Card) -> list[str] | None:
    """The test files whose tests coverage data saw run the symbol (`covers` edges); None
    when the index read no coverage data."""
    if not lk.has_coverage:
        return None
    if c.node["kind"] == "file":
        ids, _ = start_ids(lk, c.node["id"])
    else:
        ids = [c.node["id"], *([init] if (init := _constructor(lk, c.node)) else [])]
    arrows = lk.arrows(ids)
    ran = arrows.filter((pl.col("edge_kind") == "covers") & (pl.col("direction") == "in"))
    paths = lk.node_rows(ran["other_id"].unique().to_list())["path"].drop_nulls()
    return sorted(set(paths.to_list()))


def explain(lk: Lookups, name: str, include_ambiguous: bool = False) -> Explanation:
    """Plain language from graph facts: what it is, where, who calls it, what it calls, tests."""
    c = card(lk, name.strip().removeprefix("./"), include_ambiguous=include_ambiguous)
    if c.status != OK:
        return Explanation(card=c)
    tests = _tests(lk, c, include_ambiguous)  # the tests change-plan names
    return Explanation(card=c, text=explain_text(c, tests), tests=tests)


def hubs(lk: Lookups, limit: int = 10) -> Hubs:
    """Most depended-on symbols, largest files, entry points and directories by size. The
    depended-on are the code's, not the tests' (a test helper is not a hub of the code); a
    subclass depends on its base. Entry points: CLI commands' and routes' handlers, `main`,
    `__main__` blocks and what a `__main__.py` calls at its top level (run as a script), and
    what other module-level code calls (run at import). AMBIGUOUS edges count for neither."""
    dep = lk.edges.filter(
        pl.col("kind").is_in(["calls", "imports", "extends", "implements"])
        & pl.col("dst").is_not_null()
        & (pl.col("confidence") != "AMBIGUOUS")
    )
    # a call of a class runs its `__init__`: counted for the class
    dep = dep.with_columns(
        dst=pl.when(pl.col("dst").str.ends_with(".__init__") & (pl.col("kind") == "calls"))
        .then(pl.col("dst").str.strip_suffix(".__init__"))
        .otherwise(pl.col("dst"))
    )
    indeg = dep.group_by("dst").agg(in_degree=pl.col("src").n_unique()).rename({"dst": "id"})
    ranked = (
        indeg.join(pagerank(dep), on="id", how="left")
        .join(lk.nodes.select(_NODE_COLS), on="id", how="inner")
        .filter((pl.col("kind") != "module") & ~is_test_path())
        .sort(["in_degree", "pagerank", "id"], descending=[True, True, False])
        .head(limit)
    )
    files = lk.files.filter(pl.col("skip_reason").is_null())
    largest = (
        files.sort(["lines", "path"], descending=[True, False]).select("path", "lines").head(limit)
    )
    toplevel_callers = lk.edges.filter(
        (pl.col("kind") == "calls")
        & (pl.col("src") == pl.col("path"))
        & pl.col("dst").is_not_null()
        & (pl.col("confidence") != "AMBIGUOUS")
        & ~is_test_path()
    )
    entries = (
        pl.concat(
            [
                lk.nodes.join(
                    lk.edges.filter(pl.col("kind") == "handles").select(
                        pl.col("dst").alias("id"),
                        why=pl.when(pl.col("src").str.starts_with("command:"))
                        .then(pl.lit("cli command"))
                        .otherwise(pl.lit("route handler")),
                    ),
                    on="id",
                ),
                lk.nodes.filter(pl.col("label") == "main").with_columns(why=pl.lit("main")),
                lk.nodes.filter(pl.col("kind") == "script").with_columns(
                    why=pl.lit("run as a script")
                ),
                lk.nodes.join(
                    toplevel_callers.select(
                        pl.col("dst").alias("id"),
                        # `python -m pkg` runs pkg/__main__.py: its top level is a script's
                        why=pl.when(pl.col("path").str.contains(r"(?:^|/)__main__\.py$"))
                        .then(pl.lit("run as a script"))
                        .otherwise(pl.lit("run at import")),
                    )
                    .sort("id", "why")
                    .unique(maintain_order=True),
                    on="id",
                ),
            ]
        )
        .filter(~is_test_path())
        .unique("id", keep="first")
        .sort("why", "id")
        .head(limit)
    )
    symbols = (
        lk.nodes.filter(~pl.col("kind").is_in(["file", "module"]) & pl.col("transport").is_null())
        .group_by("path")
        .len("symbols")
    )
    dirs = (
        files.join(symbols, on="path", how="left")
        .with_columns(
            directory=pl.col("path").str.extract(r"^([^/]+(?:/[^/]+)?)/", 1).fill_null(".")
        )
        .group_by("directory")
        .agg(files=pl.len(), lines=pl.col("lines").sum(), symbols=pl.col("symbols").sum())
        .sort(["lines", "directory"], descending=[True, False])
        .head(limit)
    )
    return Hubs(
        limit=limit,
        depended=ranked.select("in_degree", "pagerank", *_NODE_COLS),
        largest_files=largest,
        entry_points=entries.select("why", *_NODE_COLS),
        directories=dirs,
    )


# -- boundaries ---------------------------------------------------------------------------------

# `calls` into a boundary node: a catalog's HTTP call resolved to the route it lands on
_USES = ["reads", "http", "exec", "uses", "sets", "declares", "runs", "selects", "routes",
         "calls"]  # fmt: skip


@dataclass
class Boundaries(VerbResult):
    """What the code consumes and provides: transport, identifier, secret flag, where used."""

    verb = "boundaries"
    name: str | None = None
    table: pl.DataFrame = field(default_factory=pl.DataFrame)
    card: Card | None = None
    noun = "boundary rows"

    def header(self) -> list[str]:
        if self.card is not None:
            return self.card.header()
        scope = f" touched by {self.name} (through its callees)" if self.name else ""
        t = self.table
        n_ids = t["identifier"].n_unique() if t.height else 0
        secrets = t.filter(pl.col("secret").fill_null(False))["identifier"].n_unique()
        return [
            f"boundaries{scope}: {n_ids} identifiers, {secrets} flagged secret (names only, "
            "never values)"
        ]

    def blocks(self) -> list[list[str]]:
        if self.card is not None:
            return self.card.blocks()
        out = []  # a block per row (the truncation marker counts rows), headed by its group
        for (direction, transport), group in self.table.group_by(
            "direction", "transport", maintain_order=True
        ):
            for i, r in enumerate(group.iter_rows(named=True)):
                flag = " [secret]" if r["secret"] else ""
                place = r["path"] if r["line"] is None else f"{r['path']}:{r['line']}"
                where = f"{r['used_by']} ({place})" if r["used_by"] else ""
                line = f"  {r['identifier']}{flag}  ← {r['via']} {where}".rstrip()
                out.append([f"{direction} · {transport}:", line] if i == 0 else [line])
        return out

    def payload(self) -> dict[str, Any]:
        if self.card is not None:
            return {"name": self.name}
        return {"name": self.name, "rows": self.table.to_dicts()}

    def html(self) -> str:
        shown = self.table.head(100)
        groups = [
            {"direction": d, "transport": t, "rows": g.to_dicts()}
            for (d, t), g in shown.group_by("direction", "transport", maintain_order=True)
        ]
        return render(
            "boundaries",
            header=self.header(),
            groups=groups,
            shown=shown.height,
            total=self.table.height,
        )


def boundaries(lk: Lookups, name: str | None = None) -> Boundaries:
    """The consumes/provides table; with a name, only what it reaches through its callees."""
    nodes, edges = lk.nodes, lk.edges
    bnodes = nodes.filter(pl.col("transport").is_not_null())
    ids = bnodes["id"].implode()
    users = nodes.select(
        pl.col("id").alias("user"),
        pl.coalesce("qualname", "label", "id").alias("used_by"),
        pl.col("path").alias("user_path"),
    )
    used = edges.filter(pl.col("kind").is_in(_USES) & pl.col("dst").is_in(ids)).select(
        node="dst", user="src", via="kind", path="path", line="line"
    )
    handled = edges.filter((pl.col("kind") == "handles") & pl.col("src").is_in(ids)).select(
        node="src", user="dst", via="kind", path="path", line="line"
    )
    rows = pl.concat([used, handled])
    if name is not None:
        start, c = start_ids(lk, name)
        if not start:
            return Boundaries(name=name, card=c)
        t = lk.traversal
        reached = t.with_ids(
            t.reach(lk.rows(start).to_list(), reverse=False, depth=20, kinds=["calls", "contains"])
        )["id"].implode()
        rows = rows.filter(pl.col("user").is_in(reached))
    table = (
        rows.join(
            bnodes.select(
                node="id",
                identifier="label",
                direction=pl.col("direction").fill_null("declares"),
                transport="transport",
                secret="secret",
                kind="kind",
            ),
            on="node",
        )
        .join(users, on="user", how="left")
        .select(
            "direction",
            "transport",
            "identifier",
            "kind",
            "secret",
            "via",
            "used_by",
            "path",
            "line",
        )
        .unique(maintain_order=False)
        .sort(
            "direction",
            "transport",
            "identifier",
            "via",
            "used_by",
            "path",
            "line",
            nulls_last=True,
        )
    )
    return Boundaries(name=name, table=table)

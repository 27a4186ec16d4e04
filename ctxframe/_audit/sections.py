"""The audit's sections, one entry each: what it computes (frames), what its summary says,
which columns its report tables show and which chart it draws.

A new section is one more `Section` in `SECTIONS` — the history's `hotspots` and `coupling`
(ctxframe._history, which sits above this package) plug in here, naming the frames they need
from `AuditInput.extra` in `needs`; nothing else changes: the report, the notebook view, the
Markdown, the JSON and the Parquet export all walk this registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl

from ctxframe._audit import architecture as _arch
from ctxframe._audit import complexity as _cx
from ctxframe._audit import dead as _dead
from ctxframe._audit import risk as _risk
from ctxframe._audit import untested as _untested
from ctxframe._audit.facts import Facts

Frames = dict[str, pl.DataFrame]
Get = Callable[[str], pl.DataFrame]  # a frame of another section, computed on demand


@dataclass(frozen=True)
class Section:
    """One part of the audit."""

    name: str
    title: str
    about: str  # one line under the title: what the section finds
    frames: tuple[str, ...]  # the frames it makes, the first the main one
    compute: Callable[[Facts, Get], Frames]
    summary: Callable[[Frames, Facts], str]  # one line for the summary
    show: dict[str, tuple[str, ...]] = field(default_factory=dict)  # frame -> columns shown
    chart: Callable[[Frames, Facts], str] | None = None  # an inline SVG
    needs: tuple[str, ...] = ()  # AuditInput.extra keys it cannot do without


def _memo(f: Facts, fn: Callable[[Facts], Frames]) -> Frames:
    """One computation per audit even when two sections show parts of it."""
    key = f"_memo_{fn.__module__}.{fn.__name__}"
    if key not in f.__dict__:
        f.__dict__[key] = fn(f)
    return f.__dict__[key]


def _n(frame: pl.DataFrame, predicate: pl.Expr | None = None) -> int:
    return frame.height if predicate is None else frame.filter(predicate).height


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


# -- summaries ---------------------------------------------------------------------------------


def _history(f: Facts, *names: str) -> Frames:
    """Frames of the history analyses (ctxframe._graph.history), given by the graph as
    `extra["git history"]`: a function of the frame's name."""
    give = f.input.extra["git history"]
    return {name: give(name) for name in names}


def _sum_hotspots(fr: Frames, f: Facts) -> str:
    h, islands = fr["hotspots"], fr["knowledge_islands"]
    if h.is_empty():
        return "no code file with a history"
    top = h.row(0, named=True)
    return (f"{_plural(h.height, 'code file')} with a history; hottest: {top['entity']} "
            f"({top['revisions']:,} revisions, {top['complexity']:,} lines); "
            f"{_plural(islands.height, 'knowledge island')} among the hotspots")  # fmt: skip


def _sum_coupling(fr: Frames, f: Facts) -> str:
    c, hidden = fr["coupling"], fr["hidden_coupling"]
    return (f"{_plural(c.height, 'coupled pair')} of files; {hidden.height:,} with no path "
            "between them in the graph (hidden coupling)")


def _sum_architecture(fr: Frames, f: Facts) -> str:
    p, d = fr["packages"], fr["dependencies"]
    top = p.sort(["fan_in", "lines", "package"], descending=[True, True, False]).head(1)
    most = f"; most depended on: {top['package'][0]} ({top['fan_in'][0]})" if p.height else ""
    return (f"{_plural(p.height, 'package')} (folded to depth {f.depth()}), "
            f"{_plural(d.height, 'dependency', 'dependencies')}{most}")  # fmt: skip


def _sum_cycles(fr: Frames, f: Facts) -> str:
    c = fr["cycles"]
    mods = c.filter(pl.col("level") == "module")
    pk = c.filter(pl.col("level") == "package")
    if c.is_empty():
        return "no import cycle between modules, no dependency cycle between packages"
    big = f"; largest: {mods['size'].max()} modules" if mods.height else ""
    return (f"{_plural(mods.height, 'import cycle')} between modules{big}; "
            f"{_plural(pk.height, 'cycle')} between packages")  # fmt: skip


def _sum_contracts(fr: Frames, f: Facts) -> str:
    v = fr["contracts"]
    n = len(f.config.contracts)
    if n == 0:
        return "no contracts configured ([[audit.contracts]] in .ctxframe/config.toml)"
    broken = v["contract"].n_unique() if v.height else 0
    return (f"{_plural(n, 'contract')}, {broken} broken: "
            f"{_plural(v.height, 'violation')}")  # fmt: skip


def _sum_complexity(fr: Frames, f: Facts) -> str:
    c = fr["complexity"].filter(~pl.col("is_test"))
    if c.is_empty():
        return "no function measured"
    worst = c.row(0, named=True)
    return (f"{_plural(c.height, 'function')} measured, median cyclomatic "
            f"{c['cyclomatic'].median():g}; {_plural(_n(c, pl.col('outlier')), 'outlier')}; "
            f"most complex: {worst['qualname']} ({worst['cyclomatic']})")  # fmt: skip


def _sum_dead(fr: Frames, f: Facts) -> str:
    d = fr["dead"]
    sure = _n(d, pl.col("confidence") == 100)
    return (f"{_plural(d.height, 'candidate')} ({sure} at confidence 100), "
            f"{_plural(fr['dead_files'].height, 'dead file')}, "
            f"{_plural(fr['unused_imports'].height, 'unused import')}")  # fmt: skip


def _sum_untested(fr: Frames, f: Facts) -> str:
    u, p = fr["untested"], fr["untested_packages"]
    total = int(p["functions"].sum()) if p.height else 0
    high = _n(u, pl.col("confidence") == "high")
    measured = _n(u, pl.col("confidence") == "measured")
    if measured:
        return (f"{measured:,} of {_plural(total, 'function')} no test ran (coverage data); "
                f"{u.height - measured:,} more no test reaches through the graph")  # fmt: skip
    share = f" ({u.height / total:.0%})" if total else ""
    return (f"no test reaches {u.height:,} of {_plural(total, 'function')} through the graph"
            f"{share}; {high} certainly (no reading of the graph gets there); coverage data "
            "would tell the rest")  # fmt: skip


def _sum_risk(fr: Frames, f: Facts) -> str:
    r = fr["risk"]
    if r.is_empty():
        return "nothing stands out"
    top = r.row(0, named=True)
    return f"read first: {top['qualname']} — {top['why']}"


def _sum_boundaries(fr: Frames, f: Facts) -> str:
    b = fr["boundaries"]
    ids = b["identifier"].n_unique() if b.height else 0
    risky = b.filter(pl.col("risky"))
    return (f"{_plural(ids, 'boundary', 'boundaries')} used in {_plural(b.height, 'place')}; "
            f"{_plural(risky.height, 'risky use')}")  # fmt: skip


# -- charts ------------------------------------------------------------------------------------


def _chart_architecture(fr: Frames, f: Facts) -> str:
    """The package graph; with three packages or fewer, the module graph instead."""
    from ctxframe._render.charts import package_graph

    p = fr["packages"]
    if p.height > 3:
        title = "Packages: importers above what they import; cycles in red"
        return package_graph(p.to_dicts(), fr["dependencies"].to_dicts(), title=title)
    m = fr["modules"].with_columns(weight=pl.col("imports") + pl.col("calls"))
    if m.is_empty():
        return ""
    ends = pl.concat([m.select(package="src", w="weight"), m.select(package="dst", w="weight")])
    in_cycle = pl.concat(
        [m.filter("in_cycle").select(package="src"), m.filter("in_cycle").select(package="dst")]
    ).unique()
    nodes = (
        ends.group_by("package")
        .agg(lines=pl.col("w").sum())
        .join(in_cycle.with_columns(cycle=pl.lit(0)), on="package", how="left")
    )
    title = "Modules: importers above what they import; cycles in red"
    return package_graph(nodes.to_dicts(), m.to_dicts(), title=title)


def _chart_complexity(fr: Frames, f: Facts) -> str:
    from ctxframe._render.charts import histogram

    c = fr["complexity"].filter(~pl.col("is_test"))
    return histogram(c["cyclomatic"].to_list(), title="Cyclomatic number per function",
                     xlabel="cyclomatic (lizard)", mark=f.config.thresholds["cyclomatic"],
                     salt="cf-complexity")  # fmt: skip


def _chart_untested(fr: Frames, f: Facts) -> str:
    from ctxframe._render.charts import bars

    p = fr["untested_packages"].filter(pl.col("functions") >= 3).head(15)
    return bars(p["package"].to_list(), p["untested_share"].to_list(),
                title="Share of functions no test reaches, per package", percent=True,
                salt="cf-untested")  # fmt: skip


def _chart_risk(fr: Frames, f: Facts) -> str:
    from ctxframe._render.charts import scatter

    r = fr["risk"]
    if r.is_empty():
        return ""
    labels = [q if i < 5 else "" for i, q in enumerate(r["qualname"].to_list())]
    return scatter(r["fan_in"].to_list(), r["cyclomatic"].to_list(),
                   flagged=r["untested"].to_list(), labels=labels,
                   title="Fan-in against complexity (top 5 named)",
                   xlabel="callers + 1", ylabel="cyclomatic", flag_name="no test reaches it",
                   salt="cf-risk")  # fmt: skip


def _chart_dead(fr: Frames, f: Facts) -> str:
    from ctxframe._render.charts import bars

    d = fr["dead"]
    if d.is_empty():
        return ""
    per = (
        d.group_by("package")
        .agg(n=pl.len(), sure=(pl.col("confidence") == 100).sum())
        .sort(["n", "package"], descending=[True, False])
        .head(12)
    )
    return bars(per["package"].to_list(), per["n"].to_list(),
                title="Dead-code candidates per package (red: some at confidence 100)",
                highlight=[s > 0 for s in per["sure"].to_list()], salt="cf-dead")  # fmt: skip


# -- the registry ------------------------------------------------------------------------------

_NAME = ("qualname", "path", "line_start")

SECTIONS: dict[str, Section] = {
    s.name: s
    for s in (
        Section(
            "architecture", "Architecture",
            "Packages and modules and the dependencies between them (imports and resolved calls, "
            "folded to packages).",
            ("packages", "dependencies", "modules"),
            lambda f, get: {k: v for k, v in _memo(f, _arch.architecture).items()
                            if k in ("packages", "dependencies", "modules")},
            _sum_architecture,
            {"packages": ("package", "files", "lines", "functions", "fan_in", "fan_out",
                          "instability", "cycle"),
             "dependencies": ("src", "dst", "imports", "calls", "in_cycle", "example"),
             "modules": ("src", "dst", "imports", "calls", "in_cycle")},
            _chart_architecture,
        ),
        Section(
            "cycles", "Import cycles",
            "Strongly connected components of the module import graph and of the package "
            "graph, with the import lines inside each.",
            ("cycles", "cycle_edges"),
            lambda f, get: {k: v for k, v in _memo(f, _arch.architecture).items()
                            if k in ("cycles", "cycle_edges")},
            _sum_cycles,
            {"cycles": ("level", "cycle", "size", "example"),
             "cycle_edges": ("cycle", "src", "dst", "path", "line")},
        ),
        Section(
            "contracts", "Contracts",
            "Import contracts from .ctxframe/config.toml (import-linter's layers, forbidden, "
            "independence) and each import that breaks one.",
            ("contracts",), lambda f, get: _arch.contracts(f), _sum_contracts,
            {"contracts": ("contract", "importer", "imported", "direct", "path", "line",
                           "chain")},
        ),
        Section(
            "complexity", "Complexity",
            "Per function: cyclomatic number (lizard's), length, nesting depth, parameters; "
            "outliers against thresholds and against their package.",
            ("complexity", "complexity_packages"), lambda f, get: _cx.complexity(f),
            _sum_complexity,
            {"complexity": ("qualname", "path", "line_start", "cyclomatic", "lines", "nesting",
                            "params", "why"),
             "complexity_packages": ("package", "functions", "mean", "p90", "max", "outliers")},
            _chart_complexity,
        ),
        Section(
            "dead", "Dead code",
            "Definitions nothing reaches and no entry point, each with a confidence and the "
            "evidence against it; whole dead files; unused imports.",
            ("dead", "dead_files", "unused_imports"), lambda f, get: _dead.dead(f), _sum_dead,
            {"dead": ("confidence", "kind", "qualname", "path", "line_start", "lines", "reason"),
             "dead_files": ("confidence", "path", "lines", "reason"),
             "unused_imports": ("path", "line", "name", "module")},
            _chart_dead,
        ),
        Section(
            "untested", "Untested code",
            "Functions no test reaches through the graph (change-plan's rule), or that no "
            "test ran where coverage data was read; shares per package.",
            ("untested", "untested_packages"), lambda f, get: _untested.untested(f),
            _sum_untested,
            {"untested": ("confidence", "qualname", "path", "line_start", "cyclomatic", "why"),
             "untested_packages": ("package", "functions", "tested", "untested",
                                   "untested_share", "not_run_share")},
            _chart_untested,
        ),
        Section(
            "risk", "Risk",
            "Where to read first: fan-in, complexity, test reach and boundaries joined into "
            "one score, each with why.",
            ("risk",),
            lambda f, get: _risk.risk(f, get("complexity"), get("untested"), get("boundaries")),
            _sum_risk,
            {"risk": ("rank", "qualname", "path", "line_start", "score", "why")},
            _chart_risk,
        ),
        Section(
            "boundaries", "Boundaries",
            "What the code consumes and provides — routes, env vars, HTTP, programs, "
            "packages, k8s — with the risky uses marked.",
            ("boundaries",), lambda f, get: _risk.boundaries(f), _sum_boundaries,
            {"boundaries": ("risk", "transport", "identifier", "via", "used_by", "path",
                            "line")},
        ),
        Section(
            "hotspots", "Hotspots",
            "Code files that change often and are large (revisions x lines, CodeScene's "
            "hotspots), and the hot ones one author wrote alone (from the git history).",
            ("hotspots", "knowledge_islands"),
            lambda f, get: _history(f, "hotspots", "knowledge_islands"), _sum_hotspots,
            {"hotspots": ("entity", "revisions", "complexity", "score", "last_year", "trend",
                          "authors"),
             "knowledge_islands": ("entity", "main_author", "revisions", "score")},
            needs=("git history",),
        ),
        Section(
            "coupling", "Coupling",
            "Files that change in the same commits (code-maat's shared revisions and degree), "
            "and the coupled pairs no path of the graph connects (hidden coupling).",
            ("coupling", "hidden_coupling"),
            lambda f, get: _history(f, "coupling", "hidden_coupling"), _sum_coupling,
            {"coupling": ("a", "b", "shared", "degree", "average"),
             "hidden_coupling": ("a", "b", "shared", "degree", "average")},
            needs=("git history",),
        ),
    )
}  # fmt: skip

# A frame's section (for `g.audit("cycle_edges")` and `audit.<frame>`).
FRAME_SECTION = {frame: s.name for s in SECTIONS.values() for frame in s.frames}

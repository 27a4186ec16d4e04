"""Architecture: the dependency graph between packages (imports and calls folded), import
cycles between modules and between packages (strongly connected components, with the import
lines inside each), and import contracts in import-linter's vocabulary (layers, forbidden,
independence), each violation with its file and line.

Tests are left out of the package graph (they import everything, and the architecture is the
code's); module import cycles count every module.
"""

from __future__ import annotations

import re

import polars as pl

from ctxframe._audit.config import Contract
from ctxframe._audit.facts import Facts
from ctxframe._audit.graphs import shortest_chain, shortest_cycle, strongly_connected
from ctxframe._audit.modules import in_module

_CYCLE_SCHEMA = {
    "level": pl.String, "cycle": pl.Int32, "size": pl.Int32, "members": pl.List(pl.String),
    "imports": pl.Int32, "example": pl.List(pl.String),
}  # fmt: skip
_CYCLE_EDGE_SCHEMA = {
    "level": pl.String, "cycle": pl.Int32, "src": pl.String, "dst": pl.String,
    "path": pl.String, "line": pl.Int32,
}  # fmt: skip
_VIOLATION_SCHEMA = {
    "contract": pl.String, "type": pl.String, "importer": pl.String, "imported": pl.String,
    "direct": pl.Boolean, "src": pl.String, "dst": pl.String, "path": pl.String,
    "line": pl.Int32, "chain": pl.List(pl.String), "why": pl.String,
}  # fmt: skip


def module_edges(f: Facts, *, tests: bool = False) -> pl.DataFrame:
    """Import edges between modules: src, dst (module names), path, line."""
    info = f.file_info if tests else f.file_info.filter(~pl.col("is_test"))
    names = info.select("path", "module")
    return (
        f.file_imports.join(names.rename({"path": "src", "module": "sm"}), on="src")
        .join(names.rename({"path": "dst", "module": "dm"}), on="dst")
        .filter(pl.col("sm") != pl.col("dm"))
        .select(src="sm", dst="dm", path="path", line="line")
        .sort("src", "dst", "path", "line")
    )


def package_edges(f: Facts) -> pl.DataFrame:
    """Dependencies between packages (code, not tests): src, dst, kind (imports | calls),
    path, line — one row per import line or call site crossing packages."""
    info = f.file_info.filter(~pl.col("is_test")).select("path", "package")

    def folded(frame: pl.DataFrame, kind: str) -> pl.DataFrame:
        return (
            frame.join(info.rename({"path": "src", "package": "sp"}), on="src")
            .join(info.rename({"path": "dst", "package": "dp"}), on="dst")
            .filter(pl.col("sp") != pl.col("dp"))
            .select(src="sp", dst="dp", kind=pl.lit(kind), path="path", line="line")
        )

    return pl.concat([folded(f.file_imports, "imports"), folded(f.file_calls, "calls")])


def architecture(f: Facts) -> dict[str, pl.DataFrame]:
    """`packages` and `dependencies` (the package graph), `cycles` and `cycle_edges`."""
    edges = package_edges(f)
    deps = (
        edges.group_by("src", "dst")
        .agg(
            imports=(pl.col("kind") == "imports").sum().cast(pl.Int32),
            calls=(pl.col("kind") == "calls").sum().cast(pl.Int32),
            example=pl.format("{}:{}", "path", "line").sort().first(),
        )
        .with_columns(weight=pl.col("imports") + pl.col("calls"))
    )
    cycles, cycle_edges = _cycles(f, deps)
    in_cycle = cycles.filter(pl.col("level") == "package").explode("members")
    comp = in_cycle.select(package="members", cycle="cycle")
    deps = (
        deps.join(comp.rename({"package": "src", "cycle": "c1"}), on="src", how="left")
        .join(comp.rename({"package": "dst", "cycle": "c2"}), on="dst", how="left")
        .with_columns(in_cycle=(pl.col("c1") == pl.col("c2")).fill_null(False))
        .drop("c1", "c2")
        .sort(["weight", "src", "dst"], descending=[True, False, False])
        .select("src", "dst", "imports", "calls", "weight", "in_cycle", "example")
    )
    code = f.modules.filter(~pl.col("is_test"))
    funcs = (
        f.functions.filter(~pl.col("is_test"))
        .group_by("package")
        .agg(functions=pl.len().cast(pl.Int32))
    )
    fan_out = deps.group_by(package="src").agg(fan_out=pl.len().cast(pl.Int32))
    fan_in = deps.group_by(package="dst").agg(fan_in=pl.len().cast(pl.Int32))
    packages = (
        code.group_by("package")
        .agg(
            language=pl.col("language").mode().sort().first(),
            files=pl.len().cast(pl.Int32),
            lines=pl.col("lines").sum().cast(pl.Int64),
        )
        .join(funcs, on="package", how="left")
        .join(fan_in, on="package", how="left")
        .join(fan_out, on="package", how="left")
        .join(comp, on="package", how="left")
        .with_columns(pl.col("functions", "fan_in", "fan_out").fill_null(0))
        .with_columns(
            instability=pl.when(pl.col("fan_in") + pl.col("fan_out") > 0).then(
                pl.col("fan_out") / (pl.col("fan_in") + pl.col("fan_out"))
            ),
        )
        .sort(["lines", "package"], descending=[True, False])
        .select(
            "package",
            "language",
            "files",
            "lines",
            "functions",
            "fan_in",
            "fan_out",
            "instability",
            "cycle",
        )
    )
    return {"packages": packages, "dependencies": deps, "modules": _module_graph(f, cycles),
            "cycles": cycles, "cycle_edges": cycle_edges}  # fmt: skip


def _module_graph(f: Facts, cycles: pl.DataFrame) -> pl.DataFrame:
    """Dependencies between modules (code, not tests): src, dst, imports, calls, in_cycle."""
    info = f.file_info.filter(~pl.col("is_test")).select("path", "module")

    def folded(frame: pl.DataFrame, kind: str) -> pl.DataFrame:
        return (
            frame.join(info.rename({"path": "src", "module": "sm"}), on="src")
            .join(info.rename({"path": "dst", "module": "dm"}), on="dst")
            .filter(pl.col("sm") != pl.col("dm"))
            .select(src="sm", dst="dm", kind=pl.lit(kind))
        )

    comp = (
        cycles.filter(pl.col("level") == "module")
        .explode("members")
        .select(module="members", cycle="cycle")
    )
    return (
        pl.concat([folded(f.file_imports, "imports"), folded(f.file_calls, "calls")])
        .group_by("src", "dst")
        .agg(
            imports=(pl.col("kind") == "imports").sum().cast(pl.Int32),
            calls=(pl.col("kind") == "calls").sum().cast(pl.Int32),
        )
        .join(comp.rename({"module": "src", "cycle": "c1"}), on="src", how="left")
        .join(comp.rename({"module": "dst", "cycle": "c2"}), on="dst", how="left")
        .with_columns(in_cycle=(pl.col("c1") == pl.col("c2")).fill_null(False))
        .select("src", "dst", "imports", "calls", "in_cycle")
        .sort("src", "dst")
    )


def _cycles(f: Facts, deps: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Module-level import cycles (test modules included: a cycle through a test helper is one
    too) and package-level dependency cycles (code only)."""
    mod_edges = module_edges(f, tests=True)
    rows, edge_rows = [], []
    for level, edges, lines in (
        ("module", mod_edges.select("src", "dst").unique(), mod_edges),
        (
            "package",
            deps.select("src", "dst"),
            package_edges(f).filter(pl.col("kind") == "imports"),
        ),
    ):
        comps = strongly_connected(edges)
        if comps.is_empty():
            continue
        # number package cycles after module ones, so each cycle has one number
        base = len(rows)
        members = comps.group_by("component").agg(pl.col("node").sort()).sort("component")
        inner = (
            lines.join(comps.rename({"node": "src"}), on="src")
            .join(comps.rename({"node": "dst", "component": "c2"}), on="dst")
            .filter(pl.col("component") == pl.col("c2"))
        )
        counts = dict(inner.group_by("component").len().iter_rows())
        for comp, nodes in members.iter_rows():
            rows.append(
                {
                    "level": level,
                    "cycle": base + comp,
                    "size": len(nodes),
                    "members": nodes,
                    "imports": counts.get(comp, 0),
                    "example": shortest_cycle(edges.filter(
                        pl.col("src").is_in(nodes) & pl.col("dst").is_in(nodes)), nodes[0]),
                }
            )  # fmt: skip
        edge_rows.append(
            inner.select(
                level=pl.lit(level),
                cycle=(pl.col("component") + base).cast(pl.Int32),
                src="src",
                dst="dst",
                path="path",
                line="line",
            )
        )
    cycles = pl.DataFrame(rows, schema=_CYCLE_SCHEMA)
    cycle_edges = (
        pl.concat(edge_rows).cast(_CYCLE_EDGE_SCHEMA).sort("cycle", "src", "dst", "path", "line")
        if edge_rows
        else pl.DataFrame(schema=_CYCLE_EDGE_SCHEMA)
    )
    return cycles.sort(["level", "size", "cycle"], descending=[True, True, False]), cycle_edges


# -- contracts ---------------------------------------------------------------------------------


def _pattern(expr: str) -> str:
    """An ignore_imports module expression as an anchored regex: `*` is one part of a dotted
    name, `**` any number of them."""
    out = []
    for part in re.split(r"(\*\*|\*)", expr):
        out.append({"**": ".*", "*": r"[^.]+"}.get(part, re.escape(part)))
    return "^" + "".join(out) + "$"


def _without_ignored(edges: pl.DataFrame, contract: Contract) -> pl.DataFrame:
    if not contract.ignore_imports:
        return edges
    drop = pl.lit(False)
    for importer, imported in contract.ignore_imports:
        a, b = _pattern(importer), _pattern(imported)
        drop = drop | (pl.col("src").str.contains(a) & pl.col("dst").str.contains(b))
    return edges.filter(~drop)


def _members(names: pl.Series, prefix: str) -> pl.Series:
    return names.filter(in_module(names, prefix).fill_null(False))


def contracts(f: Facts) -> dict[str, pl.DataFrame]:
    """`contracts`: one row per violation of a configured contract."""
    if not f.config.contracts:
        return {"contracts": pl.DataFrame(schema=_VIOLATION_SCHEMA)}
    edges = module_edges(f)
    names = pl.concat([edges["src"], edges["dst"], f.modules["module"]]).unique().sort()
    out: list[dict] = []
    for c in f.config.contracts:
        e = _without_ignored(edges, c)
        for importer, imported, blocked, indirect in _checks(c, names):
            out += _violations(c, e, names, importer, imported, blocked, indirect)
    frame = pl.DataFrame(out, schema=_VIOLATION_SCHEMA)
    return {
        "contracts": frame.sort(
            "contract",
            "importer",
            "imported",
            "direct",
            "src",
            "dst",
            descending=[False, False, False, True, False, False],
        )
    }


def _checks(c: Contract, names: pl.Series):
    """(importer, imported, modules a chain may not pass through, check indirect chains) for
    each ordered pair the contract forbids."""
    if c.type == "layers":
        for container in c.containers or ("",):

            def full(tail: str, container: str = container) -> str:
                return f"{container}.{tail}" if container else tail

            layers = [[full(t) for t in layer] for layer in c.layers]
            every = [m for layer in layers for m in layer]
            for hi, higher in enumerate(layers):
                for lower in layers[hi + 1 :]:
                    for lo_mod in lower:
                        for hi_mod in higher:
                            others = [m for m in every if m not in (lo_mod, hi_mod)]
                            yield lo_mod, hi_mod, others, True
            for layer, independent in zip(layers, c.independent, strict=True):
                if independent:
                    for a in layer:
                        for b in layer:
                            if a != b:
                                yield a, b, [m for m in every if m not in (a, b)], True
    elif c.type == "forbidden":
        for src in c.source_modules:
            for dst in c.forbidden_modules:
                yield src, dst, [], not c.allow_indirect
    else:
        for a in c.modules:
            for b in c.modules:
                if a != b:
                    yield a, b, [m for m in c.modules if m not in (a, b)], True


def _violations(
    c: Contract, edges: pl.DataFrame, names: pl.Series, importer: str, imported: str,
    blocked: list[str], indirect: bool,
) -> list[dict]:  # fmt: skip
    src_set, dst_set = _members(names, importer), _members(names, imported)
    if src_set.is_empty() or dst_set.is_empty():
        return []
    rows = []
    direct = edges.filter(
        pl.col("src").is_in(src_set.implode()) & pl.col("dst").is_in(dst_set.implode())
    )
    why = {
        "layers": f"{importer} is below {imported}: it may not import it",
        "forbidden": f"{importer} may not import {imported}",
        "independence": f"{importer} and {imported} must stay independent",
    }[c.type]
    for r in direct.iter_rows(named=True):
        rows.append(
            {"contract": c.name, "type": c.type, "importer": importer, "imported": imported,
             "direct": True, "src": r["src"], "dst": r["dst"], "path": r["path"],
             "line": r["line"], "chain": [r["src"], r["dst"]], "why": why}
        )  # fmt: skip
    if not indirect:
        return rows
    stop = pl.concat([_members(names, m) for m in blocked]) if blocked else None
    rest = edges.join(direct.select("src", "dst"), on=["src", "dst"], how="anti")
    # an indirect chain leaves the importer at once: its first hop goes outside both packages
    rest = rest.filter(~(pl.col("src").is_in(src_set.implode())
                         & pl.col("dst").is_in(src_set.implode())))  # fmt: skip
    chain = shortest_chain(rest, src_set, stop, targets_of=dst_set)
    if len(chain) > 2:
        first = rest.filter((pl.col("src") == chain[0]) & (pl.col("dst") == chain[1])).row(
            0, named=True
        )
        rows.append(
            {"contract": c.name, "type": c.type, "importer": importer, "imported": imported,
             "direct": False, "src": chain[0], "dst": chain[-1], "path": first["path"],
             "line": first["line"], "chain": chain, "why": why + " (through " +
             " -> ".join(chain[1:-1]) + ")"}
        )  # fmt: skip
    return rows

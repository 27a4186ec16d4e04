"""Call-graph accuracy on PyCG's micro-benchmark: ctxframe's `calls` edges against hand-written
call graphs, beside a naive same-name linker and PyCG itself.

Not part of CI (tests/test_callgraph_bench.py runs three cases). The cases are fetched by package
name with pip (``pycg==0.0.8`` sdist: its ``micro-benchmark/snippets/<category>/<case>/``, each a
small program with ``main.py`` and a hand-written ``callgraph.json``); PyCG runs from the
``pycg==0.0.7`` sdist (``PYTHONPATH=<unpacked> python -m pycg``; the 0.0.8 wheel is broken).
Both go to the bench cache (``~/.cache/ctxframe-bench/`` or ``CTXFRAME_BENCH_CACHE``).

    python bench/callgraph_bench.py [--out FILE] [--no-pycg] [--cases ID|CATEGORY ...]
                                    [--constructors mro|own] [--details]

ctxframe is used through its public API only (``cf.index(dir)``, ``g.nodes``, ``g.edges``).

Scoring choices (each one changes the figures; they are the contract of this benchmark):

* **Program.** Each case's ``.py`` files (README and callgraph.json left out) are copied to a
  fresh temp dir and indexed whole; PyCG gets the same copy with ``main.py`` as its only entry
  point and the copy as ``--package`` (as its own test harness does).
* **Names.** PyCG's dotted naming: the module path without ``.py``, ``/`` -> ``.``,
  ``pkg/__init__.py`` -> ``pkg``; a definition is ``module.Qual.name`` (nested functions and
  classes included, ``main.MyClass.func.nested``); code at module level is the module itself
  (``main``). A ctxframe node id ``path::Qual.name`` maps to ``module.Qual.name`` (a ``#2``
  duplicate suffix dropped), a file id (calls outside any definition) to the module. PyCG
  names lambdas ``<lambdaN>``; ctxframe has no lambda nodes (calls inside a lambda belong to
  the enclosing definition), so pairs naming a lambda are misses, never matches.
* **Which pairs count.** An expected (or predicted) pair counts only when caller AND callee are
  defined in the case: the name is a module of the case or starts with one. ``<builtin>.*``,
  ``<**PyStr**>.*`` and modules outside the case (``ext.Cls`` in ``external/``) are dropped,
  and so are the pairs they take part in.
* **Constructors.** In PyCG's data a call ``A()`` is the pair ``-> A.__init__`` where ``A``'s
  MRO defines an ``__init__`` in the case (own or inherited: ``mro/basic_init`` expects
  ``B() -> A.__init__``), and no pair at all when only ``object.__init__`` runs
  (``classes/imported_call_without_init``); a class itself is a callee only when it is
  external. So a ctxframe edge whose ``dst`` is a class maps to the first ``__init__`` along
  that class's C3 MRO over the case's classes (read from the source with ``ast``: bases by
  name, same module or ``from``-imported), and is left out of scoring when there is none
  (counted in ``class_edges_dropped``). The same mapping applies to the naive baseline.
  Decorator application (``@dec`` -> ``main -> main.dec``) and ``raise A`` (``-> A.__init__``)
  are calls in PyCG's data and are kept: ctxframe not seeing them is a miss.
* **Both conventions.** Each run also scores ctxframe under the other ``--constructors`` choice
  (a line under the table, and ``"<view> (own)"``/``"<view> (mro)"`` systems in the JSON): the
  targets (>= 97 % precision, >= 90 % recall, default view) apply to PyCG's convention,
  ``mro``, the default.
* **Scores.** Per case, sets of (caller, callee) pairs; per category and overall the sums:
  precision = TP / predicted pairs, recall = TP / expected pairs (micro-averaged; a case with no
  expected pairs still adds its false positives).
* **Views.** ``default``: ctxframe calls edges with confidence EXTRACTED or INFERRED (what
  traversals use); ``+ambiguous``: AMBIGUOUS added; ``naive``: every call site in the source
  (``ast``; ``f()`` and ``x.f()`` give the name ``f``; subscripts, calls of calls give none)
  linked to every function, method and class of the case with that name, from the innermost
  enclosing def (lambdas count as their enclosing def, as in ctxframe); ``pycg``: PyCG
  0.0.7's output scored like the rest. An edge whose ``via`` names a decorator (``@dec``: a
  call of the decorated name reaching the function through the decorator's wrapper) is left
  out of every ctxframe view: it summarises two direct calls that are scored themselves.

The sdist holds 118 cases with a callgraph.json (18 categories). The issue's figures (ctxframe
default 84.6 % precision / 45.3 % recall; PyCG ~98 / ~94) were scored with edges to a class
taken as its own ``__init__`` or else the class itself, i.e. as false positives when the class
has no ``__init__`` of its own: ``--constructors own`` scores that way and reproduces them
(84.4 / 44.8 at the baseline); the default ``mro`` follows PyCG's data (99.1 / 46.1 then).
bench/CALLGRAPH_NOTES.md has the baseline and what the misses are, by category.
Exit status 1 (one-line reason) when the cases cannot be fetched; PyCG not installable only
empties its column.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

CASES = c.Corpus("pycg", "0.0.8", "")  # the micro-benchmark's cases (and expected graphs)
PYCG = c.Corpus("pycg", "0.0.7", "")  # the peer: the last sdist that runs as is
VIEWS = {
    "default": ("EXTRACTED", "INFERRED"),
    "+ambiguous": ("EXTRACTED", "INFERRED", "AMBIGUOUS"),
}
SYSTEMS = ("default", "+ambiguous", "naive", "pycg")
PYCG_TIMEOUT_S = 120

Pair = tuple[str, str]


# --------------------------------------------------------------------------- cases


def snippets_dir() -> Path:
    """``micro-benchmark/snippets`` of the pycg 0.0.8 sdist (fetched once into the cache)."""
    root = c.ensure_corpus(CASES)
    snippets = root / "micro-benchmark" / "snippets"
    if not snippets.is_dir():
        raise c.Unavailable(f"no micro-benchmark/snippets in {root}")
    return snippets


def discover(snippets: Path, wanted: Iterable[str] = ()) -> list[tuple[str, Path]]:
    """``(category/case, dir)`` of every case with a callgraph.json, sorted; ``wanted`` keeps
    only the listed case ids or whole categories."""
    wanted = list(wanted)
    cases = sorted(
        (p.parent.relative_to(snippets).as_posix(), p.parent)
        for p in snippets.rglob("callgraph.json")
    )
    if wanted:
        cases = [(k, p) for k, p in cases if k in wanted or k.split("/")[0] in wanted]
    return cases


def copy_program(case: Path, dest: Path) -> None:
    """The case's ``.py`` files only, paths kept."""
    for src in sorted(case.rglob("*.py")):
        target = dest / src.relative_to(case)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)


def module_name(relpath: str) -> str:
    """``nested/mod.py`` -> ``nested.mod``; ``nested/__init__.py`` -> ``nested``."""
    stem = relpath[:-3] if relpath.endswith(".py") else relpath
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


# --------------------------------------------------------------------------- source facts (ast)


class Source:
    """What the case's source says, read with ``ast`` (independent of ctxframe): its modules,
    its definitions, its classes' MROs and, for the naive baseline, its call sites."""

    def __init__(self, tree: Path, constructors: str = "mro") -> None:
        self.constructors = constructors  # "mro" (PyCG's data) or "own" (see the docstring)
        self.modules: set[str] = set()
        self.defs_by_name: dict[str, set[str]] = defaultdict(set)  # last name -> dotted defs
        self.classes: dict[str, tuple[set[str], list[str]]] = {}  # dotted -> (members, bases)
        self.call_sites: list[tuple[str, str, int]] = []  # (caller, name, line)
        self.packages: set[str] = set()  # modules that are a package's __init__.py
        parsed = []
        for path in sorted(tree.rglob("*.py")):
            rel = path.relative_to(tree).as_posix()
            if "/.ctxframe/" in f"/{rel}":
                continue
            mod = module_name(rel)
            self.packages.update([mod] if rel.endswith("__init__.py") else [])
            if mod:
                self.modules.add(mod)
            try:
                parsed.append((mod, ast.parse(path.read_text(encoding="utf-8"))))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
        for mod, module in parsed:
            imports = self._from_imports(module, mod)
            self._walk(module.body, mod, mod, mod, imports)

    def _from_imports(self, module: ast.Module, mod: str) -> dict[str, str]:
        """``from X import n [as m]`` at module level: ``m`` -> ``X.n`` (relative resolved)."""
        out: dict[str, str] = {}
        for node in module.body:
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = mod.split(".") if mod else []
                    drop = node.level - 1 if mod in self.packages else node.level
                    pkg = parts[: len(parts) - drop]
                    base = ".".join([*pkg, base] if base else pkg)
                for alias in node.names:
                    out[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        return out

    def _walk(
        self, body: list[ast.stmt], mod: str, scope: str, caller: str, imports: dict[str, str]
    ) -> None:
        for stmt in body:
            self._visit(stmt, mod, scope, caller, imports)

    def _visit(self, node: ast.AST, mod: str, scope: str, caller: str, imports) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            dotted = f"{scope}.{node.name}"
            self.defs_by_name[node.name].add(dotted)
            for deco in node.decorator_list:
                self._visit(deco, mod, scope, caller, imports)
            if isinstance(node, ast.ClassDef):
                bases = [self._base(b, mod, scope, imports) for b in node.bases]
                members = {
                    s.name
                    for s in node.body
                    if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                }
                self.classes[dotted] = (members, [b for b in bases if b])
                for b in node.bases:
                    self._visit(b, mod, scope, caller, imports)
                self._walk(node.body, mod, dotted, dotted, imports)
            else:
                for default in [*node.args.defaults, *node.args.kw_defaults]:
                    if default is not None:
                        self._visit(default, mod, scope, caller, imports)
                self._walk(node.body, mod, dotted, dotted, imports)
            return
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else None
            )
            if name:
                self.call_sites.append((caller, name, node.lineno))
        for child in ast.iter_child_nodes(node):
            self._visit(child, mod, scope, caller, imports)

    def _base(self, expr: ast.expr, mod: str, scope: str, imports: dict[str, str]) -> str | None:
        """A base class expression as the dotted name of a class of the case, when it is one."""
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.insert(0, expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        parts.insert(0, expr.id)
        tail = ".".join(parts)
        head = imports.get(parts[0])
        candidates = [f"{scope}.{tail}", f"{mod}.{tail}"]
        if head:
            candidates.append(".".join([head, *parts[1:]]))
        return next((x for x in candidates if x in self.classes), candidates[-1])

    def mro(self, cls: str) -> list[str]:
        """C3 linearisation over the case's classes (bases outside the case are skipped)."""

        def lin(name: str, stack: tuple[str, ...]) -> list[str]:
            if name not in self.classes or name in stack:
                return []
            bases = [b for b in self.classes[name][1] if b in self.classes]
            seqs = [lin(b, (*stack, name)) for b in bases] + [bases]
            seqs = [s for s in seqs if s]
            out = [name]
            while seqs:
                heads = [s[0] for s in seqs if not any(s[0] in t[1:] for t in seqs)]
                head = heads[0] if heads else seqs[0][0]  # inconsistent: depth-first order
                out.append(head)
                seqs = [t for t in ([x for x in s if x != head] for s in seqs) if t]
            return out

        return lin(cls, ())

    def constructor(self, cls: str) -> str | None:
        """What a call of class ``cls`` is in PyCG's naming: the first ``__init__`` along its
        MRO, or None (only ``object.__init__`` runs: no pair). With ``constructors="own"``: its
        own ``__init__``, else the class itself (which PyCG's data never expects)."""
        if self.constructors == "own":
            return f"{cls}.__init__" if "__init__" in self.classes[cls][0] else cls
        for klass in self.mro(cls):
            if "__init__" in self.classes[klass][0]:
                return f"{klass}.__init__"
        return None

    def callee(self, dotted: str) -> str | None:
        """A callee in PyCG's naming: a class becomes its constructor (or None)."""
        return self.constructor(dotted) if dotted in self.classes else dotted

    def internal(self, name: str) -> bool:
        """Defined in the case: a module of the case or a name under one."""
        if name.startswith("<"):
            return False
        return any(name == m or name.startswith(m + ".") for m in self.modules)


# --------------------------------------------------------------------------- the systems


def expected_pairs(case: Path, src: Source) -> set[Pair]:
    """The hand-written call graph, restricted to pairs defined in the case."""
    data = json.loads((case / "callgraph.json").read_text(encoding="utf-8"))
    return {
        (caller, callee)
        for caller, callees in data.items()
        for callee in callees
        if src.internal(caller) and src.internal(callee)
    }


_DUP = re.compile(r"#\d+$")


def node_dotted(node_id: str) -> str:
    """A ctxframe node id in PyCG's naming."""
    path, sep, qual = node_id.partition("::")
    mod = module_name(path)
    if not sep:
        return mod
    qual = _DUP.sub("", qual)
    return f"{mod}.{qual}" if mod else qual


def ctxframe_pairs(tree: Path, src: Source) -> tuple[dict[str, set[Pair]], dict[str, Any]]:
    """ctxframe's calls edges per view, in PyCG's naming, plus the edge rows for the notes."""
    import polars as pl

    import ctxframe as cf

    graph = cf.index(str(tree), progress=False)
    # an edge through a decorator's wrapper (`via` "@dec": the wrapper calls the function) is
    # not a direct call, as PyCG's data counts calls: its two direct edges are scored instead
    calls = graph.edges.filter(
        (pl.col("kind") == "calls") & ~pl.col("via").fill_null("").str.starts_with("@")
    )
    class_ids = set(graph.nodes.filter(pl.col("kind") == "class")["id"].to_list())
    views: dict[str, set[Pair]] = {v: set() for v in VIEWS}
    rows: list[dict[str, Any]] = []
    dropped = 0
    for row in calls.iter_rows(named=True):
        caller = node_dotted(row["src"])
        callee = node_dotted(row["dst"]) if row["dst"] is not None else None
        if callee is not None and row["dst"] in class_ids:
            mapped = src.constructor(callee) if callee in src.classes else None
            if mapped is None:
                dropped += 1
            callee = mapped
        rows.append(
            {
                "caller": caller,
                "callee": callee,  # None: unresolved, or a class with no __init__ (dropped)
                "dst": row["dst"],
                "name": row["name"],
                "confidence": row["confidence"],
                "line": row["line"],
                "path": row["path"],
            }
        )
        if callee is None or not (src.internal(caller) and src.internal(callee)):
            continue
        for view, levels in VIEWS.items():
            if row["confidence"] in levels:
                views[view].add((caller, callee))
    return views, {"edges": rows, "class_edges_dropped": dropped}


def naive_pairs(src: Source) -> set[Pair]:
    """Every call site linked to every definition of the case with the called name."""
    pairs: set[Pair] = set()
    for caller, name, _line in src.call_sites:
        for target in src.defs_by_name.get(name, ()):
            callee = src.callee(target)
            if callee and src.internal(caller) and src.internal(callee):
                pairs.add((caller, callee))
    return pairs


def pycg_runner() -> Path:
    """The unpacked pycg 0.0.7 sdist (its ``pycg`` package runs with no dependencies)."""
    root = c.ensure_corpus(PYCG)
    if not (root / "pycg" / "__main__.py").is_file():
        raise c.Unavailable(f"no pycg/__main__.py in {root}")
    return root


def run_pycg(runner: Path, tree: Path, entries: list[str], out: Path, timeout: float) -> None:
    """PyCG on the package `tree` from the modules `entries`, its call graph written to `out`;
    RuntimeError with its last line of error when it fails (TimeoutExpired past `timeout`)."""
    env = {**os.environ, "PYTHONPATH": str(runner)}
    cmd = [sys.executable, "-m", "pycg", "--package", str(tree), *entries, "--output", str(out)]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0 or not out.is_file():
        lines = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise RuntimeError(lines[-1][:200] if lines else f"exit {proc.returncode}")


def pycg_pairs(runner: Path, tree: Path, src: Source, scratch: Path) -> set[Pair]:
    """PyCG's call graph of the case (entry point main.py), restricted like the expected one."""
    out = scratch / "pycg.json"
    run_pycg(runner, tree, [str(tree / "main.py")], out, PYCG_TIMEOUT_S)
    data = json.loads(out.read_text(encoding="utf-8"))
    return {
        (caller, callee)
        for caller, callees in data.items()
        for callee in callees
        if src.internal(caller) and src.internal(callee)
    }


# --------------------------------------------------------------------------- scoring


def score(pred: set[Pair], exp: set[Pair]) -> dict[str, Any]:
    """TP/FP/FN counts and the pairs behind them."""
    return {
        "predicted": len(pred),
        "tp": len(pred & exp),
        "fp": sorted(f"{a} -> {b}" for a, b in pred - exp),
        "fn": sorted(f"{a} -> {b}" for a, b in exp - pred),
    }


def run_case(
    case_id: str, case: Path, runner: Path | None, constructors: str = "mro"
) -> dict[str, Any]:
    """Every system on one case."""
    with tempfile.TemporaryDirectory(prefix="cgbench-") as tmp:
        scratch = Path(tmp)
        tree = scratch / "case"
        copy_program(case, tree)
        src = Source(tree, constructors)
        exp = expected_pairs(case, src)
        result: dict[str, Any] = {"case": case_id, "expected": len(exp), "systems": {}}
        if runner is not None:  # before ctxframe writes its store into the copy
            try:
                result["systems"]["pycg"] = score(pycg_pairs(runner, tree, src, scratch), exp)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
                result["systems"]["pycg"] = {"error": str(exc)}
        views, extra = ctxframe_pairs(tree, src)
        for view, pred in views.items():
            result["systems"][view] = score(pred, exp)
        other = "own" if constructors == "mro" else "mro"
        other_views, _ = ctxframe_pairs(tree, Source(tree, other))  # (an unchanged re-index)
        for view, pred in other_views.items():
            result["systems"][f"{view} ({other})"] = score(pred, exp)
        result["systems"]["naive"] = score(naive_pairs(src), exp)
        result["class_edges_dropped"] = extra["class_edges_dropped"]
        result["ctxframe_edges"] = extra["edges"]
    return result


def summarise(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per category and ``overall``: cases, expected pairs, and per system the sums and
    precision/recall in percent (None when undefined)."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for res in results:
        groups[res["case"].split("/")[0]].append(res)
        groups["overall"].append(res)
    out: dict[str, dict[str, Any]] = {}
    for name in [*sorted(g for g in groups if g != "overall"), "overall"]:
        members = groups[name]
        expected = sum(r["expected"] for r in members)
        row: dict[str, Any] = {"cases": len(members), "expected": expected}
        systems = [*SYSTEMS, *(k for k in members[0]["systems"] if k not in SYSTEMS)]
        for system in systems:
            scored = [r["systems"][system] for r in members if system in r["systems"]]
            scored = [s for s in scored if "error" not in s]
            if not scored:
                continue
            tp = sum(s["tp"] for s in scored)
            pred = sum(s["predicted"] for s in scored)
            exp_scored = sum(
                r["expected"]
                for r in members
                if system in r["systems"] and "error" not in r["systems"][system]
            )
            row[system] = {
                "cases_scored": len(scored),
                "predicted": pred,
                "tp": tp,
                "fp": pred - tp,
                "fn": exp_scored - tp,
                "precision": round(100 * tp / pred, 1) if pred else None,
                "recall": round(100 * tp / exp_scored, 1) if exp_scored else None,
            }
        out[name] = row
    return out


def table(summary: dict[str, dict[str, Any]]) -> str:
    """Plain-text table: one row per category plus overall, P% and R% per system."""
    systems = [s for s in SYSTEMS if any(s in row for row in summary.values())]
    headers = ["category", "cases", "expected"]
    for s in systems:
        headers += [f"{s} P%", f"{s} R%"]
    rows = []
    for name, row in summary.items():
        cells: list[Any] = [name, row["cases"], row["expected"]]
        for s in systems:
            sys_row = row.get(s) or {}
            cells += [sys_row.get("precision"), sys_row.get("recall")]
        rows.append(cells)
    return c.format_table(headers, [[_pct(x) for x in r] for r in rows])


def _pct(value: Any) -> Any:
    return f"{value:.1f}" if isinstance(value, float) else value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="JSON output (default bench/results/callgraph-*.json)")
    ap.add_argument("--no-pycg", action="store_true", help="do not fetch or run PyCG")
    ap.add_argument(
        "--cases", nargs="+", default=[], metavar="ID", help="only these cases or categories"
    )
    ap.add_argument(
        "--constructors",
        choices=("mro", "own"),
        default="mro",
        help="a call edge to a class is its MRO's __init__ (default) or its own __init__ else "
        "the class itself",
    )
    ap.add_argument(
        "--details", action="store_true", help="also print each case's misses and false positives"
    )
    args = ap.parse_args(argv)

    try:
        snippets = snippets_dir()
    except c.Unavailable as exc:
        print(f"callgraph_bench: cannot fetch the cases: {exc}", file=sys.stderr)
        return 1
    cases = discover(snippets, args.cases)
    if not cases:
        print(f"callgraph_bench: no case matches {' '.join(args.cases)}", file=sys.stderr)
        return 1
    runner = None
    pycg_note = "not run (--no-pycg)"
    if not args.no_pycg:
        try:
            runner = pycg_runner()
            pycg_note = f"pycg 0.0.7 from {runner}"
        except c.Unavailable as exc:
            pycg_note = f"unavailable: {exc}"
            c.log(f"PyCG {pycg_note}")

    t0 = time.perf_counter()
    results = []
    for case_id, case in cases:
        results.append(run_case(case_id, case, runner, args.constructors))
    elapsed = time.perf_counter() - t0
    summary = summarise(results)
    pycg_errors = {
        r["case"]: r["systems"]["pycg"]["error"]
        for r in results
        if "error" in r["systems"].get("pycg", {})
    }

    print(
        f"PyCG micro-benchmark ({len(cases)} cases, pycg {CASES.version} sdist), "
        f"pairs with caller and callee defined in the case; PyCG: {pycg_note}"
    )
    print(table(summary))
    overall = summary["overall"]
    dropped = sum(r["class_edges_dropped"] for r in results)
    print(
        f"views: default = EXTRACTED+INFERRED, +ambiguous adds AMBIGUOUS, naive = every call "
        f"name to every same-named definition; {dropped} ctxframe edges to a class without an "
        f"__init__ in its MRO left out; {elapsed:.1f} s"
    )
    other = "own" if args.constructors == "mro" else "mro"
    for view in VIEWS:
        row = overall.get(f"{view} ({other})")
        if row:
            print(
                f"scored with --constructors {other}: {view} P/R "
                f"{_pct(row['precision'])} / {_pct(row['recall'])} "
                f"({row['tp']} TP, {row['fp']} FP, {row['fn']} FN)"
            )
    if pycg_errors:
        print(f"PyCG failed on {len(pycg_errors)} case(s): {', '.join(sorted(pycg_errors))}")
    if args.details:
        for res in results:
            d = res["systems"]["default"]
            if d["fn"] or d["fp"]:
                print(f"\n{res['case']}")
                print("".join(f"  miss {p}\n" for p in d["fn"]), end="")
                print("".join(f"  fp   {p}\n" for p in d["fp"]), end="")

    data = {
        "benchmark": "pycg-micro-benchmark",
        "cases_source": f"pycg=={CASES.version} sdist, micro-benchmark/snippets",
        "pycg": pycg_note,
        "constructors": args.constructors,
        "machine": c.machine_info(),
        "elapsed_s": round(elapsed, 2),
        "views": {**{k: list(v) for k, v in VIEWS.items()}, "naive": "same-name linker (ast)"},
        "summary": summary,
        "overall": overall,
        "pycg_errors": pycg_errors,
        "cases": results,
    }
    c.write_json(args.out or c.default_out("callgraph"), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())

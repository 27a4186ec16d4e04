"""The audit against the tools people use for each of its parts, on real projects downloaded
at run time, and its speed on Django — one table of targets.

    python bench/audit_bench.py [--part complexity cycles contracts dead untested speed]
                                [--out FILE]

- complexity: ctxframe's cyclomatic number (node column `cyclomatic`) against lizard's on the
  functions both delimit alike (same name, lizard's first line inside ctxframe's span, last
  lines within one): Python (rich, httpx), TypeScript (rxjs, @tanstack/query-core sources),
  JavaScript (express), Go (cobra), Java (react-native-webview), C (psutil's C files).
  Target: equal on >= 97 % per language.
- cycles: the module import cycles of django 5.1, jinja2 3.1.4 and rich 13.9.4 against the
  strongly connected components of grimp's import graph of the same package. Target: equal.
- contracts: a layers contract on Django checked by ctxframe and by import-linter (its
  LayersContract over grimp's graph): the same (importer, imported) layer pairs broken and the
  same direct imports. Target: equal.
- dead, untested: on the projects `bench/_testruns.py` runs under coverage.py (httpx, Jinja2,
  Rich): of the dead-code candidates at confidence 100, the share a test executed (target
  <= 5 %), their count against vulture's at 100 % (target >=), vulture's own executed share;
  of the functions called untested (high confidence), the share coverage shows ran (target
  <= 10 %).
- speed: `g.audit()` on Django 5.1 with its index built, in a fresh process (open + audit) and
  again in the same one. Target <= 5 s.

The reference tools (lizard 1.24.3, vulture 2.16, grimp 3.20, import-linter 2.17, coverage
7.18.0) are installed with pip into a private virtual environment in the bench cache and run
there; nothing of them enters ctxframe's own environment.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import languages_bench as lb

TOOLS = ["lizard==1.24.3", "vulture==2.16", "grimp==3.20", "import-linter==2.17",
         "coverage==7.18.0"]  # fmt: skip
PARTS = ("complexity", "cycles", "contracts", "dead", "untested", "speed")

# (language, corpus, file suffixes compared)
COMPLEXITY = [
    ("python", lb.Source("rich", "pypi-sdist", "rich==13.9.4", "python", "rich-13.9.4/rich"),
     (".py",)),
    ("python", lb.Source("httpx", "pypi-sdist", "httpx==0.28.1", "python", "httpx-0.28.1/httpx"),
     (".py",)),
    ("typescript", lb.Source("rxjs", "npm", "rxjs@7.8.1", "typescript", "package/src"),
     (".ts", ".tsx")),
    ("typescript", lb.Source("tanstack-query-core", "npm", "@tanstack/query-core@5.59.0",
                             "typescript", "package/src"), (".ts", ".tsx")),
    ("javascript", lb.Source("express", "npm", "express@4.21.1", "javascript", "package/lib"),
     (".js",)),
    ("go", lb.SOURCES["cobra"], (".go",)),
    ("java", lb.SOURCES["react-native-webview"], (".java",)),
    ("c", lb.Source("psutil", "pypi-sdist", "psutil==6.1.0", "c", "psutil-6.1.0/psutil"),
     (".c",)),
]  # fmt: skip
# (name, corpus, the folder the package is imported from, the package)
CYCLES = [
    ("django", c.CORPORA["django"], "", "django"),
    ("jinja2", c.Corpus("jinja2", "3.1.4", ""), "src", "jinja2"),
    ("rich", c.Corpus("rich", "13.9.4", ""), "", "rich"),
]
DJANGO_LAYERS = ["django.contrib", "django.forms", "django.db", "django.utils"]
TARGET_EQUAL = 0.97
TARGET_DEAD_RAN = 0.05
TARGET_UNTESTED_RAN = 0.10
TARGET_SECONDS = 5.0


# --------------------------------------------------------------------------- the tool venv


def tools_python() -> Path:
    """The python of a private venv holding the reference tools (made once, pinned)."""
    where = c.cache_dir() / "tools" / "audit-venv"
    python = where / "bin" / "python"
    stamp = where / ".tools"
    if stamp.is_file() and stamp.read_text() == " ".join(TOOLS) and python.is_file():
        return python
    c.log(f"installing {', '.join(TOOLS)} into {where}")
    venv.create(where, with_pip=True, clear=True)
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *TOOLS], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise c.Unavailable(f"pip install of the tools failed: {proc.stderr.strip()[-300:]}")
    stamp.write_text(" ".join(TOOLS))
    return python


def in_tools(script: str, *args: str, env: dict | None = None, timeout: float = 3600) -> Any:
    """Run `script` with the tools' python; it prints one JSON document."""
    proc = subprocess.run(
        [str(tools_python()), "-c", script, *args], capture_output=True, text=True,
        env={**os.environ, **(env or {})}, timeout=timeout,
    )  # fmt: skip
    if proc.returncode != 0:
        raise c.Unavailable(f"tool script failed: {proc.stderr.strip()[-400:]}")
    return json.loads(proc.stdout)


def index(tree: Path, name: str):
    """The tree indexed into the bench cache (incremental; rebuilt when unusable)."""
    import ctxframe as cf

    store = c.cache_dir() / "audit-stores" / name
    try:
        return cf.index(str(tree), store=str(store), progress=False)
    except cf.CtxframeError:
        return cf.index(str(tree), store=str(store), progress=False, rebuild=True)


# --------------------------------------------------------------------------- complexity

LIZARD = """
import json, sys, lizard
out = []
for path in sys.argv[1:]:
    for f in lizard.analyze_file(path).function_list:
        out.append([path, f.name, f.start_line, f.end_line, f.cyclomatic_complexity])
print(json.dumps(out))
"""


def complexity() -> tuple[list[dict], dict]:
    import polars as pl

    rows = []
    for lang, src, suffixes in COMPLEXITY:
        try:
            tree = lb.fetch(src)
        except (c.Unavailable, OSError) as exc:
            rows.append({"language": lang, "corpus": src.name, "error": str(exc)})
            continue
        g = index(tree, f"cx-{src.name}")
        ending = "(?:" + "|".join(re.escape(x) for x in suffixes) + ")$"
        ours = g.nodes.filter(
            pl.col("cyclomatic").is_not_null()
            & pl.col("kind").is_in(["function", "method"])
            & pl.col("path").str.contains(ending)
        )
        paths = sorted(set(ours["path"]))
        found = in_tools(LIZARD, *[str(tree / p) for p in paths]) if paths else []
        by_path: dict[str, list[dict]] = {}
        for r in ours.iter_rows(named=True):
            by_path.setdefault(r["path"], []).append(r)
        matched = equal = lizard_only = 0
        diffs = []
        used: set[str] = set()
        for full, name, start, end, ccn in found:
            path = os.path.relpath(full, tree)
            short = re.split(r"::|\.", name)[-1].split(" ")[-1]
            cands = [
                r for r in by_path.get(path, [])
                if r["label"] == short and r["line_start"] <= start <= r["line_end"]
                and abs(r["line_end"] - end) <= 1 and r["id"] not in used
            ]  # fmt: skip
            if not cands:
                lizard_only += 1
                continue
            r = min(cands, key=lambda r: r["line_end"] - r["line_start"])
            used.add(r["id"])
            matched += 1
            if r["cyclomatic"] == ccn:
                equal += 1
            else:
                diffs.append([path, start, name, ccn, r["cyclomatic"]])
        rows.append(
            {"language": lang, "corpus": src.name, "functions": matched, "equal": equal,
             "share": equal / matched if matched else None, "lizard_only": lizard_only,
             "ctxframe_only": ours.height - matched, "differences": diffs[:50]}
        )  # fmt: skip
    per_lang: dict[str, list[int]] = {}
    for r in rows:
        if "error" in r:
            continue
        fam = "typescript/javascript" if r["language"] in ("typescript", "javascript") else (
            r["language"])  # fmt: skip
        acc = per_lang.setdefault(fam, [0, 0])
        acc[0] += r["functions"]
        acc[1] += r["equal"]
    summary = {k: {"functions": n, "equal": e, "share": e / n if n else None}
               for k, (n, e) in per_lang.items()}  # fmt: skip
    return rows, summary


# --------------------------------------------------------------------------- cycles

GRIMP = """
import json, sys, grimp
pkg = sys.argv[1]
g = grimp.build_graph(pkg, cache_dir=None)
edges = []
for m in sorted(g.modules):
    for d in sorted(g.find_modules_directly_imported_by(m)):
        edges.append([m, d])
print(json.dumps({"modules": sorted(g.modules), "edges": edges}))
"""


def _sccs(nodes: list[str], edges: list[list[str]]) -> list[frozenset]:
    """Strongly connected components (two or more nodes), Kosaraju's: an implementation of
    its own, apart from ctxframe's."""
    out: dict[str, list[str]] = {n: [] for n in nodes}
    back: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        if a != b and a in out and b in out:
            out[a].append(b)
            back[b].append(a)
    order: list[str] = []
    seen: set[str] = set()
    for n in nodes:
        if n in seen:
            continue
        seen.add(n)
        stack = [(n, iter(out[n]))]
        while stack:
            node, it = stack[-1]
            nxt = next((m for m in it if m not in seen), None)
            if nxt is None:
                stack.pop()
                order.append(node)
            else:
                seen.add(nxt)
                stack.append((nxt, iter(out[nxt])))
    comps, done = [], set()
    for n in reversed(order):
        if n in done:
            continue
        comp, todo = {n}, [n]
        done.add(n)
        while todo:
            for m in back[todo.pop()]:
                if m not in done:
                    done.add(m)
                    comp.add(m)
                    todo.append(m)
        if len(comp) > 1:
            comps.append(frozenset(comp))
    return comps


def cycles() -> list[dict]:
    import polars as pl

    rows = []
    for name, corpus, src_dir, pkg in CYCLES:
        try:
            tree = c.ensure_corpus(corpus)
        except (c.Unavailable, OSError) as exc:
            rows.append({"project": name, "error": str(exc)})
            continue
        root = tree / src_dir if src_dir else tree
        got = in_tools(GRIMP, pkg, env={"PYTHONPATH": str(root)})
        theirs = set(_sccs(got["modules"], got["edges"]))
        a = index(tree, f"cy-{name}").audit("cycles")
        mods = a.cycles.filter(pl.col("level") == "module")
        ours = {
            frozenset(m) for m in mods["members"].to_list()
            if all(x == pkg or x.startswith(pkg + ".") for x in m)
        }  # fmt: skip
        only_ours = sorted(sorted(x) for x in ours - theirs)
        only_theirs = sorted(sorted(x) for x in theirs - ours)
        rows.append(
            {"project": name, "grimp_sccs": len(theirs), "ctxframe_sccs": len(ours),
             "equal": ours == theirs,
             "grimp_in_cycles": sum(len(x) for x in theirs),
             "ctxframe_in_cycles": sum(len(x) for x in ours),
             "only_ctxframe": only_ours[:5], "only_grimp": only_theirs[:5]}
        )  # fmt: skip
    return rows


# --------------------------------------------------------------------------- contracts

LINTER = """
import json, sys, grimp
from importlinter.contracts.layers import LayersContract
pkg, layers = sys.argv[1], json.loads(sys.argv[2])
g = grimp.build_graph(pkg, cache_dir=None)
contract = LayersContract(name="bench", session_options={"root_packages": [pkg]},
                          contract_options={"layers": layers})
check = contract.check(g, verbose=False)
pairs, direct = set(), set()
for dep in check.metadata["invalid_dependencies"]:
    pairs.add((dep["importer"], dep["imported"]))
    for route in dep["routes"]:
        if len(route["chain"]) == 1:  # a direct import (and the others it stands for)
            for link in [*route["chain"], *route["extra_firsts"], *route["extra_lasts"]]:
                direct.add((link["importer"], link["imported"]))
print(json.dumps({"kept": check.kept, "pairs": sorted(map(list, pairs)),
                  "direct": sorted(map(list, direct))}))
"""


def contracts() -> dict:
    import polars as pl

    from ctxframe._audit import AuditInput, parse, run

    tree = c.ensure_corpus(c.CORPORA["django"])
    theirs = in_tools(LINTER, "django", json.dumps(DJANGO_LAYERS), env={"PYTHONPATH": str(tree)})
    g = index(tree, "cy-django")
    cfg = parse({"contracts": [{"name": "bench", "type": "layers", "layers": DJANGO_LAYERS}]})
    a = run(AuditInput(g.nodes, g.edges, g.files, root=g.root, config=cfg), "contracts")
    v = a.contracts
    pairs = sorted(map(list, set(v.select("importer", "imported").iter_rows())))
    direct = sorted(map(list, set(v.filter(pl.col("direct")).select("src", "dst").iter_rows())))
    return {
        "layers": DJANGO_LAYERS,
        "pairs_equal": pairs == theirs["pairs"],
        "direct_equal": direct == theirs["direct"],
        "ctxframe_pairs": pairs, "linter_pairs": theirs["pairs"],
        "ctxframe_direct": len(direct), "linter_direct": len(theirs["direct"]),
        "direct_only_ctxframe": [d for d in direct if d not in theirs["direct"]][:10],
        "direct_only_linter": [d for d in theirs["direct"] if d not in direct][:10],
    }  # fmt: skip


# --------------------------------------------------------------------------- dead, untested


def _testruns():
    """bench/_testruns.py (the test suites run under coverage.py), when this checkout has it."""
    try:
        import _testruns  # type: ignore[import-not-found]
    except ImportError:
        return None
    return _testruns


EXECUTED = """
import json, sys
from pathlib import Path
from coverage import CoverageData
data, root = sys.argv[1], Path(sys.argv[2]).resolve()
cov = CoverageData(basename=data)
cov.read()
out = {}
for measured in cov.measured_files():
    try:
        rel = Path(measured).resolve().relative_to(root).as_posix()
    except ValueError:
        continue
    by_line = cov.contexts_by_lineno(measured)
    out[rel] = {"ran": sorted(by_line), "tested": sorted(l for l, c in by_line.items()
                                                       if any(c))}
print(json.dumps(out))
"""

VULTURE = """
import json, sys
import vulture
v = vulture.Vulture()
v.scavenge([sys.argv[1]])
print(json.dumps([[str(i.filename), i.first_lineno, i.last_lineno, i.typ, i.name, i.confidence]
                  for i in v.get_unused_code(min_confidence=0)]))
"""
DEAD_KINDS = ("function", "method", "class", "unreachable code")


def dead_and_untested(parts: set[str]) -> dict:
    runs = _testruns()
    if runs is None:
        return {"error": "bench/_testruns.py is not in this checkout yet: no coverage runs"}
    projects, rows = [], []
    for name in ("httpx", "jinja2", "rich"):
        try:
            projects.append(_against_coverage(runs, name))
        except (c.Unavailable, OSError) as exc:
            projects.append({"project": name, "error": str(exc)})
    ok = [p for p in projects if "error" not in p]
    for p in projects:
        if "error" in p:
            rows.append((f"dead/untested, {p['project']}", p["error"], "-", False))
    if "dead" in parts and ok:
        for p in ok:
            d = p["dead"]
            rows.append((f"dead code at confidence 100 executed in the test run, {p['project']}",
                         f"{d['top_ran']}/{d['top']} = {_pct(d['top_share'])}", "<= 5 %",
                         d["top_share"] is not None and d["top_share"] <= TARGET_DEAD_RAN))
            rows.append((f"dead code at confidence 100 vs vulture at 100 %, {p['project']}",
                         f"{d['top']} vs {d['vulture_top']}", ">=", d["top"] >= d["vulture_top"]))
            rows.append((f"vulture at 100 % executed in the test run, {p['project']}",
                         f"{d['vulture_top_ran']}/{d['vulture_top']} = "
                         f"{_pct(d['vulture_top_share'])}", "(reference)", None))
    if "untested" in parts and ok:
        for p in ok:
            u = p["untested"]
            rows.append((f"untested (high confidence) that tests run, {p['project']}",
                         f"{u['high_ran']}/{u['high']} = {_pct(u['high_share'])} "
                         f"(finds {u['high'] - u['high_ran']} of {u['not_run']} not run)",
                         "<= 10 %",
                         u["high_share"] is not None and u["high_share"] <= TARGET_UNTESTED_RAN))
            rows.append((f"untested with coverage data indexed that tests run, {p['project']}",
                         f"{u['measured_ran']}/{u['measured']} = {_pct(u['measured_share'])} "
                         f"(finds {u['measured'] - u['measured_ran']} of {u['not_run']} not run)",
                         "<= 10 %", u["measured_share"] is not None
                         and u["measured_share"] <= TARGET_UNTESTED_RAN))
            rows.append((f"untested (all graph claims) that tests run, {p['project']}",
                         f"{u['all_ran']}/{u['all']} = {_pct(u['all_share'])} "
                         f"(finds {u['all'] - u['all_ran']} of {u['not_run']} not run)",
                         "(reference)", None))
    return {"projects": projects, "rows": rows}  # fmt: skip


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def _against_coverage(runs, name: str) -> dict:
    """The audit's dead and untested claims on the project against its coverage run."""
    import polars as pl

    project = runs.PROJECTS[name]
    tree, data = runs.coverage_run(name)
    package = project.package
    executed = in_tools(EXECUTED, str(data), str(tree))
    fns = runs.library_functions(tree, package)
    ran = {k: set(v["ran"]) for k, v in executed.items()}
    tested = {k: set(v["tested"]) for k, v in executed.items()}

    def body_ran(fn, lines: dict[str, set[int]]) -> bool:
        return bool(fn.body & lines.get(fn.path, set()))

    by_def = {(fn.path, fn.line): fn for fn in fns}
    g = index(tree, f"tr-{project.key}")
    a = g.audit(["dead", "untested", "complexity"])
    inside = pl.col("path").str.starts_with(package.rstrip("/") + "/")

    def executed_def(row: dict, lines: dict[str, set[int]]) -> bool | None:
        """Whether a definition ran: a function's own body; a class's methods' bodies (None
        for a class without methods: coverage cannot tell)."""
        if row["kind"] == "unreachable code":  # its own line
            return row["line_start"] in lines.get(row["path"], set())
        if row["kind"] in ("function", "method"):
            fn = by_def.get((row["path"], row["line_start"]))
            return None if fn is None or not fn.body else body_ran(fn, lines)
        prefix = row["qualname"] + "."
        methods = [fn for fn in fns if fn.path == row["path"] and fn.qualname.startswith(prefix)]
        return None if not methods else any(body_ran(fn, lines) for fn in methods)

    dead = a.dead.filter(inside & pl.col("kind").is_in(DEAD_KINDS))
    top = dead.filter(pl.col("confidence") == 100)
    judged = [(r, executed_def(r, ran)) for r in top.iter_rows(named=True)]
    judged = [(r, e) for r, e in judged if e is not None]
    top_ran = [r["id"] for r, e in judged if e]
    # vulture on the package, its items judged the same way: an unused argument or variable
    # by its function, unreachable code by its line
    items = in_tools(VULTURE, str(tree / package))
    vtop = [i for i in items if i[5] >= 100]

    def item_ran(item) -> bool | None:
        path = os.path.relpath(item[0], tree)
        line = item[1]
        if item[3] == "unreachable_code":
            return line in ran.get(path, set())
        holders = [fn for fn in fns if fn.path == path and fn.body
                   and fn.line <= line <= max(fn.body)]  # fmt: skip
        if not holders:
            return None
        fn = min(holders, key=lambda f: len(f.body))
        return body_ran(fn, ran)

    vjudged = [(i, item_ran(i)) for i in vtop]
    vjudged = [(i, e) for i, e in vjudged if e is not None]
    vall = [(i, item_ran(i)) for i in items]
    vall = [(i, e) for i, e in vall if e is not None]
    # untested: the functions called untested that a test ran (a line under a test's context)
    u = a.untested.filter(inside)

    def claim_ran(rows: pl.DataFrame) -> tuple[int, int, list[str]]:
        out = [(r["id"], executed_def({**r, "kind": "function"}, tested))
               for r in rows.iter_rows(named=True)]  # fmt: skip
        out = [(i, e) for i, e in out if e is not None]
        return sum(e for _, e in out), len(out), [i for i, e in out if e]

    hr, hn, high_ids = claim_ran(u.filter(pl.col("confidence") == "high"))
    ar, an, _ = claim_ran(u)
    # the same with the suite's coverage data in the index (ctxframe index --coverage): the
    # claims are measured
    import ctxframe as cf

    gc = cf.index(str(tree), store=str(c.cache_dir() / "audit-stores" / f"trc-{project.key}"),
                  progress=False, coverage=str(data))  # fmt: skip
    uc = gc.audit("untested").untested.filter(inside)
    mr, mn, _ = claim_ran(uc.filter(pl.col("confidence") == "measured"))
    # the functions of the package no test ran: what a perfect claim would list
    lib = a.complexity.filter(inside & ~pl.col("is_test"))
    not_run = sum(
        1 for r in lib.iter_rows(named=True)
        if (fn := by_def.get((r["path"], r["line_start"]))) is not None and fn.body
        and not body_ran(fn, tested)
    )  # fmt: skip
    return {
        "project": project.key,
        "dead": {
            "candidates": dead.height, "top": len(judged), "top_ran": len(top_ran),
            "top_share": _share(len(top_ran), len(judged)), "top_ran_ids": top_ran[:30],
            "classes_unjudged": top.height - len(judged),
            "vulture_top": len(vjudged), "vulture_top_ran": sum(e for _, e in vjudged),
            "vulture_top_share": _share(sum(e for _, e in vjudged), len(vjudged)),
            "vulture_all": len(vall), "vulture_all_ran": sum(e for _, e in vall),
            "vulture_all_share": _share(sum(e for _, e in vall), len(vall)),
        },
        "untested": {
            "high": hn, "high_ran": hr, "high_share": _share(hr, hn), "high_ran_ids": high_ids[:30],
            "all": an, "all_ran": ar, "all_share": _share(ar, an), "not_run": not_run,
            "measured": mn, "measured_ran": mr, "measured_share": _share(mr, mn),
        },
    }  # fmt: skip


# --------------------------------------------------------------------------- speed

SPEED = """
import json, sys, time
import ctxframe as cf
t = time.perf_counter(); g = cf.open(sys.argv[1], store=sys.argv[2]); g.audit()
first = time.perf_counter() - t
t = time.perf_counter(); g.audit(); again = time.perf_counter() - t
print(json.dumps({"first": first, "again": again}))
"""


def speed(repeat: int = 3) -> dict:
    """`cf.open` + `g.audit()` in a fresh process: once with the version's audit cache gone
    (the first audit of an index), then warm (`repeat` times, the median)."""
    tree = c.ensure_corpus(c.CORPORA["django"])
    g = index(tree, "cy-django")
    store, version_dir = g.store, g._cache_dir
    del g
    c.compile_ctxframe()
    words = Path(version_dir) / "cache" / "audit_words.arrow"
    runs = []
    for i in range(repeat + 1):
        if i == 0 and words.exists():
            words.unlink()
        proc = subprocess.run([sys.executable, "-c", SPEED, str(tree), store],
                              capture_output=True, text=True, check=False)  # fmt: skip
        if proc.returncode != 0:
            raise c.Unavailable(f"audit run failed: {proc.stderr.strip()[-300:]}")
        runs.append(json.loads(proc.stdout))
    warm = runs[1:]
    return {
        "cold": runs[0]["first"],
        "warm": statistics.median(r["first"] for r in warm),
        "again": statistics.median(r["again"] for r in warm),
        "runs": runs,
        "loadavg": os.getloadavg(),
    }


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", nargs="*", default=list(PARTS), choices=PARTS)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    parts = set(args.part)
    result: dict[str, Any] = {"machine": c.machine_info()}
    table: list[list[Any]] = []

    def row(name: str, value: Any, target: str, met: bool | None) -> None:
        table.append([name, value, target, "-" if met is None else ("met" if met else "MISSED")])

    if "complexity" in parts:
        rows, summary = complexity()
        result["complexity"] = {"corpora": rows, "languages": summary}
        print(c.format_table(
            ["corpus", "language", "functions", "equal", "share", "lizard only", "ctxframe only"],
            [[r["corpus"], r["language"], r.get("functions"), r.get("equal"),
              f"{r['share']:.1%}" if r.get("share") is not None else r.get("error", "-"),
              r.get("lizard_only"), r.get("ctxframe_only")] for r in rows],
        ))  # fmt: skip
        print()
        for lang, s in summary.items():
            row(f"complexity = lizard, {lang} ({s['functions']:,} functions)",
                f"{s['share']:.1%}" if s["share"] is not None else "-", ">= 97 %",
                s["share"] is not None and s["share"] >= TARGET_EQUAL)  # fmt: skip
    if "cycles" in parts:
        rows = cycles()
        result["cycles"] = rows
        for r in rows:
            if "error" in r:
                row(f"cycles = grimp SCCs, {r['project']}", r["error"], "equal", False)
                continue
            row(f"cycles = grimp SCCs, {r['project']}",
                f"{r['ctxframe_sccs']} vs {r['grimp_sccs']} SCCs "
                f"({r['ctxframe_in_cycles']} vs {r['grimp_in_cycles']} modules)",
                "equal", r["equal"])  # fmt: skip
    if "contracts" in parts:
        r = contracts()
        result["contracts"] = r
        row("layers contract = import-linter, django (broken layer pairs)",
            f"{len(r['ctxframe_pairs'])} vs {len(r['linter_pairs'])}", "equal",
            r["pairs_equal"])  # fmt: skip
        row("layers contract = import-linter, django (direct imports)",
            f"{r['ctxframe_direct']} vs {r['linter_direct']}", "equal", r["direct_equal"])
    if parts & {"dead", "untested"}:
        r = dead_and_untested(parts)
        result["dead_untested"] = r
        if "error" in r:
            row("dead code / untested against coverage", r["error"], "see targets", None)
        else:
            for line in r["rows"]:
                row(*line)
    if "speed" in parts:
        r = speed()
        result["speed"] = r
        row("g.audit() on Django 5.1, warm: fresh process, open + audit", f"{r['warm']:.2f} s",
            "<= 5 s", r["warm"] <= TARGET_SECONDS)  # fmt: skip
        row("g.audit() on Django 5.1, again in the same process", f"{r['again']:.2f} s",
            "<= 5 s", r["again"] <= TARGET_SECONDS)  # fmt: skip
        row("g.audit() on Django 5.1, first audit of the index (open + audit)",
            f"{r['cold']:.2f} s", "(reference)", None)  # fmt: skip
    print(c.format_table(["measure", "value", "target", ""], table))
    out = args.out or c.default_out("audit")
    c.write_json(out, {**result, "table": table})
    return 0 if all(r[3] != "MISSED" for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())

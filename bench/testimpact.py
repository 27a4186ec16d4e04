"""Which tests run this function: `change-plan`'s test files against coverage.py's per-test truth.

    python bench/testimpact.py [--projects httpx jinja2 rich click flask] [--sample 150] [--seed 39]
                               [--coverage] [--reasons] [--out FILE] [--misses N]

For each project (bench/_testruns.py: its own test suite run in a venv of its own under
coverage.py with ``dynamic_context = test_function``) the tree is indexed by ctxframe, a seeded
sample of library functions (those with a line of their own body coverage could record) is
drawn, and for each one `change-plan`'s test files are compared with the test files whose test
functions ran a line of its body:

- recall: mean over sampled functions that some test runs of |named ∩ ran| / |ran|;
- precision: mean over sampled functions with a named test file of |named ∩ ran| / |named|;
- none named: the share of functions some test runs for which `change-plan` names no test file.

The same three figures are printed for change-plan's nearest tier (`nearest_test_files`: the
test files at most one call further than the closest).

Test files the suite never runs (examples' tests outside its `testpaths`, helpers) are not
counted as named: coverage can say nothing of them.

With ``--coverage`` the same tree is indexed again with the coverage data file ingested
(``cf.index(..., coverage=PATH)``) and the tests `change-plan` lists as measured are scored the
same way. ``--misses N`` prints N missed (function, test file) pairs per project, to read why.

``--reasons`` says why each missed pair is missed: the suite is run once more with its calls
traced (bench/_calltrace.py), the shortest traced chain from the test file's code to the function
is walked, and the first of its calls the graph lacks is classified (a library calling back,
generated code, an override through ``self``, a fixture's value, a property, an implicit dunder
call, a decorator's wrapper, an AMBIGUOUS edge left out, …), or the chain is whole but longer
than `change-plan` walks.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from _common import (
    cache_dir,
    default_out,
    fmt,
    format_table,
    log,
    machine_info,
    write_json,
)
from _testruns import DEFAULT, PROJECTS, coverage_run, function_tests


def _index(tree: Path, store: Path, coverage: Path | None = None):
    import ctxframe as cf

    kw = {"coverage": str(coverage)} if coverage else {}
    return cf.index(str(tree), store=str(store), progress=False, rebuild=True, **kw)


def node_ids(g, keys: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """(path, def line) -> the function node at that place (decorated: its def line within)."""
    import polars as pl

    want = pl.DataFrame(
        {"path": [k[0] for k in keys], "line": [k[1] for k in keys]},
        schema={"path": pl.String, "line": pl.Int32},
    )
    fns = g.nodes.filter(pl.col("kind").is_in(["function", "method"])).select(
        "id", "path", "line_start", "line_end"
    )
    hit = (
        want.join(fns, on="path")
        .filter((pl.col("line") >= pl.col("line_start")) & (pl.col("line") <= pl.col("line_end")))
        .sort("line_start", descending=True)  # the innermost: the def itself, not its parent
        .unique(["path", "line"], keep="first")
    )
    return {(p, ln): i for p, ln, i in hit.select("path", "line", "id").iter_rows()}


def score(named: dict[str, set[str]], truth: dict[str, set[str]]) -> dict[str, float]:
    """The three figures (and counts) over the sampled functions."""
    ran = [k for k in truth if truth[k]]
    some = [k for k in truth if named.get(k)]
    recall = [len(named.get(k, set()) & truth[k]) / len(truth[k]) for k in ran]
    precision = [len(named[k] & truth[k]) / len(named[k]) for k in some]
    return {
        "functions": len(truth),
        "with_tests": len(ran),
        "named_some": len(some),
        "recall": 100 * statistics.mean(recall) if recall else None,
        "precision": 100 * statistics.mean(precision) if precision else None,
        "none_named": 100 * sum(not named.get(k) for k in ran) / len(ran) if ran else None,
    }


def measure(
    name: str, sample: int, seed: int, with_coverage: bool, misses: int, reasons: bool = False
) -> dict:
    p = PROJECTS[name]
    tree, data = coverage_run(name)
    truth_all = function_tests(tree, data, p.package)
    store = cache_dir() / "testruns" / p.key / "store"
    t0 = time.perf_counter()
    g = _index(tree, store)
    index_s = time.perf_counter() - t0
    ids = node_ids(g, sorted(truth_all))
    ran_files = {f for files in truth_all.values() for f in files}  # test files the suite runs
    # functions with a body line coverage can record, and a node in the graph
    pool = sorted(k for k in truth_all if k in ids)
    picked = random.Random(seed).sample(pool, min(sample, len(pool)))
    truth = {ids[k]: truth_all[k] for k in picked}
    named, nearest, times = {}, {}, []
    for i in truth:
        t1 = time.perf_counter()
        plan = g.change_plan(i)
        times.append(time.perf_counter() - t1)
        named[i] = set(plan.test_files) & ran_files
        nearest[i] = set(plan.nearest_test_files) & ran_files
    row = {"project": p.key, **score(named, truth), "index_s": index_s}
    row["nearest"] = score(nearest, truth)
    row["change_plan_ms_median"] = 1000 * statistics.median(times[1:] or times)
    row["unmatched_functions"] = len(truth_all) - len(ids)
    if misses:
        lost = [(i, f) for i in truth for f in sorted(truth[i] - named[i])]
        extra = [(i, f) for i in truth for f in sorted(named[i] - truth[i])]
        rnd = random.Random(seed)
        row["missed"] = rnd.sample(lost, min(misses, len(lost)))
        row["extra"] = rnd.sample(extra, min(misses, len(extra)))
    if reasons:
        from _reasons import classify

        row["reasons"] = classify(name, g, truth, named)
    if with_coverage:
        gc = _index(tree, cache_dir() / "testruns" / p.key / "store-cov", coverage=data)
        measured = {i: set(gc.change_plan(i).measured_test_files) for i in truth}
        row["with_coverage"] = score(measured, truth)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", nargs="+", default=list(DEFAULT), choices=list(PROJECTS))
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--coverage", action="store_true", help="also score with the data ingested")
    ap.add_argument("--misses", type=int, default=0, help="print N misses per project")
    ap.add_argument("--reasons", action="store_true", help="classify why each miss is missed")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = []
    for name in args.projects:
        log(f"{name}: measuring")
        rows.append(
            measure(name, args.sample, args.seed, args.coverage, args.misses, args.reasons)
        )
    headers = ["project", "functions", "with tests", "recall %", "precision %", "none named %",
               "change-plan ms"]  # fmt: skip
    table = [
        [r["project"], r["functions"], r["with_tests"], fmt(r["recall"], 1),
         fmt(r["precision"], 1), fmt(r["none_named"], 1), fmt(r["change_plan_ms_median"], 1)]
        for r in rows
    ]  # fmt: skip
    mean = {
        k: statistics.mean(r[k] for r in rows if r[k] is not None)
        for k in ("recall", "precision", "none_named")
    }
    table.append(["mean", "", "", fmt(mean["recall"], 1), fmt(mean["precision"], 1),
                  fmt(mean["none_named"], 1), ""])  # fmt: skip
    print(format_table(headers, table))
    print("targets: recall >= 80, precision >= 85, none named <= 10")
    near = [[r["project"], fmt(r["nearest"]["recall"], 1), fmt(r["nearest"]["precision"], 1),
             fmt(r["nearest"]["none_named"], 1)] for r in rows]  # fmt: skip
    print("\nthe nearest test files only (change-plan's first tier: at most one call further "
          "than the closest):")
    print(format_table(["project", "recall %", "precision %", "none named %"], near))
    if args.coverage:
        cov = [
            [r["project"], fmt(r["with_coverage"]["recall"], 1),
             fmt(r["with_coverage"]["precision"], 1), fmt(r["with_coverage"]["none_named"], 1)]
            for r in rows
        ]  # fmt: skip
        print("\nwith the coverage data ingested (the tests change-plan lists as measured):")
        print(format_table(["project", "recall %", "precision %", "none named %"], cov))
    if args.reasons:
        kinds = sorted({k for r in rows for k in r["reasons"]}, key=lambda k: -sum(
            r["reasons"].get(k, 0) for r in rows))
        print("\nwhy the missed (function, test file) pairs are missed (first missing call):")
        print(format_table(["reason", *(r["project"] for r in rows)],
                           [[k, *(r["reasons"].get(k, 0) for r in rows)] for k in kinds]))
    for r in rows:
        for what in ("missed", "extra"):
            for i, f in r.get(what, []):
                print(f"{r['project']} {what}: {i} <- {f}")
    out = args.out or default_out("testimpact")
    write_json(out, {"machine": machine_info(), "rows": rows, "mean": mean, "args": vars(args)})
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

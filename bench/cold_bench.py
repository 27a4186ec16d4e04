"""Cold CLI benchmark: `card`, `query` and `hook prompt` as fresh processes on Django 5.1.

Usage::

    python bench/cold_bench.py [--tree DIR] [--runs 7] [--baseline REV] [--out FILE]

Each round runs, one after the other (so they see the same load on a shared machine):
``python -c pass`` and ``python -c "import polars"`` (the floors), then
``ctxframe card QuerySet.filter``, ``ctxframe query "csrf token validation"`` and
``ctxframe hook prompt`` (a Django question on stdin), each a fresh process on the same indexed
tree, and with ``--baseline REV`` the same three commands from ``git archive REV`` (run with
the same interpreter and dependencies, its package first on ``PYTHONPATH``). It reports the
median and least wall time and the median child CPU time (user + sys) per command over
``--runs`` rounds, and checks that the baseline printed the same output. Both packages are
byte-compiled first. Targets printed (informational): card < 150 ms, query < 400 ms, hook
< 400 ms median wall. The tree defaults to ``CACHE/indexed/ctxframe-hook/django-5.1`` (indexed
by ``bench/hook_bench.py``); it is indexed first when it has no store.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

ROOT = Path(__file__).resolve().parent.parent
TARGETS_MS = {"card": 150, "query": 400, "hook": 400}
HOOK_PROMPT = "where is the queryset filter implemented"


def _run(cmd: list[str], stdin: str | None, env: dict | None) -> tuple[float, float, str, int]:
    """(wall s, child CPU s, stdout, exit code)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd="/",  # `python -m` puts the working directory first on sys.path
    )
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, proc.stdout, proc.returncode


def _commands(tree: Path) -> dict[str, tuple[list[str], str | None]]:
    cli = [sys.executable, "-m", "ctxframe"]
    return {
        "card": ([*cli, "card", "QuerySet.filter", "--repo", str(tree)], None),
        "query": ([*cli, "query", "csrf token validation", "--repo", str(tree)], None),
        "hook": ([*cli, "hook", "prompt", "--repo", str(tree)], HOOK_PROMPT),
    }


def baseline_package(rev: str, into: Path) -> Path:
    """`git archive REV` of the ctxframe package, byte-compiled, under `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "ctxframe"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "ctxframe")], check=True)
    return into


def ensure_tree(tree: Path | None) -> Path:
    if tree is None:
        tree = c.indexed_copy_dir("ctxframe-hook", c.CORPORA["django"])
        if not tree.is_dir():
            c.fresh_copy(c.ensure_corpus(c.CORPORA["django"]), tree)
    if not (tree / ".ctxframe" / "graph" / "meta.json").is_file():
        subprocess.run(
            [sys.executable, "-m", "ctxframe", "index", "--repo", str(tree), "--no-progress"],
            check=True,
        )
    return tree


def measure(tree: Path, runs: int, base: Path | None) -> dict[str, Any]:
    c.compile_ctxframe()
    cmds = _commands(tree)
    jobs: dict[str, tuple[list[str], str | None, dict | None]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], None, None),
        "python -c 'import polars'": ([sys.executable, "-c", "import polars"], None, None),
    }
    benv = None
    if base is not None:
        benv = {**os.environ, "PYTHONPATH": str(base)}
    for name, (cmd, stdin) in cmds.items():
        jobs[name] = (cmd, stdin, None)
        if base is not None:
            jobs[f"{name} (baseline)"] = (cmd, stdin, benv)
    walls: dict[str, list[float]] = {k: [] for k in jobs}
    cpus: dict[str, list[float]] = {k: [] for k in jobs}
    outs: dict[str, set[str]] = {k: set() for k in jobs}
    codes: dict[str, set[int]] = {k: set() for k in jobs}
    for cmd, stdin, env in jobs.values():  # one warm-up each (page cache, cache files)
        _run(cmd, stdin, env)
    for _ in range(runs):
        for name, (cmd, stdin, env) in jobs.items():
            wall, cpu, out, code = _run(cmd, stdin, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
            outs[name].add(out)
            codes[name].add(code)
    res: dict[str, Any] = {"runs": runs, "tree": str(tree), "load_average": os.getloadavg()[0]}
    for name in jobs:
        res[name] = {
            "median_ms": 1000 * statistics.median(walls[name]),
            "min_ms": 1000 * min(walls[name]),
            "cpu_median_ms": 1000 * statistics.median(cpus[name]),
            "exit_codes": sorted(codes[name]),
            "distinct_outputs": len(outs[name]),
        }
    if base is not None:
        res["same_output_as_baseline"] = {n: outs[n] == outs[f"{n} (baseline)"] for n in cmds}
    return res


def print_report(res: dict[str, Any]) -> None:
    names = [k for k, v in res.items() if isinstance(v, dict) and "median_ms" in v]
    rows = [
        [
            n,
            res[n]["median_ms"],
            res[n]["min_ms"],
            res[n]["cpu_median_ms"],
            ",".join(map(str, res[n]["exit_codes"])),
        ]
        for n in names
    ]
    print(f"\ncold CLI on {res['tree']} ({res['runs']} rounds)")
    print(c.format_table(["command", "median ms", "min ms", "CPU median ms", "exit"], rows))
    for name, target in TARGETS_MS.items():
        got = res[name]["median_ms"]
        verdict = "MET" if got < target else "NOT MET"
        print(f"  {name}: median {got:.0f} ms (target < {target}) {verdict}")
    if "same_output_as_baseline" in res:
        print(f"  same output as the baseline: {res['same_output_as_baseline']}")
    print(f"  load average {res['load_average']:.1f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=None, help="an indexed Django 5.1 tree")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--baseline", default=None, help="a git revision to compare with")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    tree = ensure_tree(args.tree)
    with tempfile.TemporaryDirectory(prefix="ctxframe-cold-") as tmp:
        base = baseline_package(args.baseline, Path(tmp)) if args.baseline else None
        res = measure(tree, args.runs, base)
    res["baseline"] = args.baseline
    print_report(res)
    c.write_json(args.out or c.default_out("cold"), {"machine": c.machine_info(), **res})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the Python call resolver adds to a cold index: Django 5.1 with and without it.

Usage::

    python bench/resolver_overhead.py [--tree DIR] [--rounds 2] [--out FILE]

Each round indexes the tree from scratch four times, one after the other (so the four see
the same load on a shared machine), each in a fresh process with the extraction cache off:

* ``full``: the index as shipped;
* ``no-flow``: the value flow (ctxframe._resolve.flow_edges) left out: the Python facts are
  still extracted, but no Python call or base is resolved;
* ``none``: the Python facts' extraction left out too (``Facts.run``), so the index has no
  Python call edges at all: the pipeline the resolver is added to;
* ``names``: as ``none``, but Python's calls and bases go to the name matching the other
  languages get (``resolve.BY_FLOW`` emptied): what an opt-out of the value flow would cost,
  and the edges it would give (mostly AMBIGUOUS).

The variants patch the package in the measuring process (the extraction workers are
forked from it and inherit the patch); nothing is changed on disk. Printed: the median wall
and CPU time (this process and its workers) per variant, and the resolver's share: ``full /
none`` is the growth issue 15's "Django cold index time" target bounds (<= 1.25).

With ``--pycg SECONDS``, the peer the resolver is measured against on correctness (PyCG 0.0.7,
fetched as callgraph_bench.py does) runs on the same tree too, once per ``--pycg-entry`` set of
entry modules, for at most that long each: how long a whole-program value-flow analysis of the
same code takes there, or how it fails.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

MODES = ("full", "no-flow", "none", "names")
TARGET = 1.25
# PyCG's entry modules, as globs under the tree: the whole package, and one small module
PYCG_ENTRIES = ("django/**/*.py", "django/utils/text.py")


def _patch(mode: str) -> None:
    """Leave the value flow out (``no-flow``), the Python facts too (``none``), and match
    Python's references by name instead (``names``)."""
    if mode == "full":
        return
    import polars as pl

    from ctxframe._resolve import resolve

    python = resolve._python

    def no_flow(every, defs, indexed, keep=None):  # no facts and no Python call rows reach
        return python(every.filter(pl.lit(False)), defs, indexed, keep)  # the flow

    resolve._python = no_flow
    if mode in ("none", "names"):
        from ctxframe._ingest.lang import python_facts

        python_facts.Facts.run = lambda self: None
    if mode == "names":
        resolve.BY_FLOW = []


def one(mode: str, tree: str, store: str) -> dict[str, Any]:
    """Index `tree` into the empty `store` once in this process, patched for `mode`."""
    os.environ["CTXFRAME_NO_CACHE"] = "1"
    _patch(mode)
    import ctxframe as cf

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    g = cf.index(tree, store=store, progress=False, rebuild=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(
        (b.ru_utime - a.ru_utime) + (b.ru_stime - a.ru_stime) for a, b in ((r0, r1), (k0, k1))
    )
    calls = g.edges.filter(g.edges["kind"] == "calls")
    return {
        "mode": mode,
        "wall_s": wall,
        "cpu_s": cpu,
        "nodes": g.nodes.height,
        "call_edges": calls.height,
        "resolved_calls": calls["dst"].is_not_null().sum(),
        "default_calls": calls.filter(
            calls["dst"].is_not_null() & calls["confidence"].is_in(["EXTRACTED", "INFERRED"])
        ).height,
    }


def _run_one(mode: str, tree: Path, scratch: Path) -> dict[str, Any]:
    store = scratch / f"store-{mode}"
    shutil.rmtree(store, ignore_errors=True)
    cmd = [sys.executable, __file__, "--one", mode, "--tree", str(tree), "--store", str(store)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    shutil.rmtree(store, ignore_errors=True)
    if proc.returncode != 0:
        raise c.Unavailable(f"{mode}: index failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(tree: Path, rounds: int) -> dict[str, Any]:
    """`rounds` rounds of the three variants, interleaved."""
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ctxframe-resolver-") as tmp:
        for r in range(rounds):
            for mode in MODES:
                res = _run_one(mode, tree, Path(tmp))
                c.log(f"round {r + 1} {mode}: {res['wall_s']:.2f} s")
                runs.append(res)
    summary = {}
    for mode in MODES:
        mine = [x for x in runs if x["mode"] == mode]
        summary[mode] = {
            "wall_s": statistics.median(x["wall_s"] for x in mine),
            "cpu_s": statistics.median(x["cpu_s"] for x in mine),
            "call_edges": mine[-1]["call_edges"],
            "resolved_calls": mine[-1]["resolved_calls"],
            "default_calls": mine[-1]["default_calls"],
        }
    growth = c.ratio(summary["full"]["wall_s"], summary["none"]["wall_s"])
    return {
        "tree": str(tree),
        "rounds": rounds,
        "runs": runs,
        "summary": summary,
        "growth": growth,
        "target": TARGET,
    }


def pycg_peer(tree: Path, entries: str, timeout: float) -> dict[str, Any]:
    """PyCG 0.0.7 on `tree` from the modules `entries` matches (a glob under it): its wall
    time, and "finished", "failed" (with its last line of error) or "timeout"."""
    from callgraph_bench import pycg_runner, run_pycg

    files = sorted(str(f) for f in tree.glob(entries) if f.is_file())
    if not files:
        raise c.Unavailable(f"no module under {tree} matches {entries}")
    runner = pycg_runner()
    outcome, detail = "finished", ""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ctxframe-pycg-") as tmp:
        try:
            run_pycg(runner, tree, files, Path(tmp) / "cg.json", timeout)
        except subprocess.TimeoutExpired:
            outcome, detail = "timeout", f"no call graph after {timeout:g} s"
        except RuntimeError as exc:
            outcome, detail = "failed", str(exc)
    wall = timeout if outcome == "timeout" else time.perf_counter() - t0
    return {"entries": entries, "modules": len(files), "wall_s": wall, "outcome": outcome,
            "detail": detail}  # fmt: skip


def render_peer(peers: list[dict[str, Any]]) -> str:
    rows = [[p["entries"], p["modules"], p["wall_s"], p["outcome"], p["detail"]] for p in peers]
    head = ["PyCG 0.0.7 entry modules", "modules", "wall s", "outcome", "detail"]
    return c.format_table(head, rows) + "\n"


def render(res: dict[str, Any]) -> str:
    s, none = res["summary"], res["summary"]["none"]["wall_s"]
    rows = [
        [
            mode,
            s[mode]["wall_s"],
            s[mode]["cpu_s"],
            c.ratio(s[mode]["wall_s"], none),
            s[mode]["resolved_calls"],
            s[mode]["default_calls"],
        ]
        for mode in MODES
    ]
    head = ["variant", "wall s (median)", "CPU s (median)", "x none", "resolved call edges",
            "EXTRACTED+INFERRED"]  # fmt: skip
    verdict = "met" if res["growth"] is not None and res["growth"] <= TARGET else "missed"
    return (
        c.format_table(head, rows)
        + f"\n\nfull / none = {c.fmt(res['growth'])} (target <= {TARGET}: {verdict}); "
        f"{res['rounds']} rounds interleaved, extraction cache off\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=None, help="a Django 5.1 tree")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--pycg",
        type=float,
        default=None,
        metavar="SECONDS",
        help="also run PyCG 0.0.7 on the tree, at most this long per entry set",
    )
    ap.add_argument(
        "--pycg-entry",
        action="append",
        default=None,
        metavar="GLOB",
        help=f"entry modules under the tree (repeatable; default {PYCG_ENTRIES})",
    )
    ap.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, str(args.tree), args.store)))
        return 0
    try:
        tree = args.tree or c.ensure_corpus(c.CORPORA["django"])
        c.compile_ctxframe()
        res = measure(tree.resolve(), max(1, args.rounds))
        if args.pycg:
            res["pycg"] = [
                pycg_peer(tree.resolve(), entries, args.pycg)
                for entries in args.pycg_entry or PYCG_ENTRIES
            ]
    except c.Unavailable as exc:
        print(f"resolver_overhead: {exc}", file=sys.stderr)
        return 2
    print(render(res))
    if "pycg" in res:
        print(render_peer(res["pycg"]))
    c.write_json(
        args.out or c.default_out("resolver-overhead"), {"machine": c.machine_info(), **res}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Graph verbs on an indexed Django: warm latency of card, affected (depth 5), path and hubs, and
the cold CLI time of `ctxframe card` — against the targets card < 2 ms, affected/path < 50 ms.

    python bench/verbs_bench.py [--corpus django] [--repeat 30] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

# (verb, call, target in ms or None); names are Django 5.1 symbols.
CALLS = [
    ("card", lambda g: g.card("QuerySet.filter"), 2.0),
    ("card by id", lambda g: g.card("django/db/models/query.py::QuerySet"), 2.0),
    ("card label", lambda g: g.card("get_object_or_404"), 2.0),
    ("affected d5", lambda g: g.affected("QuerySet.filter", depth=5), 50.0),
    ("affected file d5", lambda g: g.affected("django/urls/resolvers.py", depth=5), 50.0),
    ("path", lambda g: g.path("QuerySet.filter", "Query.add_q"), 50.0),
    ("path (none)", lambda g: g.path("Query.add_q", "QuerySet.filter"), 50.0),
    ("change-plan", lambda g: g.change_plan("QuerySet.filter"), None),
    ("explain", lambda g: g.explain("QuerySet.filter"), None),
    ("hubs", lambda g: g.hubs(), None),
]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="django", choices=sorted(c.CORPORA))
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--out", type=Path, default=None)
    return ap.parse_args(argv)


def warm(tree: Path, repeat: int) -> list[dict[str, Any]]:
    """Median and p95 per verb with the graph loaded and its indexes built (first call dropped)."""
    import ctxframe as cf

    g = cf.open(str(tree))
    rows = []
    for verb, call, target in CALLS:
        t0 = time.perf_counter()
        call(g)  # builds the lazy indexes this verb needs
        first_ms = (time.perf_counter() - t0) * 1000
        n = repeat if verb != "hubs" else max(3, repeat // 10)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            call(g)
            times.append((time.perf_counter() - t) * 1000)
        med = statistics.median(times)
        rows.append(
            {
                "verb": verb,
                "first_ms": first_ms,
                "median_ms": med,
                "p95_ms": c.percentile(times, 95),
                "target_ms": target,
                "meets": None if target is None else med < target,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    corpus = c.CORPORA[args.corpus]
    cli = c.check_ctxframe_cli("card")
    src = c.ensure_corpus(corpus)
    tree = c.indexed_copy_dir("ctxframe", corpus)
    if not tree.is_dir():
        c.fresh_copy(src, tree)
    c.log(f"indexing {tree}")
    run = c.run_measured([*cli, "index", "--repo", str(tree), "--json"], timeout=1800)
    if not run.ok:
        print(f"ctxframe index failed: {run.failure()}", file=sys.stderr)
        return 1
    rows = warm(tree, args.repeat)
    cold = [
        c.run_measured([*cli, "card", "QuerySet.filter", "--repo", str(tree)]) for _ in range(5)
    ]
    cold_s = statistics.median(m.wall_s for m in cold)
    print(
        c.format_table(
            ["verb", "first ms", "median ms", "p95 ms", "target ms", "meets"],
            [
                [r["verb"], r["first_ms"], r["median_ms"], r["p95_ms"], r["target_ms"], r["meets"]]
                for r in rows
            ],
        )
    )
    print(f"\ncold CLI `ctxframe card QuerySet.filter`: median {cold_s:.2f} s over 5 runs")
    out = args.out or c.default_out("verbs")
    c.write_json(
        out,
        {
            "corpus": corpus.key,
            "machine": c.machine_info(),
            "warm": rows,
            "cold_cli_card_s": cold_s,
            "cold_cli_peak_rss_mb": max(m.peak_tree_mb for m in cold),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fit a rule's evidence weights on a tuning half with ``cf.fit_rule``: the report and the time.

Usage::

    python bench/rank_fit.py [--set swe|short] [--half dev] [--metric acc@1] [--level file]
                             [--folds 5] [--params content hint_path ...] [--project django ...]
                             [--depth 1000] [--rule idf-tiers|FILE.toml] [--out DIR]

``--set swe`` (the default): the SWE-bench half's issues on the releases already indexed
(``bench/swebench_eval.py --prepare-only`` first), gold = the files the fix edited (mapped onto
each release's tree as ``swebench_eval.py`` maps them) and the functions, scored at ``--level``
(``file`` by default) with ``--metric`` (``acc@1``). ``--set short``: short_dev's half, gold = the
gold symbols' node ids (``node`` level, ``mrr``; short_dev's own scoring — a method counts for
its class — is ``bench/short_eval.py``'s: run it with ``--rules OUT/fitted.toml``).

Prints the per-fold report (the metric before and after, on the training folds and held out),
the fitted weights and the seconds spent ranking (once per question) and fitting; writes
``OUT/fitted.toml`` (loadable with ``cf.rules.load`` or ``--rules`` of the eval scripts) and
``OUT/fit.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import _splits

DEFAULT_OUT = c.RESULTS_DIR / "rank-fit"


def swe_queries(half: str, projects: list[str] | None) -> list[dict[str, Any]]:
    """The half's issues on indexed releases as query-set rows (gold mapped onto the trees)."""
    import swebench_eval as sw

    instances = sw.load_instances()
    halves = _splits.swebench_halves(instances)
    instances = _splits.pick(instances, halves, half, lambda i: i["instance_id"])
    if projects:
        instances = [i for i in instances if i["project"] in projects]
    rows = []
    for graph, inst, gold, fn_gold in sw.indexed_gold(instances):
        tree = sw.swebench_cache() / "src" / sw.release_key(inst["pypi_name"], inst["pypi_version"])
        rows.append(
            {
                "id": inst["instance_id"],
                "query": inst["problem_statement"],
                "repo": str(tree),
                "store": str(c.store_for(tree)),
                "gold_files": gold,
                "gold_functions": fn_gold,
                "tags": [inst["project"]],
            }
        )
        del graph
    return rows


def short_queries(half: str, projects: list[str] | None) -> list[dict[str, Any]]:
    """short_dev's half as query-set rows (gold symbols as node ids)."""
    import short_eval as se

    questions = se.read_jsonl(se.DATA_DIR / "questions-dev.jsonl")
    halves = _splits.short_halves(questions)
    questions = _splits.pick(questions, halves, half, lambda q: q["id"])
    rows = []
    for q in questions:
        if not q["gold_symbols"] or (projects and q["project"] not in projects):
            continue
        tree = se.ensure_tree(q["project"])
        se.ensure_graph(tree)
        rows.append(
            {
                "id": q["id"],
                "query": q["question"],
                "repo": str(tree),
                "store": str(c.store_for(tree)),
                "gold": [se.to_node_id(g) for g in q["gold_symbols"]],
                "gold_files": q["gold_files"],
                "tags": [q["category"], q["project"]],
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("swe", "short"), default="swe")
    ap.add_argument("--half", choices=_splits.CHOICES, default="dev")
    ap.add_argument("--metric", default=None, help="mrr, acc@k, recall@k, ndcg@k")
    ap.add_argument("--level", default=None, help="node, file or function")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--params", nargs="*", default=None, help="parts and intents to fit")
    ap.add_argument("--project", action="append", default=None)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--rule", default="idf-tiers", help="the base rule (a name or a TOML file)")
    ap.add_argument("--also", nargs="*", default=None, help="more metrics reported held out")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    import ctxframe as cf

    if a.half == "test":
        print("rank_fit: fitting on the held-out half is not what it is for; use --half dev")
        return 2
    t0 = time.perf_counter()
    if a.set == "swe":
        rows = swe_queries(a.half, a.project)
        metric, level = a.metric or "acc@1", a.level or "file"
    else:
        rows = short_queries(a.half, a.project)
        metric, level = a.metric or "mrr", a.level or "node"
    t_load = time.perf_counter() - t0
    if not rows:
        print("rank_fit: no question on an indexed release (swebench_eval.py --prepare-only)")
        return 1
    print(f"{a.set} {a.half}: {len(rows)} questions; {metric} at the {level} level", flush=True)
    rule = cf.fit_rule(
        None,
        rows,
        rule=a.rule,
        params=a.params,
        folds=a.folds,
        metric=metric,
        level=level,
        depth=a.depth,
        rounds=a.rounds,
        name=f"fitted-{a.set}-{a.half}",
        also=a.also if a.also is not None else (["acc@1", "acc@5"] if a.set == "swe" else []),
    )
    report = rule.report
    cells = [
        [r[k] if not isinstance(r[k], float) else c.fmt(100 * r[k], 1) for k in report.columns]
        for r in report.iter_rows(named=True)
    ]
    print(f"\n## {metric} (fitted; %) before / after, training folds and held out; more held out")
    print(c.format_table(report.columns, cells))
    print("\nweights:", dict(rule.part_weights) or "(all 1)")
    print("intents:", {k: getattr(rule, k) for k in ("test", "stub", "doc")})
    info = rule.fit_info
    total = time.perf_counter() - t0
    print(
        f"\nseconds: {t_load:.1f} loading questions, {info['seconds_collect']:.1f} ranking them "
        f"once, {info['seconds'] - info['seconds_collect']:.1f} fitting; {total:.1f} in all"
    )
    a.out.mkdir(parents=True, exist_ok=True)
    rule.save(str(a.out / "fitted.toml"))
    c.write_json(
        a.out / "fit.json",
        {
            "machine": c.machine_info(),
            "set": a.set,
            "half": a.half,
            "questions": len(rows),
            "fit": info,
            "weights": dict(rule.part_weights),
            "intents": {k: getattr(rule, k) for k in ("test", "stub", "doc")},
            "report": report.to_dicts(),
            "seconds_total": round(total, 1),
        },
    )
    print(f"wrote {a.out / 'fitted.toml'}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "2")
    sys.exit(main())

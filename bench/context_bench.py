"""Context benchmark: is the gold symbol's source inside the packed context?

Usage::

    python bench/context_bench.py [--budget 4000] [--budgets 1000 2000 4000 8000]
                                  [--questions PATH] [--out bench/results/context.json]

On the short dev set (``/work/shared/eval/short_dev/questions-dev.jsonl`` or ``--questions``:
75 engineer questions about the httpx 0.28.1, Jinja2 3.1.4 and Rich 13.9.4 sdists, each with
gold symbols), every question is packed with ``graph.context(question, budget_tokens=B)`` and
scored:

* **quoted** — the context shows a gold symbol (or, for a gold class, a member of it) with its
  source: its first line at least, as the excerpt chose to show it;
* **anywhere** — a gold symbol's first line is quoted by any block (a class's or a file's
  excerpt holding it counts);
* **whole** — the gold symbol's own block quotes its whole span (no line left out);
* **detailed** — a gold symbol is quoted in a detailed block (not only as a one-line entry of
  the compact tier, which shows the declaration's line(s) alone);
* **rank<=N** — the ranker alone: the gold symbol among the first N hits of ``graph.rank``
  (the bound any packing of the ranked hits works within).

Every figure is given for the whole set and for its two halves (``bench/_splits.py``: the
``dev`` half packing rules are tuned on, the held-out ``test`` half), per budget.

Every rendering (md, xml, json) is checked to be within its budget. The sdists are fetched into
``CACHE/short_dev/`` when missing and indexed once into ``CACHE/indexed/ctxframe-context/``.
Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import _splits

DEFAULT_QUESTIONS = Path("/work/shared/eval/short_dev/questions-dev.jsonl")
PROJECTS = (("httpx", "0.28.1"), ("jinja2", "3.1.4"), ("rich", "13.9.4"))


def ensure_short_dev() -> Path:
    """``CACHE/short_dev/src`` with the three sdists unpacked (downloaded when missing)."""
    base = c.cache_dir() / "short_dev"
    src, dl = base / "src", base / "dl"
    for name, version in PROJECTS:
        dest = src / f"{name}-{version}"
        if dest.is_dir():
            continue
        dl.mkdir(parents=True, exist_ok=True)
        src.mkdir(parents=True, exist_ok=True)
        corpus = c.Corpus(name, version, "")
        tarball = c._find_sdist(dl, corpus) or c._download_sdist(dl, corpus)
        c.log(f"extracting {tarball.name} -> {dest}")
        c.extract_archive(tarball, dest)
    return src


def open_graphs(src: Path) -> dict[str, Any]:
    """Each project indexed (incrementally) into its own bench store, opened."""
    import ctxframe as cf

    graphs = {}
    for name, version in PROJECTS:
        key = f"{name}-{version}"
        store = c.cache_dir() / "indexed" / "ctxframe-context" / key
        t0 = time.perf_counter()
        graphs[key] = cf.index(str(src / key), store=str(store), progress=False)
        c.log(f"{key}: indexed in {time.perf_counter() - t0:.1f} s -> {store}")
    return graphs


def gold_ids(q: dict) -> tuple[list[str], list[str]]:
    """(gold node ids, gold files when there is no gold symbol)."""
    ids = [s.replace(".py:", ".py::", 1) for s in q["gold_symbols"]]
    return ids, ([] if ids else list(q["gold_files"]))


def matches(node_id: str, path: str | None, gold: list[str], files: list[str]) -> bool:
    """The scoring rule of the dev set: equal ids, or a member of a gold class; a gold file
    for a question without gold symbols."""
    if any(node_id == g or node_id.startswith(g + ".") for g in gold):
        return True
    return bool(files) and path in files


def gold_lines(g: Any, gold: list[str]) -> list[tuple[str, int]]:
    """(path, first line) of each gold symbol as indexed."""
    import polars as pl

    rows = g.nodes.filter(pl.col("id").is_in(gold)).select("path", "line_start")
    return [(p, int(n)) for p, n in rows.iter_rows() if p and n is not None]


def score(ctx: Any, gold: list[str], files: list[str], where: list[tuple[str, int]]) -> dict:
    """Whether the md rendering quotes a gold symbol's source, whole or trimmed; and whether
    a gold symbol's first line is quoted by any block (a class's or a file's too)."""
    p = ctx.packed("md")
    found = detailed = None
    for s in p.shown:
        row = s.item.row
        if matches(row["id"], row.get("path"), gold, files) and s.excerpt.runs:
            found = found or s
            if not getattr(s, "compact", False):
                detailed = s
                break
    quoted_lines = {
        (s.item.row.get("path"), n)
        for s in p.shown
        for a, b in s.excerpt.ranges()
        for n in range(a, b + 1)
    }
    return {
        "quoted": found is not None,
        "anywhere": found is not None or any(w in quoted_lines for w in where),
        "whole": bool(found is not None and not found.excerpt.trimmed),
        "detailed": detailed is not None,
        "quoted_rank": found.item.row["rank"] if found else None,
        "shown": len(p.shown),
        "tokens": p.tokens,
    }


def gold_rank(g: Any, question: str, gold: list[str], files: list[str], limit: int) -> int | None:
    hits = g.rank(question, limit=limit)
    for row in hits.select("rank", "id", "path").iter_rows(named=True):
        if matches(row["id"], row["path"], gold, files):
            return int(row["rank"])
    return None


def run(questions: list[dict], graphs: dict[str, Any], budgets: list[int], main: int) -> dict:
    halves = _splits.short_halves(questions)
    per_q = []
    over = []
    t_ctx = []
    for q in questions:
        g = graphs[f"{q['project']}-{q['version']}"]
        gold, files = gold_ids(q)
        where = gold_lines(g, gold)
        row: dict[str, Any] = {
            "id": q["id"],
            "half": halves[q["id"]],
            "category": q["category"],
            "project": q["project"],
        }
        for b in budgets:
            t0 = time.perf_counter()
            ctx = g.context(q["question"], budget_tokens=b)
            sc = score(ctx, gold, files, where)
            if b == main:
                t_ctx.append(time.perf_counter() - t0)
            for fmt in ("md", "xml", "json"):
                used = ctx.counter.count(ctx.render(fmt))
                if used > b:
                    over.append({"id": q["id"], "budget": b, "format": fmt, "tokens": used})
            row[str(b)] = sc
        row["rank"] = gold_rank(g, q["question"], gold, files, 100)
        per_q.append(row)
    return {"per_question": per_q, "over_budget": over, "context_s": t_ctx}


def _share(rows: list[dict], pred) -> float:
    return sum(1 for r in rows if pred(r)) / len(rows) if rows else 0.0


def summarize(res: dict, budgets: list[int], main: int) -> dict:
    rows = res["per_question"]
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[f"cat {r['category']}"].append(r)
        groups[r["project"]].append(r)
    halves = {h: [r for r in rows if r["half"] == h] for h in _splits.HALVES}
    halves = {h: rs for h, rs in halves.items() if rs}
    groups = {"all": rows, **halves, **dict(sorted(groups.items()))}
    table = {}
    for name, rs in groups.items():
        m = str(main)
        table[name] = {
            "n": len(rs),
            "quoted": _share(rs, lambda r, m=m: r[m]["quoted"]),
            "anywhere": _share(rs, lambda r, m=m: r[m]["anywhere"]),
            "whole": _share(rs, lambda r, m=m: r[m]["whole"]),
            "detailed": _share(rs, lambda r, m=m: r[m]["detailed"]),
            "rank<=5": _share(rs, lambda r: r["rank"] is not None and r["rank"] <= 5),
            "rank<=20": _share(rs, lambda r: r["rank"] is not None and r["rank"] <= 20),
            "rank<=100": _share(rs, lambda r: r["rank"] is not None),
        }
    by_budget = {
        f"{b} {half}": {
            "budget": b,
            "half": half,
            "n": len(rs),
            "quoted": _share(rs, lambda r, b=b: r[str(b)]["quoted"]),
            "anywhere": _share(rs, lambda r, b=b: r[str(b)]["anywhere"]),
            "whole": _share(rs, lambda r, b=b: r[str(b)]["whole"]),
            "detailed": _share(rs, lambda r, b=b: r[str(b)]["detailed"]),
            "hits_shown_median": sorted(r[str(b)]["shown"] for r in rs)[len(rs) // 2],
        }
        for b in budgets
        for half, rs in (("all", rows), *halves.items())
        if rs
    }
    times = sorted(res["context_s"])
    return {
        "groups": table,
        "by_budget": by_budget,
        "over_budget": len(res["over_budget"]),
        "context_ms_median": round(1000 * times[len(times) // 2], 1) if times else None,
    }


def print_report(summary: dict, main: int) -> None:
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    rows = [
        [
            name,
            g["n"],
            pct(g["quoted"]),
            pct(g["anywhere"]),
            pct(g["whole"]),
            pct(g["detailed"]),
            pct(g["rank<=5"]),
            pct(g["rank<=20"]),
            pct(g["rank<=100"]),
        ]
        for name, g in summary["groups"].items()
    ]
    print(f"\ngold source inside a {main}-token context (md), short dev set")
    print(
        c.format_table(
            [
                "group",
                "n",
                "quoted",
                "anywhere",
                "whole",
                "detailed",
                "rank<=5",
                "rank<=20",
                "rank<=100",
            ],
            rows,
        )
    )
    rows = [
        [
            v["budget"],
            v["half"],
            v["n"],
            pct(v["quoted"]),
            pct(v["anywhere"]),
            pct(v["whole"]),
            pct(v["detailed"]),
            v["hits_shown_median"],
        ]
        for v in summary["by_budget"].values()
    ]
    print("\nby budget (tokens) and half")
    head = ["budget", "half", "n", "quoted", "anywhere", "whole", "detailed", "hits shown (median)"]
    print(c.format_table(head, rows))
    print(f"\nrenderings over budget: {summary['over_budget']} (md, xml, json at every budget)")
    print(f"context() median: {summary['context_ms_median']} ms per question (warm graph)")
    for half in ("all", *_splits.HALVES):
        if half not in summary["groups"]:
            continue
        target = summary["groups"][half]["quoted"]
        print(
            f"target ({half}): quoted >= 85% at {main} tokens -> {pct(target)}"
            f" {'MET' if target >= 0.85 else 'NOT MET'}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    ap.add_argument("--budget", type=int, default=4000, help="the budget the target is at")
    ap.add_argument("--budgets", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if not args.questions.is_file():
        c.log(f"no question set at {args.questions}")
        return 2
    budgets = sorted(set(args.budgets) | {args.budget})
    questions = [json.loads(x) for x in args.questions.read_text().splitlines() if x.strip()]
    graphs = open_graphs(ensure_short_dev())
    res = run(questions, graphs, budgets, args.budget)
    summary = summarize(res, budgets, args.budget)
    print_report(summary, args.budget)
    c.write_json(
        args.out or c.default_out("context"),
        {"machine": c.machine_info(), "budget": args.budget, "summary": summary, **res},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Rule variants side by side on the tuning halves: short_dev and SWE-bench, one pass per graph.

Usage::

    python bench/rank_tune.py --configs '{"name": "a"}' '{"name": "b", "content": 0.5}'
                              [--half dev] [--no-short] [--no-swe] [--swe-every N]
                              [--project django ...] [--base idf-tiers] [--details]

Each config is a JSON object of keyword arguments for ``cf.rules.IdfTiers`` (``name`` labels
it; ``"weights": {"title": 2.0}`` sets fields of its long-question ``EvidenceWeights``;
``"rule": "bm25-file"`` runs a registry rule instead). Every graph is opened once and every
config ranks every question of the chosen half on it with ``g.rank`` (no neighbourhoods), so
a sweep of several variants costs one pass over the corpora. Scored as ``bench/short_eval.py``
(symbol and file Acc@1/5, by category) and ``bench/swebench_eval.py`` (file Acc@1/5/10 and
function Acc@10, by project) do; only releases already indexed are used (``--prepare-only``
first). Prints one table per set; ``--details`` also each question's gold rank per config.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _splits
import short_eval as se
import swebench_eval as sw

LIMIT = 2000


def make_rule(cfg: dict[str, Any]):
    """An IdfTiers with these keyword arguments (``rule``: a registry rule by name)."""
    import ctxframe as cf

    cfg = dict(cfg)
    if "rule" in cfg:
        return cf.rules.get_rule(cfg["rule"])
    cfg.setdefault("name", "cfg")
    if isinstance(cfg.get("weights"), dict):  # EvidenceWeights fields by name
        from ctxframe._rank.evidence import EvidenceWeights

        cfg["weights"] = EvidenceWeights(**cfg["weights"])
    return cf.rules.IdfTiers(**cfg)


def short_pass(configs: list[dict], half: str, details: bool) -> list[dict]:
    """Per (question, config): symbol and file rank (short_dev's rule)."""
    questions = se.read_jsonl(se.DATA_DIR / "questions-dev.jsonl")
    halves = _splits.short_halves(questions)
    questions = _splits.pick(questions, halves, half, lambda q: q["id"])
    rules = [make_rule(cfg) for cfg in configs]
    rows = []
    for project in sorted(se.PROJECTS):
        graph = se.ensure_graph(se.ensure_tree(project))
        kinds = dict(zip(graph.nodes["id"].to_list(), graph.nodes["kind"].to_list(), strict=True))
        for q in questions:
            if q["project"] != project or not q["gold_symbols"]:
                continue
            gold = [se.to_node_id(s) for s in q["gold_symbols"]]
            gk = {g: kinds.get(g) for g in gold}
            for cfg, rule in zip(configs, rules, strict=True):
                t0 = time.perf_counter()
                hits = graph.rank(q["question"], limit=LIMIT, rule=rule)
                ms = (time.perf_counter() - t0) * 1000
                sym = hits.filter(hits["kind"].is_in(list(se.SYMBOL_KINDS)))
                ranked = se.Ranked(
                    [se.base_id(i) for i in sym["id"].to_list()],
                    sym["path"].to_list(),
                    list(dict.fromkeys(p for p in hits["path"].to_list() if p)),
                )
                r = se.score(ranked, gold, q["gold_files"], gk)
                gf = set(q["gold_files"])
                dfile = next((i for i, f in enumerate(ranked.files, 1) if f in gf), None)
                rows.append(
                    {
                        "id": q["id"],
                        "category": q["category"],
                        "project": project,
                        "config": cfg.get("name", "cfg"),
                        "sym": r["symbol_rank"],
                        "file": r["file_rank"],
                        "dfile": dfile,
                        "ms": ms,
                        "top": ranked.symbols[:3],
                    }
                )
        del graph
    return rows


def swe_pass(
    configs: list[dict], half: str, every: int, projects: list[str] | None
) -> list[dict]:
    """Per (instance, config): file ranks and function ranks of the gold."""
    instances = sw.load_instances()
    halves = _splits.swebench_halves(instances)
    instances = _splits.pick(instances, halves, half, lambda i: i["instance_id"])
    if projects:
        instances = [i for i in instances if i["project"] in projects]
    instances = instances[:: max(1, every)]
    rules = [make_rule(cfg) for cfg in configs]
    rows = []
    for graph, inst, gold, fn_gold in sw.indexed_gold(instances):
        fn_ok = bool(fn_gold)
        for cfg, rule in zip(configs, rules, strict=True):
            t0 = time.perf_counter()
            hits = graph.rank(inst["problem_statement"], limit=LIMIT, rule=rule)
            ms = (time.perf_counter() - t0) * 1000
            kinds, paths = hits["kind"].to_list(), hits["path"].to_list()
            defs = [
                i
                for i, k, p in zip(hits["id"].to_list(), kinds, paths, strict=True)
                if k not in sw.NON_DEFINITION_KINDS and p is not None
            ]
            ans = sw.Answer(sw.file_order(paths), defs)
            fr = ans.file_ranks(gold)
            row = {
                "id": inst["instance_id"],
                "project": inst["project"],
                "config": cfg.get("name", "cfg"),
                "file_all": sw.all_in_top(fr),
                "file_first": sw.first_rank(fr),
                "fn_all": sw.all_in_top(ans.fn_ranks(fn_gold)) if fn_ok else None,
                "fn_ok": fn_ok,
                "ms": ms,
                "top": list(ans.files)[:3],
                "gold": gold,
                "top_defs": defs[:3],
            }
            rows.append(row)
    return rows


def sample_pass(configs: list[dict]) -> list[dict]:
    """The repo's sample set (data-samples/queries.jsonl on the sample shop): node and file
    Acc@1/5 per config, with ``cf.evaluate`` (seed 000's and 001's behaviours live here)."""
    import shutil
    import tempfile

    import ctxframe as cf

    root = Path(__file__).resolve().parent.parent / "data-samples"
    tmp = Path(tempfile.mkdtemp(prefix="rank-tune-"))
    try:
        shutil.copytree(root / "shop", tmp / "shop")
        g = cf.index(str(tmp / "shop"), progress=False)
        rules = []
        for cfg in configs:
            rule = make_rule(cfg)
            rules.append(dataclasses_replace_name(rule, cfg.get("name", "cfg")))
        ev = cf.evaluate(g, str(root / "queries.jsonl"), rules=rules)
        out = []
        for rec in ev.summary.iter_rows(named=True):
            if rec["level"] in ("node", "file"):
                out.append(
                    {
                        "config": rec["rule"],
                        "level": rec["level"],
                        "n": rec["queries"],
                        "acc@1": round(100 * rec["acc@1"], 1),
                        "acc@5": round(100 * rec["acc@5"], 1),
                        "mrr": round(100 * rec["mrr"], 1),
                    }
                )
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def dataclasses_replace_name(rule, name: str):
    """The rule under another name (frozen dataclasses are copied)."""
    import dataclasses

    if dataclasses.is_dataclass(rule) and "name" in {f.name for f in dataclasses.fields(rule)}:
        return dataclasses.replace(rule, name=name)
    return rule


def acc(ranks: list[int | None], k: int) -> float:
    return round(100 * sum(1 for r in ranks if r is not None and r <= k) / len(ranks), 1)


def short_table(rows: list[dict]) -> list[dict]:
    out = []
    for cfg in dict.fromkeys(r["config"] for r in rows):
        sel = [r for r in rows if r["config"] == cfg]
        rec: dict[str, Any] = {"config": cfg, "n": len(sel)}
        rec["sym@1"] = acc([r["sym"] for r in sel], 1)
        rec["sym@5"] = acc([r["sym"] for r in sel], 5)
        rec["sym@20"] = acc([r["sym"] for r in sel], 20)
        rec["mrr"] = round(100 * sum(1 / r["sym"] for r in sel if r["sym"]) / len(sel), 1)
        rec["file@1"] = acc([r["file"] for r in sel], 1)
        rec["dfile@5"] = acc([r["dfile"] for r in sel], 5)
        for cat in "abcde":
            part = [r["sym"] for r in sel if r["category"] == cat]
            if part:
                rec[cat] = f"{acc(part, 1):.0f}/{acc(part, 5):.0f}"
        rec["ms"] = round(sorted(r["ms"] for r in sel)[len(sel) // 2], 1)
        out.append(rec)
    return out


def swe_table(rows: list[dict]) -> list[dict]:
    out = []
    for cfg in dict.fromkeys(r["config"] for r in rows):
        sel = [r for r in rows if r["config"] == cfg]
        fn = [r["fn_all"] for r in sel if r["fn_ok"]]
        rec: dict[str, Any] = {"config": cfg, "n": len(sel)}
        for k in (1, 5, 10):
            rec[f"file@{k}"] = acc([r["file_all"] for r in sel], k)
        rec["fn@10"] = acc(fn, 10) if fn else None
        for proj in ("django", "sympy", "sphinx"):
            part = [r["file_all"] for r in sel if r["project"] == proj]
            if part:
                rec[proj] = acc(part, 1)
        rec["ms"] = round(sorted(r["ms"] for r in sel)[len(sel) // 2], 1)
        out.append(rec)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", nargs="+", default=['{"name": "default"}'])
    ap.add_argument("--half", choices=_splits.CHOICES, default="dev")
    ap.add_argument("--no-short", action="store_true")
    ap.add_argument("--no-swe", action="store_true")
    ap.add_argument("--no-sample", action="store_true")
    ap.add_argument("--swe-every", type=int, default=1)
    ap.add_argument("--project", action="append", default=None)
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    a = ap.parse_args(argv)
    configs = [json.loads(x) for x in a.configs]
    out: dict[str, Any] = {"configs": configs, "half": a.half}
    if not a.no_sample:
        rows = sample_pass(configs)
        out["sample"] = rows
        print("\n## sample shop (data-samples/queries.jsonl): Acc@1/5, MRR")
        print(se.render(rows, False))
    if not a.no_short:
        rows = short_pass(configs, a.half, a.details)
        out["short"] = rows
        print(f"\n## short_dev ({a.half}): symbol Acc@1/5, by category Acc@1/Acc@5")
        print(se.render(short_table(rows), False))
        if a.details:
            for qid in dict.fromkeys(r["id"] for r in rows):
                ranks = [f"{r['config']}={r['sym']}" for r in rows if r["id"] == qid]
                print(qid, " ".join(ranks))
    if not a.no_swe:
        rows = swe_pass(configs, a.half, a.swe_every, a.project)
        out["swe"] = rows
        print(f"\n## SWE-bench ({a.half}): file Acc@k (all gold files), function Acc@10")
        print(se.render(swe_table(rows), False))
    if a.out:
        a.out.write_text(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "2")
    sys.exit(main())

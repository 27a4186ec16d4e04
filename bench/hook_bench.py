"""Prompt-hook benchmark: silent on prompts that are not about the code, speaking on real
questions, fast as a fresh process.

Usage::

    python bench/hook_bench.py [--runs 1] [--latency-prompts 40] [--out bench/results/hook.json]

* **silence** — both non-code prompt sets (``data-samples/prompts-noncode.jsonl`` and
  ``/work/shared/eval/short_dev/prompts-noncode-dev.jsonl``) against every repository here:
  the sample shop, httpx 0.28.1, Jinja2 3.1.4, Rich 13.9.4 and Django 5.1; a prompt is silent
  when the hook prints nothing (target >= 90 %).
* **speaking** — the 75 real questions of the short dev set, each against its own repository
  (target >= 97 %).
* **latency** — ``ctxframe hook prompt --repo DJANGO`` as a fresh process per prompt (stdin =
  the prompt), on a mix of Django questions and non-code prompts, after byte-compiling
  ctxframe (target < 400 ms median), next to two baselines measured in the same run: a bare
  ``python -c "import polars"`` (the floor any Polars tool pays) and ``ctxframe query --abstain``.
  Wall time, and the child's CPU time (user + sys), which a shared machine's load inflates
  much less.

Silence and speaking are measured in-process through the hook's own function
(``ctxframe._apps.hook.prompt_context``, what the command runs). Django is indexed once into
``CACHE/indexed/ctxframe-hook/``; the short-dev sdists come from ``bench/context_bench.py``'s
cache. Prints tables and writes JSON.
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
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import context_bench as cb

ROOT = Path(__file__).resolve().parent.parent
NONCODE_SAMPLE = ROOT / "data-samples" / "prompts-noncode.jsonl"
NONCODE_DEV = Path("/work/shared/eval/short_dev/prompts-noncode-dev.jsonl")
DJANGO_QUESTIONS = [
    "where is the queryset filter implemented",
    "csrf token validation",
    "migration autodetector rename field",
    "how are database transactions committed atomic block",
    "password hashing algorithm pbkdf2",
    "session expiry and cookie age",
    "form field validation clean method",
    "paginator page range",
    "static files storage manifest hashing",
    "email backend send messages smtp",
    "timezone aware datetime conversion",
    "prefetch related objects lookup",
    "foreign key on delete cascade collector",
    "sql compiler compile where clause",
    "request get host allowed hosts check",
    "management command argument parser",
    "template variable resolution",
    "url resolver reverse",
    "signal dispatch receivers connect",
    "cache key generation and versioning",
]


def load_prompts(path: Path) -> list[str]:
    out = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            rec = json.loads(line)
            out.append(rec.get("prompt") or rec.get("query") or rec.get("text"))
    return out


def django_tree() -> Path:
    """Django 5.1 indexed once (re-index is a no-op when nothing changed)."""
    corpus = c.CORPORA["django"]
    tree = c.indexed_copy_dir("ctxframe-hook", corpus)
    if not tree.is_dir():
        c.fresh_copy(c.ensure_corpus(corpus), tree)
    run = c.run_measured(
        [*c.ctxframe_cmd(), "index", "--repo", str(tree), "--no-progress"], timeout=3600
    )
    if not run.ok:
        raise c.Unavailable(f"ctxframe index {tree}: {run.failure()}")
    return tree


def shop_tree() -> Path:
    """A copy of the sample shop, indexed."""
    dest = c.cache_dir() / "indexed" / "ctxframe-hook" / "shop"
    if not dest.is_dir():
        shutil.copytree(ROOT / "data-samples" / "shop", dest)
    import ctxframe as cf

    cf.index(str(dest), progress=False)
    return dest


def rates(repos: dict[str, tuple[str, str | None]], noncode: dict[str, list[str]], questions):
    """Per repository and prompt set: how often the hook stays silent; per project: how often
    it speaks on the real questions."""
    from ctxframe._apps.hook import prompt_context

    def speaks(text: str, repo: str, store: str | None) -> bool:
        return prompt_context(text, repo=repo, store=store) is not None

    silence: dict[str, dict[str, Any]] = {}
    for name, (repo, store) in repos.items():
        for set_name, prompts in noncode.items():
            spoke = [p for p in prompts if speaks(p, repo, store)]
            silence.setdefault(set_name, {})[name] = {
                "n": len(prompts),
                "silent": len(prompts) - len(spoke),
                "spoke_on": spoke,
            }
    speak: dict[str, dict[str, Any]] = {}
    for q in questions:
        key = f"{q['project']}-{q['version']}"
        repo, store = repos[key]
        row = speak.setdefault(q["project"], {"n": 0, "spoke": 0, "silent_on": []})
        row["n"] += 1
        if speaks(q["question"], repo, store):
            row["spoke"] += 1
        else:
            row["silent_on"].append(q["id"])
    return silence, speak


def _run(cmd: list[str], stdin: str | None) -> tuple[float, float, bool, int]:
    """(wall s, CPU s of the child: user + sys, printed anything, exit code)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, bool(proc.stdout.strip()), proc.returncode


def _stats(walls: list[float], cpus: list[float]) -> dict[str, float]:
    return {
        "n": len(walls),
        "median_s": statistics.median(walls),
        "p90_s": c.percentile(walls, 90),
        "min_s": min(walls),
        "max_s": max(walls),
        "cpu_median_s": statistics.median(cpus),
    }


def latency(tree: Path, n: int, runs: int) -> dict[str, Any]:
    """Each prompt runs through every command in turn (the machine is shared and noisy: the
    commands see the same load, so their ratios hold)."""
    noncode = load_prompts(NONCODE_SAMPLE)
    half = max(1, n // 2)
    prompts = (DJANGO_QUESTIONS * 3)[:half] + (noncode * 3)[: n - half]
    cli = c.check_ctxframe_cli("hook")  # byte-compiles ctxframe first
    names = ("floor_import_polars", "hook", "hook_json_stdin", "query_abstain")
    walls: dict[str, list[float]] = {k: [] for k in names}
    cpus: dict[str, list[float]] = {k: [] for k in names}
    spoke = bad = 0
    for _ in range(runs):
        for p in prompts:
            cmds = {
                "floor_import_polars": ([sys.executable, "-c", "import polars"], None),
                "hook": ([*cli, "hook", "prompt", "--repo", str(tree)], p),
                "hook_json_stdin": (
                    [*cli, "hook", "prompt"],
                    json.dumps({"prompt": p, "cwd": str(tree)}),
                ),
                "query_abstain": (
                    [*cli, "query", p, "--repo", str(tree), "--abstain", "--limit", "18"],
                    None,
                ),
            }
            for name in names:
                wall, cpu, out, rc = _run(*cmds[name])
                walls[name].append(wall)
                cpus[name].append(cpu)
                if name == "hook":
                    spoke += out
                    bad += rc != 0
    res: dict[str, Any] = {"prompts": len(prompts), "runs": runs}
    res.update({k: _stats(walls[k], cpus[k]) for k in names})
    res["hook"].update(spoke=spoke, nonzero_exits=bad)
    floor = res["floor_import_polars"]["median_s"]
    res["hook_over_floor"] = c.ratio(res["hook"]["median_s"], floor)
    res["query_over_floor"] = c.ratio(res["query_abstain"]["median_s"], floor)
    res["hook_minus_floor_ms"] = 1000 * (res["hook"]["median_s"] - floor)
    return res


def print_report(silence, speak, lat) -> None:
    pct = lambda a, b: f"{100 * a / b:.1f}%" if b else "-"  # noqa: E731
    print("\nsilent on non-code prompts (hook prints nothing)")
    names = list(next(iter(silence.values())).keys())
    rows = []
    for set_name, per in silence.items():
        tot_s = sum(v["silent"] for v in per.values())
        tot_n = sum(v["n"] for v in per.values())
        rows.append(
            [set_name, *[pct(per[k]["silent"], per[k]["n"]) for k in names], pct(tot_s, tot_n)]
        )
    print(c.format_table(["prompt set", *names, "all"], rows))
    print("\nspeaks on real questions (short dev set, own repository)")
    rows = [
        [k, v["n"], pct(v["spoke"], v["n"]), ", ".join(v["silent_on"])] for k, v in speak.items()
    ]
    n = sum(v["n"] for v in speak.values())
    s = sum(v["spoke"] for v in speak.values())
    rows.append(["all", n, pct(s, n), ""])
    print(c.format_table(["project", "n", "speaks", "silent on"], rows))
    if lat:
        print(f"\nlatency on Django 5.1, fresh process per prompt ({lat['prompts']} prompts)")
        rows = [
            [
                name,
                lat[k]["median_s"] * 1000,
                lat[k]["p90_s"] * 1000,
                lat[k]["min_s"] * 1000,
                lat[k]["max_s"] * 1000,
                lat[k]["cpu_median_s"] * 1000,
            ]
            for name, k in (
                ("python -c 'import polars' (floor)", "floor_import_polars"),
                ("ctxframe hook prompt (text stdin)", "hook"),
                ("ctxframe hook prompt (JSON stdin, cwd)", "hook_json_stdin"),
                ("ctxframe query --abstain --limit 18", "query_abstain"),
            )
        ]
        print(
            c.format_table(
                ["command", "median ms", "p90 ms", "min ms", "max ms", "CPU median ms"], rows
            )
        )
        print(
            f"hook / floor = {lat['hook_over_floor']:.2f}x (hook - floor = "
            f"{lat['hook_minus_floor_ms']:.0f} ms), query / floor = "
            f"{lat['query_over_floor']:.2f}x; hook spoke on {lat['hook']['spoke']} of "
            f"{lat['hook']['n']}; non-zero exits: {lat['hook']['nonzero_exits']}"
        )
    all_sil = [v for per in silence.values() for v in per.values()]
    sil = sum(v["silent"] for v in all_sil) / sum(v["n"] for v in all_sil)
    print(
        f"\ntargets: silent >= 90% -> {100 * sil:.1f}% {'MET' if sil >= 0.9 else 'NOT MET'}; "
        f"speaks >= 97% -> {100 * s / n:.1f}% {'MET' if s / n >= 0.97 else 'NOT MET'}"
        + (
            f"; median < 400 ms -> {lat['hook']['median_s'] * 1000:.0f} ms "
            f"{'MET' if lat['hook']['median_s'] < 0.4 else 'NOT MET'}"
            f" (load average {os.getloadavg()[0]:.1f})"
            if lat
            else ""
        )
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1, help="repeat the latency prompts")
    ap.add_argument("--latency-prompts", type=int, default=40)
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--questions", type=Path, default=cb.DEFAULT_QUESTIONS)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    noncode = {"prompts-noncode (sample)": load_prompts(NONCODE_SAMPLE)}
    if NONCODE_DEV.is_file():
        noncode["prompts-noncode-dev"] = load_prompts(NONCODE_DEV)
    questions = [json.loads(x) for x in args.questions.read_text().splitlines() if x.strip()]
    src = cb.ensure_short_dev()
    cb.open_graphs(src)  # indexes the three projects into their bench stores
    repos: dict[str, tuple[str, str | None]] = {"shop": (str(shop_tree()), None)}
    for name, version in cb.PROJECTS:
        key = f"{name}-{version}"
        store = c.cache_dir() / "indexed" / "ctxframe-context" / key
        repos[key] = (str(src / key), str(store))
    tree = django_tree()
    repos["django-5.1"] = (str(tree), None)

    silence, speak = rates(repos, noncode, questions)
    lat = None if args.no_latency else latency(tree, args.latency_prompts, args.runs)
    print_report(silence, speak, lat)
    c.write_json(
        args.out or c.default_out("hook"),
        {"machine": c.machine_info(), "silence": silence, "speak": speak, "latency": lat},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

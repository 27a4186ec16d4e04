"""Ranking equality and warm query latency, for changes that must not move any result.

``python bench/rank_equal.py dump OUT.json`` ranks a fixed set of questions and writes each one's
top 20 (id, score, tier), a hash of every column of those hits, its total, a hash of the JSON
answer of ``g.query(text)`` (hits that fit the budget with their neighbours) and its abstain
decision (``g.query(text, abstain=True)``):

* short_dev's 75 questions on httpx, Jinja2 and Rich, and every non-code prompt (short_dev's
  and ``data-samples/prompts-noncode.jsonl``) on each of the three graphs;
* on Django 5.0 (the SWE-bench store): ``bench/query_bench.py``'s 50 short questions and the
  first 40 Django issue texts of ``swebench_dev.jsonl`` (by instance id);
* the first ``--per-release`` issue texts of each of a few other SWE-bench releases.

``python bench/rank_equal.py compare A.json B.json`` says whether two dumps are equal (same ids,
tiers, hashes, totals and abstain decisions in the same order; scores within ``--tol``, 1e-9).

``python bench/rank_equal.py time --baseline REV`` times warm queries on Django 5.0 for the
working tree's package (or ``--new DIR``'s) and for ``git archive REV``'s, each in its own child
process (the same interpreter and dependencies, the package first on ``PYTHONPATH``), in
interleaved rounds (base, new, new, base, ...) so both see the same load: per question the
median over its runs of wall ms (``perf_counter``) and process CPU ms (``process_time``, every
thread) of ``g.rank`` (limit 20) and ``g.query`` (limit 20), then per set (short: the 50 bench
questions; issue: the 40 Django issues) the median over rounds, and the median and p95 over
questions, and new/base ratios. JSON to ``--out``.

Stores are found as the eval scripts find them (``bench/_common.py``'s ``store_for``: set
``CTXFRAME_BENCH_STORES`` to share pre-built ones).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DJANGO = ("Django", "5.0")
N_ISSUES = 40
TOP = 20
OTHER_RELEASES = (
    ("sympy", "1.2"),
    ("matplotlib", "3.7.0"),
    ("scikit-learn", "0.22"),
    ("astropy", "5.3"),
    ("Sphinx", "4.1.0"),
    ("requests", "2.3.0"),
    ("pytest", "5.2.4"),
    ("xarray", "0.16.0"),
)


def _short_questions() -> list[str]:
    sys.path.insert(0, str(BENCH))
    from query_bench import QUERIES

    return list(QUERIES)


def _django_issues(n: int = N_ISSUES) -> list[tuple[str, str]]:
    import swebench_eval as sw

    rows = [r for r in sw.load_instances() if r["pypi_name"] == "Django"]
    rows.sort(key=lambda r: r["instance_id"])
    return [(r["instance_id"], r["problem_statement"]) for r in rows[:n]]


def _django_graph():
    import swebench_eval as sw

    return sw.ensure_graph(sw.ensure_tree(*DJANGO))


def _entry(g, text: str, abstain: bool) -> dict[str, Any]:
    hits = g.rank(text, limit=TOP)
    out: dict[str, Any] = {
        "ids": hits["id"].to_list(),
        "scores": hits["score"].to_list(),
        "tiers": hits["tier"].to_list(),
    }
    # every column of the hits, and the whole JSON answer (hits that fit, their neighbours)
    out["frame"] = hashlib.sha256(hits.write_json().encode()).hexdigest()
    ranking = g._ranking(text, limit=TOP, rule=None, within=None)
    out["total"] = int(ranking.total)
    res = g.query(text, limit=TOP)
    answer = json.dumps(res.to_dict(), sort_keys=True, default=str)
    out["answer"] = hashlib.sha256(answer.encode()).hexdigest()
    if abstain:
        res = g.query(text, abstain=True)
        out["abstained"] = res.abstained
        out["query_ids"] = res.hits["id"].to_list()
    return out


def dump(out_path: Path, per_release: int) -> int:
    import short_eval as se
    import swebench_eval as sw

    import ctxframe

    t0 = time.perf_counter()
    result: dict[str, Any] = {"ctxframe": ctxframe.__file__, "entries": {}}
    entries = result["entries"]
    questions = se.read_jsonl(se.DATA_DIR / "questions-dev.jsonl")
    prompts = [
        (p["id"], p["prompt"]) for p in se.read_jsonl(se.DATA_DIR / "prompts-noncode-dev.jsonl")
    ] + [(p["id"], p["query"]) for p in se.read_jsonl(se.NONCODE_REPO)]
    for project in sorted(se.PROJECTS):
        g = se.ensure_graph(se.ensure_tree(project))
        for q in questions:
            if q["project"] == project:
                entries[f"short_dev/{q['id']}"] = _entry(g, q["question"], True)
        for pid, text in prompts:
            entries[f"noncode/{project}/{pid}"] = _entry(g, text, True)
        c.log(f"{project}: done")
    g = _django_graph()
    for i, text in enumerate(_short_questions()):
        entries[f"django-short/{i:02d}"] = _entry(g, text, True)
    for iid, text in _django_issues():
        entries[f"django-issue/{iid}"] = _entry(g, text, True)
    c.log("django 5.0: done")
    rows = sw.load_instances()
    for name, version in OTHER_RELEASES:
        tree = sw.swebench_cache() / "src" / sw.release_key(name, version)
        if not (c.store_for(tree) / "meta.json").is_file():
            c.log(f"{name} {version}: no store, skipped")
            continue
        g = sw.ensure_graph(tree)
        insts = sorted(
            (r for r in rows if (r["pypi_name"], r["pypi_version"]) == (name, version)),
            key=lambda r: r["instance_id"],
        )
        for r in insts[:per_release]:
            entries[f"issue/{r['instance_id']}"] = _entry(g, r["problem_statement"], True)
        c.log(f"{name} {version}: done")
    result["elapsed_s"] = round(time.perf_counter() - t0, 1)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=1, sort_keys=True))
    print(f"{len(entries)} entries -> {out_path} in {result['elapsed_s']} s")
    return 0


def compare(a_path: Path, b_path: Path, tol: float) -> int:
    a = json.loads(a_path.read_text())["entries"]
    b = json.loads(b_path.read_text())["entries"]
    bad: list[str] = []
    if set(a) != set(b):
        bad.append(f"different keys: {sorted(set(a) ^ set(b))[:5]}")
    worst = 0.0
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        for f in ("ids", "tiers", "total", "abstained", "query_ids", "frame", "answer"):
            if x.get(f) != y.get(f):
                bad.append(f"{key}: {f} differs")
        if len(x["scores"]) == len(y["scores"]):
            d = max((abs(p - q) for p, q in zip(x["scores"], y["scores"], strict=True)), default=0)
            worst = max(worst, d)
            if d > tol:
                bad.append(f"{key}: score differs by {d:.3g}")
    print(f"{len(a)} entries compared; largest score difference {worst:.3g}")
    for line in bad[:30]:
        print("  " + line)
    print("EQUAL" if not bad else f"DIFFERENT ({len(bad)} differences)")
    return 0 if not bad else 1


# ------------------------------------------------------------------ timing


def _child(sets: list[str], repeat: int) -> None:
    """Time warm queries in this process and print JSON (run by ``time`` with PYTHONPATH)."""
    import ctxframe

    g = _django_graph()
    texts = {"short": _short_questions(), "issue": [t for _i, t in _django_issues()]}
    g.query("warm up the query path", limit=TOP)
    g.rank(texts["issue"][0], limit=TOP)
    out: dict[str, Any] = {"ctxframe": ctxframe.__file__}
    for name in sets:
        per: dict[str, list] = {"rank_ms": [], "rank_cpu": [], "query_ms": [], "query_cpu": []}
        for text in texts[name]:
            runs: dict[str, list[float]] = {k: [] for k in per}
            for _ in range(repeat):
                for verb, fn in (("rank", g.rank), ("query", g.query)):
                    w0, c0 = time.perf_counter(), time.process_time()
                    fn(text, limit=TOP)
                    runs[f"{verb}_cpu"].append((time.process_time() - c0) * 1000)
                    runs[f"{verb}_ms"].append((time.perf_counter() - w0) * 1000)
            for k, v in runs.items():
                per[k].append(statistics.median(v))
        out[name] = per
    print(json.dumps(out))


def _archive(rev: str, dest: Path) -> Path:
    tar = dest / "src.tar"
    with open(tar, "wb") as fh:
        subprocess.run(["git", "-C", str(REPO), "archive", rev, "ctxframe"], stdout=fh, check=True)
    with tarfile.open(tar) as tf:
        tf.extractall(dest, filter="data")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest / "ctxframe")], check=True)
    return dest


def _p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]


def timing(
    rev: str, rounds: int, repeat: int, sets: list[str], out: Path | None, new: Path | None
) -> int:
    new = (new or REPO).resolve()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(new / "ctxframe")], check=True)
    with tempfile.TemporaryDirectory(prefix="rank-equal-base-") as tmp:
        base = _archive(rev, Path(tmp))
        pkgs = {"base": base, "new": new}
        order = [("base", "new") if i % 2 == 0 else ("new", "base") for i in range(rounds)]
        got: dict[str, list[dict]] = {"base": [], "new": []}
        for r, pair in enumerate(order, 1):
            for who in pair:
                env = dict(os.environ, PYTHONPATH=str(pkgs[who]))
                cmd = [sys.executable, str(Path(__file__).resolve()), "_child", "--repeat",
                       str(repeat), "--sets", *sets]  # fmt: skip
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=BENCH)
                if proc.returncode:
                    print(proc.stderr[-3000:])
                    return 1
                data = json.loads(proc.stdout.strip().splitlines()[-1])
                if not data["ctxframe"].startswith(str(pkgs[who])):
                    print(f"{who}: imported {data['ctxframe']}, not {pkgs[who]}")
                    return 1
                got[who].append(data)
                c.log(f"round {r} {who}: done")
    summary: dict[str, Any] = {"baseline": rev, "rounds": rounds, "repeat": repeat, "sets": {}}
    print(f"\nDjango 5.0 warm, {rounds} rounds interleaved, {repeat} runs per question per round")
    print(f"{'set':6} {'metric':10} {'base med':>9} {'new med':>9} {'ratio':>6} "
          f"{'base p95':>9} {'new p95':>9}")  # fmt: skip
    for name in sets:
        summary["sets"][name] = {}
        for metric in ("rank_ms", "rank_cpu", "query_ms", "query_cpu"):
            row = {}
            for who in ("base", "new"):
                # per question: the median over rounds of its per-round medians
                per_q = list(zip(*(d[name][metric] for d in got[who]), strict=True))
                meds = [statistics.median(v) for v in per_q]
                row[who] = {"median": statistics.median(meds), "p95": _p95(meds)}
            row["ratio"] = row["new"]["median"] / row["base"]["median"]
            summary["sets"][name][metric] = row
            b, v = row["base"], row["new"]
            print(
                f"{name:6} {metric:10} {b['median']:9.1f} {v['median']:9.1f} "
                f"{row['ratio']:6.2f} {b['p95']:9.1f} {v['p95']:9.1f}"
            )
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(summary | {"raw": got}, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--per-release", type=int, default=3)
    cp = sub.add_parser("compare")
    cp.add_argument("a", type=Path)
    cp.add_argument("b", type=Path)
    cp.add_argument("--tol", type=float, default=1e-9)
    t = sub.add_parser("time")
    t.add_argument("--baseline", default="main")
    t.add_argument("--rounds", type=int, default=4)
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--sets", nargs="+", default=["short", "issue"])
    t.add_argument("--out", type=Path)
    t.add_argument("--new", type=Path, help="folder holding the package to time (default: repo)")
    ch = sub.add_parser("_child")
    ch.add_argument("--repeat", type=int, default=3)
    ch.add_argument("--sets", nargs="+", default=["short", "issue"])
    a = ap.parse_args(argv)
    if a.cmd == "dump":
        return dump(a.out, a.per_release)
    if a.cmd == "compare":
        return compare(a.a, a.b, a.tol)
    if a.cmd == "time":
        return timing(a.baseline, a.rounds, a.repeat, a.sets, a.out, a.new)
    _child(a.sets, a.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

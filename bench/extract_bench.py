"""Extraction benchmark: `extract_batch` over a whole corpus in one process, user CPU seconds.

Usage::

    python bench/extract_bench.py [--corpus django] [--repeat 3] [--ref REV] [--profile N]

Times ``ctxframe._ingest.extract.extract_batch`` over every walked file of the corpus: the
per-file work a pool worker does (read, hash, parse, query, rows, packed columns), without the
pool. Each run is a fresh child process that warms the compiled queries on a few files first.
With ``--ref REV``
the runs alternate with the ``ctxframe`` package as it was at git revision REV (exported to a
temp dir), so both sides see the same machine load; user CPU time is reported, the least of the
runs, since wall time moves with whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

REPO = Path(__file__).resolve().parent.parent

_CHILD = """
import json, resource, sys
from ctxframe._ingest import extract as _extract
from ctxframe._ingest.walk import walk
root, profile = sys.argv[1], int(sys.argv[2])
jobs = [(f[0], None) for f in walk(root, ["/.ctxframe/"]).files]
_extract.extract_batch(root, jobs[:200])
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
batch = _extract.extract_batch(root, jobs)
user = resource.getrusage(resource.RUSAGE_SELF).ru_utime - r0
if profile:
    import cProfile, pstats
    prof = root + "/.extract.prof"
    cProfile.run("_extract.extract_batch(root, jobs)", prof)
    pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(profile)
print(json.dumps({"files": len(jobs), "user": user}))
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", default="django", choices=sorted(c.CORPORA))
    ap.add_argument("--repeat", type=int, default=3, help="runs per side (least user time wins)")
    ap.add_argument("--ref", help="git revision to compare against, e.g. HEAD~1")
    ap.add_argument("--profile", type=int, default=0, help="print cProfile's top N (this side)")
    return ap.parse_args(argv)


def run_side(package_root: Path, tree: Path, profile: int = 0) -> dict:
    """One child run of extract_batch with `ctxframe` imported from `package_root`."""
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    cmd = [sys.executable, "-c", _CHILD, str(tree), str(profile)]
    # cwd: `python -c` puts the working directory first on sys.path, ahead of PYTHONPATH
    proc = subprocess.run(
        cmd, env=env, cwd=tree.parent, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise c.Unavailable(f"extract_batch failed: {last}")
    if profile:
        print(proc.stderr, file=sys.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def export_ref(rev: str, dest: Path) -> Path:
    """The `ctxframe` package as of git revision `rev`, extracted under `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "ctxframe"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per side."""
    args = parse_args(argv)
    corpus = c.CORPORA[args.corpus]
    with tempfile.TemporaryDirectory(prefix="ctxframe-extract-bench-") as tmp:
        tree = c.fresh_copy(c.ensure_corpus(corpus), Path(tmp) / corpus.key)
        sides = {"this": REPO}
        if args.ref:
            sides = {args.ref: export_ref(args.ref, Path(tmp) / "ref"), "this": REPO}
        users: dict[str, list[float]] = {name: [] for name in sides}
        files = 0
        for _ in range(args.repeat):
            for name, root in sides.items():
                out = run_side(root, tree)
                files = out["files"]
                users[name].append(out["user"])
        for name, runs in users.items():
            runs_text = " ".join(f"{u:.2f}" for u in runs)
            print(f"{corpus.key} {files} files  {name:>10}: {min(runs):.2f} s user  ({runs_text})")
        if args.ref:
            ratio = min(users[args.ref]) / min(users["this"])
            print(f"speed-up vs {args.ref}: {ratio:.2f}x")
        if args.profile:
            run_side(REPO, tree, args.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

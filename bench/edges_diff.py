"""Call edges of two resolver versions on one real project: what a change added and removed.

Usage::

    python bench/edges_diff.py --before REV [--corpus django] [--sample 10] [--seed 1] [--out FILE]
                               [--edges-out DIR]

Not part of CI. The corpus sdist (Django 5.1 by default) is fetched by package name into the
bench cache. It is indexed from scratch (``index --rebuild --no-cache``) twice, each in a child
process: with ``git archive REV``'s package first on ``PYTHONPATH`` ("before") and with this
tree's package ("after"). Both stores are then read with the public API (``g.edges``).

It prints, for EXTRACTED + INFERRED ``calls`` edges with a target:

* per version: all edges, edges by direction ("test" = a file following the test-path
  convention of ``ctxframe._core.paths``, "code" = any other), resolved call sites (caller,
  line, called name) and the sites with several targets;
* the edges only one version has (AMBIGUOUS too), by direction and confidence, and the called
  names most of them carry;
* ``--sample`` removed and added edges with their source line, drawn with ``--seed``: the
  verdict is the reader's (a resolver change is only as good as what these say).

PyCG's micro-benchmark (``callgraph_bench.py``) and ``httpx_calls.py`` score recall and
precision on labelled calls; this shows what a change does to a large project nobody labelled.
Prints tables; JSON goes to ``--out`` or ``bench/results/edges-diff-<date>.json``; with
``--edges-out DIR`` every removed and added edge goes to ``DIR/removed.parquet`` and
``DIR/added.parquet``.
"""

from __future__ import annotations

import argparse
import linecache
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
from cold_bench import baseline_package

RESOLVED = ("EXTRACTED", "INFERRED")
SITE = ["src", "line", "name", "path"]
KEY = ["src", "dst", "confidence", "line", "path", "name"]


def index_with(tree: Path, store: Path, package: Path | None) -> float:
    """Index `tree` into `store` from scratch in a child process (`package` first on the path
    when given); its wall seconds."""
    env = {**os.environ}
    if package is not None:
        env["PYTHONPATH"] = str(package)
    cmd = [sys.executable, "-m", "ctxframe", "index", "--repo", str(tree), "--store", str(store),
           "--rebuild", "--no-cache", "--no-progress"]  # fmt: skip
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, cwd="/")
    return time.perf_counter() - t0


def call_edges(tree: Path, store: Path):
    """Every `calls` edge with a target, its direction by the test-path convention."""
    import polars as pl

    import ctxframe as cf
    from ctxframe._core.paths import is_test_path_expr

    def side(path: pl.Expr) -> pl.Expr:
        return pl.when(is_test_path_expr(path)).then(pl.lit("test")).otherwise(pl.lit("code"))

    g = cf.open(str(tree), store=str(store))
    return (
        g.edges.filter((pl.col("kind") == "calls") & pl.col("dst").is_not_null())
        .select(KEY)
        .with_columns(
            direction=pl.concat_str(
                side(pl.col("path")),
                pl.lit(" -> "),
                side(pl.col("dst").str.split("::").list.first()),
            )
        )
    )


def summary(edges) -> dict[str, Any]:
    import polars as pl

    ok = edges.filter(pl.col("confidence").is_in(RESOLVED))
    sites = ok.group_by(SITE).agg(n=pl.col("dst").n_unique())
    by_dir = dict(ok.group_by("direction").len().iter_rows())
    return {
        "edges": ok.height,
        "by_direction": by_dir,
        "sites": sites.height,
        "multi_target_sites": sites.filter(pl.col("n") > 1).height,
    }


def difference(a, b) -> Any:
    """The edges of `a` that `b` does not have."""
    return a.join(b, on=KEY, how="anti", nulls_equal=True)


def samples(diff, root: Path, n: int, seed: int) -> list[dict[str, Any]]:
    rows = diff.sample(min(n, diff.height), seed=seed).sort(KEY) if diff.height else diff
    out = []
    for r in rows.iter_rows(named=True):
        line = linecache.getline(str(root / r["path"]), r["line"] or 0).strip()
        keep = {k: r[k] for k in ("src", "dst", "confidence", "direction")}
        out.append({**keep, "source": line[:100]})
    return out


def write_difference(out: Path, removed, added) -> None:
    """Every edge of the difference (`removed.parquet`, `added.parquet` in `out`), to read
    beyond the samples."""
    out.mkdir(parents=True, exist_ok=True)
    removed.write_parquet(out / "removed.parquet")
    added.write_parquet(out / "added.parquet")


def run(args: argparse.Namespace) -> dict[str, Any]:
    import polars as pl

    corpus = c.CORPORA[args.corpus]
    tree = c.ensure_corpus(corpus)
    with tempfile.TemporaryDirectory(prefix="ctxframe-edges-") as tmp:
        base = baseline_package(args.before, Path(tmp))
        c.compile_ctxframe()
        stores = {"before": Path(tmp) / "store-before", "after": Path(tmp) / "store-after"}
        seconds = {
            "before": index_with(tree, stores["before"], base),
            "after": index_with(tree, stores["after"], None),
        }
        edges = {k: call_edges(tree, s) for k, s in stores.items()}
        removed = difference(edges["before"], edges["after"])
        added = difference(edges["after"], edges["before"])
    if args.edges_out is not None:
        write_difference(args.edges_out, removed, added)
    res: dict[str, Any] = {
        "corpus": corpus.key,
        "before": args.before,
        "index_seconds": seconds,
        "versions": {k: summary(e) for k, e in edges.items()},
    }
    for name, diff in (("removed", removed), ("added", added)):
        res[name] = {
            "by_direction_confidence": [
                {"direction": d, "confidence": cf, "edges": n}
                for d, cf, n in diff.group_by("direction", "confidence")
                .len()
                .sort("len", descending=True)
                .iter_rows()
            ],
            "top_names": diff.group_by("name")
            .len()
            .sort(["len", "name"], descending=[True, False])
            .head(10)
            .rows(),
            "samples": samples(
                diff.filter(pl.col("confidence").is_in(RESOLVED)), tree, args.sample, args.seed
            ),
        }
    return res


def report(res: dict[str, Any]) -> None:
    dirs = ["code -> code", "code -> test", "test -> code", "test -> test"]
    rows = []
    for k, v in res["versions"].items():
        counts = [v["by_direction"].get(d, 0) for d in dirs]
        rows.append([k, v["edges"], *counts, v["sites"], v["multi_target_sites"],
                     f"{res['index_seconds'][k]:.1f}"])  # fmt: skip
    print(f"\nedges_diff: {res['corpus']}, before = {res['before']}, after = this tree")
    print("EXTRACTED + INFERRED calls edges with a target")
    print(c.format_table(["version", "edges", *dirs, "sites", "multi-target", "index s"], rows))
    for name in ("removed", "added"):
        part = res[name]
        print(f"\n{name}:")
        table = [[r["direction"], r["confidence"], r["edges"]]
                 for r in part["by_direction_confidence"]]  # fmt: skip
        print(c.format_table(["direction", "confidence", "edges"], table))
        names = ", ".join(f"{n} {k}" for n, k in part["top_names"])
        print(f"  most frequent called names: {names}")
        for s in part["samples"]:
            print(f"  {s['direction']:13} {s['src']} -> {s['dst']}  | {s['source']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the git revision to compare with")
    ap.add_argument("--corpus", default="django", choices=sorted(c.CORPORA))
    ap.add_argument("--sample", type=int, default=10, help="edges printed per side (default 10)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="JSON output path")
    ap.add_argument("--edges-out", type=Path, default=None,
                    help="write removed.parquet and added.parquet (every edge) to DIR")  # fmt: skip
    args = ap.parse_args(argv)
    try:
        res = run(args)
    except (c.Unavailable, subprocess.CalledProcessError) as exc:
        print(f"edges_diff: {exc}", file=sys.stderr)
        return 1
    report(res)
    out = args.out or c.default_out("edges-diff")
    c.write_json(out, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

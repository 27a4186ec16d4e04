"""The kernel scale run of ``bench/index_bench.py --kernel``: the Linux kernel (Debian
``linux-source``) indexed cold, beside ``ctags -R`` on the same tree, then warm verbs on it.

* cold: ``ctxframe index --repo TREE --store STORE --rebuild --no-cache --json`` as a fresh
  process (wall, user + sys, peak RSS of the largest process and of the whole tree);
* ``ctags -R`` on the same tree (the floor), and the ratio;
* warm, in this process after ``ctxframe.open``: ``card`` of the most-called function (median
  of 30 after 3 warm-up calls) and ``affected`` of it at depth 5 (median of 5 after one).

Targets (issue 16, informational): cold < 150 s and < 2 GB peak RSS with call resolution and
content tokens; warm card < 2 ms, affected depth 5 < 100 ms.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import _common as c

TARGETS = {"cold_max_s": 150.0, "peak_rss_max_mb": 2048.0, "card_max_ms": 2.0,
           "affected_max_ms": 100.0}  # fmt: skip


def _median_ms(fn, warm: int, runs: int) -> float:
    for _ in range(warm):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _hub(graph) -> str | None:
    """The function or method with the most resolved callers."""
    import polars as pl

    called = (
        graph.edges.lazy()
        .filter((pl.col("kind") == "calls") & pl.col("dst").is_not_null())
        .group_by("dst")
        .len()
        .join(
            graph.nodes.lazy()
            .filter(pl.col("kind").is_in(["function", "method"]))
            .select(dst="id"),
            on="dst",
        )
        .sort("len", "dst", descending=[True, False])
        .head(1)
        .collect()
    )
    return called["dst"][0] if called.height else None


def warm_verbs(tree: Path, store: Path) -> dict[str, Any]:
    """card / affected depth 5 timings on the most-called function of an indexed tree."""
    import ctxframe as cf

    t = time.perf_counter()
    graph = cf.open(str(tree), store=str(store))
    opened = time.perf_counter() - t
    hub = _hub(graph)
    if hub is None:
        return {"error": "no resolved call in the kernel graph", "open_s": opened}
    card_ms = _median_ms(lambda: graph.card(hub), warm=3, runs=30)
    affected_ms = _median_ms(lambda: graph.affected(hub, depth=5), warm=1, runs=5)
    return {"open_s": opened, "hub": hub, "card_ms": card_ms, "affected_depth5_ms": affected_ms}


def kernel_run(work: Path, timeout: float) -> dict[str, Any]:
    """Index the kernel cold, ctags it, time the warm verbs; every failure is an "error" key."""
    from languages_bench import fetch_linux

    try:
        tree = fetch_linux()
    except (c.Unavailable, OSError) as exc:
        return {"error": f"linux-source unavailable: {exc}"}
    store = work / "kernel-store"
    c.log(f"kernel: indexing {tree} (cold, --no-cache)")
    cmd = [*c.ctxframe_cmd(), "index", "--repo", str(tree), "--store", str(store), "--rebuild",
           "--no-cache", "--json", "--no-progress"]  # fmt: skip
    m = c.run_measured(cmd, timeout=timeout)
    out: dict[str, Any] = {"tree": str(tree), "index": m.to_json()}
    if not m.ok:
        out["error"] = f"ctxframe index failed: {m.failure()}"
        return out
    data = c.parse_json_output(m.stdout)
    if isinstance(data, dict):
        out.update({k: data.get(k) for k in ("files", "nodes", "edges")})
    try:
        c.ensure_ctags()
        cm = c.run_measured(["ctags", "-R", "-f", str(work / "kernel.tags"), str(tree)],
                            timeout=timeout)  # fmt: skip
        out["ctags"] = cm.to_json()
    except c.Unavailable as exc:
        out["ctags"] = {"error": str(exc)}
    c.log("kernel: warm verbs")
    out["warm"] = warm_verbs(tree, store)
    return out


def print_kernel(res: dict[str, Any]) -> None:
    """One block: the cold run beside ctags, the warm verbs, the targets."""
    print("\n== Linux kernel (linux-source), cold index and warm verbs")
    if "index" not in res:
        print(f"not measured: {res.get('error')}")
        return
    m = res["index"]
    ctags = res.get("ctags") or {}
    ratio = (m["wall_s"] / ctags["wall_s"]) if ctags.get("wall_s") else None
    print(
        f"files {res.get('files')}, nodes {res.get('nodes')}, edges {res.get('edges')}: "
        f"cold {m['wall_s']:.1f} s (CPU {m['user_s'] + m['sys_s']:.1f} s), peak RSS "
        f"{m['peak_rss_tree_sampled_mb']:.0f} MB (tree) / "
        f"{m['peak_rss_single_mb']:.0f} MB (largest process)"
    )
    if ratio is not None:
        print(f"ctags -R: {ctags['wall_s']:.1f} s; ctxframe/ctags = {ratio:.1f}x")
    warm = res.get("warm") or {}
    if "card_ms" in warm:
        print(
            f"warm (open {warm['open_s']:.1f} s), hub {warm['hub']}: "
            f"card {warm['card_ms']:.2f} ms, affected depth 5 {warm['affected_depth5_ms']:.1f} ms"
        )
    t = TARGETS
    checks = [
        ("cold < 150 s", m["wall_s"] < t["cold_max_s"]),
        ("peak RSS < 2 GB", m["peak_rss_tree_sampled_mb"] < t["peak_rss_max_mb"]),
    ]
    if "card_ms" in warm:
        checks += [
            ("card < 2 ms", warm["card_ms"] < t["card_max_ms"]),
            ("affected depth 5 < 100 ms", warm["affected_depth5_ms"] < t["affected_max_ms"]),
        ]
    print("targets: " + ", ".join(f"{n} {'met' if ok else 'missed'}" for n, ok in checks))
    if "error" in res:
        print(f"error: {res['error']}")

"""Query benchmark: warm in-process latency per ranking rule, and cold CLI latency vs. codegraph.

Usage::

    python bench/query_bench.py [--corpus django] [--out bench/results/query.json]

The corpus is fetched and indexed once into ``CACHE/indexed/ctxframe/<name>-<version>/`` and
reused later (``ctxframe index`` is re-run on it, which is a no-op when nothing changed; pass
``--reindex`` for a fresh copy). Then, in this process, ``ctxframe.open(DIR)`` loads the graph and
each of 50 hand-written queries is run ``--repeat`` times per built-in rule (``IdfTiers``,
``BM25``, ``FlatNameBonus``) after one discarded warm-up query; median and p95 are reported.
Finally one query is timed through the CLI as a fresh subprocess (``ctxframe query TEXT --repo
DIR``) next to ``codegraph query TEXT -p DIR`` on a codegraph-indexed copy of the same tree.
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

QUERIES = [
    # natural-language questions
    "where is the queryset filter implemented",
    "csrf token validation",
    "migration autodetector rename field",
    "template variable resolution",
    "url resolver reverse",
    "how are database transactions committed atomic block",
    "password hashing algorithm pbkdf2",
    "session expiry and cookie age",
    "form field validation clean method",
    "model field deconstruct for migrations",
    "admin changelist search and filters",
    "cache key generation and versioning",
    "signal dispatch receivers connect",
    "paginator page range",
    "static files storage manifest hashing",
    "email backend send messages smtp",
    "timezone aware datetime conversion",
    "translation gettext lazy activation",
    "prefetch related objects lookup",
    "foreign key on delete cascade collector",
    "select for update nowait",
    "sql compiler compile where clause",
    "http response streaming content",
    "request get host allowed hosts check",
    "auth user permission check has_perm",
    "content types generic foreign key",
    "management command argument parser",
    "async view adapter sync_to_async",
    # misspelled
    "middlewear request processing",
    "queryset annotaton aggregate",
    "templete loader cache",
    "migraton squash operations",
    # single identifiers
    "QuerySet.filter",
    "get_object_or_404",
    "reverse_lazy",
    "ModelForm",
    "CsrfViewMiddleware",
    "MigrationAutodetector",
    "Variable._resolve_lookup",
    "F expression",
    "select_related",
    "BaseDatabaseSchemaEditor",
    # test / doc / import intent
    "tests for queryset bulk_create",
    "test client login force_login",
    "docstring of the url dispatcher path converter",
    "documentation for the cache framework",
    "where is django.conf.settings imported",
    "import of django.db.models.Q",
    "test runner discover tests parallel",
    "example of a custom template tag",
]
RULE_NAMES = ("IdfTiers", "BM25", "FlatNameBonus")
TARGETS = {"warm_median_ms_idftiers": 30.0, "cold_cli_vs_codegraph_max_ratio": 1.0}
DEFAULT_CLI_QUERY = "queryset filter"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", choices=sorted(c.CORPORA), default="django")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON output (default bench/results/query-<date>.json)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs of each query per rule")
    parser.add_argument("--cli-runs", type=int, default=5, help="cold CLI runs per tool")
    parser.add_argument("--cli-query", default=DEFAULT_CLI_QUERY, help="text of the CLI query")
    parser.add_argument("--reindex", action="store_true", help="index fresh copies of the corpus")
    parser.add_argument("--no-codegraph", action="store_true", help="skip the codegraph peer")
    return parser.parse_args(argv)


# --------------------------------------------------------------------------- indexed copies


def indexed_ctxframe_copy(corpus: c.Corpus, cli: list[str], fresh: bool) -> dict[str, Any]:
    """Ensure the cached ctxframe-indexed copy exists and is up to date; measure that index.

    When catching up the kept copy fails (e.g. its store was written by an older ctxframe with
    another schema version), the copy is replaced by a fresh one and indexed from scratch.
    """
    src = c.ensure_corpus(corpus)
    tree = c.indexed_copy_dir("ctxframe", corpus)
    if fresh or not tree.is_dir():
        c.fresh_copy(src, tree)
        fresh = True
    c.log(f"{corpus.key}: ctxframe index {tree}")
    run = c.run_measured([*cli, "index", "--repo", str(tree), "--json"], timeout=1800)
    if not run.ok and not fresh:
        c.log(f"catching up the kept copy failed ({run.failure()}); indexing a fresh copy")
        c.fresh_copy(src, tree)
        run = c.run_measured([*cli, "index", "--repo", str(tree), "--json"], timeout=1800)
    if not run.ok:
        raise c.Unavailable(f"ctxframe index {tree} {run.failure()}")
    return {"dir": str(tree), "index": run.to_json(), "counts": c.ctxframe_counts(run.stdout, tree)}


def indexed_codegraph_copy(corpus: c.Corpus, binary: Path, fresh: bool) -> dict[str, Any]:
    """Ensure the cached codegraph-indexed copy exists (``codegraph init -y`` once)."""
    tree = c.indexed_copy_dir("codegraph", corpus)
    info: dict[str, Any] = {"dir": str(tree)}
    if fresh or not (tree / ".codegraph" / "codegraph.db").is_file():
        c.fresh_copy(c.ensure_corpus(corpus), tree)
        c.log(f"{corpus.key}: codegraph init -y {tree}")
        run = c.run_measured(
            [str(binary), "init", "-y", str(tree)], env=c.CODEGRAPH_ENV, timeout=600
        )
        info["init"] = run.to_json()
        if not run.ok:
            raise c.Unavailable(f"codegraph init {run.failure()}")
    info["counts"] = c.codegraph_status(binary, tree)
    return info


# --------------------------------------------------------------------------- warm, in-process


def load_rules() -> dict[str, Any]:
    """Instantiate the built-in rules; a missing one maps to an ``'unavailable: ...'`` string."""
    try:
        from ctxframe import rules
    except ImportError as exc:
        raise c.Unavailable(f"cannot import ctxframe.rules: {exc}") from exc
    found: dict[str, Any] = {}
    for name in RULE_NAMES:
        factory = getattr(rules, name, None)
        found[name] = factory() if factory else f"unavailable: ctxframe.rules has no {name}"
    return found


def open_graph(tree: Path) -> tuple[Any, float]:
    """``ctxframe.open(tree)``; returns the graph and the load time in seconds."""
    try:
        import ctxframe as cf
    except ImportError as exc:
        raise c.Unavailable(f"cannot import ctxframe: {exc}") from exc
    if not hasattr(cf, "open"):
        raise c.Unavailable("ctxframe has no open()")
    start = time.perf_counter()
    graph = cf.open(tree)
    return graph, time.perf_counter() - start


def describe_hits(result: Any, limit: int = 3) -> dict[str, Any]:
    """Hit counts and the first few hits of a query result, whatever its type.

    Understands a result with a ``hits`` DataFrame and a ``total`` (ctxframe's QueryResult),
    a bare DataFrame, or a list.
    """
    frame = getattr(result, "hits", result)
    info: dict[str, Any] = {"type": type(result).__name__, "total": getattr(result, "total", None)}
    try:
        info["count"] = len(frame)
    except TypeError:
        info["count"] = None
    if hasattr(frame, "head") and hasattr(frame, "to_dicts"):
        keep = ("id", "kind", "score", "tier")
        info["top"] = [{k: r[k] for k in keep if k in r} for r in frame.head(limit).to_dicts()]
    elif isinstance(frame, list | tuple):
        info["top"] = [str(r)[:200] for r in frame[:limit]]
    return info


def time_rule(graph: Any, rule: Any, repeat: int) -> dict[str, Any]:
    """Warm latency of every query under one rule (first call discarded as warm-up)."""
    start = time.perf_counter()
    graph.query(QUERIES[0], rule=rule)
    warmup_ms = (time.perf_counter() - start) * 1000
    samples: list[float] = []
    per_query: list[dict[str, Any]] = []
    for text in QUERIES:
        runs = []
        result = None
        for _ in range(repeat):
            start = time.perf_counter()
            result = graph.query(text, rule=rule)
            runs.append((time.perf_counter() - start) * 1000)
        samples.extend(runs)
        per_query.append(
            {"query": text, "median_ms": round(statistics.median(runs), 3), **describe_hits(result)}
        )
    return {
        "warmup_ms": warmup_ms,
        "runs": len(samples),
        "median_ms": statistics.median(samples),
        "p95_ms": c.percentile(samples, 95),
        "max_ms": max(samples),
        "per_query": per_query,
    }


def warm_bench(tree: Path, repeat: int) -> dict[str, Any]:
    """Load the graph once and time every rule; errors are recorded per rule."""
    graph, load_s = open_graph(tree)
    result: dict[str, Any] = {"open_s": load_s, "rules": {}}
    for name, rule in load_rules().items():
        if isinstance(rule, str):
            result["rules"][name] = rule
            continue
        c.log(f"warm queries: {name}")
        try:
            result["rules"][name] = time_rule(graph, rule, repeat)
        except Exception as exc:  # report it and go on with the next rule
            result["rules"][name] = f"error: {type(exc).__name__}: {exc}"
    return result


# --------------------------------------------------------------------------- cold CLI


def time_cli(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a CLI query ``runs`` times as fresh subprocesses; median wall time and peak RSS."""
    measured = [c.run_measured(cmd, env=env, timeout=300) for _ in range(runs)]
    bad = [m for m in measured if not m.ok]
    if bad:
        return {"error": bad[0].failure(), "cmd": cmd}
    walls = [m.wall_s for m in measured]
    return {
        "cmd": cmd,
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "max_s": max(walls),
        "peak_rss_tree_mb": max(m.peak_tree_mb for m in measured),
        "output_head": c.strip_ansi(measured[-1].stdout)[:600],
    }


def cold_bench(args: argparse.Namespace, corpus: c.Corpus, cf_tree: Path | None) -> dict[str, Any]:
    """Cold CLI latency of one query: ctxframe vs. codegraph."""
    out: dict[str, Any] = {"query": args.cli_query}
    if cf_tree is None:
        out["ctxframe"] = "unavailable: no indexed ctxframe copy"
    else:
        try:
            cli = c.check_ctxframe_cli("query")
            c.log("cold CLI: ctxframe query")
            out["ctxframe"] = time_cli(
                [*cli, "query", args.cli_query, "--repo", str(cf_tree)], args.cli_runs
            )
        except c.Unavailable as exc:
            out["ctxframe"] = f"unavailable: {exc}"
    if args.no_codegraph:
        out["codegraph"] = "unavailable: skipped (--no-codegraph)"
        return out
    try:
        binary, version = c.ensure_codegraph()
        copy = indexed_codegraph_copy(corpus, binary, args.reindex)
        c.log("cold CLI: codegraph query")
        cmd = [str(binary), "query", args.cli_query, "-p", copy["dir"]]
        out["codegraph"] = {
            "version": version,
            "copy": copy,
            **time_cli(cmd, args.cli_runs, c.CODEGRAPH_ENV),
        }
    except c.Unavailable as exc:
        out["codegraph"] = f"unavailable: {exc}"
    return out


# --------------------------------------------------------------------------- report


def _rule_row(name: str, res: dict[str, Any] | str) -> list[Any]:
    """One row of the warm table."""
    if isinstance(res, str):
        return [name, None, None, None, None, res]
    note = f"warm-up query {res['warmup_ms']:.0f} ms"
    return [name, res["runs"], res["median_ms"], res["p95_ms"], res["max_ms"], note]


def _cli_row(tool: str, res: dict[str, Any] | str | None) -> list[Any]:
    """One row of the cold CLI table."""
    if isinstance(res, dict) and "error" not in res:
        return [tool, res["median_s"], res["min_s"], res["max_s"], res["peak_rss_tree_mb"], ""]
    note = res.get("error") if isinstance(res, dict) else res or "not run"
    return [tool, None, None, None, None, note]


def print_report(warm: dict[str, Any] | str, cold: dict[str, Any]) -> None:
    """Tables of warm latency per rule and cold CLI latency, with the targets."""
    print(f"warm in-process latency ({len(QUERIES)} queries):")
    if isinstance(warm, str):
        print(f"  {warm}")
    else:
        rows = [_rule_row(name, warm["rules"].get(name, "not run")) for name in RULE_NAMES]
        print(c.format_table(["rule", "runs", "median ms", "p95 ms", "max ms", "note"], rows))
        print(f"  graph load (ctxframe.open): {warm['open_s']:.3f} s")
    print(f'\ncold CLI latency, query "{cold["query"]}":')
    cli_rows = [_cli_row(tool, cold.get(tool)) for tool in ("ctxframe", "codegraph")]
    print(c.format_table(["tool", "median s", "min s", "max s", "peak RSS MB", "note"], cli_rows))
    print("targets (informational):")
    for line in target_lines(warm, cold):
        print(f"  {line}")


def target_lines(warm: dict[str, Any] | str, cold: dict[str, Any]) -> list[str]:
    """The two target checks as text."""
    idf = warm.get("rules", {}).get("IdfTiers") if isinstance(warm, dict) else None
    med = idf.get("median_ms") if isinstance(idf, dict) else None
    limit = TARGETS["warm_median_ms_idftiers"]
    verdict = "n/a" if med is None else ("ok" if med < limit else "MISS")
    cf_s = (
        cold.get("ctxframe", {}).get("median_s") if isinstance(cold.get("ctxframe"), dict) else None
    )
    cg = cold.get("codegraph")
    cg_s = cg.get("median_s") if isinstance(cg, dict) else None
    ratio = c.ratio(cf_s, cg_s)
    cli_verdict = "n/a" if ratio is None else ("ok" if ratio <= 1.0 else "MISS")
    return [
        f"IdfTiers warm median {c.fmt(med, 2)} ms (target < {limit:g} ms) {verdict}",
        f"cold CLI ctxframe/codegraph {c.fmt(ratio, 2)} (target <= 1.0) {cli_verdict}",
    ]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 1 when ctxframe could not be measured."""
    args = parse_args(argv)
    corpus = c.CORPORA[args.corpus]
    result: dict[str, Any] = {"corpus": corpus.key, "queries": QUERIES, "repeat": args.repeat}
    cf_tree = None
    try:
        cli = c.check_ctxframe_cli("index")
        result["ctxframe_copy"] = indexed_ctxframe_copy(corpus, cli, args.reindex)
        cf_tree = Path(result["ctxframe_copy"]["dir"])
        result["warm"] = warm_bench(cf_tree, args.repeat)
    except c.Unavailable as exc:
        print(f"ctxframe unavailable: {exc}", file=sys.stderr)
        result["warm"] = f"unavailable: {exc}"
    result["cold_cli"] = cold_bench(args, corpus, cf_tree)
    print_report(result["warm"], result["cold_cli"])
    result["machine"] = c.machine_info()
    result["targets"] = TARGETS
    c.write_json(args.out or c.default_out("query"), result)
    warm, cold_cf = result["warm"], result["cold_cli"].get("ctxframe")
    ok = (
        isinstance(warm, dict)
        and all(isinstance(r, dict) for r in warm["rules"].values())
        and isinstance(cold_cf, dict)
        and "error" not in cold_cf
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""The `ctxframe` command: a thin layer over the library; errors become one line and exit 2."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from ctxframe._render.budget import DEFAULT_BUDGET_TOKENS


def _add_repo(p: argparse.ArgumentParser, *, positional: bool = False) -> None:
    """`--repo PATH`, `--store DIR`, `--json`: the same on every command. `positional` keeps the
    old `COMMAND PATH` form working (deprecated, hidden from help)."""
    p.add_argument("--repo", default=None, help="repository root (default: current directory)")
    p.add_argument("--store", default=None, help="store directory (default: REPO/.ctxframe/graph)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    if positional:
        p.add_argument("old_path", nargs="?", default=None, help=argparse.SUPPRESS)


# the ranking rules' registry (ctxframe._rank.rules.RULES; a test keeps the two equal)
_RULE_NAMES = (
    "idf-tiers (default), bm25, flat-name-bonus, bm25-file, bm25-file-src, bm25-symbol, "
    "bm25-symbol-src"
)
_AMBIGUOUS_HELP = "also follow AMBIGUOUS edges (2-8 same-named candidates; left out by default)"


def _tokens(text: str) -> int:
    """A `--budget`: a whole number of tokens, at least 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 token, not {n}")
    return n


def _port(text: str) -> int:
    """A `--port`: 0 (pick a free one) to 65535."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"{n} is not a port: give 1-65535, or 0 for a free one")
    return n


def _add_budget(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--budget",
        type=_tokens,
        default=None,
        metavar="N",
        help=f"text output budget in tokens (default {DEFAULT_BUDGET_TOKENS})",
    )


def _parser() -> argparse.ArgumentParser:
    from ctxframe._core.version import __version__

    ap = argparse.ArgumentParser(
        prog="ctxframe", description="A repository as a code graph you can question."
    )
    ap.add_argument("--version", action="version", version=f"ctxframe {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("index", help="index a repository (incremental)")
    _add_repo(p, positional=True)
    p.add_argument("--rebuild", action="store_true", help="ignore the old store, index everything")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument(
        "--dial", action="store_true", help="read the databases and buckets env vars point at"
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="fail at once when another index is writing the store (default: wait for it)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="parse every file, neither reading nor adding to the extraction cache "
        "(`ctxframe cache info`)",
    )
    p.add_argument(
        "--coverage",
        metavar="PATH",
        default=None,
        help="coverage data to read into `covers` edges (coverage.py's data file, Cobertura "
        "XML or LCOV; default: .coverage, coverage.xml or lcov.info at the root)",
    )
    p.add_argument(
        "--no-coverage", action="store_true", help="read no coverage data, even one at the root"
    )

    p.add_argument(
        "--no-history", action="store_true", help="do not read the git history (config: "
        "[history] enabled = false)",
    )
    p.add_argument(
        "--anonymize", action="store_true",
        help="store keyed hashes instead of author names and emails ([history] anonymize)",
    )

    p = sub.add_parser("status", help="is the index fresh against git HEAD and the work tree?")
    _add_repo(p, positional=True)

    p = sub.add_parser("export", help="write the tables as one file each (parquet, csv, ndjson)")
    p.add_argument("directory", help="where to write nodes.<format>, edges.<format>, ...")
    p.add_argument("--format", default="parquet", help="parquet (default), csv or ndjson")
    _add_repo(p)

    p = sub.add_parser(
        "query",
        help="rank the graph's nodes for a question in words",
        epilog='a question that starts with "-" goes after "--": ctxframe query -- "--limit=5"',
    )
    p.add_argument("text", help="the question")
    _add_repo(p)
    _add_budget(p)
    p.add_argument("--limit", type=int, default=20, help="hits to rank (default 20)")
    p.add_argument(
        "--rule",
        default=None,
        help=f"ranking rule: {_RULE_NAMES}",
    )
    p.add_argument("--within", default=None, help="only nodes whose path matches this glob")
    p.add_argument(
        "--kind",
        action="append",
        default=None,
        help="only nodes of this kind (repeat, or comma-separated: --kind function,method,class)",
    )
    p.add_argument("--include-ambiguous", action="store_true", help=_AMBIGUOUS_HELP)
    p.add_argument(
        "--abstain", action="store_true", help='say "no structural match" instead of weak hits'
    )
    p.add_argument(
        "--explain", action="store_true", help="why each hit ranks where it does (its evidence)"
    )

    p = sub.add_parser("eval", help="score ranking rules on a labelled query set (JSONL)")
    p.add_argument("queries", help="query set (JSONL, see docs/ranking.md)")
    p.add_argument(
        "--rule",
        action="append",
        default=None,
        help=f"rule to score (repeat; default: idf-tiers): {_RULE_NAMES}, or package.module:Name",
    )
    p.add_argument(
        "--repo", default=None, help="repository for every question (default: each question's)"
    )
    p.add_argument("--store", default=None, help="store directory for every question")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--k", type=int, nargs="+", default=[1, 5, 10], help="cut-offs (default 1 5 10)")
    p.add_argument("--limit", type=int, default=500, help="hits ranked per query (default 500)")
    p.add_argument("--out", default=None, help="write per_query/summary/compare Parquet here")

    p = sub.add_parser("card", help="a known symbol: place, signature, callers, callees")
    p.add_argument("name", help="id, qualified name (Class.method) or label")
    _add_repo(p)
    _add_budget(p)
    p.add_argument("--include-ambiguous", action="store_true", help=_AMBIGUOUS_HELP)

    p = sub.add_parser("affected", help="blast radius of a symbol or file")
    p.add_argument("name", help="symbol name or repo-relative file path")
    _add_repo(p)
    _add_budget(p)
    p.add_argument("--depth", type=int, default=3, help="hops to follow (default 3)")
    p.add_argument("--include-ambiguous", action="store_true", help=_AMBIGUOUS_HELP)

    p = sub.add_parser("path", help="shortest paths from symbol A to symbol B")
    p.add_argument("a")
    p.add_argument("b")
    _add_repo(p)
    _add_budget(p)
    p.add_argument(
        "--undirected", action="store_true", help="follow edges both ways (default: A to B)"
    )
    p.add_argument("--include-ambiguous", action="store_true", help=_AMBIGUOUS_HELP)

    p = sub.add_parser("change-plan", help="what to check before editing a symbol")
    p.add_argument("name")
    _add_repo(p)
    _add_budget(p)
    p.add_argument("--depth", type=int, default=2, help="hops of the blast radius (default 2)")
    p.add_argument("--include-ambiguous", action="store_true", help=_AMBIGUOUS_HELP)

    p = sub.add_parser("explain", help="a plain-language paragraph about a symbol or file")
    p.add_argument("name", help="symbol name or repo-relative file path")
    _add_repo(p)
    _add_budget(p)
    p.add_argument("--include-ambiguous", action="store_true", help=_AMBIGUOUS_HELP)

    p = sub.add_parser("hubs", help="orientation: hubs, largest files, entry points, dirs")
    _add_repo(p)
    _add_budget(p)
    p.add_argument("--limit", type=int, default=10, help="rows per table (default 10)")
    p.add_argument("--top", type=int, dest="limit", help=argparse.SUPPRESS)  # its old name

    p = sub.add_parser("boundaries", help="what the code consumes and provides")
    p.add_argument("name", nargs="?", default=None, help="a symbol or file (default: all)")
    _add_repo(p)
    _add_budget(p)

    p = sub.add_parser(
        "audit", help="architecture, cycles, complexity, dead and untested code, risk"
    )
    _add_repo(p)
    _add_budget(p)
    p.add_argument("--html", default=None, metavar="FILE", help="write the report page here")
    p.add_argument("--md", default=None, metavar="FILE", help="write the Markdown report here")
    p.add_argument(
        "--section",
        action="append",
        default=None,
        help="only this section (repeat): architecture, cycles, contracts, complexity, dead, "
        "untested, risk, boundaries",
    )
    p.add_argument("--limit", type=int, default=100, help="rows per table in --json (default 100)")

    p = sub.add_parser("adapters", help="the programs in .ctxframe/adapters/")
    asub = p.add_subparsers(dest="adapters_command", required=True, metavar="ACTION")
    c = asub.add_parser("check", help="run and validate every adapter without indexing")
    _add_repo(c, positional=True)

    p = sub.add_parser("serve", help="a local read-only explore page (127.0.0.1)")
    p.add_argument("--repo", default=None, help="repository root (default: current directory)")
    p.add_argument("--store", default=None, help="store directory (default: REPO/.ctxframe/graph)")
    p.add_argument("old_path", nargs="?", default=None, help=argparse.SUPPRESS)
    p.add_argument("--port", type=_port, default=8765, help="port (default: 8765; 0 picks one)")
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, loopback only)"
    )
    p.add_argument("--verbose", action="store_true", help="log every request")

    _history_parser(sub)
    p = sub.add_parser("demo", help="index the bundled sample shop and ask it a question")
    p.add_argument("--keep", default=None, help="copy the sample here (kept) instead of a temp dir")
    _agent_parsers(sub)
    _catalog_parsers(sub)
    _watch_parser(sub)
    p = sub.add_parser(
        "cache",
        help="the extraction cache shared by every index (info, clear)",
        description="What extraction made of each file's bytes, shared by every index on this "
        "machine: another checkout, branch or release re-parses only the files that differ. "
        "In $XDG_CACHE_HOME/ctxframe/extract or ~/.cache/ctxframe/extract (CTXFRAME_CACHE_DIR "
        "moves it), capped at 2048 MB (CTXFRAME_CACHE_MAX_MB), least recently used first out; "
        "`index --no-cache` or CTXFRAME_NO_CACHE=1 leaves it alone.",
    )
    csub = p.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    for name, text in (("info", "where it is, its size, packs and entries"),
                       ("clear", "delete every entry (indexes are untouched)")):  # fmt: skip
        c = csub.add_parser(name, help=text)
        c.add_argument("--json", action="store_true", help="print JSON instead of text")
    return ap


_HISTORY_SECTIONS = ("summary", "hotspots", "coupling", "hidden-coupling", "ownership",
                     "islands", "age", "timeline", "functions", "commits")  # fmt: skip


def _history_parser(sub) -> None:
    """`history`: the git history's analyses (hotspots, coupling, ownership, age)."""
    p = sub.add_parser(
        "history", help="hotspots, change coupling, hidden coupling, ownership, age (git)",
        description="The git history `index` read into the store: hotspots (revisions x "
        "complexity), change coupling (code-maat's), hidden coupling (coupled files with no "
        "path in the graph), ownership, age, a timeline per package.",
    )  # fmt: skip
    p.add_argument("section", nargs="?", default="summary", choices=_HISTORY_SECTIONS,
                   help="what to show (default: summary)")  # fmt: skip
    _add_repo(p)
    _add_budget(p)
    p.add_argument("--limit", type=int, default=20, help="rows (default 20; summary 5)")
    p.add_argument("--level", default=None,
                   help="file (default), package (coupling, ownership) or function "
                   "(hotspots, age)")  # fmt: skip
    p.add_argument("--since", default=None, help="only changes since: a date or 1y, 6mo, 90d")
    p.add_argument("--path", default=None, help="the file (functions; age --level function)")
    p.add_argument("--hops", type=int, default=3, help="hidden coupling: path length (3)")
    p.add_argument("--every", default="1mo", help="timeline period: 1mo (default), 1q, 1y")
    for name, kind, text in (("max-changeset", int, "ignore commits of more files (30)"),
                             ("min-revs", int, "minimum average revisions (5)"),
                             ("min-shared", int, "minimum shared revisions (5)"),
                             ("min-degree", float, "minimum degree in percent (30)")):
        p.add_argument(f"--{name}", type=kind, default=None, help=f"coupling: {text}")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="also save the picture (.png, .svg): hotspots, coupling, timeline")


def _cmd_history(a) -> int:
    from ctxframe._core.errors import BadInput

    g = _open(a)
    sec = a.section
    thresholds = {k: v for k, v in (("max_changeset", a.max_changeset),
                                    ("min_revs", a.min_revs), ("min_shared", a.min_shared),
                                    ("min_degree", a.min_degree)) if v is not None}  # fmt: skip
    level = a.level or "file"
    if not hasattr(g, "hotspots"):
        raise BadInput("a catalog has no history of its own: ask each repository")
    if sec == "summary":
        res = g.history(limit=a.limit if a.limit != 20 else 5, hops=a.hops)
    elif sec == "hotspots":
        res = g.hotspots(level=level, limit=a.limit, since=a.since)
    elif sec == "coupling":
        res = g.coupling(level=level, limit=a.limit, since=a.since, **thresholds)
    elif sec == "hidden-coupling":
        res = g.hidden_coupling(hops=a.hops, limit=a.limit, since=a.since, **thresholds)
    elif sec in ("ownership", "islands"):
        res = g.ownership(level=level, limit=a.limit, since=a.since, islands=sec == "islands")
    elif sec == "age":
        res = g.age(level=level, path=a.path, limit=a.limit)
    elif sec == "timeline":
        res = g.timeline(every=a.every, since=a.since, limit=a.limit)
    elif sec == "functions":
        if not a.path:
            raise BadInput("history functions needs --path FILE (a file of the index)")
        res = g.function_history(a.path, limit=a.limit)
    else:
        res = g.history_commits(limit=a.limit)
    if a.plot and getattr(res, "ok", False) and hasattr(res, "plot"):
        chart = res.plot()
        if chart is None:
            raise BadInput(f"history {sec} has no picture: --plot works with hotspots, "
                           "coupling, hidden-coupling and timeline")  # fmt: skip
        chart.save(a.plot)
        print(f"wrote {a.plot}", file=sys.stderr)
    _emit(res, a.json, a.budget)
    return 0 if res.ok else 1


def _catalog_parsers(sub) -> None:
    """`catalog add|remove|list|index`: many repositories as one graph (docs/catalog.md). The
    verbs open a catalog given as `--repo DIR`."""
    p = sub.add_parser("catalog", help="many repositories as one graph (add, index, list)")
    csub = p.add_subparsers(dest="catalog_command", required=True, metavar="ACTION")

    def common(c: argparse.ArgumentParser) -> None:
        c.add_argument(
            "--catalog",
            "--repo",
            dest="catalog",
            default=".",
            metavar="DIR",
            help="catalog directory (default: .); --repo is the same, as the verbs take it",
        )
        c.add_argument("--json", action="store_true", help="print JSON instead of text")

    c = csub.add_parser("add", help="add repositories to the catalog")
    c.add_argument("paths", nargs="+", metavar="PATH", help="repository roots")
    c.add_argument("--name", default=None, help="the repository's name (default: its directory's)")
    c.add_argument(
        "--store", default=None, help="where its store goes: a directory or an fsspec URL"
    )
    common(c)
    c = csub.add_parser("remove", help="drop a repository from the catalog")
    c.add_argument("name")
    common(c)
    c = csub.add_parser("list", help="the repositories and what their last index did")
    common(c)
    c = csub.add_parser("index", help="index every repository, then the links and the graph")
    c.add_argument("only", nargs="*", metavar="NAME", help="only these repositories (default: all)")
    c.add_argument("--jobs", type=int, default=1, help="repositories at once (default 1)")
    c.add_argument(
        "--executor",
        default="local",
        help="local (default), dask://HOST:PORT or dask://local (needs dask and distributed)",
    )
    common(c)


def _watch_parser(sub) -> None:
    """`watch`: re-index on save."""
    p = sub.add_parser("watch", help="re-index on save; one line per update (Ctrl-C stops)")
    _add_repo(p, positional=True)
    p.add_argument(
        "--debounce",
        type=int,
        default=None,
        metavar="MS",
        help="quiet time after the last change before re-indexing (default 50)",
    )
    p.add_argument(
        "--poll", action="store_true", help="poll instead of OS events (network file systems)"
    )
    p.add_argument(
        "--no-initial",
        action="store_true",
        help="do not catch up with changes made before watching (default: index once first)",
    )


def _agent_parsers(sub) -> None:
    """`context`, `mcp` and `hook`: what coding agents call."""
    p = sub.add_parser("context", help="ranked hits with their source, packed into a budget")
    p.add_argument("text", help="the question")
    _add_repo(p)
    p.add_argument("--budget", type=int, default=4000, help="tokens (default 4000)")
    p.add_argument("--format", choices=("md", "xml", "json"), default=None, help="default md")
    p.add_argument(
        "--tokenizer",
        choices=("chars", "tiktoken"),
        default="chars",
        help="how the budget counts: chars/4 (default) or tiktoken if installed",
    )
    p.add_argument("--limit", type=int, default=None, help="hits ranked (default: by budget)")
    p.add_argument("--rule", default=None, help=f"ranking rule: {_RULE_NAMES}")
    p.add_argument("--within", default=None, help="only nodes whose path matches this glob")
    p.add_argument(
        "--abstain", action="store_true", help='say "no structural match" instead of weak hits'
    )

    p = sub.add_parser("mcp", help="an MCP server over stdio (needs `pip install mcp`)")
    p.add_argument("--repo", default=".", help="repository root (default: current directory)")
    p.add_argument("--store", default=None, help="store directory (default: REPO/.ctxframe/graph)")

    p = sub.add_parser("hook", help="hooks for coding agents")
    hsub = p.add_subparsers(dest="hook_command", required=True, metavar="HOOK")
    h = hsub.add_parser(
        "prompt", help="stdin: a prompt (text or hook JSON); stdout: context, or nothing"
    )
    h.add_argument("--repo", default=None, help="repository root (default: the hook's cwd, .)")
    h.add_argument("--store", default=None, help="store directory (default: REPO/.ctxframe/graph)")
    h.add_argument("--budget", type=int, default=1500, help="tokens (default 1500)")
    h.add_argument("--format", choices=("md", "xml"), default="md", help="default md")


def _repo(a) -> str:
    """`--repo`, else the deprecated positional PATH, else the current directory."""
    old = getattr(a, "old_path", None)
    if old is not None:
        if a.repo is not None and a.repo != old:
            from ctxframe._core.errors import CtxframeError

            raise CtxframeError(f"two repositories given ({old!r} and --repo {a.repo!r})")
        print(
            f"ctxframe: note: `{a.command} PATH` is deprecated; use `{a.command} --repo PATH`",
            file=sys.stderr,
        )
        return old
    return a.repo if a.repo is not None else "."


def _emit(obj, as_json: bool, budget: int | None = None) -> None:
    """Print a result (its text, or its JSON), every secret masked (ctxframe._ingest.redact)."""
    from ctxframe._ingest.redact import redact_obj, redact_text

    if as_json:
        if budget is not None and hasattr(obj, "budget_tokens"):
            obj.budget_tokens = budget
        data = obj.to_dict() if hasattr(obj, "to_dict") else obj
        print(json.dumps(redact_obj(json.loads(json.dumps(data, default=str))), indent=2))
    elif budget is not None and hasattr(obj, "render"):
        print(redact_text(obj.render(budget_tokens=budget)))
    else:
        print(redact_text(str(obj)))


def _open(a):
    """The graph of `--repo`/`--store` (a catalog's when `--repo` is a catalog directory);
    with `--json`, a missing index is JSON too (status `not-indexed`) besides the error."""
    from ctxframe._core.errors import StoreNotFound
    from ctxframe._graph.graph import open_graph

    try:
        repo = _repo(a)
        if a.store is None and os.path.isfile(os.path.join(repo, "catalog.json")):
            from ctxframe._graph.catalog import open_catalog

            return open_catalog(repo)
        g = open_graph(repo, store=a.store)
    except StoreNotFound as exc:
        if a.json:
            verb = a.command
            err = {"code": "not-indexed", "message": str(exc), "candidates": []}
            print(json.dumps({"verb": verb, "status": "not-indexed", "error": err}, indent=2))
        raise
    return g


def _not_a_catalog(repo: str, command: str) -> str:
    """`repo`, unless it is a catalog directory (`index` and `watch` are per repository)."""
    if os.path.isfile(os.path.join(repo, "catalog.json")):
        from ctxframe._core.errors import BadInput

        raise BadInput(
            f"{repo} is a catalog: `ctxframe catalog index --repo {repo}` indexes its "
            f"repositories (`{command}` takes one repository)"
        )
    return repo


def _cmd_index(a) -> None:
    from ctxframe._store import alloc as _alloc

    repo = _not_a_catalog(_repo(a), "index")
    _alloc.for_index(repo, a.store)  # before _indexer loads Polars
    from ctxframe._store.build import index

    report = index(
        repo,
        store=a.store,
        rebuild=a.rebuild,
        progress=False if a.no_progress else None,
        dial=a.dial,
        wait=not a.no_wait,
        cache=not a.no_cache,
        coverage=False if a.no_coverage else a.coverage,
        history=False if a.no_history else None,
        anonymize=True if a.anonymize else None,
    )
    _emit(report, a.json)


def _cmd_cache(a) -> None:
    from ctxframe._store import xcache

    out = xcache.info() if a.cache_command == "info" else xcache.clear()
    if a.json:
        print(json.dumps(out, indent=2))
        return
    mb = out["bytes"] / 1048576
    if a.cache_command == "clear":
        print(f"cleared {out['path']}: {out['packs']} packs, {out['entries']} entries, {mb:.1f} MB")
        return
    print(
        f"extraction cache {out['path']}: {out['entries']} entries in {out['packs']} packs, "
        f"{mb:.1f} MB of {out['max_bytes'] / 1048576:.0f} MB"
        + ("" if out["enabled"] else " (off: CTXFRAME_NO_CACHE is set)")
    )


def _cmd_adapters(a) -> int:
    from ctxframe._store.adapters_check import check

    run = check(_repo(a), store=a.store)
    _emit({"verb": "adapters-check", "status": "ok", **run.to_dict()} if a.json else run, a.json)
    return 1 if run.rejected else 0


def _cmd_status(a) -> None:
    from ctxframe._store.status import status

    repo = _repo(a)
    if a.store is None and os.path.isfile(os.path.join(repo, "catalog.json")):
        from ctxframe._apps.catalog import Catalog

        _emit(Catalog(repo).status(), a.json)  # each repository's freshness
        return
    _emit(status(repo, store=a.store), a.json)


def _cmd_export(a) -> None:
    _not_a_catalog(_repo(a), "export")
    _emit(_open(a).export(a.directory, a.format), a.json)


def _cmd_query(a) -> None:
    g = _open(a)
    kinds = [k.strip() for v in a.kind or () for k in v.split(",") if k.strip()] or None
    res = g.query(
        a.text,
        limit=a.limit,
        rule=a.rule,
        within=a.within,
        include_ambiguous=a.include_ambiguous,
        abstain=a.abstain,
        kinds=kinds,
        explain=a.explain,
    )
    _emit(res, a.json, a.budget)


def _rule_spec(spec: str):
    if ":" in spec:
        import importlib

        mod, _, attr = spec.partition(":")
        try:
            obj = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as exc:
            from ctxframe._core.errors import CtxframeError

            raise CtxframeError(f"cannot load rule {spec!r}: {exc}") from None
        return obj() if isinstance(obj, type) else obj
    return spec


def _cmd_eval(a) -> None:
    from ctxframe._apps.eval import evaluate

    target = a.store or a.repo
    ev = evaluate(
        target,
        a.queries,
        rules=[_rule_spec(r) for r in (a.rule or ["idf-tiers"])],
        k=a.k,
        limit=a.limit,
    )
    written = ev.write_parquet(a.out) if a.out else []
    if a.json:
        print(json.dumps({**ev.to_dict(), "written": written}, indent=2, default=str))
        return
    print(ev)
    for r in ev.rules[1:]:
        c = ev.compare(r, ev.rules[0])
        if c["n"]:
            print(
                f"\n{r} vs {ev.rules[0]} (file level, n={c['n']}): {c['wins']} wins, "
                f"{c['losses']} losses, {c['ties']} ties; MRR difference {c['diff']:+.3f} "
                f"[95% CI {c['ci_low']:+.3f}, {c['ci_high']:+.3f}]"
            )
    for p in written:
        print(f"wrote {p}", file=sys.stderr)


def sample_path() -> str:
    """The bundled sample shop: packaged with the wheel, or data-samples/ in a source tree."""
    from importlib import resources

    packaged = resources.files("ctxframe").joinpath("_sample").joinpath("shop")
    if packaged.is_dir():
        return str(packaged)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(here, "data-samples", "shop")


def _cmd_demo(a) -> None:
    import shutil
    import tempfile

    from ctxframe._graph.graph import Graph
    from ctxframe._store.build import index

    with contextlib.ExitStack() as stack:
        if a.keep:
            dest = a.keep
        else:  # a private copy, removed when the demo ends (`--keep DIR` to look around after)
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="ctxframe-demo-"))
            dest = os.path.join(tmp, "shop")
        if not os.path.isdir(dest):
            shutil.copytree(sample_path(), dest)
        report = index(dest, progress=False)
        print(report)
        g = Graph(report.store, root=report.root)
        question = "where is refund processing implemented"
        print(f'\n$ ctxframe query "{question}" --repo {dest}\n')
        print(g.query(question, limit=5))
        if not a.keep:
            print("\n(the copy is removed on exit; `ctxframe demo --keep DIR` keeps it)")


def _cmd_serve(a) -> None:
    import errno

    from ctxframe._apps.serve import serve
    from ctxframe._core.errors import CtxframeError

    try:
        serve(_repo(a), store=a.store, host=a.host, port=a.port, verbose=a.verbose)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise CtxframeError(
                f"port {a.port} on {a.host} is in use: pick another with --port N "
                "(--port 0 picks a free one)"
            ) from None
        if exc.errno in (errno.EACCES, errno.EADDRNOTAVAIL):
            raise CtxframeError(f"cannot listen on {a.host}:{a.port}: {exc.strerror}") from None
        raise


def _cmd_context(a) -> None:
    g = _open(a)
    fmt = a.format or ("json" if a.json else "md")
    ctx = g.context(
        a.text,
        budget_tokens=a.budget,
        format=fmt,
        limit=a.limit,
        rule=a.rule,
        within=a.within,
        abstain=a.abstain,
        tokenizer=a.tokenizer,
    )
    from ctxframe._ingest.redact import redact_rendered

    text = redact_rendered(ctx.render(), fmt)
    # the budget counts every printed character: the final newline only when it still fits
    sys.stdout.write(text + "\n" if ctx.counter.count(text + "\n") <= a.budget else text)


def _cmd_mcp(a) -> None:
    from ctxframe._apps.mcp import serve_stdio

    serve_stdio(a.repo, store=a.store)


def _cmd_hook(a) -> int:
    from ctxframe._apps.hook import prompt_hook

    return prompt_hook(
        sys.stdin,
        sys.stdout,
        sys.stderr,
        repo=a.repo,
        store=a.store,
        budget_tokens=a.budget,
        format=a.format,
    )


def _cmd_catalog(a) -> int:
    from ctxframe._apps.catalog import Catalog

    cat = Catalog(a.catalog)
    action = a.catalog_command
    if action == "index":
        report = cat.index(jobs=a.jobs, executor=a.executor, only=a.only or None)
        _emit(report, a.json)
        return 0 if report.ok else 1
    if action == "add":
        cat.add(*a.paths, name=a.name, store=a.store)
    elif action == "remove":
        cat.remove(a.name)
    repos = cat.repos
    if a.json:
        out = {"verb": f"catalog-{action}", "status": "ok", "catalog": cat.directory}
        print(json.dumps({**out, "repos": repos.to_dicts()}, indent=2))
    else:
        print(f"catalog {cat.directory}: {repos.height} repositories")
        for r in repos.iter_rows(named=True):
            when = r["indexed_at"] or "not indexed yet"
            print(f"  {r['name']}  {r['path']}  ({when}{'; ' + r['error'] if r['error'] else ''})")
    return 0


def _cmd_watch(a) -> int:
    from ctxframe._core.errors import CtxframeError
    from ctxframe._store import alloc as _alloc

    if a.debounce is not None and not 1 <= a.debounce <= 60_000:
        raise CtxframeError(f"--debounce {a.debounce}: give milliseconds between 1 and 60000")
    repo = _not_a_catalog(_repo(a), "watch")
    # each re-index allocates what the last one freed: as `index` does, before Polars loads
    _alloc.for_index(repo, a.store)
    from ctxframe._apps.watch import watch_command

    return watch_command(
        repo,
        a.store,
        as_json=a.json,
        debounce_ms=a.debounce,
        poll=a.poll,
        initial=not a.no_initial,
    )


def _cold_card(a) -> int | None:
    """`card` from the card cache of the store's version, without loading Polars (a fresh
    process answers in a fraction of the normal path's time); None: take the normal path."""
    from ctxframe._core.config import default_store, find_root
    from ctxframe._graph.coldcard import answer

    repo = _repo(a)
    store = a.store
    if store is None:
        if os.path.isfile(os.path.join(repo, "catalog.json")):
            return None
        is_store = os.path.isfile(os.path.join(repo, "meta.json"))
        store = repo if is_store else default_store(find_root(repo))
    out = answer(
        os.path.abspath(store),
        a.name,
        include_ambiguous=a.include_ambiguous,
        as_json=a.json,
        budget=a.budget,
    )
    if out is None:
        return None
    from ctxframe._ingest.redact import redact_text

    print(redact_text(out[0]))
    return out[1]


def _cmd_audit(a) -> int:
    g = _open(a)
    res = g.audit(a.section)
    wrote = []
    if a.html:
        wrote.append(res.to_html(a.html))
    if a.md:
        with open(a.md, "w", encoding="utf-8") as fh:
            fh.write(res.to_markdown())
        wrote.append(a.md)
    if a.json:
        print(json.dumps(res.to_dict(rows=max(0, a.limit)), indent=2, default=str))
    else:
        print(res.render(budget_tokens=a.budget) if a.budget else res.render())
        for path in wrote:
            print(f"wrote {path}")
    return 0


def _verb(a) -> int:
    if a.command == "card":
        code = _cold_card(a)
        if code is not None:
            return code
    g = _open(a)
    if a.command == "card":
        res = g.card(a.name, include_ambiguous=a.include_ambiguous)
        _emit(res, a.json, a.budget)
        from ctxframe._graph import coldcard
        from ctxframe._graph.graph import Graph

        if isinstance(g, Graph):  # the next card process answers from it (best effort)
            with contextlib.suppress(Exception):
                coldcard.save(g)
        return 0 if res.ok else 1
    elif a.command == "affected":
        res = g.affected(a.name, depth=a.depth, include_ambiguous=a.include_ambiguous)
    elif a.command == "path":
        res = g.path(a.a, a.b, undirected=a.undirected, include_ambiguous=a.include_ambiguous)
    elif a.command == "change-plan":
        res = g.change_plan(a.name, depth=a.depth, include_ambiguous=a.include_ambiguous)
    elif a.command == "explain":
        res = g.explain(a.name, include_ambiguous=a.include_ambiguous)
    elif a.command == "boundaries":
        res = g.boundaries(a.name)
    else:
        res = g.hubs(limit=a.limit)
    _emit(res, a.json, a.budget)
    return 0 if res.ok else 1


_VERBS = ("card", "affected", "path", "change-plan", "explain", "hubs", "boundaries")
_COMMANDS = {
    "index": _cmd_index,
    "status": _cmd_status,
    "export": _cmd_export,
    "query": _cmd_query,
    "eval": _cmd_eval,
    "demo": _cmd_demo,
    "serve": _cmd_serve,
}
_COMMANDS["adapters"] = _cmd_adapters
_COMMANDS["catalog"] = _cmd_catalog
_COMMANDS["cache"] = _cmd_cache
_COMMANDS["history"] = _cmd_history
_COMMANDS.update(context=_cmd_context, mcp=_cmd_mcp, hook=_cmd_hook, watch=_cmd_watch)
_COMMANDS["audit"] = _cmd_audit
_COMMANDS.update(dict.fromkeys(_VERBS, _verb))


def run() -> None:
    """The console script: `main`, then exit without tearing the interpreter down. Every file
    is closed and every store swapped in by then; freeing hundreds of MB of frames one by one
    would only add some 0.03 s to each command."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError):  # the reader went away (`| head`)
            stream.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (tests call this). Every failure is one line
    on stderr saying what to do (exit 2), never a traceback."""
    from ctxframe._core.errors import CtxframeError
    from ctxframe._core.inputs import clean_text

    # bytes that are not UTF-8 (surrogate escapes) and lone surrogates become U+FFFD
    argv = [clean_text(a, "argument") for a in (sys.argv[1:] if argv is None else argv)]
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show a character
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")
    args = _parser().parse_args(argv)
    hook, sys.unraisablehook = sys.unraisablehook, _unraisable
    try:
        return _COMMANDS[args.command](args) or 0
    except CtxframeError as exc:
        _fail(str(exc))
        return 2
    except KeyboardInterrupt:
        print("ctxframe: interrupted; the previous store is untouched", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        _fail(_os_error(exc))
        return 2
    except MemoryError:
        _fail("out of memory: index a smaller tree (config `exclude`) or free memory")
        return 2
    except Exception as exc:  # a bug: still one line, and where to report it
        text = (str(exc).strip().splitlines() or [""])[0][:300]
        _fail(
            f"internal error ({type(exc).__name__}: {text}); if `ctxframe index --rebuild` "
            "does not help, please report it with the command you ran"
        )
        return 2
    finally:
        sys.unraisablehook = hook


def _unraisable(info) -> None:
    """Ctrl-C that lands in a weakref callback or a finalizer, where Python can only print
    it (a traceback) and drop it, is raised again a millisecond later, outside it: the run
    still stops, with its one line. Anything else goes to Python's own hook."""
    import signal

    if info.exc_type is KeyboardInterrupt and hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _interrupt)
        signal.setitimer(signal.ITIMER_REAL, 0.001)
        return
    sys.__unraisablehook__(info)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _fail(message: str) -> None:
    print(f"ctxframe: error: {message}", file=sys.stderr)


def _os_error(exc: OSError) -> str:
    import errno

    where = f" ({exc.filename})" if exc.filename else ""
    fix = {
        errno.ENOSPC: "free some disk space or pass --store DIR on another disk",
        errno.EACCES: "check the permissions, or pass --store DIR you can write",
        errno.EPERM: "check the permissions, or pass --store DIR you can write",
        errno.EROFS: "the file system is read-only: pass --store DIR on a writable one",
        errno.ENOENT: "check the path",
    }.get(exc.errno, "check the path and the disk")
    return f"{exc.strerror or exc}{where}: {fix}"

"""Call edges on a real library: how often ctxframe links httpx's own tests to httpx's API.

Not part of CI. The httpx 0.28.1 sdist (package and ``tests/``) is fetched by package name with
pip into the bench cache (``~/.cache/ctxframe-bench/`` or ``CTXFRAME_BENCH_CACHE``), copied to a
temp dir and indexed with ``cf.index`` (public API only: ``g.nodes``, ``g.edges``).

    python bench/httpx_calls.py [--out FILE] [--sample N] [--seed S]

1. **Known sites.** The call sites are found in ``tests/**/*.py`` with ``ast``, independently of
   ctxframe (the denominator does not move when the resolver changes):

   * ``httpx.Client(`` -> ``httpx/_client.py::Client``
   * ``httpx.Limits(`` -> ``httpx/_config.py::Limits``
   * ``httpx.get(`` -> ``httpx/_api.py::get``
   * ``X.get(`` where ``X`` is bound in the same function (or module) before the call by
     ``X = httpx.Client(...)`` ("client.get, assigned") or ``with httpx.Client(...) as X``
     ("client.get, with-as": the value goes through ``Client.__enter__``, which returns
     ``self``) -> ``httpx/_client.py::Client.get``. ``X`` is usually ``client``.

   A constructor call counts as linked when it goes to the class or to its ``__init__``
   (ctxframe links a bare call naming a class to the class node, docs/schema.md; a resolver
   that prefers ``Client.__init__`` is just as right). A site is **linked** when a ``calls``
   edge of confidence EXTRACTED or INFERRED read at that site (edge ``path`` and ``line``, the
   site's enclosing definition as ``src``, the called name as ``name``) goes to the right
   target. Other outcomes: **ambiguous** (the target is among AMBIGUOUS candidates only),
   **wrong** (EXTRACTED/INFERRED to something else), **unresolved** (null ``dst``),
   **ambiguous (other)** (AMBIGUOUS candidates, none of them the target). ctxframe keeps
   repeated identical edges from one ``src`` once, at the first line: a site with no row of
   its own is **folded**, and counts as linked only when every earlier row of the same
   ``src`` and name goes EXTRACTED/INFERRED to the target (then whatever it resolved to, it
   is the target), as unresolved when every such row has a null ``dst``, and as
   **undetermined** otherwise (mixed rows, or no row at all). The table's "other" column is
   ambiguous (other) + undetermined.

2. **A sample for a human**: N (default 30) INFERRED call edges drawn with a fixed seed from
   the whole tree, each printed with its source line (verdict left to the reader).

3. **Literal receivers**: INFERRED/AMBIGUOUS call edges whose call site's receiver is a builtin
   literal (``", ".join(``, ``b"...".join(``, ``f"..."``, a list/tuple/dict/set display or
   comprehension): every call of that name on that line has such a receiver (``ast``). These
   are false by construction: no method of the repo runs on a ``str``.

4. **Hubs**: the 10 ``calls`` targets with the highest in-degree, by edge rows with a
   non-null ``dst`` (all confidences, split by confidence) and by the default view
   (EXTRACTED+INFERRED).

Prints tables; JSON goes to ``--out`` or ``bench/results/httpx-calls-<date>.json``. Exit 1 with a
one-line reason when the sdist cannot be fetched.
"""

from __future__ import annotations

import argparse
import ast
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

HTTPX = c.Corpus("httpx", "0.28.1", "")
DEFAULT = ("EXTRACTED", "INFERRED")
# site kind -> (called name, accepted dst ids)
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "httpx.Client(": ("Client", ("httpx/_client.py::Client", "httpx/_client.py::Client.__init__")),
    "httpx.Limits(": ("Limits", ("httpx/_config.py::Limits", "httpx/_config.py::Limits.__init__")),
    "httpx.get(": ("get", ("httpx/_api.py::get",)),
    "client.get( assigned": ("get", ("httpx/_client.py::Client.get",)),
    "client.get( with-as": ("get", ("httpx/_client.py::Client.get",)),
}
LITERALS = (
    ast.Constant,
    ast.JoinedStr,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


# --------------------------------------------------------------------------- sites (ast)


def _is_httpx_attr(node: ast.AST, attr: str) -> bool:
    """``httpx.<attr>``."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == "httpx"
    )


def _is_client_call(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and _is_httpx_attr(node.func, "Client")


class SiteScanner:
    """The known call sites of one test module, each with its enclosing definition's id."""

    def __init__(self, relpath: str, tree: ast.Module) -> None:
        self.relpath = relpath
        self.sites: list[dict[str, Any]] = []
        self._scope(tree.body, "")

    def _scope(self, body: list[ast.stmt], qual: str) -> None:
        """One function (or the module, or a class body): its own statements, not nested defs."""
        bound: dict[str, list[tuple[int, str]]] = defaultdict(list)  # var -> [(line, how)]
        owner = f"{self.relpath}::{qual}" if qual else self.relpath
        calls: list[ast.Call] = []
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{qual}.{node.name}" if qual else node.name
                stack.extend(node.decorator_list)  # evaluated in this scope
                if not isinstance(node, ast.ClassDef):
                    stack.extend(d for d in [*node.args.defaults, *node.args.kw_defaults] if d)
                self._scope(node.body, name)
                continue
            if isinstance(node, ast.Lambda):
                stack.append(node.body)  # ctxframe: a lambda's calls belong to its definer
                continue
            if isinstance(node, ast.Assign) and _is_client_call(node.value):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        bound[target.id].append((node.lineno, "assigned"))
            if isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    var = item.optional_vars
                    if _is_client_call(item.context_expr) and isinstance(var, ast.Name):
                        bound[var.id].append((node.lineno, "with-as"))
            if isinstance(node, ast.Call):
                calls.append(node)
            stack.extend(ast.iter_child_nodes(node))
        for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
            func = call.func
            kind = None
            receiver = (
                func.value.id
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                else None
            )
            binding = max(
                (b for b in bound.get(receiver or "", []) if b[0] <= call.lineno), default=None
            )
            for attr in ("Client", "Limits", "get"):
                if _is_httpx_attr(func, attr):
                    kind = f"httpx.{attr}("
            if kind is None and binding and func.attr == "get":
                kind = f"client.get( {binding[1]}"
            if kind:
                self.sites.append(
                    {
                        "kind": kind,
                        "path": self.relpath,
                        "line": call.lineno,
                        "src": owner,
                        "name": TARGETS[kind][0],
                    }
                )


def find_sites(tree: Path) -> list[dict[str, Any]]:
    """Every known site in ``tests/``, sorted by path and line."""
    sites: list[dict[str, Any]] = []
    for path in sorted((tree / "tests").rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        try:
            module = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        sites.extend(SiteScanner(rel, module).sites)
    return sorted(sites, key=lambda s: (s["path"], s["line"], s["kind"]))


# --------------------------------------------------------------------------- judging the sites


def judge(site: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The outcome of one site given the calls rows of its (src, name), any line."""
    targets = TARGETS[site["kind"]][1]
    own = [r for r in rows if r["line"] == site["line"]]
    if not own:  # folded into earlier identical rows, or no row at all
        earlier = [r for r in rows if r["line"] < site["line"]]
        if earlier and all(r["dst"] in targets and r["confidence"] in DEFAULT for r in earlier):
            return "linked (folded)"
        if earlier and all(r["dst"] is None for r in earlier):
            return "unresolved (folded)"
        return "undetermined"
    if any(r["dst"] in targets and r["confidence"] in DEFAULT for r in own):
        return "linked"
    if any(r["dst"] in targets for r in own):
        return "ambiguous"
    if any(r["confidence"] in DEFAULT for r in own):
        return "wrong"
    if all(r["dst"] is None for r in own):
        return "unresolved"
    return "ambiguous (other)"  # AMBIGUOUS candidates, none of them the target


OUTCOMES = (
    "linked",
    "linked (folded)",
    "ambiguous",
    "ambiguous (other)",
    "wrong",
    "unresolved",
    "unresolved (folded)",
    "undetermined",
)


def site_table(sites: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per site kind and overall: sites, outcome counts, linked share."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in sites:
        groups[s["kind"]].append(s)
        groups["all"].append(s)
    out: dict[str, dict[str, Any]] = {}
    for kind in [*TARGETS, "all"]:
        members = groups.get(kind, [])
        counts = Counter(s["outcome"] for s in members)
        linked = counts["linked"] + counts["linked (folded)"]
        out[kind] = {
            "sites": len(members),
            **{o: counts[o] for o in OUTCOMES},
            "linked_total": linked,
            "linked_pct": round(100 * linked / len(members), 1) if members else None,
        }
    return out


# --------------------------------------------------------------------------- other measures


class Lines:
    """Source lines and parsed modules of the tree, read once per file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._text: dict[str, list[str]] = {}
        self._attr_receivers: dict[str, dict[tuple[int, str], list[ast.expr]]] = {}

    def line(self, path: str, line: int) -> str:
        if path not in self._text:
            try:
                self._text[path] = (self.root / path).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                self._text[path] = []
        lines = self._text[path]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def receivers(self, path: str, line: int, name: str) -> list[ast.expr]:
        """Receivers of every ``<receiver>.<name>(`` call starting on ``line``."""
        if path not in self._attr_receivers:
            table: dict[tuple[int, str], list[ast.expr]] = defaultdict(list)
            try:
                module = ast.parse((self.root / path).read_text(encoding="utf-8"))
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                module = None
            for node in ast.walk(module) if module else ():
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    table[(node.lineno, node.func.attr)].append(node.func.value)
            self._attr_receivers[path] = table
        return self._attr_receivers[path].get((line, name), [])


def literal_receivers(calls: Any, lines: Lines) -> dict[str, Any]:
    """INFERRED/AMBIGUOUS edges whose site's receiver is a builtin literal."""
    rows = calls.filter(calls["confidence"].is_in(["INFERRED", "AMBIGUOUS"]))
    hits: list[dict[str, Any]] = []
    for r in rows.iter_rows(named=True):
        if not r["path"].endswith(".py"):
            continue
        recv = lines.receivers(r["path"], r["line"], r["name"])
        if recv and all(isinstance(x, LITERALS) for x in recv):
            hits.append(r)
    by_conf = Counter(h["confidence"] for h in hits)
    by_name = Counter(h["name"] for h in hits)
    sites = {(h["path"], h["line"], h["name"]) for h in hits}
    return {
        "edges": len(hits),
        "sites": len(sites),
        "by_confidence": dict(by_conf),
        "by_name": dict(by_name.most_common()),
        "examples": [
            {**{k: h[k] for k in ("path", "line", "src", "dst", "confidence")}}
            | {"source": lines.line(h["path"], h["line"])}
            for h in hits[:10]
        ],
    }


def sample_inferred(calls: Any, lines: Lines, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` INFERRED calls edges drawn with ``seed`` from rows sorted by path, line, dst."""
    rows = calls.filter(calls["confidence"] == "INFERRED").sort("path", "line", "src", "dst")
    picked = random.Random(seed).sample(range(rows.height), min(n, rows.height))
    out = []
    for i in sorted(picked):
        r = rows.row(i, named=True)
        out.append(
            {
                **{k: r[k] for k in ("path", "line", "src", "dst", "name")},
                "source": lines.line(r["path"], r["line"]),
                "verdict": None,  # for the human reader: right / wrong / unsure
            }
        )
    return out


def hubs(calls: Any, top: int = 10) -> dict[str, list[dict[str, Any]]]:
    """Top ``top`` targets by in-degree: all resolved rows, and the default view."""
    import polars as pl

    resolved = calls.filter(pl.col("dst").is_not_null())
    counts = (
        resolved.group_by("dst")
        .agg(
            pl.len().alias("all"),
            (pl.col("confidence") == "EXTRACTED").sum().alias("EXTRACTED"),
            (pl.col("confidence") == "INFERRED").sum().alias("INFERRED"),
            (pl.col("confidence") == "AMBIGUOUS").sum().alias("AMBIGUOUS"),
        )
        .with_columns((pl.col("EXTRACTED") + pl.col("INFERRED")).alias("default"))
    )
    return {
        key: counts.sort([key, "dst"], descending=[True, False]).head(top).to_dicts()
        for key in ("all", "default")
    }


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="JSON output (default bench/results/httpx-calls-*)")
    ap.add_argument("--sample", type=int, default=30, help="INFERRED edges to sample (30)")
    ap.add_argument("--seed", type=int, default=20240601, help="sampling seed")
    args = ap.parse_args(argv)

    try:
        src = c.ensure_corpus(HTTPX)
    except c.Unavailable as exc:
        print(f"httpx_calls: cannot fetch httpx {HTTPX.version}: {exc}", file=sys.stderr)
        return 1

    import polars as pl

    import ctxframe as cf

    with tempfile.TemporaryDirectory(prefix="httpx-calls-") as tmp:
        tree = c.fresh_copy(src, Path(tmp) / HTTPX.key)
        t0 = time.perf_counter()
        graph = cf.index(str(tree), progress=False)
        index_s = time.perf_counter() - t0
        edges = graph.edges
        calls = edges.filter(pl.col("kind") == "calls")
        lines = Lines(tree)

        sites = find_sites(tree)
        by_key: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for r in calls.select("src", "dst", "confidence", "name", "line").iter_rows(named=True):
            by_key[(r["src"], r["name"])].append(r)
        for s in sites:
            rows = by_key.get((s["src"], s["name"]), [])
            s["outcome"] = judge(s, rows)
            s["edges"] = [
                {"dst": r["dst"], "confidence": r["confidence"]}
                for r in rows
                if r["line"] == s["line"]
            ]
            s["source"] = lines.line(s["path"], s["line"])
        table = site_table(sites)
        sample = sample_inferred(calls, lines, args.sample, args.seed)
        literals = literal_receivers(calls, lines)
        top = hubs(calls)
        by_conf = dict(calls.group_by("confidence").len().iter_rows())  # None key: unresolved
        files = graph.nodes.filter(pl.col("kind") == "file").height

    print(
        f"httpx {HTTPX.version}: {files} files, {calls.height} call edges "
        f"(EXTRACTED {by_conf.get('EXTRACTED', 0)}, INFERRED {by_conf.get('INFERRED', 0)}, "
        f"AMBIGUOUS {by_conf.get('AMBIGUOUS', 0)}, unresolved {by_conf.get(None, 0)}); "
        f"indexed in {index_s:.1f} s"
    )
    print(
        "\nKnown call sites in tests/ (found with ast), linked = EXTRACTED/INFERRED to the target"
    )
    headers = ["site", "sites", "linked", "linked %", "ambiguous", "wrong", "unresolved", "other"]
    rows = []
    for kind, t in table.items():
        other = t["ambiguous (other)"] + t["undetermined"]
        rows.append(
            [
                kind,
                t["sites"],
                t["linked_total"],
                t["linked_pct"],
                t["ambiguous"],
                t["wrong"],
                t["unresolved"] + t["unresolved (folded)"],
                other,
            ]
        )
    print(c.format_table(headers, [[_pct(x) for x in r] for r in rows]))
    every = table["all"]
    print(
        f"(folded sites: linked {every['linked (folded)']}, unresolved "
        f"{every['unresolved (folded)']}; other = AMBIGUOUS without the target "
        f"{every['ambiguous (other)']}, undetermined {every['undetermined']})"
    )

    print(f"\n{len(sample)} INFERRED call edges (seed {args.seed}) for a human to judge:")
    for i, s in enumerate(sample, 1):
        print(f"{i:3}. {s['path']}:{s['line']}  {s['src']} -> {s['dst']}")
        print(f"       {s['source'][:110]}")

    print(
        f"\nINFERRED/AMBIGUOUS call edges on a builtin literal receiver: {literals['edges']} "
        f"edges at {literals['sites']} sites {literals['by_confidence']}; by name: "
        + ", ".join(f"{k} {v}" for k, v in list(literals["by_name"].items())[:8])
    )

    for key, title in (("all", "all resolved rows"), ("default", "EXTRACTED+INFERRED")):
        print(f"\nTop 10 calls targets by in-degree ({title}):")
        print(
            c.format_table(
                ["dst", "all", "EXTRACTED", "INFERRED", "AMBIGUOUS"],
                [
                    [h["dst"], h["all"], h["EXTRACTED"], h["INFERRED"], h["AMBIGUOUS"]]
                    for h in top[key]
                ],
            )
        )

    data = {
        "benchmark": "httpx-calls",
        "corpus": f"httpx=={HTTPX.version} sdist",
        "machine": c.machine_info(),
        "index_s": round(index_s, 2),
        "files": files,
        "calls_by_confidence": {str(k): v for k, v in by_conf.items()},
        "targets": {k: list(v[1]) for k, v in TARGETS.items()},
        "sites_summary": table,
        "sites": sites,
        "inferred_sample": {"seed": args.seed, "edges": sample},
        "literal_receivers": literals,
        "hubs": top,
    }
    c.write_json(args.out or c.default_out("httpx-calls"), data)
    return 0


def _pct(value: Any) -> Any:
    return f"{value:.1f}" if isinstance(value, float) else value


if __name__ == "__main__":
    sys.exit(main())

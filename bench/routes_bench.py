"""Routes against the frameworks' own route tables: what ctxframe extracts (method, whole path)
from real projects, compared with what Flask and FastAPI print for the same code.

Usage::

    python bench/routes_bench.py [--baseline-tree DIR] [--out FILE]

Corpora, downloaded by package name into the bench cache:

* Flask 3.1.1's sdist: the tutorial app (`examples/tutorial`, `flaskr.create_app()`: two
  blueprints, one with `url_prefix`, `methods=` on most routes, `add_url_rule`) and the
  JavaScript example (`examples/javascript`, `js_example.app`);
* FastAPI 0.115.12's sdist: every module of `docs_src/` whose import defines a FastAPI `app`
  with routes (hundreds of small apps: path operations, `APIRouter(prefix=)`,
  `include_router(prefix=)`, `api_route(methods=)`), and the "bigger applications" packages.

The truth is the framework's table, printed by the framework in a child process with the
framework installed by name (`pip install --target`): Flask's `app.url_map` (HEAD, OPTIONS and
the `static` endpoint left out: Flask adds them to every app), FastAPI's `app.routes` (its
`APIRoute`s and websocket routes: the docs pages it adds are no code of the app). Paths are
compared in ctxframe's spelling (`<int:id>` -> `{id}`). ctxframe indexes each corpus once; a
route belongs to the unit (module, or package) of the function that handles it.

`--baseline-tree DIR` runs the ctxframe side again with another checkout's code (e.g. a
`git worktree` of the commit before a change), as a baseline in the same run.
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

import _common as C

FLASK = ("flask", "3.1.1")
FASTAPI = ("fastapi", "0.115.12")
ROOT = Path(__file__).resolve().parent.parent

# -- the frameworks' own tables --------------------------------------------------------------

_FLASK_DUMP = r"""
import importlib, json, re, sys
out = {}
for unit, module, attr, call in json.loads(sys.argv[1]):
    sys.path.insert(0, unit)
    try:
        app = getattr(importlib.import_module(module), attr)
        app = app() if call else app
    except Exception as exc:  # an example that needs more than Flask
        print(f"skip {unit}: {exc!r}", file=sys.stderr)
        continue
    finally:
        sys.path.remove(unit)
    rows = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        rows += [[m, path] for m in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    out[unit] = sorted(rows)
print(json.dumps(out))
"""

_FASTAPI_DUMP = r"""
import importlib, json, os, sys, warnings
warnings.simplefilter("ignore")
from fastapi import FastAPI
from fastapi.routing import APIRoute, APIWebSocketRoute
from starlette.routing import Mount
import re
root, units = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, root)
out = {}
for unit, module in units:
    try:
        app = getattr(importlib.import_module(module), "app", None)
    except BaseException as exc:  # a docs example that needs another package, or a server
        continue
    if not isinstance(app, FastAPI):
        continue
    rows = []
    todo = [("", app.routes)]
    while todo:  # a mounted FastAPI app serves its routes under the mount's path
        prefix, routes = todo.pop()
        for r in routes:
            path = re.sub(r"\{([^}:]+):[^}]+\}", r"{\1}", prefix + getattr(r, "path", ""))
            if isinstance(r, APIRoute):
                rows += [[m, path] for m in sorted(r.methods - {"HEAD", "OPTIONS"})]
            elif isinstance(r, APIWebSocketRoute):
                rows.append(["WEBSOCKET", path])
            elif isinstance(r, Mount) and isinstance(r.app, FastAPI):
                todo.append((prefix + r.path, r.app.routes))
    if rows:
        out[unit] = sorted(rows)
print(json.dumps(out))
"""

# -- ctxframe's routes, per unit, in a child process (this checkout's code or a baseline's) ---

_CTXFRAME_DUMP = r"""
import json, os, sys
import polars as pl
import ctxframe as cf
tree, store, units = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
g = cf.index(tree, store=store, progress=False, cache=False)
nodes = g.nodes.filter(pl.col("kind") == "route").select("id", "label")
handles = g.edges.filter(pl.col("kind") == "handles").select(id="src", handler="dst")
rows = nodes.join(handles, on="id").join(
    g.nodes.select(handler="id", hpath="path"), on="handler").to_dicts()
out = {u: set() for u, _ in units}
for r in rows:  # a handler belongs to the innermost unit holding its file
    inside = [(len(p), u) for u, p in units
              if r["hpath"] == p or r["hpath"].startswith(p.rstrip("/") + "/")]
    if inside:
        method, path = r["label"].split(" ", 1)
        out[max(inside)[1]].add((method, path))
print(json.dumps({u: sorted(v) for u, v in out.items()}))
"""


def _site(name: str, version: str) -> Path:
    """The framework installed by name into the bench cache (`pip install --target`)."""
    site = C.cache_dir() / "routes" / f"site-{name}-{version}"
    if not (site / ".done").is_file():
        C.log(f"installing {name}=={version} into {site}")
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--target", str(site),
             f"{name}=={version}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise C.Unavailable(f"pip install {name}=={version} failed: {proc.stderr[-300:]}")
        (site / ".done").write_text("ok")
    return site


def _tree(name: str, version: str) -> Path:
    return C.ensure_corpus(C.Corpus(name, version, ""))


def _child(code: str, args: list[str], pythonpath: list[Path | str]) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, pythonpath))}
    proc = subprocess.run(  # cwd: not a checkout, whose ctxframe `-c` would import first
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
        check=False, timeout=1800, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    if proc.returncode != 0:
        raise C.Unavailable(f"child failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def flask_units() -> tuple[Path, list[tuple[str, str]], dict]:
    """The Flask examples: (tree, units as (unit, path prefix), the framework's tables)."""
    tree = _tree(*FLASK) / "examples"
    apps = [
        (str(tree / "tutorial"), "flaskr", "create_app", True),
        (str(tree / "javascript"), "js_example", "app", False),
    ]
    truth = _child(_FLASK_DUMP, [json.dumps(apps)], [_site(*FLASK)])
    units = [(Path(u).relative_to(tree).as_posix(),) * 2 for u, *_ in apps]
    return tree, units, {Path(k).relative_to(tree).as_posix(): v for k, v in truth.items()}


def fastapi_units() -> tuple[Path, list[tuple[str, str]], dict]:
    """FastAPI's docs_src: every module (or app package) with an `app`."""
    tree = _tree(*FASTAPI) / "docs_src"
    units: list[tuple[str, str]] = []
    for py in sorted(tree.rglob("*.py")):
        rel = py.relative_to(tree)
        if py.name == "__init__.py" or "app = FastAPI(" not in py.read_text(errors="replace"):
            continue
        package = py.parent
        if (package / "__init__.py").is_file() and package != tree and py.name == "main.py":
            unit = package.relative_to(tree).as_posix()  # an app package: routers beside it
            units.append((unit, ".".join((*package.relative_to(tree).parts, "main"))))
        elif not (package / "__init__.py").is_file() or package.parent == tree:
            units.append((rel.as_posix(), ".".join(rel.with_suffix("").parts)))
    truth = _child(_FASTAPI_DUMP, [str(tree), json.dumps(units)], [_site(*FASTAPI)])
    return tree, [(u, u) for u, _ in units if u in truth], truth


def ctxframe_routes(tree: Path, units: list[tuple[str, str]], code: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="routes-bench-") as tmp:
        got = _child(
            _CTXFRAME_DUMP,
            [str(tree), str(Path(tmp) / "store"), json.dumps([[u, p] for u, p in units])],
            [code],
        )
    return {u: {tuple(r) for r in got.get(u, [])} for u, _ in units}


def compare(truth: dict, got: dict) -> dict:
    """Route-level precision and recall, and how many units match exactly."""
    tp = fp = fn = same = 0
    misses = []
    for unit, rows in truth.items():
        want, have = {tuple(r) for r in rows}, got.get(unit, set())
        tp += len(want & have)
        fp += len(have - want)
        fn += len(want - have)
        same += want == have
        if want != have:
            misses.append({"unit": unit, "missing": sorted(want - have),
                           "extra": sorted(have - want)})  # fmt: skip
    return {
        "units": len(truth),
        "routes": tp + fn,
        "found": tp + fp,
        "matched": tp,
        "precision": 100.0 * tp / (tp + fp) if tp + fp else None,
        "recall": 100.0 * tp / (tp + fn) if tp + fn else None,
        "units_exact": same,
        "misses": misses,
    }


def run(baseline: Path | None) -> dict:
    results = {}
    for corpus, units_of in (("flask", flask_units), ("fastapi", fastapi_units)):
        tree, units, truth = units_of()
        results[corpus] = {"ctxframe": compare(truth, ctxframe_routes(tree, units, ROOT))}
        if baseline is not None:
            results[corpus]["baseline"] = compare(truth, ctxframe_routes(tree, units, baseline))
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-tree", type=Path, default=None,
                    help="another checkout whose code is run as a baseline")  # fmt: skip
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    C.compile_ctxframe()
    results = run(a.baseline_tree)
    rows = []
    for corpus, systems in results.items():
        for system, r in systems.items():
            exact = f"{r['units_exact']}/{r['units']}"
            rows.append([corpus, system, r["units"], r["routes"], r["found"], r["matched"],
                         r["precision"], r["recall"], exact])  # fmt: skip
    print(C.format_table(
        ["corpus", "system", "units", "framework routes", "ctxframe routes", "matched",
         "precision %", "recall %", "units exact"], rows))  # fmt: skip
    for corpus, systems in results.items():
        for m in systems["ctxframe"]["misses"][:10]:
            print(f"  {corpus} {m['unit']}: missing {m['missing'][:4]} extra {m['extra'][:4]}")
    C.write_json(a.out or C.default_out("routes"), {"machine": C.machine_info(), **results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

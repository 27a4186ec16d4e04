"""The calls a real test suite makes, traced: the dynamic call graph behind coverage's truth.

A pytest plugin (written next to the run, loaded with ``-p``) records, while each test function
runs, every call into a function of the project's tree: the nearest calling frame of the tree
(its function's first line and the line of the call), the callee's first line, and — when
frames outside the tree stand between them (a library calling back, a C builtin calling a
dunder) — the module of the frame just below the callee. One Parquet file per project in
``CACHE/testruns/<key>/calls.parquet`` (test_file, caller_path, caller_first, caller_name,
site_line, callee_path, callee_first, callee_name, via). ``bench/testimpact.py --reasons``
reads it to say which missing edge breaks each missed chain.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from _common import Unavailable, cache_dir, log
from _testruns import PROJECTS, _venv, project_tree

PLUGIN = r'''
import os, sys, threading, json

ROOT = os.path.realpath(os.environ["CALLTRACE_ROOT"])
OUT = os.environ["CALLTRACE_OUT"]
_in_tree = {}
_rows = set()
_current = [None]


def _tree(filename):
    hit = _in_tree.get(filename)
    if hit is None:
        real = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
        hit = os.path.relpath(real, ROOT) if real.startswith(ROOT + os.sep) else ""
        if "site-packages" in hit or hit.startswith(".."):
            hit = ""
        _in_tree[filename] = hit
    return hit


def _profile(frame, event, arg):
    if event != "call" or _current[0] is None:
        return
    co = frame.f_code
    callee = _tree(co.co_filename)
    if not callee:
        return
    back, via = frame.f_back, ""
    while back is not None:
        caller = _tree(back.f_code.co_filename)
        if caller:
            break
        if not via:
            via = back.f_globals.get("__name__", "?")
        back = back.f_back
    if back is None:
        return
    _rows.add((_current[0], caller, back.f_code.co_firstlineno, back.f_code.co_name,
               back.f_lineno, callee, co.co_firstlineno, co.co_name, via))


def pytest_runtest_call(item):
    _current[0] = os.path.relpath(str(item.path), ROOT)
    sys.setprofile(_profile)
    threading.setprofile(_profile)


def pytest_runtest_teardown(item):
    sys.setprofile(None)
    threading.setprofile(None)
    _current[0] = None


def pytest_sessionfinish(session):
    sys.setprofile(None)
    with open(OUT, "w") as f:
        keys = ("test_file", "caller_path", "caller_first", "caller_name", "site_line",
                "callee_path", "callee_first", "callee_name", "via")
        for r in _rows:
            f.write(json.dumps(dict(zip(keys, map(str, r)))) + "\n")
'''


def traced_calls(name: str) -> Path:
    """``CACHE/testruns/<key>/calls.parquet``, made by running the suite traced once."""
    import polars as pl

    p = PROJECTS[name]
    tree = project_tree(p)
    out = cache_dir() / "testruns" / p.key / "calls.parquet"
    if out.exists():
        return out
    python = _venv(p, tree)
    plug_dir = cache_dir() / "testruns" / p.key / "plugin"
    plug_dir.mkdir(parents=True, exist_ok=True)
    (plug_dir / "ctxframe_calltrace.py").write_text(PLUGIN)
    raw = out.with_suffix(".ndjson")
    log(f"{p.key}: tracing the calls its tests make")
    env = {
        "CALLTRACE_ROOT": str(tree),
        "CALLTRACE_OUT": str(raw),
        "PYTHONPATH": str(plug_dir),
    }
    import os

    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "ctxframe_calltrace", "-p", "no:cacheprovider",
         *p.pytest_args],
        cwd=tree, capture_output=True, text=True, timeout=7200, env={**os.environ, **env},
        check=False,
    )  # fmt: skip
    if not raw.exists():
        raise Unavailable(f"{p.key}: the traced run wrote nothing ({proc.stderr[-300:]})")
    cols = ["test_file", "caller_path", "caller_first", "caller_name", "site_line",
            "callee_path", "callee_first", "callee_name", "via"]  # fmt: skip
    frame = pl.read_ndjson(raw, schema=dict.fromkeys(cols, pl.String))
    frame = frame.with_columns(
        pl.col(c).cast(pl.Int32) for c in ("caller_first", "site_line", "callee_first")
    )
    frame.write_parquet(out)
    raw.unlink()
    return out

"""Floor benchmark: what the Django speed targets leave once the unavoidable work is paid.

Usage::

    python bench/floor_bench.py [--corpus django] [--repeat 3] [--out bench/results/floor.json]

On the same tree and in the same run (wall seconds, least of ``--repeat`` runs):

* ``ctags -R``: the floor the cold-index target is a multiple of;
* tree-sitter alone on all cores (a fork pool over the files ctxframe parses, the same grammars):
  parse only, then parse plus ctxframe's own ``.scm`` query with its matches iterated;
* ``python -c "import polars"`` and ``python -c pass``: the start every CLI run pays;
* writing the stored ``nodes``, ``edges`` and ``tokens`` tables of the indexed tree again as the
  store writes them: what a re-index that adds a definition has to rewrite.

It prints these beside the targets (cold index within 4x ctags, 1-file re-index under 0.5 s),
so the share that is left for everything else can be read off. JSON goes to ``--out``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c


def _parse_chunk(args: tuple[str, list[str], bool]) -> int:
    """Parse (and with `query`, run the language's query over) each file; the match count."""
    from tree_sitter import QueryCursor

    from ctxframe._core.languages import language_for
    from ctxframe._ingest.extract import _compiled

    root, paths, query = args
    matches = 0
    for path in paths:
        lang = language_for(path)
        with open(os.path.join(root, path), "rb") as fh:
            data = fh.read()
        parser, compiled, _roles = _compiled(lang.name)
        tree = parser.parse(data)
        if query:
            matches += len(QueryCursor(compiled).matches(tree.root_node))
    return matches


def _code_files(root: Path) -> list[str]:
    """The files ctxframe parses with a tree-sitter grammar (code, not docs or manifests)."""
    from ctxframe._core.languages import language_for
    from ctxframe._ingest.extract import MAX_FILE_BYTES
    from ctxframe._ingest.walk import walk

    out = []
    for path, size, _ in walk(str(root)).files:
        lang = language_for(path)
        if lang is not None and lang.family != "docs" and size <= MAX_FILE_BYTES:
            out.append(path)
    return out


def tree_sitter_pool(root: Path, paths: list[str], query: bool) -> float:
    """Wall seconds for a fork pool on every core to parse (and query) every file."""
    workers = os.cpu_count() or 2
    chunks = [paths[i : i + 64] for i in range(0, len(paths), 64)]
    start = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
        list(pool.map(_parse_chunk, [(str(root), ch, query) for ch in chunks]))
    return time.perf_counter() - start


def start_seconds(code: str) -> float:
    """Wall seconds of `python -c code` (the interpreter ctxframe runs on)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def rewrite_seconds(store: Path) -> float:
    """Wall seconds to write nodes, edges and tokens again the way the store writes tables."""
    from ctxframe._store import tables as _store

    frames = {n: _store.read_table(str(store), n) for n in ("nodes", "edges", "tokens")}
    with tempfile.TemporaryDirectory() as tmp:
        staged = _store.Staging(os.path.join(tmp, "graph"))
        start = time.perf_counter()
        staged.put(frames)
        elapsed = time.perf_counter() - start
        staged.abort()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--corpus", default="django", choices=sorted(c.CORPORA))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    corpus = c.CORPORA[args.corpus]
    src = c.ensure_corpus(corpus)
    c.ensure_ctags()
    cli = c.check_ctxframe_cli("index")
    with tempfile.TemporaryDirectory(prefix="ctxframe-floor-") as work:
        tree = c.fresh_copy(src, Path(work) / corpus.key)
        from ctxframe._store import alloc as _alloc

        _alloc.for_index(str(tree), None)  # Polars' allocator as `ctxframe index` sets it
        c.log(f"{corpus.key}: indexing once for the stored tables")
        subprocess.run(
            [*cli, "index", "--repo", str(tree), "--json"], check=True, capture_output=True
        )
        paths = _code_files(tree)
        tags = Path(work) / "tags"
        ctags = ["ctags", "-R", "--exclude=.ctxframe", "-f", str(tags), str(tree)]
        steps = {
            "ctags -R": lambda: c.run_measured(ctags).wall_s,
            "tree-sitter parse (all cores)": lambda: tree_sitter_pool(tree, paths, False),
            "parse + ctxframe query (all cores)": lambda: tree_sitter_pool(tree, paths, True),
            "python start": lambda: start_seconds("pass"),
            "python start + import polars": lambda: start_seconds("import polars"),
            "rewrite nodes+edges+tokens": lambda: rewrite_seconds(c.find_store(tree)),
        }
        got = {}
        for name, step in steps.items():
            c.log(f"{corpus.key}: {name}")
            got[name] = min(step() for _ in range(args.repeat))
    ctags_s = got["ctags -R"]
    rows = [
        [name, f"{s:.3f}", f"{s / ctags_s:.2f}x ctags", f"{s / 0.5:.0%} of 0.5 s"]
        for name, s in got.items()
    ]
    print(f"{corpus.key}: {len(paths)} files parsed by tree-sitter; {os.cpu_count()} cores")
    print(c.format_table(["step", "seconds", "vs ctags", "vs re-index target"], rows))
    print(f"cold-index target (4x ctags): {4 * ctags_s:.2f} s")
    out = args.out or c.default_out("floor")
    c.write_json(
        out,
        {"machine": c.machine_info(), "corpus": corpus.key, "files": len(paths), "seconds": got},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

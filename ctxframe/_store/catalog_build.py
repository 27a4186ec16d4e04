"""Build a catalog from its view: the cross-repository links, and the catalog's own store.

The store (`DIR/graph/`) is an ordinary versioned store (ctxframe._store.tables): every
repository's nodes, edges and files with ids and paths prefixed `<name>/`, the packages each
builds, the links as edges
(producer `ctxframe.catalog`) and a token table over all of them (every field but the bodies,
which stay in each repository's store), so `query` weighs a word by how rare it is in the whole
catalog. Each table is one streaming query over the view's Parquet
files: the builder never holds a repository's tables in Python objects, and a reader of the old
version keeps it until the new one is swapped in.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from datetime import UTC, datetime

import polars as pl

from ctxframe._core.schema import EDGES, FILES, NODES, conform_edges
from ctxframe._rank.fields import token_table
from ctxframe._resolve.links import HTTP_CALLS, PRODUCER, links
from ctxframe._store import catalog as _cat
from ctxframe._store import tables as _tables

_BOUNDARY_EDGES = ["reads", "sets", "declares", "routes"]
_EDGE_ORDER = ["src", "kind", "line", "dst", "name"]


def indexed(state: _cat.State) -> list[str]:
    """The repositories with a complete view partition, in the order their prefixed ids sort."""
    names = [
        n
        for n in state.repos
        if all(
            os.path.isfile(os.path.join(_cat.view_dir(state.directory, t, n), _cat.PART))
            for t in _cat.VIEW_TABLES
        )
    ]
    return sorted(names, key=lambda n: n + "/")


def scan(directory: str, table: str, names: list[str]) -> pl.LazyFrame:
    """One view table of these repositories, with `repo`: one scan over every partition's file
    (a scan per repository costs several times as much to plan)."""
    files = [f for n in names for f in _cat.view_parts(directory, table, n)]
    if not files:
        schema = {"nodes": NODES, "edges": EDGES, "files": FILES}[table]
        return pl.LazyFrame(schema={**schema, "repo": pl.String})
    return pl.scan_parquet(files, hive_partitioning=True, hive_schema={"repo": pl.String})


FACT_SCHEMAS = {_cat.HTTP_CALLS: HTTP_CALLS, _cat.PACKAGES: NODES}


def read_facts(directory: str, name: str) -> pl.DataFrame:
    """`DIR/http_calls.parquet` or `DIR/packages.parquet` (empty when not written yet)."""
    path = os.path.join(directory, name)
    if os.path.isfile(path):
        return pl.read_parquet(path)
    return pl.DataFrame(schema={"repo": pl.String, **FACT_SCHEMAS[name]})


def merge_facts(directory: str, names: list[str], fresh: dict[str, dict]) -> dict:
    """Each facts table: the rows the tasks just read for their repository (`fresh`:
    name -> {"http_calls": rows, "packages": rows}), the stored rows for the others."""
    out = {}
    for file, key in ((_cat.HTTP_CALLS, "http_calls"), (_cat.PACKAGES, "packages")):
        schema = {"repo": pl.String, **FACT_SCHEMAS[file]}
        kept = read_facts(directory, file).filter(
            pl.col("repo").is_in(names) & ~pl.col("repo").is_in(list(fresh))
        )
        new = [{"repo": n, **row} for n, facts in fresh.items() for row in facts[key]]
        out[file] = pl.concat([kept.cast(schema), pl.DataFrame(new, schema=schema)]).sort(
            "repo", maintain_order=True
        )
    return out


def derive_links(directory: str, names: list[str], facts: dict) -> pl.DataFrame:
    """The links between these repositories (ctxframe._resolve.links)."""
    nodes = (
        scan(directory, "nodes", names)
        .filter(pl.col("transport").is_not_null())
        .select("repo", "id", "kind", "label", "path", "line_start")
    )
    edges = (
        scan(directory, "edges", names)
        .filter(pl.col("kind").is_in(_BOUNDARY_EDGES))
        .select("repo", "src", "dst", "kind", "name", "path", "line")
    )
    nodes, edges = pl.collect_all([nodes, edges])
    packages = facts[_cat.PACKAGES].select(nodes.columns)
    return links(pl.concat([nodes, packages]), edges, facts[_cat.HTTP_CALLS])


def _prefix(col: str, repo: str = "repo") -> pl.Expr:
    return pl.when(pl.col(col).is_not_null()).then(
        pl.concat_str(pl.col(repo), pl.lit("/"), pl.col(col))
    )


def _named(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Ids and paths prefixed `<repo>/`; a file's qualified name (its path) too, and a
    boundary's label `<repo>: …` (its name means little alone: every repository has its
    `GET /healthz`)."""
    return frame.with_columns(
        qualname=pl.when(pl.col("kind") == "file").then(_prefix("qualname")).otherwise("qualname"),
        label=pl.when(pl.col("transport").is_not_null())
        .then(pl.concat_str("repo", pl.lit(": "), "label"))
        .otherwise("label"),
        id=_prefix("id"),
        parent=_prefix("parent"),
        path=_prefix("path"),
    )


def catalog_nodes(directory: str, names: list[str], facts: dict) -> pl.LazyFrame:
    """Every repository's nodes, then the packages merged in: each partition is sorted by id
    and the repositories come in the order of their prefixes, so a merge keeps the whole
    sorted without a sort (which would hold every row at once)."""
    own = _named(scan(directory, "nodes", names)).select(NODES.names()).cast(NODES)
    packages = _named(facts[_cat.PACKAGES].lazy()).select(NODES.names()).cast(NODES).sort("id")
    return own.merge_sorted(packages, key="id")


def catalog_edges(
    directory: str, names: list[str], facts: dict, found: pl.DataFrame
) -> pl.LazyFrame:
    """Every repository's edges (sorted by `src` like its store), then the catalog's own —
    the manifests' `declares` of their packages and the cross-repository links — merged in by
    `src`."""
    own = (
        scan(directory, "edges", names)
        .with_columns(src=_prefix("src"), dst=_prefix("dst"), path=_prefix("path"))
        .pipe(conform_edges)
    )
    declared = (
        facts[_cat.PACKAGES]
        .lazy()
        .select(
            src=_prefix("path"),
            dst=_prefix("id"),
            kind=pl.lit("declares"),
            confidence=pl.lit("EXTRACTED"),
            name="label",
            path=_prefix("path"),
            line="line_start",
            producer=pl.lit(PRODUCER),
        )
    )
    cross = found.lazy().with_columns(
        src=_prefix("src"),
        dst=_prefix("dst", "dst_repo"),
        path=_prefix("path"),
        producer=pl.lit(PRODUCER),
    )
    added = (
        pl.concat([conform_edges(declared), conform_edges(cross)])
        .sort(_EDGE_ORDER, nulls_last=True)
    )
    return own.merge_sorted(added, key="src")


def catalog_files(directory: str, names: list[str]) -> pl.LazyFrame:
    return (
        scan(directory, "files", names)
        .with_columns(path=_prefix("path"))
        .select(FILES.names())
        .cast(FILES)
        .sort("path")
    )


def build(state: _cat.State, fresh: dict[str, dict] | None = None) -> dict:
    """Derive the links and write `DIR/links.parquet`, the facts tables (`fresh`: what the
    tasks of this run read, by repository; the stored rows for the others) and a new version of
    the catalog's store; point `DIR/src/<name>` at each repository, and drop what removed
    repositories left. Returns what it did (also kept in `state.built`); the caller saves."""
    from ctxframe._core.version import __version__
    from ctxframe._store.lock import writer_lock

    t0 = time.perf_counter()
    directory = state.directory
    _drop_removed(state)
    names = indexed(state)
    facts = merge_facts(directory, names, {n: f for n, f in (fresh or {}).items() if n in names})
    found = derive_links(directory, names, facts)
    t1 = time.perf_counter()
    for file, frame in (
        *facts.items(),
        (_cat.LINKS, found.with_columns(producer=pl.lit(PRODUCER))),
    ):
        _cat.put_file(
            lambda tmp, frame=frame: frame.write_parquet(tmp, statistics=False),
            os.path.join(directory, file),
        )
    src = _link_sources(state, names)
    store = _cat.graph_dir(directory)
    with writer_lock(store), _tables.Staging(store) as staged:
        staged.sink("nodes", catalog_nodes(directory, names, facts))
        nodes_file = os.path.join(staged.tmp, _tables.part_name("nodes"))
        staged.sink("edges", catalog_edges(directory, names, facts, found))
        staged.sink("files", catalog_files(directory, names))
        # names, qualified names, paths, signatures and docs; bodies stay in each repository's
        # own store (the view does not carry them)
        fields = ("id", "kind", "label", "qualname", "path", "signature", "doc")
        table = token_table(pl.read_parquet(nodes_file, columns=list(fields)))
        staged.put({"tokens": table.tokens, "vocab": table.vocab})
        del table
        counts = {
            name: pl.scan_parquet(os.path.join(staged.tmp, _tables.part_name(name)))
            .select(pl.len())
            .collect()
            .item()
            for name in ("files", "nodes", "edges")
        }
        by_rule = dict(found.group_by("rule").len().sort("rule").iter_rows())
        built = {
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "repos": names,
            "links": found.height,
            "links_by_rule": by_rule,
            "counts": counts,
            "links_seconds": round(t1 - t0, 4),
        }
        meta = {
            "ctxframe_version": __version__,
            "root": src,
            "git_head": None,
            "indexed_at": built["at"],
            "counts": counts,
            "coverage_counts": [],
            "catalog": {"directory": directory, **built},
        }
        built["version"] = staged.commit(meta)
    built["seconds"] = round(time.perf_counter() - t0, 4)
    state.built = built
    return built


def _link_sources(state: _cat.State, names: list[str]) -> str:
    """`DIR/src/<name>` → each repository, so the catalog graph quotes source like any graph."""
    src = _cat.src_dir(state.directory)
    os.makedirs(src, exist_ok=True)
    for n in names:
        link = os.path.join(src, n)
        target = state.repos[n].path
        with contextlib.suppress(OSError):
            if os.path.islink(link) and os.readlink(link) == target:
                continue
        tmp = os.path.join(src, f".{n}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        try:
            os.symlink(target, tmp)
            os.replace(tmp, link)
        except OSError:  # no symlinks here: the graph works, without quoting source
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    return src


def _drop_removed(state: _cat.State) -> None:
    """View partitions and source links of repositories no longer in the catalog."""
    directory = state.directory
    for table in _cat.VIEW_TABLES:
        folder = os.path.join(directory, table)
        for entry in os.listdir(folder) if os.path.isdir(folder) else []:
            if entry.startswith("repo=") and entry[5:] not in state.repos:
                shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)
    src = _cat.src_dir(directory)
    for entry in os.listdir(src) if os.path.isdir(src) else []:
        if not entry.startswith(".") and entry not in state.repos:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(src, entry))

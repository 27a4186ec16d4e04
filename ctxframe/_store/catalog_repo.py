"""One repository's part of a catalog index: a task a process pool or a cluster worker runs.

The task indexes the repository into its own store (incrementally), then, when the store's
tables changed since the catalog last saw them, refreshes the repository's partition of the
catalog's view: its contract tables (hard links to the store's current version), the packages
its manifests build and its outbound HTTP calls (ctxframe._ingest.interfaces). Everything the
task needs is in its spec, and what it returns is a small dict (with the few rows of its
interfaces when they changed): a coordinator holds no table.

Running it again gives the same result, so a task lost with its worker is simply run again.
A store given as a URL is indexed into a local working copy (`DIR/.stores/<name>`) and then
uploaded with fsspec.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import time

import polars as pl

from ctxframe._core.errors import CtxframeError
from ctxframe._ingest.interfaces import built_packages, http_calls
from ctxframe._resolve.links import PRODUCER
from ctxframe._store import catalog as _cat
from ctxframe._store import tables as _tables

FACTS_VERSION = 2  # bump when what the task derives changes: every partition is rewritten


def spec_of(state: _cat.State, repo: _cat.Repo, processes: int | None = None) -> dict:
    """The task's input for one repository."""
    return {
        "name": repo.name,
        "path": repo.path,
        "store": repo.store,
        "directory": state.directory,
        "known": repo.indexed.get("tables_sha"),
        "processes": processes,
    }


def index_repo(spec: dict) -> dict:
    """Index one repository and refresh its view partition; never raises for a bad repository
    (the error is in the result, `ok` False)."""
    from ctxframe._store.build import index

    t0 = time.perf_counter()
    name, directory = spec["name"], spec["directory"]
    remote = spec.get("store") if _cat.is_url(spec.get("store")) else None
    store = os.path.join(directory, ".stores", name) if remote else spec.get("store")
    out = {
        "name": name,
        "ok": False,
        "error": None,
        "pid": os.getpid(),
        "host": socket.gethostname(),
    }
    try:
        report = index(spec["path"], store=store, progress=False, processes=spec.get("processes"))
        t1 = time.perf_counter()
        snap = _tables.Snapshot(report.store)
        if remote:
            upload(snap, remote)
        sha = tables_sha(snap)
        changed = sha != spec.get("known") or not _view_complete(directory, name)
        if changed:
            out["facts"] = refresh_view(directory, name, snap, report.root)
        out.update(
            ok=True,
            version=snap.version,
            tables_sha=sha,
            changed=changed,
            files=report.files,
            nodes=report.nodes,
            edges=report.edges,
            index_seconds=round(t1 - t0, 4),
            view_seconds=round(time.perf_counter() - t1, 4),
            indexed_at=snap.meta.get("indexed_at"),
        )
        snap.close()
    except CtxframeError as exc:
        out["error"] = str(exc)
    except OSError as exc:
        out["error"] = f"{exc.strerror or exc} ({exc.filename or spec['path']})"
    except Exception as exc:  # a bug: this repository is reported, the others go on
        text = (str(exc).strip().splitlines() or [""])[0][:300]
        out["error"] = f"internal error ({type(exc).__name__}: {text}); please report it"
    return out


def tables_sha(snap: _tables.Snapshot) -> str:
    """One hash of a version's contract tables (their recorded SHA-256s) and of what the task
    derives from them: equal hashes mean the view partition is current."""
    h = hashlib.sha256(f"facts {FACTS_VERSION}".encode())
    for name in _cat.VIEW_TABLES:
        for rel, info in snap.info(name):
            h.update(f"{rel} {info.get('sha256') or info.get('size')}".encode())
    return h.hexdigest()


def _view_complete(directory: str, name: str) -> bool:
    files = [_cat.view_dir(directory, t, name) for t in _cat.VIEW_TABLES]
    return all(os.path.isfile(os.path.join(f, _cat.PART)) for f in files)


def refresh_view(directory: str, name: str, snap: _tables.Snapshot, root: str) -> dict:
    """Point the repository's view partition at this store version (hard links) and read its
    interfaces: returns `{"http_calls": rows, "packages": rows}` (a few rows: the coordinator
    keeps them, in one file for the whole catalog, rather than every task writing its own)."""
    version = {}
    for table in _cat.VIEW_TABLES:
        snap.verify(table)  # size and hash, before the view shares the files
        rels = [r for r, _info in snap.info(table)]
        version[table] = [os.path.join(snap.dir, r) for r in rels]
        folder = _cat.view_dir(directory, table, name)
        for rel in sorted(rels, key=lambda r: r == _tables.part_name(table)):  # the first last
            _share(snap, rel, os.path.join(folder, os.path.basename(rel)))
        keep = {os.path.basename(r) for r in rels}
        for stale in _cat.view_parts(directory, table, name):
            if os.path.basename(stale) not in keep:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(stale)
    files = pl.scan_parquet(version["files"]).filter(pl.col("skip_reason").is_null())
    sites, manifests = pl.collect_all(
        [
            pl.scan_parquet(version["edges"])
            .filter(pl.col("kind") == "http")
            .select("src", "path", "line", "name")
            .join(files.select("path", "language"), on="path", how="left"),
            files.filter(pl.col("path").str.contains(_MANIFESTS)).select("path"),
        ]
    )
    return {
        "http_calls": http_calls(root, sites.to_dicts()),
        "packages": package_nodes(built_packages(root, manifests["path"].to_list())),
    }


_MANIFESTS = r"(^|/)(pyproject\.toml|package\.json|go\.mod|Cargo\.toml)$"


def _share(snap: _tables.Snapshot, rel: str, final: str) -> None:
    """The view's file is the store's part: a hard link (a copy on another disk)."""
    src = os.path.join(snap.dir, rel)
    try:
        if os.path.samefile(src, final):
            return
    except OSError:  # no view file yet: the link itself appears atomically
        os.makedirs(os.path.dirname(final), exist_ok=True)
        with contextlib.suppress(OSError):
            os.link(src, final)
            return

    def put(tmp: str) -> None:
        try:
            os.link(src, tmp)
        except OSError:
            with open(tmp, "wb") as fh:
                fh.write(snap._bytes(rel))

    _cat.put_file(put, final)


def package_nodes(packages: list[dict]) -> list[dict]:
    """`package:<ecosystem>:<name>` nodes (transport `package`, direction `provides`); the
    build adds the manifest's `declares` edge to each."""
    nodes: dict[str, dict] = {}
    for p in packages:
        key = f"{p['ecosystem']}:{p['name']}"
        nodes.setdefault(
            f"package:{key}",
            {
                "id": f"package:{key}",
                "kind": "package",
                "label": p["name"],
                "qualname": key,
                "language": None,
                "path": p["path"],
                "line_start": p["line"],
                "line_end": p["line"],
                "signature": p["name"] if p["version"] is None else f"{p['name']} {p['version']}",
                "doc": p["ecosystem"],
                "parent": None,
                "producer": PRODUCER,
                "transport": "package",
                "direction": "provides",
                "secret": None,
            },
        )
    return [nodes[k] for k in sorted(nodes)]


def upload(snap: _tables.Snapshot, url: str) -> None:
    """Copy a store's current version to `url` (fsspec): the version directory first, then
    meta.json and the one-line `current` pointer, so a reader there never sees a partial
    version; older versions there are removed, the previous one excepted."""
    try:
        import fsspec
    except ImportError:
        raise CtxframeError(
            f"a store at {url} needs fsspec: pip install fsspec (in a ctxframe clone: "
            "pip install '.[dask]'), and the file system's package, e.g. s3fs"
        ) from None
    fs, root = fsspec.core.url_to_fs(url)
    version = snap.version or "current"
    target = f"{root.rstrip('/')}/{version}"
    if not fs.exists(f"{target}/{_tables.META}"):
        fs.makedirs(target, exist_ok=True)
        for rel in snap.parts:
            fs.makedirs(f"{target}/{rel}".rpartition("/")[0], exist_ok=True)
            fs.pipe_file(f"{target}/{rel}", snap._bytes(rel))
        with open(os.path.join(snap.dir, _tables.META), "rb") as fh:
            fs.pipe_file(f"{target}/{_tables.META}", fh.read())
    try:
        previous = fs.cat_file(f"{root}/{_tables.CURRENT}").decode().strip()
    except (FileNotFoundError, OSError):
        previous = None
    with open(os.path.join(snap.dir, _tables.META), "rb") as fh:
        fs.pipe_file(f"{root}/{_tables.META}", fh.read())
    fs.pipe_file(f"{root}/{_tables.CURRENT}", (version + "\n").encode())
    for entry in fs.ls(root, detail=False):
        base = entry.rstrip("/").rpartition("/")[2]
        if base.startswith("v-") and base not in (version, previous):
            fs.rm(entry, recursive=True)


def download(url: str, local: str) -> str:
    """A local copy of a store kept at `url` (what `upload` wrote); returns `local`."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(url)
    version = fs.cat_file(f"{root}/{_tables.CURRENT}").decode().strip()
    shutil.rmtree(local, ignore_errors=True)
    os.makedirs(os.path.join(local, version))
    for entry in fs.find(f"{root}/{version}"):
        rel = entry[len(f"{root}/{version}/") :].lstrip("/")
        dest = os.path.join(local, version, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as fh:
            fh.write(fs.cat_file(entry))
    with open(os.path.join(local, _tables.CURRENT), "w", encoding="utf-8") as fh:
        fh.write(version + "\n")
    shutil.copyfile(os.path.join(local, version, _tables.META), os.path.join(local, _tables.META))
    return local

"""`cf.catalog(DIR)`: add repositories, index them all — here, in a process pool or on a
dask.distributed cluster — and open the result as one graph.

Executors (`executor=`, `--executor`):

* `local` (default): `jobs=1` indexes one repository after another in this process (each with
  its usual pool of parser processes); `jobs=N` runs N repositories at once in a process pool
  (one parser process each), and runs again, once, any repository whose worker died.
* `dask://HOST:PORT` (any address `distributed.Client` takes) or `dask://local` (a local
  cluster of `jobs` worker processes): one task per repository; the scheduler reruns the task
  of a worker that dies. Workers need ctxframe installed, and see the repositories and the
  catalog directory at the same paths (a shared disk); a store may be an fsspec URL.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from ctxframe._core.errors import BadInput, CtxframeError
from ctxframe._render.html import render
from ctxframe._store import catalog as _cat
from ctxframe._store.catalog_run import CatalogReport, index_catalog, sequential
from ctxframe._store.status import Status, status

if TYPE_CHECKING:
    from ctxframe._graph.catalog import CatalogGraph

_DASK_HINT = "pip install dask distributed (in a ctxframe clone: pip install '.[dask]')"


class Catalog:
    """The catalog at `directory`: its repositories, `add`/`remove`, `index`, `open`."""

    def __init__(self, directory: str = "."):
        self.directory = os.path.abspath(directory)

    @property
    def state(self) -> _cat.State:
        return _cat.load(self.directory, create=True)

    @property
    def repos(self) -> pl.DataFrame:
        """One row per repository: name, path, store, and what its last index did."""
        rows = [
            {
                "name": r.name,
                "path": r.path,
                "store": r.store_path(),
                "version": r.indexed.get("version"),
                "indexed_at": r.indexed.get("indexed_at"),
                "files": r.indexed.get("files"),
                "nodes": r.indexed.get("nodes"),
                "edges": r.indexed.get("edges"),
                "error": r.indexed.get("error"),
            }
            for r in sorted(self.state.repos.values(), key=lambda r: r.name)
        ]
        schema = {
            "name": pl.String,
            "path": pl.String,
            "store": pl.String,
            "version": pl.String,
            "indexed_at": pl.String,
            "files": pl.Int64,
            "nodes": pl.Int64,
            "edges": pl.Int64,
            "error": pl.String,
        }
        return pl.DataFrame(rows, schema=schema)

    def add(self, *paths: str, name: str | None = None, store: str | None = None) -> Catalog:
        """Add repositories (a name per directory name, or `name` for a single one; `store`
        for where its store goes, a directory or an fsspec URL)."""
        if not paths:
            raise BadInput("give at least one repository path")
        if (name or store) and len(paths) > 1:
            raise BadInput("--name and --store name one repository: add the others separately")
        from ctxframe._store.lock import writer_lock

        with writer_lock(self.directory):
            state = _cat.load(self.directory, create=True)
            for p in paths:
                state.add(p, name=name, store=store)
            state.save()
        return self

    def remove(self, name: str) -> Catalog:
        """Drop a repository from the catalog (its own store is left alone; the next `index`
        drops it from the view and the graph)."""
        from ctxframe._store.lock import writer_lock

        with writer_lock(self.directory):
            state = _cat.load(self.directory)
            state.remove(name)
            state.save()
        return self

    def index(
        self,
        jobs: int = 1,
        executor: str | None = None,
        processes: int | None = None,
        only: list[str] | None = None,
    ) -> CatalogReport:
        """Index every repository (incrementally; `only` these names, when given) and rebuild
        the catalog's links and graph when anything changed (see the module docstring for
        `jobs` and `executor`)."""
        if not isinstance(jobs, int) or jobs < 1:
            raise BadInput(f"jobs must be a whole number of at least 1, not {jobs!r}")
        executor = executor or "local"
        mapper, cleanup = _mapper(executor, jobs)
        if processes is None and (jobs > 1 or executor != "local"):
            processes = 1  # the parallelism is across repositories
        try:
            return index_catalog(
                self.directory, mapper=mapper, executor=executor, processes=processes, only=only
            )
        finally:
            cleanup()

    def open(self) -> CatalogGraph:
        """The graph over every repository (`cf.open_catalog`)."""
        from ctxframe._graph.catalog import CatalogGraph

        return CatalogGraph(self.directory)

    @property
    def links(self) -> pl.DataFrame:
        """The cross-repository links of the last build (`DIR/links.parquet`)."""
        path = os.path.join(self.directory, _cat.LINKS)
        if not os.path.isfile(path):
            raise CtxframeError(
                f"no links yet: run `ctxframe catalog index --catalog {self.directory}`"
            )
        return pl.read_parquet(path)

    def status(self) -> CatalogStatus:
        """Each repository's freshness against its git HEAD and working tree (`status`), or
        why it cannot be told (not indexed yet, a store at a URL)."""
        rows = []
        for r in self.repos.iter_rows(named=True):
            store = r["store"]
            if "://" in store and not store.startswith("file://"):
                rows.append((r["name"], None, f"store at {store}: not checked here"))
                continue
            try:
                rows.append((r["name"], status(r["path"], store=store.removeprefix("file://")),
                             None))  # fmt: skip
            except CtxframeError as exc:
                rows.append((r["name"], None, str(exc)))
        return CatalogStatus(self.directory, rows)

    def __repr__(self) -> str:
        state = self.state
        return f"<ctxframe.Catalog {self.directory}: {len(state.repos)} repositories>"

    def _repr_html_(self) -> str:
        return self.repos._repr_html_()


@dataclass
class CatalogStatus:
    """`status` of every repository of a catalog: (name, Status or None, error or None)."""

    directory: str
    rows: list[tuple[str, Status | None, str | None]]

    @property
    def fresh(self) -> bool:
        return all(st is not None and st.fresh for _, st, _ in self.rows)

    def to_dict(self) -> dict:
        repos = [
            {"name": name, **(st.to_dict() if st else {}), "error": err}
            for name, st, err in self.rows
        ]
        for r in repos:
            r.pop("verb", None)
            r.pop("status", None)
        return {"verb": "status", "status": "ok", "catalog": self.directory, "repos": repos}

    def __str__(self) -> str:
        lines = [f"catalog {self.directory}: {len(self.rows)} repositories"]
        for name, st, err in self.rows:
            if st is None:
                lines.append(f"  {name}: {err}")
            else:
                lines += [f"  {name}: " + str(st).splitlines()[0]]
                lines += [f"    {ln.strip()}" for ln in str(st).splitlines()[1:]]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return render("message", message=str(self))


def catalog(directory: str = ".") -> Catalog:
    """The catalog at `directory` (created by its first `add`)."""
    return Catalog(directory)


# -- executors ---------------------------------------------------------------------------------
Mapper = Callable[[Callable[[dict], dict], list[dict]], Iterator[dict]]


def _mapper(executor: str, jobs: int) -> tuple[Mapper, Callable[[], None]]:
    if executor == "local":
        return (sequential if jobs == 1 else _pool_mapper(jobs)), lambda: None
    if executor.startswith("dask://"):
        return _dask_mapper(executor.removeprefix("dask://"), jobs)
    raise BadInput(f"unknown executor {executor!r}: local, dask://HOST:PORT or dask://local")


def _pool_mapper(jobs: int) -> Mapper:
    def run(task, specs):
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool
        from multiprocessing import get_context

        todo = list(specs)
        for attempt in range(2):
            lost = []
            # spawn: the tasks use Polars, whose threads a fork would copy mid-flight
            with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
                futures = {pool.submit(task, s): s for s in todo}
                for f in as_completed(futures):
                    try:
                        yield f.result()
                    except BrokenProcessPool:
                        lost.append(futures[f])
            if not lost:
                return
            todo = lost
            if attempt == 1:
                for s in lost:
                    yield {"name": s["name"], "ok": False, "error": "its worker process died twice"}

    return run


def _dask_mapper(address: str, jobs: int) -> tuple[Mapper, Callable[[], None]]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise CtxframeError(f"the dask executor needs dask.distributed: {_DASK_HINT}") from None
    cluster = None
    if address == "local":
        cluster = LocalCluster(
            n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    else:
        try:
            client = Client(address, timeout="30s")
        except OSError as exc:
            raise CtxframeError(
                f"cannot reach the dask scheduler at {address}: {exc}; start one with "
                "`dask scheduler` (or use --executor dask://local)"
            ) from None

    def run(task, specs):
        from distributed import as_completed

        futures = {
            client.submit(
                task,
                s,
                key=f"ctxframe-index-{s['name']}-{os.urandom(4).hex()}",
                pure=False,
                retries=1,
            ): s
            for s in specs
        }
        for f in as_completed(futures):
            try:
                yield f.result()
            except Exception as exc:  # the task's own errors are in its result: this is the
                # cluster's (a worker killed too often, a lost scheduler)
                yield {
                    "name": futures[f]["name"],
                    "ok": False,
                    "error": f"{type(exc).__name__}: {exc}",
                }

    def cleanup() -> None:
        client.close()
        if cluster is not None:
            cluster.close()

    return run, cleanup

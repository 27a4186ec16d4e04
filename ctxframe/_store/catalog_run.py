"""`catalog index`: one task per repository (ctxframe._store.catalog_repo), mapped by whatever
runs them — in this process, a process pool or a cluster (ctxframe._apps.catalog) — then the
catalog's links and store built from the view (ctxframe._store.catalog_build).

The coordinator holds the catalog's state and one small result dict per repository; the
repositories' tables only ever pass through the build's streaming queries.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ctxframe._core.errors import BadInput
from ctxframe._render.html import render
from ctxframe._store import catalog as _cat
from ctxframe._store.catalog_build import build, indexed
from ctxframe._store.catalog_repo import index_repo, spec_of

# A mapper runs the task over the specs and yields each result as it comes (any order).
Mapper = Callable[[Callable[[dict], dict], list[dict]], Iterable[dict]]


def sequential(task: Callable[[dict], dict], specs: list[dict]) -> Iterator[dict]:
    """Every task in this process, one after the other."""
    for spec in specs:
        yield task(spec)


@dataclass
class CatalogReport:
    """What one `catalog index` did: a row per repository and the build."""

    directory: str
    executor: str
    results: list[dict] = field(default_factory=list)
    built: dict = field(default_factory=dict)
    rebuilt: bool = False
    seconds: float = 0.0

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.results if not r.get("ok")]

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict:
        return {
            "verb": "catalog-index",
            "status": "ok" if self.ok else "partial",
            "directory": self.directory,
            "executor": self.executor,
            "repos": self.results,
            "built": self.built,
            "rebuilt": self.rebuilt,
            "seconds": round(self.seconds, 3),
        }

    def __str__(self) -> str:
        rows = sorted(self.results, key=lambda r: r["name"])
        lines = [
            f"catalog {self.directory}: {len(rows)} repositories indexed ({self.executor}) in "
            f"{self.seconds:.2f}s, {len(self.failed)} failed"
        ]
        width = max([len(r["name"]) for r in rows] + [4])
        for r in rows:
            if r.get("ok"):
                what = "changed" if r.get("changed") else "unchanged"
                lines.append(
                    f"  {r['name']:<{width}}  {r['files']:>6} files {r['nodes']:>8} nodes "
                    f"{r['edges']:>8} edges  {r['index_seconds']:.2f}s  {what}"
                )
            else:
                lines.append(f"  {r['name']:<{width}}  failed: {r.get('error')}")
        b = self.built
        if b:
            rules = ", ".join(f"{k} {v}" for k, v in (b.get("links_by_rule") or {}).items())
            lines.append(
                f"links: {b.get('links', 0)} across repositories"
                + (f" ({rules})" if rules else "")
                + (f" · graph {b.get('version')}" if self.rebuilt else " · graph unchanged")
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return render("catalog", report=self.to_dict(), text=str(self).splitlines())


def index_catalog(
    directory: str,
    *,
    mapper: Mapper = sequential,
    executor: str = "local",
    processes: int | None = None,
    only: list[str] | None = None,
) -> CatalogReport:
    """Index every repository of the catalog at `directory` (each incrementally; with `only`,
    just those: the others keep their partitions), then derive the links and write the
    catalog's store when anything changed. A repository that fails keeps its previous
    partition (if any) and is reported; the others are built."""
    from ctxframe._store.lock import writer_lock

    t0 = time.perf_counter()
    with writer_lock(directory):
        state = _cat.load(directory)
        if not state.repos:
            raise BadInput(
                f"the catalog at {state.directory} has no repositories: "
                f"run `ctxframe catalog add PATH --catalog {state.directory}`"
            )
        unknown = sorted(set(only or ()) - set(state.repos))
        if unknown:
            raise BadInput(f"no repository named {unknown[0]!r} in the catalog at {directory}")
        names = sorted(only or state.repos)
        specs = [spec_of(state, state.repos[n], processes) for n in names]
        report = CatalogReport(state.directory, executor)
        fresh: dict[str, dict] = {}  # the interfaces the tasks read (changed repositories)
        facts_missing = not all(
            os.path.isfile(os.path.join(state.directory, f))
            for f in (_cat.HTTP_CALLS, _cat.PACKAGES)
        )
        if facts_missing:  # read every repository's interfaces again
            for s in specs:
                s["known"] = None
        for res in mapper(index_repo, specs):
            if "facts" in res:
                fresh[res["name"]] = res.pop("facts")
            report.results.append(res)
            repo = state.repos.get(res["name"])
            if repo is None:
                continue
            if res.get("ok"):
                keep = (
                    "version",
                    "tables_sha",
                    "files",
                    "nodes",
                    "edges",
                    "index_seconds",
                    "indexed_at",
                )
                repo.indexed = {k: res.get(k) for k in keep}
            else:
                repo.indexed = {**repo.indexed, "error": res.get("error")}
        state.save()
        changed = any(r.get("changed") for r in report.results if r.get("ok"))
        same_set = indexed(state) == list(state.built.get("repos") or [])
        current = bool(state.built.get("version")) and _graph_exists(state.directory)
        if changed or not same_set or not current:
            report.built = build(state, fresh)
            report.rebuilt = True
            state.save()
        else:
            report.built = state.built
    report.seconds = time.perf_counter() - t0
    return report


def _graph_exists(directory: str) -> bool:
    from ctxframe._store import tables as _tables

    try:
        return _tables.current_version(_cat.graph_dir(directory)) is not None
    except OSError:
        return False

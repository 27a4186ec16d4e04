"""A catalog of many repositories: where everything lives in its directory, and its state.

    DIR/catalog.json                   the repositories (name, path, store) and what the last
                                       index and build of each did
    DIR/nodes/repo=<name>/part-0.parquet   the Hive-partitioned view: each repository's
    DIR/edges/repo=<name>/part-0.parquet   contract tables as its store holds them (hard links
    DIR/files/repo=<name>/part-0.parquet   to the store's version, copies on another disk)
    DIR/http_calls.parquet             every outbound HTTP call (`repo`, method, URL template)
    DIR/packages.parquet               the packages each repository's manifests build
    DIR/links.parquet                  the cross-repository links (`repo`, `dst_repo`, `rule`)
    DIR/graph/                         the catalog's own store: every repository's tables with
                                       ids and paths prefixed `<name>/`, plus the links; a
                                       `Graph` opens it like any store
    DIR/src/<name>                     a link to each repository (where the graph reads source)
    DIR/.lock                          the writer lock (one `catalog index` at a time)

A repository keeps its own store (default `REPO/.ctxframe/graph`); the catalog only reads it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import asdict, dataclass, field

from ctxframe._core.config import default_store
from ctxframe._core.errors import BadInput, CtxframeError, RepoNotFound, StoreNotFound

STATE = "catalog.json"
FORMAT = 1
GRAPH = "graph"
SRC = "src"
VIEW_TABLES = ("nodes", "edges", "files")
HTTP_CALLS = "http_calls.parquet"
PACKAGES = "packages.parquet"
LINKS = "links.parquet"
PART = "part-000.parquet"  # a repository's table: its store's parts, this one always there
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_name(name: str) -> str:
    """A repository name: letters, digits, `.`, `_`, `-`; it prefixes every id of the repo."""
    if not isinstance(name, str) or not _NAME.match(name) or name in (".", ".."):
        raise BadInput(
            f"cannot name a repository {name!r}: use letters, digits, '.', '_' or '-' "
            "(pass --name NAME)"
        )
    return name


def is_url(store: str | None) -> bool:
    """A store given as an fsspec URL (`s3://…`, `file://…`, `memory://…`)."""
    return bool(store) and "://" in store


@dataclass
class Repo:
    """One repository of a catalog: its name, where it is, where its store goes, and what the
    last index did (`indexed`: version, tables hash, counts, seconds, error)."""

    name: str
    path: str
    store: str | None = None
    indexed: dict = field(default_factory=dict)

    def store_path(self) -> str:
        """Where the repository's store is (its default place unless the catalog says)."""
        return self.store or default_store(self.path)


@dataclass
class State:
    """The catalog's `catalog.json`: its repositories and the last build."""

    directory: str
    repos: dict[str, Repo] = field(default_factory=dict)
    built: dict = field(default_factory=dict)

    @property
    def path(self) -> str:
        return os.path.join(self.directory, STATE)

    def save(self) -> None:
        """Write catalog.json atomically (paths relative to the catalog when inside it)."""
        os.makedirs(self.directory, exist_ok=True)
        repos = []
        for r in sorted(self.repos.values(), key=lambda r: r.name):
            row = asdict(r)
            row["path"] = _relative(r.path, self.directory)
            if r.store and not is_url(r.store):
                row["store"] = _relative(r.store, self.directory)
            repos.append(row)
        text = json.dumps({"format": FORMAT, "repos": repos, "built": self.built}, indent=2)
        tmp = f"{self.path}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        os.replace(tmp, self.path)

    def add(self, path: str, name: str | None = None, store: str | None = None) -> Repo:
        """Add (or move) a repository; its name defaults to the directory's name."""
        if not os.path.isdir(path):
            raise RepoNotFound(f"{path} is not a directory: pass the root of a source repository")
        real = os.path.realpath(path)
        name = check_name(name or os.path.basename(real.rstrip("/")))
        for other in self.repos.values():
            if other.name != name and os.path.realpath(other.path) == real:
                raise BadInput(f"{path} is already in the catalog as {other.name!r}")
        if store and not is_url(store):
            store = os.path.abspath(store)
        old = self.repos.get(name)
        if old is not None and os.path.realpath(old.path) != real:
            raise BadInput(
                f"the catalog already has a repository named {name!r} ({old.path}): "
                "pass --name NAME"
            )
        self.repos[name] = Repo(name, real, store, old.indexed if old else {})
        return self.repos[name]

    def remove(self, name: str) -> Repo:
        if name not in self.repos:
            raise BadInput(f"no repository named {name!r} in the catalog at {self.directory}")
        return self.repos.pop(name)


def _relative(path: str, directory: str) -> str:
    rel = os.path.relpath(path, directory)
    return path if rel.startswith("..") else rel


def load(directory: str, create: bool = False) -> State:
    """The catalog at `directory`; a new empty one with `create`, else StoreNotFound."""
    directory = os.path.abspath(directory)
    state = State(directory)
    try:
        with open(state.path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        if create:
            return state
        raise StoreNotFound(
            f"no catalog at {directory}: run `ctxframe catalog add PATH --catalog {directory}`"
        ) from None
    except (OSError, ValueError) as exc:
        raise CtxframeError(f"cannot read {state.path} ({exc}): fix or remove it") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CtxframeError(f"{state.path} is not a catalog of format {FORMAT}: remove it")
    for row in data.get("repos") or []:
        path = os.path.normpath(os.path.join(directory, row["path"]))
        store = row.get("store")
        if store and not is_url(store):
            store = os.path.normpath(os.path.join(directory, store))
        state.repos[row["name"]] = Repo(row["name"], path, store, row.get("indexed") or {})
    state.built = data.get("built") or {}
    return state


def view_dir(directory: str, table: str, name: str) -> str:
    """The Hive partition of one repository in one view table."""
    return os.path.join(directory, table, f"repo={name}")


def view_parts(directory: str, table: str, name: str) -> list[str]:
    """The files of one repository's partition of a view table, in order."""
    folder = view_dir(directory, table, name)
    try:
        names = sorted(f for f in os.listdir(folder) if f.startswith("part-"))
    except FileNotFoundError:
        return []
    return [os.path.join(folder, f) for f in names]


def graph_dir(directory: str) -> str:
    return os.path.join(directory, GRAPH)


def src_dir(directory: str) -> str:
    return os.path.join(directory, SRC)


def is_catalog(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, STATE))


def put_file(write, final: str) -> None:
    """Write a file through `write(tmp)` and move it into place atomically (readers of the
    directory skip the `.…tmp` name meanwhile)."""
    folder, base = os.path.split(final)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{base}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    try:
        write(tmp)
        os.replace(tmp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)

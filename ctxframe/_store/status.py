"""`status`: is the store fresh against git HEAD and the working tree, and what changed."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

import polars as pl

from ctxframe._core.config import find_root, load_config
from ctxframe._core.safeio import NotRegular, read_regular
from ctxframe._ingest.walk import walk
from ctxframe._render.html import render
from ctxframe._store import tables as _store
from ctxframe._store.githead import git_head


@dataclass
class Status:
    """Freshness of a store: HEAD then and now, and files added, modified and deleted since."""

    root: str
    store: str
    indexed_at: str | None
    indexed_head: str | None
    head: str | None
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def fresh(self) -> bool:
        return not (self.added or self.modified or self.deleted) and self.head == self.indexed_head

    def to_dict(self) -> dict:
        return {"verb": "status", "status": "ok", **self.__dict__, "fresh": self.fresh}

    def _summary(self) -> str:
        at = f" at {self.head[:10]}" if self.head else " (not a git repository)"
        if self.fresh:
            return f"indexed {self.indexed_at}{at}, no changes"
        moved = (
            f" · HEAD moved {str(self.indexed_head)[:10]} → {str(self.head)[:10]}"
            if self.head != self.indexed_head
            else ""
        )
        return (
            f"indexed {self.indexed_at}{moved} · {len(self.added)} added, "
            f"{len(self.modified)} modified, {len(self.deleted)} deleted — run `ctxframe index`"
        )

    def _repr_html_(self) -> str:
        changes = [
            (tag, p)
            for tag, paths in (("A", self.added), ("M", self.modified), ("D", self.deleted))
            for p in paths
        ]
        return render(
            "status", fresh=self.fresh, root=self.root, summary=self._summary(), changes=changes
        )

    def __str__(self) -> str:
        if self.fresh:
            return f"fresh: {self._summary()}"
        lines = [f"stale: {self._summary()}"]
        for tag, paths in (("A", self.added), ("M", self.modified), ("D", self.deleted)):
            lines += [f"  {tag} {p}" for p in paths[:50]]
            if len(paths) > 50:
                lines.append(f"  … {len(paths) - 50} more {tag}")
        return "\n".join(lines)


def status(path: str, store: str | None = None) -> Status:
    """Compare the store with the working tree: stat first, then content hash, as git does."""
    root = os.path.realpath(path) if store else find_root(path)  # from a sub-directory too
    store = os.path.abspath(store) if store else _store.default_store(root)
    snap = _store.Snapshot(store)
    snap.verify_all()  # a damaged store is not fresh: StoreCorrupt names the fix
    meta = snap.meta
    all_stored = snap.read("files")
    stored = all_stored.filter(pl.col("hash").is_not_null())
    exclude = list(load_config(root).exclude)
    rel_store = os.path.relpath(store, root)
    if not rel_store.startswith(".."):
        exclude.append(f"/{rel_store}/")
    walked = walk(root, exclude)
    now = pl.DataFrame(
        walked.files,
        schema={"path": pl.String, "size": pl.Int64, "mtime_ns": pl.Int64},
        orient="row",
    )
    # what the walk skipped (symlinks, unreadable directories) is there, not deleted
    seen = pl.concat([now.select("path"), pl.DataFrame({"path": [p for p, _ in walked.skipped]},
                                                       schema={"path": pl.String})])  # fmt: skip
    all_stored = all_stored.select("path")
    added = now.join(all_stored, on="path", how="anti")["path"].to_list()
    deleted = all_stored.join(seen, on="path", how="anti")["path"].to_list()
    both = now.join(stored, on="path", how="inner", suffix="_old")
    touched = both.filter(
        (pl.col("size") != pl.col("size_old")) | (pl.col("mtime_ns") != pl.col("mtime_ns_old"))
    )
    modified = []
    for p, h in touched.select("path", "hash").iter_rows():
        try:
            data = read_regular(os.path.join(root, p))  # a FIFO put in its place never blocks
        except NotRegular:
            modified.append(p)
            continue
        except OSError:
            deleted.append(p)
            continue
        if hashlib.blake2b(data, digest_size=16).hexdigest() != h:
            modified.append(p)
    return Status(
        root=root,
        store=store,
        indexed_at=meta.get("indexed_at"),
        indexed_head=meta.get("git_head"),
        head=git_head(root),
        added=sorted(added),
        modified=sorted(modified),
        deleted=sorted(deleted),
    )

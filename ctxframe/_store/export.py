"""`ctxframe export DIR`: the contract tables of one store version as one file per table, for
dashboards and tools that want `nodes.csv` rather than a versioned store directory.

Each file is written under a temporary name and renamed into place, so a reader of DIR sees a
table whole or not at all; the tables come from one pinned version, read and verified as every
verb reads them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import polars as pl

from ctxframe._core.errors import BadInput
from ctxframe._ingest.redact import redact_frame
from ctxframe._store.tables import CONTRACT, Snapshot

FORMATS = ("parquet", "csv", "ndjson")


@dataclass
class Exported:
    """What one export wrote: a file per table, with its row count."""

    directory: str
    format: str
    version: str | None
    tables: list[tuple[str, str, int]] = field(default_factory=list)  # name, path, rows

    def to_dict(self) -> dict:
        return {
            "verb": "export",
            "status": "ok",
            "directory": self.directory,
            "format": self.format,
            "version": self.version,
            "tables": [{"name": n, "path": p, "rows": r} for n, p, r in self.tables],
        }

    def __str__(self) -> str:
        rows = ", ".join(f"{n} {r:,}" for n, _, r in self.tables)
        return f"exported {len(self.tables)} tables as {self.format} to {self.directory}: {rows}"


def _write(frame: pl.DataFrame, path: str, fmt: str) -> None:
    if fmt == "parquet":
        frame.write_parquet(path)
    elif fmt == "csv":
        frame.write_csv(path)
    else:
        frame.write_ndjson(path)


def export(snap: Snapshot, directory: str, fmt: str = "parquet") -> Exported:
    """Write the pinned version's contract tables (docs/schema.md) to `directory/<table>.<fmt>`."""
    if fmt not in FORMATS:
        raise BadInput(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise BadInput(f"{directory} is a file: give a directory to export into")
    os.makedirs(directory, exist_ok=True)
    out = Exported(os.path.abspath(directory), fmt, snap.version)
    for name in CONTRACT:
        frame = redact_frame(snap.read(name))  # a store of an older ctxframe: masked on the way out
        path = os.path.join(out.directory, f"{name}.{fmt}")
        tmp = os.path.join(out.directory, f".{name}.{fmt}.tmp-{os.getpid()}")
        try:
            _write(frame, tmp, fmt)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        out.tables.append((name, path, frame.height))
    return out

"""A node's source text, read from the working tree and checked against the content hash the
index recorded: quoted as is when the file is unchanged; re-read and re-located by its
signature (and flagged) when it changed; not quoted (and flagged) when it is gone or the
definition is no longer found. Never a silent misquote, never a secret's value
(`ctxframe._ingest.redact`, with the rules of the file's kind)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import polars as pl

from ctxframe._core.safeio import read_regular
from ctxframe._ingest.redact import redact_text

MAX_BYTES = 4 * 1024 * 1024

OK = "ok"  # the file is as indexed
MOVED = "changed"  # the file changed since indexing; the definition was found again
GONE = "stale"  # the file changed or vanished; nothing is quoted
NONE = "no-source"  # the node has no file span (an import stub, an unknown root)


@dataclass(frozen=True)
class Span:
    """The lines of a node as found now: ``lines`` from line ``first``; ``status`` is one of
    ``ok``, ``changed``, ``stale``, ``no-source``; ``note`` says what happened when not ok."""

    status: str
    lines: tuple[str, ...] = ()
    first: int = 0
    note: str | None = None


def content_hash(data: bytes) -> str:
    """The index's file hash: BLAKE2b, 16-byte digest, hex (as `ctxframe._ingest.extract`)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _split(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


class SourceReader:
    """Reads node spans from one repository root, each file once, checked against ``files``
    (the store's table: ``path`` and ``hash``)."""

    def __init__(self, root: str | None, files: pl.DataFrame):
        self.root = root if root and os.path.isdir(root) else None
        self._files = files
        self._hashes: dict[str, str | None] = {}
        self._cache: dict[str, tuple[str, list[str] | None]] = {}

    def _indexed_hashes(self, paths: list[str]) -> None:
        todo = [p for p in dict.fromkeys(paths) if p not in self._hashes]
        if not todo:
            return
        rows = self._files.filter(pl.col("path").is_in(todo)).select("path", "hash")
        found = dict(rows.iter_rows())
        for p in todo:
            self._hashes[p] = found.get(p)

    def prefetch(self, paths: list[str]) -> None:
        """Look up the indexed hashes of many paths in one filter."""
        self._indexed_hashes([p for p in paths if p])

    def _read(self, path: str) -> tuple[str, list[str] | None]:
        """(state, lines): state ``same``, ``changed``, ``unverified`` or ``missing``."""
        if path in self._cache:
            return self._cache[path]
        self._indexed_hashes([path])
        full = os.path.join(self.root, path) if self.root else None
        try:
            if full is None:
                raise FileNotFoundError
            data = read_regular(full, MAX_BYTES + 1)  # a FIFO in its place is refused at once
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            out: tuple[str, list[str] | None] = ("missing", None)
        else:
            want = self._hashes.get(path)
            if want is None:
                state = "unverified"
            else:
                state = "same" if content_hash(data) == want else "changed"
            # what is quoted never holds a secret (the hash above is of the bytes as they are)
            out = (state, _split(redact_text(text, path)))
        self._cache[path] = out
        return out

    def span(self, row: dict) -> Span:
        """The current lines of a node row (``path``, ``line_start``, ``line_end``,
        ``signature``)."""
        path, start, end = row.get("path"), row.get("line_start"), row.get("line_end")
        if not path or start is None:
            return Span(NONE)
        if self.root is None:
            return Span(NONE, note="the repository root is not available: source not quoted")
        end = start if end is None else end
        state, lines = self._read(path)
        if lines is None:
            return Span(GONE, note=f"{path} is missing or unreadable now: source not quoted")
        if state == "same":
            return Span(OK, tuple(lines[start - 1 : end]), start)
        if state == "unverified":
            return Span(
                MOVED,
                tuple(lines[start - 1 : end]),
                start,
                note=f"{path} has no indexed hash: quoted from the file as it is now",
            )
        new = _relocate(lines, row.get("signature"), start)
        if new is None:
            return Span(
                GONE,
                note=f"{path} changed since indexing and the definition was not found in it: "
                "source not quoted (run `ctxframe index`)",
            )
        length = end - start
        where = "same line" if new == start else f"now at L{new}"
        return Span(
            MOVED,
            tuple(lines[new - 1 : new + length]),
            new,
            note=f"{path} changed since indexing: re-read, definition found by its signature "
            f"({where}; indexed L{start}); its extent may differ (run `ctxframe index`)",
        )


def _relocate(lines: list[str], signature: str | None, start: int) -> int | None:
    """The 1-based line nearest ``start`` whose text begins with the signature's first line."""
    sig = (signature or "").split("\n", 1)[0].strip()
    if not sig:
        return None
    probe = sig[:120]
    best = None
    for i, line in enumerate(lines, 1):
        if line.strip().startswith(probe) and (best is None or abs(i - start) < abs(best - start)):
            best = i
    return best

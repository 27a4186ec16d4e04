"""The card cache: what `card` reads, inside the store version it was built from
(`STORE/v-…/cache/`), so a fresh `ctxframe card` answers without importing Polars.

* `card.sqlite`, a small SQLite database: one row per node (its row number in `nodes`), its id,
  kind and the names a symbol lookup tries (qualified name, label, lower-cased label), each
  indexed, and where its payload is;
* `card.blobs`: per node, its payload: JSON of its row and its 1-hop arrows in display order
  (the other end of an arrow named by its node row), packed in zlib-compressed blocks of about
  64 KiB, with a BLAKE2b digest of each block kept in the database;
* `card.json`: the format, the ctxframe version, the version directory it was built for
  (a cache copied from another version is not this one's), the database's size and SHA-256
  and the payload file's size and SHA-256.

Every file is opened without blocking and refused unless it is a regular file (a FIFO in its
place never hangs a reader). A reader checks the whole database against its record and opens
the checked bytes in memory (`sqlite3` deserialize); each block it reads is checked against
its digest. A missing, stale or damaged cache is None (or `Damaged` on a payload read), and
the caller takes the normal path. Writes are best effort and atomic per file, the record last.

Reading must not import Polars (the cold CLI imports this module); building does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import zlib
from typing import TYPE_CHECKING

from ctxframe._core.safeio import open_regular, read_regular

if TYPE_CHECKING:
    import sqlite3

    import polars as pl

FORMAT = 5  # bump when the tables change
FILE = "card.sqlite"
BLOBS = "card.blobs"
KEY = "card.json"
_DIR = "cache"
_DIGEST = 16
BLOCK = 1 << 16  # payloads are compressed in blocks of about this many bytes
# an arrow as stored: `other` is the other end's node row (its id, display label and kind are
# that node's), `other_id` and `other_label` are kept only for an end that is not a node
PACKED_COLS = ("direction", "edge_kind", "confidence", "other", "other_id", "other_label",
               "line", "via")  # fmt: skip


class Damaged(Exception):
    """A payload does not match its digest."""


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def _head(version: str) -> dict:
    from ctxframe._core.version import __version__

    name = os.path.basename(os.path.normpath(version))
    return {"format": FORMAT, "ctxframe_version": __version__, "version": name}


def version_dir(store: str) -> str | None:
    """The directory of the store's current version (None when the pointer is missing or odd:
    the normal path says what is wrong)."""
    ptr = os.path.join(store, "current")
    try:
        target = os.readlink(ptr)
    except OSError:
        try:  # a one-line file where symlinks are not allowed (a FIFO is refused at once)
            target = read_regular(ptr, 4096).decode("utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
    name = os.path.basename(target.rstrip("/"))
    if not name.startswith("v-") or "/" in target.rstrip("/").removeprefix("./"):
        return None
    return os.path.join(store, name)


class CardCache:
    """An opened card cache: `db` (the checked database, in memory) and `payload(row)`."""

    def __init__(self, db: sqlite3.Connection, blobs: int):
        self.db, self._blobs = db, blobs
        self._read: dict[int, bytes] = {}

    def payload(self, row: int) -> dict:
        """A node's `{"node": ..., "arrows": ...}`, its block checked against its digest."""
        block, start, size = self.db.execute(
            "SELECT block, start, len FROM card WHERE row = ?", (row,)
        ).fetchone()
        if block not in self._read:
            off, n, want = self.db.execute(
                "SELECT off, len, digest FROM block WHERE block = ?", (block,)
            ).fetchone()
            data = os.pread(self._blobs, n, off)
            if len(data) != n or digest(data) != want:
                raise Damaged(f"card payload block {block}")
            self._read[block] = zlib.decompress(data)
        return json.loads(self._read[block][start : start + size])

    def close(self) -> None:
        self.db.close()
        with contextlib.suppress(OSError):
            os.close(self._blobs)


def open_cache(version: str | None) -> CardCache | None:
    """The card cache of a version, its database checked against its record; None when
    absent, of another format or version, or damaged."""
    import sqlite3

    if version is None:
        return None
    d = os.path.join(version, _DIR)
    try:
        key = json.loads(read_regular(os.path.join(d, KEY), 1 << 20))
        if not isinstance(key, dict) or {k: key.get(k) for k in _head(version)} != _head(version):
            return None
        data = read_regular(os.path.join(d, FILE))
        blobs = open_regular(os.path.join(d, BLOBS))
    except (OSError, ValueError):
        return None
    ok = (
        isinstance(key, dict)
        and len(data) == key.get("size")
        and os.fstat(blobs).st_size == key.get("blobs_size")
        and hashlib.sha256(data).hexdigest() == key.get("sha256")
    )
    try:
        if ok:
            db = sqlite3.connect(":memory:")
            db.deserialize(data)
            return CardCache(db, blobs)
    except sqlite3.Error:
        pass
    os.close(blobs)
    return None


def intact(version: str | None) -> bool:
    """The whole cache (payloads included) matches its record: what a writer checks before
    keeping a cache a reader found fault with."""
    cache = open_cache(version)
    if cache is None:
        return False
    try:
        want = json.loads(read_regular(os.path.join(version, _DIR, KEY), 1 << 20)).get(
            "blobs_sha256"
        )
        size = os.fstat(cache._blobs).st_size
        return hashlib.sha256(os.pread(cache._blobs, size, 0)).hexdigest() == want
    except (OSError, ValueError, AttributeError):
        return False
    finally:
        cache.close()


def _blocks(payloads: list[str]) -> tuple[list[bytes], list[tuple[int, int, int]]]:
    """Payloads packed into blocks of about `BLOCK` bytes, each compressed: the blocks and,
    per payload, (block, start, length) in its block's uncompressed bytes."""
    blocks, spans, current, used = [], [], [], 0
    for text in payloads:
        data = text.encode()
        spans.append((len(blocks), used, len(data)))
        current.append(data)
        used += len(data)
        if used >= BLOCK:
            blocks.append(zlib.compress(b"".join(current), 1))
            current, used = [], 0
    if current:
        blocks.append(zlib.compress(b"".join(current), 1))
    return blocks, spans


def build(version: str | None, nodes: pl.DataFrame, arrows: pl.DataFrame) -> None:
    """Write the card cache of a version. `nodes` is the version's nodes table; `arrows`
    every node's 1-hop arrows in display order (`seq`): the node's row (`row`), `direction`,
    `edge_kind`, `confidence`, `line`, and the other end as a node row (`other`) when it is a
    node, else as `other_id` and `other_label`."""
    import sqlite3

    import polars as pl

    if version is None:
        return
    resolved = pl.col("other").is_not_null()
    per_node = (
        arrows.sort("row", "seq")
        .with_columns(
            other_id=pl.when(resolved).then(None).otherwise("other_id"),
            other_label=pl.when(resolved).then(None).otherwise("other_label"),
        )
        .group_by("row", maintain_order=True)
        .agg(*[pl.col(c) for c in PACKED_COLS])
        .select("row", arrows=pl.struct(*PACKED_COLS))
    )
    rows = (
        nodes.select(
            "id",
            "kind",
            "qualname",
            "label",
            low=pl.col("label").str.to_lowercase(),
            node=pl.struct(pl.all()),
        )
        .with_row_index("row")
        .join(per_node, on="row", how="left")
        .select(
            "row",
            "id",
            "kind",
            "qualname",
            "label",
            "low",
            payload=pl.struct("node", "arrows").struct.json_encode(),
        )
    )
    blocks, spans = _blocks(rows["payload"].to_list())
    sizes = [len(b) for b in blocks]
    offsets = [0] * len(sizes)
    for i in range(1, len(sizes)):
        offsets[i] = offsets[i - 1] + sizes[i - 1]
    cols = [rows[c].to_list() for c in ("row", "id", "kind", "qualname", "label", "low")]
    records = (
        (*fields, *span) for *fields, span in zip(*cols, spans, strict=True)
    )
    block_rows = zip(range(len(blocks)), offsets, sizes, map(digest, blocks), strict=True)
    d = os.path.join(version, _DIR)
    tmps = [os.path.join(d, f".{n}.{os.getpid()}.tmp") for n in (FILE, BLOBS, KEY)]
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(d)  # never makedirs: a version removed meanwhile must stay removed
        con = sqlite3.connect(":memory:")
        con.execute(
            "CREATE TABLE card (row INTEGER PRIMARY KEY, id TEXT NOT NULL, kind TEXT, "
            "qualname TEXT, label TEXT, low TEXT, block INTEGER NOT NULL, "
            "start INTEGER NOT NULL, len INTEGER NOT NULL)"
        )
        con.execute(
            "CREATE TABLE block (block INTEGER PRIMARY KEY, off INTEGER NOT NULL, "
            "len INTEGER NOT NULL, digest BLOB NOT NULL)"
        )
        con.executemany("INSERT INTO card VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", records)
        con.executemany("INSERT INTO block VALUES (?, ?, ?, ?)", block_rows)
        for col in ("id", "qualname", "label", "low"):
            con.execute(f"CREATE INDEX card_{col} ON card ({col})")
        con.commit()
        data = con.serialize()
        con.close()
        with open(tmps[1], "wb") as fh:
            for b in blocks:
                fh.write(b)
        with open(tmps[0], "wb") as fh:
            fh.write(data)
        key = {
            **_head(version),
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "blobs_size": sum(sizes),
            "blobs_sha256": hashlib.sha256(b"".join(blocks)).hexdigest(),
        }
        with open(tmps[2], "w", encoding="utf-8") as fh:
            json.dump(key, fh, sort_keys=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(d, KEY))  # no record while the two files are replaced
        os.replace(tmps[1], os.path.join(d, BLOBS))
        os.replace(tmps[0], os.path.join(d, FILE))
        os.replace(tmps[2], os.path.join(d, KEY))
    except (OSError, sqlite3.Error):
        for tmp in tmps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

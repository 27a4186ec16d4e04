"""Tables stored as Parquet datasets in parts: rows go to a part by the range their file path
falls in, so an edit to one file rewrites the parts holding that file and every other part is
carried over as it was.

The part key is a sorted list of path bounds, chosen when a repository is indexed whole (from
the files table: parsed source bytes split into parts of about PART_BYTES, at most MAX_PARTS)
and kept by every later edit, so a path's part stays put. Part `i` holds the rows whose key
`k` has `bounds[i-1] <= k < bounds[i]`; the key is the path itself, or a node id (which
starts with its file's path) in the tables sorted by it, so that the parts read in order
are the whole table in order. Part 0 always exists, empty or not; other parts only when
they hold rows. The bounds are recorded in the version's meta.json (`part_bounds`).
"""

from __future__ import annotations

from itertools import pairwise

import polars as pl

# stored as NAME/part-NNN (`commits` and `changes`, the git history, in one part each)
DATASETS = ("nodes", "edges", "files", "tokens", "vocab", "refs", "commits", "changes")
RANGED = {"nodes": "id", "edges": "src"}  # sorted by this key: parts are slices
PLACED = {"refs": "path"}  # unordered: rows placed by their path
PART_BYTES = 2 << 20  # parsed source bytes per part: one part for a small repository
MAX_PARTS = 64  # tens of parts for the largest trees, not thousands of tiny files


def rel(name: str, part: int = 0) -> str:
    """A part's file inside its version directory."""
    return f"{name}/part-{part:03d}.parquet"


def number(rel: str) -> int:
    """The part number of a part file's name."""
    return int(rel.rsplit("part-", 1)[1].split(".", 1)[0])


def bounds_for(files: pl.DataFrame) -> list[str]:
    """Part bounds for a repository: the paths where its parsed source bytes cross each
    part's share (none for a repository smaller than two parts)."""
    code = files.filter(pl.col("language").is_not_null() & pl.col("skip_reason").is_null())
    code = code.select("path", "size").sort("path")
    total = int(code["size"].sum() or 0)
    n = min(MAX_PARTS, total // PART_BYTES)
    if n < 2:
        return []
    cum = code["size"].cum_sum()
    at = cum.search_sorted(pl.Series([total * i // n for i in range(1, n)]), side="left")
    return code["path"].gather(at.clip(upper_bound=code.height - 1)).unique().sort().to_list()


def choose(old: list[str] | None, files: pl.DataFrame) -> list[str]:
    """The part key for a version written whole: the previous one while its part count
    stays within a factor of two of what the repository now calls for (so parts stay put),
    else a new one."""
    new = bounds_for(files)
    if old is not None and (len(new) + 1) / 2 <= len(old) + 1 <= 2 * (len(new) + 1):
        return old
    return new


def part_of(bounds: list[str], keys: pl.Series) -> pl.Series:
    """The part each key (a path, or a node id) belongs to."""
    edges = pl.Series(bounds, dtype=pl.String)
    return edges.search_sorted(keys, side="right").cast(pl.UInt16).rename("part")


def mapping(bounds: list[str], files: pl.DataFrame) -> pl.DataFrame:
    """(path, part) for every file: joined to a table's rows to place them."""
    return files.select("path").with_columns(part_of(bounds, files["path"]))


def split(name: str, frame: pl.DataFrame, bounds: list[str]) -> dict[int, pl.DataFrame]:
    """A whole table as its parts: part 0 (always, so a table has a first file) and those
    holding rows. A sorted table is cut into slices, without a copy."""
    if not bounds or (name not in RANGED and name not in PLACED):
        return {0: frame}
    if name in RANGED:
        keys = frame[RANGED[name]]
        cuts = keys.search_sorted(pl.Series(bounds, dtype=pl.String), side="left").to_list()
        at = [0, *cuts, frame.height]
        out = {i: frame.slice(lo, hi - lo) for i, (lo, hi) in enumerate(pairwise(at))}
        out = {i: f for i, f in out.items() if f.height or not i}
    else:
        placed = frame.with_columns(part_of(bounds, frame[PLACED[name]]).alias("_part"))
        out = {
            int(k[0]): df.drop("_part")
            for k, df in placed.partition_by("_part", as_dict=True, maintain_order=True).items()
        }
    return {0: frame.clear(), **out}

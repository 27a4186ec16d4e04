"""Frames sorted by an integer key, so the solver's rounds read the rows of a few keys by
binary search (`search_sorted`) instead of joining against whole tables: a round costs what
its new pairs touch, not what the repository holds."""

from __future__ import annotations

import polars as pl

SEED = 0x5EED


def pair(a: str | pl.Expr, b: str | pl.Expr) -> pl.Expr:
    """One integer key for two (a composite join key)."""
    a = pl.col(a) if isinstance(a, str) else a
    b = pl.col(b) if isinstance(b, str) else b
    return pl.struct(a.alias("a"), b.alias("b")).hash(SEED)


class Index:
    """`frame` sorted by integer column `key`."""

    def __init__(self, frame: pl.DataFrame, key: str):
        self.key = key
        self.frame = frame.sort(key)
        self.keys = self.frame[key].set_sorted()

    @property
    def height(self) -> int:
        return self.frame.height

    def take(self, keys: pl.Series) -> pl.DataFrame:
        """The rows whose key is one of `keys` (two Polars calls: the positions, the rows)."""
        if self.frame.height == 0 or keys.len() == 0:
            return self.frame.clear()
        sorted_, wanted = pl.lit(self.keys), pl.lit(keys).unique()
        idx = pl.select(
            pl.int_ranges(
                sorted_.search_sorted(wanted, side="left"),
                sorted_.search_sorted(wanted, side="right"),
            )
            .explode()
            .drop_nulls()
        ).to_series()
        return self.frame[idx]


class Growing:
    """An index rows are added to: new rows wait in a small unsorted tail (read with one
    filter), then join sorted runs that merge as they pile up (each row is sorted again only
    O(log n) times)."""

    TAIL = 50_000

    def __init__(self, frame: pl.DataFrame, key: str):
        self.key = key
        self.schema = frame.schema
        self.runs: list[Index] = [Index(frame, key)] if frame.height else []
        self.tail = pl.DataFrame(schema=self.schema)

    @property
    def height(self) -> int:
        return sum(r.height for r in self.runs) + self.tail.height

    def add(self, frame: pl.DataFrame) -> None:
        if frame.height == 0:
            return
        self.tail = pl.concat([self.tail, frame.select(list(self.schema)).cast(self.schema)])
        if self.tail.height < self.TAIL:
            return
        run = Index(self.tail, self.key)
        self.tail = self.tail.clear()
        while self.runs and self.runs[-1].height <= 2 * run.height:
            run = Index(pl.concat([self.runs.pop().frame, run.frame]), self.key)
        self.runs.append(run)

    def take(self, keys: pl.Series) -> pl.DataFrame:
        if keys.len() == 0:
            return self.tail.clear()
        parts = [r.take(keys) for r in self.runs]
        if self.tail.height:
            parts.append(self.tail.filter(pl.col(self.key).is_in(keys.implode())))
        if not parts:
            return self.tail.clear()
        return pl.concat(parts) if len(parts) > 1 else parts[0]

    def all(self) -> pl.DataFrame:
        return pl.concat([r.frame for r in self.runs] + [self.tail])


class Dispatch:
    """Several tables keyed by a node column, looked up at once: one binary search per
    round for all the rules that read the new pairs' nodes."""

    def __init__(self, tables: dict[str, tuple[pl.DataFrame, str]]):
        self.names = list(tables)
        self.frames = [frame for frame, _ in tables.values()]
        parts = [
            frame.select(node=pl.col(col)).with_row_index("row").with_columns(t=pl.lit(i, pl.Int8))
            for i, (frame, col) in enumerate(tables.values())
        ]
        self.index = Index(pl.concat(parts).filter(pl.col("node").is_not_null()), "node")

    def take(self, keys: pl.Series) -> dict[str, pl.DataFrame]:
        """Per table with rows for `keys`: those rows."""
        hits = self.index.take(keys)
        if hits.is_empty():
            return {}
        out = {}
        for (t,), group in hits.partition_by("t", as_dict=True).items():
            out[self.names[t]] = self.frames[t][group["row"]]
        return out

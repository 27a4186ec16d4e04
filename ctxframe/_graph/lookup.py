"""Find nodes by name: id, qualified name, `path::name`, label — through hash indexes built once,
never a scan per call; and the closest names (trigram Dice) when nothing matches."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl


@dataclass(frozen=True)
class Match:
    """How a name matched: the node ids, and which index found them."""

    ids: list[str]
    how: str  # id | qualname | label | label-nocase | none


class SymbolIndex:
    """Hash lookups from every way a user names a node to node ids."""

    def __init__(self, nodes: pl.DataFrame):
        self._nodes = nodes
        ids = nodes["id"].to_list()
        self._ids = set(ids)
        self._by_qual = self._group(nodes, "qualname")
        self._by_label = self._group(nodes, "label")
        self._by_lower = self._group(
            nodes.with_columns(pl.col("label").str.to_lowercase()), "label"
        )
        self._labels: pl.DataFrame | None = None

    @staticmethod
    def _group(nodes: pl.DataFrame, col: str) -> dict[str, list[str]]:
        g = nodes.filter(pl.col(col).is_not_null()).group_by(col).agg(pl.col("id").sort())
        return dict(zip(g[col].to_list(), g["id"].to_list(), strict=True))

    def find(self, name: str) -> Match:
        """Ids the name stands for: an exact id wins, then qualified name, then label."""
        name = name.strip()
        if name in self._ids:
            return Match([name], "id")
        if "::" in name:  # path::Qual.Name with a partial path
            path, _, qual = name.rpartition("::")
            ids = [i for i in self._by_qual.get(qual, []) if i.split("::", 1)[0].endswith(path)]
            if ids:
                return Match(ids, "qualname")
        for index, how in ((self._by_qual, "qualname"), (self._by_label, "label")):
            if name in index:
                return Match(index[name], how)
        if name.lower() in self._by_lower:
            return Match(self._by_lower[name.lower()], "label-nocase")
        return Match([], "none")

    def suggest(self, name: str, k: int = 5) -> list[str]:
        """The `k` labels closest to `name` by trigram Sørensen–Dice, as a join, best first."""
        if self._labels is None:
            labels = self._nodes.select(pl.col("label").drop_nulls().unique()).with_columns(
                low=pl.col("label").str.to_lowercase()
            )
            self._labels = (
                labels.with_columns(
                    tri=pl.int_ranges(0, (pl.col("low").str.len_chars() - 2).clip(lower_bound=1))
                )
                .explode("tri")
                .with_columns(tri=pl.col("low").str.slice(pl.col("tri"), 3))
                .unique(["label", "tri"])
                .with_columns(n=pl.len().over("label"))
            )
        q = name.lower()
        qtri = {q[i : i + 3] for i in range(max(1, len(q) - 2))}
        scores = (
            self._labels.filter(pl.col("tri").is_in(list(qtri)))
            .group_by("label", "n")
            .len("shared")
            .with_columns(dice=2 * pl.col("shared") / (pl.col("n") + len(qtri)))
            .sort(["dice", "label"], descending=[True, False])
            .head(k)
        )
        return scores["label"].to_list()

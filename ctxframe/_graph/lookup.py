"""Find nodes by name: id, qualified name, `path::name`, label — through hash indexes built once,
never a scan per call; and the closest names when nothing matches (a typo, a wrong case)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ctxframe._core.frames import changed_rows
from ctxframe._rank.tokens import tokenize


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
        self._bigrams: pl.DataFrame | None = None

    def patched(self, nodes: pl.DataFrame) -> SymbolIndex:
        """This index for another version's `nodes`: only the names whose nodes changed are
        looked up again (this index's dictionaries are copied, never changed)."""
        cols = ["id", "qualname", "label"]
        both = changed_rows(self._nodes.select(cols), nodes.select(cols))
        out = SymbolIndex.__new__(SymbolIndex)
        out._nodes, out._labels, out._bigrams = nodes, None, None
        lower = pl.col("label").str.to_lowercase()
        quals, labels = both["qualname"].drop_nulls().unique(), both["label"].drop_nulls().unique()
        lowers = labels.str.to_lowercase().unique()
        ids = both["id"].unique()
        rows = nodes.filter(
            pl.col("id").is_in(ids.implode())
            | pl.col("qualname").is_in(quals.implode())
            | pl.col("label").is_in(labels.implode())
            | lower.is_in(lowers.implode())
        )
        out._ids = (self._ids - set(ids.to_list())) | set(
            rows.filter(pl.col("id").is_in(ids.implode()))["id"].to_list()
        )
        for attr, frame, col, keys in (
            ("_by_qual", rows, "qualname", quals),
            ("_by_label", rows, "label", labels),
            ("_by_lower", rows.with_columns(lower), "label", lowers),
        ):
            index = dict(getattr(self, attr))
            for key in keys.to_list():
                index.pop(key, None)
            index.update(self._group(frame.filter(pl.col(col).is_in(keys.implode())), col))
            setattr(out, attr, index)
        return out

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
        """The `k` labels closest to `name`, best first (see `suggest_ids`)."""
        return [label for label, _ in self.suggest_ids(name, k)]

    def suggest_ids(self, name: str, k: int = 5) -> list[tuple[str, str]]:
        """The `k` labels closest to `name` with the node each stands for, best first.

        Case is folded. Candidates share a character pair with `name` (a join over a bigram
        table built once) or contain it; they are ordered by edit distance with adjacent swaps
        (`clinet` is one edit from `Client`), a containing label counting as one edit, then
        classes and functions before other kinds, then by how many pairs they share. Only
        names within a few edits are offered (none rather than noise)."""
        q = " ".join(name.lower().split())
        if len(q) < 2:
            return []
        table = self._bigram_table()
        qgrams = list({q[i : i + 2] for i in range(len(q) - 1)})
        pool = (
            table.filter(pl.col("gram").is_in(qgrams))
            .group_by("label", "low", "id", "rank")
            .len("shared")
            .with_columns(gap=(pl.col("low").str.len_chars() - len(q)).abs())
            .sort(["shared", "gap", "rank", "label"], descending=[True, False, False, False])
            .head(300)
        )
        inside = (
            self._best_nodes()
            .filter(pl.col("low").str.contains(q, literal=True))
            .with_columns(shared=pl.lit(0, pl.UInt32), gap=pl.col("low").str.len_chars() - len(q))
            .sort("gap", "rank", "label")
            .head(50)
        )
        cands = pl.concat([pool, inside.select(pool.columns)]).unique("label", keep="first")
        near = max(2, len(q) // 3)
        # a name of many words is no misspelt label: its words are compared only when few
        qwords = list(dict.fromkeys(tokenize(name)))
        qwords = qwords if len(qwords) <= SUGGEST_WORDS else []
        scored = []
        for label, low, node_id, rank, shared, gap in cands.iter_rows():
            if q in low and q != low:
                d = 1
            elif abs(len(low) - len(q)) <= near:  # else no closer than `near`: not computed
                d = _edit_distance(q, low)
            else:
                d = near + 1
            words = tokenize(label)
            if len(words) > 1 and len(q) <= SUGGEST_CHARS:
                # `clinet` is close to `BaseClient` through its word `client`
                d = min(d, 1 + min(_edit_distance(q, w) for w in words))
                if len(qwords) > 1:  # `RefundProcesor`: each word close to one of the label's
                    per = [min(_edit_distance(qw, w) for w in words) for qw in qwords]
                    if all(x <= max(1, len(qw) // 4) for x, qw in zip(per, qwords, strict=True)):
                        d = min(d, 1 + sum(per))
            if d <= near:
                scored.append((d, rank, -shared, gap, label, node_id))
        scored.sort()
        return [(label, node_id) for *_, label, node_id in scored[:k]]

    def _best_nodes(self) -> pl.DataFrame:
        """One node per label: the one a person most likely means (types, then functions)."""
        if self._labels is None:
            rank = (
                pl.col("kind")
                .replace_strict(_KIND_RANK, default=2, return_dtype=pl.Int8)
                .fill_null(2)
            )
            self._labels = (
                self._nodes.filter(pl.col("label").is_not_null())
                .select("label", "id", rank=rank)
                .sort("rank", "id")
                .unique("label", keep="first")
                .with_columns(low=pl.col("label").str.to_lowercase())
                .select("label", "low", "id", "rank")
            )
        return self._labels

    def _bigram_table(self) -> pl.DataFrame:
        if self._bigrams is None:
            labels = self._best_nodes()
            self._bigrams = (
                labels.with_columns(
                    gram=pl.int_ranges(0, (pl.col("low").str.len_chars() - 1).clip(lower_bound=1))
                )
                .explode("gram")
                .with_columns(gram=pl.col("low").str.slice(pl.col("gram"), 2))
                .unique(["label", "gram"])
            )
        return self._bigrams


SUGGEST_WORDS = 8  # a name of more distinct words than this is not compared word by word
SUGGEST_CHARS = 200  # nor is a name longer than this compared with each word of a label

_KIND_RANK = {
    "class": 0, "struct": 0, "interface": 0, "trait": 0, "enum": 0, "type": 0,
    "function": 1, "method": 1,
    "file": 3, "module": 3, "document": 3, "section": 3,
}  # fmt: skip


def _edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
    adjacent characters each cost one."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]

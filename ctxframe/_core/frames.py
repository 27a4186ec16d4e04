"""Frame helpers every layer uses on sorted tables."""

from __future__ import annotations

import polars as pl


def splice_sorted(rest: pl.DataFrame, key: str, new: pl.DataFrame) -> pl.DataFrame:
    """Sorted `new` rows inserted into sorted `rest`, where no key of one occurs in the other:
    the rows of `rest` keep their order and are sliced, never re-sorted."""
    if new.is_empty():
        return rest
    at = rest[key].search_sorted(new[key], side="left").to_list()
    parts, start, i = [], 0, 0
    while i < len(at):  # one slice of `new` per run of rows going to the same place
        j = i
        while j < len(at) and at[j] == at[i]:
            j += 1
        parts += [rest.slice(start, at[i] - start), new.slice(i, j - i)]
        start, i = at[i], j
    parts.append(rest.slice(start))
    return pl.concat(parts, rechunk=False)

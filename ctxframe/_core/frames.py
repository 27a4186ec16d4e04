"""Frame helpers every layer uses on sorted tables."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl


def string_lists(lists: pl.Expr) -> pl.Expr:
    """A list column as lists of strings even in an empty frame (Polars 1.x types a slice of
    an empty list column as a list of nulls, which `list.join` refuses)."""
    return lists.list.eval(pl.element().cast(pl.String))


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


def spread(rows: pl.DataFrame, at: pl.Expr, ranges: list[list[pl.DataFrame]]) -> None:
    """Append each row of `rows` to the range `at` gives it (an index into `ranges`): a large
    table is gathered in ranges of its sort key and sorted a range at a time (`sort_ranges`)."""
    if len(ranges) == 1:
        ranges[0].append(rows)
        return
    cut = rows.with_columns(at.alias("_range"))
    for (i,), piece in cut.partition_by("_range", as_dict=True, include_key=False).items():
        ranges[i].append(piece)


def sort_ranges(
    ranges: list[list[pl.DataFrame]], by: list[str] | Callable[[pl.DataFrame], pl.DataFrame]
) -> list[pl.DataFrame]:
    """Each range's pieces as one frame sorted by `by` (columns, nulls last, or a function
    that sorts a frame), in range order; a range's pieces are dropped once sorted, so the
    unsorted and the sorted table are never both whole."""
    out = []
    for i, pieces in enumerate(ranges):
        ranges[i] = []
        if pieces:
            frame = pl.concat(pieces)
            out.append(by(frame) if callable(by) else frame.sort(by, nulls_last=True))
    return out


def _common_ends(ha: pl.Series, hb: pl.Series) -> tuple[int, int]:
    """How many leading and trailing positions hold equal hashes in both (an edit changes a
    few ranges of a table and keeps the rest in place)."""
    m = min(ha.len(), hb.len())
    if m == 0:
        return 0, 0
    differ = (ha.head(m) != hb.head(m)).arg_true()
    lead = int(differ[0]) if differ.len() else m
    differ = (ha.tail(m - lead).reverse() != hb.tail(m - lead).reverse()).arg_true()
    trail = int(differ[0]) if differ.len() else m - lead
    return lead, trail


def changed_rows(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """Rows whose count differs between `a` and `b` (either way; each such row at least once),
    found by row hashes; the rows both hold at the same place at either end are left out
    before counting (an index patched for an edit looks up only these)."""
    ha, hb = a.hash_rows(), b.hash_rows()
    lead, trail = _common_ends(ha, hb)
    a, ha = a.slice(lead, a.height - lead - trail), ha.slice(lead, ha.len() - lead - trail)
    b, hb = b.slice(lead, b.height - lead - trail), hb.slice(lead, hb.len() - lead - trail)
    na = ha.value_counts(name="n").rename({ha.name: "h"})
    nb = hb.value_counts(name="n").rename({hb.name: "h"})
    differ = pl.concat(
        [na.join(nb, on=["h", "n"], how="anti"), nb.join(na, on=["h", "n"], how="anti")]
    )["h"].implode()
    return pl.concat([a.filter(ha.is_in(differ)), b.filter(hb.is_in(differ))])

"""`changed_rows`, the row difference indexes are patched by, against a plain multiset count."""

from __future__ import annotations

from collections import Counter

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._core.frames import changed_rows as _changed

row = st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 3))
rows = st.lists(row, max_size=12)


def _frame(items: list[tuple[str, int]]) -> pl.DataFrame:
    return pl.DataFrame(items, schema={"src": pl.String, "line": pl.Int32}, orient="row")


@settings(max_examples=300, deadline=None, database=None)
@given(rows, rows, rows, rows)
def test_changed_rows_are_those_counted_differently(head, old, new, tail) -> None:
    a, b = head + old + tail, head + new + tail  # an edit in the middle, the ends kept
    ca, cb = Counter(a), Counter(b)
    want = sorted(r for r in ca.keys() | cb.keys() if ca[r] != cb[r])
    got = _changed(_frame(a), _frame(b)).unique().rows()
    assert sorted(got) == want

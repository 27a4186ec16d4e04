"""The value-flow solver's indexes: a dense `Rel` finds what binary search finds, and `_Space`
numbers the hashes of its parts as a sorted distinct list does."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._resolve.flow import _Space
from ctxframe._resolve.flow_index import Rel, _starts

keys = st.lists(st.integers(-1, 9), max_size=30)
probes = st.lists(st.integers(-2, 14), max_size=30)


@settings(max_examples=300, deadline=None, database=None)
@given(keys, probes)
def test_dense_find_equals_binary_search(by: list[int], probe: list[int]) -> None:
    by_a = np.array(by, dtype=np.int64)
    rows = np.arange(len(by), dtype=np.int64)
    sparse, dense = Rel(by_a, row=rows), Rel(by_a, dense=10, row=rows)
    p = np.array(probe, dtype=np.int64)
    i, j = sparse.find(p)
    want = sorted(zip(i.tolist(), sparse["row"][j].tolist(), strict=True))
    i, j = dense.find(p)
    got = sorted(zip(i.tolist(), dense["row"][j].tolist(), strict=True))
    # a key of -1 (a null id) is never found through the dense index: no probe asks for it
    assert got == [(a, r) for a, r in want if p[a] >= 0]


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.integers(-3, 14), min_size=1, max_size=40), st.integers(1, 12))
def test_starts_count_the_keys_below_each_id(by: list[int], dense: int) -> None:
    key = np.sort(np.array(by, dtype=np.int64))
    want = np.searchsorted(key, np.arange(dense + 1, dtype=np.int64))
    assert _starts(key, dense).tolist() == want.tolist()


def test_a_few_rows_over_many_ids_keep_no_offsets_and_find_the_same() -> None:
    by = np.array([7, 900_000, 7], dtype=np.int64)
    rel = Rel(by, dense=1_000_000, v=np.array([1, 2, 3], dtype=np.int64))
    assert rel._starts is None
    i, j = rel.find(np.array([7, 5, 900_000], dtype=np.int64))
    assert i.tolist() == [0, 0, 2] and rel["v"][j].tolist() == [1, 3, 2]


def test_dense_rel_forgets_its_index_once_rows_are_added() -> None:
    rel = Rel(np.array([1, 3], dtype=np.int64), dense=4, v=np.array([10, 30], dtype=np.int64))
    rel.add(np.array([2], dtype=np.int64), v=np.array([20], dtype=np.int64))
    i, j = rel.find(np.array([2, 3], dtype=np.int64))
    assert rel["v"][j].tolist() == [20, 30] and i.tolist() == [0, 1]


hashes = st.lists(st.one_of(st.none(), st.integers(0, 2**64 - 1)), max_size=20)


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(hashes, min_size=1, max_size=4))
def test_space_ids_are_positions_in_the_sorted_distinct_hashes(parts: list[list]) -> None:
    series = {f"p{k}": pl.Series(p, dtype=pl.UInt64) for k, p in enumerate(parts)}
    space = _Space(series)
    every = sorted({h for p in parts for h in p if h is not None})
    assert space.hashes.tolist() == every
    for name, part in zip(series, parts, strict=True):
        want = [-1 if h is None else every.index(h) for h in part]
        assert space.of(name).tolist() == want
        assert space.ids(series[name]).tolist() == want

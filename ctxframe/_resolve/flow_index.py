"""Sorted integer arrays for the value-flow solver (ctxframe._resolve.flow): relations keyed by
one int64, joined by binary search (`searchsorted`), grown by merging.

The solver runs tens of rounds of a few dozen small joins each; numpy's cost per call is a
microsecond or two where a Polars operation costs a hundred, so the rounds cost what their
rows do. Ids are dense (`_Space` in ctxframe._resolve.flow); a pair of ids is one key,
`a << 32 | b`, whose order is (a, b)'s: the pairs of one `a` are one run of a sorted array.
"""

from __future__ import annotations

import numpy as np

I64 = np.int64
SHIFT = np.int64(32)
LOW = np.int64((1 << 32) - 1)
EMPTY = np.zeros(0, dtype=I64)


_SORT_ABOVE = 4096  # probes beyond which unsorted ones are sorted first
_DENSE_SHARE = 16  # a relation keeps offsets by id when it has a row per this many ids


def search(a: np.ndarray, probes: np.ndarray, side: str = "left") -> np.ndarray:
    """`np.searchsorted`, with many unsorted probes sorted first: numpy narrows each search
    by the one before when the probes ascend, which keeps a large `a` in cache."""
    if len(probes) <= _SORT_ABOVE or bool((probes[1:] >= probes[:-1]).all()):
        return np.searchsorted(a, probes, side)
    order = np.argsort(probes)  # any order of equal probes: each gets its own answer
    out = np.empty(len(probes), dtype=I64)
    out[order] = np.searchsorted(a, probes[order], side)
    return out


def search_both(
    a: np.ndarray, lo: np.ndarray, hi: np.ndarray, hi_side: str = "left"
) -> tuple[np.ndarray, np.ndarray]:
    """`search(a, lo, "left")` and `search(a, hi, hi_side)` for probes `hi` ordered as `lo`
    (`lo` itself, or `lo` plus a constant): one sort of the probes serves both."""
    if len(lo) <= _SORT_ABOVE or bool((lo[1:] >= lo[:-1]).all()):
        return np.searchsorted(a, lo, "left"), np.searchsorted(a, hi, hi_side)
    order = np.argsort(lo)
    out_lo, out_hi = np.empty(len(lo), dtype=I64), np.empty(len(lo), dtype=I64)
    out_lo[order] = np.searchsorted(a, lo[order], "left")
    out_hi[order] = np.searchsorted(a, hi[order], hi_side)
    return out_lo, out_hi


def pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One key for (a, b), ordered as the pair (both below 2**31)."""
    return (a.astype(I64) << SHIFT) | b.astype(I64)


def high(k: np.ndarray) -> np.ndarray:
    return k >> SHIFT


def low(k: np.ndarray) -> np.ndarray:
    return k & LOW


def expand(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (i, j) with lo[i] <= j < hi[i], by i then j."""
    cnt = hi - lo
    total = int(cnt.sum())
    if total == 0:
        return EMPTY, EMPTY
    i = np.repeat(np.arange(len(lo), dtype=I64), cnt)
    j = np.arange(total, dtype=I64) + np.repeat(lo - (np.cumsum(cnt) - cnt), cnt)
    return i, j


def unique(k: np.ndarray) -> np.ndarray:
    """Sorted distinct keys."""
    if len(k) < 2:
        return k
    k = np.sort(k)
    return k[np.concatenate(([True], k[1:] != k[:-1]))]


def first_of_runs(k: np.ndarray) -> np.ndarray:
    """Where each run of equal values in `k` starts (a mask)."""
    if len(k) == 0:
        return np.zeros(0, dtype=bool)
    return np.concatenate(([True], k[1:] != k[:-1]))


def _starts(key: np.ndarray, dense: int) -> np.ndarray:
    """For each id 0..dense, how many sorted keys are below it (`searchsorted` of every id,
    counted instead of searched: one pass over the keys and one over the ids)."""
    lo, hi = np.searchsorted(key, [0, dense])
    out = np.empty(dense + 1, dtype=I64)
    out[0] = lo
    np.cumsum(np.bincount(key[lo:hi], minlength=dense), out=out[1:])
    out[1:] += lo
    return out


class Rel:
    """Rows sorted by an int64 `key` (stable: rows of one key keep their order), with columns;
    rows can be added."""

    def __init__(self, by: np.ndarray, *, dense: int = 0, **cols: np.ndarray):
        order = np.argsort(by, kind="stable")
        self.key = by[order]
        self.cols = {name: col[order] for name, col in cols.items()}
        # keys known to be ids below `dense`: each id's first row, so a lookup reads two
        # offsets instead of making two binary searches (until rows are added); not worth
        # an array of `dense` offsets for a relation of a few rows
        self._starts = None
        if dense and len(self.key) * _DENSE_SHARE >= dense:
            self._starts = _starts(self.key, dense)

    def __len__(self) -> int:
        return len(self.key)

    def __getstate__(self) -> dict:
        """Pickled without the offsets (an array per id: made again when unpickled)."""
        dense = len(self._starts) - 1 if self._starts is not None else 0
        return {"key": self.key, "cols": self.cols, "dense": dense}

    def __setstate__(self, state: dict) -> None:
        self.key, self.cols = state["key"], state["cols"]
        dense = state.get("dense", 0)
        self._starts = _starts(self.key, dense) if dense else None

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name]

    def find(self, probes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probe index, row) of every row whose key equals a probe."""
        if len(self.key) == 0 or len(probes) == 0:
            return EMPTY, EMPTY
        if self._starts is not None:
            last = len(self._starts) - 1  # `dense`: an empty range for a probe outside the ids
            ok = (probes >= 0) & (probes < last)
            return expand(self._starts[np.where(ok, probes, last)],
                          self._starts[np.where(ok, probes + 1, last)])  # fmt: skip
        return expand(*search_both(self.key, probes, probes, "right"))

    def find_high(self, probes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probe index, row) of every row whose pair key's first half equals a probe."""
        if len(self.key) == 0 or len(probes) == 0:
            return EMPTY, EMPTY
        p = probes.astype(I64) << SHIFT
        return expand(*search_both(self.key, p, p + (np.int64(1) << SHIFT)))

    def get(self, probes: np.ndarray) -> np.ndarray:
        """The row of each probe's key (keys unique), -1 where none."""
        if len(self.key) == 0:
            return np.full(len(probes), -1, dtype=I64)
        at = search(self.key, probes, "left")
        at = np.minimum(at, len(self.key) - 1)
        return np.where(self.key[at] == probes, at, -1)

    def add(self, by: np.ndarray, **cols: np.ndarray) -> None:
        if len(by) == 0:
            return
        self._starts = None
        order = np.argsort(by, kind="stable")
        key = by[order]
        at = search(self.key, key, "right")
        self.key = np.insert(self.key, at, key)
        for name, col in self.cols.items():
            self.cols[name] = np.insert(col, at, cols[name][order])


class KeySet:
    """A growing set of int64 keys (sorted, distinct)."""

    def __init__(self, keys: np.ndarray = EMPTY):
        self.key = unique(keys)

    def __len__(self) -> int:
        return len(self.key)

    def has(self, keys: np.ndarray) -> np.ndarray:
        if len(self.key) == 0:
            return np.zeros(len(keys), dtype=bool)
        at = np.minimum(search(self.key, keys, "left"), len(self.key) - 1)
        return self.key[at] == keys

    def new(self, keys: np.ndarray) -> np.ndarray:
        """The distinct keys not in the set yet (sorted)."""
        keys = unique(keys)
        return keys[~self.has(keys)]

    def add(self, keys: np.ndarray) -> None:
        """Add sorted distinct keys none of which is in the set."""
        if len(keys):
            self.key = np.insert(self.key, search(self.key, keys, "left"), keys)

    def count_high(self, a: np.ndarray) -> np.ndarray:
        """How many pair keys have each first half."""
        p = a.astype(I64) << SHIFT
        lo, hi = search_both(self.key, p, p + (np.int64(1) << SHIFT))
        return hi - lo

    def of_high(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index into a, second half) of every pair key whose first half is a[i]."""
        if len(self.key) == 0 or len(a) == 0:
            return EMPTY, EMPTY
        p = a.astype(I64) << SHIFT
        i, j = expand(*search_both(self.key, p, p + (np.int64(1) << SHIFT)))
        return i, self.key[j] & LOW


def _drop_rows(key: np.ndarray, cols: dict, probe_key: np.ndarray, probe_cols: dict,
               skip: set) -> np.ndarray:  # fmt: skip
    """A mask of the sorted rows (key, cols) to keep once one row per probe row (equal key
    and columns, but those in `skip`) is dropped."""
    keep = np.ones(len(key), dtype=bool)
    if len(key) == 0 or len(probe_key) == 0:
        return keep
    lo, hi = search_both(key, probe_key, probe_key, "right")
    i, j = expand(lo, hi)
    same = np.ones(len(i), dtype=bool)
    for name, col in cols.items():
        if name not in skip and name in probe_cols:
            same &= col[j] == probe_cols[name][i]
    i, j = i[same], j[same]
    # one row per probe, each row once: the first unused match of each probe, in order
    taken = np.zeros(len(key), dtype=bool)
    done = np.zeros(len(probe_key), dtype=bool)
    for a, b in zip(i.tolist(), j.tolist(), strict=True):
        if not done[a] and not taken[b]:
            done[a] = taken[b] = True
    keep[taken] = False
    return keep


def rel_remove(rel: Rel, by: np.ndarray, cols: dict, skip: set = frozenset()) -> Rel:
    """`rel` without one row per given row (its key `by` and columns)."""
    keep = _drop_rows(rel.key, rel.cols, by, cols, set(skip))
    if keep.all():
        return rel
    out = Rel.__new__(Rel)
    out.key = rel.key[keep]
    out.cols = {n: c[keep] for n, c in rel.cols.items()}
    out._starts = None
    return out


def keyset_remove(ks: KeySet, keys: np.ndarray) -> KeySet:
    """`ks` without these keys."""
    if len(keys) == 0 or len(ks) == 0:
        return ks
    out = KeySet.__new__(KeySet)
    out.key = ks.key[~np.isin(ks.key, keys)]
    return out

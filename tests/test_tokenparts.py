"""The token table in the nodes' parts (ctxframe._store.tokenparts): split into parts with
codes of their own and put back whole, it is the table it was; each part's vocabulary is
exactly the sorted words its rows use."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._core.schema import TOKENS, VOCAB
from ctxframe._store import tokenparts

_PATHS = [f"{d}/{f}.py" for d in ("a", "b", "c") for f in ("x", "y", "z")]


@st.composite
def _tables(draw):
    paths = sorted(draw(st.sets(st.sampled_from(_PATHS), min_size=1)))
    ids = sorted(
        {p for p in paths}
        | {f"{p}::{s}" for p in paths for s in draw(st.sets(st.sampled_from("fgh"), max_size=3))}
    )
    words = sorted(draw(st.sets(st.text("abcde", min_size=1, max_size=3), min_size=1)))
    rows = draw(
        st.sets(
            st.tuples(
                st.integers(0, len(ids) - 1), st.integers(0, 5), st.integers(0, len(words) - 1)
            ),
            max_size=60,
        )
    )
    rows = sorted(rows)
    tokens = pl.DataFrame(
        {
            "node": [r[0] for r in rows],
            "field": [r[1] for r in rows],
            "token": [r[2] for r in rows],
            "tf": [1 + r[0] % 3 for r in rows],
        },
        schema=TOKENS,
    )
    used = sorted({r[2] for r in rows})  # the whole table's vocabulary: the words it uses
    recode = {w: i for i, w in enumerate(used)}
    tokens = tokens.with_columns(pl.col("token").replace_strict(recode, return_dtype=pl.UInt32))
    vocab = pl.DataFrame({"token": [words[i] for i in used]}, schema=VOCAB)
    bounds = sorted(draw(st.sets(st.sampled_from(_PATHS), max_size=4)))
    return tokens, vocab, pl.Series(ids, dtype=pl.String), bounds


@settings(max_examples=200, deadline=None, database=None)
@given(_tables())
def test_split_then_whole_is_the_table(case) -> None:
    tokens, vocab, ids, bounds = case
    parts = list(tokenparts.split(tokens, vocab, ids, bounds))
    ranges = tokenparts.node_ranges(ids, bounds) if bounds else [(0, ids.len())]
    rows = {i: hi - lo for i, (lo, hi) in enumerate(ranges)}
    assert parts[0][0] == 0
    for i, part, words in parts:
        assert part.schema == TOKENS and words.schema == VOCAB
        assert words["token"].is_sorted() and words["token"].n_unique() == words.height
        assert sorted(part["token"].unique().to_list()) == list(range(words.height))
        assert part.height == 0 or part["node"].max() < rows[i]
    got, got_vocab = tokenparts.whole(
        {i: t for i, t, _ in parts}, {i: v for i, _, v in parts}, rows
    )
    assert got.equals(tokens) and got_vocab.equals(vocab)


def test_parts_of_covers_a_file_split_by_a_bound() -> None:
    """`a/b.py.bak` sorts between `a/b.py` and `a/b.py::f`: the file's nodes span two parts."""
    bounds = ["a/b.py.bak", "c.py"]
    ids = pl.Series(["a/b.py", "a/b.py.bak", "a/b.py::f", "c.py"])
    assert tokenparts.parts_of(bounds, ["a/b.py"]) == {"a/b.py": [0, 1]}
    assert tokenparts.parts_of(bounds, ["c.py"]) == {"c.py": [2]}
    assert tokenparts.node_ranges(ids, bounds) == [(0, 1), (1, 3), (3, 4)]

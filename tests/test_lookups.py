"""Node rows by id: one id (bisection by element) and several (a vector search) agree."""

from __future__ import annotations

import random

import polars as pl
import pytest

from ctxframe._core.schema import EDGES, FILES, NODES
from ctxframe._graph.lookups import Lookups

IDS = [f"pkg/m{i:04d}.py::f{i}" for i in range(500)]


def _lookups(order: list[str]) -> tuple[Lookups, pl.DataFrame]:
    nodes = pl.DataFrame({"id": order}).with_columns(
        pl.lit(None, t).alias(c) for c, t in NODES.items() if c != "id"
    )
    return Lookups(nodes, pl.DataFrame(schema=EDGES), pl.DataFrame(schema=FILES)), nodes


@pytest.mark.parametrize("stored", ["sorted", "shuffled"])
@pytest.mark.parametrize("probe", [IDS[0], IDS[-1], IDS[250], "", "pkg/m0001.py::f1x", "zzz"])
def test_one_id_finds_the_row_several_ids_find(stored: str, probe: str) -> None:
    order = IDS[:] if stored == "sorted" else random.Random(7).sample(IDS, len(IDS))
    lk, nodes = _lookups(order)
    one = lk.rows([probe])
    assert one.equals(lk.rows([probe, IDS[3]])[: one.len()])
    assert one.dtype == pl.UInt32 and one.name == "row"
    assert nodes["id"].gather(one).to_list() == ([probe] if probe in IDS else [])


@pytest.mark.parametrize("seed", range(5))
def test_edge_slices_bisected_equal_vector_search(seed: int, monkeypatch) -> None:
    """A few rows are bisected one by one, more are searched as a vector: same slices."""
    from ctxframe._graph import edges as _edges

    rng = random.Random(seed)
    keys = pl.Series("_s", sorted(rng.choices(range(40), k=200)), dtype=pl.UInt32)
    frame = pl.DataFrame({"_s": keys, "i": range(keys.len())})
    for n in (1, 3, 8):
        rows = pl.Series(sorted(rng.sample(range(45), n)), dtype=pl.UInt32)
        monkeypatch.setattr(_edges, "_BISECT_ROWS", 0)
        vector = _edges.EdgeIndex._slices(frame, keys, rows)
        monkeypatch.setattr(_edges, "_BISECT_ROWS", 8)
        bisected = _edges.EdgeIndex._slices(frame, keys, rows)
        assert [p["i"].to_list() for p in bisected] == [p["i"].to_list() for p in vector]
        want = frame.filter(pl.col("_s").is_in(rows.implode()))["i"].to_list()
        assert [i for p in bisected for i in p["i"].to_list()] == want

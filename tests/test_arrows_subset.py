"""Arrows answered from the edges that touch the asked rows (a one-shot call, or while a watch
patches the arrow index) equal the full arrow index's, node by node and for several at once."""

from __future__ import annotations

import polars as pl
import pytest

from ctxframe._graph.edges import EdgeIndex, SubsetEdgeIndex
from ctxframe._graph.lookups import Lookups


@pytest.fixture(scope="module")
def frames(shop_graph):
    return shop_graph.nodes, shop_graph.edges, shop_graph.files


def test_subset_equals_full_for_every_node(frames) -> None:
    nodes, edges, _ = frames
    full = EdgeIndex(edges, nodes)
    subset = SubsetEdgeIndex(edges, nodes)
    for row in range(nodes.height):
        rows = pl.Series([row], dtype=pl.UInt32)
        assert subset.arrows(rows).equals(full.arrows(rows)), nodes["id"][row]


@pytest.mark.parametrize("step", [1, 3, 7])
def test_subset_equals_full_for_many_rows(frames, step: int) -> None:
    nodes, edges, _ = frames
    rows = pl.Series(range(0, nodes.height, step), dtype=pl.UInt32)
    got = SubsetEdgeIndex(edges, nodes).arrows(rows)
    assert got.equals(EdgeIndex(edges, nodes).arrows(rows))


def test_pending_arrows_answer_from_the_edges_until_the_index_lands(frames) -> None:
    nodes, edges, files = frames
    built = Lookups(nodes, edges, files)
    pending = Lookups(nodes, edges, files)
    pending.pending_arrows = True
    for node_id in nodes["id"].to_list():
        assert pending.arrows([node_id]).equals(built.arrows([node_id])), node_id
    assert "edge_index" not in pending.__dict__  # nothing built the full index meanwhile
    pending.pending_arrows = False
    assert pending.arrows_index(one_shot=False) is pending.edge_index

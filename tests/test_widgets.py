"""`cf.explore`: widget construction and callbacks (typing a query, selecting a hit, tabs)."""

from __future__ import annotations

import ipywidgets as W

import ctxframe as cf

PROC_ID = "services/payments/refund_processor.py::PaymentRefundProcessor.ProcessRefund"


def test_construction(shop_graph) -> None:
    ex = cf.explore(shop_graph)
    assert isinstance(ex.widget, W.VBox) and isinstance(ex.tabs, W.Tab)
    assert ex.tabs.titles == ("search", "hubs", "boundaries")
    assert list(ex.rule.options) == list(cf.rules.RULES) and ex.rule.value == "idf-tiers"
    assert ex.hits.options == () and ex.card.value == ""
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_typing_a_query_lists_hits_and_shows_the_best(shop_graph) -> None:
    ex = cf.explore(shop_graph)
    ex.query.value = "refund processor"  # what pressing Enter in the box does
    labels = [label for label, _ in ex.hits.options]
    assert labels and "refund_processor" in labels[0]
    assert ex.hits.value == ex.hits.options[0][1]  # the best hit is selected…
    assert "refund_processor.py" in ex.card.value  # …so its card shows
    assert ex.picture.value.startswith("<div class=\"ctxframe-picture\"")
    assert "<iframe srcdoc=" in ex.picture.value and "<svg " in ex.picture.value
    assert "hits for <code>refund processor</code>" in ex.status.value


def test_selecting_a_hit_shows_card_and_picture(shop_graph) -> None:
    ex = cf.explore(shop_graph)
    ex.search("where is refund processing implemented")
    ids = [i for _, i in ex.hits.options]
    assert PROC_ID in ids
    ex.hits.value = PROC_ID  # a click in the list
    assert "PaymentRefundProcessor.ProcessRefund" in ex.card.value
    assert "def ProcessRefund(self, order_id, amount):" in ex.card.value
    assert "neighbourhood of " in ex.picture.value and "ProcessRefund" in ex.picture.value


def test_rule_change_reruns(shop_graph) -> None:
    ex = cf.explore(shop_graph)
    ex.query.value = "refund processor"
    ex.rule.value = "bm25"
    assert ex.result.rule == "bm25" and ex.hits.options
    assert "rule bm25" in ex.status.value


def test_no_match_and_empty(shop_graph) -> None:
    ex = cf.explore(shop_graph)
    ex.query.value = "zzzqqqxxy"
    assert ex.hits.options == () and "no matches" in ex.card.value
    ex.query.value = ""
    assert ex.hits.options == () and ex.status.value == ""


def test_tabs_load_hubs_and_boundaries(shop_graph) -> None:
    ex = cf.explore(shop_graph)
    ex.tabs.selected_index = 1
    assert "most depended-on" in ex.hubs.value
    ex.tabs.selected_index = 2
    assert ex.boundaries.value == shop_graph.boundaries()._repr_html_()


def test_boundaries_tab_degrades_without_boundaries(shop_graph) -> None:
    class Older:
        def __getattr__(self, name):
            if name == "boundaries":
                raise AttributeError(name)
            return getattr(shop_graph, name)

    ex = cf.explore(Older())
    ex.tabs.selected_index = 2
    assert "boundaries: not indexed yet" in ex.boundaries.value


def test_boundaries_show_up_when_the_graph_has_them(shop_graph) -> None:
    class Boundaries:
        def _repr_html_(self):
            return "<table><tr><td>POST /refunds</td></tr></table>"

    class WithBoundaries:
        def __getattr__(self, name):
            return getattr(shop_graph, name)

        def boundaries(self):
            return Boundaries()

    ex = cf.explore(WithBoundaries())
    ex.tabs.selected_index = 2
    assert "POST /refunds" in ex.boundaries.value

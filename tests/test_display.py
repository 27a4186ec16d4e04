"""Notebook display: HTML snapshots per result type, mime bundles, offline pyvis pictures."""

from __future__ import annotations

import html
import re
import subprocess
import sys

import pytest

import ctxframe as cf
from ctxframe._apps import fallback as _fallback
from ctxframe._render import palette as _palette
from ctxframe._render import picture as _plot

PROC = "PaymentRefundProcessor.ProcessRefund"

# URL strings inside vis-network.min.js as shipped by pyvis 0.3.2, none of them ever fetched:
# licence and homepage attributions in its header comment (kept: the licences ask for them),
# the SVG XML namespace identifier (a name, not a resource), and a link inside an error message
# of the bundled uuid polyfill. Anything else that looks like a URL fails the test.
ALLOWED_URLS = {
    "http://almende.com",
    "http://opensource.org/licenses/MIT",
    "http://www.apache.org/licenses/LICENSE-2.0",
    "http://www.w3.org/2000/svg",
    "https://github.com/uuidjs/uuid#getrandomvalues-not-supported",
    "https://github.com/visjs",
    "https://github.com/zloirock/core-js",
    "https://github.com/zloirock/core-js/blob/v3.21.1/LICENSE",
    "https://visjs.github.io/vis-network/",
}
URL = re.compile(r"https?://[^\s\"'<>()\\]+")
LOOPBACK = re.compile(r"^https?://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(/|$)")


def external_urls(text: str) -> set[str]:
    return (
        {u.rstrip(".,;") for u in URL.findall(text)}
        - ALLOWED_URLS
        - {u for u in URL.findall(text) if LOOPBACK.match(u)}
    )


SNAPSHOTS = [
    ("query", lambda g: g.query("where is refund processing implemented", limit=5)),
    ("card-found", lambda g: g.card(PROC)),
    ("card-ambiguous", lambda g: g.card("format_amount")),
    ("card-not-found", lambda g: g.card("ProcesRefnd")),
    ("affected", lambda g: g.affected(PROC, depth=2)),
    ("path", lambda g: g.path("create_refund", "PaymentGateway.Refund")),
    ("path-none", lambda g: g.path("PaymentGateway.Refund", "create_refund")),
    ("change-plan", lambda g: g.change_plan(PROC)),
    ("explain", lambda g: g.explain(PROC)),
    ("hubs", lambda g: g.hubs(limit=5)),
    ("neighbourhood", lambda g: g.neighbourhood(PROC)),
    ("boundaries-not-indexed", lambda g: _fallback.boundaries_of(object())),
]


def _stable(html: str) -> str:
    """The inline picture is ~700 kB of vis-network and an SVG drawn from float positions;
    snapshot everything around them (tests/test_picture_svg.py checks the SVG)."""
    html = re.sub(r'srcdoc="[^"]*"', 'srcdoc="…"', html)
    return re.sub(r"<svg .*?</svg>\s*</svg>", "<svg>…</svg>", html, flags=re.S)


@pytest.mark.parametrize(("name", "call"), SNAPSHOTS, ids=[s[0] for s in SNAPSHOTS])
def test_html_snapshot(shop_graph, golden, name, call) -> None:
    res = call(shop_graph)
    html = res._repr_html_()
    assert html.startswith("<")
    golden(f"html/{name}.html", _stable(html) + "\n")


def test_graph_summary_snapshot(shop_graph, golden) -> None:
    html = shop_graph._repr_html_()
    html = html.replace(str(shop_graph.root), "ROOT")
    html = html.replace(str(shop_graph.meta.get("indexed_at")), "INDEXED_AT")
    golden("html/graph.html", html + "\n")


@pytest.mark.parametrize(("name", "call"), SNAPSHOTS[:-1], ids=[s[0] for s in SNAPSHOTS[:-1]])
def test_mimebundle_keeps_plain_text(shop_graph, name, call) -> None:
    res = call(shop_graph)
    bundle = res._repr_mimebundle_()
    assert bundle["text/plain"] == str(res)  # terminals keep the text form
    assert bundle["text/html"] == res._repr_html_()


def test_html_has_badges_locations_and_arrows(shop_graph) -> None:
    html = shop_graph.card(PROC)._repr_html_()
    assert "services/payments/refund_processor.py:L28-L39" in html
    assert _palette.kind_colour("method") in html  # the kind badge
    assert "def ProcessRefund(self, order_id, amount):" in html
    assert "← calls" in html and "→ calls" in html
    assert "(inferred)" in html


def test_html_escapes_names(shop_graph) -> None:
    res = shop_graph.card("<script>alert(1)</script>")
    assert "<script>" not in res._repr_html_()


@pytest.mark.parametrize(
    "make",
    [
        lambda g: g.neighbourhood(PROC).plot(),
        lambda g: g.neighbourhood(PROC, depth=3, cap=8).plot(),
        lambda g: g.card(PROC).plot(),
        lambda g: g.affected(PROC).plot(),
        lambda g: g.path("create_refund", "PaymentGateway.Refund").plot(),
        lambda g: g.change_plan(PROC).plot(),
        lambda g: g.explain(PROC).plot(),
        lambda g: g.query("refund processing").plot(),
    ],
)
def test_pictures_are_offline(shop_graph, make) -> None:
    pic = make(shop_graph)
    page = pic.html()
    assert external_urls(page) == set()
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)\s*=", page, re.I)
    assert "bootstrap" not in page.lower()
    assert _plot.vis_asset("vis-network.min.js")[:2000] in page  # vis-network inlined
    inline = pic._repr_html_()
    assert inline.startswith('<div class="ctxframe-picture"') and "<iframe srcdoc=" in inline
    assert external_urls(html.unescape(inline)) == set()
    assert pic.nodes, "a picture of something"


def test_picture_uses_pyvis(shop_graph) -> None:
    from pyvis.network import Network

    pic = shop_graph.neighbourhood(PROC).plot()
    net = pic.network
    assert isinstance(net, Network)
    assert {n["id"] for n in net.nodes} == {n["id"] for n in pic.nodes}
    assert net.cdn_resources == "in_line"


def test_neighbourhood_styles(shop_graph) -> None:
    nb = shop_graph.neighbourhood(PROC)
    assert nb.centre == [f"services/payments/refund_processor.py::{PROC}"]
    assert set(nb.nodes["depth"]) == {0, 1}
    vis = nb.to_dict()["vis"]
    by_id = {n["id"]: n for n in vis["nodes"]}
    centre = by_id[nb.centre[0]]
    assert centre["color"]["background"] == _palette.kind_colour("method")
    assert centre["borderWidth"] > 1
    confs = {e["confidence"]: e for e in vis["edges"]}
    assert confs["EXTRACTED"]["dashes"] is False
    assert confs["INFERRED"]["dashes"] is False and confs["INFERRED"]["width"] < 2


def test_ambiguous_edges_dashed(shop_graph) -> None:
    plain = shop_graph.neighbourhood("render_receipt")
    assert "AMBIGUOUS" not in set(plain.edges["confidence"])
    nb = shop_graph.neighbourhood("render_receipt", include_ambiguous=True)
    edges = [e for e in nb.plot().edges if e["confidence"] == "AMBIGUOUS"]
    assert edges and all(e["dashes"] for e in edges)
    assert "ambiguous" in nb.plot().html()


def test_large_neighbourhood_capped_with_more(shop_graph) -> None:
    nb = shop_graph.neighbourhood(PROC, depth=3, cap=6)
    assert nb.nodes.height == 6 and nb.total > 6
    hidden = sum(nb.more.values())
    assert hidden == nb.total - 6
    assert set(nb.more) <= set(nb.nodes["id"])  # every "+N more" hangs off a drawn node
    pic = nb.plot()
    labels = [n["label"] for n in pic.nodes if n["kind"] == "more"]
    assert labels and all(re.fullmatch(r"\+\d+ more", x) for x in labels)
    assert f"+{hidden} more not drawn" in pic.html()
    assert f"+{hidden} more" in str(nb) and f"+{hidden} more" in nb._repr_html_()


def test_neighbourhood_of_file_and_unknown(shop_graph) -> None:
    nb = shop_graph.neighbourhood("services/payments/gateway.py")
    assert nb.centre == ["services/payments/gateway.py"] and nb.nodes.height > 1
    missing = shop_graph.neighbourhood("ProcesRefnd")
    assert not missing.found and missing.to_dict()["status"] == "not-found"
    assert missing.to_dict()["error"]["code"] == "not-found"
    assert "closest names" in str(missing)
    assert missing.plot().nodes == []


def test_boundaries_hook() -> None:
    class Old:
        pass

    class Broken:
        def boundaries(self):
            raise RuntimeError("half-built")

    class Result:
        def to_dict(self):
            return {"verb": "boundaries", "routes": []}

        def _repr_html_(self):
            return "<p>routes</p>"

    class New:
        def boundaries(self):
            return Result()

    assert str(_fallback.boundaries_of(Old())) == "boundaries: not indexed yet"
    assert _fallback.boundaries_of(Broken()).to_dict()["status"] == "not-indexed"
    assert isinstance(_fallback.boundaries_of(New()), Result)


def test_boundaries_of_the_sample_show_up(shop_graph) -> None:
    res = _fallback.boundaries_of(shop_graph)
    assert type(res).__name__ == "Boundaries" and res.to_dict()["rows"]


def test_import_stays_light() -> None:
    code = (
        "import sys, ctxframe as cf; g = cf.Graph; "
        "heavy = [m for m in ('ipywidgets', 'pyvis', 'ctxframe._apps.serve', 'http.server') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_explore_is_exported() -> None:
    assert "explore" in cf.__all__ and cf.__all__ == sorted(cf.__all__, key=str)


def test_every_result_type_renders_from_templates(shop_graph) -> None:
    """The store's results render through the same templates as the verbs'."""
    report = shop_graph.report._repr_html_()
    assert report.startswith('<div class="ctxframe">') and "coverage by language" in report
    assert "unresolved" in report and "UNRESOLVED" not in report
    status = cf.status(shop_graph.root)._repr_html_()
    assert "fresh" in status and "not a git repository" in status and "None" not in status
    ev = cf.evaluate(shop_graph, [{"id": "q", "query": "refund processor", "gold": [PROC]}])
    assert "evaluation · 1 questions" in ev._repr_html_()
    assert cf.open(shop_graph.root)._repr_html_().startswith('<div class="ctxframe">')


def test_templates_escape_by_default() -> None:
    from ctxframe._render.html import render

    out = render("message", message="<img src=x onerror=alert(1)>")
    assert "<img" not in out and "&lt;img" in out

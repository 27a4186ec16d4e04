"""Every picture is also static SVG, drawn here from the same places as the interactive view:
notebook outputs carry `image/svg+xml`, the HTML shows the SVG where no script runs."""

from __future__ import annotations

import os
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest

from ctxframe._render import picture as _plot

PROC = "PaymentRefundProcessor.ProcessRefund"
SVG = "{http://www.w3.org/2000/svg}"
CHROMIUM = "/usr/bin/chromium"

PICTURES = [
    ("neighbourhood-1", lambda g: g.neighbourhood(PROC).plot()),
    ("neighbourhood-2", lambda g: g.neighbourhood("render_receipt", depth=2,
                                                  include_ambiguous=True).plot()),
    ("file-capped", lambda g: g.neighbourhood("services/payments/gateway.py", depth=3,
                                              cap=15).plot()),
    ("card", lambda g: g.card(PROC).plot()),
    ("affected", lambda g: g.affected("services/payments/gateway.py", depth=2).plot()),
    ("path", lambda g: g.path("create_refund", "PaymentGateway.Refund").plot()),
    ("query", lambda g: g.query("where is refund processing implemented").plot(top=3)),
]  # fmt: skip


def _boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    """tooltip -> (x, y, w, h) of each node box of an SVG picture (the tooltip names the
    node: two nodes may share a label)."""
    root = ElementTree.fromstring(svg)
    out = {}
    for g in root.iter(f"{SVG}g"):
        rect, tip = g.find(f"{SVG}rect"), g.find(f"{SVG}title")
        if g.get("class") == "cf-node":
            out[tip.text] = tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))
    return out


@pytest.mark.parametrize(("name", "make"), PICTURES, ids=[p[0] for p in PICTURES])
def test_the_svg_draws_every_node_where_the_interactive_view_does(shop_graph, name, make):
    pic = make(shop_graph)
    svg = pic._repr_mimebundle_()["image/svg+xml"]
    assert svg == pic.svg() and svg.startswith("<svg xmlns=")
    boxes = _boxes(svg)
    drawn = [n for n in pic.nodes]
    assert drawn and len(boxes) == len({n["title"] for n in drawn})
    for n in drawn:  # the same place: the box is centred where vis-network puts the node
        x, y, w, h = boxes[n["title"]]
        assert n["physics"] is False
        assert abs(x + w / 2 - n["x"]) < 1 and abs(y + h / 2 - n["y"]) < 1, n["label"]
    lines = ElementTree.fromstring(svg).findall(f".//{SVG}line")
    assert len(lines) == sum(1 for e in pic.edges if e["from"] != e["to"])
    assert _plot.vis_options(pic.nodes)["physics"] == {"enabled": False}


@pytest.mark.parametrize(("name", "make"), PICTURES, ids=[p[0] for p in PICTURES])
def test_no_two_boxes_overlap(shop_graph, name, make) -> None:
    boxes = list(_boxes(make(shop_graph).svg()).values())
    for i, (x, y, w, h) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1 :]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y


def test_the_layout_is_deterministic(shop_graph) -> None:
    one = shop_graph.query("where is refund processing implemented").plot(top=3).svg()
    two = shop_graph.query("where is refund processing implemented").plot(top=3).svg()
    assert one == two


def test_outputs_carry_svg_and_stay_under_a_megabyte(shop_graph) -> None:
    for _, make in PICTURES:
        bundle = make(shop_graph)._repr_mimebundle_()
        assert {"text/plain", "text/html", "image/svg+xml"} <= set(bundle)
        assert sum(len(v.encode()) for v in bundle.values()) < 1_000_000
    nb = shop_graph.neighbourhood(PROC)._repr_mimebundle_()
    assert nb["image/svg+xml"] == shop_graph.neighbourhood(PROC).plot().svg()


def test_the_html_holds_the_svg_outside_and_inside_the_frame(shop_graph) -> None:
    pic = shop_graph.neighbourhood(PROC).plot()
    inline = pic._repr_html_()
    assert inline.startswith('<div class="ctxframe-picture"')
    assert inline.index("<svg ") < inline.index("<iframe srcdoc=")  # for hosts without frames
    page = pic.html()
    assert re.search(r'<div id="net"><svg ', page)  # the page's content before its script
    assert 'box.innerHTML=""' in page


def test_names_are_escaped_in_the_svg() -> None:
    pic = _plot.picture(
        "<b>t</b>", [{"id": "a", "label": "<script>x</script>", "kind": "function"}], []
    )
    svg = pic.svg()
    ElementTree.fromstring(svg)  # well-formed
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_an_empty_picture_is_an_svg_too() -> None:
    ElementTree.fromstring(_plot.Picture(title="x: not-found", nodes=[], edges=[]).svg())


def test_save_writes_svg_or_the_page(shop_graph, tmp_path) -> None:
    pic = shop_graph.neighbourhood(PROC).plot()
    with open(pic.save(str(tmp_path / "p.svg"))) as f:
        assert f.read() == pic.svg()
    with open(pic.save(str(tmp_path / "p.html"))) as f:
        assert f.read() == pic.html()


# -- what a browser without JavaScript shows ------------------------------------------------------


@pytest.fixture(scope="module")
def no_js_page():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} absent (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        flags = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        b = p.chromium.launch(executable_path=CHROMIUM, args=flags)
        page = b.new_context(java_script_enabled=False, viewport={"width": 1000, "height": 700})
        yield page.new_page()
        b.close()


# Frames do not always take the page's "JavaScript off" (a srcdoc frame's script sometimes
# runs in Chromium): the pages here also forbid every script by policy, which frames inherit.
NO_SCRIPT = "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">"


def no_script_page(body: str) -> str:
    """`body` in a page where no script runs, its frames' included."""
    return f"<html><head>{NO_SCRIPT}</head><body>{body}</body></html>"


VISIBLE_BOXES = """() => [...document.querySelectorAll('svg rect')].filter(r => {
  const b = r.getBoundingClientRect(); return b.width > 8 && b.height > 8;
}).length"""
FRAME_BOXES = """() => { const f = document.querySelector('iframe');
  const d = f && f.contentDocument; if (!d) return -1;
  return [...d.querySelectorAll('svg rect')].filter(r => {
    const b = r.getBoundingClientRect(); return b.width > 8 && b.height > 8; }).length; }"""


def coloured_pixels(png: bytes) -> int:
    """How many pixels of a screenshot are neither white nor grey (the node boxes' colours)."""
    import io

    from PIL import Image

    im = Image.open(io.BytesIO(png)).convert("RGB")
    r, g, b = (band.load() for band in im.split())
    w, h = im.size
    return sum(
        1 for y in range(h) for x in range(w)
        if max(r[x, y], g[x, y], b[x, y]) - min(r[x, y], g[x, y], b[x, y]) > 40
    )  # fmt: skip


def settled_pixels(locator, path: str, want: int, tries: int = 60) -> int:
    """`coloured_pixels` of an element once its frames have painted (a frame still loading
    its page may paint blank for a moment): the first count reaching `want`, else the last."""
    count = 0
    for _ in range(tries):
        count = coloured_pixels(locator.screenshot(path=path))
        if count >= want:
            break
        locator.page.wait_for_timeout(250)
    return count


@pytest.fixture(scope="module")
def own_shop(tmp_path_factory):
    """The sample indexed for this module alone: the pixel check must not see what other
    tests (CLI runs, refreshes) do to the session's shared index."""
    import shutil

    import ctxframe as cf

    sample = Path(__file__).resolve().parent.parent / "data-samples" / "shop"
    dest = tmp_path_factory.mktemp("picture") / "shop"
    shutil.copytree(sample, dest)
    return cf.index(str(dest), progress=False)


def test_without_javascript_the_picture_shows(own_shop, no_js_page, tmp_path) -> None:
    pic = own_shop.neighbourhood(PROC).plot()
    page = no_script_page(pic._repr_html_())
    no_js_page.set_content(page)
    no_js_page.wait_for_timeout(300)
    assert no_js_page.evaluate(VISIBLE_BOXES) > len(pic.nodes)  # node boxes (and badges)
    # the frame above it is see-through until a script runs: the boxes are on screen
    where = no_js_page.locator(".ctxframe-picture")
    count = settled_pixels(where, str(tmp_path / "a.png"), 20_000)
    if count < 20_000:  # a loaded machine may leave the frame unpainted: load it again
        no_js_page.set_content(page)
        count = settled_pixels(where, str(tmp_path / "a.png"), 20_000)
    assert count >= 20_000, (count, pic.title, len(pic.nodes), len(pic.edges))
    # iframes stripped (a code host's preview): the SVG outside the frame remains
    stripped = re.sub(r"<iframe .*?</iframe>", "", pic._repr_html_(), flags=re.S)
    no_js_page.set_content(no_script_page(stripped))
    assert no_js_page.evaluate(VISIBLE_BOXES) > len(pic.nodes)
    # the page alone (`pic.save("p.html")`) shows its own SVG
    no_js_page.set_content(pic.html())
    assert no_js_page.evaluate(VISIBLE_BOXES) > len(pic.nodes)


def test_without_javascript_the_explorer_snapshot_shows(shop_graph, no_js_page) -> None:
    import ctxframe as cf

    ex = cf.explore(shop_graph)
    ex.search("refund processor")
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    html = bundle["text/html"]
    assert "refund processor" in html and "<svg " in html and "refund_processor" in html
    no_js_page.set_content(no_script_page(html))
    assert no_js_page.evaluate(VISIBLE_BOXES) > 3

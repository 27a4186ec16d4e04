"""Pictures in a real browser (Debian's chromium via Playwright): every node inside the frame
and the focus node in its middle, at depth 1 and 2, wide and narrow, and after a resize."""

from __future__ import annotations

import json
import os

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
PROC = "PaymentRefundProcessor.ProcessRefund"

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} absent (apt-get install chromium)"
)

# where the focus is and whether every node box is inside the canvas, in CSS pixels
MEASURE = """() => {
  const net = window.ctxframeNetwork, box = net.body.container;
  const w = box.clientWidth, h = box.clientHeight, pos = net.getPositions();
  const focus = JSON.parse(document.body.dataset.centre || "[]");
  const ids = focus.length ? focus : Object.keys(pos);
  let cx = 0, cy = 0;
  ids.forEach(id => { const p = net.canvasToDOM(pos[id]); cx += p.x; cy += p.y; });
  cx /= ids.length; cy /= ids.length;
  const outside = Object.keys(pos).filter(id => {
    const b = net.getBoundingBox(id);
    const a = net.canvasToDOM({x: b.left, y: b.top});
    const z = net.canvasToDOM({x: b.right, y: b.bottom});
    return a.x < -1 || a.y < -1 || z.x > w + 1 || z.y > h + 1;
  });
  return {w, h, cx, cy, outside, scale: net.getScale(), framed: box.dataset.framed === "1"};
}"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def test_picture_fits_and_centres_its_focus(shop_graph, browser, tmp_path) -> None:
    cases = [
        ("depth-1", shop_graph.neighbourhood(PROC, depth=1).plot(), (1100, 600)),
        ("depth-2", shop_graph.neighbourhood(PROC, depth=2).plot(), (900, 560)),
        ("file-depth-3", shop_graph.neighbourhood("services/payments/gateway.py", depth=3).plot(),
         (900, 500)),
        ("card", shop_graph.card(PROC).plot(), (700, 600)),
        ("affected-file", shop_graph.affected("services/payments/gateway.py", depth=2).plot(),
         (900, 560)),
    ]  # fmt: skip
    page = browser.new_page()
    for what, pic, (width, height) in cases:
        assert len(pic.centre) == 1
        page.set_viewport_size({"width": width, "height": height})
        page.set_content(
            pic.html().replace("<body>", f"<body data-centre='{json.dumps(pic.centre)}'>", 1)
        )
        page.wait_for_function(
            "document.getElementById('net').dataset.framed === '1'", timeout=20000
        )
        m = page.evaluate(MEASURE)
        page.screenshot(path=str(tmp_path / f"{what}.png"))
        assert m["outside"] == [], (what, m)
        assert abs(m["cx"] - m["w"] / 2) < 0.05 * m["w"] + 2, (what, m)
        assert abs(m["cy"] - m["h"] / 2) < 0.05 * m["h"] + 2, (what, m)
        # the frame changes size (a notebook column, a window): framed again
        page.set_viewport_size({"width": width // 2 + 120, "height": height})
        page.wait_for_timeout(200)
        m = page.evaluate(MEASURE)
        assert m["outside"] == [] and abs(m["cx"] - m["w"] / 2) < 0.05 * m["w"] + 2, (what, m)
    page.close()


def test_the_served_page_shares_the_framing_script() -> None:
    from importlib import resources

    focus = resources.files("ctxframe._render").joinpath("templates/focus.js").read_text()
    app = resources.files("ctxframe._apps").joinpath("static/app.js").read_text()
    assert focus in app

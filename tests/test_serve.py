"""`ctxframe serve`: routes, read-only HTTP on loopback, and a real headless-Chromium session."""

from __future__ import annotations

import http.client
import json
import os
import threading
from urllib.parse import urlsplit

import pytest

from ctxframe._apps.serve import App, make_server
from ctxframe.cli import _parser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
PROC_ID = "services/payments/refund_processor.py::PaymentRefundProcessor.ProcessRefund"


@pytest.fixture(scope="module")
def server(shop_graph):
    srv = make_server(shop_graph, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def request(srv, method: str, path: str, host: str | None = None) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_port, timeout=10)
    headers = {"Host": host} if host else {}
    conn.request(method, path, headers=headers)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, dict(resp.getheaders()), body


# -- routes (no HTTP) ----------------------------------------------------------------------------


def test_api_is_the_verbs_json(shop_graph) -> None:
    app = App(shop_graph)
    status, data = app.api("/api/query", {"q": ["refund processor"], "limit": ["5"]})
    assert status == 200
    assert data == json.loads(
        json.dumps(shop_graph.query("refund processor", limit=5).to_dict(), default=str)
    )
    assert app.api("/api/card", {"name": [PROC_ID]})[1] == json.loads(
        json.dumps(shop_graph.card(PROC_ID).to_dict(), default=str)
    )
    status, nb = app.api("/api/neighbourhood", {"name": [PROC_ID], "depth": ["1"]})
    assert status == 200 and nb["centre"] == [PROC_ID] and nb["vis"]["nodes"]
    assert app.api("/api/hubs", {"top": ["3"]})[1]["verb"] == "hubs"
    assert app.api("/api/boundaries", {})[1] == json.loads(
        json.dumps(shop_graph.boundaries().to_dict(), default=str)
    )
    assert "rules" in app.api("/api/summary", {})[1]
    assert app.api("/api/style", {})[1]["kinds"]["method"]


def test_api_errors(shop_graph) -> None:
    app = App(shop_graph)
    status, data = app.api("/api/query", {"q": ["x"], "rule": ["no-such-rule"]})
    assert status == 400 and "no-such-rule" in data["error"]
    assert app.api("/api/nothing", {})[0] == 404
    assert app.api("/api/card", {"name": ["ProcesRefnd"]})[1]["status"] == "not-found"


# -- HTTP ----------------------------------------------------------------------------------------


def test_binds_loopback_by_default(server) -> None:
    assert server.server_address[0] == "127.0.0.1"
    args = _parser().parse_args(["serve", "--repo", "some/repo"])
    assert args.host == "127.0.0.1" and args.port == 8765 and args.repo == "some/repo"


def test_serves_page_and_assets_locally(server) -> None:
    status, headers, body = request(server, "GET", "/")
    assert status == 200 and b"/static/app.js" in body
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    for path in ("/static/app.js", "/static/app.css", "/static/vis-network.min.js"):
        status, _, body = request(server, "GET", path)
        assert status == 200 and body
    _, _, page = request(server, "GET", "/")
    _, _, app_js = request(server, "GET", "/static/app.js")
    for text in (page, app_js):
        assert b"http://" not in text and b"https://" not in text
    status, _, body = request(server, "GET", "/api/query?q=refund+processor")
    assert status == 200 and json.loads(body)["hits"]


def test_read_only(server) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        status, headers, _ = request(server, method, "/api/query?q=x")
        assert status == 405 and headers["Allow"] == "GET, HEAD"
    assert request(server, "HEAD", "/")[0] == 200
    assert request(server, "GET", "/../../etc/passwd")[0] == 404
    assert request(server, "GET", "/static/../_serve.py")[0] == 404


def test_refuses_foreign_host_header(server) -> None:
    assert request(server, "GET", "/api/summary", host="attacker.example")[0] == 403
    assert request(server, "GET", "/api/summary", host=f"localhost:{server.server_port}")[0] == 200


# -- a real browser -------------------------------------------------------------------------------


@pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} absent (apt-get install chromium)"
)
def test_browser_search_select_draw(server, shop_graph, tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    base = f"http://127.0.0.1:{server.server_port}/"
    seen: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: seen.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base)
            page.wait_for_selector("body[data-ready='1']", timeout=15000)
            page.type("#q", "refund processor", delay=20)
            page.press("#q", "Enter")
            first = page.locator("tr.hit").first
            first.wait_for(timeout=15000)
            assert "refund_processor" in first.get_attribute("data-id")
            assert "refund_processor" in first.inner_text()
            first.click()
            page.wait_for_selector("#net[data-state='drawn']", timeout=20000)
            assert int(page.get_attribute("#net", "data-nodes")) > 1
            assert page.locator("#net canvas").count() == 1
            assert "refund_processor.py" in page.inner_text("#card")
            drawn = page.evaluate("window.ctxframeNetwork.body.data.nodes.getIds()")
            assert first.get_attribute("data-id") in drawn
            page.screenshot(path=str(tmp_path / "serve.png"), full_page=True)

            # the tabs: hubs and boundaries
            page.click("#tabs button[data-tab=hubs]")
            page.wait_for_selector("#tab-hubs table")
            page.click("#tabs button[data-tab=boundaries]")
            page.wait_for_selector("#tab-boundaries table")
            assert "PAYMENTS_API_KEY" in page.inner_text("#tab-boundaries")
            page.screenshot(path=str(tmp_path / "serve-boundaries.png"))

            # an inline neighbourhood as a notebook shows it (iframe srcdoc, offline)
            nb = browser.new_page(viewport={"width": 1100, "height": 700})
            nb.on("request", lambda r: seen.append(r.url))
            nb.on("pageerror", lambda e: errors.append(str(e)))
            inline = shop_graph.neighbourhood(PROC_ID).plot()._repr_html_()
            nb.set_content(f"<!doctype html><body style='margin:8px'>{inline}</body>")
            frame = nb.frames[1]
            frame.wait_for_function("window.ctxframeNetwork !== undefined", timeout=15000)
            nb.wait_for_timeout(1500)  # let the layout settle for the picture
            nb.screenshot(path=str(tmp_path / "inline-neighbourhood.png"), full_page=True)
        finally:
            browser.close()
    assert not errors, errors
    hosts = {urlsplit(u).hostname for u in seen if urlsplit(u).scheme not in ("data", "about")}
    assert hosts <= {"127.0.0.1", "localhost"}, sorted(set(seen))
    assert any("/api/neighbourhood" in u for u in seen)
    assert (tmp_path / "serve.png").stat().st_size > 10_000

"""The audit's HTML report in a real browser (Debian's chromium via Playwright): it opens with
no console error and no network request, and every chart is drawn."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _tree import write_tree

import ctxframe as cf

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} absent (apt-get install chromium)"
)

# a small cycle and a broken layer, so the report shows red edges and a violation too
EXTRA = {
    "services/api/loop.py": "from services.payments import checkout\n",
    "services/payments/loopback.py": "from services.api import loop\n",
    ".ctxframe/config.toml": '[[audit.contracts]]\nname = "layers"\ntype = "layers"\n'
    'layers = ["services.api", "services.payments"]\n',
}


def open_report(path: Path, shot: Path | None = None, width: int = 1280) -> dict:
    """Load the page from disk in chromium; what it logged, asked the network for, drew."""
    from playwright.sync_api import sync_playwright

    url = path.resolve().as_uri()
    seen: dict = {"console": [], "requests": [], "failed": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.on("console", lambda m: seen["console"].append((m.type, m.text)))
        page.on("pageerror", lambda e: seen["console"].append(("pageerror", str(e))))
        page.on("request", lambda r: seen["requests"].append(r.url))
        page.on("requestfailed", lambda r: seen["failed"].append(r.url))
        page.goto(url, wait_until="load")
        page.wait_for_timeout(300)
        seen["svgs"] = page.evaluate(
            "() => [...document.querySelectorAll('svg')].map(s => {"
            "const r = s.getBoundingClientRect(); return [r.width, r.height]; })"
        )
        seen["sections"] = page.evaluate(
            "() => [...document.querySelectorAll('.cf-audit-title')].map(h => h.textContent)"
        )
        if shot is not None:
            page.screenshot(path=str(shot), full_page=True)
        browser.close()
    seen["url"] = url
    return seen


def test_report_opens_offline_without_errors(shop: Path, tmp_path: Path) -> None:
    write_tree(shop, EXTRA)
    audit = cf.index(str(shop), progress=False).audit()
    assert audit.cycles.height and audit.contracts.height
    page = tmp_path / "audit.html"
    audit.to_html(str(page))
    seen = open_report(page, shot=tmp_path / "audit.png")
    assert [c for c in seen["console"] if c[0] in ("error", "pageerror", "warning")] == []
    assert seen["requests"] == [seen["url"]] and seen["failed"] == []
    assert seen["sections"] == [
        "Architecture", "Import cycles", "Contracts", "Complexity", "Dead code",
        "Untested code", "Risk", "Boundaries",
    ]  # fmt: skip
    # the package graph and every matplotlib chart have a size on the page
    assert len(seen["svgs"]) >= 5 and all(w > 100 and h > 50 for w, h in seen["svgs"])
    assert (tmp_path / "audit.png").stat().st_size > 20_000

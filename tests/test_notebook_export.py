"""The notebooks executed headless (nbclient), exported to HTML (nbconvert) and opened in
Chromium with JavaScript off: every picture shows, every output stays under 1 MB.

Slow: it executes the three notebooks again and drives a browser. Screenshots go to
`CTXFRAME_SHOTS` when it is set (one PNG per notebook), else into the test's temp folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.test_picture_svg import NO_SCRIPT, settled_pixels

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CHROMIUM = "/usr/bin/chromium"
MB = 1_000_000

# per picture output: its boxes drawn and visible (the static SVG beside its frame), and its
# height; each frame's own page (sandboxed: read from the frame) likewise
PICTURES = """() => [...document.querySelectorAll('.ctxframe-picture')].map(p => ({
  outside: [...p.querySelectorAll('svg rect')].filter(r => {
    const b = r.getBoundingClientRect(); return b.width > 8 && b.height > 8; }).length,
  height: p.getBoundingClientRect().height}))"""



def _execute(path: Path, tmp_path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir(exist_ok=True)
    # saved as JupyterLab saves by default: without the widgets' live state, so viewers and
    # exports show what each output offers besides the widget (the explorer's snapshot)
    client = NotebookClient(
        nb, timeout=180, kernel_name="python3", store_widget_state=False,
        resources={"metadata": {"path": str(tmp_path)}},
    )  # fmt: skip
    client.execute(env={**os.environ, "TMPDIR": str(private_tmp)})
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_exported_notebook_shows_every_picture_without_javascript(path: Path, tmp_path) -> None:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} absent (apt-get install chromium)")
    from nbconvert import HTMLExporter
    from playwright.sync_api import sync_playwright

    nb = _execute(path, tmp_path)
    pictures = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            size = len(json.dumps(out).encode())
            assert size < MB, f"{path.name}: an output of {size:,} bytes"
            html = out.get("data", {}).get("text/html", "")
            if "ctxframe-picture" in html and "widget-view" not in json.dumps(out):
                pictures += 1
                assert "image/svg+xml" in out["data"], f"{path.name}: a picture without SVG"
    assert nb.metadata.get("widgets") is None
    body, _ = HTMLExporter().from_notebook_node(nb)
    # JavaScript off, frames included: Chromium sometimes runs a srcdoc frame's script in a
    # page whose JavaScript is off; a policy forbidding every script holds for the frames too
    body = body.replace("<head>", "<head>" + NO_SCRIPT, 1)
    assert NO_SCRIPT in body
    page_file = tmp_path / f"{path.stem}.html"
    page_file.write_text(body)
    shots = Path(os.environ.get("CTXFRAME_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_context(
            java_script_enabled=False, viewport={"width": 1200, "height": 900}
        ).new_page()
        page.goto(page_file.as_uri())
        page.wait_for_timeout(500)
        found = page.evaluate(PICTURES)
        seen = []  # what is on screen there (the frame above the SVG is see-through)
        for i, el in enumerate(page.locator(".ctxframe-picture").all()):
            el.scroll_into_view_if_needed()
            count = settled_pixels(el, str(tmp_path / f"p{i}.png"), 5_000)
            if count < 5_000:  # a loaded machine may leave a frame unpainted: load it again
                page.reload(wait_until="networkidle")
                el = page.locator(".ctxframe-picture").nth(i)
                el.scroll_into_view_if_needed()
                count = settled_pixels(el, str(tmp_path / f"p{i}.png"), 5_000)
            seen.append(count)
        page.screenshot(path=str(shots / f"43-{path.stem}.png"), full_page=True)
        browser.close()
    # notebook 01: four pictures and the explorer's (its snapshot holds one too)
    assert len(found) >= pictures and len(seen) == len(found)
    for i, (f, pixels) in enumerate(zip(found, seen, strict=True)):
        assert f["outside"] >= 3 and f["height"] > 300 and pixels > 5_000, (path.name, i, f)

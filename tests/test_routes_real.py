"""Routes on real projects, against the route tables their frameworks print (slow: downloads
Flask's and FastAPI's sdists and installs the frameworks by name; bench/routes_bench.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_routes_match_flask_url_map_and_fastapi_routes(tmp_path: Path) -> None:
    out = tmp_path / "routes.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "routes_bench.py"), "--out", str(out)],
        capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    if proc.returncode != 0 and "failed" in proc.stderr and "pip" in proc.stderr:
        pytest.skip(f"no package index: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    flask, fastapi = data["flask"]["ctxframe"], data["fastapi"]["ctxframe"]
    # the Flask tutorial (blueprints, url_prefix, methods=, add_url_rule) and its JS example
    assert flask["routes"] == 15 and flask["precision"] == 100.0 and flask["recall"] == 100.0
    # FastAPI's docs_src: over 500 apps; a route whose path is an expression cannot be read
    assert fastapi["units"] >= 500
    assert fastapi["precision"] >= 99.0 and fastapi["recall"] >= 99.5

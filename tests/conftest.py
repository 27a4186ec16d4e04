"""Shared fixtures: a private copy of the bundled sample shop, indexed once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "data-samples" / "shop"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A writable copy of the sample shop (tests may edit it)."""
    dest = tmp_path / "shop"
    shutil.copytree(SAMPLE, dest)
    return dest


@pytest.fixture(scope="session")
def shop_graph(tmp_path_factory):
    """The sample shop indexed once, read-only for the tests that share it."""
    import ctxframe as cf

    dest = tmp_path_factory.mktemp("shared") / "shop"
    shutil.copytree(SAMPLE, dest)
    return cf.index(str(dest), progress=False)

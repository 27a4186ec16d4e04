"""Shared fixtures: a private copy of the bundled sample shop, indexed once per session."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "data-samples" / "shop"
_PRIVATE_CACHE: list[str] = []


def pytest_configure(config):
    """The extraction cache (ctxframe._store.xcache) of a test run: private, never the user's."""
    if "CTXFRAME_CACHE_DIR" not in os.environ:
        _PRIVATE_CACHE.append(tempfile.mkdtemp(prefix="ctxframe-test-xcache-"))
        os.environ["CTXFRAME_CACHE_DIR"] = _PRIVATE_CACHE[0]


def pytest_unconfigure(config):
    for where in _PRIVATE_CACHE:
        shutil.rmtree(where, ignore_errors=True)
        os.environ.pop("CTXFRAME_CACHE_DIR", None)


# The CLI processes the tests start read byte-compiled modules, as after `pip install`, instead of
# compiling every module again in each process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A writable copy of the sample shop (tests may edit it)."""
    dest = tmp_path / "shop"
    shutil.copytree(SAMPLE, dest)
    return dest


@pytest.fixture(scope="session")
def _shop_index_template(tmp_path_factory) -> Path:
    """The sample shop with its default store, indexed once per test process."""
    import ctxframe as cf

    dest = tmp_path_factory.mktemp("template") / "shop"
    shutil.copytree(SAMPLE, dest)
    cf.index(str(dest), progress=False)
    return dest


@pytest.fixture
def indexed_shop(tmp_path: Path, _shop_index_template: Path) -> Path:
    """A writable copy of the sample shop with its store already built (`cf.open` it)."""
    dest = tmp_path / "shop"
    shutil.copytree(_shop_index_template, dest, symlinks=True)
    return dest


@pytest.fixture(scope="session")
def bare_shop_template(tmp_path_factory) -> Path:
    """DIR/shop without its adapters (they force a full resolution), indexed into DIR/inc."""
    import ctxframe as cf

    work = tmp_path_factory.mktemp("bare-template")
    shutil.copytree(SAMPLE, work / "shop")
    shutil.rmtree(work / "shop" / ".ctxframe" / "adapters")
    cf.index(str(work / "shop"), store=str(work / "inc"), progress=False)
    return work


@pytest.fixture
def bare_shop(tmp_path: Path, bare_shop_template: Path) -> tuple[Path, str]:
    """A writable copy of `bare_shop_template`: (repository, store)."""
    shutil.copytree(bare_shop_template, tmp_path, symlinks=True, dirs_exist_ok=True)
    return tmp_path / "shop", str(tmp_path / "inc")


@pytest.fixture(scope="session")
def shop_graph(tmp_path_factory):
    """The sample shop indexed once, read-only for the tests that share it."""
    import ctxframe as cf

    dest = tmp_path_factory.mktemp("shared") / "shop"
    shutil.copytree(SAMPLE, dest)
    return cf.index(str(dest), progress=False)


def pytest_collection_modifyitems(config, items):
    """``slow`` tests (real corpora, downloads) run only when ``-m`` names them."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/golden/* from the current output instead of comparing",
    )


@pytest.fixture
def golden(request):
    """Compare text with tests/golden/NAME, or rewrite it under --update-golden."""
    update = request.config.getoption("--update-golden")
    root = Path(__file__).resolve().parent / "golden"

    def check(name: str, text: str) -> None:
        path = root / name
        if update or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if not update:
                pytest.fail(f"golden file {name} was missing and has been written; re-run")
        assert text == path.read_text(), f"output differs from tests/golden/{name}"

    return check

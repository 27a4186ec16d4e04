"""Which embedded language parses a path: by its last extension (and `.d.ts`)."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxframe._core.languages import _BY_EXT, language_for


def _by_pathlib(path: str):
    """The rule as pathlib states it: the name's suffix, lowercased."""
    name = PurePosixPath(path).name
    if name.endswith(".d.ts"):
        return _BY_EXT[".ts"]
    return _BY_EXT.get(PurePosixPath(name).suffix.lower())


@pytest.mark.parametrize(("path", "want"), [
    ("a.py", "python"),
    ("src/App.TSX", "tsx"),
    ("types/index.d.ts", "typescript"),
    ("lib/x.go", "go"),
    ("Makefile", None),
    (".py", None),  # a hidden file named `.py` has no suffix
    ("dir.py/README", None),
    ("a.", None),
    ("a..py", "python"),
])  # fmt: skip
def test_language_for(path: str, want: str | None) -> None:
    lang = language_for(path)
    assert (lang.name if lang else None) == want


_PART = st.text(alphabet="ab.Py/dts_-", min_size=1, max_size=8)


@given(st.lists(_PART, min_size=1, max_size=3).map("/".join))
def test_language_for_agrees_with_pathlib(path: str) -> None:
    if path.endswith("/") or "//" in path or path.startswith("/"):
        return  # walked paths are relative, normalised file paths
    assert language_for(path) is _by_pathlib(path)

"""Random edit sequences on the sample shop: every re-index equals a full rebuild, whichever
path it took (delta, incremental). Hypothesis draws files, edits and colliding names."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxframe as cf
from ctxframe._store import parts as _parts
from ctxframe._store import tables as _store

# file -> (line comment, a new function named {name} calling {callee})
_FILES = {
    "services/payments/refund_processor.py": ("#", "\n\ndef {name}(a):\n    return {callee}(a)\n"),
    "services/payments/checkout.py": ("#", "\n\ndef {name}(a):\n    return {callee}(a)\n"),
    "services/billing/usage_reporter.py": ("#", "\n\ndef {name}(a):\n    return {callee}(a)\n"),
    "gateway-go/refund/service.go": ("//", "\nfunc {name}(a int) int {{ return {callee}(a) }}\n"),
    "web/src/api/refunds.ts": (
        "//",
        "\nexport function {name}(a: number) {{ return {callee}(a); }}\n",
    ),
    "web/server/handlers.js": ("//", "\nfunction {name}(a) {{ return {callee}(a); }}\n"),
    "docs/refunds.md": (None, "\n## {name}\n\nSee `{callee}`.\n"),
}
# Names that collide with definitions already in the shop (and with each other).
_NAMES = ["validate_refund_amount", "ProcessRefund", "Refund", "usage", "IssueRefund", "helper_x"]

_edit = st.tuples(
    st.sampled_from(sorted(_FILES)),
    st.sampled_from(["comment", "add", "rename", "spaces"]),
    st.sampled_from(_NAMES),
    st.sampled_from(_NAMES),
)


def _apply(root: Path, path: str, op: str, name: str, other: str) -> None:
    file = root / path
    text = file.read_text()
    comment, template = _FILES[path]
    if op == "comment":
        text = (f"{comment} moved\n" if comment else "Moved down.\n\n") + text
    elif op == "spaces":  # new bytes, same graph: trailing spaces on the last line
        text = text.rstrip("\n") + "  \n"
    elif op == "add":
        text += template.format(name=name, callee=other)
    elif name in text:  # rename every occurrence of a name in this file only
        text = text.replace(name, other)
    file.write_text(text)


def _tables(store: str) -> dict[str, pl.DataFrame]:
    out = {}
    for name in ("nodes", "edges", "files", "tokens", "vocab", "refs", "bnodes", "bedges"):
        frame = _store.read_table(store, name)
        frame = frame.drop("mtime_ns") if name == "files" else frame
        out[name] = frame.sort(pl.all(), nulls_last=True)
    return out


@pytest.fixture(scope="module")
def parted_template(tmp_path_factory, bare_shop_template: Path) -> Path:
    """`bare_shop_template` with its store in several parts (ctxframe._store.parts)."""
    work = tmp_path_factory.mktemp("parted")
    shutil.copytree(bare_shop_template, work, symlinks=True, dirs_exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_parts, "PART_BYTES", 1500)
        cf.index(str(work / "shop"), store=str(work / "inc"), rebuild=True, progress=False)
    assert len(_store.Snapshot(str(work / "inc")).bounds()) >= 3
    return work


@settings(
    max_examples=int(os.environ.get("CTXFRAME_RANDOM_EDITS", "8")),  # more: a longer hunt
    deadline=None,
    derandomize=not os.environ.get("CTXFRAME_RANDOM_EDITS"),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(edits=st.lists(_edit, min_size=1, max_size=3), many_parts=st.booleans())
def test_random_edits_equal_full_rebuild(
    tmp_path_factory, bare_shop_template: Path, parted_template: Path, edits, many_parts: bool
) -> None:
    """With `many_parts`, every table is stored in several parts (ctxframe._store.parts)."""
    work = tmp_path_factory.mktemp("random")
    template = parted_template if many_parts else bare_shop_template
    shutil.copytree(template, work, symlinks=True, dirs_exist_ok=True)
    _edit_and_compare(work, work / "shop", str(work / "inc"), edits)


def _edit_and_compare(work: Path, root: Path, store: str, edits) -> None:
    for n, edit in enumerate(edits):
        _apply(root, *edit)
        report = cf.index(str(root), store=store, progress=False).report
        if os.environ.get("CTXFRAME_RANDOM_EDITS"):
            print("mode", report.mode, edit)
        full = str(work / f"full{n}")
        cf.index(str(root), store=full, rebuild=True, progress=False)
        inc, want = _tables(store), _tables(full)
        for name in inc:
            assert inc[name].equals(want[name]), (
                f"after {edits[: n + 1]} ({report.mode}): {name} differs from a full rebuild"
            )

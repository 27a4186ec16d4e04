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

# Python edits the value flow solves again (ctxframe._resolve.flow_state): a call, a call's
# target, an import, a class and a subclass overriding a method, a decorator, attribute reads
# and stores; {name} and {other} are drawn from _NAMES
_PY_OPS = {
    "call": "\n\ndef call_{name}(p):\n    return p.ProcessRefund({other}, 1)\n",
    "import": "from services.payments.gateway import PaymentGateway as Gw_{name}\n",
    "class": (
        "\n\nclass {name}Processor(PaymentRefundProcessor):\n"
        "    def ProcessRefund(self, order_id, amount):\n"
        "        self.last = {other}(amount, amount)\n"
        "        return self.gateway.Refund(order_id, amount)\n"
    ),
    "decorator": (
        "\n\ndef deco_{name}(f):\n    def inner(*a):\n        return f(*a)\n\n    return inner\n"
        "\n\n@deco_{name}\ndef wrapped_{name}(a):\n    return {other}(a)\n"
    ),
    "attr": (
        "\n\ndef read_{name}(p):\n    p.seen = {other}\n"
        "    return p.gateway.Refund(p.seen, 1)\n"
    ),
}
_PY_FILES = [p for p in _FILES if p.endswith(".py")]

_edit = st.tuples(
    st.sampled_from(sorted(_FILES)),
    st.sampled_from(["comment", "add", "rename", "spaces", "retarget", *_PY_OPS]),
    st.sampled_from(_NAMES),
    st.sampled_from(_NAMES),
)


def _apply(root: Path, path: str, op: str, name: str, other: str) -> None:
    file = root / path
    text = file.read_text()
    comment, template = _FILES[path]
    if op in _PY_OPS or op == "retarget":
        if path not in _PY_FILES:
            path = _PY_FILES[hash((name, other)) % len(_PY_FILES)]
            file = root / path
            text = file.read_text()
        if op == "import":
            text = _PY_OPS[op].format(name=name, other=other) + text
        elif op == "retarget":  # a call's target changes: the first call of one name
            for a in _NAMES:
                if f"{a}(" in text and a != other:
                    text = text.replace(f"{a}(", f"{other}(", 1)
                    break
        else:
            text += _PY_OPS[op].format(name=name, other=other)
        file.write_text(text)
        return
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
            print("mode", report.mode, report.flow, edit)
        full = str(work / f"full{n}")
        cf.index(str(root), store=full, rebuild=True, progress=False)
        inc, want = _tables(store), _tables(full)
        for name in inc:
            assert inc[name].equals(want[name]), (
                f"after {edits[: n + 1]} ({report.mode}): {name} differs from a full rebuild"
            )

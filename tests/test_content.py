"""A definition's own text (ctxframe._ingest.content): real snippets parsed by extraction, and
the invariant that every line belongs to exactly one node."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._ingest.content import own_text
from ctxframe._ingest.extract import extract_file

PY = textwrap.dedent(
    '''\
    """Module docstring: punycode helpers."""
    import idna

    LIMIT = 10  # top-level statement


    class Encoder:
        """Turns hostnames into ASCII."""

        mode = "strict"

        def encode(self, host):
            # non-ascii labels become punycode
            return idna.encode(host)

        def decode(self, raw):
            return raw.decode("ascii")


    def helper():
        def inner():
            return "nested words"
        return inner
    '''
)


def _own(tmp_path, name: str, text: str) -> dict[str, str]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    res = extract_file(str(tmp_path), name)
    return dict(res.content)


def test_python_bodies_belong_to_their_own_definition(tmp_path) -> None:
    own = _own(tmp_path, "m.py", PY)
    assert "punycode" in own["m.py::Encoder.encode"]  # a method's body is the method's
    assert "idna.encode(host)" in own["m.py::Encoder.encode"]
    assert "def encode" not in own["m.py::Encoder.encode"]  # the first line is the signature
    assert "raw.decode" not in own["m.py::Encoder.encode"]
    enc = own["m.py::Encoder"]  # a class keeps its docstring and class-level statements
    assert "Turns hostnames into ASCII" in enc and 'mode = "strict"' in enc
    assert "idna.encode" not in enc and "raw.decode" not in enc
    file = own["m.py"]  # a file keeps its module docstring and top-level statements
    assert "Module docstring" in file and "import idna" in file and "LIMIT = 10" in file
    assert "Turns hostnames" not in file and "return inner" not in file
    assert "nested words" in own["m.py::helper.inner"]
    assert "nested words" not in own["m.py::helper"] and "return inner" in own["m.py::helper"]


def test_markdown_sections_own_their_text(tmp_path) -> None:
    md = "# Guide\n\nIntro words.\n\n## Install\n\nRun pip install.\n\n## Usage\n\nCall it.\n"
    own = _own(tmp_path, "README.md", md)
    assert "Run pip install" in own["README.md::Guide > Install"]
    assert "Call it" in own["README.md::Guide > Usage"]
    assert "Run pip" not in own["README.md::Guide"] and "Intro words" in own["README.md::Guide"]


@pytest.mark.parametrize(
    ("name", "text", "node", "word"),
    [
        (
            "a.go",
            "package a\n\nfunc Send() {\n\t// retry the webhook\n}\n",
            "a.go::Send",
            "webhook",
        ),
        (
            "a.ts",
            "export class Cart {\n  total() {\n    return sumPrices(this.items);\n  }\n}\n",
            "a.ts::Cart.total",
            "sumPrices",
        ),
        ("a.rs", 'fn main() {\n    let greeting = "hello world";\n}\n', "a.rs::main", "hello"),
    ],
)
def test_other_languages(tmp_path, name: str, text: str, node: str, word: str) -> None:
    assert word in _own(tmp_path, name, text)[node]


def _spans(draw_sizes: list[int]) -> list[tuple]:
    """Nested definition rows over lines 1..n from a list of sizes (a stack of blocks)."""
    rows, line, stack = [], 1, []
    for i, size in enumerate(draw_sizes):
        start = line
        end = start + size
        parent = stack[-1] if stack and stack[-1][1] >= end else None
        if parent is None:
            stack.clear()
        rows.append((f"f::d{i}", "function", f"d{i}", f"d{i}", "py", "f", start, end, "", None, ""))
        stack.append((start, end))
        line = start + 1 if i % 2 == 0 else end + 1
    return rows


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=6), max_size=8))
def test_every_line_belongs_to_one_node(sizes: list[int]) -> None:
    rows = _spans(sizes)
    n = max([r[7] for r in rows], default=1) + 2
    lines = [f"w{i}" for i in range(1, n + 1)]
    data = "\n".join(lines).encode()
    own = own_text(rows, "f", data)
    seen: list[str] = []
    for _node, text in own:
        seen.extend(text.split("\n"))
    first_lines = {f"w{r[6]}" for r in rows}
    assert len(seen) == len(set(seen))  # no line twice
    assert set(seen) | first_lines == set(lines)  # every line somewhere (or a signature)

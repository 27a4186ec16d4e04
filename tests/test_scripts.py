"""`if __name__ == "__main__":` blocks: a `script` node whose calls run when the file is
executed, not imported (ctxframe._ingest.lang.python.script_blocks, extract._scripts)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from tree_sitter_language_pack import get_parser

import ctxframe as cf
from ctxframe._ingest.lang.python import script_blocks

BLOCKS = [
    ("plain", 'import sys\n\nif __name__ == "__main__":\n    main()\n    sys.exit(0)\n', [(3, 5)]),
    ("operands swapped, single quotes", "if '__main__' == __name__:\n    main()\n", [(1, 2)]),
    ("the else branch runs at import",
     'if __name__ == "__main__":\n    main()\nelse:\n    setup()\n', [(1, 2)]),
    ("two blocks", 'if __name__ == "__main__":\n    a()\n\nif __name__ == "__main__":\n    b()\n',
     [(1, 2), (4, 5)]),
    ("inside a function it is ordinary code",
     'def f():\n    if __name__ == "__main__":\n        g()\n', []),
    ("another comparison", 'if __name__ != "__main__":\n    a()\n', []),
    ("another module name", 'if __name__ == "app":\n    a()\n', []),
    ("and another test", 'if sys.platform != "win32" and __name__ == "__main__":\n    a()\n',
     [(1, 2)]),
    ("and, parenthesized", 'if (DEBUG and (__name__ == "__main__")):\n    a()\n', [(1, 2)]),
    ("or another test runs at import too", 'if __name__ == "__main__" or DEBUG:\n    a()\n', []),
]  # fmt: skip


@pytest.mark.parametrize(("name", "src", "want"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_script_blocks(name: str, src: str, want: list[tuple[int, int]]) -> None:
    root = get_parser("python").parse(src.encode()).root_node
    assert script_blocks(root, src) == want, name


TOOL = (
    "import os\nimport sys\n\n\ndef main():\n    return 0\n\n\ndef setup():\n    pass\n\n\n"
    "setup()\n\n"
    'if __name__ == "__main__":\n    code = main()\n    os.environ.get("TOOL_DEBUG")\n'
    "    sys.exit(code)\n"
)


def test_a_main_block_is_a_script_node(tmp_path: Path) -> None:
    """The block is a `script` node of the file; its calls and env reads come from it, the
    file's own top-level calls still from the file; `hubs` says which runs how (a
    `__main__.py`'s top level runs as a script too)."""
    (tmp_path / "tool.py").write_text(TOOL)
    (tmp_path / "use.py").write_text("from tool import main\n\n\ndef go():\n    main()\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__main__.py").write_text("from use import go\n\ngo()\n")
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    node = g.nodes.filter(pl.col("kind") == "script").row(0, named=True)
    want = ("tool.py::__main__", "__main__", "tool.py", 15, 18)
    assert tuple(node[k] for k in ("id", "label", "parent", "line_start", "line_end")) == want
    calls = g.edges.filter((pl.col("kind") == "calls") & (pl.col("path") == "tool.py"))
    by_src = {s: set(d["dst"].drop_nulls()) for (s,), d in calls.group_by("src")}
    assert by_src == {"tool.py": {"tool.py::setup"}, "tool.py::__main__": {"tool.py::main"}}
    reads = g.edges.filter(pl.col("dst") == "env:TOOL_DEBUG")["src"].to_list()
    assert reads == ["tool.py::__main__"]
    assert set(g.card("main").callers["other_id"]) == {"tool.py::__main__", "use.py::go"}
    why = dict(g.hubs().entry_points.select("id", "why").iter_rows())
    assert why["tool.py::__main__"] == "run as a script"
    assert why["tool.py::setup"] == "run at import"
    assert why["use.py::go"] == "run as a script"  # `python -m pkg` runs pkg/__main__.py
    assert "tool.py::main" not in why or why["tool.py::main"] == "main"


def test_the_ranker_lists_a_script_only_when_asked(tmp_path: Path) -> None:
    """A script node has no words of its own (its lines are its file's text): `query` keeps it
    out of the hits unless `kinds` names `script`."""
    (tmp_path / "tool.py").write_text(TOOL)
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    assert "script" not in g.rank("main tool", limit=20)["kind"].to_list()
    assert g.rank("main", kinds=["script"])["id"].to_list() == ["tool.py::__main__"]

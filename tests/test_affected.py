"""`affected`: the reverse walk names the file and class holding a changed symbol, but not
everything that imports the file or calls the class; a function holding a nested one is walked
on from (it runs it). `explain` names the tests `change-plan` names."""

from __future__ import annotations

import pytest
from _tree import write_tree

import ctxframe as cf

FILES = {
    "lib.py": "class Quoter:\n    def quote(self, s):\n        return s\n\n\n"
    "def other():\n    return 1\n\n\ndef outer():\n    def inner():\n        return 2\n\n"
    "    return inner()\n\n\ndef user():\n    return outer()\n",
    "tests/test_other.py": "import lib\n\n\ndef test_other():\n    assert lib.other() == 1\n",
    "tests/test_quote.py": "from lib import Quoter\n\n\ndef test_quote():\n"
    "    assert Quoter().quote('a') == 'a'\n",
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> cf.Graph:
    root = write_tree(tmp_path_factory.mktemp("affected"), FILES)
    return cf.index(str(root), store=str(root / ".store"), progress=False)


def test_the_holders_are_affected_not_their_importers(graph: cf.Graph) -> None:
    a = graph.affected("Quoter.quote")
    assert {"lib.py::Quoter", "lib.py"} <= set(a.nodes["id"])
    assert a.tests == ["tests/test_quote.py"]  # test_other.py imports lib, never calls quote


def test_a_nested_function_affects_what_calls_its_holder(graph: cf.Graph) -> None:
    assert "lib.py::user" in set(graph.affected("outer.inner").nodes["id"])


@pytest.mark.parametrize("name", ["Quoter.quote", "other", "outer.inner"])
def test_explain_names_the_tests_change_plan_names(graph: cf.Graph, name: str) -> None:
    assert graph.explain(name).tests == graph.change_plan(name).tests

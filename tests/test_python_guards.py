"""Which returns of a decorator factory cannot run when it is applied to a definition (`@f`)
or called without its first argument (`@f()`): ctxframe._ingest.lang.python_guards on real
parses. Each case lists every return of the function, in order, as (deco dead, bare dead)."""

from __future__ import annotations

import pytest
from tree_sitter_language_pack import get_parser

from ctxframe._ingest.lang.python_guards import Guards

CASES = [
    ("first parameter is None",
     "def f(cls=None, *, tag=None):\n    if cls is None:\n        return wrap\n"
     "    return wrap(cls)\n",
     [(True, False), (False, True)]),
    ("conjunctions, elif and else on two parameters",
     "def f(name=None, func=None):\n    if name is None and func is None:\n        return a\n"
     "    elif name is not None and func is None:\n        if callable(name):\n"
     "            return b\n        else:\n            return c\n"
     "    elif name is not None and func is not None:\n        return d\n",
     [(True, False), (False, True), (True, True), (True, True)]),
    ("a local that is None unless a condition holds",
     "def f(name=None, cls=None):\n    func = None\n    if callable(name):\n"
     "        func = name\n        name = None\n    if func is not None:\n"
     "        return a(func)\n    return a\n",
     [(False, True), (False, False)]),
    ("a method: the first parameter after self",
     "class C:\n    def f(self, name=None):\n        if not name:\n            return a\n"
     "        return b\n",
     [(True, False), (False, True)]),
    ("a parameter assigned where it may run is unknown",
     "def f(cls=None):\n    if flag:\n        cls = make()\n    if cls is None:\n"
     "        return a\n    return b\n",
     [(False, False), (False, False)]),
    ("no default: a call without it says nothing",
     "def f(cls, other=None):\n    if cls is None:\n        return a\n    return b\n",
     [(True, False), (False, False)]),
    ("conditions on other things are unknown",
     "def f(cls=None):\n    if isinstance(cls, type):\n        return a\n"
     "    if cls.x is None:\n        return b\n    return c\n",
     [(False, False), (False, False), (False, False)]),
    ("a first `*args`: the definition in it, or nothing",
     "def f(*args, path=None):\n    if not args:\n        return a\n    return a(*args)\n",
     [(True, False), (False, True)]),
    ("a local unpacked from `*args` under a condition",
     "class G:\n    def f(self, *args, **kw):\n        func = None\n"
     "        if args and callable(args[0]):\n            (func,) = args\n            args = ()\n"
     "        if func is not None:\n            return a(func)\n        return a\n",
     [(False, True), (False, False)]),
    ("a nested function's returns are its own",
     "def f(cls=None):\n    def g(x):\n        if x is None:\n            return 1\n"
     "        return 2\n    return g\n",
     [(False, False)]),
]  # fmt: skip


def _returns(node, fn):
    for c in node.children:
        if c.type == "return_statement":
            yield c
        elif c.type not in ("function_definition", "class_definition", "lambda"):
            yield from _returns(c, fn)


@pytest.mark.parametrize(("name", "src", "want"), CASES, ids=[c[0] for c in CASES])
def test_dead_returns(name: str, src: str, want: list[tuple[bool, bool]]) -> None:
    data = src.encode()
    tree = get_parser("python").parse(data)
    fns, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            fns.append(node)
        stack.extend(reversed(node.children))
    fn = fns[0]

    def txt(n):
        return data[n.start_byte : n.end_byte].decode()

    guards = Guards(fn, txt)
    body = fn.child_by_field_name("body")
    got = [guards.dead(r) for r in _returns(body, fn)]
    assert got == want, name


def test_a_condition_too_deep_to_read_keeps_the_return() -> None:
    """Generated code with a condition of thousands of terms: the return stays live."""
    cond = " and ".join(f"x{i}" for i in range(5000))
    data = f"def f(cls=None):\n    if cls is None and {cond}:\n        return a\n".encode()
    fn = get_parser("python").parse(data).root_node.children[0]
    guards = Guards(fn, lambda n: data[n.start_byte : n.end_byte].decode())
    ret = fn.child_by_field_name("body").children[0].child_by_field_name("consequence").children[0]
    assert guards.dead(ret) == (False, False)

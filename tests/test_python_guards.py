"""Which returns of a decorator factory cannot run when it is applied to a definition (`@f`),
called without its first argument (`@f()`) or with a literal one (`@f("name")`):
ctxframe._ingest.lang.python_guards on real parses. Each case lists every return of the
function, in order, as (deco dead, bare dead, literal dead)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_sitter_language_pack import get_parser

from ctxframe._ingest.lang.python_guards import Guards

CASES = [
    ("first parameter is None",
     "def f(cls=None, *, tag=None):\n    if cls is None:\n        return wrap\n"
     "    return wrap(cls)\n",
     [(True, False, True), (False, True, False)]),
    ("conjunctions, elif and else on two parameters",
     "def f(name=None, func=None):\n    if name is None and func is None:\n        return a\n"
     "    elif name is not None and func is None:\n        if callable(name):\n"
     "            return b\n        else:\n            return c\n"
     "    elif name is not None and func is not None:\n        return d\n",
     [(True, False, True), (False, True, True), (True, True, False), (True, True, False)]),
    ("a local that is None unless a condition holds",
     "def f(name=None, cls=None):\n    func = None\n    if callable(name):\n"
     "        func = name\n        name = None\n    if func is not None:\n"
     "        return a(func)\n    return a\n",
     [(False, True, True), (False, False, False)]),
    ("a method: the first parameter after self",
     "class C:\n    def f(self, name=None):\n        if not name:\n            return a\n"
     "        return b\n",
     [(True, False, False), (False, True, False)]),
    ("a parameter assigned where it may run is unknown",
     "def f(cls=None):\n    if flag:\n        cls = make()\n    if cls is None:\n"
     "        return a\n    return b\n",
     [(False, False, False), (False, False, False)]),
    ("no default: a call without it says nothing",
     "def f(cls, other=None):\n    if cls is None:\n        return a\n    return b\n",
     [(True, False, True), (False, False, False)]),
    ("conditions on other things are unknown",
     "def f(cls=None):\n    if isinstance(cls, type):\n        return a\n"
     "    if cls.x is None:\n        return b\n    return c\n",
     [(False, False, False), (False, False, False), (False, False, False)]),
    ("a first `*args`: the definition in it, or nothing",
     "def f(*args, path=None):\n    if not args:\n        return a\n    return a(*args)\n",
     [(True, False, True), (False, True, False)]),
    ("a local unpacked from `*args` under a condition",
     "class G:\n    def f(self, *args, **kw):\n        func = None\n"
     "        if args and callable(args[0]):\n            (func,) = args\n            args = ()\n"
     "        if func is not None:\n            return a(func)\n        return a\n",
     [(False, True, True), (False, False, False)]),
    ("a nested function's returns are its own",
     "def f(cls=None):\n    def g(x):\n        if x is None:\n            return 1\n"
     "        return 2\n    return g\n",
     [(False, False, False)]),
]  # fmt: skip


def _returns(node, fn):
    for c in node.children:
        if c.type == "return_statement":
            yield c
        elif c.type not in ("function_definition", "class_definition", "lambda"):
            yield from _returns(c, fn)


@pytest.mark.parametrize(("name", "src", "want"), CASES, ids=[c[0] for c in CASES])
def test_dead_returns(name: str, src: str, want: list[tuple[bool, bool, bool]]) -> None:
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
    assert guards.dead(ret) == (False, False, False)


def _world_values(state: str | None, star: bool) -> list:
    """Every concrete value a parameter in `state` may hold (None: anything)."""
    definition = _returns  # any function stands for a decorated definition
    if star:
        known = {"items": [(definition,)], "empty": [()], "litems": [("x",), ("", 1)]}
        return known.get(state, [(), (definition,), ("x",)])
    known = {"def": [definition], "none": [None], "lit": ["", "x", 0, 2.5]}
    return known.get(state, [None, definition, "", "x"])


_ATOMS = st.sampled_from(
    ["{x} is None", "{x} is not None", "{x}", "callable({x})", "callable({x}[0])", "flag"]
)
_NAMES = st.sampled_from(["P", "q"])


@st.composite
def _conditions(draw, depth: int = 3):
    if depth == 0 or draw(st.booleans()):
        return draw(_ATOMS).format(x=draw(_NAMES))
    op = draw(st.sampled_from(["not", "and", "or"]))
    if op == "not":
        return f"not ({draw(_conditions(depth - 1))})"
    return f"({draw(_conditions(depth - 1))}) {op} ({draw(_conditions(depth - 1))})"


@settings(max_examples=300, deadline=None, database=None)
@given(cond=_conditions(), star=st.booleans(), in_else=st.booleans())
def test_a_return_read_dead_never_runs(cond: str, star: bool, in_else: bool) -> None:
    """Whatever the condition, a return read as dead in a call cannot run there: its
    condition, evaluated by Python in every state that call allows, never lets it through."""
    first = "*P" if star else "P=None"
    body = "    if {c}:\n        pass\n    else:\n        return 1\n" if in_else else (
        "    if {c}:\n        return 1\n")  # fmt: skip
    src = f"def f({first}, q=None):\n" + body.format(c=cond)
    data = src.encode()
    fn = get_parser("python").parse(data).root_node.children[0]
    guards = Guards(fn, lambda n: data[n.start_byte : n.end_byte].decode())
    ret = next(_returns(fn.child_by_field_name("body"), fn))
    deco, bare, lit = guards.dead(ret)
    states = {  # per call: the states `dead` assumes for P and q
        "deco": ("items" if star else "def", "none"),
        "bare": ("empty" if star else "none", None),
        "lit": ("litems" if star else "lit", None),
    }
    for call, dead in (("deco", deco), ("bare", bare), ("lit", lit)):
        if not dead:
            continue
        p_state, q_state = states[call]
        for p in _world_values(p_state, star):
            for q in _world_values(q_state, False):
                for flag in (True, False):
                    env = {"P": p, "q": q, "flag": flag}
                    try:
                        holds = bool(eval(cond, {"callable": callable}, env))
                    except (IndexError, TypeError):  # `None[0]`: the return cannot run either
                        continue
                    assert holds is in_else, (src, call, p, q, flag)  # the return cannot run

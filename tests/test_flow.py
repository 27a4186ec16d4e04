"""Python calls follow values (ctxframe._resolve.flow): small programs, real parsing, and the
edges a reader of the code expects, written by hand."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from _tree import write_tree

import ctxframe as cf

PKG_INIT = "from ._client import *\nfrom ._api import get\n"
CLIENT = (
    '__all__ = ["Client"]\n\n\nclass Client:\n    def __init__(self, base=""):\n'
    "        self.base = base\n\n    def get(self, url):\n        return url\n\n"
    "    def __enter__(self):\n        return self\n\n    def __exit__(self, *a):\n"
    "        pass\n\n\nclass Hidden:\n    pass\n"
)
API = "from ._client import Client\n\n\ndef get(url):\n    return Client().get(url)\n"

# (name, files, expected (src, dst, confidence), absent (src, dst))
CASES = [
    (
        "package re-exports, constructors, receivers typed by their constructor",
        {
            "pkg/__init__.py": PKG_INIT,
            "pkg/_client.py": CLIENT,
            "pkg/_api.py": API,
            "t.py": "import pkg\n\n\ndef test():\n    c = pkg.Client()\n    c.get('/')\n"
            "    pkg.get('/')\n    with pkg.Client() as d:\n        d.get('/')\n",
        },
        [
            ("t.py::test", "pkg/_client.py::Client.__init__", "EXTRACTED"),
            ("t.py::test", "pkg/_client.py::Client.get", "EXTRACTED"),
            ("t.py::test", "pkg/_api.py::get", "EXTRACTED"),
            ("t.py::test", "pkg/_client.py::Client.__enter__", "EXTRACTED"),
            ("t.py::test", "pkg/_client.py::Client.__exit__", "EXTRACTED"),
        ],
        [],
    ),
    (
        "literal receivers never link to a repo method",
        {
            "u.py": "class URL:\n    def join(self, other):\n        return other\n\n\n"
            "def f(parts):\n    sep = ', '\n    a = ', '.join(parts)\n    b = sep.join(parts)\n"
            "    c = f'{a}'.join(parts)\n    d = {'k': 1}.get('k')\n    return str(b).join(c)\n",
        },
        [],
        [("u.py::f", "u.py::URL.join")],
    ),
    (
        "parameters, returns, containers, lambdas, decorators",
        {
            "m.py": "def target():\n    pass\n\n\ndef call(fn):\n    fn()\n\n\n"
            "def make():\n    return target\n\n\ntable = {'a': target}\n\n\n"
            "def dec(f):\n    def inner():\n        return f()\n    return inner\n\n\n"
            "@dec\ndef wrapped():\n    pass\n\n\n"
            "def main():\n    call(target)\n    make()()\n    table['a']()\n"
            "    g = lambda x: x()\n    g(target)\n    wrapped()\n",
        },
        [
            ("m.py::call", "m.py::target", "EXTRACTED"),
            ("m.py::main", "m.py::target", "EXTRACTED"),
            ("m.py::main", "m.py::main.<lambda1>", "EXTRACTED"),
            ("m.py::main.<lambda1>", "m.py::target", "EXTRACTED"),
            ("m.py::main", "m.py::dec.inner", "EXTRACTED"),
            ("m.py", "m.py::dec", "EXTRACTED"),
            ("m.py::dec.inner", "m.py::wrapped", "EXTRACTED"),
        ],
        [("m.py::main", "m.py::wrapped")],
    ),
    (
        "a decorator handing back its argument through helpers keeps each class apart",
        {
            "r.py": "from functools import partial\n\n\ndef auto(cls=None, *, angular=False):\n"
            "    def apply(cls, angular=False):\n        cls.flag = angular\n        return cls\n"
            "    if cls is None:\n        return partial(apply, angular=angular)\n"
            "    return apply(cls, angular=angular)\n\n\n"
            "def rich(cls=None):\n    return auto(cls)\n\n\n"
            "@rich\nclass A:\n    def __init__(self):\n        pass\n\n\n"
            "@rich\nclass B:\n    def __init__(self):\n        pass\n\n\n"
            "@auto\nclass C:\n    def __init__(self):\n        pass\n\n\n"
            "def main():\n    A()\n    B()\n    C()\n",
        },
        [
            ("r.py::main", "r.py::A.__init__", "EXTRACTED"),
            ("r.py::main", "r.py::B.__init__", "EXTRACTED"),
            ("r.py::main", "r.py::C.__init__", "EXTRACTED"),
        ],
        [],
    ),
    (
        "a registry method handing back what it registers keeps each function apart",
        {
            "lib.py": "class Library:\n    def __init__(self):\n        self.filters = {}\n\n"
            "    def filter(self, name=None, func=None):\n"
            "        if name is None:\n            def dec(func):\n"
            "                return self.filter(func.__name__, func)\n            return dec\n"
            "        if func is None:\n            return self.filter_function(name)\n"
            "        self.filters[name] = func\n        return func\n\n"
            "    def filter_function(self, func):\n"
            "        return self.filter(func.__name__, func)\n\n\n"
            "register = Library()\n\n\n@register.filter\ndef upper(v):\n    return v\n\n\n"
            "@register.filter()\ndef lower(v):\n    return v\n\n\n"
            "def use():\n    upper(1)\n    lower(2)\n",
        },
        [
            ("lib.py::use", "lib.py::upper", "EXTRACTED"),
            ("lib.py::use", "lib.py::lower", "EXTRACTED"),
        ],
        [],
    ),
    (
        "a test's patch of the code (`clock.now = lambda: 5`) stays out of the code's calls",
        {
            "pkg/__init__.py": "",
            "pkg/clock.py": "def now():\n    return 1\n",
            "pkg/use.py": "from pkg import clock\n\n\ndef stamp():\n    return clock.now()\n",
            "pkg/speed.py": "from pkg import clock\n\n\ndef fast():\n    return 2\n\n\n"
            "def install():\n    clock.now = fast\n",
            "tests/test_clock.py": "from pkg import clock, use\n\n\n"
            "def test_stamp():\n    clock.now = lambda: 5\n    use.stamp()\n",
        },
        [
            ("pkg/use.py::stamp", "pkg/clock.py::now", "EXTRACTED"),
            ("pkg/use.py::stamp", "pkg/speed.py::fast", "EXTRACTED"),  # the code's own patch
            ("tests/test_clock.py::test_stamp", "pkg/use.py::stamp", "EXTRACTED"),
        ],
        [("pkg/use.py::stamp", "tests/test_clock.py::test_stamp.<lambda1>")],
    ),
    (
        "a decorator returning `wrapper = func` in one branch keeps each function apart",
        {
            "s.py": "import inspect\nfrom functools import wraps\n\n\n"
            "def sensitive(*names):\n    def decorator(func):\n"
            "        if inspect.iscoroutinefunction(func):\n            wrapper = func\n"
            "        else:\n            @wraps(func)\n            def wrapper(*a, **k):\n"
            "                return func(*a, **k)\n        return wrapper\n"
            "    return decorator\n\n\n"
            "@sensitive('p')\ndef login(p):\n    return p\n\n\n"
            "@sensitive('q')\nasync def alogin(q):\n    return q\n\n\n"
            "def use():\n    login(1)\n    alogin(2)\n",
        },
        [
            ("s.py::use", "s.py::login", "EXTRACTED"),
            ("s.py::use", "s.py::alogin", "EXTRACTED"),
        ],
        [],
    ),
    (
        "`@overload` stubs are not what a call of the name runs: the implementation is",
        {
            "o.py": "from typing import overload\n\n\n@overload\ndef conv(x: int) -> int: ...\n\n\n"
            "@overload\ndef conv(x: str) -> str: ...\n\n\ndef conv(x):\n    return x\n\n\n"
            "class C:\n    @overload\n    def m(self, x: int) -> int: ...\n\n"
            "    def m(self, x):\n        return x\n\n\n"
            "def use():\n    conv(1)\n    C().m(2)\n",
        },
        [
            ("o.py::use", "o.py::conv#3", "EXTRACTED"),
            ("o.py::use", "o.py::C.m#2", "EXTRACTED"),
        ],
        [("o.py::use", "o.py::conv"), ("o.py::use", "o.py::conv#2"), ("o.py::use", "o.py::C.m")],
    ),
    (
        "self attributes, the MRO, super(), raise and for",
        {
            "c.py": "class Base:\n    def __init__(self):\n        pass\n\n    def run(self):\n"
            "        self.helper.work()\n\n\nclass Helper:\n    def work(self):\n        pass\n\n\n"
            "class Child(Base):\n    def __init__(self):\n        super().__init__()\n"
            "        self.helper = Helper()\n\n\nclass Bad(Exception):\n"
            "    def __init__(self):\n        pass\n\n\nclass Bag:\n    def __iter__(self):\n"
            "        return self\n\n    def __next__(self):\n        raise StopIteration\n\n\n"
            "def main():\n    Child().run()\n    for _ in Bag():\n        pass\n    raise Bad\n",
        },
        [
            ("c.py::main", "c.py::Child.__init__", "EXTRACTED"),
            ("c.py::main", "c.py::Base.run", "EXTRACTED"),
            ("c.py::Child.__init__", "c.py::Base.__init__", "EXTRACTED"),
            ("c.py::Base.run", "c.py::Helper.work", "EXTRACTED"),
            ("c.py::main", "c.py::Bag", "EXTRACTED"),  # no __init__ of its own: the class
            ("c.py::main", "c.py::Bag.__iter__", "EXTRACTED"),
            ("c.py::main", "c.py::Bag.__next__", "EXTRACTED"),
            ("c.py::main", "c.py::Bad.__init__", "EXTRACTED"),
        ],
        [],
    ),
    (
        "annotations are INFERRED; a library's object is never matched by name",
        {
            "a.py": "import requests\n\n\nclass Store:\n"
            "    def get(self, k):\n        return k\n\n\n"
            "def f(s: 'Store', t: Store | None):\n    s.get(1)\n    t.get(2)\n"
            "    r = requests.Session()\n    r.get('x')\n",
        },
        [("a.py::f", "a.py::Store.get", "INFERRED")],
        [],
    ),
    (
        "star imports: a bare-tuple `__all__`, and a module without one exports its definitions",
        {
            "pkg/__init__.py": "from .a import *\nfrom .b import *\n",
            "pkg/a.py": "__all__ = 'Model', 'make'\n\n\nclass Model:\n    def __init__(self):\n"
            "        pass\n\n\ndef make():\n    return Model()\n",
            "pkg/b.py": "class Other:\n    def run(self):\n        pass\n\n\n"
            "def helper():\n    return Other()\n",
            "pkg/c.py": "class Model:\n    def __init__(self):\n        pass\n",
            "t.py": "from pkg import Model, helper, make\n\n\ndef test():\n    Model()\n"
            "    make()\n    helper().run()\n",
        },
        [
            ("t.py::test", "pkg/a.py::Model.__init__", "EXTRACTED"),
            ("t.py::test", "pkg/a.py::make", "EXTRACTED"),
            ("t.py::test", "pkg/b.py::helper", "EXTRACTED"),
            ("t.py::test", "pkg/b.py::Other.run", "EXTRACTED"),
        ],
        [("t.py::test", "pkg/c.py::Model.__init__")],
    ),
    (
        "`-> Self` on a method holds an instance of the receiver's class (INFERRED)",
        {
            "m.py": "from typing import Self\n\n\nclass Base:\n    @classmethod\n"
            "    def make(cls) -> Self:\n        return cls.__new__(cls)\n\n"
            "    def copy(self) -> 'Self':\n        return type(self).__new__(type(self))\n\n"
            "    def dump(self):\n        return 1\n\n\nclass Child(Base):\n"
            "    def extra(self):\n        return 2\n\n\n"
            "def use():\n    c = Child.make()\n    c.extra()\n    c.copy().dump()\n",
        },
        [
            ("m.py::use", "m.py::Base.make", "EXTRACTED"),
            ("m.py::use", "m.py::Child.extra", "INFERRED"),
            ("m.py::use", "m.py::Base.dump", "INFERRED"),
        ],
        [],
    ),
    (
        "`*args` holds a tuple and `**kwargs` a dict: their methods are never matched by name",
        {
            "k.py": "class Conf:\n    def update(self, other):\n        pass\n\n"
            "    def index(self, x):\n        return x\n\n\n"
            "def render(*args, **kwargs):\n    for d in args:\n        kwargs.update(d)\n"
            "    return args.index(1)\n\n\ndef use(c: Conf):\n    c.update({})\n"
            "    render({}, a=1)\n",
        },
        [
            ("k.py::use", "k.py::Conf.update", "INFERRED"),
            ("k.py::use", "k.py::render", "EXTRACTED"),
        ],
        [("k.py::render", "k.py::Conf.update"), ("k.py::render", "k.py::Conf.index")],
    ),
]


@pytest.mark.parametrize(("name", "files", "want", "absent"), CASES, ids=[c[0] for c in CASES])
def test_value_flow_edges(tmp_path: Path, name, files, want, absent) -> None:
    write_tree(tmp_path, files)
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    # direct calls: an edge through a decorator's wrapper (`via` "@dec") is test_reach's
    direct = ~pl.col("via").fill_null("").str.starts_with("@")
    calls = g.edges.filter((pl.col("kind") == "calls") & direct)
    got = {(r["src"], r["dst"]): r["confidence"] for r in calls.iter_rows(named=True) if r["dst"]}
    missing = [w for w in want if got.get(w[:2]) != w[2]]
    assert not missing, f"{name}: missing {missing}\n got {sorted(got.items())}"
    wrong = [a for a in absent if a in got]
    assert not wrong, f"{name}: should be absent {wrong}"


def test_requests_session_calls_stay_unresolved(tmp_path: Path) -> None:
    """`r.get` on a library's object: no edge to the repository's `get`, by any name rule."""
    (tmp_path / "a.py").write_text(
        "import requests\n\n\nclass Store:\n    def get(self, k):\n        return k\n\n\n"
        "def f():\n    r = requests.Session()\n    return r.get('x')\n"
    )
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    row = g.edges.filter((pl.col("src") == "a.py::f") & (pl.col("name") == "get"))
    assert row["dst"].to_list() == [None]


def test_lambda_nodes_are_numbered_per_scope(tmp_path: Path) -> None:
    (tmp_path / "l.py").write_text(
        "f = lambda: 1\ng = lambda: 2\n\n\ndef h():\n    return lambda: 3\n"
    )
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    lambdas = g.nodes.filter(pl.col("kind") == "lambda").sort("id")
    assert lambdas["id"].to_list() == ["l.py::<lambda1>", "l.py::<lambda2>", "l.py::h.<lambda1>"]
    assert lambdas.filter(pl.col("id") == "l.py::h.<lambda1>")["parent"].to_list() == ["l.py::h"]


def test_no_literal_text_is_stored(tmp_path: Path) -> None:
    """Literal keys are facts as hashes: a secret's value never reaches the store."""
    secret = "s3cr3t-token-value-42"
    (tmp_path / "k.py").write_text(
        f'KEY = "{secret}"\nd = {{"{secret}": print}}\nd["{secret}"]()\n'
    )
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    for f in Path(g.store).rglob("*"):
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f.name


def test_stacked_alike_decorators_pass_both_arguments_in_any_order(tmp_path: Path) -> None:
    """Two decorators written alike share a call node: the decorated function and the inner
    decorator's result both flow into the parameter, whichever order the facts come in."""
    from ctxframe._resolve.flow_edges import python_edges
    from ctxframe._store import tables as _store

    (tmp_path / "m.py").write_text(
        "def checked():\n    def deco(f):\n        f()\n        return f\n    return deco\n\n\n"
        "@checked()\n@checked()\ndef job():\n    pass\n"
    )
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    calls = g.edges.filter(pl.col("kind") == "calls")
    assert ("m.py::checked.deco", "m.py::job") in set(calls.select("src", "dst").iter_rows())
    refs = _store.read_table(g.store, "refs")
    facts = refs.filter(pl.col("kind").str.starts_with("v.") | (pl.col("kind") == "call"))
    defs = g.nodes.filter(~pl.col("kind").is_in(["file", "module"]))
    files = g.files.select("path", "language")
    got = [python_edges(f, defs, files)[0] for f in (facts, facts.reverse())]
    assert got[0].sort(pl.all(), nulls_last=True).equals(got[1].sort(pl.all(), nulls_last=True))


PASS_THROUGH = [
    ("a decorator handing back", "r.py::main",
     [["r.py::A.__init__"], ["r.py::B.__init__"], ["r.py::C.__init__"]]),
    ("a registry method handing back", "lib.py::use", [["lib.py::upper"], ["lib.py::lower"]]),
    ("a decorator returning `wrapper = func`", "s.py::use", [["s.py::login"], ["s.py::alogin"]]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "caller", "want"), PASS_THROUGH, ids=["function", "method", "local"]
)
def test_pass_through_decorators_give_each_call_site_one_target(
    tmp_path: Path, case, caller, want
) -> None:
    """What a decorator hands back through a helper (`return apply(cls)`, `return
    self.filter(name, func)`) is not merged: each call links to its own definition and to no
    other the decorator was given (a branch returning the decorator's closure may stay)."""
    files = next(c[1] for c in CASES if c[0].startswith(case))
    write_tree(tmp_path, files)
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    calls = g.edges.filter((pl.col("kind") == "calls") & (pl.col("src") == caller))
    by_line = calls.group_by("line").agg(pl.col("dst").sort()).sort("line")["dst"].to_list()
    assert len(by_line) == len(want)
    given = {d for line in want for d in line}
    for got, own in zip(by_line, want, strict=True):
        assert set(own) <= set(got) and not (given - set(own)) & set(got), (got, own)


def test_pass_through_chain_is_linear(tmp_path: Path) -> None:
    """A long chain of helpers handing their argument on (written last-called first) is
    resolved in one pass of a worklist, not a pass per link: 2,000 links extract in well under
    the seconds a pass per link took, and the first link still hands back its argument."""
    import time

    from ctxframe._ingest.extract import extract_batch

    n = 2000
    text = "".join(f"def f{i}(x):\n    return f{i + 1}(x)\n\n\n" for i in range(n))
    (tmp_path / "chain.py").write_text(text + f"def f{n}(x):\n    return x\n")
    t0 = time.perf_counter()
    batch = extract_batch(str(tmp_path), [("chain.py", None)], packed=False)
    assert time.perf_counter() - t0 < 3.0
    refs = pl.DataFrame(batch.refs)
    handed = refs.filter(pl.col("kind") == "v.rp")["name"].to_list()
    assert "chain.py::f0|()" in handed and len(handed) == n + 1


COMMAND = (  # a click-like decorator factory
    "class Command:\n    def __init__(self, f):\n        self.f = f\n\n"
    "    def __call__(self):\n        return self.f()\n\n\n"
    "def command(name=None, cls=None):\n    func = None\n    if callable(name):\n"
    "        func = name\n        name = None\n    if cls is None:\n        cls = Command\n\n"
    "    def decorator(f):\n        return cls(f)\n\n"
    "    if func is not None:\n        return decorator(func)\n    return decorator\n\n\n"
)
CLICK_LIKE = (
    COMMAND + "@command()\ndef hello():\n    pass\n\n\n"
    "@command(cls=Command)\ndef bye():\n    pass\n\n\n"
    "def main():\n    hello()\n"
)
REGISTER = (
    "def register(maybe_cls=None, *, tag=None):\n    def wrap(cls):\n        cls.tag = tag\n"
    "        return cls\n\n    if maybe_cls is None:\n        return wrap\n"
    "    return wrap(maybe_cls)\n"
)
# (files, {caller: exactly the definitions it calls})
BRANCHES = [
    ({"c.py": CLICK_LIKE}, {
        "c.py": {"c.py::command", "c.py::command.decorator"},
        "c.py::main": {"c.py::Command.__call__"},
    }),
    ({"r.py": REGISTER,
      "a.py": "from r import register\n\n\n@register\nclass A:\n    pass\n",
      "b.py": "from r import register\n\n\n@register(tag='b')\nclass B:\n    pass\n",
      "m.py": "from a import A\nfrom b import B\n\n\ndef main():\n    A()\n    B()\n"}, {
        "a.py": {"r.py::register"},
        "b.py": {"r.py::register", "r.py::register.wrap"},
        "m.py::main": {"a.py::A", "b.py::B"},
    }),
]  # fmt: skip


@pytest.mark.parametrize(("files", "want"), BRANCHES, ids=["local", "first-parameter"])
def test_decorator_factories_branches_apart(tmp_path: Path, files, want) -> None:
    """A decorator factory's returns under `p is None` / `callable(p)` conditions: applied to
    a definition (`@f`), it gives what the definition branch returns; called without a first
    argument (`@f()`), what the other branch returns. Neither is linked where it cannot run."""
    write_tree(tmp_path, files)
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    calls = g.edges.filter((pl.col("kind") == "calls") & pl.col("dst").is_not_null())
    for caller, targets in want.items():
        got = set(calls.filter(pl.col("src") == caller)["dst"].to_list())
        assert got == targets, caller


LITERAL_FIRST = (
    COMMAND + "class Group:\n    def command(self, *args, **kwargs):\n        func = None\n"
    "        if args and callable(args[0]):\n            (func,) = args\n            args = ()\n\n"
    "        def decorator(f):\n            return command(*args, **kwargs)(f)\n\n"
    "        if func is not None:\n            return decorator(func)\n"
    "        return decorator\n\n\n"
    'def main(cli: Group):\n    @command("hello")\n    def hello():\n        pass\n\n'
    "    @command()\n    def bye():\n        pass\n\n"
    '    @cli.command("sync")\n    def sync():\n        pass\n\n'
    "    hello()\n"
)


def test_a_literal_first_argument_picks_the_factory_branch(tmp_path: Path) -> None:
    """`@command("name")` passes a string where `callable(name)` chooses the branch: the
    factory gives its decorator, never a command object, so applying it runs no
    `Command.__call__`; nor does `@command()` beside it, nor `@cli.command("sync")` whose
    decorator calls `command(*args, **kwargs)` (each call shape has its own node)."""
    (tmp_path / "c.py").write_text(LITERAL_FIRST)
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    calls = g.edges.filter(
        (pl.col("kind") == "calls") & (pl.col("src") == "c.py::main") & pl.col("dst").is_not_null()
    )
    lines = LITERAL_FIRST.splitlines()
    runs = calls.filter(pl.col("dst") == "c.py::Command.__call__")["line"].to_list()
    assert [lines[n - 1].strip() for n in runs] == ["hello()"]
    assert set(calls["dst"].to_list()) == {
        "c.py::command",
        "c.py::command.decorator",
        "c.py::Group.command",
        "c.py::Group.command.decorator",
        "c.py::Command.__call__",
    }


BUILDER = (
    "class _Builder:\n    def __init__(self, cls):\n        self._cls = cls\n\n"
    "    def build(self):\n        return self._cls\n\n\n"
    "def attrs(maybe_cls=None):\n    def wrap(cls):\n        return _Builder(cls).build()\n\n"
    "    if maybe_cls is None:\n        return wrap\n    return wrap(maybe_cls)\n\n\n"
    "@attrs\nclass A:\n    def __init__(self):\n        pass\n\n\n"
    "@attrs()\nclass B:\n    def __init__(self):\n        pass\n\n\n"
    "def main():\n    A()\n    B()\n"
)


def test_class_decorator_through_a_builder_keeps_each_class(tmp_path: Path) -> None:
    """A class decorator that keeps each class in one builder object (`self._cls = cls`)
    merges them all in its return value; a decorated class's name still holds only its own
    class, so `A()` runs A's `__init__` and nothing of B."""
    (tmp_path / "b.py").write_text(BUILDER)
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    calls = g.edges.filter((pl.col("kind") == "calls") & (pl.col("src") == "b.py::main"))
    got = {n: set(calls.filter(pl.col("name") == n)["dst"].to_list()) for n in ("A", "B")}
    assert got == {"A": {"b.py::A.__init__"}, "B": {"b.py::B.__init__"}}


def test_decorated_class_keeps_its_other_definitions(tmp_path: Path) -> None:
    """A name a decorated class shares with another definition of its scope (one per branch
    of a version check) holds both: only other classes' definitions are kept out."""
    (tmp_path / "v.py").write_text(
        "import sys\nfrom typing import final\n\n\nif sys.version_info >= (3, 11):\n"
        "    @final\n    class R:\n        def __init__(self):\n            pass\n"
        "else:\n    class R:\n        def __init__(self):\n            pass\n\n\n"
        "def make():\n    return R()\n"
    )
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    calls = g.edges.filter((pl.col("kind") == "calls") & (pl.col("src") == "v.py::make"))
    assert set(calls["dst"].to_list()) == {"v.py::R.__init__", "v.py::R.__init__#2"}

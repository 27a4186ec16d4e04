"""What Python calls without a call written, and which tests run what: properties, dunders,
overrides through `self`, constructors along the MRO, `getattr` by prefix, pytest fixtures,
the per-test-file walk (ctxframe._graph.testreach) and coverage data read into `covers` edges.
Small programs, real parsing, the edges a reader of the code expects."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from _tree import write_tree

import ctxframe as cf

SHAPES = (
    "class Shape:\n"
    "    @property\n    def area(self):\n        return 0\n\n"
    "    @area.setter\n    def area(self, v):\n        pass\n\n"
    "    def __len__(self):\n        return 1\n\n"
    "    def __getitem__(self, k):\n        return k\n\n"
    "    def __eq__(self, other):\n        return True\n\n"
    "    def __str__(self):\n        return 'shape'\n\n"
    "    def draw(self):\n        return self.render()\n\n"
    "    def render(self):\n        return 'base'\n\n\n"
    "class Square(Shape):\n    def render(self):\n        return 'square'\n\n\n"
    "class Circle(Shape):\n    def render(self):\n        return 'circle'\n"
)

# (name, files, expected (src, dst, via), absent (src, dst))
CASES = [
    (
        "properties read and set, dunders of operators and builtins",
        {
            "shapes.py": SHAPES,
            "use.py": "from shapes import Square\n\n\ndef main():\n    s = Square()\n"
            "    a = s.area\n    s.area = 3\n    n = len(s)\n    x = s[0]\n"
            "    same = s == s\n    if s:\n        pass\n    t = f'{s}'\n    return str(s)\n",
        },
        [
            ("use.py::main", "shapes.py::Shape.area", "property"),
            ("use.py::main", "shapes.py::Shape.area#2", "setter"),
            ("use.py::main", "shapes.py::Shape.__len__", "__len__"),
            ("use.py::main", "shapes.py::Shape.__getitem__", "__getitem__"),
            ("use.py::main", "shapes.py::Shape.__eq__", "__eq__"),
            ("use.py::main", "shapes.py::Shape.__str__", "__str__"),
        ],
        [],
    ),
    (
        "a call on self reaches the overrides; an exact receiver stays exact",
        {
            "shapes.py": SHAPES,
            "use.py": "from shapes import Square\n\n\ndef main():\n    return Square().render()\n",
        },
        [
            ("shapes.py::Shape.draw", "shapes.py::Shape.render", None),
            ("shapes.py::Shape.draw", "shapes.py::Square.render", None),
            ("shapes.py::Shape.draw", "shapes.py::Circle.render", None),
            ("use.py::main", "shapes.py::Square.render", None),
        ],
        [("use.py::main", "shapes.py::Circle.render"), ("use.py::main", "shapes.py::Shape.render")],
    ),
    (
        "constructors along the MRO: an inherited __init__, __new__, a dataclass's __post_init__",
        {
            "m.py": "from dataclasses import dataclass\n\n\nclass Base:\n"
            "    def __init__(self):\n        pass\n\n    def __new__(cls):\n"
            "        return super().__new__(cls)\n\n\nclass Child(Base):\n    pass\n\n\n"
            "@dataclass\nclass Point:\n    x: int = 0\n\n    def __post_init__(self):\n"
            "        pass\n\n\ndef main():\n    Child()\n    Point()\n",
        },
        [
            ("m.py::main", "m.py::Child", None),
            ("m.py::main", "m.py::Base.__init__", "__init__"),
            ("m.py::main", "m.py::Base.__new__", "__new__"),
            ("m.py::main", "m.py::Point.__post_init__", "__post_init__"),
        ],
        [],
    ),
    (
        "getattr with a name's head: every member named so, subclasses' too",
        {
            "v.py": "class Visitor:\n    def visit(self, node):\n"
            "        return getattr(self, 'visit_' + type(node).__name__)(node)\n\n"
            "    def visit_Name(self, node):\n        pass\n\n"
            "    def other(self):\n        pass\n\n\n"
            "class Compiler(Visitor):\n    def visit_Call(self, node):\n        pass\n",
        },
        [
            ("v.py::Visitor.visit", "v.py::Visitor.visit_Name", "getattr"),
            ("v.py::Visitor.visit", "v.py::Compiler.visit_Call", "getattr"),
        ],
        [("v.py::Visitor.visit", "v.py::Visitor.other")],
    ),
    (
        "a typed collection's elements: `List[X]`, `Iterable[X]`, `tuple[X, ...]` iterate to X",
        {
            "m.py": "from typing import Iterable, List, Optional\n\n\nclass Seg:\n"
            "    @property\n    def width(self):\n        return 1\n\n    def m(self):\n"
            "        pass\n\n\ndef total(line: List['Seg']):\n"
            "    return sum(s.width for s in line)\n\n\n"
            "def each(more: Optional[Iterable[Seg]] = None):\n    for x in more:\n        x.m()\n",
        },
        [
            ("m.py::total", "m.py::Seg.width", "property"),
            ("m.py::each", "m.py::Seg.m", None),
        ],
        [],
    ),
    (
        "pytest fixtures: a parameter holds what the nearest fixture of that name gives",
        {
            "app.py": "class App:\n    def register(self, x):\n        pass\n\n\n"
            "class Other:\n    def register(self, x):\n        pass\n",
            "tests/conftest.py": "import pytest\nfrom app import App, Other\n\n\n"
            "@pytest.fixture\ndef app():\n    return Other()\n\n\n"
            "@pytest.fixture(name='made')\ndef _made():\n    yield App()\n",
            "tests/unit/conftest.py": "import pytest\nfrom app import App\n\n\n"
            "@pytest.fixture\ndef app():\n    return App()\n",
            "tests/unit/test_app.py": "def test_register(app, made):\n    app.register(1)\n"
            "    made.register(2)\n",
        },
        [
            ("tests/unit/test_app.py::test_register", "app.py::App.register", None),
            ("tests/unit/test_app.py::test_register", "tests/unit/conftest.py::app", "fixture"),
            ("tests/unit/test_app.py::test_register", "tests/conftest.py::_made", "fixture"),
        ],
        [("tests/unit/test_app.py::test_register", "app.py::Other.register")],
    ),
]


@pytest.mark.parametrize(("name", "files", "expected", "absent"), CASES, ids=[c[0] for c in CASES])
def test_implicit_calls(tmp_path: Path, name, files, expected, absent) -> None:
    write_tree(tmp_path, files)
    g = cf.index(str(tmp_path), progress=False)
    edges = g.edges.filter(pl.col("kind").is_in(["calls", "uses"]))
    got = {(s, d): v for s, d, v in edges.select("src", "dst", "via").iter_rows()}
    for src, dst, via in expected:
        assert (src, dst) in got, f"{src} -> {dst} missing: {sorted(got)}"
        assert got[(src, dst)] == via, f"{src} -> {dst}: via {got[(src, dst)]!r}, not {via!r}"
    for src, dst in absent:
        assert (src, dst) not in got, f"{src} -> {dst} should not be there"


def test_calls_on_instances_are_bound(tmp_path: Path) -> None:
    use = "from shapes import Square\n\n\ndef main():\n    s = Square()\n    s.draw()\n"
    write_tree(tmp_path, {"shapes.py": SHAPES, "use.py": use + "    return s.area\n"})
    g = cf.index(str(tmp_path), progress=False)
    e = g.edges.filter(pl.col("src") == "use.py::main").select("dst", "bound")
    bound = dict(e.iter_rows())
    assert bound["shapes.py::Shape.draw"] is True
    assert bound["shapes.py::Shape.area"] is True
    assert bound["shapes.py::Square"] is False  # a constructor needs no instance


RTA = {
    "shapes.py": SHAPES,
    "tests/test_square.py": "from shapes import Square\n\n\ndef test_square():\n"
    "    Square().draw()\n",
    "tests/test_circle.py": "from shapes import Circle\n\n\ndef test_circle():\n"
    "    Circle().draw()\n",
    "tests/test_plain.py": "from shapes import Shape\n\n\ndef helper():\n    return Shape()\n\n\n"
    "def test_nothing_made_here(shape):\n    shape.draw()\n",
}


def test_a_test_runs_only_the_overrides_of_what_it_makes(tmp_path: Path) -> None:
    write_tree(tmp_path, RTA)
    g = cf.index(str(tmp_path), progress=False)
    assert g.change_plan("Square.render").test_files == ["tests/test_square.py"]
    assert g.change_plan("Circle.render").test_files == ["tests/test_circle.py"]
    # test_plain's `shape.draw()` names the one `draw` (INFERRED) but makes no shape: it runs
    # Shape.draw and none of the renders
    assert g.change_plan("Shape.draw").test_files == [
        "tests/test_circle.py", "tests/test_plain.py", "tests/test_square.py"
    ]  # fmt: skip


def test_fixture_instances_count_but_fixture_code_is_not_the_tests(tmp_path: Path) -> None:
    files = dict(RTA)
    files["tests/conftest.py"] = (
        "import pytest\nfrom shapes import Circle\n\n\n@pytest.fixture\ndef shape():\n"
        "    c = Circle()\n    c.area\n    return c\n"
    )
    write_tree(tmp_path, files)
    g = cf.index(str(tmp_path), progress=False)
    assert "tests/test_plain.py" in g.change_plan("Circle.render").test_files
    # what only the fixture runs is setup, not what the test runs
    assert "tests/test_plain.py" not in g.change_plan("shapes.py::Shape.area").test_files


def test_change_plan_says_what_ambiguous_calls_leave_out(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "a.py": "class A:\n    def ping(self):\n        pass\n",
        "b.py": "class B:\n    def ping(self):\n        pass\n",
        "tests/test_x.py": "def test_x(thing):\n    thing.ping()\n",
    })  # fmt: skip
    g = cf.index(str(tmp_path), progress=False)
    plan = g.change_plan("A.ping")
    assert plan.test_files == [] and plan.tests_left_out == 1
    assert "1 more through AMBIGUOUS calls" in str(plan)
    assert g.change_plan("A.ping", include_ambiguous=True).test_files == ["tests/test_x.py"]


# -- coverage data -----------------------------------------------------------------------------

CODE = {
    "lib.py": "def used():\n    return 1\n\n\ndef unused():\n    return 2\n",
    "tests/test_lib.py": "from lib import used\n\n\ndef test_used():\n    assert used() == 1\n",
}


def _coverage_py(root: Path) -> Path:
    """A real coverage.py data file with a test's context, made by measuring a call."""
    coverage = pytest.importorskip("coverage")
    import importlib.util
    import sys

    data = root / ".coverage"
    cov = coverage.Coverage(data_file=str(data), source=[str(root)], config_file=False)
    sys.path.insert(0, str(root))
    try:
        cov.start()
        spec = importlib.util.spec_from_file_location("lib", root / "lib.py")
        lib = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(lib)
        cov.switch_context("tests.test_lib.test_used")
        lib.used()
        cov.switch_context("")
        cov.stop()
        cov.save()
    finally:
        sys.path.remove(str(root))
    return data


def _lcov(root: Path) -> Path:
    path = root / "lcov.info"
    lib = (root / "lib.py").resolve()
    path.write_text(f"TN:tests.test_lib.test_used\nSF:{lib}\nDA:1,1\nDA:2,1\nDA:5,1\nDA:6,0\n"
                    "end_of_record\n")  # fmt: skip
    return path


def _cobertura(root: Path) -> Path:
    path = root / "coverage.xml"
    path.write_text(
        f'<?xml version="1.0" ?>\n<coverage><sources><source>{root.resolve()}</source>'
        '</sources><packages><package><classes><class filename="lib.py"><lines>'
        '<line number="1" hits="1"/><line number="2" hits="1"/><line number="5" hits="1"/>'
        '<line number="6" hits="0"/></lines></class></classes></package></packages></coverage>'
    )
    return path


@pytest.mark.parametrize("make", [_coverage_py, _lcov, _cobertura], ids=["coverage.py", "lcov",
                                                                        "cobertura"])  # fmt: skip
def test_coverage_data_is_read_at_the_root(tmp_path: Path, make) -> None:
    write_tree(tmp_path, CODE)
    make(tmp_path)
    g = cf.index(str(tmp_path), progress=False)
    table = g.test_coverage
    share = dict(table.select("id", "share").iter_rows())
    assert share["lib.py::used"] == 1.0
    if make is not _coverage_py:  # coverage.py's own data never ran `unused`: no row of it
        assert share["lib.py::unused"] == 0.0
    assert not table["stale"].any()
    covers = g.edges.filter(pl.col("kind") == "covers")
    if make is _cobertura:  # no contexts: shares, but no test named
        assert covers.is_empty()
        assert g.change_plan("used").measured_test_files == []
    else:
        assert covers.select("src", "dst", "via").rows() == [
            ("tests/test_lib.py::test_used", "lib.py::used", "coverage")
        ]
        plan = g.change_plan("used")
        assert plan.measured_test_files == ["tests/test_lib.py"]
        assert "coverage saw run it (measured)" in str(plan)


def test_coverage_older_than_a_file_is_stale_for_it(tmp_path: Path) -> None:
    write_tree(tmp_path, CODE)
    data = _lcov(tmp_path)
    lib = tmp_path / "lib.py"
    lib.write_text(lib.read_text() + "\n")
    old = os.stat(data).st_mtime_ns - 10_000_000_000
    os.utime(data, ns=(old, old))
    g = cf.index(str(tmp_path), progress=False)
    stale = dict(g.test_coverage.select("id", "stale").iter_rows())
    assert stale["lib.py::used"] is True
    assert g.edges.filter(pl.col("kind") == "covers").is_empty()  # never silently used


def test_no_coverage_reads_none_and_bad_data_is_one_line(tmp_path: Path, capsys) -> None:
    write_tree(tmp_path, CODE)
    _lcov(tmp_path)
    g = cf.index(str(tmp_path), progress=False, coverage=False)
    assert g.test_coverage.is_empty()
    (tmp_path / "junk.dat").write_bytes(b"\x00\x01 not coverage")
    from ctxframe.cli import main

    code = main(["index", "--repo", str(tmp_path), "--coverage", str(tmp_path / "junk.dat")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "not coverage data" in err[0]


# -- names along the MRO, wrappers, several projects, library callbacks ------------------------


def test_a_member_a_class_inherits_is_found_by_the_class_name(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": "class Scaffold:\n    def register(self, x):\n        pass\n\n\n"
                          "class App(Scaffold):\n    pass\n"})  # fmt: skip
    g = cf.index(str(tmp_path), progress=False)
    card = g.card("App.register")
    assert card.ok and card.node["id"] == "m.py::Scaffold.register"
    assert "App.register: inherited from Scaffold" in str(card)
    assert card.to_dict()["inherited_from"] == "Scaffold"


WRAPPED = (
    "import functools\n\n\ndef setup_only(f):\n    @functools.wraps(f)\n"
    "    def wrapper(*a, **k):\n        return f(*a, **k)\n    return wrapper\n\n\n"
    "def opaque(f):\n    def inner():\n        return 1\n    return inner\n\n\n"
    "class S:\n    @setup_only\n    def go(self):\n        pass\n\n\n"
    "@opaque\ndef hidden():\n    pass\n\n\n"
    "def main():\n    S().go()\n    hidden()\n"
)


def test_a_call_through_a_transparent_wrapper_reaches_the_function(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": WRAPPED})
    g = cf.index(str(tmp_path), progress=False)
    edges = {(s, d): v for s, d, v in g.edges.select("src", "dst", "via").iter_rows()}
    assert edges[("m.py::main", "m.py::S.go")] == "@setup_only"
    assert edges[("m.py::main", "m.py::setup_only.wrapper")] is None
    assert ("m.py::main", "m.py::hidden") not in edges  # its decorator never calls it
    assert "← calls main via @setup_only" in str(g.card("S.go"))


def test_an_import_reads_from_its_own_project_first(tmp_path: Path) -> None:
    lib = "class Refunds:\n    def run(self):\n        pass\n"
    use = ("from services.payments.refunds import Refunds\n\n\n"
           "def test_run():\n    Refunds().run()\n")  # fmt: skip
    write_tree(tmp_path, {
        "a/pyproject.toml": "[project]\nname = 'a'\n",
        "a/services/payments/__init__.py": "",
        "a/services/payments/refunds.py": lib,
        "a/tests/test_refunds.py": use,
        "b/services/payments/__init__.py": "",
        "b/services/payments/refunds.py": lib,
        "b/tests/test_refunds.py": use,
    })  # fmt: skip
    g = cf.index(str(tmp_path), progress=False)
    for project in ("a", "b"):
        card = g.card(f"{project}/services/payments/refunds.py::Refunds.run")
        assert [r["other_id"] for r in card.callers.to_dicts()] == [
            f"{project}/tests/test_refunds.py::test_run"
        ]


CALLBACKS = (
    "import functools\nimport threading\nfrom werkzeug.test import Client\n\n\n"
    "def task():\n    pass\n\n\ndef key(x):\n    return x\n\n\n"
    "class App:\n    def __call__(self, environ, start_response):\n"
    "        return self.dispatch()\n\n"
    "    def dispatch(self):\n        pass\n\n    def test_client(self):\n"
    "        return AppClient(self)\n\n\nclass AppClient(Client):\n    pass\n\n\n"
    "def main():\n    threading.Thread(target=task).start()\n    sorted([2, 1], key=key)\n"
    "    later = functools.partial(task)\n    later()\n    App().test_client().get('/')\n"
)


def test_library_code_calls_back(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": CALLBACKS})
    g = cf.index(str(tmp_path), progress=False)
    edges = {(s, d, v) for s, d, v in g.edges.select("src", "dst", "via").iter_rows()}
    assert ("m.py::main", "m.py::task", "threading.Thread") in edges
    assert ("m.py::main", "m.py::key", "builtins.sorted") in edges
    assert ("m.py::main", "m.py::task", None) in edges  # the partial, called
    assert ("m.py::main", "m.py::App.__call__", "werkzeug.test.Client") in edges


def test_usefixtures_getfixturevalue_and_pytest_plugins(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "app.py": "class Db:\n    def query(self):\n        pass\n\n\n"
        "class Cache:\n    def clear(self):\n        pass\n",
        "plugins/fx.py": "import pytest\nfrom app import Cache\n\n\n"
        "@pytest.fixture\ndef cache():\n    return Cache()\n",
        "tests/conftest.py": "import pytest\nfrom app import Db\npytest_plugins = ['plugins.fx']\n"
        "\n\n@pytest.fixture\ndef db():\n    return Db()\n\n\n@pytest.fixture\ndef clean():\n"
        "    yield\n",
        "tests/test_x.py": "import pytest\n\n\n@pytest.mark.usefixtures('clean')\n"
        "def test_a(request, cache):\n    request.getfixturevalue('db').query()\n"
        "    cache.clear()\n",
    })  # fmt: skip
    g = cf.index(str(tmp_path), progress=False)
    got = set(g.edges.filter(pl.col("src") == "tests/test_x.py::test_a")
              .select("dst", "kind").iter_rows())  # fmt: skip
    assert {("app.py::Db.query", "calls"), ("app.py::Cache.clear", "calls"),
            ("plugins/fx.py::cache", "uses"), ("tests/conftest.py::clean", "uses"),
            ("tests/conftest.py::db", "uses")} <= got  # fmt: skip

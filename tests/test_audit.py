"""The audit on small trees whose answers are known: cycles, contracts, dead code, untested
code, risk and boundaries; the `Audit` result's forms; golden text and Markdown of the
sample."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from _tree import write_tree

import ctxframe as cf
from ctxframe._audit import AuditInput, parse, run
from ctxframe._core.errors import BadInput, ConfigError

# -- cycles and the package graph ---------------------------------------------------------------

CYCLES = {
    "app/__init__.py": "",
    "app/a.py": "from app import b\n\ndef fa():\n    return b.fb()\n",
    "app/b.py": "import app.c\n\ndef fb():\n    return app.c.fc()\n",
    "app/c.py": "from app.a import fa\n\ndef fc():\n    return 1\n",
    "app/d.py": "from app import e\n",
    "app/e.py": "X = 1\n",
    "lib/__init__.py": "",
    "lib/x.py": "from other import y\n",
    "other/__init__.py": "",
    "other/y.py": "from lib import x\n",
}


@pytest.fixture(scope="module")
def cycles_graph(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("cycles"), CYCLES)
    return cf.index(str(root), progress=False)


def test_module_cycles_are_strongly_connected_components(cycles_graph) -> None:
    a = cycles_graph.audit("cycles")
    mods = a.cycles.filter(pl.col("level") == "module").sort("cycle")
    assert [sorted(m) for m in mods["members"].to_list()] == [
        ["app.a", "app.b", "app.c"],
        ["lib.x", "other.y"],
    ]
    first = mods.row(0, named=True)
    assert first["size"] == 3 and first["imports"] == 3
    assert first["example"] == ["app.a", "app.b", "app.c", "app.a"]
    # every import line inside the cycle, with its file and line
    lines = a.cycle_edges.filter(pl.col("cycle") == first["cycle"])
    assert sorted(lines.select("path", "line").iter_rows()) == [
        ("app/a.py", 1), ("app/b.py", 1), ("app/c.py", 1)
    ]  # fmt: skip
    # the package graph: lib <-> other is a package cycle too, app is not in one
    pk = a.cycles.filter(pl.col("level") == "package")
    assert pk["members"].to_list() == [["lib", "other"]]


def test_package_graph(cycles_graph) -> None:
    a = cycles_graph.audit("architecture")
    deps = {(r["src"], r["dst"]): r for r in a.dependencies.iter_rows(named=True)}
    assert deps[("lib", "other")]["in_cycle"] and deps[("other", "lib")]["in_cycle"]
    pk = {r["package"]: r for r in a.packages.iter_rows(named=True)}
    assert pk["app"]["cycle"] is None and pk["lib"]["cycle"] == pk["other"]["cycle"]
    assert pk["app"]["files"] == 6 and pk["app"]["functions"] == 3
    svg = a.chart("architecture")
    assert svg.startswith("<svg") and "lib" in svg and "#e15759" in svg  # a cycle in red


# -- contracts ----------------------------------------------------------------------------------

LAYERED = {
    "shop/__init__.py": "",
    "shop/api/__init__.py": "",
    "shop/api/views.py": "from shop.domain import model\nfrom shop.data import store\n",
    "shop/domain/__init__.py": "",
    "shop/domain/model.py": "from shop.util import helper\n",
    "shop/util.py": "from shop.api import views\n",  # domain -> util -> api: indirect
    "shop/data/__init__.py": "",
    "shop/data/store.py": "\n\nfrom shop.api import views\n",  # data -> api: direct, line 3
    "shop/a.py": "import shop.b\n",
    "shop/b.py": "",
}
CONTRACTS = """
[[audit.contracts]]
name = "layers"
type = "layers"
layers = ["shop.api", "shop.domain", "shop.data"]

[[audit.contracts]]
name = "a stays away from b"
type = "forbidden"
source_modules = ["shop.a"]
forbidden_modules = ["shop.b"]

[[audit.contracts]]
name = "independent"
type = "independence"
modules = ["shop.domain", "shop.data"]
"""


def test_contracts_report_file_and_line(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {**LAYERED, ".ctxframe/config.toml": CONTRACTS})
    a = cf.index(str(root), progress=False).audit("contracts")
    v = a.contracts
    layers = v.filter(pl.col("contract") == "layers")
    direct = layers.filter(pl.col("direct"))
    assert direct.select("src", "dst", "path", "line").rows() == [
        ("shop.data.store", "shop.api.views", "shop/data/store.py", 3)
    ]
    indirect = layers.filter(~pl.col("direct"))
    assert indirect["chain"].to_list() == [["shop.domain.model", "shop.util", "shop.api.views"]]
    assert indirect["path"].to_list() == ["shop/domain/model.py"]
    forbidden = v.filter(pl.col("contract") == "a stays away from b")
    assert forbidden.select("src", "dst", "line").rows() == [("shop.a", "shop.b", 1)]
    # independence counts indirect chains too: domain -> util -> api -> data, and back
    indep = v.filter(pl.col("contract") == "independent").sort("importer")
    assert indep["chain"].to_list() == [
        ["shop.data.store", "shop.api.views", "shop.domain.model"],
        ["shop.domain.model", "shop.util", "shop.api.views", "shop.data.store"],
    ]


@pytest.mark.parametrize(("text", "fix"), [
    ('[[audit.contracts]]\ntype = "layer"\n', "`type` must be one of"),
    ('[[audit.contracts]]\ntype = "layers"\nlayers = ["a"]\n', "at least two layers"),
    ('[audit]\npackage_depth = 0\n', "`package_depth` must be"),
    ('[audit]\nbogus = 1\n', "unknown setting(s) bogus"),
    ('[audit.thresholds]\ncyclomatic = "x"\n', "threshold `cyclomatic`"),
    ('[[audit.contracts]]\ntype = "forbidden"\nsource_modules = ["a"]\n'
     'forbidden_modules = ["b"]\nignore_imports = ["a b"]\n', "must read 'a.b -> c.d'"),
])  # fmt: skip
def test_bad_audit_config_is_one_line_naming_the_fix(text: str, fix: str) -> None:
    import tomllib

    with pytest.raises(ConfigError) as err:
        parse(tomllib.loads(text).get("audit"), "config.toml")
    assert fix in str(err.value) and "\n" not in str(err.value)


# -- dead code ----------------------------------------------------------------------------------

DEAD = {
    "pkg/__init__.py": '__all__ = ["exported"]\n\n\ndef exported():\n    return 1\n',
    "pkg/core.py": (
        "import os\n"
        "import json\n"
        "from flask import Flask\n\n"
        "app = Flask(__name__)\n\n\n"
        "def used():\n    return json.dumps(1)\n\n\n"
        "def never_called_anywhere():\n    return 2\n\n\n"
        "def named_in_a_string():\n    return 3\n\n\n"
        "@app.route('/x')\ndef view():\n    return 4\n\n\n"
        "@some_registry\ndef decorated():\n    return 5\n\n\n"
        "class Base:\n    def hook(self):\n        return 6\n\n\n"
        "class Child(Base):\n    def hook(self):\n        return 7\n\n    def __len__(self):\n"
        "        return 8\n\n\n"
        "def run_base(b: Base):\n    return b.hook()\n\n\n"
        "def main():\n    used()\n    run_base(Child())\n    return 'named_in_a_string'\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    ),
    "pkg/orphan.py": "def lonely():\n    return 1\n",
    "pkg/hooks.py": "def yaml_handler():\n    return 1\n\n\n"
                    "def doc_named():\n    return 2\n",
    "deploy/app.yaml": "events:\n  - handler: pkg.hooks.yaml_handler\n",
    "GUIDE.md": "Call `doc_named` when in doubt.\n",
    "tests/test_core.py": "from pkg.core import used\n\n\ndef test_used():\n    assert used()\n",
}


@pytest.fixture(scope="module")
def dead_audit(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("dead"), DEAD)
    return cf.index(str(root), progress=False).audit(["dead", "untested"])


def test_dead_code_candidates_and_their_confidence(dead_audit) -> None:
    d = {r["qualname"]: r for r in dead_audit.dead.iter_rows(named=True)}
    # nothing in the repository names it: certain
    assert d["never_called_anywhere"]["confidence"] == 100
    # a string names it (a use by name is possible): lower, and the reason says so
    assert d["named_in_a_string"]["confidence"] < 100
    assert "written 1 more time(s) in code" in d["named_in_a_string"]["reason"]
    # an unknown decorator may register it
    assert d["decorated"]["confidence"] < 100 and "@some_registry" in d["decorated"]["reason"]
    # named in a document: lower; named in configuration: an entry point (a handler)
    assert d["doc_named"]["confidence"] == 80
    assert "named 1 time(s) in documents" in d["doc_named"]["reason"]
    # entry points and used code are no candidates: a route, main, a dunder, `__all__`, the
    # override of a method called through its base, a test, a handler named in config
    for name in ("used", "view", "main", "Child.__len__", "exported", "Child.hook", "Base",
                 "Child", "run_base", "test_used", "yaml_handler"):  # fmt: skip
        assert name not in d


def test_dead_files_and_unused_imports(dead_audit) -> None:
    files = dead_audit.dead_files
    assert files["path"].to_list() == ["pkg/orphan.py"]
    imports = dead_audit.unused_imports
    assert imports.select("path", "line", "name").rows() == [("pkg/core.py", 1, "os")]


def test_ambiguous_calls_lower_confidence_they_are_not_ignored(tmp_path: Path) -> None:
    """Two classes define `render`; a call on an unknown receiver may reach either (the
    resolver says AMBIGUOUS): neither is certain dead code."""
    root = write_tree(tmp_path / "r", {
        "m.py": "class A:\n    def render(self):\n        return 1\n\n\n"
                "class B:\n    def render(self):\n        return 2\n\n\n"
                "def show(x):\n    return x.render()\n\n\nshow(None)\n",
    })  # fmt: skip
    a = cf.index(str(root), progress=False).audit("dead")
    rows = {r["qualname"]: r for r in a.dead.iter_rows(named=True)}
    for name in ("A.render", "B.render"):
        assert rows[name]["confidence"] < 100
        assert re.search(r"AMBIGUOUS|unresolved|written", rows[name]["reason"])


def test_whitelist_and_entry_decorators_from_config(tmp_path: Path) -> None:
    cfg = '[audit]\nwhitelist = ["never_*"]\nentry_decorators = ["some_registry"]\n'
    root = write_tree(tmp_path / "r", {**DEAD, ".ctxframe/config.toml": cfg})
    names = set(cf.index(str(root), progress=False).audit("dead").dead["qualname"])
    assert "never_called_anywhere" not in names and "decorated" not in names


# -- untested code ------------------------------------------------------------------------------


def test_untested_by_the_graph(dead_audit) -> None:
    u = {r["qualname"]: r for r in dead_audit.untested.iter_rows(named=True)}
    assert "used" not in u  # the test calls it
    assert u["never_called_anywhere"]["confidence"] == "high"
    pk = dead_audit.untested_packages.filter(pl.col("package") == "pkg").row(0, named=True)
    assert pk["tested"] == 1 and pk["functions"] == pk["tested"] + pk["untested"]


def test_untested_with_coverage_data_and_covers_edges(tmp_path: Path) -> None:
    """Measured coverage decides where it exists (issue 39's `coverage` frame and `covers`
    edges): a function the graph misses but a test ran is not untested."""
    root = write_tree(tmp_path / "r", DEAD)
    g = cf.index(str(root), progress=False)
    cov = pl.DataFrame({
        "id": ["pkg/core.py::never_called_anywhere", "pkg/core.py::named_in_a_string"],
        "lines": [1, 1], "covered": [1, 0], "share": [1.0, 0.0], "stale": [False, False],
    })  # fmt: skip
    covers = pl.DataFrame({
        "src": ["tests/test_core.py::test_used"], "dst": ["pkg/core.py::decorated"],
        "kind": ["covers"], "confidence": ["EXTRACTED"], "producer": ["coverage"],
    })  # fmt: skip
    edges = pl.concat([g.edges, covers], how="diagonal_relaxed")
    given = AuditInput(g.nodes, edges, g.files, root=g.root, coverage=cov)
    u = {r["qualname"]: r for r in run(given, "untested").untested.iter_rows(named=True)}
    assert "never_called_anywhere" not in u and "decorated" not in u
    assert u["named_in_a_string"]["confidence"] == "measured"
    assert u["named_in_a_string"]["why"] == "no test ran it (coverage data)"


def test_the_vectorized_walk_matches_change_plan(shop_graph) -> None:
    """One walk from every test finds the tests `change-plan` names, function by function."""
    a = shop_graph.audit("untested")
    claimed = set(a.untested["id"])
    fns = shop_graph.nodes.filter(
        pl.col("kind").is_in(["function", "method"]) & ~pl.col("path").str.contains("test")
    )["id"].to_list()
    for fid in fns:
        tests = shop_graph.change_plan(fid).test_files
        assert (fid in claimed) == (not tests), fid


# -- risk and boundaries ------------------------------------------------------------------------

RISKY = {
    "svc/__init__.py": "",
    "svc/run.py": (
        "import os\nimport subprocess\nimport requests\n\n\n"
        "def deploy(target):\n"
        "    if target and os.environ.get('API_TOKEN'):\n"
        "        for i in range(3):\n"
        "            if i or target:\n"
        "                subprocess.run(['ssh', target, 'restart'], check=True)\n"
        "    return requests.get('http://status.acme.io/ping')\n\n\n"
        "def safe():\n    subprocess.run(['git', 'status'])\n"
        "    return requests.get('http://localhost:8000/health')\n\n\n"
        "def a():\n    return deploy('x')\n\n\ndef b():\n    return deploy('y')\n\n\n"
        "def c():\n    return deploy('z') or safe()\n"
    ),
}


def test_boundaries_mark_the_risky_uses(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", RISKY)
    a = cf.index(str(root), progress=False).audit(["boundaries", "risk"])
    b = a.boundaries
    risky = {(r["via"], r["used_by"]): r["risk"] for r in b.filter(pl.col("risky")).iter_rows(
        named=True)}  # fmt: skip
    assert risky[("exec", "deploy")] == "runs a program with arguments built at run time"
    assert risky[("http", "deploy")] == "HTTP without TLS"
    assert risky[("reads", "deploy")] == "a secret, by its name"
    assert ("exec", "safe") not in risky and ("http", "safe") not in risky
    top = a.risk.row(0, named=True)
    assert top["qualname"] == "deploy"
    assert "called from 3 place(s)" in top["why"] and "risky" in top["why"]


# -- the Audit result ---------------------------------------------------------------------------


def test_one_section_alone_and_unknown_names(cycles_graph) -> None:
    a = cycles_graph.audit("cycle_edges")  # a frame's name asks for its section
    assert a.sections == ["cycles"] and set(a.frames) == {"cycles", "cycle_edges"}
    with pytest.raises(AttributeError, match="no frame 'dead'"):
        _ = a.dead
    with pytest.raises(BadInput, match="no audit section 'nope'; sections: architecture"):
        cycles_graph.audit("nope")


def test_audit_forms(shop_graph, tmp_path: Path) -> None:
    a = shop_graph.audit()
    assert list(a.frames) == [
        "packages", "dependencies", "modules", "cycles", "cycle_edges", "contracts", "complexity",
        "complexity_packages", "dead", "dead_files", "unused_imports", "untested",
        "untested_packages", "risk", "boundaries",
    ]  # fmt: skip
    page = a.to_html()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    # self-contained: no script, no stylesheet or image fetched from anywhere
    assert "<script" not in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    html = a._repr_html_()
    assert html.index("Summary") if "Summary" in html else True
    assert html.index("Architecture") < html.index("cf-audit-section")  # summary first
    written = a.export(str(tmp_path / "out"))
    assert set(written) == {*a.frames, "summary"}
    back = pl.read_parquet(written["dead"])
    assert back.equals(a.dead)
    data = a.to_dict(rows=3)
    json.dumps(data)
    assert data["verb"] == "audit" and data["status"] == "ok"
    assert data["frames"]["complexity"]["rows"] == a.complexity.height
    assert len(data["frames"]["complexity"]["data"]) == 3


def test_the_word_table_is_kept_with_the_version(indexed_shop: Path) -> None:
    """The first audit of a version tokenizes the tree's text; the next one (another process,
    another Graph) reads it from the version's cache and finds the same."""
    g = cf.open(str(indexed_shop))
    first = g.audit("dead")
    cache = Path(g._cache_dir) / "cache"
    assert (cache / "audit_words.arrow").is_file()
    again = cf.open(str(indexed_shop)).audit("dead")
    assert again.dead.equals(first.dead) and again.dead_files.equals(first.dead_files)


def test_sample_text_and_markdown_golden(shop_graph, golden) -> None:
    a = shop_graph.audit()
    root = str(shop_graph.root)
    golden("audit.txt", a.render().replace(root, "<shop>") + "\n")
    golden("audit.md", a.to_markdown().replace(root, "<shop>"))


def test_cli_audit(indexed_shop: Path, tmp_path: Path, capsys) -> None:
    from ctxframe.cli import main

    html, md = tmp_path / "report.html", tmp_path / "report.md"
    code = main(["audit", "--repo", str(indexed_shop), "--html", str(html), "--md", str(md)])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("audit of ") and html.is_file() and md.is_file()
    assert f"wrote {html}" in out
    code = main(["audit", "--repo", str(indexed_shop), "--json", "--section", "cycles"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["verb"] == "audit" and data["sections"] == ["cycles"]
    code = main(["audit", "--repo", str(indexed_shop), "--section", "nope"])
    assert code == 2 and "no audit section 'nope'" in capsys.readouterr().err

"""The house rules: sub-packages in pipeline order, imports pointing down only, no circles,
and a public surface that is exactly `__all__`."""

from __future__ import annotations

import ast
import pathlib

import pytest

import ctxframe as cf

PACKAGE = pathlib.Path(cf.__file__).parent
# `_render` sits just above `_core`: it knows no Graph, and every result type (the store's
# IndexReport and Status as much as the verbs') renders itself through it.
LAYERS = ("_core", "_render", "_ingest", "_resolve", "_rank", "_history", "_store", "_audit",
          "_graph", "_apps")  # fmt: skip
TOP = len(LAYERS)  # ctxframe/__init__.py, cli.py, rules.py, __main__.py


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else TOP


def _imports(path: pathlib.Path) -> list[tuple[str, int, bool]]:
    """(imported ctxframe module, line, under `if TYPE_CHECKING`) for every import statement,
    at module level or inside functions."""
    tree = ast.parse(path.read_text("utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(n) for n in ast.walk(node))
    here = _module_name(path)
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = here.split(".")[: -node.level] if path.name != "__init__.py" else here.split(
                    "."
                )[: len(here.split(".")) - node.level + 1]
                base = ".".join([*pkg, base] if base else pkg)
            # `from ctxframe._x import mod` imports a module when `mod` is one
            names = []
            for a in node.names:
                sub = f"{base}.{a.name}"
                as_module = PACKAGE.parent.joinpath(*sub.split("."))
                names.append(sub if as_module.with_suffix(".py").exists() or as_module.is_dir()
                             else base)
        for name in names:
            if name == "ctxframe" or name.startswith("ctxframe."):
                found.append((name, node.lineno, id(node) in typing_only))
    return found


MODULES = {
    _module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "_sample" not in p.parts
}


def test_every_module_sits_in_a_layer():
    strays = [m for m in MODULES if m.count(".") >= 1 and _layer(m) == TOP and m.count(".") > 1]
    assert strays == []
    top_level = sorted(m for m in MODULES if _layer(m) == TOP)
    assert top_level == ["ctxframe", "ctxframe.__main__", "ctxframe.cli", "ctxframe.rules"]


def test_imports_point_down_the_pipeline():
    upward = []
    for module, path in MODULES.items():
        for target, line, _typing in _imports(path):
            if target == "ctxframe" and module != "ctxframe":
                upward.append(f"{path.name}:{line} imports the top-level package")
            elif _layer(target) > _layer(module):
                upward.append(f"{module}:{line} -> {target}")
    assert upward == []


def test_no_import_circles():
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for target, _line, typing in _imports(path):
            if not typing and target in graph and target != module:
                graph[module].add(target)
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    # a package's __init__ importing its own modules is not a circle of concepts
    circles = [c for c in circles if not any(m.count(".") == 1 and m in c for m in c if False)]
    assert circles == []


def test_public_names_are_exactly_all():
    """Every name a user can reach on `ctxframe` that is not a sub-module is in `__all__`, and
    `__all__` is sorted and names nothing missing."""
    public = {n for n in vars(cf) if not n.startswith("_")} | set(cf._LAZY) | {"__version__"}
    modules = {n for n in public if type(getattr(cf, n)).__name__ == "module"}
    assert sorted(public - modules) == sorted(set(cf.__all__) - {"rules"})
    assert list(cf.__all__) == sorted(cf.__all__)


@pytest.mark.parametrize("name", sorted(cf.__all__))
def test_every_public_name_resolves(name):
    assert getattr(cf, name) is not None

"""The notebooks run top to bottom with no error and are committed without outputs."""

from __future__ import annotations

import ast
import importlib.metadata as md
import os
import re
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _runtime_modules() -> set[str]:
    """Import names a plain `pip install ctxframe` provides: the standard library, ctxframe,
    and the top-level modules of its declared dependencies and of what they require."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    todo = [re.split(r"[<>=!\[; ]", d, maxsplit=1)[0].lower() for d in deps]
    dists: set[str] = set()
    while todo:
        name = todo.pop().replace("_", "-")
        if name in dists:
            continue
        try:
            reqs = md.requires(name) or []
        except md.PackageNotFoundError:  # a platform-only requirement (colorama on Windows)
            continue
        dists.add(name)
        for req in reqs:
            if "extra ==" not in req:
                todo.append(re.split(r"[<>=!\[; (]", req, maxsplit=1)[0].lower())
    modules = set(sys.stdlib_module_names) | {"ctxframe"}
    for module, owners in md.packages_distributions().items():
        if any(o.lower().replace("_", "-") in dists for o in owners):
            modules.add(module)
    return modules


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_need_only_a_plain_install(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    used = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Import):
                    used |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module:
                    used.add(node.module.split(".")[0])
    assert used - _runtime_modules() == set()


def test_the_three_notebooks_exist() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01-audit-a-codebase.ipynb",
        "02-ranking-experiments.ipynb",
        "03-parquet-for-dashboards.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: clear outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path: Path) -> None:
    """Top to bottom without an error; every chart is an inline image; the private copy of the
    sample is gone when the kernel stops."""
    private_tmp = tmp_path / "tmp"  # the kernel's own: notebooks on other workers run at once
    private_tmp.mkdir()
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("print(tmp.name)"))  # where the copy was made
    client = NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    # raises CellExecutionError on the first failing cell
    client.execute(env={**os.environ, "TMPDIR": str(private_tmp)})
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
    for cell in nb.cells:
        if cell.cell_type == "code" and "plt.show()" in cell.source:
            images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
            assert len(images) == 1, f"{path.name}: a chart cell shows one inline image"
    made = Path(nb.cells[-1].outputs[0]["text"].strip())
    assert made.parent == private_tmp and made.name.startswith("ctxframe-nb-")
    assert not made.exists() and not list(private_tmp.glob("ctxframe-nb-*"))

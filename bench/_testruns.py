"""Real test suites run under coverage.py with per-test contexts: the truth of which tests run what.

Each project in :data:`PROJECTS` gets a tree (its sdist, or the repository at the release's tag
when the sdist ships no tests, from the search tool's mirror or a ``git clone``), a virtual
environment of its own with its test dependencies, and one run of its suite under coverage.py
with ``dynamic_context = test_function``: every executed line of the project's package records
which test functions ran it. Everything lives in ``CACHE/testruns/<name>-<version>/`` and is
made once; :func:`coverage_run` returns the data file.

:func:`function_tests` turns the data into the truth the benches compare with: per library
function (found with ``ast``, independent of ctxframe), the test files whose test functions
executed a line of its own body.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

from _common import Unavailable, cache_dir, extract_archive, log


@dataclasses.dataclass(frozen=True)
class Project:
    """A real project whose own test suite is the truth."""

    name: str
    version: str
    package: str  # the library's package folder, relative to the tree root
    deps: tuple[str, ...]  # installed beside the project (its test requirements)
    git: str | None = None  # "owner/name@tag" when the sdist has no tests
    extras: str = ""
    pytest_args: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


PROJECTS = {
    "httpx": Project(
        "httpx",
        "0.28.1",
        "httpx",
        ("pytest>=8,<9", "trio", "trustme", "uvicorn", "chardet", "cryptography", "anyio"),
        extras="[brotli,cli,http2,socks,zstd]",
    ),
    "jinja2": Project("jinja2", "3.1.4", "src/jinja2", ("pytest>=8,<9", "trio")),
    "rich": Project(
        "rich",
        "13.9.4",
        "rich",
        ("pytest>=8,<9", "attrs"),
        git="Textualize/rich@v13.9.4",
    ),
    # two more kinds of project, for checks beyond the three the bench reports by default
    "click": Project("click", "8.1.7", "src/click", ("pytest>=8,<9",)),
    "flask": Project("flask", "3.0.3", "src/flask", ("pytest>=8,<9", "asgiref", "python-dotenv")),
}
DEFAULT = ("httpx", "jinja2", "rich")

RCFILE = """\
[run]
dynamic_context = test_function
source = {source}
data_file = {data}
"""


def _sh(cmd: list[str], cwd: Path | None = None, timeout: float = 1800, **env: str) -> str:
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise Unavailable(f"{' '.join(cmd[:4])}… failed: {' | '.join(tail)}")
    return proc.stdout


def _mirror(repo: str) -> Path:
    """A bare git directory of ``owner/name``: the search tool's mirror, else a clone."""
    here = Path("/work/.mirror") / repo.replace("/", "+") / "repo"
    if here.is_dir():
        return here
    dest = cache_dir() / "git" / repo.replace("/", "+")
    if not dest.is_dir():
        log(f"cloning {repo}")
        _sh(["git", "clone", "--bare", "-q", f"https://github.com/{repo}", str(dest)])
    return dest


def project_tree(p: Project) -> Path:
    """``CACHE/testruns/<key>/src``: the sdist, or the repository at its tag."""
    dest = cache_dir() / "testruns" / p.key / "src"
    if dest.is_dir():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    if p.git:
        repo, tag = p.git.split("@")
        staging = dest.parent / "staging"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        archive = dest.parent / "tree.tar"
        _sh(["git", f"--git-dir={_mirror(repo)}", "archive", "-o", str(archive), tag])
        _sh(["tar", "-xf", str(archive), "-C", str(staging)])
        archive.unlink()
        staging.rename(dest)
        return dest
    cache = cache_dir()
    tarball = next((q for q in cache.glob("*.tar.gz") if q.name.lower() == f"{p.key}.tar.gz"), None)
    if tarball is None:
        _sh([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             f"{p.name}=={p.version}", "-d", str(cache)])  # fmt: skip
        tarball = next(q for q in cache.glob("*.tar.gz") if q.name.lower() == f"{p.key}.tar.gz")
    extract_archive(tarball, dest)
    return dest


def _venv(p: Project, tree: Path) -> Path:
    """The project's own environment: editable install (so coverage sees the tree's files)."""
    where = cache_dir() / "testruns" / p.key / "venv"
    python = where / "bin" / "python"
    if (where / ".ready").exists():
        return python
    shutil.rmtree(where, ignore_errors=True)
    log(f"{p.key}: making its test environment")
    venv.EnvBuilder(with_pip=True).create(where)
    _sh([str(python), "-m", "pip", "install", "-q", "-e", f"{tree}{p.extras}", "coverage", *p.deps])
    (where / ".ready").touch()
    return python


def coverage_run(name: str) -> tuple[Path, Path]:
    """(tree, coverage data file) of the project's suite run under per-test contexts."""
    p = PROJECTS[name]
    tree = project_tree(p)
    out = cache_dir() / "testruns" / p.key / "coverage"
    data = out / ".coverage"
    if data.exists():
        return tree, data
    python = _venv(p, tree)
    out.mkdir(parents=True, exist_ok=True)
    rc = out / "coveragerc"
    rc.write_text(RCFILE.format(source=tree / p.package, data=out / "partial"))
    log(f"{p.key}: running its tests under coverage (test_function contexts)")
    proc = subprocess.run(
        [str(python), "-m", "coverage", "run", f"--rcfile={rc}", "-m", "pytest", "-q", "-x",
         "-p", "no:cacheprovider", "--maxfail=1000000", *p.pytest_args],
        cwd=tree, capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    tail = proc.stdout.strip().splitlines()[-1:] or ["no output"]
    log(f"{p.key}: pytest says {tail[0]}")
    if not (out / "partial").exists():
        raise Unavailable(f"{p.key}: no coverage data ({(proc.stderr or '').strip()[-200:]})")
    (out / "partial").rename(data)
    return tree, data


# ----------------------------------------------------------------------------- the truth


@dataclasses.dataclass(frozen=True)
class Function:
    """A library function: where it is and the lines of its own body (nested defs left out)."""

    path: str  # relative to the tree
    qualname: str
    line: int  # the `def` line
    body: frozenset[int]


def library_functions(tree: Path, package: str) -> list[Function]:
    """Every function and method under ``package`` with the lines of its own body."""
    found: list[Function] = []
    for file in sorted((tree / package).rglob("*.py")):
        rel = file.relative_to(tree).as_posix()
        try:
            mod = ast.parse(file.read_bytes())
        except SyntaxError:
            continue
        _collect(mod, "", rel, found)
    return found


def _span(stmts: list[ast.stmt]) -> set[int]:
    lines: set[int] = set()
    for s in stmts:
        lines.update(range(s.lineno, (s.end_lineno or s.lineno) + 1))
    return lines


def _collect(node: ast.AST, prefix: str, rel: str, out: list[Function]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            q = f"{prefix}{child.name}"
            body = child.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # a docstring runs at no call
            own = _span(body)
            for inner in ast.walk(child):
                if inner is not child and isinstance(
                    inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
                ):
                    if isinstance(inner, ast.Lambda):
                        continue
                    own -= _span(inner.body)
            out.append(Function(rel, q, child.lineno, frozenset(own)))
            _collect(child, f"{q}.", rel, out)
        elif isinstance(child, ast.ClassDef):
            _collect(child, f"{prefix}{child.name}.", rel, out)
        elif not isinstance(child, ast.Lambda):
            _collect(child, prefix, rel, out)


def _test_modules(tree: Path) -> dict[str, str]:
    """Dotted-name suffixes of every test file -> its path (for reading context names)."""
    by: dict[str, str] = {}
    for file in tree.rglob("test*.py"):
        rel = file.relative_to(tree)
        parts = list(rel.with_suffix("").parts)
        for i in range(len(parts)):
            by.setdefault(".".join(parts[i:]), rel.as_posix())
    return by


def context_file(context: str, modules: dict[str, str]) -> str | None:
    """The test file a coverage context (``module.qualname``) names: its longest dotted prefix
    that is a test module's name."""
    parts = context.split(".")
    for n in range(len(parts) - 1, 0, -1):
        hit = modules.get(".".join(parts[:n]))
        if hit:
            return hit
    return None


def function_tests(tree: Path, data: Path, package: str) -> dict[tuple[str, int], set[str]]:
    """(path, def line) -> the test files whose test functions executed a line of its body."""
    from coverage import CoverageData

    cov = CoverageData(basename=str(data))
    cov.read()
    modules = _test_modules(tree)
    by_file: dict[str, dict[int, list[str]]] = {}
    root = tree.resolve()
    for measured in cov.measured_files():
        try:
            rel = Path(measured).resolve().relative_to(root).as_posix()
        except ValueError:
            continue
        by_file[rel] = cov.contexts_by_lineno(measured)
    truth: dict[tuple[str, int], set[str]] = {}
    for fn in library_functions(tree, package):
        lines = by_file.get(fn.path, {})
        files = {
            f
            for ln in fn.body
            for ctx in lines.get(ln, ())
            if ctx and (f := context_file(ctx, modules))
        }
        truth[(fn.path, fn.line)] = files
    return truth

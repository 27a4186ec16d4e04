"""Modules and packages of a repository, from its files: the names an auditor (and
import-linter) uses, and the package each file folds into.

A Python file's module is its dotted name below its source root: the folder the repository's
own absolute imports are written from (`from services.payments.gateway import …` makes the
repository root a source root, a namespace package above `payments` included), else the first
folder up its path without an `__init__.py` (`src/httpx/_client.py` -> `httpx._client`); a
package's `__init__.py` is the package. Any other file's module is its path without the
extension.
A module's package is its parent (a Python package is its own), folded to its first `depth`
parts: dotted parts for Python, directories otherwise.
"""

from __future__ import annotations

import polars as pl

from ctxframe._core.frames import string_lists
from ctxframe._core.paths import is_test_path_expr

MAX_PACKAGES = 40  # the automatic depth keeps at most this many packages (a readable picture)
_INIT = r"(?:^|/)__init__\.pyi?$"


def source_roots(imports: pl.DataFrame) -> pl.Series:
    """The folders Python imports are written from: for an import edge (dst file, dotted name)
    whose file's path ends with the name, the path before it ("" for the root)."""
    tail = pl.col("name").str.replace_all(r"\.", "/")
    stem = pl.col("dst").str.replace(r"(?:/__init__)?\.pyi?$", "")
    return (
        imports.filter(
            pl.col("dst").str.ends_with(".py")
            & pl.col("name").str.contains(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
        )
        .filter((stem == tail) | stem.str.ends_with("/" + tail))
        .select(root=stem.str.slice(0, stem.str.len_chars() - tail.str.len_chars()))
        .unique()["root"]
    )


def modules(files: pl.DataFrame, imports: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per indexed code file: path, language, lines, module, parent (the module's
    package, unfolded), python, is_test. `imports` (dst, name: the repository's import
    edges) tells the source roots its imports use."""
    code = files.filter(
        pl.col("skip_reason").is_null()
        & pl.col("language").is_not_null()
        & ~pl.col("language").is_in(["markdown", "rst"])
    ).select("path", "language", "lines")
    py = code.filter(pl.col("language") == "python")
    init_dirs = (
        py.filter(pl.col("path").str.contains(_INIT))
        .select(d=pl.col("path").str.replace(r"/?__init__\.pyi?$", ""))["d"]
        .implode()
    )
    parts = py.select("path", parts=pl.col("path").str.split("/")).with_columns(
        n=pl.col("parts").list.len()
    )
    dirs = (
        parts.select("path", "parts", d=pl.int_ranges(1, pl.col("n")))
        .explode("d")
        .filter(pl.col("d").is_not_null())
        .with_columns(
            dir=pl.col("parts").list.slice(0, pl.col("d")).pipe(string_lists).list.join("/")
        )
    )
    # the source root: the deepest directory on the way that is no package
    root = dirs.filter(~pl.col("dir").is_in(init_dirs)).group_by("path").agg(root=pl.col("d").max())
    if imports is not None:
        # a source root the imports use, the longest holding the file, wins
        roots = source_roots(imports)
        if roots.len():
            known = (
                py.select("path")
                .join(pl.DataFrame({"prefix": roots}), how="cross")
                .filter(pl.col("path").str.starts_with(pl.col("prefix")))
                .group_by("path")
                .agg(prefix=pl.col("prefix").sort_by(pl.col("prefix").str.len_chars()).last())
                .select("path", used=pl.col("prefix").str.count_matches("/").cast(pl.Int32))
            )
            root = root.join(known, on="path", how="full", coalesce=True).select(
                "path", root=pl.coalesce(pl.col("used") + 0, "root")
            )
    dotted = (
        parts.join(root, on="path", how="left")
        .with_columns(root=pl.col("root").fill_null(0))
        .select(
            "path",
            module=pl.col("parts")
            .list.slice(pl.col("root"))
            .list.join(".")
            .str.replace(r"\.pyi?$", "")
            .str.replace(r"(?:^|\.)__init__$", ""),
        )
    )
    out = code.join(dotted, on="path", how="left").with_columns(
        python=pl.col("language") == "python",
        module=pl.coalesce(
            pl.when(pl.col("module") != "").then("module"),
            pl.col("path").str.replace(r"\.[^./]+$", ""),
        ),
    )
    return out.with_columns(
        parent=pl.when(pl.col("python"))
        .then(
            pl.when(pl.col("path").str.contains(_INIT))
            .then(pl.col("module"))
            .otherwise(pl.col("module").str.replace(r"\.?[^.]*$", ""))
        )
        .otherwise(pl.col("path").str.replace(r"/?[^/]*$", "")),
        is_test=is_test_path_expr("path"),
    ).with_columns(parent=pl.when(pl.col("parent") == "").then(pl.lit(".")).otherwise("parent"))


def fold(parent: pl.Expr, python: pl.Expr, depth: int) -> pl.Expr:
    """A package name folded to its first `depth` parts (dots for Python, else slashes)."""
    return (
        pl.when(python)
        .then(parent.str.split(".").list.head(depth).pipe(string_lists).list.join("."))
        .otherwise(parent.str.split("/").list.head(depth).pipe(string_lists).list.join("/"))
    )


def auto_depth(mods: pl.DataFrame, limit: int = MAX_PACKAGES) -> int:
    """The deepest folding (1 to 6 parts) that leaves at most `limit` packages of code that is
    not tests (1 when even that leaves more)."""
    code = mods.filter(~pl.col("is_test"))
    best = 1
    for depth in range(1, 7):
        n = code.select(fold(pl.col("parent"), pl.col("python"), depth).n_unique()).item()
        if n > limit:
            break
        best = depth
        deeper = code.select(fold(pl.col("parent"), pl.col("python"), depth + 1).n_unique())
        if deeper.item() == n:  # no deeper folding changes anything
            break
    return best


def in_module(name: pl.Expr, prefix: str) -> pl.Expr:
    """The module named `prefix` or one below it (dotted or a path)."""
    sep = "/" if "/" in prefix else "."
    return (name == prefix) | name.str.starts_with(prefix + sep)

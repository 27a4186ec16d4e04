"""Python source roots: the directories an import's dotted name is read from.

A repository may hold several Python projects (a monorepo, a folder of services, the sample's
catalog): `from services.payments.refund_processor import X` in one of them means the file
under *its* project. The declared roots are the repository's root, every directory holding a
`pyproject.toml`, `setup.py` or `setup.cfg` (and its `src/`), and the directory above each
top-level package (a directory with an `__init__.py` whose parent has none: what `sys.path`
holds for it, as pytest's rootdir insertion and Django's test runner do). An import is read
from the importer's own directories first, deepest first — from any of them when its first
name is a package there (`services/` of a namespace package too), from a declared root only
for a plain module (`import json` never means a sibling `json.py`) — then from the declared
roots elsewhere (a `src/` layout imported by its tests).
"""

from __future__ import annotations

import polars as pl

from ctxframe._core.frames import string_lists

_PROJECT = r"(^|/)(pyproject\.toml|setup\.py|setup\.cfg)$"


def _dir(path: pl.Expr) -> pl.Expr:
    return path.str.extract(r"^(.*)/[^/]*$", 1).fill_null("")


def source_roots(paths: pl.Series) -> pl.Series:
    """Every source root (a directory, "" for the repository's root), sorted."""
    files = paths.to_frame("path")
    projects = files.filter(pl.col("path").str.contains(_PROJECT)).select(root=_dir(pl.col("path")))
    src = projects.select(
        root=pl.when(pl.col("root") == "").then(pl.lit("src")).otherwise(pl.col("root") + "/src")
    )
    dirs = files.select(root=_dir(pl.col("path"))).unique()
    src = src.filter(
        pl.col("root").is_in(dirs.select(pl.col("root").str.extract(r"^(.*?src)(/.*)?$", 1))
                             ["root"].drop_nulls().implode())
    )  # fmt: skip
    inits = files.filter(pl.col("path").str.contains(r"(^|/)__init__\.pyi?$")).select(
        pkg=_dir(pl.col("path"))
    )
    packages = set(inits["pkg"].to_list())
    tops = inits.with_columns(parent=_dir(pl.col("pkg"))).filter(
        (pl.col("pkg") != "") & ~pl.col("parent").is_in(pl.Series(sorted(packages)).implode())
    )
    every = pl.concat([pl.Series([""]), projects["root"], src["root"], tops["parent"]])
    return every.unique().sort().rename("root")


def with_root(frame: pl.DataFrame, path: str, roots: pl.Series, name: str = "root") -> pl.DataFrame:
    """`frame` with the deepest source root above its `path` column as `name`."""
    ancestors = (
        frame.select(pl.col(path).alias("_p"))
        .unique()
        .with_columns(_parts=pl.col("_p").str.split("/"))
        .with_columns(_i=pl.int_ranges(0, pl.col("_parts").list.len()))
        .explode("_i")
        .select(
            "_p", _anc=pl.col("_parts").list.head(pl.col("_i")).pipe(string_lists).list.join("/")
        )
    )
    deepest = (
        ancestors.join(roots.to_frame("_anc"), on="_anc")
        .sort(pl.col("_anc").str.len_chars(), descending=True)
        .unique("_p", keep="first")
        .select("_p", pl.col("_anc").alias(name))
    )
    return frame.join(deepest, left_on=path, right_on="_p", how="left").with_columns(
        pl.col(name).fill_null("")
    )

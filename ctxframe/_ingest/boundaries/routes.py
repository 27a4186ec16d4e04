"""Routes as the frameworks serve them: method and whole path, prefixes included.

What each framework writes is in tables (`calls.py`: ROUTE_CALLS, ROUTERS, MOUNTS,
INCLUDES); this module joins the call references against them, once for every framework:

* a route call's method is its `methods=` (one route per method), else the table's default;
* its path is the prefixes of the router it is registered on, then its own literal: a
  router's prefix comes from its constructor (`Blueprint(url_prefix=)`, `APIRouter(prefix=)`)
  and from where it is mounted (`register_blueprint(bp, url_prefix=)` replaces it,
  `include_router(r, prefix=)` and `app.use("/api", r)` go before it), through nested mounts;
* a mounted router is found by its name as the mounting file binds it: a router assigned in
  that file, or one imported (`from .auth import bp`, `from . import auth` + `auth.bp`, a JS
  module's router);
* Django: `path()` and `re_path()` in a `urls` module, under the prefixes of the
  `path("x/", include("module"))` calls that include that module.

Extraction stores what these calls say after the call's first literal in `arg`
(`ROUTE_FACT`-led `key=value` facts: ctxframe._ingest.extract._route_facts).
"""

from __future__ import annotations

import polars as pl

from ctxframe._ingest.boundaries.calls import (
    INCLUDES,
    METHODS_KEYWORD,
    MOUNTS,
    ROUTE_CALLS,
    ROUTE_KEYWORDS,
    ROUTERS,
)

ROUTE_FACT = "\x1e"
_FACTS = sorted({*ROUTE_KEYWORDS, "var", "obj", "include"})
_ROUTE_RECEIVERS = r"^(\w*app|router|api|server|bp|blueprint|bottle|\w*[Rr]outer|\w*_bp)$"
_URLS_MODULE = r"(^|/)urls(\.py$|/)"
_DEPTH = 4  # mounts inside mounts followed this deep
_DJANGO = sorted({name for _f, name, _m, how in ROUTE_CALLS if how == "django"})
# the names whose calls shape routes without being one: a change to them re-resolves them all
STRUCTURE = sorted(
    {n for _f, n, _k in ROUTERS} | {n for _f, n, _k, _r in MOUNTS} | {n for _f, n in INCLUDES}
)


def split_facts(refs: pl.DataFrame) -> pl.DataFrame:
    """`arg` cut at its first `ROUTE_FACT` (`lit`: the literal as written, "" kept; `arg`: the
    literal or null) and one column per fact key (null when the call does not say)."""
    facts = pl.col("arg").str.extract(f"({ROUTE_FACT}.*)$", 1)
    lit = pl.col("arg").str.replace(f"{ROUTE_FACT}.*$", "")
    return refs.with_columns(
        lit=lit,
        arg=pl.when(facts.is_null()).then(pl.col("arg")).otherwise(pl.when(lit != "").then(lit)),
        **{f"f_{k}": facts.str.extract(f"{ROUTE_FACT}{k}=([^{ROUTE_FACT}]*)", 1) for k in _FACTS},
    )


def _table(rows: list[tuple], names: list[str]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=names, orient="row")


def _keyword(key_col: str) -> pl.Expr:
    """The fact named by each row's `key_col` (a table column holding a keyword)."""
    return pl.coalesce(
        [pl.when(pl.col(key_col) == k).then(pl.col(f"f_{k}")) for k in sorted(ROUTE_KEYWORDS)]
        + [pl.lit(None, pl.String)]
    )


def _bindings(imports: pl.DataFrame) -> pl.DataFrame:
    """What each file's imports bind: (path, local name, files it may name, attribute): `from
    M import N as A` binds A to N in M's files (or to the module M.N: `attr` null); `import M`
    binds M's first part to M's files."""
    if imports.is_empty():
        return pl.DataFrame(
            schema={"path": pl.String, "local": pl.String, "file": pl.String, "attr": pl.String}
        )
    local = pl.coalesce(
        "alias", "name", pl.col("module").str.extract(r"^([^./]+)", 1)
    ).str.extract(r"([A-Za-z_$][\w$]*)$", 1)
    rows = imports.select(
        "path",
        local=local,
        names=pl.col("candidates").str.split("\n"),
        subs=pl.col("sub_candidates").str.split("\n"),
        name="name",
    )
    of_module = rows.explode("names").select(
        "path", "local", file="names", attr=pl.col("name").replace("default", None)
    )
    submodule = rows.filter(pl.col("subs").is_not_null()).explode("subs").select(
        "path", "local", file="subs", attr=pl.lit(None, pl.String)
    )
    return pl.concat([of_module, submodule]).filter(
        pl.col("local").is_not_null() & pl.col("file").is_not_null()
    )


def _resolve(rows: pl.DataFrame, expr: str, routers: pl.DataFrame, binds: pl.DataFrame):
    """(each row, tpath, tvar): the router `rows[expr]` names in its file (`path`): assigned
    there, or imported (`bp`, `auth.bp`, a JS module: `tvar` "*", any router of the file)."""
    rows = rows.with_row_index("_row").with_columns(
        _head=pl.col(expr).str.extract(r"^([A-Za-z_$][\w$]*)", 1),
        _rest=pl.col(expr).str.extract(r"^[A-Za-z_$][\w$]*\.([A-Za-z_$][\w$]*)$", 1),
    )
    local = rows.filter(pl.col("_rest").is_null()).join(
        routers.select("path", _head="var"), on=["path", "_head"], how="inner"
    ).with_columns(tpath="path", tvar="_head")
    imported = (
        rows.join(binds.rename({"local": "_head"}), on=["path", "_head"], how="inner")
        .with_columns(
            tpath="file",
            tvar=pl.when(pl.col("_rest").is_not_null())
            .then(pl.when(pl.col("attr").is_null()).then("_rest"))
            .otherwise(pl.coalesce("attr", pl.lit("*"))),
        )
        .filter(pl.col("tvar").is_not_null())
        .drop("file", "attr")
    )
    found = pl.concat([local, imported], how="diagonal_relaxed")
    known = pl.concat(
        [routers.select(tpath="path", tvar="var"), routers.select(tpath="path", tvar=pl.lit("*"))]
    ).unique()
    return found.join(known, on=["tpath", "tvar"], how="semi").unique(
        ["_row", "tpath", "tvar"], maintain_order=True
    )


def _join_paths(prefix: pl.Expr, path: pl.Expr) -> pl.Expr:
    """`/auth` + `/login` -> `/auth/login`; `/auth` + `/` -> `/auth/`; "" + `x/` -> `/x/`."""
    return (
        pl.when(prefix.fill_null("") == "")
        .then(pl.lit("/") + path.str.strip_chars_start("/"))
        .otherwise(
            prefix.str.strip_chars_end("/") + pl.lit("/") + path.str.strip_chars_start("/")
        )
    )


def _prefixes(routers: pl.DataFrame, mounts: pl.DataFrame) -> pl.DataFrame:
    """Every (path, var, prefix) a router's routes get: its own prefix when nothing mounts it,
    else one row per mount (through mounts of mounts, `_DEPTH` deep)."""
    own = routers.select("path", "var", own=pl.col("own").fill_null(""))
    mounted = mounts.select("tpath", "tvar").unique()
    # the routers something mounts (`*`: every router of a JS module mounted whole); a parent
    # among them gives its prefixes once they are known, never none
    waits = pl.concat(
        [
            mounted.filter(pl.col("tvar") != "*").select(path="tpath", recv="tvar"),
            own.join(mounted.filter(pl.col("tvar") == "*").select(path="tpath"), on="path")
            .select("path", recv="var"),
        ]
    ).unique()
    todo = own.join(waits.rename({"recv": "var"}), on=["path", "var"], how="anti").select(
        "path", "var", prefix="own"
    )
    star = own.select(tpath="path", tvar=pl.lit("*"), v="var", own="own")
    exact = own.select(tpath="path", tvar="var", v="var", own="own")
    targets = mounts.join(pl.concat([exact, star]), on=["tpath", "tvar"], how="inner")
    targets = targets.join(
        waits.with_columns(_wait=pl.lit(True)), on=["path", "recv"], how="left"
    ).with_columns(pl.col("_wait").fill_null(False))
    known = todo
    for _ in range(_DEPTH):
        parents = known.rename({"var": "recv", "prefix": "parent"})
        step = targets.join(parents, on=["path", "recv"], how="left")
        step = step.filter(pl.col("parent").is_not_null() | ~pl.col("_wait")).with_columns(
            mine=pl.when(pl.col("replace") & pl.col("mprefix").is_not_null())
            .then(pl.col("mprefix"))
            .otherwise(_join_paths(pl.col("mprefix"), pl.col("own")).str.strip_chars_end("/"))
        )
        layer = step.select(
            path="tpath",
            var="v",
            prefix=_join_paths(pl.col("parent"), pl.col("mine")).str.strip_chars_end("/"),
        )
        new = pl.concat([todo, layer]).unique()
        if new.height == known.height:
            break
        known = new
    return known


def route_rows(refs: pl.DataFrame, imports: pl.DataFrame) -> pl.DataFrame:
    """The routes of these call references (already `split_facts`, with `family` and `recv`):
    one row per (route call, method, prefix) with `method` and `route` (the whole path)."""
    calls = refs.filter(pl.col("kind") == "call")
    route_calls = _table(ROUTE_CALLS, ["family", "name", "default", "how"])
    routers_t = _table(ROUTERS, ["family", "name", "key"])
    mounts_t = _table(MOUNTS, ["family", "name", "key", "replace"])
    routers = (
        calls.join(routers_t, on=["family", "name"], how="inner")
        .filter(pl.col("f_var").is_not_null())
        .select("path", var="f_var", own=_keyword("key"))
        .unique(["path", "var"], keep="first", maintain_order=True)
    )
    binds = _bindings(imports)
    mounts = calls.join(mounts_t, on=["family", "name"], how="inner").with_columns(
        mprefix=pl.when(pl.col("key").is_null()).then(pl.col("arg")).otherwise(_keyword("key")),
        recv=pl.col("recv"),
    ).filter(pl.col("f_obj").is_not_null())
    mounts = _resolve(mounts, "f_obj", routers, binds)
    prefixes = _prefixes(routers, mounts)

    rows = calls.join(route_calls, on=["family", "name"], how="inner")
    known_recv = pl.concat(
        [routers.select("path", recv="var"), prefixes.select("path", recv="var")]
    ).unique()
    # a receiver imported from another file where it is a router (`from app import app`)
    via_import = _resolve(
        rows.filter(pl.col("recv") != "").select("path", "recv").unique(), "recv", routers, binds
    ).select("path", "recv", "tpath", "tvar")
    recv_ok = pl.col("recv").str.contains(_ROUTE_RECEIVERS) | pl.col("_known")
    how = pl.col("how")
    literal_path = pl.col("arg").str.starts_with("/")
    take = (
        ((how == "decorator") & literal_path & (
            (recv_ok & (pl.col("decorates").is_not_null() | pl.col("arg_name").is_not_null()))
            # bottle's `@route("/x")`: the module's default app, imported bare
            | ((pl.col("recv") == "") & (pl.col("family") == "python")
               & pl.col("decorates").is_not_null())
            # Starlette's `Route("/x", endpoint)`
            | ((pl.col("recv") == "") & (pl.col("name") == "Route")
               & pl.col("arg_name").is_not_null())
        ))
        | ((how == "rule") & literal_path & recv_ok)
        | ((how == "django") & (pl.col("recv") == "") & pl.col("path").str.contains(_URLS_MODULE)
           & pl.col("f_include").is_null() & pl.col("lit").is_not_null()
           & pl.col("arg_name").is_not_null())
    )  # fmt: skip
    rows = rows.join(
        known_recv.with_columns(_known=pl.lit(True)), on=["path", "recv"], how="left"
    ).with_columns(pl.col("_known").fill_null(False)).filter(take)
    if rows.is_empty():
        return rows.with_columns(method=pl.lit(None, pl.String), route=pl.lit(None, pl.String))
    # prefixes: the router's own file, else the file it is imported from; Django: the module's
    here = rows.join(
        prefixes.rename({"var": "recv"}), on=["path", "recv"], how="left"
    )
    through = (
        here.filter(pl.col("prefix").is_null())
        .drop("prefix")
        .join(via_import, on=["path", "recv"], how="inner")
        .join(
            prefixes.rename({"path": "tpath", "var": "tvar"}), on=["tpath", "tvar"], how="inner"
        )
        .drop("tpath", "tvar")
    )
    prefixed = pl.concat(
        [here.join(through.select("path", "line", "name"), on=["path", "line", "name"],
                   how="anti"), through],
        how="diagonal_relaxed",
    )  # fmt: skip
    django = _django_prefixes(calls)
    prefixed = prefixed.join(django, on="path", how="left", suffix="_dj").with_columns(
        prefix=pl.when(pl.col("how") == "django").then("prefix_dj").otherwise("prefix")
    )
    methods = pl.col(f"f_{METHODS_KEYWORD}").str.to_uppercase().str.split(",")
    return (
        prefixed.with_columns(
            method=pl.when(pl.col(f"f_{METHODS_KEYWORD}").is_not_null())
            .then(methods)
            .otherwise(pl.concat_list(pl.col("default")))
        )
        .explode("method")
        .with_columns(
            method=pl.col("method").str.strip_chars(),
            route=_join_paths(pl.col("prefix"), _django_path(pl.col("lit"), pl.col("how"))),
        )
        .filter(pl.col("method") != "")
        .unique(["path", "line", "name", "method", "route"], maintain_order=True)
    )


def _django_path(lit: pl.Expr, how: pl.Expr) -> pl.Expr:
    """`re_path(r"^articles/(?P<year>[0-9]{4})/$")` -> `articles/<year>/`; others as written."""
    regex = (
        lit.str.strip_chars_start("^")
        .str.strip_chars_end("$")
        .str.replace_all(r"\(\?P<([^>]+)>[^)]*\)", "<$1>")
    )
    return pl.when(how == "django").then(regex).otherwise(lit)


def _django_prefixes(calls: pl.DataFrame) -> pl.DataFrame:
    """(path of a `urls` module, prefix) from the `path("x/", include("module"))` that include
    it, through includes of includes; a module nothing includes has no row (prefix "")."""
    includes = calls.filter(
        pl.col("f_include").is_not_null() & (pl.col("family") == "python")
        & pl.col("name").is_in(_DJANGO)
    ).select("path", module="f_include", part=pl.col("lit").fill_null(""))  # fmt: skip
    schema = {"path": pl.String, "prefix_dj": pl.String}
    if includes.is_empty():
        return pl.DataFrame(schema=schema)
    files = calls.select("path").unique().with_columns(
        dotted=pl.col("path").str.replace(r"\.py$", "").str.replace(r"/__init__$", "")
        .str.replace_all("/", ".")
    )  # fmt: skip
    target = includes.join(files.rename({"path": "target"}), how="cross").filter(
        (pl.col("dotted") == pl.col("module")) | pl.col("dotted").str.ends_with(
            pl.lit(".") + pl.col("module"))
    ).select("path", "target", "part")  # fmt: skip
    known = pl.DataFrame(schema={"path": pl.String, "prefix": pl.String})
    roots = target.join(target.select(path="target"), on="path", how="anti")
    level = roots.select(path="target", prefix=_join_paths(pl.lit(""), pl.col("part")))
    known = pl.concat([known, level])
    for _ in range(_DEPTH):
        nxt = target.join(known.rename({"path": "path"}), on="path", how="inner").select(
            path="target", prefix=_join_paths(pl.col("prefix"), pl.col("part"))
        )
        new = pl.concat([known, nxt]).unique()
        if new.height == known.height:
            break
        known = new
    return known.select("path", prefix_dj=pl.col("prefix").str.strip_chars_end("/"))


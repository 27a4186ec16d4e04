"""Dead code candidates: vulture's idea with the call graph behind it.

A definition is a candidate when nothing reaches it — no call, import, base-class use, route or
command registration, env read, coverage record (no inbound edge but `contains` and document
`mentions`), none of its members is used, it overrides no used method — and it is no entry
point (`entrypoints.toml`: conventional names, registering decorators, entry files and
folders; `__all__` of a library; console scripts and plugin entry points named in
pyproject.toml/setup.cfg/setup.py; a name a configuration file or template writes — a handler
named in YAML, a method a template calls; the config's `whitelist` and `entry_decorators`).

Each candidate starts at confidence 100 and loses what the evidence against it weighs: an
AMBIGUOUS call that may reach it, calls by its name the graph could not resolve, its name
written elsewhere in code (a use as a value, `getattr(x, "name")`, a string) or in
documents, a `getattr` by a prefix it starts with, an unknown decorator, a base class from
outside the repository it may override. At 100 nothing in the repository names it at all.

Whole dead files (nothing imports them and nothing in them is used) and unused imports
(a name an import binds and its file never writes again) are listed too.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources

import polars as pl

from ctxframe._audit.facts import DEFINITION_KINDS, Facts
from ctxframe._core.paths import is_test_path_expr

_DEAD_SCHEMA = {
    "id": pl.String, "kind": pl.String, "qualname": pl.String, "path": pl.String,
    "line_start": pl.Int32, "lines": pl.Int32, "package": pl.String, "language": pl.String,
    "confidence": pl.Int32, "reason": pl.String,
}  # fmt: skip
_FILE_SCHEMA = {"path": pl.String, "language": pl.String, "lines": pl.Int32,
                "package": pl.String, "confidence": pl.Int32, "reason": pl.String}  # fmt: skip
_IMPORT_SCHEMA = {"path": pl.String, "line": pl.Int32, "name": pl.String, "module": pl.String,
                  "confidence": pl.Int32, "reason": pl.String}  # fmt: skip
# what the evidence against a candidate weighs (confidence points taken off)
WEIGHTS = {
    "ambiguous": 50,  # an AMBIGUOUS call may reach it
    "by_name": 40,  # calls of its name the graph could not resolve
    "in_code": 40,  # its name written elsewhere in code
    "in_doc": 20,  # its name written in documents
    "dynamic": 40,  # getattr(x, "prefix" + …) with a prefix it starts with
    "decorated": 40,  # a decorator that may register it
    "external_base": 30,  # its class extends a class from outside the repository
    "subclass": 30,  # a class with a base in the repository: found through it?
    "exported": 20,  # a Go package's exported (capitalized) name
}
_GETATTR = re.compile(r"""getattr\(\s*[^,()]+,\s*(?:f|rf|fr)?["']([A-Za-z_]\w*)""")
_SCRIPT_REF = re.compile(r"""["']?[\w.-]+["']?\s*=\s*["']?([A-Za-z_][\w.]*):([A-Za-z_][\w.]*)""")
_WORDS = {"word": pl.String, "in_code": pl.Int32, "in_config": pl.Int32, "in_doc": pl.Int32,
          "where": pl.String, "config_at": pl.String}  # fmt: skip
_SUPPRESSED = r"#\s*(?:noqa|type:\s*ignore)|eslint-disable|@ts-ignore"
_ALL = re.compile(r"__all__\s*(?::[^=]*)?\+?=\s*[\[(]([^\])]*)[\])]", re.S)


@cache
def entry_table() -> dict:
    """ctxframe/_audit/entrypoints.toml."""
    text = resources.files("ctxframe._audit").joinpath("entrypoints.toml").read_text("utf-8")
    return tomllib.loads(text)


def _name_regex() -> pl.Expr:
    """True where a definition's label is a conventional entry name of its language."""
    table = entry_table()["names"]
    expr = pl.lit(False)
    for lang, names in table.items():
        rx = "^(?:" + "|".join(names) + ")$"
        expr = expr | ((pl.col("language") == lang) & pl.col("label").str.contains(rx))
    return expr


def _decorator_sets(f: Facts) -> tuple[list[str], list[str]]:
    table = entry_table()["decorators"]
    return [*table["register"], *f.config.entry_decorators], list(table["inert"])


def _globs(names) -> str:
    """Globs (`*` any run of characters) as one regex alternation."""
    return "|".join(re.escape(n).replace(r"\*", ".*") for n in names)


def _matches(names: list[str]) -> pl.Expr:
    """True where a decorator (dotted name in `deco`) is one of `names`: the whole dotted
    name or its last part (`*` in a name matches any part)."""
    rx = f"^(?:{_globs(names)})$"
    return pl.col("deco").str.contains(rx) | pl.col("deco").str.extract(r"([^.]+)$").str.contains(
        rx
    )


def dead(f: Facts) -> dict[str, pl.DataFrame]:
    """`dead` (definitions), `dead_files` and `unused_imports`."""
    defs = f.definitions.filter(~pl.col("is_test"))
    used = _used(f, defs)
    entries = _entries(f, defs)
    cands = defs.join(used, on="id", how="anti").join(entries, on="id", how="anti")
    cands = _score(f, cands)
    out = pl.concat([cands.select(list(_DEAD_SCHEMA)).cast(_DEAD_SCHEMA), _unreachable(f, defs)])
    out = out.sort(["confidence", "lines", "id"], descending=[True, True, False])
    files = _dead_files(f, defs, used, entries)
    imports = _unused_imports(f)
    return {"dead": out.cast(_DEAD_SCHEMA), "dead_files": files, "unused_imports": imports}


def _unreachable(f: Facts, defs: pl.DataFrame) -> pl.DataFrame:
    """A statement after a return, raise, break or continue in the same block (the node
    column `unreachable`): no path runs it, whoever calls the function."""
    if "unreachable" not in f.nodes.columns:
        return pl.DataFrame(schema=_DEAD_SCHEMA)
    at = f.nodes.filter(pl.col("unreachable").is_not_null()).select("id", "unreachable")
    return (
        defs.join(at, on="id")
        .select(
            "id",
            kind=pl.lit("unreachable code"),
            qualname="qualname",
            path="path",
            line_start="unreachable",
            lines=(pl.col("line_end") - pl.col("unreachable") + 1).cast(pl.Int32),
            package="package",
            language="language",
            confidence=pl.lit(100, pl.Int32),
            reason=pl.format(
                "this statement follows a return, raise, break or continue in its block "
                "(in {}, line {}): no path reaches it",
                "qualname",
                "unreachable",
            ),
        )
        .cast(_DEAD_SCHEMA)
    )


def _used(f: Facts, defs: pl.DataFrame) -> pl.DataFrame:
    """Ids of definitions something reaches: an inbound edge (not AMBIGUOUS), a used member
    (for a class), a used ancestor method it overrides, a used nested definition's parent
    calling it is an edge already."""
    sure = f.inbound.filter(pl.col("sure") > 0).select("id")
    # a class is used when any member is (a static call, an attribute of an instance)
    members = defs.filter(pl.col("parent_kind").is_in(DEFINITION_KINDS)).select("id", "parent")
    used_classes = members.join(sure, on="id").select(id="parent")
    # `C(...)` resolved to `C.__init__`: C is used
    direct = pl.concat([sure, used_classes]).unique()
    # a method overriding a used method of an ancestor (a call through the base dispatches)
    bases = f.edges.filter(
        pl.col("kind").is_in(["extends", "implements"]) & pl.col("dst").is_not_null()
    ).select(cls="src", base="dst")
    ancestors = bases.rename({"base": "anc"})
    frontier = ancestors
    for _ in range(12):
        nxt = (
            frontier.join(bases, left_on="anc", right_on="cls")
            .select("cls", anc="base")
            .join(ancestors, on=["cls", "anc"], how="anti")
        )
        if nxt.is_empty():
            break
        ancestors = pl.concat([ancestors, nxt])
        frontier = nxt
    methods = defs.filter(pl.col("parent_kind").is_in(["class", "struct", "interface", "trait"]))
    all_methods = f.definitions.select("id", "label", cls="parent")
    used_methods = all_methods.join(direct, on="id")
    overriding = (
        methods.select("id", "label", cls="parent")
        .join(ancestors, on="cls")
        .join(used_methods.select("label", anc="cls"), on=["anc", "label"])
        .select("id")
    )
    return pl.concat([direct, overriding]).unique()


def _entries(f: Facts, defs: pl.DataFrame) -> pl.DataFrame:
    """Ids of definitions that are entry points (never candidates): id."""
    table = entry_table()["files"]
    register, _inert = _decorator_sets(f)
    deco = defs.select("id", deco=pl.col("decorators").str.split(",")).explode("deco")
    registered = deco.filter(pl.col("deco").is_not_null() & _matches(register)).select("id")
    folders = "|".join(re.escape(d) for d in table["folders"])
    names = "|".join(re.escape(n) for n in table["names"])
    in_entry_file = defs.filter(
        pl.col("path").str.contains(f"(?:^|/)(?:{folders})/")
        | pl.col("path").str.contains(f"(?:^|/)(?:{names})$")
    ).select("id")
    conventional = defs.filter(_name_regex()).select("id")
    white = _whitelisted(f, defs)
    exported = _exported(f, defs)
    words = f.word_counts(defs["label"])
    configured = (
        defs.join(words.filter(pl.col("in_config") > 0).select(label="word"), on="label").select(
            "id"
        )
        if words is not None
        else white.clear()
    )
    return pl.concat([registered, in_entry_file, conventional, white, exported,
                      configured]).unique()  # fmt: skip


def _whitelisted(f: Facts, defs: pl.DataFrame) -> pl.DataFrame:
    if not f.config.whitelist:
        return pl.DataFrame(schema={"id": pl.String})
    rx = f"^(?:{_globs(f.config.whitelist)})$"
    return defs.filter(
        pl.col("label").str.contains(rx)
        | pl.col("qualname").str.contains(rx)
        | pl.col("id").str.contains(rx)
        | (pl.col("module") + "." + pl.col("qualname")).str.contains(rx)
    ).select("id")


def _exported(f: Facts, defs: pl.DataFrame) -> pl.DataFrame:
    """Definitions a library exports by name: listed in its module's `__all__`, or named as a
    console script or plugin entry point (`module:attr`) in pyproject.toml, setup.cfg or
    setup.py."""
    texts = f.texts
    if texts is None:
        return pl.DataFrame(schema={"id": pl.String})
    py = texts.filter(
        pl.col("path").str.ends_with(".py") & pl.col("text").str.contains("__all__", literal=True)
    )
    listed = (
        py.select("path", body=pl.col("text").str.extract_all(_ALL.pattern))
        .explode("body")
        .filter(pl.col("body").is_not_null())
        .select("path", label=pl.col("body").str.extract_all(r"""["']([A-Za-z_]\w*)["']"""))
        .explode("label")
        .filter(pl.col("label").is_not_null())
        .with_columns(label=pl.col("label").str.strip_chars("\"'"))
    )
    module_level = defs.filter(pl.col("parent") == pl.col("path"))
    in_all = module_level.join(listed, on=["path", "label"])
    # a package's __init__.py lists what its modules define (`from ._client import Client`)
    package_all = listed.filter(pl.col("path").str.contains(r"(?:^|/)__init__\.pyi?$")).select(
        "label", folder=pl.col("path").str.replace(r"__init__\.pyi?$", "")
    )
    in_package_all = (
        module_level.join(package_all, on="label")
        .filter(pl.col("path").str.starts_with(pl.col("folder")))
        .select("id")
    )
    manifests = texts.filter(
        pl.col("path").str.contains(r"(?:^|/)(?:pyproject\.toml|setup\.cfg|setup\.py)$")
    )
    refs = (
        manifests.select(ref=pl.col("text").str.extract_all(_SCRIPT_REF.pattern))
        .explode("ref")
        .filter(pl.col("ref").is_not_null())
        .select(
            module=pl.col("ref").str.extract(_SCRIPT_REF.pattern, 1),
            attr=pl.col("ref").str.extract(_SCRIPT_REF.pattern, 2),
        )
    )
    scripts = defs.join(refs.with_columns(qualname=pl.col("attr")), on=["module", "qualname"])
    return pl.concat([in_all.select("id"), in_package_all, scripts.select("id")]).unique()


def _score(f: Facts, cands: pl.DataFrame) -> pl.DataFrame:
    """Confidence and reason of each candidate."""
    _register, inert = _decorator_sets(f)
    w = WEIGHTS
    amb = f.inbound.select("id", "ambiguous")
    by_name = f.unresolved_calls.rename({"name": "label", "n": "by_name"})
    defined = f.definitions.group_by("label").agg(defined=pl.len().cast(pl.Int32))
    words = f.word_counts(cands["label"])
    if words is None:
        words = pl.DataFrame(schema=_WORDS)
    prefixes = dynamic_prefixes(f)
    deco = (
        cands.select("id", deco=pl.col("decorators").str.split(","))
        .explode("deco")
        .filter(pl.col("deco").is_not_null() & ~_matches(inert))
        .group_by("id")
        .agg(unknown_deco=pl.col("deco").sort().first())
    )
    external = external_base_classes(f)
    based = (
        f.edges.filter(
            pl.col("kind").is_in(["extends", "implements"])
            & pl.col("dst").is_not_null()
            & ~pl.col("dst").str.starts_with("module://")
        )
        .group_by(id="src")
        .agg(base=pl.col("name").sort().first())
    )
    t = (
        cands.join(amb, on="id", how="left")
        .join(by_name, on="label", how="left")
        .join(defined, on="label", how="left")
        .join(words.rename({"word": "label"}), on="label", how="left")
        .join(deco, on="id", how="left")
        .join(based, on="id", how="left")
        .with_columns(
            ambiguous=pl.col("ambiguous").fill_null(0),
            by_name=pl.col("by_name").fill_null(0),
            # the definitions of the name write it once each (and a call site is counted in
            # the unresolved calls already)
            extra_code=(pl.col("in_code").fill_null(0) - pl.col("defined").fill_null(1)).clip(
                lower_bound=0
            ),
            in_doc=pl.col("in_doc").fill_null(0),
            external=pl.col("parent").is_in(external.implode())
            & pl.col("kind").is_in(["function", "method"]),
            exported=(pl.col("language") == "go")
            & pl.col("label").str.contains(r"^[A-Z]")
            & ~pl.col("package").str.ends_with("main"),
        )
    )
    if prefixes.height:
        hit = (
            t.select("id", "label")
            .join(prefixes, how="cross")
            .filter(pl.col("label").str.starts_with(pl.col("prefix")))
            .group_by("id")
            .agg(prefix=pl.col("prefix").first(), prefix_at=pl.col("at").first())
        )
        t = t.join(hit, on="id", how="left")
    else:
        t = t.with_columns(prefix=pl.lit(None, pl.String), prefix_at=pl.lit(None, pl.String))
    parts = [
        (pl.col("ambiguous") > 0, w["ambiguous"],
         pl.format("{} AMBIGUOUS call(s) may reach it", "ambiguous")),
        (pl.col("by_name") > 0, w["by_name"],
         pl.format("{} unresolved call(s) of its name", "by_name")),
        (pl.col("extra_code") > 0, w["in_code"],
         pl.format("its name is written {} more time(s) in code (first in {})", "extra_code",
                   "where")),
        (pl.col("in_doc") > 0, w["in_doc"],
         pl.format("named {} time(s) in documents", "in_doc")),
        (pl.col("prefix").is_not_null(), w["dynamic"],
         pl.format("looked up by name: getattr(…, '{}' …) in {}", "prefix", "prefix_at")),
        (pl.col("unknown_deco").is_not_null(), w["decorated"],
         pl.format("decorated with @{} (it may register it)", "unknown_deco")),
        (pl.col("external"), w["external_base"],
         pl.lit("its class extends a class from outside the repository (an override?)")),
        (pl.col("exported"), w["exported"], pl.lit("an exported Go name")),
        (pl.col("base").is_not_null() & ~pl.col("kind").is_in(["function", "method"]),
         w["subclass"],
         pl.format("a subclass of {}: code may find it through its base", "base")),
    ]  # fmt: skip
    penalty = pl.sum_horizontal(*(pl.when(c).then(pl.lit(p)).otherwise(0) for c, p, _ in parts))
    reasons = pl.concat_list([pl.when(c).then(r) for c, _, r in parts]).list.drop_nulls()
    base = (
        pl.when(pl.col("kind").is_in(["function", "method"]))
        .then(pl.lit("no call, reference or registration reaches it"))
        .otherwise(pl.lit("nothing uses it or any of its members"))
    )
    return t.with_columns(
        confidence=(100 - penalty).clip(lower_bound=0).cast(pl.Int32),
        reason=pl.concat_list([base, reasons]).list.join("; "),
    ).filter(pl.col("confidence") > 0)


def dynamic_prefixes(f: Facts, per_file: bool = False) -> pl.DataFrame:
    """Literal prefixes of names looked up with getattr (`getattr(self, "visit_" + kind)`):
    (prefix, at: the first file), or with `per_file` (path, prefix)."""
    texts = f.texts
    if texts is None:
        if per_file:
            return pl.DataFrame(schema={"path": pl.String, "prefix": pl.String})
        return pl.DataFrame(schema={"prefix": pl.String, "at": pl.String})
    found = (
        texts.filter(pl.col("code") & pl.col("text").str.contains("getattr(", literal=True))
        .select("path", m=pl.col("text").str.extract_all(_GETATTR.pattern))
        .explode("m")
        .filter(pl.col("m").is_not_null())
        .select("path", prefix=pl.col("m").str.extract(_GETATTR.pattern, 1))
        .unique()
    )
    if per_file:
        return found.sort("path", "prefix")
    return found.group_by("prefix").agg(at=pl.col("path").min()).sort("prefix")


def external_base_classes(f: Facts) -> pl.Series:
    """Classes with a base the repository does not define."""
    ext = f.edges.filter(
        pl.col("kind").is_in(["extends", "implements"])
        & (pl.col("dst").is_null() | pl.col("dst").str.starts_with("module://"))
    )
    # `object`, `ABC` and other builtin roots call nothing back
    ext = ext.filter(~pl.col("name").fill_null("").is_in(["object", "ABC", "abc.ABC"]))
    return ext["src"].unique()


def _dead_files(
    f: Facts, defs: pl.DataFrame, used: pl.DataFrame, entries: pl.DataFrame
) -> pl.DataFrame:
    """Code files nothing imports, none of whose definitions is used, and no script."""
    table = entry_table()["files"]
    mods = f.modules.filter(~pl.col("is_test"))
    imported = f.file_imports.select(path="dst").unique()
    alive = (
        pl.concat([used, entries]).join(defs.select("id", "path"), on="id").select("path").unique()
    )
    scripts = f.nodes.filter(pl.col("kind") == "script").select("path").unique()
    calls_in = f.file_calls.select(path="dst").unique()
    folders = "|".join(re.escape(d) for d in table["folders"])
    names = "|".join(re.escape(n) for n in table["names"])
    cand = (
        mods.join(imported, on="path", how="anti")
        .join(alive, on="path", how="anti")
        .join(scripts, on="path", how="anti")
        .join(calls_in, on="path", how="anti")
        .filter(
            ~pl.col("path").str.contains(f"(?:^|/)(?:{folders})/")
            & ~pl.col("path").str.contains(f"(?:^|/)(?:{names})$")
            & ~pl.col("path").str.contains(
                r"(?:^|/)__init__\.pyi?$|\.d\.ts$|(?:^|/)index\.[jt]sx?$"
            )
            & ~pl.col("language").is_in(["sql", "c", "cpp"])  # headers, build-time inputs
        )
        .with_columns(stem=pl.col("path").str.extract(r"([^/]+?)(?:\.[^./]+)?$"))
    )
    if cand.is_empty():
        return pl.DataFrame(schema=_FILE_SCHEMA)
    words = f.word_counts(cand["stem"])
    if words is None:
        cand = cand.with_columns(mentions=pl.lit(0), where=pl.lit(None, pl.String))
    else:
        cand = cand.join(words.rename({"word": "stem"}), on="stem", how="left").with_columns(
            mentions=pl.col("in_code").fill_null(0)
            + pl.col("in_config").fill_null(0)
            + pl.col("in_doc").fill_null(0)
        )
    return (
        cand.with_columns(
            confidence=pl.when(pl.col("mentions") > 0).then(60).otherwise(100).cast(pl.Int32),
            reason=pl.when(pl.col("mentions") > 0)
            .then(
                pl.format(
                    "nothing imports it or uses its code; its name is written {} "
                    "time(s) (first in {})",
                    "mentions",
                    "where",
                )
            )
            .otherwise(pl.lit("nothing imports it or uses its code")),
            lines=pl.col("lines").cast(pl.Int32),
        )
        .select(list(_FILE_SCHEMA))
        .sort(["confidence", "lines", "path"], descending=[True, True, False])
    )


def _unused_imports(f: Facts) -> pl.DataFrame:
    """Names an import binds that its file never writes again (Python, JavaScript,
    TypeScript, Java; a package's `__init__.py` re-exports, `from __future__`, `import x as
    x` and names in `__all__` are not unused)."""
    imports = f.imports
    if imports is None or f.texts is None:
        if imports is None:
            f.notes.append("the store keeps no references: unused imports were not looked for")
        return pl.DataFrame(schema=_IMPORT_SCHEMA)
    rows = (
        imports.filter(
            pl.col("language").is_in(["python", "javascript", "typescript", "tsx", "java"])
            & (pl.col("scope").fill_null("") != "export")
            & (pl.col("name").fill_null("") != "*")
            & ~pl.col("path").str.contains(r"(?:^|/)__init__\.pyi?$")
            & (pl.col("module").fill_null("") != "__future__")
            & ~is_test_path_expr("path")
        )
        .with_columns(
            local=pl.coalesce("alias", "name").str.extract(r"^([A-Za-z_$][\w$]*)"),
        )
        .filter(pl.col("local").is_not_null() & (pl.col("alias") != pl.col("name")).fill_null(True))
    )
    if rows.is_empty():
        return pl.DataFrame(schema=_IMPORT_SCHEMA)
    counts = f.words_per_file(rows["local"])
    listed = f.texts.filter(pl.col("text").str.contains("__all__")).select("path", "text")
    found = rows.join(counts.rename({"word": "local"}), on=["path", "local"], how="left")
    # the import statement writes the name once (twice for `import a as b`: a and b)
    unused = found.filter(pl.col("n").fill_null(0) <= 1)
    if listed.height:
        in_all = unused.join(listed, on="path").filter(
            pl.col("text").str.contains(pl.format("""["']{}["']""", "local"))
        )
        unused = unused.join(
            in_all.select("path", "line", "local"), on=["path", "line", "local"], how="anti"
        )
    # a name other files import from this one is re-exported, not unused
    reexported = (
        imports.select(src="path", local="name")
        .join(f.file_imports.select("src", path="dst"), on="src")
        .select("path", "local")
        .unique()
    )
    unused = unused.join(reexported, on=["path", "local"], how="anti")
    # a linter's suppression comment on the import line says it is meant
    lines = unused.join(f.texts.select("path", "text"), on="path").select(
        "path", "line", "local",
        noqa=pl.col("text").str.split("\n").list.get(pl.col("line") - 1, null_on_oob=True)
        .str.contains(_SUPPRESSED).fill_null(False),
    )  # fmt: skip
    unused = unused.join(
        lines.filter("noqa").select("path", "line", "local"), on=["path", "line", "local"],
        how="anti",
    )  # fmt: skip
    return (
        unused.select(
            "path",
            "line",
            name=pl.col("local"),
            module="module",
            confidence=pl.lit(90, pl.Int32),
            reason=pl.lit("imported here and never used in this file"),
        )
        .unique(["path", "line", "name"])
        .cast(_IMPORT_SCHEMA)
        .sort("path", "line", "name")
    )

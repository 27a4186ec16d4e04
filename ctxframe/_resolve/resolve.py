"""Resolve raw references into edges with confidence, as Polars joins over the whole repo.

EXTRACTED: resolved through scope (self/this/receiver, same file or package) or imports.
INFERRED: matched by name to exactly one candidate in the same language family.
AMBIGUOUS: several candidates (2..AMBIGUOUS_CAP), one row per candidate.
Unresolved references keep the written name with a null `dst` and null `confidence`.
Resolution always runs over every reference, so an incremental index equals a full rebuild.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl

from ctxframe._core.frames import string_lists
from ctxframe._core.languages import LANGUAGES
from ctxframe._core.paths import is_test_path_expr
from ctxframe._core.schema import EDGES, NODES, PRODUCER, conform_edges
from ctxframe._core.trace import mark

AMBIGUOUS_CAP = 8
_FAMILY = {lang.name: lang.family for lang in LANGUAGES}
_CALLABLE = ["function", "method", "class", "struct"]
_TYPES = ["class", "struct", "interface", "enum", "type", "trait"]
# Families added after the foundation: a call on a receiver that names a type (`Item::new()`,
# `Item.create()`) matches that type's member by qualified name.
_TYPE_QUALIFIED = {"java", "c", "csharp", "rust", "zig"}
# Node kinds a document may mention (never files' own rows, stubs, sections or prototypes).
_MENTIONABLE = ["class", "struct", "interface", "enum", "type", "trait", "function", "method",
                "namespace", "table", "view", "procedure"]  # fmt: skip
# Names that are the language's own, never a repo symbol when called bare.
_BUILTINS = {
    "python": set(
        "print len range str int float bool dict list set tuple isinstance issubclass getattr "
        "setattr hasattr super type open repr sorted reversed enumerate zip map filter min max "
        "sum any all abs iter next id hash format vars callable object property staticmethod "
        "classmethod round divmod chr ord hex bin oct bytes bytearray memoryview frozenset "
        "delattr globals locals input exec eval compile NotImplementedError ValueError "
        "TypeError KeyError RuntimeError Exception AttributeError IndexError".split()
    ),
    "js": set(
        "require fetch setTimeout setInterval clearTimeout clearInterval parseInt parseFloat "
        "String Number Boolean Array Object Promise Error Map Set Date JSON isNaN "
        "encodeURIComponent decodeURIComponent Symbol BigInt structuredClone".split()
    ),
    "go": set(
        "len cap make new append copy delete panic recover print println close complex real "
        "imag min max clear string int int64 int32 uint uint64 float64 byte rune error".split()
    ),
}


def _dirname(col: str) -> pl.Expr:
    return pl.col(col).str.extract(r"^(.*)/[^/]*$", 1).fill_null("")


def _family() -> pl.Expr:
    return pl.col("language").replace_strict(_FAMILY, default=pl.col("language"))


def _rooted(imports: pl.DataFrame, indexed: pl.DataFrame) -> pl.DataFrame:
    """Python imports are read from the importer's own directories first, deepest first
    (ctxframe._resolve.roots): a candidate path whose head is a package directory is tried
    under each of them, then as written (from the declared roots)."""
    py = imports.filter(
        (pl.col("family") == "python") & pl.col("path").str.contains("/", literal=True)
    )
    if py.is_empty():
        return imports
    for c in ("candidates", "sub_candidates"):
        pre = (
            py.select("ref_id", "path", cand=pl.col(c).str.split("\n"))
            .explode("cand")
            .drop_nulls("cand")
            .filter(pl.col("cand").str.contains("/", literal=True))
            .with_columns(_parts=pl.col("path").str.split("/"), _k=pl.int_range(pl.len()))
            .with_columns(_i=pl.int_ranges(pl.col("_parts").list.len() - 1, 0, -1))
            .explode("_i")
            .select(
                "ref_id",
                "_i",
                "_k",
                cand=pl.col("_parts").list.head(pl.col("_i")).pipe(string_lists).list.join("/")
                + "/"
                + pl.col("cand"),
            )
            .sort("ref_id", "_i", "_k", descending=[False, True, False])
            .group_by("ref_id", maintain_order=True)
            .agg(_pre=pl.col("cand").str.join("\n"))
        )
        imports = (
            imports.join(pre, on="ref_id", how="left")
            .with_columns(
                pl.when(pl.col("_pre").is_not_null())
                .then(pl.concat_str("_pre", pl.lit("\n"), c))
                .otherwise(pl.col(c))
                .alias(c)
            )
            .drop("_pre")
        )
    return imports


def _first_match(rows: pl.DataFrame, col: str, targets: pl.DataFrame) -> pl.DataFrame:
    """For each ref_id, the first entry of list column `col` that is a path in `targets`.

    An entry starting with "/" is a path suffix: it matches every path ending with it (or equal
    to it without the slash); the shortest such path wins."""
    exploded = (
        rows.select("ref_id", pl.col(col).str.split("\n").alias("cand"))
        .explode("cand")
        .drop_nulls("cand")
        .with_columns(order=pl.int_range(pl.len()).over("ref_id"))
    )
    suffix = pl.col("cand").str.starts_with("/")
    exact = exploded.filter(~suffix).join(targets.select("path"), left_on="cand", right_on="path")
    exact = exact.select("ref_id", "order", pl.col("cand").alias("target_path"))
    by_suffix = exploded.filter(suffix)
    if by_suffix.height:
        by_suffix = by_suffix.join(_suffixes(targets), left_on="cand", right_on="suffix").select(
            "ref_id", "order", pl.col("path").alias("target_path")
        )
        exact = pl.concat([exact, by_suffix])
    return (
        exact.sort("ref_id", "order", pl.col("target_path").str.len_chars(), "target_path")
        .unique("ref_id", keep="first", maintain_order=True)
        .select("ref_id", "target_path")
    )


def _suffixes(targets: pl.DataFrame) -> pl.DataFrame:
    """Every "/"-led tail of every path (`/a/b.h`, `/b.h` for `a/b.h`), for suffix candidates."""
    parts = targets.select("path", parts=pl.col("path").str.split("/"))
    return (
        parts.with_columns(i=pl.int_ranges(0, pl.col("parts").list.len()))
        .explode("i")
        .select(
            "path",
            suffix=pl.lit("/")
            + pl.col("parts").list.slice(pl.col("i")).pipe(string_lists).list.join("/"),
        )
    )


def _go_dirs(modules: pl.Series, gomods: dict[str, str]) -> pl.DataFrame:
    """Map Go import paths to repo directories through the go.mod files found in the repo."""
    rows = []
    for mod in modules.unique().to_list():
        for moddir, modpath in gomods.items():
            if mod == modpath or mod.startswith(modpath + "/"):
                rest = mod[len(modpath) :].strip("/")
                rows.append((mod, "/".join(p for p in (moddir, rest) if p)))
                break
    return pl.DataFrame(rows, schema={"module": pl.String, "target_dir": pl.String}, orient="row")


@dataclass(frozen=True)
class Previous:
    """What an incremental run knows from the last one: its edges and definitions, and which
    files were re-parsed. Only valid when no file was added or removed."""

    edges: pl.DataFrame
    defs: pl.DataFrame
    changed: list[str]


_KEY = ["id", "kind", "label", "qualname", "path", "parent"]
_SYMBOLIC = ["src", "path", "language", "kind", "name", "receiver", "scope", "line"]


CALL_SLICE_ROWS = 200_000
# Languages whose calls and bases the value flow resolves (ctxframe._resolve.flow_edges): name
# matching leaves their references alone.
BY_FLOW = ["python"]


def _file_slices(frame: pl.DataFrame, rows: int) -> list[pl.DataFrame]:
    """`frame` (each file's rows contiguous) cut into slices of about `rows` rows, never
    inside a file."""
    if frame.height <= rows:
        return [frame]
    sizes = frame.group_by("path", maintain_order=True).len()["len"].to_list()
    out, start, size = [], 0, 0
    for n in sizes:
        if size and size + n > rows:
            out.append(frame.slice(start, size))
            start, size = start + size, 0
        size += n
    out.append(frame.slice(start, size))
    return out


def _with_ctx(frame: pl.DataFrame, path: str, family: str = "family") -> pl.DataFrame:
    """`ctx`: the scope a bare name resolves in: the file, or for Go its package directory."""
    is_go = pl.col(family) == "go"
    if not frame.select(is_go.any()).item():
        return frame.with_columns(ctx=pl.col(path))
    return frame.with_columns(ctx=pl.when(is_go).then(_dirname(path)).otherwise(pl.col(path)))


def _ref_slices(parts: list[pl.LazyFrame], kinds: list[str], rows: int) -> Iterator[pl.DataFrame]:
    """The references of these kinds (only the columns resolution reads), whole files at a
    time, in slices of about `rows` rows; only one part is read into memory at once. Python
    calls are left out: the value flow resolves them (ctxframe._resolve.flow_edges)."""
    pending: list[pl.DataFrame] = []
    size = 0
    keep = pl.col("kind").is_in(kinds) & ~pl.col("language").is_in(BY_FLOW)
    for part in parts:
        frame = part.filter(keep).select(_SYMBOLIC).collect()
        for piece in _file_slices(frame, rows):
            pending.append(piece)
            size += piece.height
            if size >= rows:
                yield pl.concat(pending)
                pending, size = [], 0
    if pending:
        yield pl.concat(pending)


def resolve(
    defs: pl.DataFrame,
    files: pl.DataFrame,
    refs: pl.DataFrame | list[pl.LazyFrame],
    gomods: dict[str, str],
    previous: Previous | None = None,
    handlers: pl.DataFrame | None = None,
    spill: str | None = None,
    python: tuple | bool | None = None,
    flow_keep: list | None = None,
    shared: list | None = None,
) -> tuple[pl.LazyFrame, pl.DataFrame]:
    """Edges (contains, imports, calls, extends, implements), as a lazy frame whose call edges
    sit in scratch files under `spill` when given, and module-stub nodes.

    Python's calls and bases come from the value flow of the whole repository: `python` gives
    (every Python file's facts, every Python definition) when `refs` and `defs` hold only some
    (the re-index fast path; the edges then cover every Python file), with a third item when
    an incremental solve already made the Python edges of the files it names
    (ctxframe._resolve.flow_state.Result), or is False when no Python edge is wanted (the
    fast path when no Python file's facts changed). `flow_keep` gets the solved value flow's
    state. `shared` (a list the caller keeps) keeps what depends on the definitions alone
    for the next call with the same definitions.

    `refs` is one frame, or parts of it (each holding whole files) read one at a time, so the
    references of a large tree never sit in memory together. With `previous`, only references
    whose resolution can change are resolved again: those in re-parsed files and in files
    importing them, and those naming a definition that changed.
    """
    parts = [refs.lazy()] if isinstance(refs, pl.DataFrame) else refs
    every = pl.concat(parts) if len(parts) > 1 else parts[0]

    def of_kind(*kinds: str) -> pl.DataFrame:
        return every.filter(pl.col("kind").is_in(kinds)).collect()

    # A fixed row order makes every keep="first" below independent of how refs were gathered.
    order = ["path", "line", "kind", "src", "name", "receiver", "module", "alias"]
    indexed = files.filter(pl.col("skip_reason").is_null()).select("path", "language")
    namespaces = defs.filter(pl.col("kind") == "namespace").select(
        "path", "qualname", family=_family()
    )
    edges_imports, bindings, stubs = _imports(
        of_kind("import").with_columns(family=_family()).sort(order, nulls_last=True),
        indexed,
        gomods,
        namespaces,
    )
    memo = _derived(defs, shared)  # what depends on the definitions alone
    if "defs_targets" not in memo:
        memo["defs_targets"] = _targets(defs)
    targets = memo["defs_targets"]
    # imports in the order the edge table gives them (uses_edges keeps the first per file)
    edges_imports = edges_imports.sort("src", "line", "dst", "name", nulls_last=True)
    kept, redo = None, None
    if previous is not None:
        changed = pl.Series(previous.changed, dtype=pl.String)
        changed_defs = pl.concat(
            [
                defs.filter(pl.col("path").is_in(changed.implode())).select(_KEY),
                previous.defs.filter(pl.col("path").is_in(changed.implode())).select(_KEY),
            ]
        )
        moved = changed_defs.group_by(_KEY).len().filter(pl.col("len") == 1)["label"].unique()
        importers = edges_imports.filter(pl.col("dst").is_in(changed.implode()))["src"].unique()
        touched = changed.append(importers).unique()
        redo = pl.col("path").is_in(touched.implode()) | pl.col("name").is_in(moved.implode())
        old = previous.edges.filter(pl.col("kind").is_in(["calls", "extends", "implements"]))
        # Python's edges come from the whole repository's value flow: always made afresh.
        py_paths = indexed.filter(pl.col("language") == "python")["path"].implode()
        kept = old.filter(~redo & ~pl.col("path").is_in(py_paths)).drop("producer")
        redo = redo | (pl.col("language") == "python")

    def symbolic(rows: pl.DataFrame) -> pl.DataFrame:
        """In a fixed order (module and alias are null for these kinds: as for imports)."""
        rows = rows if redo is None else rows.filter(redo)
        return rows.sort(order[:6], nulls_last=True).with_columns(family=_family())

    mark("resolve: imports")
    py_facts, py_defs = python[:2] if isinstance(python, tuple) else (every, defs)
    if python is False:
        py_facts = py_facts.filter(pl.lit(False))
    if isinstance(python, tuple) and len(python) == 3:
        done = python[2]
        py_calls, py_fallback, py_extends, py_bases = (
            done.calls, done.fallback, done.extends, done.unresolved)  # fmt: skip
    else:
        py_calls, py_fallback, py_extends, py_bases = _python(py_facts, py_defs, indexed,
                                                              flow_keep)  # fmt: skip
    mark("resolve: python value flow")
    others = of_kind("extends", "implements").filter(~pl.col("language").is_in(BY_FLOW))
    inherits = _resolve_refs(
        pl.concat(
            [
                symbolic(others.select(_SYMBOLIC)),
                py_bases.select(_SYMBOLIC)
                .cast(others.select(_SYMBOLIC).schema)
                .sort(order[:6], nulls_last=True)
                .with_columns(family=_family()),
            ]
        ),
        targets,
        bindings,
        _TYPES,
        _TYPES,
        memo=memo,
    )
    inherits = pl.concat([inherits, py_extends.select(inherits.columns)])
    bases = (
        inherits
        if kept is None
        else pl.concat([inherits, kept.filter(pl.col("kind") != "calls").select(inherits.columns)])
    )
    bases = bases.filter(pl.col("dst").is_not_null()).select("src", "dst")
    # Calls resolve in slices of whole files (a reference's result depends only on it and the
    # definitions; duplicates share a source, so a file): the working set stays one slice, and
    # with `spill` each slice's edges go to a scratch file instead of accumulating in memory.
    # Go `x := NewT()`: x's type is NewT's declared result (ctxframe._resolve.resolve._typed)
    # the Go signatures are read from the definitions' rows, which change with no target:
    # made again each run
    memo["signatures"] = defs.filter(pl.col("language") == "go").select(
        "id", "signature", fpath="path", fname="label"
    )
    calls: list[pl.LazyFrame] = []
    for i, part in enumerate(_ref_slices(parts, ["call"], CALL_SLICE_ROWS)):
        found = _resolve_refs(
            symbolic(part).with_columns(kind=pl.lit("calls")),
            targets,
            bindings,
            _CALLABLE,
            ["method"],
            bases=bases,
            type_qualified=True,
            memo=memo,
        )
        if spill is None:
            calls.append(found.lazy())
        else:
            found.write_ipc(file := os.path.join(spill, f"calls-{i:05d}.arrow"))
            calls.append(pl.scan_ipc(file))
    if py_fallback.height:
        found = _resolve_refs(
            py_fallback.sort(order[:6], nulls_last=True).with_columns(
                family=_family(), kind=pl.lit("calls")
            ),
            targets,
            bindings,
            _CALLABLE,
            ["method"],
            memo=memo,
        )
        calls.append(found.lazy())
    calls.append(_dedupe_edges(py_calls).lazy())
    del memo, parts  # a shared memo lives on in `shared` alone
    mark("resolve: calls")
    contains = defs.select(
        pl.col("parent").alias("src"),
        pl.col("id").alias("dst"),
        pl.lit("contains").alias("kind"),
        pl.lit("EXTRACTED").alias("confidence"),
        pl.col("label").alias("name"),
        "path",
        pl.col("line_start").alias("line"),
    )
    out = [contains, edges_imports, inherits] + ([kept] if kept is not None else [])
    if handlers is not None and not handlers.is_empty():
        # Route handlers named in code (`app.post("/x", handler)`) resolve like bare calls.
        handled = _resolve_refs(
            handlers.with_columns(family=_family(), kind=pl.lit("handles")),
            targets,
            bindings,
            _CALLABLE,
            _CALLABLE,
        )
        out.append(handled.filter(pl.col("dst").is_not_null()))
    out += [
        _declares(defs, edges_imports),
        _mentions(of_kind("mention"), targets, indexed),
    ]
    mark("resolve: declares, mentions")
    # Unsorted and lazy: the indexer sorts the final edge table once.
    edges = pl.concat(
        [conform_edges(e.lazy().with_columns(producer=pl.lit(PRODUCER))) for e in out]
        + [conform_edges(c.with_columns(producer=pl.lit(PRODUCER))) for c in calls]
    )
    return edges, stubs


# the columns of the definitions the targets and what comes of them read
_TARGET_COLS = ["id", "kind", "label", "qualname", "path", "parent", "language"]


def _derived(defs: pl.DataFrame, shared: list | None) -> dict:
    """A memo for what depends on the definitions alone (their targets, the candidates by
    name): `shared` keeps it across runs, kept while the definitions compare equal (a
    watcher's saves of a function's body or calls leave them so)."""
    if shared is None:
        return {}
    key = defs.select(_TARGET_COLS)
    if shared and shared[0].equals(key):
        return shared[1]
    shared[:] = [key, {}]
    return shared[1]


def _targets(defs: pl.DataFrame) -> pl.DataFrame:
    """The definitions as call and base targets (dst, kind, label, qualname, dpath, ddir,
    family, top, declared)."""
    interfaces = defs.filter(pl.col("kind") == "interface")["id"].implode()
    return defs.with_columns(family=_family(), dir=_dirname("path")).select(
        pl.col("id").alias("dst"),
        "kind",
        "label",
        "qualname",
        pl.col("path").alias("dpath"),
        pl.col("dir").alias("ddir"),
        "family",
        (pl.col("parent") == pl.col("path")).alias("top"),
        # a TypeScript interface's method, a `.d.ts` declaration: a member to list, never a
        # call's target (what runs is an implementation, if the repository holds one)
        (
            (pl.col("family") == "js")
            & (pl.col("parent").is_in(interfaces) | pl.col("path").str.ends_with(".d.ts"))
        ).alias("declared"),
    )


def _python(
    every: pl.LazyFrame, defs: pl.DataFrame, indexed: pl.DataFrame, keep: list | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Python's calls and bases through the value flow of every Python file (see
    ctxframe._resolve.flow_edges.python_edges)."""
    python_calls = (pl.col("kind") == "call") & (pl.col("language") == "python")
    facts = every.filter(pl.col("kind").str.starts_with("v.") | python_calls).collect()
    empty_edges = pl.DataFrame(schema={c: EDGES[c] for c in _EDGE_COLS})
    if facts.is_empty():
        empty_refs = pl.DataFrame(schema={c: pl.String for c in _SYMBOLIC}).with_columns(
            pl.col("line").cast(pl.Int32)
        )
        return empty_edges, empty_refs, empty_edges, empty_refs
    # numpy (about 0.1 s to import): only when the value flow runs
    if keep is None:
        from ctxframe._resolve.flow_edges import python_edges

        return python_edges(facts, defs, indexed)
    from ctxframe._resolve import flow_state

    edges, state = flow_state.solve(facts, defs, indexed)
    keep.append(state)
    return edges


def _dedupe_edges(edges: pl.DataFrame) -> pl.DataFrame:
    """One row per (src, dst, kind, name), at its first line."""
    order = ["src", "kind", "name", "dst", "line"]
    order += [c for c in edges.columns if c not in order]
    return edges.sort(order, nulls_last=True).unique(
        ["src", "dst", "kind", "name"], keep="first", maintain_order=True
    )


def _imports(
    imports: pl.DataFrame,
    indexed: pl.DataFrame,
    gomods: dict[str, str],
    namespaces: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    imports = imports.unique(
        ["path", "module", "name", "alias", "scope"], keep="first", maintain_order=True
    ).with_row_index("ref_id")
    imports = _rooted(imports, indexed)
    sub = _first_match(imports, "sub_candidates", indexed)
    main = _first_match(imports, "candidates", indexed)
    go_dirs = _go_dirs(imports.filter(pl.col("family") == "go")["module"], gomods)
    go_files = indexed.filter(
        (pl.col("language") == "go") & ~pl.col("path").str.ends_with("_test.go")
    ).select(pl.col("path").alias("go_path"), _dirname("path").alias("target_dir"))
    r = (
        imports.join(sub.rename({"target_path": "sub_path"}), on="ref_id", how="left")
        .join(main, on="ref_id", how="left")
        .join(go_dirs, on="module", how="left")
        .with_columns(
            target_dir=pl.when(pl.col("family") == "go").then(pl.col("target_dir")),
            local=pl.coalesce("alias", "name"),
        )
    )
    # C# `using A.B;` and C++ `using namespace a::b;`: every file declaring that namespace.
    ns_edges = pl.DataFrame(schema={"ref_id": pl.UInt32, "ns_path": pl.String})
    if namespaces is not None and namespaces.height:
        ns_edges = (
            r.filter(pl.col("family").is_in(["csharp", "c"]))
            .with_columns(qualname=pl.col("module").str.replace_all("::", ".", literal=True))
            .join(namespaces, on=["family", "qualname"], how="inner")
            .select("ref_id", pl.col("path_right").alias("ns_path"))
            .unique()
        )
    r = r.with_columns(
        resolved=pl.coalesce("sub_path", "target_path", "target_dir").is_not_null()
        | pl.col("ref_id").is_in(ns_edges["ref_id"].implode()),
        dst_file=pl.coalesce("sub_path", "target_path"),
    )
    stub_id = pl.concat_str(pl.lit("module://"), pl.col("module"))
    file_edges = r.filter(pl.col("dst_file").is_not_null()).select(
        pl.col("path").alias("src"), pl.col("dst_file").alias("dst"), "module", "line"
    )
    go_edges = (
        r.filter(pl.col("target_dir").is_not_null())
        .join(go_files, on="target_dir", how="inner")
        .select(pl.col("path").alias("src"), pl.col("go_path").alias("dst"), "module", "line")
    )
    stub_edges = r.filter(~pl.col("resolved")).select(
        pl.col("path").alias("src"), stub_id.alias("dst"), "module", "line"
    )
    ns_file_edges = r.join(ns_edges, on="ref_id", how="inner").select(
        pl.col("path").alias("src"), pl.col("ns_path").alias("dst"), "module", "line"
    )
    edges = (
        pl.concat(
            [file_edges, go_edges, stub_edges, ns_file_edges.filter(pl.col("src") != pl.col("dst"))]
        )
        .sort("src", "dst", "line", "module")
        .unique(["src", "dst"], keep="first", maintain_order=True)
        .select(
            "src",
            "dst",
            pl.lit("imports").alias("kind"),
            pl.lit("EXTRACTED").alias("confidence"),
            pl.col("module").alias("name"),
            pl.col("src").alias("path"),
            "line",
        )
    )
    # What each imported local name stands for, for call resolution.
    is_module = pl.col("name").is_null() | pl.col("sub_path").is_not_null()
    bindings = (
        r.filter(pl.col("local").is_not_null())
        .select(
            "path",
            "local",
            pl.when(is_module)
            .then(pl.coalesce("sub_path", "target_path"))
            .otherwise(pl.col("target_path"))
            .alias("target_path"),
            "target_dir",
            pl.when(is_module).then(None).otherwise(pl.col("name")).alias("remote"),
            (~pl.col("resolved")).alias("external"),
            # `export … from`: not a local name, a name other files' imports pass through
            (pl.col("scope") == "export").fill_null(False).alias("export"),
            "line",
        )
        # One meaning per local name: a repo binding beats an external one, then earliest line.
        .sort("path", "local", "external", "line", "target_path", "target_dir", nulls_last=True)
        .unique(["path", "local", "export"], keep="first", maintain_order=True)
        .drop("line")
    )
    stubs = (
        r.filter(~pl.col("resolved"))
        .select(
            stub_id.alias("id"),
            pl.lit("module").alias("kind"),
            pl.col("module").alias("label"),
            pl.col("module").alias("qualname"),
            "language",
            producer=pl.lit(PRODUCER),
        )
        .sort("id", "language", nulls_last=True)
        .unique("id", keep="first", maintain_order=True)
    )
    # The empty frame only contributes the columns a stub has no value for.
    stubs = pl.concat([pl.DataFrame(schema=NODES), stubs], how="diagonal_relaxed")
    return edges, bindings, stubs.select(NODES.names()).cast(NODES)


def _resolve_refs(
    refs: pl.DataFrame,
    targets: pl.DataFrame,
    bindings: pl.DataFrame,
    bare_kinds: list[str],
    recv_kinds: list[str],
    bases: pl.DataFrame | None = None,
    type_qualified: bool = False,
    memo: dict | None = None,
) -> pl.DataFrame:
    """One edge row per resolved (or unresolved) reference, trying the stages in order:
    `super`, the enclosing type (self/this/receiver), a declared receiver type, a name of the
    same file, an import binding (through re-exports), a type-qualified member, then names.
    `memo` keeps what depends only on the targets across calls over slices of references."""
    if refs.is_empty():  # no stage finds anything: the same (empty) edges, without the stages
        return refs.select(
            "src", pl.lit(None, pl.String).alias("dst"), "kind",
            pl.lit(None, pl.String).alias("confidence"), "name", "path", "line",
        )  # fmt: skip
    memo = {} if memo is None else memo
    refs = _with_ctx(refs.with_row_index("ref_id"), "path")
    if "targets" not in memo:
        memo["targets"] = targets.with_columns(
            ctx=pl.when(pl.col("family") == "go").then(pl.col("ddir")).otherwise(pl.col("dpath"))
        )
    targets = memo["targets"]
    stages = _Stages(refs, targets, bindings, memo)
    if bases is not None:
        stages.add(_super(refs, targets, bases))
    stages.refs = refs = refs.with_columns(
        scope=pl.when(pl.col("receiver") == "super").then(None).otherwise(pl.col("scope"))
    )
    stages.add(_enclosing_type(stages.pending("scope", "name", "ctx"), targets))
    if refs.select(pl.col("scope").str.starts_with("type").any()).item():
        stages.add_all(_typed(stages, bases))
    stages.add(_same_file(stages.pending("receiver", "ctx", "name"), targets, bare_kinds))
    stages.add_all(_through_imports(stages, targets, bindings))
    if type_qualified:
        stages.add_all(
            _type_qualified(
                stages.pending("receiver", "name", "family", "language", "path"), targets, _OUT
            )
        )
    stages.add(_by_name(stages.pending("receiver", "name", "family"), targets, bare_kinds,
                        recv_kinds, memo))  # fmt: skip
    edges = (
        refs.select("ref_id", "src", "kind", "name", "path", "line")
        .join(stages.resolved(), on="ref_id", how="left")
        .select("src", "dst", "kind", "confidence", "name", "path", "line")
    )
    order = ["src", "kind", "name", "dst", "line"]
    order += [c for c in edges.columns if c not in order]
    return edges.sort(order, nulls_last=True).unique(
        ["src", "dst", "kind", "name"], keep="first", maintain_order=True
    )


_OUT = ["ref_id", "dst", "confidence"]


class _Stages:
    """The references no stage has resolved yet, and what the stages found."""

    def __init__(self, refs, targets, bindings, memo):
        self.refs, self.targets, self.bindings, self.memo = refs, targets, bindings, memo
        self.found: list[pl.DataFrame] = []

    def add(self, rows: pl.DataFrame) -> None:
        self.found.append(rows.select(_OUT))

    def add_all(self, parts: list[pl.DataFrame]) -> None:
        for p in parts:
            self.add(p)

    def pending(self, *cols: str) -> pl.DataFrame:
        """The references no stage has resolved yet, with only the columns a stage reads."""
        rows = self.refs.select("ref_id", *cols)
        if not self.found:
            return rows
        return rows.join(pl.concat([f.select("ref_id") for f in self.found]), on="ref_id",
                         how="anti")  # fmt: skip

    def resolved(self) -> pl.DataFrame:
        schema = {"ref_id": pl.UInt32, "dst": pl.String, "confidence": pl.String}
        return pl.concat([pl.DataFrame(schema=schema), *self.found], how="vertical_relaxed")


def _confidence(value: str) -> pl.Expr:
    return pl.lit(value, pl.String).alias("confidence")


def _super(refs: pl.DataFrame, targets: pl.DataFrame, bases: pl.DataFrame) -> pl.DataFrame:
    """`super.m()`: a member of a resolved base class of the enclosing class."""
    sup = (
        refs.select("ref_id", "receiver", "path", "scope", "name")
        .filter(pl.col("receiver") == "super")
        .with_columns(cls=pl.concat_str("path", pl.lit("::"), "scope"))
        .join(bases.rename({"src": "cls", "dst": "base"}), on="cls", how="inner")
        .with_columns(
            qualname=pl.concat_str(pl.col("base").str.extract(r"::(.*)$", 1), pl.lit("."), "name")
        )
        .join(
            targets.select(pl.col("dpath").alias("bpath"), "qualname", "dst"),
            on="qualname",
            how="inner",
        )
        .filter(pl.col("base").str.starts_with(pl.col("bpath") + "::"))
    )
    return sup.with_columns(_confidence("EXTRACTED"))


def _enclosing_type(rows: pl.DataFrame, targets: pl.DataFrame) -> pl.DataFrame:
    """self / this / Go receiver: a member of the enclosing type in the same file (package)."""
    scoped = (
        rows.filter(pl.col("scope").is_not_null() & ~pl.col("scope").str.starts_with("type"))
        .with_columns(qualname=pl.concat_str("scope", pl.lit("."), "name"))
        .join(targets.select("ctx", "qualname", "dst"), on=["ctx", "qualname"], how="inner")
    )
    return scoped.with_columns(_confidence("EXTRACTED"))


def _bare_callable() -> pl.Expr:
    """A bare call `f()` in JavaScript/TypeScript never calls a method (no implicit `this`)."""
    return ~((pl.col("family") == "js") & (pl.col("kind") == "method"))


def _same_file(rows: pl.DataFrame, targets: pl.DataFrame, kinds: list[str]) -> pl.DataFrame:
    """A bare name defined in the same file (package, for Go): unique match only."""
    local = (
        rows.filter(pl.col("receiver").is_null())
        .join(
            targets.filter(pl.col("kind").is_in(kinds) & _bare_callable()).select(
                "ctx", pl.col("label").alias("name"), "dst", "top"
            ),
            on=["ctx", "name"],
            how="inner",
        )
        .sort("ref_id", pl.col("top").not_(), "dst")
        .unique("ref_id", keep="first", maintain_order=True)
    )
    return local.with_columns(_confidence("EXTRACTED"))


_REEXPORT_HOPS = 6


def _through_imports(
    stages: _Stages, targets: pl.DataFrame, bindings: pl.DataFrame
) -> list[pl.DataFrame]:
    """Through an import binding: `name()` from `from m import name`, `mod.name()`, `T.m()`
    for an imported type T (T's member m in T's file), following `export … from` re-exports;
    a call through a binding of a module outside the repository stays unresolved."""
    rest = stages.pending("receiver", "name", "path").with_columns(
        local=pl.coalesce("receiver", "name"), bare=pl.col("receiver").is_null()
    )
    own = bindings.filter(~pl.col("export"))
    bound = rest.join(own, on=["path", "local"], how="inner")
    external = bound.filter(pl.col("external")).select("ref_id")
    want = (
        pl.when(pl.col("bare") & (pl.col("remote") != "default"))
        .then(pl.col("remote"))
        .otherwise(pl.col("name"))
    )
    top = targets.filter(pl.col("top")).select("dpath", "ddir", "label", "dst")
    module_calls = bound.filter(pl.col("bare") | pl.col("remote").is_null()).with_columns(
        label=want
    )
    imported = _in_target(module_calls, top)
    missing = module_calls.join(imported.select("ref_id"), on="ref_id", how="anti")
    imported = pl.concat([imported, _reexported(missing, bindings, top)])
    members = _imported_members(bound.filter(~pl.col("bare")), targets)
    imported = pl.concat([imported, members.join(imported, on="ref_id", how="anti")])
    imported = imported.sort("ref_id", "dst").unique("ref_id", keep="first", maintain_order=True)
    unresolved = external.join(imported, on="ref_id", how="anti").with_columns(
        dst=pl.lit(None, pl.String), confidence=pl.lit(None, pl.String)
    )
    return [imported.with_columns(_confidence("EXTRACTED")), unresolved]


def _in_target(rows: pl.DataFrame, top: pl.DataFrame) -> pl.DataFrame:
    """(ref_id, dst): `label` defined at the top of the bound file (or Go directory)."""
    via_file = rows.join(
        top, left_on=["target_path", "label"], right_on=["dpath", "label"], how="inner"
    )
    via_dir = rows.join(top, left_on=["target_dir", "label"], right_on=["ddir", "label"],
                        how="inner")  # fmt: skip
    return pl.concat([via_file.select("ref_id", "dst"), via_dir.select("ref_id", "dst")])


def _reexported(rows: pl.DataFrame, bindings: pl.DataFrame, top: pl.DataFrame) -> pl.DataFrame:
    """A name the bound file does not define but re-exports (`export { a as b } from`,
    `export * from`): followed to the file that defines it."""
    out = []
    exports = bindings.filter(pl.col("export") & pl.col("target_path").is_not_null()).select(
        xpath="path", xlocal="local", xtarget="target_path", xremote="remote"
    )
    cur = rows.select("ref_id", "target_path", "label").filter(pl.col("target_path").is_not_null())
    for _ in range(_REEXPORT_HOPS):
        if cur.is_empty() or exports.is_empty():
            break
        named = cur.join(exports, left_on=["target_path", "label"], right_on=["xpath", "xlocal"])
        star = cur.join(exports.filter(pl.col("xlocal") == "*"), left_on="target_path",
                        right_on="xpath")  # fmt: skip
        nxt = pl.concat(
            [
                named.select("ref_id", target_path="xtarget", label="xremote"),
                star.select("ref_id", target_path="xtarget", label="label"),
            ]
        ).unique()
        hit = nxt.join(top, left_on=["target_path", "label"], right_on=["dpath", "label"])
        out.append(hit.select("ref_id", "dst"))
        cur = nxt.join(hit.select("ref_id"), on="ref_id", how="anti")
    if not out:
        return pl.DataFrame(schema={"ref_id": pl.UInt32, "dst": pl.String})
    return pl.concat(out)


def _imported_members(bound: pl.DataFrame, targets: pl.DataFrame) -> pl.DataFrame:
    """`T.m()` / `T::m()` where T is an imported type (`import {T}`, `use a::T`, Java
    `import a.T`): the member `T.m` defined in T's file."""
    if bound.is_empty():
        return pl.DataFrame(schema={"ref_id": pl.UInt32, "dst": pl.String})
    owner = pl.coalesce("remote", "receiver")
    rows = bound.filter(pl.col("target_path").is_not_null()).with_columns(
        qualname=owner + "." + pl.col("name")
    )
    members = targets.filter(pl.col("kind").is_in(["method", "function"])).select(
        "dpath", "dst", qualname=pl.col("qualname").str.extract(r"([^.]+\.[^.]+)$", 1)
    )
    return rows.join(
        members, left_on=["target_path", "qualname"], right_on=["dpath", "qualname"]
    ).select("ref_id", "dst")


def _by_name(
    rest: pl.DataFrame, targets: pl.DataFrame, bare_kinds, recv_kinds, memo: dict
) -> pl.DataFrame:
    """By name within the language family: one candidate INFERRED, a few AMBIGUOUS; a
    language builtin called bare never matches."""
    builtin = pl.lit(False)
    for fam, names in _BUILTINS.items():
        builtin = builtin | ((pl.col("family") == fam) & pl.col("name").is_in(list(names)))
    rest = rest.filter(
        ~(pl.col("receiver").is_null() & builtin) & (pl.col("receiver") != "super").fill_null(True)
    )

    def by_name(rows: pl.DataFrame, kinds: list[str], bare: bool = False) -> pl.DataFrame:
        key = ("by_name", bare, *kinds)
        if key in memo:
            return rows.join(memo[key], on=["family", "name"], how="inner")
        pool = targets.filter(_bare_callable()) if bare else targets
        if rows.height < _FEW_NAMES:
            # a name's candidates are counted among its own definitions: those of the few
            # names asked alone give the same rows as all of them
            pool = pool.filter(pl.col("label").is_in(rows["name"].unique().implode()))
            return rows.join(_name_candidates(pool, kinds), on=["family", "name"], how="inner")
        memo[key] = _name_candidates(pool, kinds)
        return rows.join(memo[key], on=["family", "name"], how="inner")

    cands = pl.concat(
        [
            by_name(rest.filter(pl.col("receiver").is_null()), bare_kinds, bare=True),
            by_name(rest.filter(pl.col("receiver").is_not_null()), recv_kinds),
        ]
    )
    return cands.with_columns(
        confidence=pl.when(pl.col("n") == 1).then(pl.lit("INFERRED")).otherwise(pl.lit("AMBIGUOUS"))
    )


# fewer references than this are matched by name against their names' definitions alone
_FEW_NAMES = 2_000


def _name_candidates(targets: pl.DataFrame, kinds: list[str]) -> pl.DataFrame:
    """(family, name, dst, n): definitions of these kinds by label, names with more than
    AMBIGUOUS_CAP definitions left out (counted first, so they never join)."""
    cand = targets.filter(pl.col("kind").is_in(kinds) & ~pl.col("declared")).select(
        "family", pl.col("label").alias("name"), "dst", "kind"
    )
    # Java/C#/C++…: `new Item()` names the class, not also its constructor `Item.Item`.
    shadowed = pl.col("family").is_in(list(_TYPE_QUALIFIED)) & (
        (pl.col("kind") == "method") & pl.col("kind").is_in(_TYPES).any().over("family", "name")
    )
    cand = cand.filter(~shadowed).drop("kind")
    return cand.with_columns(n=pl.len().over("family", "name")).filter(pl.col("n") <= AMBIGUOUS_CAP)


def _typed(stages: _Stages, bases: pl.DataFrame | None) -> list[pl.DataFrame]:
    """`x.m()` where the code declares x's type T (`var x T`, `T x = new T()`, `x: T`, a Go
    `x := NewT()`, see `_Builder._typed`): T resolved like a base class (same file, imports,
    names), then its member m — or its bases' — in T's file (Go: package). EXTRACTED when T is
    a checked type found through bindings, INFERRED for a hint (a TypeScript annotation) or a
    T found by its name alone, AMBIGUOUS for several; a checked type outside the repository
    (`String`, `List`) resolves nothing, and the call is not matched by name."""
    rows = stages.pending("src", "path", "language", "family", "scope", "name", "line")
    rows = rows.filter(pl.col("scope").str.starts_with("type"))
    if rows.is_empty():
        return []
    rows = rows.with_columns(
        how=pl.col("scope").str.extract(r"^(type|typehint|typecall):", 1),
        tname=pl.col("scope").str.extract(r"^[a-z]+:(.*)$", 1),
    )
    types = pl.concat(
        [
            _declared_types(stages, rows.filter(pl.col("how") != "typecall")),
            _result_types(stages, rows.filter(pl.col("how") == "typecall")),
        ]
    ).join(rows.select("ref_id", "name"), on="ref_id")
    # a TypeScript interface's or `.d.ts` member is not what runs: the implementation is,
    # found by name below
    found = _members(types, stages.targets.filter(~pl.col("declared")), bases)
    hint = pl.col("how") == "typehint"
    out = found.join(rows.select("ref_id", "how"), on="ref_id").with_columns(
        confidence=pl.when(hint & (pl.col("tconf") == "EXTRACTED"))
        .then(pl.lit("INFERRED"))
        .otherwise(pl.col("tconf"))
    )
    # a checked type that resolves nowhere (a library's): unresolved, never matched by name
    blocked = rows.filter(~hint).join(out.select("ref_id"), on="ref_id", how="anti")
    blocked = blocked.select(
        "ref_id", dst=pl.lit(None, pl.String), confidence=pl.lit(None, pl.String)
    )
    return [out, blocked]


def _named_refs(rows: pl.DataFrame, kind: str) -> pl.DataFrame:
    """References of `kind` to the dotted name `tname` of each row (`src` = its `ref_id`)."""
    return rows.select(
        src=pl.col("ref_id").cast(pl.String),
        path="path",
        language="language",
        kind=pl.lit(kind),
        name=pl.col("tname").str.extract(r"([^.]+)$", 1),
        receiver=pl.col("tname").str.extract(r"^(.*)\.[^.]+$", 1),
        scope=pl.lit(None, pl.String),
        line="line",
        family="family",
    )


def _declared_types(stages: _Stages, rows: pl.DataFrame) -> pl.DataFrame:
    """(ref_id, tdst, tconf): each declared type name resolved like a base class."""
    if rows.is_empty():
        return pl.DataFrame(schema={"ref_id": pl.UInt32, "tdst": pl.String, "tconf": pl.String})
    t = _named_refs(rows, "extends")
    got = _resolve_refs(t, stages.targets.drop("ctx"), stages.bindings, _TYPES, _TYPES)
    return got.filter(pl.col("dst").is_not_null()).select(
        ref_id=pl.col("src").cast(pl.UInt32), tdst="dst", tconf="confidence"
    )


_RESULT_TYPE = r"^[^)]*\)\s*\(?\s*\*?\s*([A-Za-z_][\w.]*)"


def _result_types(stages: _Stages, rows: pl.DataFrame) -> pl.DataFrame:
    """Go `x := NewT(…)` / `x := pkg.NewT(…)`: the callee resolved as a call, T read from its
    declared result (`func NewT() *T`, `(T, error)`), looked up in the callee's package."""
    schema = {"ref_id": pl.UInt32, "tdst": pl.String, "tconf": pl.String}
    if rows.is_empty():
        return pl.DataFrame(schema=schema)
    calls = _named_refs(rows, "calls")
    got = _resolve_refs(calls, stages.targets.drop("ctx"), stages.bindings, _CALLABLE,
                        ["method"]).filter(pl.col("dst").is_not_null())  # fmt: skip
    defs = stages.memo.get("signatures")
    if defs is None or got.is_empty():
        return pl.DataFrame(schema=schema)
    fn = got.join(defs, left_on="dst", right_on="id")
    after = pl.col("signature").str.slice(  # what follows `Name(`
        pl.col("signature").str.find(pl.col("fname") + "(", literal=True)
    )
    fn = fn.with_columns(
        tname=after.str.extract(_RESULT_TYPE, 1).str.extract(r"([^.]+)$", 1),
        fdir=_dirname("fpath"),
    )
    types = stages.targets.filter(pl.col("kind").is_in(_TYPES)).select(
        "ddir", tname="label", tdst="dst"
    )
    hit = fn.join(types, left_on=["fdir", "tname"], right_on=["ddir", "tname"])
    return hit.select(ref_id=pl.col("src").cast(pl.UInt32), tdst="tdst", tconf="confidence")


_BASE_HOPS = 4


def _members(types: pl.DataFrame, targets: pl.DataFrame, bases) -> pl.DataFrame:
    """(ref_id, dst, tconf): the method `name` of each resolved type, else of its bases."""
    if types.is_empty():
        return pl.DataFrame(schema={"ref_id": pl.UInt32, "dst": pl.String, "tconf": pl.String})
    info = targets.select(tdst="dst", tqual="qualname", tpath="dpath", tdir="ddir",
                          tfam="family")  # fmt: skip
    methods = targets.filter(pl.col("kind").is_in(["method", "function"])).select(
        "dst", "qualname", mpath="dpath", mdir="ddir"
    )
    out, cur, seen = [], types, types.select("ref_id", "tdst")
    for _ in range(_BASE_HOPS):
        t = cur.join(info, on="tdst").with_columns(qualname=pl.col("tqual") + "." + pl.col("name"))
        hit = t.join(methods, on="qualname").filter(
            (pl.col("mpath") == pl.col("tpath"))
            | ((pl.col("tfam") == "go") & (pl.col("mdir") == pl.col("tdir")))
        )
        out.append(hit.select("ref_id", "dst", "tconf"))
        if bases is None:
            break
        cur = (
            t.join(hit.select("ref_id"), on="ref_id", how="anti")
            .join(bases, left_on="tdst", right_on="src")
            .select("ref_id", "name", "tconf", tdst="dst")
            .join(seen, on=["ref_id", "tdst"], how="anti")
        )
        if cur.is_empty():
            break
        seen = pl.concat([seen, cur.select("ref_id", "tdst")])
    return pl.concat(out).unique(["ref_id", "dst"])


def _type_qualified(rest: pl.DataFrame, targets: pl.DataFrame, out: list[str]) -> list:
    """C2 (families in _TYPE_QUALIFIED): `Type::m()` / `Type.m()` matches a member `Type.m` by
    its qualified name (EXTRACTED in the same file, else INFERRED when unique, AMBIGUOUS for a
    few). A receiver that names a type not in the repo (`HashMap::new`, `Math.max`), and any
    receiver call in C (no methods there), stays unresolved instead of matching by name."""
    tq = rest.filter(
        pl.col("receiver").is_not_null() & pl.col("family").is_in(list(_TYPE_QUALIFIED))
    )
    if tq.height == 0:
        return []
    recv = pl.col("receiver").str.replace_all("::", ".", literal=True)
    tq = tq.with_columns(
        tqual=pl.concat_str(recv.str.extract(r"([^.]+)$", 1), pl.lit("."), "name"),
        typelike=pl.col("receiver").str.contains("::", literal=True)
        | pl.col("receiver").str.contains(r"^[A-Z][A-Za-z0-9_]*$")
        | (pl.col("language") == "c"),
    )
    cand = targets.filter(pl.col("kind").is_in(["method", "function"])).select(
        "family", "dpath", "dst", tqual=pl.col("qualname").str.extract(r"([^.]+\.[^.]+)$", 1)
    )
    cand = cand.with_columns(n=pl.len().over("family", "tqual")).filter(
        pl.col("n") <= AMBIGUOUS_CAP
    )
    hit = tq.join(cand, on=["family", "tqual"], how="inner").with_columns(
        confidence=pl.when(pl.col("dpath") == pl.col("path"))
        .then(pl.lit("EXTRACTED"))
        .when(pl.col("n") == 1)
        .then(pl.lit("INFERRED"))
        .otherwise(pl.lit("AMBIGUOUS"))
    )
    # A same-file match wins over the others.
    hit = hit.filter(
        (pl.col("confidence") == "EXTRACTED").any().over("ref_id").not_()
        | (pl.col("confidence") == "EXTRACTED")
    )
    unresolved = (
        tq.filter(pl.col("typelike"))
        .join(hit.select("ref_id"), on="ref_id", how="anti")
        .with_columns(dst=pl.lit(None, pl.String), confidence=pl.lit(None, pl.String))
    )
    return [hit.select(out), unresolved.select(out)]


_EDGE_COLS = ["src", "dst", "kind", "confidence", "name", "path", "line"]


def _declares(defs: pl.DataFrame, imports: pl.DataFrame) -> pl.DataFrame:
    """`declares` edges: a C/C++ prototype or in-class method declaration → its definition(s)
    of the same qualified name. EXTRACTED when in the same file or in a file that includes the
    declaring one; otherwise INFERRED when unique, AMBIGUOUS for a few."""
    decl = defs.filter(pl.col("kind") == "declaration").select(
        pl.col("id").alias("src"),
        "qualname",
        pl.col("path").alias("decl_path"),
        pl.col("label").alias("name"),
        pl.col("line_start").alias("line"),
        family=_family(),
    )
    if decl.height == 0:
        return pl.DataFrame(schema={c: EDGES[c] for c in _EDGE_COLS})
    impl = defs.filter(pl.col("kind").is_in(["function", "method"])).select(
        pl.col("id").alias("dst"), "qualname", pl.col("path").alias("def_path"), family=_family()
    )
    impl = impl.join(decl.select("family", "qualname").unique(), on=["family", "qualname"])
    impl = impl.with_columns(n=pl.len().over("family", "qualname"))
    same = decl.join(
        impl,
        left_on=["family", "qualname", "decl_path"],
        right_on=["family", "qualname", "def_path"],
    ).with_columns(def_path=pl.col("decl_path"))
    rest = decl.join(same.select("src"), on="src", how="anti").join(
        impl.filter(pl.col("n") <= AMBIGUOUS_CAP), on=["family", "qualname"]
    )
    includes = imports.filter(pl.col("dst").is_not_null()).select(
        pl.col("src").alias("def_path"), pl.col("dst").alias("decl_path"), linked=pl.lit(True)
    )
    rest = rest.join(includes.unique(), on=["def_path", "decl_path"], how="left").with_columns(
        linked=pl.col("linked").fill_null(False)
    )
    rest = rest.filter(pl.col("linked").any().over("src").not_() | pl.col("linked"))
    rest = rest.with_columns(k=pl.len().over("src")).with_columns(
        confidence=pl.when(pl.col("linked"))
        .then(pl.lit("EXTRACTED"))
        .when(pl.col("k") == 1)
        .then(pl.lit("INFERRED"))
        .otherwise(pl.lit("AMBIGUOUS"))
    )
    same = same.with_columns(confidence=pl.lit("EXTRACTED"))
    return pl.concat(
        [
            x.select(
                "src",
                "dst",
                kind=pl.lit("declares"),
                confidence="confidence",
                name="name",
                path="decl_path",
                line="line",
            )
            for x in (same, rest)
        ]
    )


def _mentions(refs: pl.DataFrame, targets: pl.DataFrame, indexed: pl.DataFrame) -> pl.DataFrame:
    """`mentions` edges from document sections to what their backticks and links name: a file
    (by path) or a symbol (by qualified name or name; types beat members of the same name).
    INFERRED when one candidate, AMBIGUOUS for a few; a name matching nothing makes no edge."""
    m = refs.filter(pl.col("kind") == "mention")
    if m.height == 0:
        return pl.DataFrame(schema={c: EDGES[c] for c in _EDGE_COLS})
    m = m.with_row_index("ref_id")
    by_path = m.filter(pl.col("candidates").is_not_null())
    files = by_path.join(_first_match(by_path, "candidates", indexed), on="ref_id").select(
        "src",
        pl.col("target_path").alias("dst"),
        "name",
        "path",
        "line",
        confidence=pl.lit("INFERRED"),
    )
    key = (
        pl.col("name")
        .str.replace(r"\(.*\)$", "")
        .str.replace_all("::", ".", literal=True)
        .str.replace_all("#", ".", literal=True)
    )
    sym = m.filter(pl.col("candidates").is_null()).with_columns(key=key)
    sym = sym.with_columns(tail=pl.col("key").str.extract(r"([^.]+(?:\.[^.]+)?)$", 1))
    # the code's own definitions before the tests' (a test class named after what it tests),
    # then types before members of the same name
    in_tests = is_test_path_expr(pl.col("dst").str.split("::").list.first())
    tier = 2 * in_tests.cast(pl.Int8) + pl.when(pl.col("kind").is_in(_TYPES)).then(0).otherwise(1)
    cand = targets.filter(pl.col("kind").is_in(_MENTIONABLE)).select(
        "dst",
        "qualname",
        "label",
        tier=tier,
        tail=pl.when(pl.col("qualname").str.contains(".", literal=True))
        .then(pl.col("qualname").str.extract(r"([^.]+\.[^.]+)$", 1))
        .otherwise(pl.col("qualname")),
    )
    dotted = sym.filter(pl.col("key").str.contains(".", literal=True)).join(cand, on="tail")
    # `Cls.meth`, or the module's dotted path before it (`pkg.mod.Cls.meth`, Sphinx style)
    module = pl.col("dst").str.split("::").list.first().str.replace(r"(?:/__init__)?\.\w+$", "")
    full = pl.lit(".") + module.str.replace_all("/", ".", literal=True) + "." + pl.col("qualname")
    dotted = dotted.filter(full.str.ends_with(pl.lit(".") + pl.col("key")))
    plain = (  # a bare word names the code, not a test's helper that happens to share it
        sym.filter(~pl.col("key").str.contains(".", literal=True))
        .drop("tail")
        .join(cand.drop("tail").filter(pl.col("tier") < 2), left_on="key", right_on="label")
    )
    hits = pl.concat([dotted.select(plain.columns), plain])
    hits = hits.filter(pl.col("tier") == pl.col("tier").min().over("ref_id"))
    hits = hits.with_columns(n=pl.len().over("ref_id")).filter(pl.col("n") <= AMBIGUOUS_CAP)
    syms = hits.select(
        "src",
        "dst",
        "name",
        "path",
        "line",
        confidence=pl.when(pl.col("n") == 1)
        .then(pl.lit("INFERRED"))
        .otherwise(pl.lit("AMBIGUOUS")),
    )
    return (
        pl.concat([files, syms])
        .sort("src", "dst", "line", "name")  # ties: by name, never by the rows' order
        .unique(["src", "dst"], keep="first", maintain_order=True)
        .select(
            "src",
            "dst",
            kind=pl.lit("mentions"),
            confidence="confidence",
            name="name",
            path="path",
            line="line",
        )
    )

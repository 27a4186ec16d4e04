"""The re-index fast path: a few files changed, so only their rows and their readers' change.

When every re-parsed file keeps its imports and bases and reads no boundary, no other file's
bindings can change: the files' own nodes, edges and references are replaced and every other
row is carried over. If they also added, removed or renamed definitions, the references
elsewhere that name those definitions (and the document sections mentioning them) are
resolved again and their edges replaced. The result equals a full rebuild; anything this
cannot vouch for returns None and the indexer resolves everything again.

The stored nodes are sorted by id and the edges by source, and a file's own rows are exactly
those keyed `path` or `path::…`: they are found and replaced by binary search, not a sort.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from ctxframe._core import facts as F
from ctxframe._core.frames import splice_sorted
from ctxframe._core.schema import PRODUCER, TOKENS, VOCAB, conform_edges
from ctxframe._ingest.boundaries.code import reads_boundaries, uses_edges
from ctxframe._rank.fields import BODY, MAX_TF, TokenTable, node_counts, sorted_tokens
from ctxframe._resolve.resolve import resolve
from ctxframe._store import tokenparts as _tokenparts
from ctxframe._store.coverage import COUNTS, counts

# Edge kinds made only from a file's own definitions and references (their `path` is the file).
_OWN_EDGES = ["contains", "imports", "calls", "extends", "implements", "mentions", "uses"]
# References other files' resolution can read through: imports (bindings, re-exports) and bases.
_SHAPE_REFS = ["import", "extends", "implements"]
_KEY = ["id", "kind", "label", "qualname", "path", "parent"]
_DECLARING = {"c", "cpp"}  # `declares` edges link prototypes across files
_EDGE_ORDER = ["src", "kind", "line", "dst", "name"]
_WORD = re.compile(r"\w+")
_ALL = frozenset({"nodes", "edges", "refs"})
_COUNTS = {"node_id": pl.String, "field": pl.UInt8, "token": pl.String, "tf": pl.UInt32}


@dataclass
class Delta:
    """The carried-over tables with the changed files' rows replaced."""

    nodes: pl.DataFrame
    edges: pl.DataFrame
    refs: pl.DataFrame | None  # the changed files' references; None: unchanged
    counts_change: pl.DataFrame  # coverage counts (ctxframe._store.coverage) of new rows minus old
    same: frozenset[str] = frozenset()  # tables whose rows did not change: kept as stored
    # tables whose rows changed only among the changed files' own, the rest kept in place
    spliced: frozenset[str] = frozenset()
    # the solved value flow of the new rows (ctxframe._resolve.flow_state), when this run
    # solved it; None when no Python fact changed (the stored one stands)
    flow: object | None = None
    flow_mode: str | None = None  # "incremental" or "full": how the value flow was solved


def _same(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    if a.height != b.height:
        return False
    return a.sort(a.columns, nulls_last=True).equals(b.sort(b.columns, nulls_last=True))


def _ranges(keys: pl.Series, paths: list[str]) -> list[tuple[int, int]]:
    """Row ranges of sorted `keys` equal to a path or starting with `path::`, in order (the
    non-empty ones of `_spans`)."""
    return [s for s in _spans(keys, paths) if s[1] > s[0]]


def _without(frame: pl.DataFrame, spans: list[tuple[int, int]]) -> pl.DataFrame:
    return pl.concat(_pieces(frame, spans), rechunk=False)


def _rows(frame: pl.DataFrame, spans: list[tuple[int, int]]) -> pl.DataFrame:
    return pl.concat([frame.slice(lo, hi - lo) for lo, hi in spans] or [frame.clear()])


def _candidates(nodes: pl.DataFrame, refs: pl.DataFrame) -> pl.DataFrame:
    """The definitions the references could resolve to: every resolution step matches a
    target's label to a name or a word of a receiver, scope, module or alias (namespaces are
    kept whole for `using` imports)."""
    words: set[str] = set(refs["name"].drop_nulls().to_list())
    for col in ("name", "receiver", "scope", "module", "alias"):
        for text in refs[col].drop_nulls().to_list():
            words.update(_WORD.findall(text))
    return nodes.filter(
        ~pl.col("kind").is_in(["file", "module"])
        & pl.col("transport").is_null()
        & (pl.col("label").is_in(pl.Series(sorted(words), dtype=pl.String).implode())
           | (pl.col("kind") == "namespace"))
    )  # fmt: skip


_PY_FACTS = pl.col("language") == "python"


def _python_inputs(refs0, refs, old_refs, in_changed, rest_nodes, defs, python_changed, moved,
                   old_nodes, near, old_own):  # fmt: skip
    """How the changed files' Python edges are made: None (no Python file changed), "keep"
    (a Python file changed but no fact did — same rows, same lines — and no definition it
    added or removed is a name any fact reads: every Python edge stands), a line map (the
    same, but for lines an edit moved: every Python edge stands, the changed files' at their
    new lines; see `_line_map`), else (every Python file's facts, every definition): any
    Python edge anywhere may change."""
    if not python_changed:
        return None
    py = _PY_FACTS & (pl.col("kind").str.starts_with("v.") | (pl.col("kind") == "call"))
    if _unread(near, moved):
        old_facts, new_facts = old_refs.filter(py), refs.filter(py)
        same = _same(old_facts, new_facts) or _shapes_only(old_facts, new_facts, old_own, refs0)
        if same and _same(_class_lines(old_nodes), _class_lines(defs)):
            return "keep"
        moved_lines = _line_map(old_facts, new_facts, old_nodes, defs)
        if moved_lines is not None:
            return moved_lines
    facts = pl.concat([refs0.filter(~in_changed & py), refs.lazy().filter(py)])
    code = ~pl.col("kind").is_in(["file", "module"]) & pl.col("transport").is_null()
    every = pl.concat([rest_nodes.filter(code).select(defs.columns), defs])
    return facts, every


_SHAPE_ENTRY = f"(?:{F.ARGS})?{F.SHAPE}{F.ARGSEP}[^{F.ARGS}]*$"  # a call row's last entry


def _shapes_only(old: pl.DataFrame, new: pl.DataFrame, old_own, refs0: pl.LazyFrame) -> bool:
    """The facts differ only in what some calls pass (the `~` entry and the call node's mark:
    a literal keyword added, a first literal argument), and none of those calls reaches a
    function whose returns depend on it (python_guards): the value flow would find the same
    values."""
    if old.height != new.height:
        return False
    bare = pl.col("candidates").str.replace(_SHAPE_ENTRY, "")
    text = [c for c, t in old.schema.items() if t == pl.String]
    unmarked = [pl.col(c).str.replace_all(F.SHAPE_MARK, "${1})") for c in text]
    shapeless = bare.replace("", None).alias("candidates")

    def plain(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.with_columns(unmarked).with_columns(shapeless)

    if not _same(plain(old), plain(new)):
        return False
    cols = old.columns
    changed = pl.concat([new.join(old, on=cols, how="anti", nulls_equal=True),
                         old.join(new, on=cols, how="anti", nulls_equal=True)])  # fmt: skip
    sites = changed.select("src", "name").unique()
    flow_made = (pl.col("kind") == "calls") & (pl.col("confidence") != "AMBIGUOUS")  # not names
    called = old_own.filter(flow_made).join(sites, on=["src", "name"])["dst"]
    called = called.drop_nulls().unique()
    if called.is_empty():
        return True
    guarded = pl.col("name").str.contains(F.GUARDED_RETURN)
    split = refs0.filter((pl.col("kind") == F.FLOW) & guarded)
    split = split.select(f=pl.col("name").str.replace(F.GUARDED_RETURN, "")).unique().collect()
    return not split["f"].is_in(called.implode()).any()


def _near(refs0: pl.LazyFrame, moved: list[str]) -> pl.DataFrame:
    """Every reference whose name, receiver or module contains one of the `moved` names, or
    whose argument name is one: one pass with a substring test over the stored references,
    the superset both `_unread` and `_moved_readers` look in."""
    return refs0.filter(
        pl.col("name").str.contains_any(moved)
        | pl.col("receiver").str.contains_any(moved)
        | pl.col("module").str.contains_any(moved)
        | pl.col("arg_name").is_in(pl.Series(moved, dtype=pl.String).implode())
    ).collect()


def _unread(near: pl.DataFrame | None, labels: list[str]) -> bool:
    """No Python fact reads any of these names (`scope|name`, `….name`); `near` holds every
    reference that could (`_near`)."""
    if not labels or near is None:
        return True
    probes = [f"|{n}" for n in labels] + [f"{F.STEP}.{n}" for n in labels]
    col = pl.col("name").str.contains_any(probes) | pl.col("receiver").str.contains_any(probes)
    col = col | pl.col("module").str.contains_any(probes)
    return near.filter(_PY_FACTS & col.fill_null(False)).is_empty()


def _line_map(old_facts, new_facts, old_nodes, defs) -> pl.DataFrame | None:
    """``path, old, new``: where each line of a changed file holding a Python fact or a class
    went, when the files' facts and classes are the same but for their lines and every line
    kept its place among the others (a comment or a docstring line added above them); None
    otherwise. The value flow reads no line, so it would find the same values: only the
    changed files' Python edges move, to the new lines of their call sites and classes."""
    if old_facts.height != new_facts.height:
        return None
    rest = [c for c in old_facts.columns if c != "line"]
    a = old_facts.sort([*rest, "line"], nulls_last=True)
    b = new_facts.sort([*rest, "line"], nulls_last=True)
    if not a.select(rest).equals(b.select(rest)):
        return None
    ca, cb = _class_lines(old_nodes), _class_lines(defs)
    classes = ca.join(cb, on="id", how="full", coalesce=True)
    if classes.height != ca.height or classes.height != cb.height:
        return None
    path = pl.col("id").str.split("::").list.first().alias("path")
    pairs = pl.concat(
        [
            pl.DataFrame({"path": a["path"], "old": a["line"], "new": b["line"]}),
            classes.select(path, old="line_start", new="line_start_right"),
        ]
    ).unique()
    if pairs["old"].is_null().any() or pairs["new"].is_null().any():
        return None
    pairs = pairs.sort("path", "old", "new")
    moves = pairs.select(
        same_file=pl.col("path") == pl.col("path").shift(),
        up=(pl.col("old") > pl.col("old").shift()) & (pl.col("new") > pl.col("new").shift()),
    ).filter("same_file")
    return pairs if moves["up"].all() else None  # one place per line, in the same order


def _moved_lines(edges: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame | None:
    """The edges at the new places of their lines (`_line_map`); None when an edge sits on a
    line the map does not know."""
    moved = edges.join(
        lines, left_on=["path", "line"], right_on=["path", "old"], how="left"
    ).with_columns(line=pl.col("new"))
    if moved["line"].null_count() != edges["line"].null_count():
        return None
    return moved.select(edges.columns)


def _class_lines(nodes: pl.DataFrame) -> pl.DataFrame:
    """Python classes' first lines (their `extends` edges carry them)."""
    return nodes.filter((pl.col("kind") == "class") & (pl.col("language") == "python")).select(
        "id", "line_start"
    )


def _words(names: list[str]) -> str:
    """A regex matching any of `names` as a whole word."""
    return r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b"


def _moved_readers(
    refs0: pl.LazyFrame,
    near: pl.DataFrame,
    bedges0: pl.DataFrame,
    in_changed: pl.Expr,
    moved: list[str],
    ids: list[str],
) -> pl.DataFrame | None:
    """Other files' references whose resolution a changed definition can change: calls and
    bases named after it, or on a receiver naming it, with every reference sharing their
    (src, kind, name), since those make one edge group; and the whole document sections
    whose mentions name it. None when something outside resolution looks these definitions
    up (a route handler, a manifest's operationId)."""
    names = pl.Series(moved, dtype=pl.String).implode()
    by_name = pl.col("dst").str.strip_prefix("name:").is_in(names)
    if bedges0.filter(pl.col("dst").is_in(ids) | by_name).height:
        return None
    # `near` (one pass with a substring test): the word tests run on what it keeps
    if near.select(pl.col("arg_name").is_in(names).any()).item():
        return None
    words = _words(moved)
    hit = (
        ~in_changed
        & pl.col("kind").is_in(["call", "extends", "implements"])
        & (pl.col("name").is_in(names) | pl.col("receiver").str.contains(words))
    )
    keys = near.filter(hit).select("src", "kind", "name").unique()
    mention = ~in_changed & (pl.col("kind") == "mention")
    sections = near.filter(mention & pl.col("name").str.contains(words))["src"].unique()
    parts = []
    if keys.height:
        group = pl.col("name").is_in(keys["name"].unique().implode()) & ~in_changed
        readers = refs0.filter(group).join(keys.lazy(), on=["src", "kind", "name"], how="semi")
        parts.append(readers := readers.collect())
        paths = pl.Series(readers["path"].unique(), dtype=pl.String).implode()
        # what those files' resolution reads: bindings and bases
        shape = pl.col("path").is_in(paths) & pl.col("kind").is_in(_SHAPE_REFS)
        parts.append(refs0.filter(shape).collect())
    if sections.len():  # a section's mentions make one edge group (one edge per target)
        parts.append(refs0.filter(mention & pl.col("src").is_in(sections.implode())).collect())
    if not parts:
        return near.clear()
    return pl.concat(parts).sort("path", maintain_order=True)


@dataclass
class _Own:
    """The changed files' stored rows, found by binary search in the sorted tables."""

    changed: list[str]
    in_changed: pl.Expr
    node_spans: list[tuple[int, int]]
    edge_spans: list[tuple[int, int]]
    old_nodes: pl.DataFrame
    old_own: pl.DataFrame  # their own edges
    old_refs: pl.DataFrame
    python: bool  # a changed file is Python (its edges come from the repository's value flow)
    python_only: bool  # every changed file is Python


def update(
    prev,
    files: pl.DataFrame,
    file_nodes: pl.DataFrame,
    defs: pl.DataFrame,
    refs: pl.DataFrame,
    changed: list[str],
    gomods: dict[str, str],
) -> Delta | None:
    """The new nodes, edges and refs if the fast path applies to the `changed` files (whose
    fresh `defs` and `refs` are given), else None. `prev` holds the stored tables: a mapping
    from name to frame, whose `scan(name)` reads one lazily."""
    nodes0, edges0 = prev["nodes"], prev["edges"]
    if not changed:
        return Delta(nodes0, edges0, None, pl.DataFrame(schema=COUNTS), same=_ALL)
    own = _own_rows(prev, files, sorted(changed))
    if own is None:
        return None
    new_nodes = (
        pl.concat([file_nodes.filter(own.in_changed).cast(defs.schema), defs])
        .with_columns(producer=pl.lit(PRODUCER))
        .pipe(lambda n: pl.concat([nodes0.clear(), n], how="diagonal"))
        .sort("id")
    )
    old_files, new_files = prev["files"].filter(own.in_changed), files.filter(own.in_changed)
    # Same definitions, references and per-file facts (a changed constant or comment, code
    # whose calls and lines stay put): resolution reads nothing new, so no row changes.
    facts = ["path", "language", "parse_errors", "skip_reason"]
    same_refs = own.old_refs.equals(refs)
    if (
        own.old_nodes.equals(new_nodes)
        and same_refs
        and old_files.select(facts).equals(new_files.select(facts))
    ):
        return Delta(nodes0, edges0, None, pl.DataFrame(schema=COUNTS), same=_ALL)
    shape = pl.col("kind").is_in(_SHAPE_REFS)
    # a Python file's imports and bases are read by its own resolution alone (a name binds
    # through its file's imports; other files' Python calls follow the value flow, which
    # solves them again): they may change when only Python files did
    same_shape = _same(own.old_refs.filter(shape).drop("line"), refs.filter(shape).drop("line"))
    # each side alone: rows of the two together may pair into a boundary neither side has
    if (not same_shape and not own.python_only) or any(
        reads_boundaries(side) for side in (own.old_refs, refs)
    ):
        return None
    # Definitions added, removed or renamed: other files' references to their names resolve
    # again, and so do the document sections that mention them.
    keys = pl.concat(
        [own.old_nodes.filter(pl.col("kind") != "file").select(_KEY), defs.select(_KEY)]
    )
    diff = keys.group_by(_KEY).len().filter(pl.col("len") == 1)
    moved = sorted(diff["label"].unique().to_list())
    others = refs.clear()  # other files' references to resolve again
    refs0 = prev.scan("refs")  # read only as far as each question needs
    near = _near(refs0, moved) if moved else None
    if moved:
        others = _moved_readers(
            refs0, near, prev["bedges"], own.in_changed, moved, diff["id"].to_list()
        )
        if others is None:
            return None
    rest_nodes = _without(nodes0, own.node_spans)
    python = _python_inputs(
        refs0, refs, own.old_refs, own.in_changed, rest_nodes, defs, own.python, moved,
        own.old_nodes, near, own.old_own,
    )  # fmt: skip
    lines = python if isinstance(python, pl.DataFrame) else None
    keep_py = lines is not None or (isinstance(python, str) and python == "keep")
    if keep_py:
        python = None
    flow_keep: list = []  # the value flow's new state
    flow_mode = None
    if python is not None:  # solve only what the edit changes, when the stored state allows
        # other Python files whose calls or bases left to name matching name a definition
        # that came or went: their edges are made again too
        named = _named_readers(near, moved, own.in_changed)
        inc = _incremental_flow(prev, own, refs, defs, files, python[1], named)
        if inc is not None:
            python = (python[0], python[1], inc[1])
            flow_keep.append(inc[0])
            flow_mode = "incremental"
        else:
            flow_mode = "full"
    # Python's edges come from the whole repository's value flow: all made again below when a
    # Python file's facts changed, else none changes (a new name elsewhere is another family)
    others = others.filter(~_PY_FACTS)
    reading = others
    if python is not None:  # other files' calls and bases the flow leaves to their names
        # resolve through those files' imports, as in a full run (a Python name is bound by
        # its own file's imports alone: those of the files an incremental solve names)
        imports = _PY_FACTS & (pl.col("kind") == "import") & ~own.in_changed
        if len(python) == 3:
            named = [p for p in python[2].paths if p not in set(own.changed)]
            bound = prev.rows_of("refs", named).filter(imports) if named else refs.clear()
        else:
            bound = refs0.filter(imports).collect()
        reading = pl.concat([others, bound.select(others.columns)])
    if python is None and others.is_empty() and same_refs and own.python_only:
        resolved = _same_references(own, defs)
    else:
        keep = flow_keep if flow_mode == "full" else None
        resolved = _resolve_changed(rest_nodes, defs, files, refs, reading, gomods, python, keep)
    stale_py = fresh_py = None
    if python is not None:  # other files' Python edges as they are now
        others_py = ~own.in_changed & _py_edge(files)
        if len(python) == 3:  # an incremental solve made those of the files it names
            others_py = others_py & pl.col("path").is_in(
                pl.Series(python[2].paths, dtype=pl.String).implode()
            )
        stale_py, fresh_py = edges0.filter(others_py), resolved.filter(others_py)
        if _same(stale_py.drop("producer"), fresh_py.drop("producer")):
            stale_py = fresh_py = None
        resolved = resolved.filter(~others_py)
    new_edges = _own_edges(own, resolved, nodes0, edges0, files if keep_py else None, lines)
    if new_edges is None or not _same_stubs(own, new_edges, nodes0, edges0):
        return None
    change = [
        counts(own.old_nodes, own.old_own, old_files).with_columns(-pl.col("n")),
        counts(new_nodes, new_edges, new_files),
    ]
    edges = _without(edges0, own.edge_spans)
    spliced = {"nodes"} if others.height or stale_py is not None else {"nodes", "edges"}
    if others.height:
        edges = _regrouped(own, edges, others, resolved, new_edges, nodes0, files, change)
    else:
        new_edges = new_edges.sort(_EDGE_ORDER, nulls_last=True)
        edges = None if own.old_own.equals(new_edges) else splice_sorted(edges, "src", new_edges)
    if stale_py is not None:  # other files' Python edges changed
        edges = _python_elsewhere(edges0 if edges is None else edges, stale_py, fresh_py, nodes0,
                                  files, change)  # fmt: skip
    # A table whose rows the edit left as they were (the references, when a function without
    # calls was added at the end) is kept as stored: nothing to splice or write.
    same = {
        name
        for name, kept in (
            ("nodes", own.old_nodes.equals(new_nodes)),
            ("edges", edges is None),
            ("refs", same_refs),
        )
        if kept
    }
    return Delta(
        nodes0 if "nodes" in same else splice_sorted(rest_nodes, "id", new_nodes),
        edges0 if edges is None else edges,
        None if "refs" in same else refs,
        pl.concat(change),
        frozenset(same),
        frozenset(spliced),
        flow_keep[0] if flow_keep else None,
        flow_mode,
    )


def _named_readers(near, moved: list[str], in_changed) -> list[str]:
    """The Python files with a call or a base named after one of the `moved` definitions."""
    if near is None or not moved:
        return []
    kinds = pl.col("kind").is_in(["call", "extends"])
    hit = near.filter(_PY_FACTS & kinds & ~in_changed & pl.col("name").is_in(moved))
    return sorted(hit["path"].unique().to_list())


def _incremental_flow(prev, own: _Own, refs, defs, files, every, named: list[str]):
    """(the new value-flow state, its Python edges) of the changed Python files, solved from
    the state kept with the stored version (ctxframe._resolve.flow_state); None when there
    is none or it cannot vouch for an answer (the value flow is then solved whole)."""
    from ctxframe._resolve import flow_state

    snap = prev.snap
    state = flow_state.recall(snap.dir if snap.version else None)
    if state is None:
        return None
    facts = _PY_FACTS & (pl.col("kind").str.starts_with("v.") | (pl.col("kind") == "call"))
    code = ~pl.col("kind").is_in(["file", "module"]) & pl.col("transport").is_null()
    paths = sorted(files.filter(own.in_changed & _PY_FACTS)["path"].to_list())
    result = state.update(
        paths,
        own.old_refs.filter(facts),
        own.old_nodes.filter(code),
        refs.filter(facts),
        defs,
        files,
        every,
        lambda other: prev.rows_of("refs", other).filter(facts),
        named,
    )
    return None if result is None else (state, result)


def _same_stubs(own: _Own, new_edges, nodes0, edges0) -> bool:
    """Whether the module stubs (`module://…`, an import no file resolves) stay as stored:
    each the changed files import now is one, and none they imported is left unimported."""
    stub = (pl.col("kind") == "imports") & pl.col("dst").str.starts_with("module://")
    old = set(own.old_own.filter(stub)["dst"].to_list())
    new = set(new_edges.filter(stub)["dst"].to_list())
    if old == new:
        return True
    have = nodes0.filter(pl.col("id").is_in(sorted(new - old)) & (pl.col("language") == "python"))
    if have.height != len(new - old):
        return False
    gone = sorted(old - new)
    others = edges0.filter(stub & pl.col("dst").is_in(gone) & ~own.in_changed)
    return others.select("dst").n_unique() == len(gone)


def _own_rows(prev, files: pl.DataFrame, changed: list[str]) -> _Own | None:
    """The changed files' stored rows, or None when the fast path cannot vouch for them
    (declaring languages, unsorted tables, adapter or boundary rows, foreign edges)."""
    nodes0, edges0 = prev["nodes"], prev["edges"]
    langs = files.filter(pl.col("path").is_in(changed))["language"]
    if langs.null_count() or set(langs.to_list()) & _DECLARING:
        return None
    if not (nodes0["id"].is_sorted() and edges0["src"].is_sorted()):  # binary search needs it
        return None
    in_changed = pl.col("path").is_in(pl.Series(changed, dtype=pl.String).implode())
    node_spans, edge_spans = _ranges(nodes0["id"], changed), _ranges(edges0["src"], changed)
    old_nodes, old_own = _rows(nodes0, node_spans), _rows(edges0, edge_spans)
    if (
        nodes0.select((pl.col("producer") != PRODUCER).any()).item()  # adapters, dialled
        or nodes0.select(in_changed.sum()).item() != old_nodes.height
        or edges0.select(in_changed.sum()).item() != old_own.height
        or not old_own.select(in_changed.all()).item()
        or old_own.filter(~pl.col("kind").is_in(_OWN_EDGES)).height
        or old_nodes.select(pl.col("transport").is_not_null().any()).item()  # boundaries
    ):
        return None
    old_refs = prev.rows_of("refs", changed)
    languages = set(langs.to_list())
    return _Own(changed, in_changed, node_spans, edge_spans, old_nodes, old_own, old_refs,
                "python" in languages, languages == {"python"})  # fmt: skip


def _same_references(own: _Own, defs: pl.DataFrame) -> pl.DataFrame:
    """The changed Python files' edges outside the value flow when their references are the
    stored ones, row for row: `contains` from their definitions, and their stored `imports`
    (a Python import resolves to a file or module by path alone, and the set of files is the
    one they were resolved against). What `_resolve_changed` would give them."""
    contains = defs.select(
        src="parent", dst="id", kind=pl.lit("contains"), confidence=pl.lit("EXTRACTED"),
        name="label", path="path", line="line_start", producer=pl.lit(PRODUCER),
    )  # fmt: skip
    imports = own.old_own.filter(pl.col("kind") == "imports")
    return pl.concat([conform_edges(contains), conform_edges(imports)])


def _resolve_changed(rest_nodes, defs, files, refs, others, gomods, python,
                     keep: list | None = None) -> pl.DataFrame:  # fmt: skip
    """The changed files' references and the other readers', resolved against the
    definitions they could name; with `python` (every Python fact, every definition, and
    maybe an incremental solve's answer), every Python call of the repository again, or
    those of the files the incremental solve names; `keep` gets the value flow's state."""
    reading = pl.concat([refs, others])
    if python is None:  # Python's calls and value facts are read only by the value flow
        reading = reading.filter(~_PY_FACTS | (pl.col("kind") == "import"))
        targets = pl.concat([_candidates(rest_nodes, reading).select(defs.columns), defs])
    else:  # every Python call resolves again, by name too: every definition is a target
        targets = python[1].select(defs.columns)
    edges, _ = resolve(targets, files, reading, gomods, python=python or False, flow_keep=keep,
                       shared=_SHARED)  # fmt: skip
    return edges.collect()


# what resolution derives from the definitions alone, kept for the next edit with the same
# definitions (a watcher's saves)
_SHARED: list = []


def _py_edge(files: pl.DataFrame) -> pl.Expr:
    """Edges whose resolution the Python value flow makes (calls and bases in Python files)."""
    return pl.col("kind").is_in(["calls", "extends"]) & pl.col("path").is_in(
        files.filter(pl.col("language") == "python")["path"].implode()
    )


def _python_elsewhere(edges, stale_py, fresh_py, nodes0, files, change: list) -> pl.DataFrame:
    """The edge table with other files' Python edges replaced by the fresh ones; `change` gets
    their coverage counts."""
    paths = fresh_py["path"].append(stale_py["path"]).implode()
    py_files = files.filter(pl.col("path").is_in(paths))
    change += [
        counts(nodes0.clear(), stale_py, py_files).with_columns(-pl.col("n")),
        counts(nodes0.clear(), fresh_py, py_files),
    ]
    return pl.concat(
        [
            edges.join(stale_py, on=edges.columns, how="anti", nulls_equal=True),
            fresh_py.select(edges.columns),
        ]
    ).sort(_EDGE_ORDER, nulls_last=True)


def _own_edges(
    own: _Own, resolved, nodes0, edges0, keep_py_of=None, lines=None
) -> pl.DataFrame | None:
    """The changed files' own new edges (with their `uses`), or None when a file's own path
    would start or stop being an edge end (see merge). `keep_py_of` (the files table): the
    changed files' Python edges stay as they were (no Python fact changed), at the new
    places of their lines when `lines` (`_line_map`) says where they went."""
    new_edges = resolved.filter(own.in_changed)
    if keep_py_of is not None:
        kept_py = own.old_own.filter(_py_edge(keep_py_of))
        if lines is not None and (kept_py := _moved_lines(kept_py, lines)) is None:
            return None
        new_edges = pl.concat([conform_edges(new_edges), conform_edges(kept_py)])
    starts = pl.col("src").is_in(pl.Series(own.changed, dtype=pl.String).implode())
    if own.old_own.select(starts.any()).item() != new_edges.select(starts.any()).item():
        return None
    uses = (
        uses_edges(new_edges.filter(pl.col("kind") == "imports"), nodes0.filter(kind="dep"))
        .sort("src", "kind", "dst", "line", nulls_last=True)
        .unique(["src", "dst", "kind", "name"], keep="first", maintain_order=True)
        .with_columns(producer=pl.lit(PRODUCER))
    )
    return pl.concat([conform_edges(new_edges), conform_edges(uses)]).select(edges0.columns)


def _regrouped(own: _Own, edges, others, resolved, new_edges, nodes0, files, change: list):
    """The edge table when other files' edge groups were resolved again: those groups
    replaced (they sit anywhere in the table, so it is sorted again); `change` gets their
    coverage counts."""
    in_changed = own.in_changed
    kind = pl.col("kind").replace({"call": "calls", "mention": "mentions"})
    group = others.select("src", "name", kind=kind).filter(pl.col("kind") != "import")
    group = group.filter(pl.col("kind") != "mentions").unique()
    sections = others.filter(pl.col("kind") == "mention")["src"].unique().implode()
    in_sections = (pl.col("kind") == "mentions") & pl.col("src").is_in(sections)
    stale = edges.join(group, on=["src", "kind", "name"], how="semi")
    fresh = resolved.filter(~in_changed).join(group, on=["src", "kind", "name"], how="semi")
    other_files = files.filter(pl.col("path").is_in(fresh["path"].append(stale["path"]).implode()))
    change += [
        counts(nodes0.clear(), stale, other_files).with_columns(-pl.col("n")),
        counts(nodes0.clear(), fresh, other_files),
    ]
    return pl.concat(
        [
            edges.join(group, on=["src", "kind", "name"], how="anti").filter(~in_sections),
            fresh.select(edges.columns),
            resolved.filter(~in_changed & in_sections).select(edges.columns),
            new_edges,
        ]
    ).sort(_EDGE_ORDER, nulls_last=True)


def tokens(prev, nodes: pl.DataFrame, changed: list[str], content: pl.DataFrame | None):
    """The whole token table (ctxframe._rank.fields) of `nodes`, the stored nodes with the
    `changed` files' rows replaced (see `patched`)."""
    return patched(prev["nodes"], prev["tokens"], prev["vocab"], nodes, changed, content)


def token_parts(prev, nodes: pl.DataFrame, changed: list[str], content, bounds: list[str]):
    """The token parts (ctxframe._store.tokenparts) of the nodes parts that can hold the
    `changed` files' nodes, each patched from its stored part alone: {part: (tokens, vocab)}
    (an empty pair for a part left without nodes). Equals the parts of a table made from
    scratch."""
    of = _tokenparts.parts_of(bounds, changed)
    stored, words = prev.token_parts(changed)
    ids0, ids = prev["nodes"]["id"], nodes["id"]
    at0, at = _tokenparts.node_ranges(ids0, bounds), _tokenparts.node_ranges(ids, bounds)
    out = {}
    for i in sorted({i for parts in of.values() for i in parts}):
        (lo0, hi0), (lo, hi) = at0[i], at[i]
        table = patched(
            prev["nodes"].slice(lo0, hi0 - lo0),
            stored.get(i, pl.DataFrame(schema=TOKENS)),
            words.get(i, pl.DataFrame(schema=VOCAB)),
            nodes.slice(lo, hi - lo),
            [p for p in changed if i in of[p]],
            content,
        )
        out[i] = (table.tokens, table.vocab)
    return out


def patched(nodes0, old, vocab0, nodes, changed: list[str], content) -> TokenTable:
    """The token table (ctxframe._rank.fields) of `nodes`, the nodes `nodes0` (with the
    table `old` and its vocabulary `vocab0`) with the `changed` files' rows replaced: every
    other node's rows are the stored ones, their node codes shifted past the replaced rows
    and their token codes moved with the vocabulary when it changed (their rows and bodies
    did not change); the changed files' rows are made from their rows and `content` (the
    body counts of the files read this run), a node whose row reads as it did keeping its
    stored name fields. Stored rows and fresh ones are joined in key order, one copy. Equals
    a table made from scratch."""
    ids0, ids = nodes0["id"], nodes["id"]
    vocab0 = vocab0["token"]
    changed = sorted(changed)
    spans0, spans = _spans(ids0, changed), _spans(ids, changed)  # range for range
    bounds = pl.Series([b for span in spans0 for b in span], dtype=pl.UInt32)
    at = old["node"].search_sorted(bounds, side="left").to_list()
    token_spans = [(at[i], at[i + 1]) for i in range(0, len(at), 2)]
    replaced = _rows(old, token_spans)
    mine = _rows(nodes, spans)
    parts = _name_counts(mine, _rows(nodes0, spans0), replaced, ids0, vocab0)
    if content is not None and content.height:
        parts.append(content.cast(_COUNTS).filter(pl.col("node_id").is_in(mine["id"].implode())))
    fresh = pl.concat(parts)
    pieces = _pieces(old, token_spans)
    vocab, recode = _vocab(vocab0, replaced["token"].unique(), [p["token"] for p in pieces],
                           fresh["token"])  # fmt: skip
    fresh = pl.DataFrame(
        {
            "node": ids.search_sorted(fresh["node_id"]).cast(pl.UInt32),
            "field": fresh["field"],
            "token": vocab.search_sorted(fresh["token"]).cast(pl.UInt32),
            "tf": fresh["tf"].clip(upper_bound=MAX_TF).cast(pl.UInt16),
        }
    ).pipe(sorted_tokens)
    table = _interleaved(pieces, spans0, spans, recode, fresh.cast(dict(TOKENS)))
    return TokenTable(table, pl.DataFrame({"token": vocab}).cast(dict(VOCAB)))


def _spans(keys: pl.Series, paths: list[str]) -> list[tuple[int, int]]:
    """Row ranges of sorted `keys` equal to a path or starting with `path::`, empty ones
    included, in key order: range for range the same list in any table sorted by that key,
    so the rows between two ranges are the same rows before and after an edit."""
    keyed = sorted((q, q_end) for p in paths for q, q_end in ((p, p + "\0"), (p + "::", p + ":;")))
    probes = pl.Series([k for pair in keyed for k in pair], dtype=pl.String)
    at = keys.search_sorted(probes, side="left").to_list()
    return [(at[i], at[i + 1]) for i in range(0, len(at), 2)]


def _pieces(frame: pl.DataFrame, spans: list[tuple[int, int]]) -> list[pl.DataFrame]:
    """The rows before, between and after sorted disjoint `spans`: len(spans) + 1 slices."""
    out, start = [], 0
    for lo, hi in spans:
        out.append(frame.slice(start, lo - start))
        start = hi
    out.append(frame.slice(start))
    return out


# the node columns node_counts reads: a node whose values are the same has the same rows
_NAMED = ["id", "kind", "label", "qualname", "path", "signature", "doc"]


def _name_counts(mine, was, replaced, ids0, vocab0) -> list[pl.DataFrame]:
    """The counts of the fields a node row holds (node_counts) of the nodes `mine`: a node
    whose row reads as before (in `was`) keeps its stored rows (from `replaced`, decoded);
    the others are counted afresh (tokenizing is most of the cost)."""
    same = mine.select(_NAMED).join(was.select(_NAMED), on=_NAMED, how="semi", nulls_equal=True)
    same_ids = same["id"].implode()
    rows = replaced.filter(pl.col("field") != BODY)
    kept = pl.DataFrame(
        {
            "node_id": ids0.gather(rows["node"]),
            "field": rows["field"],
            "token": vocab0.gather(rows["token"]),
            "tf": rows["tf"],
        }
    ).filter(pl.col("node_id").is_in(same_ids))
    out = [kept.cast(_COUNTS)]
    new = mine.filter(~pl.col("id").is_in(same_ids))
    if new.height:
        out.append(node_counts(new).collect().cast(_COUNTS))
    return out


def _vocab(vocab0: pl.Series, gone: pl.Series, carried: list[pl.Series], words: pl.Series):
    """The new vocabulary, and the new code of each old code when it changed (else None).
    `gone`: the codes the replaced rows used, `carried`: the kept rows' codes, `words`: the
    fresh rows' tokens. A word leaves when no row uses it any more: only the replaced rows'
    words that no fresh row uses are looked for among the kept rows."""
    words = words.unique()
    maybe = gone.filter(~vocab0.gather(gone).is_in(words.implode()))
    if maybe.len():
        probe = maybe.implode()
        still = pl.concat([c.filter(c.is_in(probe)) for c in carried]).unique()
        maybe = maybe.filter(~maybe.is_in(still.implode()))
    if maybe.is_empty() and words.is_in(vocab0.implode()).all():
        return vocab0, None
    keep = ~pl.int_range(vocab0.len(), dtype=pl.UInt32, eager=True).is_in(maybe.implode())
    vocab = pl.concat([vocab0.filter(keep), words]).unique().sort()
    return vocab, vocab.search_sorted(vocab0).cast(pl.UInt32)


def _interleaved(pieces, spans0, spans, recode, fresh: pl.DataFrame) -> pl.DataFrame:
    """The stored token rows between the replaced ranges (`pieces`), re-coded, with the fresh
    rows of each range between them: the table in (node, field, token) order. A piece's
    nodes all move by the same count, the rows the ranges before it gained."""
    cut = fresh["node"].search_sorted(pl.Series([lo for lo, _ in spans], dtype=pl.UInt32))
    cut = [*cut.to_list(), fresh.height]
    shift = [0] + [new[1] - was[1] for new, was in zip(spans, spans0, strict=True)]
    out = []
    for k, piece in enumerate(pieces):
        if shift[k]:
            node = (pl.col("node").cast(pl.Int64) + shift[k]).cast(pl.UInt32)
            piece = piece.with_columns(node=node)
        if recode is not None:
            piece = piece.with_columns(token=recode.gather(piece["token"]))
        out.append(piece)
        if k < len(spans):
            out.append(fresh.slice(cut[k], cut[k + 1] - cut[k]))
    return pl.concat(out, rechunk=True)

"""The re-index fast path: a few files changed and kept their shape, so only their rows change.

When every re-parsed file keeps the same definitions (id, kind, name, parent), the same imports
and the same bases, and reads no boundary, no other file's resolution can change: the files'
own nodes, edges and references are replaced and every other row is carried over, so the
result still equals a full rebuild. Anything else returns None and the indexer resolves again.

The stored nodes are sorted by id and the edges by source, and a file's own rows are exactly
those keyed `path` or `path::…`: they are found and replaced by binary search, not a sort.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from ctxframe._boundaries.code import reads_boundaries, uses_edges
from ctxframe._coverage import COUNTS, counts
from ctxframe._resolve import PRODUCER, resolve

# Edge kinds made only from a file's own definitions and references (their `path` is the file).
_OWN_EDGES = ["contains", "imports", "calls", "extends", "implements", "mentions", "uses"]
# References other files' resolution can read through: imports (bindings, re-exports) and bases.
_SHAPE_REFS = ["import", "extends", "implements"]
_KEY = ["id", "kind", "label", "qualname", "path", "parent"]
_DECLARING = {"c", "cpp"}  # `declares` edges link prototypes across files
_EDGE_ORDER = ["src", "kind", "line", "dst", "name"]
_WORD = re.compile(r"\w+")


@dataclass
class Delta:
    """The carried-over tables with the changed files' rows replaced."""

    nodes: pl.DataFrame
    edges: pl.DataFrame
    refs: pl.DataFrame
    counts_change: pl.DataFrame  # coverage counts (ctxframe._coverage) of new rows minus old


def _same(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    if a.height != b.height:
        return False
    return a.sort(a.columns, nulls_last=True).equals(b.sort(b.columns, nulls_last=True))


def _ranges(keys: pl.Series, paths: list[str]) -> list[tuple[int, int]]:
    """Row ranges of sorted `keys` equal to a path or starting with `path::`, in order."""
    probes = [q for p in paths for q in (p, p + "\0", p + "::", p + ":;")]
    at = keys.search_sorted(pl.Series(probes, dtype=pl.String), side="left").to_list()
    spans = sorted((at[i], at[i + 1]) for i in range(0, len(at), 2))
    return [s for s in spans if s[1] > s[0]]


def _without(frame: pl.DataFrame, spans: list[tuple[int, int]]) -> pl.DataFrame:
    parts, start = [], 0
    for lo, hi in spans:
        parts.append(frame.slice(start, lo - start))
        start = hi
    parts.append(frame.slice(start))
    return pl.concat(parts, rechunk=False)


def _rows(frame: pl.DataFrame, spans: list[tuple[int, int]]) -> pl.DataFrame:
    return pl.concat([frame.slice(lo, hi - lo) for lo, hi in spans] or [frame.clear()])


def _splice(rest: pl.DataFrame, key: str, new: pl.DataFrame) -> pl.DataFrame:
    """Sorted `new` rows inserted into sorted `rest`, where no key of one occurs in the other."""
    if new.is_empty():
        return rest
    at = rest[key].search_sorted(new[key], side="left").to_list()
    parts, start, i = [], 0, 0
    while i < len(at):
        j = i
        while j < len(at) and at[j] == at[i]:
            j += 1
        parts += [rest.slice(start, at[i] - start), new.slice(i, j - i)]
        start, i = at[i], j
    parts.append(rest.slice(start))
    return pl.concat(parts, rechunk=False)


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


def update(
    prev: dict[str, pl.DataFrame],
    files: pl.DataFrame,
    file_nodes: pl.DataFrame,
    defs: pl.DataFrame,
    refs: pl.DataFrame,
    changed: list[str],
    gomods: dict[str, str],
) -> Delta | None:
    """The new nodes, edges and refs if the fast path applies to the `changed` files (whose
    fresh `defs` and `refs` are given), else None. `prev` holds the stored tables."""
    nodes0, edges0, refs0 = prev["nodes"], prev["edges"], prev["refs"]
    if not changed:
        return Delta(nodes0, edges0, refs0, pl.DataFrame(schema=COUNTS))
    changed = sorted(changed)
    langs = files.filter(pl.col("path").is_in(changed))["language"]
    if langs.null_count() or set(langs.to_list()) & _DECLARING:
        return None
    in_changed = pl.col("path").is_in(pl.Series(changed, dtype=pl.String).implode())
    node_spans, edge_spans = _ranges(nodes0["id"], changed), _ranges(edges0["src"], changed)
    old_nodes, old_own = _rows(nodes0, node_spans), _rows(edges0, edge_spans)
    old_refs = refs0.filter(in_changed)
    shape = pl.col("kind").is_in(_SHAPE_REFS)
    if (
        nodes0.select((pl.col("producer") != PRODUCER).any()).item()  # adapters, dialled
        or nodes0.select(in_changed.sum()).item() != old_nodes.height
        or edges0.select(in_changed.sum()).item() != old_own.height
        or not old_own.select(in_changed.all()).item()
        or old_own.filter(~pl.col("kind").is_in(_OWN_EDGES)).height
        or old_nodes.select(pl.col("transport").is_not_null().any()).item()  # boundaries
        or not _same(old_nodes.filter(pl.col("kind") != "file").select(_KEY), defs.select(_KEY))
        or not _same(old_refs.filter(shape).drop("line"), refs.filter(shape).drop("line"))
        or reads_boundaries(old_refs)
        or reads_boundaries(refs)
    ):
        return None
    rest_nodes = _without(nodes0, node_spans)
    targets = pl.concat([_candidates(rest_nodes, refs).select(defs.columns), defs])
    new_edges, _stubs = resolve(targets, files, refs, gomods)
    new_edges = new_edges.filter(in_changed).collect()
    # A file's own path is a known edge end only while some edge starts there (see merge).
    starts = pl.col("src").is_in(pl.Series(changed, dtype=pl.String).implode())
    if old_own.select(starts.any()).item() != new_edges.select(starts.any()).item():
        return None
    uses = (
        uses_edges(new_edges.filter(pl.col("kind") == "imports"), nodes0.filter(kind="dep"))
        .sort("src", "kind", "dst", "line", nulls_last=True)
        .unique(["src", "dst", "kind", "name"], keep="first", maintain_order=True)
        .with_columns(producer=pl.lit(PRODUCER))
    )
    new_edges = pl.concat([new_edges, uses.select(new_edges.columns)]).select(edges0.columns)
    new_nodes = (
        pl.concat([file_nodes.filter(in_changed).cast(defs.schema), defs])
        .with_columns(producer=pl.lit(PRODUCER))
        .pipe(lambda n: pl.concat([nodes0.clear(), n], how="diagonal"))
        .sort("id")
    )
    old_files, new_files = prev["files"].filter(in_changed), files.filter(in_changed)
    change = pl.concat(
        [
            counts(old_nodes, old_own, old_files).with_columns(-pl.col("n")),
            counts(new_nodes, new_edges, new_files),
        ]
    )
    return Delta(
        _splice(rest_nodes, "id", new_nodes),
        _splice(_without(edges0, edge_spans), "src", new_edges.sort(_EDGE_ORDER, nulls_last=True)),
        pl.concat([refs0.filter(~in_changed), refs]),
        change,
    )

"""The history analyses of a Graph: one function per analysis, taking the graph and returning
a Polars frame (what the audit takes as its sections), and the result objects the Graph's
methods return (ctxframe._history.results).

The store's `commits` and `changes` tables (ctxframe._store.history) are read once per graph
version; a history still being read by the background job of a first index is waited for.
Complexity is lines of code (a file's lines, a function's span) unless the caller passes a
frame of its own (`complexity=`: `path` or `id`, and `complexity`), such as the audit's
cyclomatic numbers.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import polars as pl

from ctxframe._core.errors import BadInput, CtxframeError
from ctxframe._history import analyses as A
from ctxframe._history import results as R
from ctxframe._history.functions import FUNCTION_KINDS, function_history
from ctxframe._store import history as _stored
from ctxframe._store import tables as _tables

if TYPE_CHECKING:
    from ctxframe._graph.graph import Graph

NOT_CODE = ("markdown", "rst")  # parsed, but documents: no hotspot, no hidden coupling
HIDDEN_HOPS = 3
_WAIT_SECONDS = 600.0


class NoHistory(CtxframeError):
    """The store holds no history (not a git repository, history turned off)."""


def _cache(g: Graph) -> dict:
    return g.__dict__.setdefault("_history_cache", {})


def tables(g: Graph, wait: bool = True) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """(commits, changes, state) of the graph's store. The version the graph reads, or when
    a first read runs in the background, the version that job writes (waited for)."""
    cache = _cache(g)
    if "tables" in cache:
        return cache["tables"]
    snap = g._snap
    state = _stored.stored_state(snap)
    pending = (state or {}).get("pending") or (state is None and _stored.job(g.store))
    if pending and wait and _stored.job(g.store) is not None:
        _stored.wait_history(g.store, _WAIT_SECONDS)
        newest = _tables.Snapshot(g.store)
        if _stored.stored_state(newest) is not None:
            snap, state = newest, _stored.stored_state(newest)
    if state is None and (snap.meta.get("history") or {}).get("pending"):
        raise NoHistory(
            "the history was still being read in the background and that read did not finish "
            f"(its errors: {os.path.join(g.store, _stored.JOB_LOG)}): run `ctxframe index` again"
        )
    if state is None:
        raise NoHistory(
            "no history in this index: the repository is not a git repository (or has no "
            "commit), or history is off (`[history] enabled = false`, `index --no-history`); "
            "run `ctxframe index` in a git work tree"
        )
    got = (snap.read("commits"), snap.read("changes"), state)
    cache["tables"] = got
    return got


def _since(value: Any, commits: pl.DataFrame) -> datetime | None:
    """A window's start: a datetime, an ISO date, or a span back from the newest commit
    (`90d`, `12w`, `6mo`, `2y`)."""
    if value is None or isinstance(value, datetime):
        return value
    text = str(value).strip()
    m = re.fullmatch(r"(\d+)\s*(d|w|mo|y)", text)
    ref = A.reference_time(commits)
    if m and ref is not None:
        n, unit = int(m.group(1)), m.group(2)
        days = {"d": 1, "w": 7, "mo": 30.44, "y": 365.25}[unit] * n
        return ref - timedelta(days=days)
    try:
        got = datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(
            f"since {text!r}: give a date (2024-01-31) or a span back from the last commit "
            "(90d, 12w, 6mo, 2y)"
        ) from None
    return got if got.tzinfo else got.replace(tzinfo=A.reference_time(commits).tzinfo)


def rows(g: Graph, since: Any = None, follow_renames: bool = True) -> pl.DataFrame:
    """Every change with its commit's facts, named as at HEAD (analyses.entities)."""
    commits, changes, _ = tables(g)
    start = _since(since, commits)
    key = ("rows", start, follow_renames)
    cache = _cache(g)
    if key not in cache:
        got = A.entities(commits, changes, follow_renames)
        if start is not None:
            got = got.filter(pl.col("time") >= start)
        cache[key] = got
    return cache[key]


def _code_files(g: Graph) -> pl.DataFrame:
    files = g.files.filter(pl.col("skip_reason").is_null())
    return files.filter(pl.col("language").is_not_null() & ~pl.col("language").is_in(NOT_CODE))


def _complexity(g: Graph, complexity: pl.DataFrame | None, key: str) -> tuple[pl.DataFrame, str]:
    if complexity is not None:
        col = "path" if "path" in complexity.columns and key == "path" else "id"
        if col not in complexity.columns or "complexity" not in complexity.columns:
            raise BadInput(f"complexity: give a frame with columns `{key}` and `complexity`")
        return complexity.select(pl.col(col).alias("entity"), "complexity"), "given"
    if key == "path":
        files = _code_files(g)
        return files.select(entity="path", complexity=pl.col("lines").cast(pl.Int64)), "lines"
    fns = g.nodes.filter(pl.col("kind").is_in(FUNCTION_KINDS))
    return fns.select(
        entity="id", complexity=(pl.col("line_end") - pl.col("line_start") + 1).cast(pl.Int64)
    ), "lines"


# -- one function per analysis: the graph in, a frame out ---------------------------------------


def hotspots(g: Graph, level: str = "file", since: Any = None,
             complexity: pl.DataFrame | None = None, files: int = 10) -> pl.DataFrame:  # fmt: skip
    """Revisions × complexity (analyses.hotspots) per code file, or with `level="function"`
    per function of the `files` hottest files (their functions' own revisions, see
    ctxframe._history.functions)."""
    if level == "file":
        cx, _ = _complexity(g, complexity, "path")
        commits = tables(g)[0]
        return A.hotspots(rows(g, since), cx, A.reference_time(commits))
    if level != "function":
        raise BadInput(f"level {level!r}: hotspots are per `file` or per `function`")
    hot = hotspots(g, "file", since)["entity"].head(files).to_list()
    per = pl.concat([functions(g, path) for path in hot]) if hot else None
    cx, _ = _complexity(g, complexity, "id")
    if per is None or per.is_empty():
        return pl.DataFrame(schema={"id": pl.String, "revisions": pl.Int64})
    out = per.join(cx.rename({"entity": "id"}), on="id", how="inner").filter(
        pl.col("revisions") > 0
    )
    scale = pl.col("revisions") / pl.col("revisions").max()
    size = pl.col("complexity") / pl.col("complexity").max().clip(lower_bound=1)
    return out.with_columns(score=(scale * size).cast(pl.Float64)).sort(
        ["score", "revisions", "id"], descending=[True, True, False]
    )


def functions(g: Graph, path: str) -> pl.DataFrame:
    """Each function of the file `path` (as indexed): revisions, authors, first and last
    change, last author (ctxframe._history.functions)."""
    key = ("functions", path)
    cache = _cache(g)
    if key not in cache:
        _, _, state = tables(g)
        fns = g.nodes.filter((pl.col("path") == path) & pl.col("kind").is_in(FUNCTION_KINDS))
        fns = fns.select("id", "line_start", "line_end")
        if not g.root:
            raise NoHistory("per-function history reads git: the repository is not here")
        cache[key] = function_history(g.root, path, fns, head=state.get("head") or "HEAD")
    return cache[key]


def _package_rows(r: pl.DataFrame, depth: int | None) -> pl.DataFrame:
    return r.with_columns(entity=A.package_of(pl.col("entity"), depth))


def coupling(g: Graph, level: str = "file", since: Any = None, depth: int | None = None,
             **thresholds: Any) -> pl.DataFrame:  # fmt: skip
    """Change coupling (analyses.coupling) between files, or with `level="package"` between
    directories (`depth`: their first N folders); thresholds `max_changeset`, `min_revs`,
    `min_shared`, `min_degree`."""
    r = rows(g, since)
    if level == "package":
        r = _package_rows(r, depth)
    elif level != "file":
        raise BadInput(f"level {level!r}: coupling is per `file` or per `package`")
    return A.coupling(r, **thresholds)


def hidden_coupling(g: Graph, hops: int = HIDDEN_HOPS, since: Any = None,
                    undirected: bool = False, **thresholds: Any) -> pl.DataFrame:  # fmt: skip
    """Coupled code files (coupling) with no path between them in the graph within `hops`
    file-to-file dependency steps (calls, imports, extends, implements between their
    symbols, either way round; `undirected`: also through a common neighbour)."""
    pairs = coupling(g, "file", since, **thresholds)
    code = _code_files(g)["path"]
    pairs = pairs.filter(pl.col("a").is_in(code.implode()) & pl.col("b").is_in(code.implode()))
    if pairs.is_empty():
        return pairs
    walk = _file_traversal(g)
    row_of = pl.DataFrame({"path": walk.ids, "row": pl.int_range(walk.ids.len(), eager=True,
                                                                  dtype=pl.Int32)})  # fmt: skip
    starts = pl.concat([pairs["a"], pairs["b"]]).unique().to_frame("path").join(row_of, on="path")
    reached = walk.reach_each(starts["row"], depth=hops, undirected=undirected)
    names = walk.ids
    linked = reached.select(
        a=names.gather(reached["start"]), b=names.gather(reached["row"])
    )
    either = pl.concat([linked, linked.select(a="b", b="a")]).unique()
    return pairs.join(either, on=["a", "b"], how="anti").sort(
        ["degree", "shared", "a", "b"], descending=[True, True, False, False]
    )


def _file_traversal(g: Graph):
    """The dependency edges folded onto files (an edge between two symbols is one between
    their files), as a Traversal (ctxframe._graph.traverse)."""
    cache = _cache(g)
    if "walk" not in cache:
        from ctxframe._graph.traverse import DEPENDENCY_KINDS, Traversal

        nodes = g.nodes
        place = nodes.filter(pl.col("path").is_not_null() & pl.col("transport").is_null())
        place = place.select("id", "path")
        files = nodes.filter(pl.col("kind") == "file").select("id", "kind").sort("id")
        kinds = [k for k in DEPENDENCY_KINDS if k != "contains"]
        folded = (
            g.edges.filter(pl.col("kind").is_in(kinds) & pl.col("dst").is_not_null())
            .select("src", "dst", "kind", "confidence")
            .join(place.rename({"id": "src", "path": "sp"}), on="src")
            .join(place.rename({"id": "dst", "path": "dp"}), on="dst")
            .filter(pl.col("sp") != pl.col("dp"))
            .select(src="sp", dst="dp", kind="kind", confidence="confidence")
            .unique()
        )
        cache["walk"] = Traversal(files, folded)
    return cache["walk"]


def ownership(g: Graph, level: str = "file", since: Any = None,
              depth: int | None = None) -> pl.DataFrame:  # fmt: skip
    """Authors per file (or package), the main developer and their share, knowledge islands
    (analyses.ownership), with each one's revisions."""
    r = rows(g, since)
    if level == "package":
        r = _package_rows(r, depth)
    elif level != "file":
        raise BadInput(f"level {level!r}: ownership is per `file` or per `package`")
    revs = A.revisions(r).select("entity", "revisions")
    return A.ownership(r).join(revs, on="entity", how="left").sort(
        ["revisions", "entity"], descending=[True, False]
    )


def knowledge_islands(g: Graph, top: int = 20, since: Any = None) -> pl.DataFrame:
    """The hotspots (the `top` by score among the files changed more than once) that one
    author wrote alone."""
    hot = hotspots(g, "file", since).filter(pl.col("revisions") > 1)
    hot = hot.head(top).select("entity", "score")
    own = ownership(g, "file", since).filter("island")
    return own.join(hot, on="entity").sort("score", descending=True)


def age(g: Graph, level: str = "file", path: str | None = None) -> pl.DataFrame:
    """Days since the last change per code file, or with `level="function"` per function of
    the file `path`; from the newest commit's time."""
    commits = tables(g)[0]
    now = A.reference_time(commits)
    if level == "function":
        if not path:
            raise BadInput("age per function needs a file: age(level='function', path=...)")
        per = functions(g, path)
        days = (pl.lit(now) - pl.col("last_change")).dt.total_days()
        return per.with_columns(age_days=days).sort(["age_days", "id"], descending=[True, False])
    if level != "file":
        raise BadInput(f"level {level!r}: age is per `file` or per `function`")
    r = rows(g)
    code = _code_files(g).select(entity="path")
    per = A.age(r, now).join(code, on="entity", how="semi")
    return per.join(A.revisions(r).select("entity", "revisions", "authors"), on="entity")


def timeline(g: Graph, every: str = "1mo", depth: int | None = 1,
             since: Any = None) -> pl.DataFrame:  # fmt: skip
    """Commits per package (its first `depth` folders) per period (`every`)."""
    return A.timeline(rows(g, since), every=every, depth=depth)


def facts(g: Graph) -> dict:
    """The history's size: commits, authors, first and last commit, paths changed."""
    commits, changes, state = tables(g)
    return {
        "commits": commits.height,
        "authors": commits["author_name"].n_unique(),
        "first": commits["author_time"].min(),
        "last": commits["author_time"].max(),
        "files": changes["path"].n_unique(),
        "head": state.get("head"),
        "anonymized": bool(state.get("anonymized")),
        "pending": bool(state.get("pending")),
    }


# -- result objects (the Graph's methods) -------------------------------------------------------


def result(cls: type[R.HistoryResult], make, note: str, limit: int) -> R.HistoryResult:
    """Run `make()`; a store without history gives a `not-indexed` result."""
    try:
        frame = make()
    except NoHistory as exc:
        return cls(status=R.NOT_INDEXED, message=str(exc), limit=limit)
    return cls(frame=frame, note=note, limit=limit)


def summary(g: Graph, limit: int = 5, hops: int = HIDDEN_HOPS) -> R.Summary | R.HistoryResult:
    """The history's size, the hotspots, coupled pairs, hidden coupling and knowledge
    islands."""
    try:
        f = facts(g)
    except NoHistory as exc:
        return R.Commits(status=R.NOT_INDEXED, message=str(exc))
    sections = [
        R.Hotspots(frame=hotspots(g), note="complexity: lines of code", limit=limit),
        R.Coupling(frame=coupling(g), note=_coupling_note({}), limit=limit),
        R.HiddenCoupling(
            frame=hidden_coupling(g, hops), note=f"no path within {hops} hops", limit=limit
        ),
        R.Ownership(
            frame=knowledge_islands(g),
            note="knowledge islands: hotspots one author wrote alone",
            limit=limit,
        ),
    ]
    return R.Summary(facts=f, sections=sections)


def _coupling_note(t: dict) -> str:
    return (
        f"commits of at most {t.get('max_changeset', A.MAX_CHANGESET)} files; average "
        f"revisions >= {t.get('min_revs', A.MIN_REVS)}, shared >= "
        f"{t.get('min_shared', A.MIN_SHARED)}, degree >= {t.get('min_degree', A.MIN_DEGREE):g}%"
    )


def commits_frame(g: Graph) -> pl.DataFrame:
    """The commits, newest first, each with its files changed and lines added and deleted."""
    commits, changes, _ = tables(g)
    per = changes.group_by("sha").agg(
        files=pl.len().cast(pl.Int64), added=pl.col("added").sum().cast(pl.Int64),
        deleted=pl.col("deleted").sum().cast(pl.Int64),
    )  # fmt: skip
    return commits.join(per, on="sha", how="left", maintain_order="left").with_columns(
        pl.col("files", "added", "deleted").fill_null(0)
    )

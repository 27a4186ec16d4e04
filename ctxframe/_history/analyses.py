"""The analyses of a history, frames in and frames out (no Graph here: ctxframe._graph.history
hands them the store's tables).

Definitions (code-maat's and CodeScene's, so the numbers mean what an auditor expects):

- an entity's **revisions**: the commits that changed it (a merge changes nothing of its own,
  as `git log --numstat` shows it);
- **change coupling** of two entities: `shared` revisions (commits changing both) and
  `degree` = shared / average(revisions of each) × 100, counted over the commits that change at
  most `max_changeset` entities (huge commits — a reformat, a licence header — couple
  everything with everything and say nothing); pairs kept when the average revisions reach
  `min_revs`, the shared ones `min_shared` and the degree `min_degree` (code-maat's defaults:
  30, 5, 5, 30);
- a **hotspot**: revisions × complexity, each scaled by its largest value (CodeScene: change
  frequency on top of code complexity), complexity being lines of code until a better measure
  is given;
- **ownership**: the main developer is the author who added the most lines (code-maat's
  `main-dev`), a knowledge island a file one author wrote alone.

With `follow_renames`, each change is counted under the name its file has at HEAD (renames
recorded by `git log -M` are followed forwards); without, under the path as logged (code-maat).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from ctxframe._core.frames import string_lists

MAX_CHANGESET = 30
MIN_REVS = 5
MIN_SHARED = 5
MIN_DEGREE = 30.0
_MAX_RENAME_HOPS = 64


def entities(commits: pl.DataFrame, changes: pl.DataFrame,
             follow_renames: bool = True) -> pl.DataFrame:  # fmt: skip
    """One row per change with its commit's facts: sha, entity (the path, at HEAD's name with
    `follow_renames`), path (as logged), added, deleted, author, time (author time), order
    (0 = newest commit)."""
    order = commits.select(
        "sha", order=pl.int_range(pl.len(), dtype=pl.Int64), author="author_name",
        time="author_time",
    )  # fmt: skip
    rows = changes.join(order, on="sha", how="inner")
    entity = pl.col("path")
    if follow_renames and rows["old_path"].is_not_null().any():
        rows = rows.with_columns(entity=_renamed_forward(rows))
    else:
        rows = rows.with_columns(entity=entity)
    return rows.select("sha", "entity", "path", "added", "deleted", "author", "time", "order")


def _renamed_forward(rows: pl.DataFrame) -> pl.Series:
    """Each change's path at HEAD: the first rename away from its path after the change (in
    commit order), then the first rename away from that name after the rename, and so on."""
    renames = (
        rows.filter(pl.col("old_path").is_not_null())
        .select(src="old_path", dst="path", r="order")
        .unique(["src", "r"], keep="first")
        .sort("r")
    )
    cur = rows.select(i=pl.int_range(pl.len(), dtype=pl.Int64), p="path", o="order")
    done = []
    for _ in range(_MAX_RENAME_HOPS):
        hop = cur.sort("o").join_asof(
            renames, left_on="o", right_on="r", by_left="p", by_right="src",
            strategy="backward", allow_exact_matches=False, check_sortedness=False,
        )  # fmt: skip
        # `backward` finds the largest rename order below the change's: the closest newer one
        moved = hop.filter(pl.col("dst").is_not_null())
        done.append(hop.filter(pl.col("dst").is_null()).select("i", "p"))
        if moved.is_empty():
            break
        cur = moved.select("i", p="dst", o="r")
    else:
        done.append(cur.select("i", "p"))
    return pl.concat(done).sort("i")["p"]


def revisions(rows: pl.DataFrame) -> pl.DataFrame:
    """Per entity: revisions (distinct commits), authors, added and deleted lines, first and
    last change (author time); most revised first (code-maat's `revisions`, `entity-churn`)."""
    return (
        rows.group_by("entity")
        .agg(
            revisions=pl.col("sha").n_unique().cast(pl.Int64),
            authors=pl.col("author").n_unique().cast(pl.Int64),
            added=pl.col("added").sum().cast(pl.Int64),
            deleted=pl.col("deleted").sum().cast(pl.Int64),
            first_change=pl.col("time").min(),
            last_change=pl.col("time").max(),
        )
        .sort(["revisions", "entity"], descending=[True, False])
    )


def package_of(path: pl.Expr, depth: int | None = None) -> pl.Expr:
    """The package (directory) of a path: its parent folder, or its first `depth` folders;
    `.` for a file at the top."""
    parent = path.str.replace(r"/?[^/]*$", "")
    if depth is not None:
        parent = parent.str.split("/").list.head(depth).pipe(string_lists).list.join("/")
    return pl.when(parent == "").then(pl.lit(".")).otherwise(parent)


def coupling(
    rows: pl.DataFrame,
    *,
    max_changeset: int = MAX_CHANGESET,
    min_revs: int = MIN_REVS,
    min_shared: int = MIN_SHARED,
    min_degree: float = MIN_DEGREE,
) -> pl.DataFrame:
    """Pairs of entities that change in the same commits (code-maat's `coupling`, see the
    module's doc): a, b (a < b), shared, revisions_a, revisions_b, average, degree (percent);
    strongest first."""
    sets = rows.select("sha", "entity").unique()
    size = sets.group_by("sha").len("n")
    sets = sets.join(size.filter(pl.col("n") <= max_changeset), on="sha", how="semi")
    revs = sets.group_by("entity").len("revisions")
    pairs = (
        sets.join(sets, on="sha", suffix="_b")
        .filter(pl.col("entity") < pl.col("entity_b"))
        .group_by("entity", "entity_b")
        .len("shared")
    )
    out = (
        pairs.join(revs, on="entity")
        .join(revs.rename({"entity": "entity_b", "revisions": "revisions_b"}), on="entity_b")
        .select(
            a="entity",
            b="entity_b",
            shared=pl.col("shared").cast(pl.Int64),
            revisions_a=pl.col("revisions").cast(pl.Int64),
            revisions_b=pl.col("revisions_b").cast(pl.Int64),
        )
        .with_columns(average=(pl.col("revisions_a") + pl.col("revisions_b")) / 2)
        .with_columns(degree=pl.col("shared") / pl.col("average") * 100)
    )
    return out.filter(
        (pl.col("average") >= min_revs)
        & (pl.col("shared") >= min_shared)
        & (pl.col("degree") >= min_degree)
    ).sort(["degree", "shared", "a", "b"], descending=[True, True, False, False])


def reference_time(commits: pl.DataFrame) -> datetime | None:
    """The time the analyses measure age and trends from: the newest commit's (so a result
    depends on the history, not on the day it is computed)."""
    if commits.is_empty():
        return None
    return commits["committer_time"].max()  # type: ignore[return-value]


def hotspots(rows: pl.DataFrame, complexity: pl.DataFrame, now: datetime | None,
             key: str = "entity") -> pl.DataFrame:  # fmt: skip
    """Revisions × complexity per entity that has a complexity (`complexity`: entity,
    complexity; another measure swaps in by passing another frame): revisions, complexity,
    score (both scaled to their largest value, multiplied: 0-1), the revisions of the last
    year, and the trend (revisions of its last six months minus the six before); best
    first."""
    per = revisions(rows)
    year = _recent(rows, now)
    out = (
        complexity.rename({key: "entity"})
        .join(per, on="entity", how="inner")
        .join(year, on="entity", how="left")
        .with_columns(pl.col("last_year", "trend").fill_null(0))
    )
    if out.is_empty():
        return out.with_columns(score=pl.lit(None, pl.Float64))
    scale = pl.col("revisions") / pl.col("revisions").max()
    size = pl.col("complexity") / pl.col("complexity").max().clip(lower_bound=1)
    return out.with_columns(score=(scale * size).cast(pl.Float64)).sort(
        ["score", "revisions", "entity"], descending=[True, True, False]
    )


def _recent(rows: pl.DataFrame, now: datetime | None) -> pl.DataFrame:
    if now is None:
        return pl.DataFrame(schema={"entity": pl.String, "last_year": pl.Int64,
                                    "trend": pl.Int64})  # fmt: skip
    half = now - timedelta(days=182)
    year = now - timedelta(days=365)
    t = pl.col("time")
    return rows.group_by("entity").agg(
        last_year=pl.col("sha").filter(t > year).n_unique().cast(pl.Int64),
        trend=(
            pl.col("sha").filter(t > half).n_unique().cast(pl.Int64)
            - pl.col("sha").filter((t > year) & (t <= half)).n_unique().cast(pl.Int64)
        ),
    )


def ownership(rows: pl.DataFrame) -> pl.DataFrame:
    """Per entity: authors, revisions, the main developer (most added lines; most commits
    where no line was counted, as for binary files) and their share of the added lines
    (of the commits), and whether one author wrote it alone (a knowledge island)."""
    by = (
        rows.group_by("entity", "author")
        .agg(added=pl.col("added").sum().cast(pl.Int64), commits=pl.col("sha").n_unique())
        .sort(["entity", "added", "commits", "author"], descending=[False, True, True, False])
    )
    totals = by.group_by("entity").agg(
        authors=pl.len().cast(pl.Int64),
        total_added=pl.col("added").sum(),
        revisions=pl.col("commits").sum(),
        main_author=pl.col("author").first(),
        main_added=pl.col("added").first(),
        main_commits=pl.col("commits").first(),
    )
    share = (
        pl.when(pl.col("total_added") > 0)
        .then(pl.col("main_added") / pl.col("total_added"))
        .otherwise(pl.col("main_commits") / pl.col("revisions"))
    )
    return (
        totals.with_columns(main_share=share, island=pl.col("authors") == 1)
        .select("entity", "authors", "main_author", "main_share", "island")
        .sort(["authors", "main_share", "entity"], descending=[False, True, False])
    )


def age(rows: pl.DataFrame, now: datetime | None) -> pl.DataFrame:
    """Per entity: first and last change and the days since the last one (from `now`);
    the longest untouched first."""
    per = rows.group_by("entity").agg(
        first_change=pl.col("time").min(), last_change=pl.col("time").max()
    )
    days = (pl.lit(now) - pl.col("last_change")).dt.total_days() if now is not None else None
    per = per.with_columns(age_days=days if days is not None else pl.lit(None, pl.Int64))
    return per.sort(["age_days", "entity"], descending=[True, False])


def timeline(rows: pl.DataFrame, every: str = "1mo", depth: int | None = 1) -> pl.DataFrame:
    """Commits per package per period (`every`: a Polars duration, `1mo`, `1q`, `1y`):
    package, period (the period's start), commits."""
    return (
        rows.with_columns(
            package=package_of(pl.col("entity"), depth),
            period=pl.col("time").dt.truncate(every),
        )
        .group_by("package", "period")
        .agg(commits=pl.col("sha").n_unique().cast(pl.Int64))
        .sort("period", "package")
    )

"""Per-function history, on demand, one file at a time: each of today's functions' revisions,
authors, first and last change.

How: `git log -p -U0 --first-parent -m --follow -- FILE` gives the changed line ranges (hunks)
of every commit on the first-parent line of HEAD (a merge: its diff against its first parent,
so every hunk is in one chain of line numbers); walking from HEAD back, each function's line
range is carried into the coordinates of the file before each commit, and a commit is one of
the function's revisions when one of its hunks touches the range (what `git log -L
--first-parent` does for one range, here for every function of the file in one pass). A
range that a commit inserted whole is where the function was born. So a branch merged in
counts as one revision of the function (its merge, by the merge's author), a commit made on
the main line as one.

Why this and not `git blame`, and not at index time (numpy, `_function_base_impl.py`, 100
functions): this pass took 0.73 s for the whole file and equalled `git log -L --first-parent`
on 8 of 8 functions sampled; `git blame` took 1.95 s and equalled it on 3 of 8 (it sees only
the last commit of each surviving line, so a function whose lines were rewritten loses its
earlier revisions); `git log -L` itself takes 1.2 s per function. Reading every commit's
hunks for every file at index time costs several times `git log --numstat` for functions
nobody asks about: this runs when asked (`g.function_history(path)`, function hotspots).
"""

from __future__ import annotations

import os
import subprocess

import polars as pl

from ctxframe._history.gitlog import _GIT, GitError

FUNCTION_KINDS = ("function", "method")
FUNCTION_HISTORY = pl.Schema(
    {
        "id": pl.String,
        "revisions": pl.Int64,
        "authors": pl.Int64,
        "first_change": pl.Datetime("ms", "UTC"),
        "last_change": pl.Datetime("ms", "UTC"),
        "last_author": pl.String,
    }
)


def file_hunks(root: str, path: str, head: str = "HEAD") -> pl.DataFrame:
    """Every commit touching `path` (followed through renames), newest first, with its
    hunks: sha, author, time, old_start, old_count, new_start, new_count (one row per hunk; a
    commit with no hunk, such as a rename alone or a binary change, keeps a row of nulls)."""
    cmd = [*_GIT, "-C", root, "log", "-p", "-U0", "--follow", "-M", "--first-parent", "-m",
           "--no-color", "--no-ext-diff", "--no-textconv", "--format=%x01%H%x1f%aN%x1f%at",
           head, "--", path]  # fmt: skip
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    proc = subprocess.run(cmd, capture_output=True, env=env, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        text = proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"]
        raise GitError(f"git log failed: {text[0]}")
    lines = pl.Series("l", proc.stdout.decode("utf-8", "backslashreplace").split("\n"))
    keep = lines.str.starts_with("\x01") | lines.str.starts_with("@@ ")
    frame = lines.filter(keep).to_frame().with_columns(
        head=pl.col("l").str.starts_with("\x01")
    ).with_columns(commit=pl.col("head").cum_sum() - 1)
    heads = frame.filter("head").select(
        "commit", f=pl.col("l").str.strip_prefix("\x01").str.splitn("\x1f", 3)
    )
    heads = heads.select(
        "commit",
        sha=pl.col("f").struct.field("field_0"),
        author=pl.col("f").struct.field("field_1"),
        time=pl.from_epoch(pl.col("f").struct.field("field_2").cast(pl.Int64), "s")
        .dt.replace_time_zone("UTC")
        .cast(pl.Datetime("ms", "UTC")),
    )
    hunk = pl.col("l").str.extract_groups(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
    hunks = frame.filter(~pl.col("head")).select(
        "commit",
        old_start=hunk.struct.field("1").cast(pl.Int64),
        old_count=hunk.struct.field("2").cast(pl.Int64).fill_null(1),
        new_start=hunk.struct.field("3").cast(pl.Int64),
        new_count=hunk.struct.field("4").cast(pl.Int64).fill_null(1),
    )
    return heads.join(hunks, on="commit", how="left").sort("commit", "new_start")


def track(functions: pl.DataFrame, hunks: pl.DataFrame) -> pl.DataFrame:
    """(id, sha) for every commit of `hunks` (file_hunks) that touched each function
    (`functions`: id, line_start, line_end, today's lines), by carrying each range back
    through the commits' hunks."""
    import numpy as np  # imported here: a fresh `ctxframe query` never needs it

    ids = functions["id"].to_list()
    s = functions["line_start"].cast(pl.Int64).to_numpy().copy()
    e = functions["line_end"].cast(pl.Int64).to_numpy().copy()
    alive = np.ones(len(ids), dtype=bool)
    hit_f: list = []
    hit_c: list[int] = []
    shas: list[str] = []
    for (_commit, sha), group in hunks.group_by(["commit", "sha"], maintain_order=True):
        if not alive.any():
            break
        shas.append(sha)
        g = group.drop_nulls("new_start")
        if g.is_empty():
            continue
        os_, oc = g["old_start"].to_numpy(), g["old_count"].to_numpy()
        ns, nc = g["new_start"].to_numpy(), g["new_count"].to_numpy()
        last_new = ns + np.maximum(nc, 1) - 1  # a deletion sits after new line `ns`
        # touched: new lines of a hunk inside the range, or lines deleted inside it
        inserted = (
            (nc[None, :] > 0) & (ns[None, :] <= e[:, None]) & (last_new[None, :] >= s[:, None])
        )
        deleted = (nc[None, :] == 0) & (ns[None, :] >= s[:, None]) & (ns[None, :] < e[:, None])
        touched = (inserted | deleted).any(axis=1) & alive
        rows = np.nonzero(touched)[0]
        if rows.size:
            hit_f.append(rows)
            hit_c.extend([len(shas) - 1] * rows.size)
        # the range in the file before this commit
        delta = nc - oc
        before_s = last_new[None, :] < s[:, None]
        before_e = last_new[None, :] < e[:, None]
        new_s = s - (before_s * delta[None, :]).sum(axis=1)
        new_e = e - (before_e * delta[None, :]).sum(axis=1)
        in_s = (nc[None, :] > 0) & (ns[None, :] <= s[:, None]) & (last_new[None, :] >= s[:, None])
        in_e = (nc[None, :] > 0) & (ns[None, :] <= e[:, None]) & (last_new[None, :] >= e[:, None])
        first_in = np.where(in_s.any(axis=1), in_s.argmax(axis=1), -1)
        last_in = np.where(in_e.any(axis=1), in_e.shape[1] - 1 - in_e[:, ::-1].argmax(axis=1), -1)
        k = first_in >= 0
        new_s[k] = np.where(oc[first_in[k]] > 0, os_[first_in[k]], os_[first_in[k]] + 1)
        k = last_in >= 0
        new_e[k] = np.where(oc[last_in[k]] > 0, os_[last_in[k]] + oc[last_in[k]] - 1,
                            os_[last_in[k]])  # fmt: skip
        born = new_e < new_s  # the commit wrote the whole range: nothing of it was there
        alive &= ~born
        s, e = new_s, new_e
    if not hit_f:
        return pl.DataFrame(schema={"id": pl.String, "sha": pl.String})
    f = np.concatenate(hit_f)
    return pl.DataFrame(
        {"id": [ids[i] for i in f], "sha": [shas[c] for c in hit_c]},
        schema={"id": pl.String, "sha": pl.String},
    )


def function_history(root: str, path: str, functions: pl.DataFrame,
                     head: str = "HEAD") -> pl.DataFrame:  # fmt: skip
    """Per function of `path` (`functions`: id, line_start, line_end): revisions, authors,
    first and last change, last author (FUNCTION_HISTORY)."""
    if functions.is_empty():
        return pl.DataFrame(schema=FUNCTION_HISTORY)
    hunks = file_hunks(root, path, head)
    hits = track(functions, hunks)
    facts = hunks.select("sha", "author", "time").unique("sha")
    rows = hits.join(facts, on="sha").sort("time", descending=True)
    per = rows.group_by("id").agg(
        revisions=pl.col("sha").n_unique().cast(pl.Int64),
        authors=pl.col("author").n_unique().cast(pl.Int64),
        first_change=pl.col("time").min(),
        last_change=pl.col("time").max(),
        last_author=pl.col("author").first(),
    )
    out = functions.select("id").join(per, on="id", how="left").with_columns(
        pl.col("revisions", "authors").fill_null(0)
    )
    return out.select(FUNCTION_HISTORY.names()).cast(FUNCTION_HISTORY)  # type: ignore[arg-type]


def blame_history(root: str, path: str, functions: pl.DataFrame) -> pl.DataFrame:
    """The `git blame` alternative (kept for the measurement in bench/history_bench.py): per
    function, the distinct commits and authors that last wrote its surviving lines."""
    cmd = [*_GIT, "-C", root, "blame", "--porcelain", "HEAD", "--", path]
    proc = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise GitError("git blame failed")
    lines = pl.Series("l", proc.stdout.decode("utf-8", "backslashreplace").split("\n"))
    heads = lines.to_frame().filter(pl.col("l").str.contains(r"^[0-9a-f]{40} \d+ \d+"))
    parts = heads["l"].str.split(" ")
    per_line = pl.DataFrame({
        "sha": parts.list.get(0), "line": parts.list.get(2).cast(pl.Int64),
    })  # fmt: skip
    joined = functions.join_where(
        per_line, pl.col("line") >= pl.col("line_start"), pl.col("line") <= pl.col("line_end")
    )
    return joined.group_by("id").agg(revisions=pl.col("sha").n_unique().cast(pl.Int64))

"""Read a repository's history with `git log --numstat -z` into two frames, `commits` and
`changes` (docs/schema.md), parsed by Polars expressions over the NUL-separated output.

`git` itself reads the history: measured on pytest's first 3,000 commits, libgit2 through
pygit2 (a tree diff and line stats per commit) took 4.5-4.7 s where `git log --numstat` took
1.2-1.7 s. A repository's history is read whole once and then only its new commits; a
rewritten history (the stored head is no longer an ancestor of HEAD) is read again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
import tempfile
from dataclasses import dataclass

import polars as pl

COMMITS = pl.Schema(
    {
        "sha": pl.String,
        "parents": pl.List(pl.String),
        "author_time": pl.Datetime("ms", "UTC"),
        "committer_time": pl.Datetime("ms", "UTC"),
        "author_name": pl.String,
        "author_email": pl.String,
        "subject": pl.String,
    }
)
CHANGES = pl.Schema(
    {
        "sha": pl.String,
        "path": pl.String,
        "added": pl.Int32,  # null for a binary file
        "deleted": pl.Int32,
        "old_path": pl.String,  # the rename's source; null when not renamed
    }
)
FORMAT = 1  # the layout of the tables and of meta.json's `history`: another one is re-read

_HEADER = "%x01%H%x1f%P%x1f%at%x1f%ct%x1f%aN%x1f%aE%x1f%s"
_FIELDS = ("sha", "parents", "author_time", "committer_time", "author_name", "author_email",
           "subject")  # fmt: skip
# no pager, colour, external diff, text conversion or signature check: the bytes git stores
_GIT = ["git", "-c", "core.quotepath=off", "-c", "log.showSignature=false",
        "-c", "diff.renames=true", "--no-pager"]  # fmt: skip
_LOG = ["log", "--numstat", "-z", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
        "--relative", f"--format={_HEADER}"]  # fmt: skip


class GitError(RuntimeError):
    """`git` failed or is missing; the message is git's first line."""


def _git(root: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        out = subprocess.run(
            [*_GIT, "-C", root, *args], capture_output=True, env=env, stdin=subprocess.DEVNULL
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if check and out.returncode != 0:
        text = out.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"]
        raise GitError(f"git {args[0]} failed: {text[0]}")
    return out


@dataclass(frozen=True)
class Head:
    """Where a work tree's history stands: HEAD's commit and the tree's place in the
    repository (`prefix`, '' at the top, else `sub/dir/`)."""

    sha: str
    prefix: str


def head_of(root: str) -> Head | None:
    """HEAD of the repository holding `root`, None outside git or before a first commit."""
    try:
        out = _git(root, "rev-parse", "--show-prefix", "--verify", "-q", "HEAD", check=False)
    except GitError:
        return None
    lines = out.stdout.decode("utf-8", "backslashreplace").split("\n")
    if out.returncode != 0 or len(lines) < 2 or len(lines[1]) < 40:
        return None
    return Head(sha=lines[1].strip(), prefix=lines[0].strip())


def is_ancestor(root: str, old: str, new: str) -> bool:
    """Whether commit `old` is reachable from `new` (false when `old` is gone)."""
    out = _git(root, "merge-base", "--is-ancestor", old, new, check=False)
    return out.returncode == 0


def count(root: str, revs: list[str], since: int | None = None, prefix: str = "") -> int:
    """How many commits `git log REVS` lists (`rev-list --count`: no diff is computed)."""
    args = ["rev-list", "--count", *(_since(since)), *revs]
    out = _git(root, *args, "--", *(["."] if prefix else []))
    return int(out.stdout.strip() or 0)


def resolve_since(root: str, since: str | None) -> int | None:
    """A `since` bound (any date git reads: `2024-01-01`, `2 years ago`) as a Unix time."""
    if not since:
        return None
    out = _git(root, "rev-parse", f"--since={since}")
    text = out.stdout.decode().strip()
    if not text.startswith("--max-age="):
        raise GitError(f"git does not read {since!r} as a date")
    return int(text.split("=", 1)[1])


def _since(since: int | None) -> list[str]:
    return [f"--max-age={since}"] if since is not None else []


def log_command(root: str, revs: list[str], since: int | None = None,
                max_commits: int | None = None, prefix: str = "") -> list[str]:  # fmt: skip
    """The `git log` command line that reads `revs` (a work tree below the top: only its
    files, named from it)."""
    bounds = [*_since(since), *([f"--max-count={max_commits}"] if max_commits else [])]
    where = ["--", "."] if prefix else []
    return [*_GIT, "-C", root, *_LOG, *bounds, *revs, *where]


def read_log(root: str, revs: list[str], since: int | None = None,
             max_commits: int | None = None, prefix: str = "",
             nice: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:  # fmt: skip
    """The commits `git log REVS` lists (newest first) and their changed files."""
    cmd = log_command(root, revs, since, max_commits, prefix)
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    # git writes into a scratch file, never blocked by a pipe this process reads late
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            code = subprocess.run(
                cmd, stdout=out, stderr=err, env=env, stdin=subprocess.DEVNULL,
                preexec_fn=(lambda: os.nice(nice)) if nice else None,
            ).returncode  # fmt: skip
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
        if code != 0:
            err.seek(0)
            text = err.read().decode("utf-8", "replace").strip().splitlines() or ["no output"]
            raise GitError(f"git log failed: {text[0]}")
        out.seek(0)
        data = out.read()
    return parse_log(data)


def parse_log(data: bytes) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`git log --numstat -z --format=<_HEADER>` output as (commits, changes).

    The output is one NUL-separated stream: a commit's header (starting with \\x01, fields
    split by \\x1f), then its files, `added\\tdeleted\\tpath`, or for a rename
    `added\\tdeleted\\t` followed by the source and the destination as two more items; the
    first file of a commit follows a newline."""
    if not data:
        return pl.DataFrame(schema=COMMITS), pl.DataFrame(schema=CHANGES)
    # bytes that are not UTF-8 (a path, a name) are written \\xNN, as the files table does
    items = pl.Series("t", data.decode("utf-8", "backslashreplace").split("\0"), pl.String)
    tok = items.to_frame().with_columns(pl.col("t").str.strip_prefix("\n"))
    header = pl.col("t").str.starts_with("\x01")
    stat = pl.col("t").str.extract_groups(r"^(?s)(\d+|-)\t(\d+|-)\t(.*)$")
    tok = tok.with_columns(
        header=header,
        commit=header.cum_sum() - 1,
        stat=pl.when(~header).then(stat),
    )
    # a rename's stat has an empty path: its source and destination are the next two items
    renamed = pl.col("stat").struct.field("3") == ""
    tok = tok.with_columns(renamed=renamed.fill_null(False))
    taken = pl.col("renamed").shift(1, fill_value=False) | pl.col("renamed").shift(
        2, fill_value=False
    )
    tok = tok.with_columns(
        renamed=pl.col("renamed") & ~taken,
        taken=taken,
        src=pl.col("t").shift(-1),
        dst=pl.col("t").shift(-2),
    )
    heads = tok.filter("header").select(
        "commit", f=pl.col("t").str.strip_prefix("\x01").str.splitn("\x1f", len(_FIELDS))
    )
    fields = heads["f"].struct.rename_fields(list(_FIELDS))
    commits = fields.struct.unnest().select(
        "sha",
        parents=pl.col("parents").str.split(" ").list.eval(pl.element().filter(pl.element() != "")),
        author_time=pl.from_epoch(pl.col("author_time").cast(pl.Int64), "s"),
        committer_time=pl.from_epoch(pl.col("committer_time").cast(pl.Int64), "s"),
        author_name="author_name",
        author_email="author_email",
        subject=pl.col("subject").fill_null(""),
    )
    commits = commits.cast(COMMITS)  # type: ignore[arg-type]
    shas = commits["sha"]
    files = tok.filter(
        ~pl.col("header") & ~pl.col("taken") & pl.col("stat").struct.field("3").is_not_null()
    )
    changes = files.select(
        sha=shas.gather(files["commit"].cast(pl.UInt32)),
        path=pl.when("renamed").then("dst").otherwise(pl.col("stat").struct.field("3")),
        added=pl.col("stat").struct.field("1").cast(pl.Int32, strict=False),
        deleted=pl.col("stat").struct.field("2").cast(pl.Int32, strict=False),
        old_path=pl.when("renamed").then("src"),
    )
    return commits, changes.cast(CHANGES)  # type: ignore[arg-type]


# -- anonymous authors ---------------------------------------------------------------------------


def anonymized(commits: pl.DataFrame, key: bytes) -> pl.DataFrame:
    """Author names and emails replaced by a keyed hash (HMAC-SHA256): the same person stays
    one author, and without the key no name can be recovered by hashing guesses."""
    def keyed(value: str) -> str:
        return hmac.new(key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()

    out = []
    for col, fmt in (("author_name", "author-{}"), ("author_email", "{}@anonymous")):
        distinct = commits[col].drop_nulls().unique()  # one hash per person, not per row
        mapping = {v: fmt.format(keyed(v)[:16]) for v in distinct.to_list()}
        out.append(pl.col(col).replace_strict(mapping, default=None, return_dtype=pl.String))
    return commits.with_columns(out)


def key_fingerprint(key: bytes) -> str:
    """What the store records of the key: enough to tell that another key was used, nothing
    that finds the key or a name."""
    return hmac.new(key, b"ctxframe history key fingerprint", hashlib.sha256).hexdigest()[:16]

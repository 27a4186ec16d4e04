"""Bring stored history tables up to date with HEAD: keep them, read only the new commits,
or read everything again (a rewritten history, other bounds, another key).

The state of a stored history is a small dict kept in the store's meta.json (`history`):
`head` (the commit it was read at), `prefix` (the work tree's place in the repository),
`since`, `since_time`, `max_commits`, `anonymized` (the key's fingerprint, or null),
`commits`, `changes` and `format`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ctxframe._history import gitlog
from ctxframe._history.settings import HistorySettings, anonymize_key

OFF, NONE, KEEP, APPEND, FULL = "off", "none", "keep", "append", "full"
ASK = object()  # `plan(head_sha=ASK)`: HEAD unknown, ask git


@dataclass
class Plan:
    """What an index run does with the history: `off` (turned off: no tables), `none` (not a
    git repository, or no commit yet), `keep` (as stored), `append` (read `revs`, the new
    commits, and put them before the stored ones) or `full` (read `revs` whole)."""

    action: str
    head: gitlog.Head | None = None
    revs: list[str] = field(default_factory=list)
    since_time: int | None = None
    fingerprint: str | None = None
    reason: str = ""


def plan(root: str, s: HistorySettings, stored: dict | None, head_sha: Any = ASK,
         key: Callable[[], bytes] = anonymize_key) -> Plan:  # fmt: skip
    """Decide cheaply: a `git rev-parse` at most, none when `head_sha` (HEAD's commit as the
    repository's files say, None outside git) equals the stored head and nothing else
    changed, or is None."""
    if not s.enabled:
        return Plan(OFF, reason="history is turned off")
    if head_sha is None:
        return Plan(NONE, reason="not a git repository, or no commit yet")
    fingerprint = gitlog.key_fingerprint(key()) if s.anonymize else None
    same_terms = (
        stored is not None
        and stored.get("format") == gitlog.FORMAT
        and stored.get("since") == s.since
        and stored.get("max_commits") == s.max_commits
        and stored.get("anonymized") == fingerprint
    )
    if same_terms and head_sha is not ASK and stored.get("head") == head_sha:
        head = gitlog.Head(head_sha, stored.get("prefix") or "")
        return Plan(KEEP, head=head, since_time=stored.get("since_time"), fingerprint=fingerprint)
    head = gitlog.head_of(root)
    if head is None:
        return Plan(NONE, reason="not a git repository, or no commit yet")
    since_time = gitlog.resolve_since(root, s.since)
    if same_terms and stored.get("prefix", "") == head.prefix:
        old = stored.get("head")
        if old == head.sha:
            return Plan(KEEP, head=head, since_time=stored.get("since_time"),
                        fingerprint=fingerprint)  # fmt: skip
        if old and gitlog.is_ancestor(root, old, head.sha):
            return Plan(APPEND, head=head, revs=[head.sha, f"^{old}"], since_time=since_time,
                        fingerprint=fingerprint, reason="new commits")  # fmt: skip
        why = "the history was rewritten" if old else "first read"
    else:
        why = "first read" if stored is None else "other settings"
    return Plan(FULL, head=head, revs=[head.sha], since_time=since_time, fingerprint=fingerprint,
                reason=why)  # fmt: skip


def to_read(root: str, p: Plan, s: HistorySettings) -> int:
    """How many commits the plan reads (no diff computed: quick)."""
    if p.action not in (APPEND, FULL):
        return 0
    n = gitlog.count(root, p.revs, p.since_time, p.head.prefix if p.head else "")
    return min(n, s.max_commits) if s.max_commits else n


def read(root: str, p: Plan, s: HistorySettings,
         stored: Callable[[], tuple[pl.DataFrame, pl.DataFrame]] | None = None,
         key: Callable[[], bytes] = anonymize_key,
         nice: int = 0) -> tuple[pl.DataFrame, pl.DataFrame, dict]:  # fmt: skip
    """The tables after the plan (`append` reads the stored ones through `stored()`), and the
    state to record."""
    assert p.action in (APPEND, FULL) and p.head is not None
    commits, changes = gitlog.read_log(
        root, p.revs, p.since_time, s.max_commits, p.head.prefix, nice=nice
    )
    if s.anonymize:
        commits = gitlog.anonymized(commits, key())
    if p.action == APPEND and stored is not None:
        old_commits, old_changes = stored()
        commits = pl.concat([commits, old_commits])
        changes = pl.concat([changes, old_changes])
        commits, changes = bounded(commits, changes, p.since_time, s.max_commits)
    return commits, changes, state(p, s, commits, changes)


def bounded(commits: pl.DataFrame, changes: pl.DataFrame, since_time: int | None,
            max_commits: int | None) -> tuple[pl.DataFrame, pl.DataFrame]:  # fmt: skip
    """The commits within the bounds (newest first, as `git log` lists them) and their
    changes."""
    before = commits.height
    if since_time is not None:
        cut = pl.from_epoch(pl.lit(since_time), "s").dt.replace_time_zone("UTC")
        commits = commits.filter(pl.col("committer_time") >= cut)
    if max_commits is not None:
        commits = commits.head(max_commits)
    if commits.height != before:
        changes = changes.filter(pl.col("sha").is_in(commits["sha"].implode()))
    return commits, changes


def state(p: Plan, s: HistorySettings, commits: pl.DataFrame, changes: pl.DataFrame) -> dict:
    assert p.head is not None
    return {
        "format": gitlog.FORMAT,
        "head": p.head.sha,
        "prefix": p.head.prefix,
        "since": s.since,
        "since_time": p.since_time,
        "max_commits": s.max_commits,
        "anonymized": p.fingerprint,
        "commits": commits.height,
        "changes": changes.height,
    }

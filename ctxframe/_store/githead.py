"""The commit a work tree's HEAD points at, read from the repository's own files: `git
rev-parse HEAD` as a process costs 5-30 ms on every index, twice. `git` itself answers what
this does not read (a reftable repository, a ref in no file, `GIT_DIR` set)."""

from __future__ import annotations

import os
import re
import subprocess

from ctxframe._core.safeio import read_regular

_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_UNREAD = object()  # the files do not say: ask git


def git_head(root: str) -> str | None:
    """The commit HEAD points at, or None outside a git work tree."""
    head = _from_files(root) if not os.environ.get("GIT_DIR") else _UNREAD
    return _from_git(root) if head is _UNREAD else head


def _from_git(root: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _from_files(root: str):
    """HEAD's commit, None when no repository holds `root` (git stops at a file system's
    boundary too), or _UNREAD."""
    try:
        gitdir = _git_dir(os.path.realpath(root))
        if gitdir is None:
            return None
        common = gitdir
        if os.path.isfile(os.path.join(gitdir, "commondir")):  # a linked work tree
            with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
                common = os.path.normpath(os.path.join(gitdir, f.read().strip()))
        # never blocks: a FIFO in place of HEAD is refused (OSError), not waited on
        head = read_regular(os.path.join(gitdir, "HEAD"), 4096).decode("utf-8").strip()
        if _SHA.fullmatch(head):  # detached
            return head
        if not head.startswith("ref: "):
            return _UNREAD
        return _ref(common, head[5:].strip())
    except (OSError, UnicodeDecodeError):
        return _UNREAD


def _git_dir(path: str) -> str | None:
    """The git directory of the work tree holding `path` (`.git`, or where a `.git` file
    points), None when there is none up to the file system's boundary."""
    dev = os.stat(path).st_dev
    while True:
        dot = os.path.join(path, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            with open(dot, encoding="utf-8") as f:
                line = f.read().strip()
            if not line.startswith("gitdir: "):
                raise OSError("unread .git file")
            return os.path.normpath(os.path.join(path, line[8:].strip()))
        parent = os.path.dirname(path)
        if parent == path or os.stat(parent).st_dev != dev:
            return None
        path = parent


def _ref(common: str, name: str):
    """A branch's commit from its loose file or `packed-refs`; _UNREAD when neither has it
    (an unborn branch, a reftable repository)."""
    if name.startswith("refs/") and ".." not in name:
        loose = os.path.join(common, *name.split("/"))
        if os.path.isfile(loose):
            with open(loose, encoding="utf-8") as f:
                sha = f.read().strip()
            return sha if _SHA.fullmatch(sha) else _UNREAD
        packed = os.path.join(common, "packed-refs")
        if os.path.isfile(packed):
            with open(packed, encoding="utf-8") as f:
                for line in f:
                    sha, _, ref = line.strip().partition(" ")
                    if ref == name and _SHA.fullmatch(sha):
                        return sha
    return _UNREAD

"""HEAD's commit read from a repository's files (ctxframe._store.githead) equals what `git
rev-parse HEAD` says, in each layout a work tree comes in."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ctxframe._store.githead import _UNREAD, _from_files, git_head


def _git(cwd: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    out = subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    _git(tmp_path, "init", "-q", str(repo))
    (repo / "pkg" / "a.py").write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    return repo


def _packed(repo: Path) -> Path:
    _git(repo, "pack-refs", "--all")
    return repo


def _detached(repo: Path) -> Path:
    (repo / "b.py").write_text("y = 2\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "two")
    _git(repo, "checkout", "-q", "--detach", "HEAD~1")
    return repo


def _subdirectory(repo: Path) -> Path:
    return repo / "pkg"


def _worktree(repo: Path) -> Path:
    _git(repo, "worktree", "add", "-q", "-b", "side", str(repo.parent / "side"))
    (repo.parent / "side" / "c.py").write_text("z = 3\n")
    _git(repo.parent / "side", "add", ".")
    _git(repo.parent / "side", "commit", "-q", "-m", "side")
    return repo.parent / "side"


LAYOUTS = [
    ("a branch in a loose ref", lambda r: r),
    ("a branch in packed-refs", _packed),
    ("a detached HEAD", _detached),
    ("a subdirectory of the work tree", _subdirectory),
    ("a linked work tree", _worktree),
]


@pytest.mark.parametrize("make", [m for _, m in LAYOUTS], ids=[n for n, _ in LAYOUTS])
def test_head_from_files_matches_git(tmp_path: Path, make) -> None:
    root = make(_repo(tmp_path))
    want = _git(root, "rev-parse", "HEAD")
    assert _from_files(str(root)) == want  # read, not asked
    assert git_head(str(root)) == want


def test_outside_a_repository_and_unborn(tmp_path: Path) -> None:
    """No repository: None without a process. A branch with no commit yet: the files do not
    say, and git answers None."""
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _from_files(str(plain)) is None and git_head(str(plain)) is None
    _git(tmp_path, "init", "-q", str(tmp_path / "new"))
    assert _from_files(str(tmp_path / "new")) is _UNREAD
    assert git_head(str(tmp_path / "new")) is None

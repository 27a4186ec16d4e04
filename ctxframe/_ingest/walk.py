"""Find the files to index: honour .gitignore (every level), .git/info/exclude, .ctxframeignore,
config `exclude` globs and built-in ignores; never follow a symlink out of the root."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

# Built-in ignores are checked by name (cheap, cannot be negated by a .gitignore).
BUILTIN_DIRS = frozenset(
    [
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        ".ctxframe",
        "node_modules",
        "bower_components",
        "vendor",
        "dist",
        "build",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        ".eggs",
        ".idea",
        ".vscode",
    ]
)
BUILTIN_DIR_SUFFIXES = (".egg-info",)
BUILTIN_FILES = frozenset(
    [
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "uv.lock",
        "Pipfile.lock",
        "Cargo.lock",
        "composer.lock",
        "Gemfile.lock",
        "go.sum",
        ".DS_Store",
    ]
)
BUILTIN_FILE_SUFFIXES = (".min.js", ".min.css", ".bundle.js", ".js.map", ".css.map", ".pyc")

IGNORE_FILES = (".gitignore", ".ctxframeignore")


@dataclass
class WalkResult:
    """Files to consider, with the stat facts incremental indexing compares, and skips."""

    files: list[tuple[str, int, int]] = field(default_factory=list)  # path, size, mtime_ns
    skipped: list[tuple[str, str]] = field(default_factory=list)  # path, reason


def _spec(lines: list[str]) -> pathspec.PathSpec | None:
    lines = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return None
    import pathspec  # only when some ignore file has a pattern

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return []


def _utf8_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # bytes the file system decoding could not read as UTF-8
        return False
    return True


def escaped_name(rel: str) -> str:
    """A path whose bytes are not UTF-8 as text: each byte that is not written `\\xNN`."""
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


def walk(root: str, exclude: list[str] | tuple[str, ...] = ()) -> WalkResult:
    """Walk `root` top-down; an ignore file applies to its directory and below, last match wins."""
    root = os.path.realpath(root)
    out = WalkResult()
    base = _spec(list(exclude))
    rootwide = _spec(_read_lines(os.path.join(root, ".git", "info", "exclude")))
    # stack of (prefix relative to root with trailing slash, spec)
    scoped: list[tuple[str, pathspec.PathSpec]] = [("", s) for s in (base, rootwide) if s]
    seen_dirs: set[tuple[int, int]] = set()

    def ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.PathSpec]]) -> bool:
        verdict = False
        for prefix, spec in specs:
            if not rel.startswith(prefix):
                continue
            sub = rel[len(prefix) :] + ("/" if is_dir else "")
            res = spec.check_file(sub)
            if res.include is not None:
                verdict = res.include
        return verdict

    def visit(dir_abs: str, dir_rel: str, specs: list[tuple[str, pathspec.PathSpec]]) -> None:
        try:
            st = os.stat(dir_abs)
        except OSError:
            return
        if (st.st_dev, st.st_ino) in seen_dirs:
            return
        seen_dirs.add((st.st_dev, st.st_ino))
        prefix = f"{dir_rel}/" if dir_rel else ""
        try:
            entries = sorted(os.scandir(dir_abs), key=lambda e: e.name)
        except OSError as exc:
            out.skipped.append((dir_rel or ".", f"unreadable directory: {exc.strerror}"))
            return
        names = {e.name for e in entries}
        local = [
            s
            for name in IGNORE_FILES
            if name in names and (s := _spec(_read_lines(os.path.join(dir_abs, name))))
        ]
        if local:
            specs = specs + [(prefix, s) for s in local]
        for entry in entries:
            rel = prefix + entry.name
            if not _utf8_name(entry.name):  # not storable as text: skipped, named losslessly
                out.skipped.append((escaped_name(rel), "file name is not valid UTF-8"))
                continue
            try:
                if entry.is_symlink():
                    if entry.name in BUILTIN_DIRS or ignored(rel, entry.is_dir(), specs):
                        continue
                    target = os.path.realpath(entry.path)
                    inside = target == root or target.startswith(root + os.sep)
                    out.skipped.append(
                        (
                            rel,
                            "symlink inside root (target indexed)"
                            if inside
                            else "symlink out of root",
                        )
                    )
                    continue
                if entry.is_dir(follow_symlinks=False):
                    name = entry.name
                    if name in BUILTIN_DIRS or name.endswith(BUILTIN_DIR_SUFFIXES):
                        continue
                    if not ignored(rel, True, specs):
                        visit(entry.path, rel, specs)
                elif entry.is_file(follow_symlinks=False):
                    name = entry.name
                    if name in BUILTIN_FILES or name.endswith(BUILTIN_FILE_SUFFIXES):
                        continue
                    if not ignored(rel, False, specs):
                        st = entry.stat(follow_symlinks=False)
                        out.files.append((rel, st.st_size, st.st_mtime_ns))
            except OSError as exc:
                out.skipped.append((rel, f"unreadable: {exc.strerror}"))

    visit(root, "", scoped)
    return out

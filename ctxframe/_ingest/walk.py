"""Find the files to index: honour .gitignore (every level), .git/info/exclude, .ctxframeignore,
config `exclude` globs and built-in ignores; never follow a symlink out of the root.

`walk` lists the whole tree; `walk_paths` applies the same rules to a few paths only (a
watcher's events), and `Rules` answers "would the walk leave this path out?" one path at a time.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxframe._core.safeio import read_regular

if TYPE_CHECKING:
    import pathspec

    Specs = list[tuple[str, pathspec.PathSpec]]  # (prefix relative to root with "/", spec)

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
GIT_EXCLUDE = os.path.join(".git", "info", "exclude")


@dataclass
class WalkResult:
    """Files to consider, with the stat facts incremental indexing compares, and skips."""

    files: list[tuple[str, int, int]] = field(default_factory=list)  # path, size, mtime_ns
    skipped: list[tuple[str, str]] = field(default_factory=list)  # path, reason


def _spec(lines: list[str], source: str = "an ignore file") -> pathspec.PathSpec | None:
    """The patterns of one ignore file; a line git would not read as a pattern (a lone `!`,
    a bad range such as `[z-a]`) is skipped with one warning line, instead of failing the
    whole walk."""
    lines = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return None
    import pathspec  # only when some ignore file has a pattern

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):
        good = []
        for ln in lines:
            why = _invalid(ln)
            if why is None:
                good.append(ln)
            else:
                _warn(f"{source}: invalid ignore pattern {ln.strip()!r} skipped ({why})")
        return pathspec.GitIgnoreSpec.from_lines(good) if good else None


_WARNED: set[str] = set()


def _warn(line: str) -> None:
    """One warning line on stderr, once per process."""
    if line not in _WARNED:
        _WARNED.add(line)
        print(f"ctxframe: warning: {line}", file=sys.stderr)


def _invalid(line: str) -> str | None:
    """Why one pattern line cannot be used, or None when it can."""
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error) as exc:
        return str(exc).split("\n", 1)[0][:80] or type(exc).__name__
    return None


def _read_lines(path: str) -> list[str]:
    """An ignore file's lines; [] when it cannot be read (a FIFO is refused, never waited on)."""
    try:
        return read_regular(path).decode("utf-8", "replace").splitlines()
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


def builtin_dir(name: str) -> bool:
    """A directory name the walk never enters, whatever the ignore files say."""
    return name in BUILTIN_DIRS or name.endswith(BUILTIN_DIR_SUFFIXES)


def builtin_file(name: str) -> bool:
    """A file name the walk never lists, whatever the ignore files say."""
    return name in BUILTIN_FILES or name.endswith(BUILTIN_FILE_SUFFIXES)


def _ignored(rel: str, is_dir: bool, specs: Specs) -> bool:
    """An ignore file applies to its directory and below; the last match wins."""
    verdict = False
    for prefix, spec in specs:
        if not rel.startswith(prefix):
            continue
        sub = rel[len(prefix) :] + ("/" if is_dir else "")
        res = spec.check_file(sub)
        if res.include is not None:
            verdict = res.include
    return verdict


def _top_specs(root: str, exclude: Iterable[str]) -> Specs:
    """Root-wide rules: config `exclude` globs, then .git/info/exclude."""
    base = _spec(list(exclude), "config exclude")
    rootwide = _spec(_read_lines(os.path.join(root, GIT_EXCLUDE)), GIT_EXCLUDE)
    return [("", s) for s in (base, rootwide) if s]


def _local_specs(dir_abs: str, prefix: str, present: Iterable[str]) -> Specs:
    """The directory's own ignore files (those of IGNORE_FILES named in `present`)."""
    return [
        (prefix, s)
        for name in IGNORE_FILES
        if name in present
        and (s := _spec(_read_lines(os.path.join(dir_abs, name)), f"{prefix}{name}"))
    ]


class Rules:
    """The walk's ignore rules over one root, asked one path at a time: built-in names,
    `exclude` globs, .git/info/exclude and every .gitignore/.ctxframeignore from the root down
    to the path, exactly as `walk` applies them. Each directory's rules are read once.

    With `on_disk`, a directory also has to be a real directory (not a symlink, not gone) for
    the walk to enter it, as `walk` finds; without, only names and patterns decide (a watcher
    filtering events about paths that may be gone)."""

    def __init__(self, root: str, exclude: Iterable[str] = (), *, on_disk: bool = False):
        self.root = os.path.realpath(root)
        self.on_disk = on_disk
        self._top = _top_specs(self.root, exclude)
        self._dirs: dict[str, Specs | None] = {}

    def specs_in(self, dir_rel: str) -> Specs | None:
        """The rules in force inside a directory ("" is the root), or None when the walk
        never enters it."""
        if dir_rel in self._dirs:
            return self._dirs[dir_rel]
        if not dir_rel:
            specs: Specs | None = self._top + _local_specs(self.root, "", IGNORE_FILES)
        else:
            parent_rel, name = _split(dir_rel)
            parent = self.specs_in(parent_rel)
            full = os.path.join(self.root, dir_rel)
            if (
                parent is None
                or not _utf8_name(name)
                or builtin_dir(name)
                or (self.on_disk and (os.path.islink(full) or not os.path.isdir(full)))
                or _ignored(dir_rel, True, parent)
            ):
                specs = None
            else:
                specs = parent + _local_specs(full, dir_rel + "/", IGNORE_FILES)
        self._dirs[dir_rel] = specs
        return specs

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        """Would the walk leave this path out (it, or a directory above it, is ignored)?"""
        parent_rel, name = _split(rel)
        specs = self.specs_in(parent_rel)
        if specs is None:
            return True
        if is_dir:
            return builtin_dir(name) or _ignored(rel, True, specs)
        return builtin_file(name) or _ignored(rel, False, specs)


def _split(rel: str) -> tuple[str, str]:
    head, _, tail = rel.rpartition("/")
    return head, tail


class _Walker:
    """One walk: what it found so far, and the directories it has been in (loops end)."""

    def __init__(self, root: str):
        self.root = root
        self.out = WalkResult()
        self.seen_dirs: set[tuple[int, int]] = set()

    def visit(self, dir_abs: str, dir_rel: str, specs: Specs, only: set[str] | None = None):
        """List a directory under the rules in force above it (`specs`), descending into
        the directories it keeps; `only` limits it to these entry names (and then `specs`
        already holds the directory's own ignore files)."""
        try:
            st = os.stat(dir_abs)
        except OSError:
            return
        if only is None:
            if (st.st_dev, st.st_ino) in self.seen_dirs:
                return
            self.seen_dirs.add((st.st_dev, st.st_ino))
        prefix = f"{dir_rel}/" if dir_rel else ""
        try:
            entries = sorted(os.scandir(dir_abs), key=lambda e: e.name)
        except OSError as exc:
            if only is None:
                self.out.skipped.append((dir_rel or ".", f"unreadable directory: {exc.strerror}"))
            return
        if only is None:
            local = _local_specs(dir_abs, prefix, {e.name for e in entries})
            specs = specs + local if local else specs
        else:
            # a name that is not UTF-8 is known by its escaped form (see `escaped_name`)
            entries = [e for e in entries if e.name in only or escaped_name(e.name) in only]
        for entry in entries:
            self._entry(entry, prefix + entry.name, specs)

    def _entry(self, entry: os.DirEntry, rel: str, specs: Specs) -> None:
        out, root = self.out, self.root
        if not _utf8_name(entry.name):  # not storable as text: skipped, named losslessly
            out.skipped.append((escaped_name(rel), "file name is not valid UTF-8"))
            return
        try:
            if entry.is_symlink():
                if entry.name in BUILTIN_DIRS or _ignored(rel, entry.is_dir(), specs):
                    return
                target = os.path.realpath(entry.path)
                inside = target == root or target.startswith(root + os.sep)
                why = "symlink inside root (target indexed)" if inside else "symlink out of root"
                out.skipped.append((rel, why))
                return
            if entry.is_dir(follow_symlinks=False):
                if not builtin_dir(entry.name) and not _ignored(rel, True, specs):
                    self.visit(entry.path, rel, specs)
            elif (
                entry.is_file(follow_symlinks=False)
                and not builtin_file(entry.name)
                and not _ignored(rel, False, specs)
            ):
                st = entry.stat(follow_symlinks=False)
                out.files.append((rel, st.st_size, st.st_mtime_ns))
        except OSError as exc:
            out.skipped.append((rel, f"unreadable: {exc.strerror}"))


def walk(root: str, exclude: list[str] | tuple[str, ...] = ()) -> WalkResult:
    """Walk `root` top-down; an ignore file applies to its directory and below, last match wins."""
    root = os.path.realpath(root)
    walker = _Walker(root)
    walker.visit(root, "", _top_specs(root, exclude))
    return walker.out


def walk_paths(
    root: str, paths: Iterable[str], exclude: list[str] | tuple[str, ...] = ()
) -> WalkResult:
    """What `walk` would find at these repo-relative paths only: a file, a directory (walked
    whole) or a path that is gone (nothing), under the same rules — for a re-index that
    knows which paths changed."""
    root = os.path.realpath(root)
    wanted = {p.strip("/") for p in paths}
    if "" in wanted or "." in wanted:
        return walk(root, exclude)
    rules = Rules(root, exclude, on_disk=True)
    by_dir: dict[str, set[str]] = {}
    for rel in sorted(wanted):
        parts = rel.split("/")
        if any("/".join(parts[:i]) in wanted for i in range(1, len(parts))):
            continue  # inside another wanted directory: walked with it
        parent, name = _split(rel)
        by_dir.setdefault(parent, set()).add(name)
    walker = _Walker(root)
    for parent, names in sorted(by_dir.items()):
        specs = rules.specs_in(parent)
        if specs is not None:
            walker.visit(os.path.join(root, parent) if parent else root, parent, specs, names)
    return walker.out

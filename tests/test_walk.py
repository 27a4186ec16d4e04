"""Each ignore tier, symlinks and skip reasons of the walk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxframe._ingest.walk import walk


def _write(root: Path, rel: str, text: str = "x = 1\n") -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def _paths(root: Path, **kw) -> set[str]:
    return {p for p, _, _ in walk(str(root), **kw).files}


@pytest.mark.parametrize(
    ("setup", "ignored", "kept"),
    [
        # .gitignore at the root
        ({".gitignore": "*.log\n"}, ["debug.log", "sub/x.log"], ["a.py"]),
        # .gitignore in a subdirectory applies below it only
        ({"sub/.gitignore": "gen/\n"}, ["sub/gen/m.py"], ["gen/m.py", "a.py"]),
        # a deeper .gitignore can re-include what a higher one ignored
        ({".gitignore": "*.txt\n", "sub/.gitignore": "!keep.txt\n"}, ["n.txt"], ["sub/keep.txt"]),
        # a line git does not read as a pattern (a lone `!`) is skipped, the others hold
        ({".gitignore": "!\n*.log\n", "sub/.gitignore": "!\n"}, ["debug.log"], ["sub/a.py"]),
        # .git/info/exclude
        ({".git/info/exclude": "secret_dir/\n"}, ["secret_dir/a.py"], ["a.py"]),
        # .ctxframeignore
        ({".ctxframeignore": "legacy/\n"}, ["legacy/old.py"], ["a.py"]),
        # built-ins: VCS, node_modules, vendor, dist, build, venvs, caches, minified, locks
        (
            {},
            [
                ".git/config.py",
                "node_modules/x/index.js",
                "vendor/lib.go",
                "dist/app.js",
                "build/out.py",
                ".venv/lib/site.py",
                "venv/lib/site.py",
                "__pycache__/a.py",
                ".mypy_cache/a.py",
                "web/app.min.js",
                "package-lock.json",
                "poetry.lock",
                "go.sum",
                "pkg.egg-info/PKG-INFO",
            ],
            ["a.py", "web/app.js"],
        ),
    ],
)
def test_ignore_tiers(tmp_path: Path, setup: dict, ignored: list[str], kept: list[str]) -> None:
    for rel, text in setup.items():
        _write(tmp_path, rel, text)
    for rel in ignored + kept:
        _write(tmp_path, rel)
    found = _paths(tmp_path)
    assert not set(ignored) & found
    assert set(kept) <= found


def test_config_exclude(tmp_path: Path) -> None:
    _write(tmp_path, "optional-skills/a/x.py")
    _write(tmp_path, "app/y.py")
    assert _paths(tmp_path, exclude=["optional-skills/"]) == {"app/y.py"}


def test_symlinks_stay_inside_and_loops_end(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _write(outside, "leak.py")
    root = tmp_path / "repo"
    _write(root, "pkg/a.py")
    os.symlink(outside, root / "out_link")
    os.symlink(root / "pkg", root / "pkg" / "loop")
    os.symlink(outside / "leak.py", root / "leak.py")
    res = walk(str(root))
    paths = {p for p, _, _ in res.files}
    assert paths == {"pkg/a.py"}
    reasons = dict(res.skipped)
    assert reasons["out_link"] == "symlink out of root"
    assert reasons["leak.py"] == "symlink out of root"
    assert reasons["pkg/loop"].startswith("symlink inside root")


def test_sample_ignores(shop: Path) -> None:
    for rel in ("tmp/scratch.py", "debug.log", "legacy/old_refunds.py"):
        assert (shop / rel).is_file(), f"sample lost {rel}: the ignore test would be vacuous"
    found = _paths(shop)
    assert "tmp/scratch.py" not in found  # .gitignore
    assert "debug.log" not in found  # .gitignore
    assert "legacy/old_refunds.py" not in found  # .ctxframeignore
    assert "services/payments/refund_processor.py" in found

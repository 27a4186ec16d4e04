"""What a new user hit on a fresh clone: finding the index from a sub-directory, errors that
say what to do (one line, exit 2), nothing left behind, catalogs everywhere `--repo` goes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import ctxframe as cf
from ctxframe.cli import main

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "data-samples" / "catalog"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- the index is found upward, as git finds its repository ------------------------------------

VERBS = [
    ["query", "refund processor"],
    ["context", "refund processor", "--budget", "400"],
    ["card", "PaymentRefundProcessor.ProcessRefund"],
    ["affected", "PaymentRefundProcessor.ProcessRefund"],
    ["path", "create_refund", "PaymentRefundProcessor.ProcessRefund"],
    ["change-plan", "PaymentRefundProcessor.ProcessRefund"],
    ["explain", "services/payments/gateway.py"],
    ["hubs"],
    ["boundaries"],
    ["status"],
]


@pytest.mark.parametrize("argv", VERBS, ids=[v[0] for v in VERBS])
@pytest.mark.parametrize("how", ["cwd", "--repo"])
def test_every_verb_finds_the_index_from_a_sub_directory(
    capsys, monkeypatch, indexed_shop: Path, argv: list[str], how: str
) -> None:
    sub = indexed_shop / "services" / "payments"
    extra = ["--repo", str(sub)] if how == "--repo" else []
    if how == "cwd":
        monkeypatch.chdir(sub)
    code, out, err = run(capsys, *argv, *extra)
    assert "no ctxframe index" not in err and "run `ctxframe index`" not in err
    assert code in (0, 1) and out.strip(), err
    assert not (sub / ".ctxframe").exists()


def test_status_from_a_sub_directory_compares_the_whole_repository(
    capsys, monkeypatch, indexed_shop: Path
) -> None:
    monkeypatch.chdir(indexed_shop / "services")
    code, out, _ = run(capsys, "status", "--json")
    data = json.loads(out)
    assert code == 0 and data["fresh"] is True and data["root"] == str(indexed_shop.resolve())


def test_python_open_finds_the_index_upward(indexed_shop: Path) -> None:
    g = cf.open(str(indexed_shop / "web" / "server"))
    assert g.root == str(indexed_shop.resolve()) and g.card("create_refund").ok


def test_no_index_anywhere_names_the_directory_asked(capsys, tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    code, _, err = run(capsys, "query", "x", "--repo", str(tmp_path / "a" / "b"))
    assert code == 2 and err.count("\n") == 1
    assert f"{tmp_path / 'a' / 'b'}/.ctxframe/graph" in err


# -- errors: one line, exit 2, a path said once ---------------------------------------------------


def test_mcp_on_a_missing_directory_is_one_line_and_exit_2(capsys) -> None:
    code, out, err = run(capsys, "mcp", "--repo", "/definitely/not/here")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "/definitely/not/here is not a directory" in err


def test_mcp_without_an_index_names_the_store_once(tmp_path: Path) -> None:
    from ctxframe._apps.mcp import LiveGraph, call

    data, is_error = call(LiveGraph(str(tmp_path)), "hubs", {})
    message = data["error"]["message"]
    assert is_error and data["status"] == "not-indexed"
    assert message.count(".ctxframe/graph") == 1 and str(tmp_path) in message


def test_an_empty_directory_is_not_indexed_and_keeps_no_store(capsys, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "index", "--repo", str(empty))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "has no file to index" in err
    assert list(empty.iterdir()) == []
    with pytest.raises(cf.RepoNotFound, match="no file to index"):
        cf.index(str(empty), progress=False)
    assert list(empty.iterdir()) == []


def test_a_directory_whose_files_are_all_excluded_is_not_indexed(capsys, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "node_modules").mkdir(parents=True)
    (repo / "node_modules" / "x.js").write_text("export const x = 1;\n")
    code, _, err = run(capsys, "index", "--repo", str(repo))
    assert code == 2 and "has no file to index" in err and not (repo / ".ctxframe").exists()


def test_an_index_whose_files_were_all_deleted_empties(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    pass\n")
    cf.index(str(repo), progress=False)
    (repo / "a.py").unlink()
    assert cf.index(str(repo), progress=False).nodes.height == 0


# -- catalogs: every command that takes --repo ----------------------------------------------------


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    repos = tmp_path / "repos"
    shutil.copytree(CATALOG, repos, ignore=shutil.ignore_patterns(".ctxframe"))
    directory = tmp_path / "cat"
    cat = cf.catalog(str(directory))
    cat.add(str(repos / "core"), str(repos / "payments"))
    return directory


def test_status_of_a_catalog_is_each_repository(capsys, catalog_dir: Path) -> None:
    code, out, _ = run(capsys, "status", "--repo", str(catalog_dir))
    assert code == 0 and out.startswith(f"catalog {catalog_dir}: 2 repositories")
    assert "core: no ctxframe index" in out
    cf.catalog(str(catalog_dir)).index()
    code, out, _ = run(capsys, "status", "--repo", str(catalog_dir), "--json")
    data = json.loads(out)
    assert code == 0 and data["verb"] == "status" and data["status"] == "ok"
    assert [(r["name"], r["fresh"], r["error"]) for r in data["repos"]] == [
        ("core", True, None),
        ("payments", True, None),
    ]
    payments = Path(data["repos"][1]["root"])
    next(p for p in payments.rglob("*.py")).write_text("x = 1\n")
    code, out, _ = run(capsys, "status", "--repo", str(catalog_dir))
    assert "core: fresh" in out and "payments: stale" in out


# -- files left behind -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "ignored"),
    [
        (".ctxframe/graph/meta.json", True),
        ("data-samples/shop/.ctxframe/graph/meta.json", True),
        ("data-samples/shop/.ctxframe/graph/v-1/nodes/part-000.parquet", True),
        ("data-samples/catalog/core/.ctxframe/graph/current", True),
        ("a/b/.ctxframe/graph.rank/x", True),
        ("data-samples/shop/.ctxframe/adapters/tables.py", False),
        (".ctxframe/config.toml", False),
    ],
)
def test_gitignore_covers_an_index_at_any_depth(path: str, ignored: bool) -> None:
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines((ROOT / ".gitignore").read_text().splitlines())
    assert bool(spec.match_file(path)) is ignored


def test_eval_on_the_sample_leaves_git_clean(tmp_path: Path) -> None:
    """`ctxframe eval data-samples/queries.jsonl` indexes the sample where it is; in a clone,
    what it writes is ignored."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "data-samples", clone / "data-samples")
    shutil.copy(ROOT / ".gitignore", clone / ".gitignore")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *argv], cwd=clone, check=True, env=env)
    assert main(["eval", str(clone / "data-samples" / "queries.jsonl"), "--k", "1"]) == 0
    assert (clone / "data-samples" / "shop" / ".ctxframe" / "graph").is_dir()
    left = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=clone, capture_output=True, text=True, check=True, env=env,
    ).stdout  # fmt: skip
    assert [line for line in left.splitlines() if line.startswith("??")] == []

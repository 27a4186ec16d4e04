"""The CLI: thin over the library, `--json` everywhere, bad input → one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxframe.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_json_and_summary(capsys, shop: Path) -> None:
    code, out, _ = run(capsys, "index", "--repo", str(shop), "--json", "--no-progress")
    assert code == 0
    data = json.loads(out)
    assert data["files"] > 30 and data["nodes"] > data["files"]
    assert data["edges_by_confidence"]["EXTRACTED"] > 0
    code, out, _ = run(capsys, "index", "--repo", str(shop), "--no-progress")
    assert code == 0 and out.startswith("indexed ") and "0 parsed" in out


def test_status_json(capsys, indexed_shop: Path) -> None:
    shop = indexed_shop
    code, out, _ = run(capsys, "status", "--repo", str(shop), "--json")
    assert code == 0 and json.loads(out)["fresh"] is True
    (shop / "services" / "payments" / "gateway.py").write_text("x = 1\n")
    code, out, _ = run(capsys, "status", "--repo", str(shop))
    assert out.startswith("stale") and "M services/payments/gateway.py" in out


def test_query_json(capsys, indexed_shop: Path) -> None:
    shop = indexed_shop
    code, out, _ = run(capsys, "query", "refund processor", "--repo", str(shop), "--json")
    data = json.loads(out)
    assert code == 0 and data["query"] == "refund processor" and data["hits"]
    assert {"id", "kind", "label", "path", "line_start", "line_end", "score", "tier"} <= set(
        data["hits"][0]
    )


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["index", "--repo", "/definitely/not/here"], "not a directory"),
        (["status", "--repo", "/definitely/not/here"], "ctxframe index"),
        (["query", "x", "--repo", "/definitely/not/here"], "not a directory"),
        (["hubs", "--repo", "/definitely/not/here"], "not a directory"),
    ],
)
def test_bad_input_is_one_line(capsys, argv: list[str], needle: str) -> None:
    code, _out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("ctxframe: error:") and needle in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["query", ""], "the question is empty"),
        (["query", "   "], "the question is empty"),
        (["context", ""], "the question is empty"),
        (["query", "refund", "--budget", "0"], "at least 1 token"),
        (["card", "PaymentGateway", "--budget", "-5"], "at least 1 token"),
        (["hubs", "--budget", "many"], "not a whole number"),
    ],
)
def test_bad_question_or_budget_exits_2(capsys, indexed_shop: Path, argv, needle) -> None:
    try:
        code, out, err = run(capsys, *argv, "--repo", str(indexed_shop))
    except SystemExit as exc:  # argparse refuses the argument: usage and the error line
        (out, err), code = capsys.readouterr(), exc.code
    assert code == 2 and not out and needle in err and "Traceback" not in err


def test_module_entry_point(tmp_path: Path) -> None:
    """`python -m ctxframe` (like the console script) exits without interpreter teardown:
    the output is still complete and the exit code is the command's."""
    (tmp_path / "a.py").write_text("def f():\n    return g()\n\ndef g():\n    return 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "ctxframe", "index", "--repo", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout)["edges_by_kind"]["calls"] == 1
    assert (tmp_path / ".ctxframe" / "graph" / "meta.json").is_file()
    bad = subprocess.run(
        [sys.executable, "-m", "ctxframe", "index", "--repo", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and not bad.stdout


def test_reader_closing_the_pipe_is_not_an_error(tmp_path: Path) -> None:
    """`ctxframe … | head`: the rest of the output is dropped quietly, exit 0."""
    defs = "".join(f"def refund_step_{i}():\n    return {i}\n" for i in range(400))
    (tmp_path / "a.py").write_text(defs)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    cmd = [sys.executable, "-m", "ctxframe"]
    index = [*cmd, "index", "--repo", str(tmp_path)]
    subprocess.run(index, env=env, check=True, capture_output=True)
    query = [*cmd, "query", "refund step", "--repo", str(tmp_path), "--limit", "400", "--json"]
    proc = subprocess.Popen(query, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait() == 0 and "Error" not in err, err


def test_demo_runs(capsys) -> None:
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert "ProcessRefund" in out


VERB_ARGS = [
    (["card", "PaymentRefundProcessor.ProcessRefund"], 0, "node"),
    (["card", "format_amount"], 1, "candidates"),
    (["card", "ProcesRefnd"], 1, "candidates"),
    (["affected", "services/payments/gateway.py", "--depth", "2"], 0, "nodes"),
    (["path", "create_refund", "PaymentGateway.Refund"], 0, "paths"),
    (["path", "create_refund", "PaymentGateway.Refund", "--undirected"], 0, "paths"),
    (["change-plan", "PaymentRefundProcessor.ProcessRefund"], 0, "affected"),
    (["explain", "PaymentRefundProcessor.ProcessRefund"], 0, "text"),
    (["hubs", "--limit", "3"], 0, "depended"),
    (["boundaries"], 0, "rows"),
]


@pytest.mark.parametrize(("argv", "code", "key"), VERB_ARGS, ids=lambda v: str(v))
def test_verbs_on_the_cli(capsys, shop_graph, argv, code, key) -> None:
    assert main([*argv, "--repo", shop_graph.root, "--json"]) == code
    data = json.loads(capsys.readouterr().out)
    assert key in data or key in data.get("error", {})
    assert main([*argv, "--repo", shop_graph.root]) == code
    assert capsys.readouterr().out.strip()

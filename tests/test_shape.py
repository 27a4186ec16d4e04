"""One shape everywhere: every verb's JSON has `verb` and `status`, a failure says why in
`error: {code, message, candidates}`; one `--repo` on every command; `--budget` on text output."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._graph.lookup import SymbolIndex
from ctxframe.cli import _parser, main

PROC = "PaymentRefundProcessor.ProcessRefund"
STATUSES = {"ok", "not-found", "ambiguous", "not-indexed"}

CALLS = [
    ("card", lambda g, n: g.card(n)),
    ("affected", lambda g, n: g.affected(n, depth=1)),
    ("path", lambda g, n: g.path(n, "PaymentGateway.Refund")),
    ("change-plan", lambda g, n: g.change_plan(n)),
    ("explain", lambda g, n: g.explain(n)),
    ("boundaries", lambda g, n: g.boundaries(n)),
    ("neighbourhood", lambda g, n: g.neighbourhood(n)),
]
NAMES = [(PROC, "ok"), ("format_amount", "ambiguous"), ("ProcesRefnd", "not-found")]


@pytest.mark.parametrize(("verb", "call"), CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize(("name", "status"), NAMES, ids=[n[1] for n in NAMES])
def test_every_verb_has_one_shape(shop_graph, verb, call, name, status) -> None:
    data = json.loads(json.dumps(call(shop_graph, name).to_dict(), default=str))
    assert data["verb"] == verb and data["status"] == status
    if status == "ok":
        assert "error" not in data
    else:
        err = data["error"]
        assert set(err) == {"code", "message", "candidates"} and err["code"] == status
        assert err["message"] and all({"id", "kind", "path"} <= set(c) for c in err["candidates"])
        assert err["candidates"], "ambiguous lists the candidates, not-found the closest names"


@pytest.mark.parametrize(
    ("verb", "call"),
    [
        ("hubs", lambda g: g.hubs(limit=3)),
        ("boundaries", lambda g: g.boundaries()),
        ("query", lambda g: g.query("refund processor")),
    ],
)
def test_whole_graph_verbs_say_ok(shop_graph, verb, call) -> None:
    data = call(shop_graph).to_dict()
    assert data["verb"] == verb and data["status"] == "ok" and "error" not in data


def test_index_status_eval_carry_verb_and_status(shop_graph) -> None:
    assert cf.status(shop_graph.root).to_dict()["verb"] == "status"
    ev = cf.evaluate(shop_graph, [{"id": "q", "query": "refund processor", "gold": [PROC]}])
    assert ev.to_dict()["verb"] == "eval" and ev.to_dict()["status"] == "ok"


def test_not_indexed_is_json_too(capsys, tmp_path: Path) -> None:
    assert main(["card", "x", "--repo", str(tmp_path), "--json"]) == 2
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["status"] == "not-indexed" and data["error"]["code"] == "not-indexed"
    assert err.count("\n") == 1 and "ctxframe index" in err


COMMANDS = [
    ["index"], ["status"], ["query", "x"], ["eval", "q.jsonl"], ["card", "x"], ["affected", "x"],
    ["path", "a", "b"], ["change-plan", "x"], ["explain", "x"], ["hubs"], ["boundaries"],
    ["adapters", "check"], ["serve"],
]  # fmt: skip


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_every_command_takes_repo(argv) -> None:
    args = _parser().parse_args([*argv, "--repo", "some/repo"])
    assert args.repo == "some/repo"


def test_old_positional_path_still_works(capsys, shop: Path) -> None:
    assert main(["index", str(shop), "--no-progress"]) == 0
    assert "deprecated; use `index --repo PATH`" in capsys.readouterr().err
    assert main(["status", "--repo", str(shop), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fresh"] is True


@pytest.mark.parametrize("budget", [60, 200])
def test_budget_flag(capsys, shop_graph, budget) -> None:
    for argv in (["query", "refund"], ["affected", PROC], ["hubs"]):
        assert main([*argv, "--repo", shop_graph.root, "--budget", str(budget)]) == 0
        out = capsys.readouterr().out.rstrip("\n")
        assert len(out) <= budget * 4 and ("truncated" in out or out.endswith("…"))


def test_hubs_limit_and_its_old_name(shop_graph) -> None:
    assert shop_graph.hubs(limit=2).depended.height == 2
    assert shop_graph.hubs(top=3).limit == 3
    assert _parser().parse_args(["hubs", "--top", "4"]).limit == 4


def test_graph_opens_a_repo_or_a_store(shop_graph) -> None:
    by_repo = cf.Graph(shop_graph.root)
    by_store = cf.Graph(shop_graph.store)
    opened = cf.open(shop_graph.root)
    assert by_repo.store == by_store.store == opened.store == shop_graph.store
    assert by_repo.root == opened.root == shop_graph.root
    assert opened.report is None and shop_graph.report is not None


# -- what a new user hit ---------------------------------------------------------------------


def test_suggestions_fold_case_and_forgive_swaps() -> None:
    nodes = pl.DataFrame(
        {
            "id": ["a.py::Client", "a.py::client_id", "b.py::line", "c.py::Clinic", "d.py"],
            "kind": ["class", "function", "function", "class", "file"],
            "label": ["Client", "client_id", "line", "Clinic", "d.py"],
            "qualname": ["Client", "client_id", "line", "Clinic", "d.py"],
        }
    )
    idx = SymbolIndex(nodes)
    assert idx.suggest("clinet")[0] == "Client"
    assert idx.suggest("CLEINT")[0] == "Client"
    assert idx.suggest("zzzzqqq") == []


def test_card_suggests_client_on_the_sample(shop_graph) -> None:
    res = shop_graph.card("clinet")
    assert res.status == "not-found" and "BaseClient" in res.suggestions
    assert "closest names: BaseClient" in str(res)


def test_status_outside_git_says_so(shop_graph) -> None:
    text = str(cf.status(shop_graph.root))
    assert "None" not in text and "not a git repository" in text


def test_confidence_null_is_unresolved_not_upper_case(capsys, shop: Path) -> None:
    assert main(["index", "--repo", str(shop), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "UNRESOLVED" not in out and "unresolved" in out


def test_schema_doc_names_every_node_kind_on_disk(shop_graph, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "tool"\n[project.scripts]\ntool = "tool.cli:main"\n'
    )
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "cli.py").write_text("def main():\n    return 0\n")
    scripts = cf.index(str(tmp_path), progress=False)
    doc = (Path(__file__).resolve().parent.parent / "docs" / "schema.md").read_text()
    for g in (shop_graph, scripts):
        kinds = set(g.nodes["kind"].unique().to_list())
        transports = set(g.nodes["transport"].drop_nulls().unique().to_list())
        missing = sorted(k for k in kinds | transports if f"`{k}`" not in doc)
        assert missing == []
    assert "command" in set(scripts.nodes["kind"])


def test_demo_leaves_nothing_behind(capsys) -> None:
    before = set(Path(tempfile.gettempdir()).glob("ctxframe-demo-*"))
    assert main(["demo"]) == 0
    assert "ProcessRefund" in capsys.readouterr().out
    assert set(Path(tempfile.gettempdir()).glob("ctxframe-demo-*")) == before


def test_eval_without_repo_is_one_line(capsys, tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text('{"id": "q1", "query": "refund", "gold": ["x"]}\n')
    assert main(["eval", str(q)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--repo PATH" in err


def test_serve_on_a_busy_port_is_one_line(shop_graph) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "ctxframe", "serve", "--repo", shop_graph.root,
             "--port", str(port)],
            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONWARNINGS": ""},
        )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"ctxframe: error: port {port} on 127.0.0.1 is in use: pick another with --port N "
        "(--port 0 picks a free one)"
    ]

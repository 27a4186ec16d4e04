"""Adapters: programs in .ctxframe/adapters/ print a Batch; valid batches merge with their
producer, invalid ones are rejected whole with the adapter, the first error and its JSON path."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._ingest import adapters as _adapters
from ctxframe._ingest.adapters import BatchError, run_adapters, validate
from ctxframe.cli import main

SAMPLE_PRODUCERS = {"shop.flags", "shop.cron"}


def _repo(tmp_path: Path, adapters: dict[str, str], files: dict[str, str] | None = None) -> Path:
    root = tmp_path / "repo"
    for rel, text in {"app.py": "def handler():\n    return 1\n", **(files or {})}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    folder = root / ".ctxframe" / "adapters"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in adapters.items():
        (folder / name).write_text(text)
    return root


def _printer(batch: object) -> str:
    """A Python adapter printing `batch` as JSON."""
    return f"print({json.dumps(json.dumps(batch))})\n"


def _py(text: str) -> str:
    return textwrap.dedent(text).lstrip()


GOOD = {
    "producer": "test.jobs",
    "nodes": [
        {
            "id": "job:nightly",
            "kind": "job",
            "label": "nightly",
            "path": "jobs.yaml",
            "line_start": 2,
            "transport": "schedule.cron",
            "direction": "provides",
            "doc": "the nightly run",
        }
    ],
    "edges": [
        {"src": "job:nightly", "dst": "app.py::handler", "kind": "handles",
         "confidence": "EXTRACTED", "path": "jobs.yaml", "line": 2},
        {"src": "app.py", "dst": "job:nightly", "kind": "mentions", "confidence": "INFERRED"},
    ],
}  # fmt: skip
GRAPH = frozenset({"app.py", "app.py::handler"})


def _bad(path: list, value: object = None, *, drop: bool = False) -> dict:
    """GOOD with one thing changed at `path` (a list of keys/indexes)."""
    batch = json.loads(json.dumps(GOOD))
    at = batch
    for k in path[:-1]:
        at = at[k]
    if drop:
        del at[path[-1]]
    elif isinstance(at, list) and path[-1] == len(at):
        at.append(value)
    else:
        at[path[-1]] = value
    return batch


INVALID = [
    ("unknown top field", _bad(["version"], 1), "$.version", "unknown field"),
    ("unknown node field", _bad(["nodes", 0, "colour"], "red"), "$.nodes[0].colour", "unknown"),
    ("unknown edge field", _bad(["edges", 0, "weight"], 1), "$.edges[0].weight", "unknown"),
    ("missing producer", _bad(["producer"], drop=True), "$.producer", "expected a string"),
    ("reserved producer", _bad(["producer"], "ctxframe"), "$.producer", "reserved"),
    ("nodes not array", _bad(["nodes"], {}), "$.nodes", "expected an array"),
    ("node not object", _bad(["nodes", 1], "x"), "$.nodes[1]", "expected an object"),
    ("missing id", _bad(["nodes", 0, "id"], drop=True), "$.nodes[0].id", "required"),
    ("empty label", _bad(["nodes", 0, "label"], " "), "$.nodes[0].label", "must not be empty"),
    ("line as string", _bad(["nodes", 0, "line_start"], "2"), "$.nodes[0].line_start", "integer"),
    ("line as bool", _bad(["edges", 0, "line"], True), "$.edges[0].line", "integer"),
    ("line zero", _bad(["edges", 0, "line"], 0), "$.edges[0].line", "1-based"),
    ("secret as string", _bad(["nodes", 0, "secret"], "yes"), "$.nodes[0].secret", "boolean"),
    ("bad direction", _bad(["nodes", 0, "direction"], "both"), "$.nodes[0].direction", "consumes"),
    ("bad kind", _bad(["nodes", 0, "kind"], "Big Job"), "$.nodes[0].kind", "does not match"),
    ("reserved kind", _bad(["nodes", 0, "kind"], "file"), "$.nodes[0].kind", "reserved"),
    ("absolute path", _bad(["nodes", 0, "path"], "/etc/passwd"), "$.nodes[0].path", "relative"),
    ("dotdot path", _bad(["edges", 0, "path"], "a/../../b"), "$.edges[0].path", "relative"),
    ("long doc", _bad(["nodes", 0, "doc"], "x" * 1001), "$.nodes[0].doc", "longer than"),
    ("bad confidence", _bad(["edges", 1, "confidence"], "SURE"), "$.edges[1].confidence",
     "expected one of EXTRACTED, INFERRED, AMBIGUOUS"),
    ("missing confidence", _bad(["edges", 0, "confidence"], drop=True), "$.edges[0].confidence",
     "required"),
    ("duplicate id", _bad(["nodes", 1], {"id": "job:nightly", "kind": "job", "label": "again"}),
     "$.nodes[1].id", "duplicate id"),
    ("id already in graph", _bad(["nodes", 1], {"id": "app.py", "kind": "job", "label": "x"}),
     "$.nodes[1].id", "already a node of the graph"),
    ("dangling dst", _bad(["edges", 0, "dst"], "app.py::nowhere"), "$.edges[0].dst",
     "neither of the batch nor of the graph"),
    ("dangling src", _bad(["edges", 1, "src"], "ghost"), "$.edges[1].src", "neither"),
]  # fmt: skip


def test_good_batch_validates() -> None:
    producer, nodes, edges = validate(GOOD, GRAPH)
    assert producer == "test.jobs"
    assert nodes[0]["qualname"] == "nightly" and nodes[0]["line_end"] == 2
    assert {e["name"] for e in edges} == {"app.py::handler", "job:nightly"}  # name defaults to dst
    assert all(r["producer"] == "test.jobs" for r in nodes + edges)


@pytest.mark.parametrize(("case", "batch", "path", "message"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_batches_name_the_first_error(case, batch, path, message) -> None:
    with pytest.raises(BatchError) as err:
        validate(batch, GRAPH)
    assert err.value.path == path
    assert message in err.value.message


def test_rejected_batch_is_rejected_whole_and_the_index_goes_on(tmp_path) -> None:
    bad = _bad(["edges", 1, "confidence"], "SURE")  # the node and first edge are fine
    bad = json.loads(json.dumps(bad).replace("job:nightly", "job:other"))
    bad["producer"] = "test.bad"
    root = _repo(tmp_path, {"a_good.py": _printer(GOOD), "b_bad.py": _printer(bad)})
    g = cf.index(str(root), progress=False)
    rejected = g.report.adapters["rejected"]
    assert rejected == [
        ".ctxframe/adapters/b_bad.py: $.edges[1].confidence: expected one of EXTRACTED, "
        "INFERRED, AMBIGUOUS, got 'SURE'"
    ]
    assert "adapter rejected: .ctxframe/adapters/b_bad.py: $.edges[1]" in str(g.report)
    assert g.nodes.filter(pl.col("producer") == "test.bad").is_empty()
    assert g.edges.filter(pl.col("producer") == "test.bad").is_empty()
    # the good batch from the other adapter and the code graph are there
    jobs = g.nodes.filter(pl.col("producer") == "test.jobs")
    assert jobs["id"].to_list() == ["job:nightly"]
    handles = g.edges.filter(pl.col("kind") == "handles")
    assert handles.select("src", "dst", "confidence", "producer").rows() == [
        ("job:nightly", "app.py::handler", "EXTRACTED", "test.jobs")
    ]
    assert "app.py::handler" in set(g.nodes["id"])


RUNTIME = [
    ("not json", "print('hello')\n", "stdout is not one JSON document"),
    ("nothing printed", "pass\n", "printed nothing"),
    ("two documents", "print('{}'); print('{}')\n", "not one JSON document"),
    ("duplicate key", "print('{\"producer\": \"a\", \"producer\": \"b\"}')\n", "duplicate key"),
    ("NaN", "print('{\"producer\": NaN}')\n", "NaN is not JSON"),
    ("exit status", "import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n",
     "exited with status 3: boom"),
    ("not utf-8", "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe')\n", "not UTF-8"),
    ("top is array", "print('[]')\n", "expected an object, got array"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "code", "message"), RUNTIME, ids=[c[0] for c in RUNTIME])
def test_adapter_failures_are_rejections(tmp_path, case, code, message) -> None:
    root = _repo(tmp_path, {"x.py": code})
    run = run_adapters(str(root), set(GRAPH))
    assert not run.accepted
    assert len(run.rejected) == 1
    assert run.rejected[0].startswith(".ctxframe/adapters/x.py: $")
    assert message in run.rejected[0]


def test_timeout_and_oversize_output(tmp_path) -> None:
    root = _repo(
        tmp_path,
        {
            "slow.py": "import time\ntime.sleep(30)\n",
            "big.py": "print('[' + '1,' * 100000 + '1]')\n",
            "ok.py": _printer(GOOD),
        },
    )
    run = run_adapters(str(root), set(GRAPH), timeout=2, max_output=50_000)
    assert [a["adapter"] for a in run.accepted] == [".ctxframe/adapters/ok.py"]
    assert run.rejected == [
        ".ctxframe/adapters/big.py: $: oversize output (more than 50000 bytes on stdout)",
        ".ctxframe/adapters/slow.py: $: timed out after 2s",
    ]


def test_adapters_run_side_by_side(tmp_path) -> None:
    """Every adapter is started before any is waited for: `a` waits for a file only `b`
    writes, which one after the other would time out."""
    wait_for_b = _py(
        f"""
        import os, time
        for _ in range(1000):
            if os.path.exists("b-ran"):
                break
            time.sleep(0.01)
        else:
            raise SystemExit("b never ran")
        {_printer(GOOD)}"""
    )
    b = "open('b-ran', 'w').close()\n" + _printer({"producer": "b", "nodes": [], "edges": []})
    root = _repo(tmp_path, {"a.py": wait_for_b, "b.py": b})
    run = run_adapters(str(root), set(GRAPH), timeout=8)
    assert run.rejected == []
    assert [a["producer"] for a in run.accepted] == ["test.jobs", "b"]


def test_an_index_that_fails_kills_its_adapters(tmp_path, monkeypatch) -> None:
    """Adapters start with the index; when it fails before collecting them, none is left."""
    root = _repo(tmp_path, {"slow.py": "import os, time\nopen('pid', 'w').write(str(os.getpid()))\n"
                                       "time.sleep(60)\n"})  # fmt: skip
    from ctxframe._store import build

    def fail(run, jobs):
        for _ in range(500):  # the adapter is running
            if (root / "pid").exists() and (root / "pid").read_text():
                break
            time.sleep(0.01)
        raise RuntimeError("stop here")

    monkeypatch.setattr(build, "_extract", fail)
    with pytest.raises(RuntimeError, match="stop here"):
        cf.index(str(root), store=str(tmp_path / "store"), progress=False)
    pid = int((root / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_missing_interpreter_is_a_rejection(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(_adapters.INTERPRETERS, ".js", "no-such-node-binary")
    root = _repo(tmp_path, {"x.js": "console.log('{}')\n"})
    run = run_adapters(str(root), set(GRAPH))
    assert run.rejected == [
        ".ctxframe/adapters/x.js: $: interpreter 'no-such-node-binary' not found on PATH"
    ]


def test_file_names_are_never_interpolated_by_a_shell(tmp_path) -> None:
    name = "x; touch PWNED $(touch PWNED2).sh"
    root = _repo(tmp_path, {name: 'echo \'{"producer": "odd", "nodes": [], "edges": []}\'\n'})
    run = run_adapters(str(root), set(GRAPH))
    assert run.accepted == [
        {"adapter": f".ctxframe/adapters/{name}", "producer": "odd", "nodes": 0, "edges": 0}
    ]
    assert not list(root.rglob("PWNED*")) and not list(Path.cwd().glob("PWNED*"))


def test_adapters_run_in_the_repo_root_and_other_files_are_ignored(tmp_path) -> None:
    code = _py(
        """
        import json, os
        print(json.dumps({"producer": "cwd", "nodes": [{"id": "cwd:" + os.path.basename(
            os.getcwd()), "kind": "probe", "label": os.environ["CTXFRAME_ROOT"][-4:]}],
            "edges": []}))
        """
    )
    root = _repo(tmp_path, {"probe.py": code, "notes.txt": "not an adapter", "lib.json": "{}"})
    run = run_adapters(str(root), set(GRAPH))
    assert run.rejected == []
    assert run.nodes.select("id", "label").rows() == [("cwd:repo", "repo")]


def test_two_adapters_may_not_share_a_producer_or_an_id(tmp_path) -> None:
    other = json.loads(json.dumps(GOOD))
    root = _repo(tmp_path, {"a.py": _printer(GOOD), "b.py": _printer(other)})
    run = run_adapters(str(root), set(GRAPH))
    assert run.rejected == [
        ".ctxframe/adapters/b.py: $.producer: 'test.jobs' is already used by another adapter"
    ]
    other["producer"] = "test.other"
    (root / ".ctxframe" / "adapters" / "b.py").write_text(_printer(other))
    run = run_adapters(str(root), set(GRAPH))
    assert run.rejected == [
        ".ctxframe/adapters/b.py: $.nodes[0].id: id 'job:nightly' already comes from another "
        "adapter"
    ]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_adapter(tmp_path) -> None:
    batch = {"producer": "js.probe", "nodes": [{"id": "x:1", "kind": "probe", "label": "one"}],
             "edges": [{"src": "app.py", "dst": "x:1", "kind": "mentions",
                        "confidence": "AMBIGUOUS"}]}  # fmt: skip
    root = _repo(tmp_path, {"probe.js": f"console.log(JSON.stringify({json.dumps(batch)}));\n"})
    run = run_adapters(str(root), set(GRAPH))
    assert run.accepted == [
        {"adapter": ".ctxframe/adapters/probe.js", "producer": "js.probe", "nodes": 1, "edges": 1}
    ]


# -- the sample's adapters --------------------------------------------------------------------


def test_sample_adapters_are_accepted(shop_graph) -> None:
    report = shop_graph.report.adapters
    assert report["rejected"] == []
    assert {a["producer"] for a in report["accepted"]} == SAMPLE_PRODUCERS
    nodes = shop_graph.nodes.filter(pl.col("producer").is_in(list(SAMPLE_PRODUCERS)))
    assert nodes.select("id", "kind", "transport").sort("id").rows() == [
        ("cron:ledger-reconcile", "job", "schedule.cron"),
        ("flag:ledger_export_v2", "flag", "config.flag"),
        ("flag:strict_reconcile", "flag", "config.flag"),
    ]
    edges = shop_graph.edges.filter(pl.col("producer").is_in(list(SAMPLE_PRODUCERS)))
    assert set(edges.select("src", "kind", "dst", "confidence").rows()) == {
        ("ops/feature-flags.json", "declares", "flag:ledger_export_v2", "EXTRACTED"),
        ("ops/feature-flags.json", "declares", "flag:strict_reconcile", "EXTRACTED"),
        (
            "services/payments/flags.py::ledger_export_v2",
            "reads",
            "flag:ledger_export_v2",
            "INFERRED",
        ),
        (
            "services/payments/flags.py::strict_reconcile",
            "reads",
            "flag:strict_reconcile",
            "INFERRED",
        ),
        ("ops/crontab", "declares", "cron:ledger-reconcile", "EXTRACTED"),
        ("cron:ledger-reconcile", "handles", "services/payments/reconcile.py", "EXTRACTED"),
    }


def test_sample_adapters_in_query_card_and_boundaries(shop_graph) -> None:
    hits = shop_graph.query("ledger reconcile cron job", limit=5)
    assert "cron:ledger-reconcile" in str(hits.to_dict())
    card = shop_graph.card("flag:strict_reconcile")
    assert card.status == "ok"
    assert "strict_reconcile = false" in str(card)
    text = str(shop_graph.boundaries())
    assert "consumes · config.flag:" in text
    assert "strict_reconcile  ← reads strict_reconcile (services/payments/flags.py:17)" in text
    assert "provides · schedule.cron:" in text
    assert "ledger-reconcile  ← handles services/payments/reconcile.py (ops/crontab:2)" in text


def test_adapters_rerun_on_every_index(indexed_shop) -> None:
    shop = indexed_shop
    g = cf.open(str(shop))
    assert "cron:ledger-reconcile" in set(g.nodes["id"])
    crontab = shop / "ops" / "crontab"
    crontab.write_text(
        crontab.read_text().replace("# ledger-reconcile", "# ledger-nightly")
        + "0 * * * * python3 services/billing/usage_reporter.py  # hourly-usage\n"
    )
    g = cf.index(str(shop), progress=False)
    jobs = g.nodes.filter(pl.col("producer") == "shop.cron")["id"].to_list()
    assert jobs == ["cron:hourly-usage", "cron:ledger-nightly"]
    assert g.report.parsed <= 1  # the crontab itself; no code re-parsed
    tokens = set(g.tokens.filter(pl.col("node_id") == "cron:ledger-nightly")["token"])
    assert "nightly" in tokens
    (shop / ".ctxframe" / "adapters" / "cron.sh").unlink()
    g = cf.index(str(shop), progress=False)
    assert g.nodes.filter(pl.col("producer") == "shop.cron").is_empty()
    assert g.tokens.filter(pl.col("node_id").str.starts_with("cron:")).is_empty()


# -- ctxframe adapters check -------------------------------------------------------------------


def test_cli_adapters_check(shop, capsys) -> None:
    assert main(["adapters", "check", "--repo", str(shop)]) == 0
    out = capsys.readouterr().out
    assert "adapter accepted: .ctxframe/adapters/cron.sh (producer shop.cron" in out
    assert "no index yet: edges to nodes outside a batch were not checked" in out
    main(["index", "--repo", str(shop), "--no-progress"])
    capsys.readouterr()
    (shop / ".ctxframe" / "adapters" / "zz.py").write_text(
        _printer(_bad(["edges", 0, "dst"], "app.py::nowhere"))
    )
    assert main(["adapters", "check", "--repo", str(shop), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["note"] is None
    assert data["rejected"] == [
        ".ctxframe/adapters/zz.py: $.edges[0].dst: 'app.py::nowhere' is a node neither of the "
        "batch nor of the graph"
    ]
    assert {a["producer"] for a in data["accepted"]} == SAMPLE_PRODUCERS
    assert main(["index", "--repo", str(shop), "--no-progress", "--json"]) == 0  # the index goes on
    data = json.loads(capsys.readouterr().out)
    assert len(data["adapters"]["rejected"]) == 1 and data["dial"] == {}


def test_no_adapters_folder(tmp_path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    g = cf.index(str(tmp_path), progress=False)
    assert g.report.adapters == {"accepted": [], "rejected": [], "note": None}
    assert set(g.nodes["producer"]) == {"ctxframe"}

"""`ctxframe hook prompt`: plain text or hook JSON in; a context block or nothing out; exit 0
whatever happens; the same hits and abstain decision as `graph.query(text, abstain=True)`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxframe._apps.hook import PromptIndex, find_root, prompt_context, prompt_hook, read_prompt
from ctxframe.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "data-samples"
REFUND = "where is refund processing implemented"


def _prompts(name: str) -> list[str]:
    out = []
    for line in (SAMPLE / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            out.append(json.loads(line)["query"])
    return out


@pytest.mark.parametrize(
    ("raw", "prompt", "cwd"),
    [
        (
            "where is refund processing implemented\n",
            "where is refund processing implemented\n",
            None,
        ),
        ('{"prompt": "refunds?", "cwd": "/x", "session_id": "s"}', "refunds?", "/x"),
        ('{"user_prompt": "refunds?"}', "refunds?", None),
        ('{"text": "refunds?", "cwd": 3}', "refunds?", None),
        ("{not json at all", "{not json at all", None),
        ('["a list"]', '["a list"]', None),
    ],
)
def test_read_prompt(raw, prompt, cwd):
    assert read_prompt(raw) == (prompt, cwd)


def test_read_prompt_json_without_prompt_is_an_error():
    with pytest.raises(Exception, match="without a prompt"):
        read_prompt('{"cwd": "/x"}')


def run_hook(stdin: str, **kwargs) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = prompt_hook(io.StringIO(stdin), out, err, **kwargs)
    return code, out.getvalue(), err.getvalue()


def test_speaks_on_a_code_question(shop_graph):
    code, out, err = run_hook(REFUND, repo=shop_graph.root)
    assert code == 0 and err == ""
    assert out.startswith("# ctxframe: code in this repository that matches the prompt")
    assert "def ProcessRefund(self, order_id, amount):" in out
    assert -(-len(out) // 4) <= 1500


@pytest.mark.parametrize("prompt", ["write me a haiku about autumn", "thanks, that looks good", ""])
def test_silent_on_a_prompt_about_no_code(shop_graph, prompt):
    assert run_hook(prompt, repo=shop_graph.root) == (0, "", "")


def test_json_input_uses_cwd_and_finds_the_index_above_it(shop_graph):
    sub = os.path.join(shop_graph.root, "services", "payments")
    assert find_root(sub) == shop_graph.root
    code, out, _ = run_hook(json.dumps({"prompt": REFUND, "cwd": sub}))
    assert code == 0 and "ProcessRefund" in out


@pytest.mark.parametrize(
    ("stdin", "kwargs", "message"),
    [
        (REFUND, {"repo": "/nonexistent/repo"}, "ctxframe hook: no ctxframe index at"),
        ('{"cwd": "/tmp"}', {}, "ctxframe hook: hook input is JSON without a prompt"),
    ],
)
def test_problems_are_one_line_on_stderr_and_exit_0(stdin, kwargs, message):
    code, out, err = run_hook(stdin, **kwargs)
    assert code == 0 and out == ""
    assert err.startswith(message) and err.count("\n") == 1


def test_a_long_prompt_is_read_up_to_its_first_characters(shop_graph):
    from ctxframe._apps.hook import MAX_PROMPT_CHARS

    long = REFUND + " " + "lorem ipsum " * 2000
    ctx = prompt_context(long, repo=shop_graph.root)
    assert ctx is not None and ctx.question == long[:MAX_PROMPT_CHARS]


def test_budget_is_respected(shop_graph):
    for budget in (1, 50, 200, 700):
        code, out, _ = run_hook(REFUND, repo=shop_graph.root, budget_tokens=budget)
        assert code == 0 and -(-len(out) // 4) <= budget


def test_same_decision_and_hits_as_graph_query(shop_graph):
    pi = PromptIndex(os.path.join(shop_graph.root, ".ctxframe", "graph"), shop_graph.root)
    for text in _prompts("queries.jsonl") + _prompts("prompts-noncode.jsonl"):
        want = shop_graph.query(text, limit=18, abstain=True)
        got = pi.query(text, 18)
        if want.abstained:
            assert got is None, text
        else:
            assert got is not None, text
            assert got.hits["id"].to_list() == want.hits["id"].to_list(), text
            assert got.neighbours.equals(want.neighbours), text


def test_context_block_matches_graph_context(shop_graph):
    ctx = prompt_context(REFUND, repo=shop_graph.root)
    ref = shop_graph.context(REFUND, budget_tokens=1500, limit=18, abstain=True)
    ref.title = ctx.title  # the title counts in the budget: the same title, the same fit
    assert ctx.render() == ref.render()
    assert ctx.shown == ref.shown


def test_cli_hook_as_a_process(shop_graph):
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "ctxframe", "hook", "prompt", "--repo", shop_graph.root],
        input=json.dumps({"prompt": REFUND}),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0 and "ProcessRefund" in proc.stdout
    silent = subprocess.run(
        [sys.executable, "-m", "ctxframe", "hook", "prompt", "--repo", shop_graph.root],
        input="what is the weather in Paris today",
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (silent.returncode, silent.stdout) == (0, "")


def test_cli_misuse_is_not_exit_0():
    with pytest.raises(SystemExit) as exc:
        main(["hook", "nosuchhook"])
    assert exc.value.code == 2

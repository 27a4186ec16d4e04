"""`ctxframe mcp`, end to end through the official SDK's own client over stdio: the tools are
listed with schemas, each returns the verb's `to_dict()`, bad arguments are error results (the
server lives on), and a re-indexed store is picked up without a restart."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

mcp = pytest.importorskip("mcp")

import ctxframe as cf  # noqa: E402
from ctxframe._apps import mcp as server  # noqa: E402
from ctxframe.cli import main  # noqa: E402

TOOLS = [
    "query",
    "context",
    "card",
    "affected",
    "path",
    "change_plan",
    "explain",
    "hubs",
    "boundaries",
]
CALLS = [
    (
        "query",
        {"text": "refund processing", "limit": 5},
        lambda g: g.query("refund processing", limit=5),
    ),
    (
        "context",
        {"text": "where is refund processing implemented", "budget": 800},
        lambda g: g.context("where is refund processing implemented", 800, format="json"),
    ),
    ("card", {"name": "ProcessRefund"}, lambda g: g.card("ProcessRefund")),
    ("affected", {"name": "ProcessRefund", "depth": 2}, lambda g: g.affected("ProcessRefund", 2)),
    (
        "path",
        {"a": "CheckoutHandler.handle_refund_request", "b": "PaymentGateway.Refund"},
        lambda g: g.path("CheckoutHandler.handle_refund_request", "PaymentGateway.Refund"),
    ),
    ("change_plan", {"name": "ProcessRefund"}, lambda g: g.change_plan("ProcessRefund")),
    ("explain", {"name": "ProcessRefund"}, lambda g: g.explain("ProcessRefund")),
    ("hubs", {"limit": 3}, lambda g: g.hubs(limit=3)),
    ("boundaries", {}, lambda g: g.boundaries()),
]
BAD = [
    ("card", {}, "'name' is a required property"),
    ("card", {"name": 3}, "name: 3 is not of type 'string'"),
    ("card", {"name": "x", "colour": "red"}, "Additional properties are not allowed"),
    ("hubs", {"limit": 0}, "limit: 0 is less than the minimum of 1"),
    ("hubs", {"top": 0}, "limit: 0 is less than the minimum of 1"),  # the old name
    ("hubs", {"top": 1, "limit": 1}, "give 'limit' ('top' is its old name)"),
    ("context", {"text": ""}, "text: '' should be non-empty"),
]


def params(repo: str):
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "ctxframe", "mcp", "--repo", repo], env=env
    )


def session(repo: str, script, mode: str = "auto"):
    """Run ``await script(client)`` against a fresh `ctxframe mcp` server process."""
    from mcp import Client

    async def go():
        async with Client(params(repo), mode=mode) as client:
            return await script(client)

    return asyncio.run(go())


def as_json(result) -> dict:
    assert len(result.content) == 1 and result.content[0].type == "text"
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


def test_tools_calls_and_bad_arguments(shop_graph):
    async def script(client):
        listed = await client.list_tools()
        results = {name: await client.call_tool(name, args) for name, args, _ in CALLS}
        bad = [await client.call_tool(name, args) for name, args, _ in BAD]
        unknown = await client.call_tool("delete_everything", {})
        missing = await client.call_tool("card", {"name": "NoSuchSymbolAnywhere"})
        after = await client.call_tool("hubs", {"top": 1})  # still serving; the old name
        return listed, results, bad, unknown, missing, after

    listed, results, bad, unknown, missing, after = session(shop_graph.root, script)

    tools = {t.name: t for t in listed.tools}
    assert list(tools) == TOOLS
    for t in tools.values():
        assert t.description
        assert t.input_schema["type"] == "object"
        assert t.input_schema["additionalProperties"] is False
        assert t.annotations.read_only_hint is True

    for name, _args, local in CALLS:
        res = results[name]
        assert res.is_error is False, (name, res.content[0].text[:300])
        want = json.loads(json.dumps(local(shop_graph).to_dict(), default=str))
        assert as_json(res) == want, name

    for res, (name, _args, message) in zip(bad, BAD, strict=True):
        assert res.is_error is True
        data = as_json(res)
        assert data["error"]["code"] == "invalid-arguments"
        assert data["error"]["message"].startswith(f"invalid arguments for {name}: ")
        assert message in data["error"]["message"]

    assert unknown.is_error is True
    assert as_json(unknown)["error"]["code"] == "unknown-tool"
    assert missing.is_error is True  # status not-found: an error result with the verb's JSON
    assert as_json(missing) == shop_graph.card("NoSuchSymbolAnywhere").to_dict()
    assert after.is_error is False


def test_initialize_handshake_clients(shop_graph):
    """Clients of the handshake era (an `initialize` request first) are served the same."""

    async def script(client):
        return await client.list_tools(), await client.call_tool("card", {"name": "ProcessRefund"})

    listed, card = session(shop_graph.root, script, mode="legacy")
    assert [t.name for t in listed.tools] == TOOLS
    assert as_json(card) == json.loads(json.dumps(shop_graph.card("ProcessRefund").to_dict()))


def test_a_new_store_is_picked_up_without_restart(indexed_shop):
    shop = indexed_shop
    target = shop / "services" / "payments" / "refund_processor.py"

    async def script(client):
        before = await client.call_tool("card", {"name": "settle_refund_batch"})
        with open(target, "a", encoding="utf-8") as fh:
            fh.write("\n\ndef settle_refund_batch(batch):\n    return len(batch)\n")
        await asyncio.to_thread(cf.index, str(shop), progress=False)
        after = await client.call_tool("card", {"name": "settle_refund_batch"})
        ctx = await client.call_tool("context", {"question": "settle refund batch", "budget": 600})
        return before, after, ctx

    before, after, ctx = session(str(shop), script)
    assert as_json(before)["status"] == "not-found"
    assert after.is_error is False
    assert as_json(after)["node"]["id"].endswith("refund_processor.py::settle_refund_batch")
    assert "def settle_refund_batch(batch):" in json.dumps(as_json(ctx))


def test_no_index_is_an_error_result_then_found_once_indexed(shop):
    async def script(client):
        first = await client.call_tool("hubs", {})
        await asyncio.to_thread(cf.index, str(shop), progress=False)
        second = await client.call_tool("hubs", {})
        return first, second

    first, second = session(str(shop), script)
    assert first.is_error is True
    assert as_json(first)["status"] == "not-indexed"
    assert "run `ctxframe index` first" in as_json(first)["error"]["message"]
    assert second.is_error is False and as_json(second)["verb"] == "hubs"


def test_live_graph_reopens_only_when_the_store_changes(indexed_shop):
    shop = indexed_shop
    live = server.LiveGraph(str(shop))
    g1 = live.get()
    assert live.get() is g1 and live.opened == 1
    cf.index(str(shop), rebuild=True, progress=False)
    assert live.get() is not g1 and live.opened == 2


def test_missing_sdk_says_how_to_install(monkeypatch, capsys, shop_graph):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "mcp_types" or name.startswith("mcp."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    assert main(["mcp", "--repo", shop_graph.root]) == 2
    assert "pip install mcp" in capsys.readouterr().err

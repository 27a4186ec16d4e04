"""`ctxframe mcp`: the read-only verbs as MCP tools over stdio, on the official `mcp` SDK.

Tools: ``query``, ``context``, ``card``, ``affected``, ``path``, ``change_plan``, ``explain``,
``hubs``, ``boundaries``. Each has a JSON schema for its arguments (checked before the call: bad
arguments come back as an error result that says what is wrong, never a crash) and returns
the same JSON as the CLI's ``--json`` — the result's ``to_dict()`` — as text and as structured
content. A result whose ``status`` is present and neither ``ok`` nor ``found`` (not-found,
ambiguous, not-indexed, …) is returned with ``isError`` set, its JSON unchanged.

The index is opened once and re-opened when the store changes: every call stats the store's
``meta.json`` (a write swaps the whole store directory in, so its inode, size or mtime move).
The SDK is an optional extra (``pip install '.[mcp]'`` in a clone, or ``pip install mcp``);
nothing here imports it at module level, so the rest of ctxframe never pays for it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxframe._core.config import find_root
from ctxframe._core.errors import CtxframeError, RepoNotFound, StoreNotFound
from ctxframe._core.version import __version__
from ctxframe._graph.context import DEFAULT_BUDGET_TOKENS
from ctxframe._graph.graph import Graph
from ctxframe._ingest.redact import redact_obj
from ctxframe._store import tables as _store

INSTALL_HINT = (
    "the MCP server needs the `mcp` package: pip install mcp (in a ctxframe clone: "
    "pip install '.[mcp]')"
)
INSTRUCTIONS = (
    "ctxframe answers questions about one indexed repository from its code graph. Start with "
    "`context` (a question in words -> the best-matching code with its source, within a token "
    "budget) or `query` (ranked hits with their 1-hop neighbours). Then use `card` for a "
    "symbol's place, signature, callers and callees; `affected` for who depends on it; `path` "
    "for how A reaches B; `change_plan` before editing; `explain`, `hubs` and `boundaries` for "
    "orientation. Names may be ids (path::Qualified.Name), qualified names or labels."
)
SUCCESS = frozenset({"ok"})


# -- tools ----------------------------------------------------------------------------------------


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


_STR = {"type": "string", "minLength": 1}
_AMBIG = {"type": "boolean", "default": False, "description": "also follow AMBIGUOUS edges"}
_RULE = {"type": "string", "description": "ranking rule: idf-tiers (default), bm25, ..."}
_WITHIN = {"type": "string", "description": "only nodes whose path matches this glob"}


def _int(lo: int, hi: int, default: int, what: str) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": lo,
        "maximum": hi,
        "default": default,
        "description": what,
    }


@dataclass(frozen=True)
class Tool:
    """One MCP tool: its name, what it is for, its argument schema and how to call the graph."""

    name: str
    description: str
    schema: dict[str, Any]
    call: Callable[[Graph, dict[str, Any]], Any]


def _context(g: Graph, a: dict[str, Any]) -> Any:
    return g.context(
        a["text"],
        budget_tokens=a.get("budget", DEFAULT_BUDGET_TOKENS),
        format="json",
        limit=a.get("limit"),
        rule=a.get("rule"),
        within=a.get("within"),
        abstain=a.get("abstain", False),
    )


TOOLS: tuple[Tool, ...] = (
    Tool(
        "query",
        "Rank the repository's symbols, files and docs for a question in words; each hit "
        "with its 1-hop neighbours (callers, callees, imports).",
        _obj(
            {
                "text": {**_STR, "description": "the question"},
                "limit": _int(1, 100, 20, "hits to return"),
                "rule": _RULE,
                "within": _WITHIN,
                "include_ambiguous": _AMBIG,
                "abstain": {
                    "type": "boolean",
                    "default": False,
                    "description": 'say "no structural match" instead of weak hits',
                },
            },
            ("text",),
        ),
        lambda g, a: g.query(
            a["text"],
            limit=a.get("limit", 20),
            rule=a.get("rule"),
            within=a.get("within"),
            include_ambiguous=a.get("include_ambiguous", False),
            abstain=a.get("abstain", False),
        ),
    ),
    Tool(
        "context",
        "The best-matching code for a question, packed into a token budget: the first hits "
        "with their place, source (trimmed around the question's words) and neighbours, then "
        "more hits at one line each (name, lines, declaration) grouped by file; ends with "
        "what was left out. Sources are checked against the index and flagged when changed.",
        _obj(
            {
                "text": {**_STR, "description": "the question"},
                "budget": _int(1, 100_000, DEFAULT_BUDGET_TOKENS, "tokens (chars/4)"),
                "limit": _int(1, 200, 100, "hits ranked before packing (default: budget / 40)"),
                "rule": _RULE,
                "within": _WITHIN,
                "abstain": {"type": "boolean", "default": False},
            },
            ("text",),
        ),
        _context,
    ),
    Tool(
        "card",
        "A known symbol: kind, place, signature, doc, parent, callers, callees, members.",
        _obj(
            {
                "name": {**_STR, "description": "id, Qualified.Name or label"},
                "include_ambiguous": _AMBIG,
            },
            ("name",),
        ),
        lambda g, a: g.card(a["name"], include_ambiguous=a.get("include_ambiguous", False)),
    ),
    Tool(
        "affected",
        "Blast radius: who depends on a symbol or file, by depth, and the tests among them.",
        _obj(
            {
                "name": {**_STR, "description": "symbol name or repo-relative file path"},
                "depth": _int(1, 10, 3, "hops"),
                "include_ambiguous": _AMBIG,
            },
            ("name",),
        ),
        lambda g, a: g.affected(
            a["name"],
            depth=a.get("depth", 3),
            include_ambiguous=a.get("include_ambiguous", False),
        ),
    ),
    Tool(
        "path",
        "Shortest paths from symbol A to symbol B, each hop with its edge kind and confidence.",
        _obj(
            {
                "a": _STR,
                "b": _STR,
                "undirected": {"type": "boolean", "default": False},
                "include_ambiguous": _AMBIG,
            },
            ("a", "b"),
        ),
        lambda g, a: g.path(
            a["a"],
            a["b"],
            undirected=a.get("undirected", False),
            include_ambiguous=a.get("include_ambiguous", False),
        ),
    ),
    Tool(
        "change_plan",
        "An ordered checklist of what to look at before editing a symbol.",
        _obj(
            {"name": _STR, "depth": _int(1, 10, 2, "hops"), "include_ambiguous": _AMBIG}, ("name",)
        ),
        lambda g, a: g.change_plan(
            a["name"],
            depth=a.get("depth", 2),
            include_ambiguous=a.get("include_ambiguous", False),
        ),
    ),
    Tool(
        "explain",
        "A plain-language paragraph about a symbol or file, from graph facts only.",
        _obj(
            {
                "name": {**_STR, "description": "symbol name or repo-relative file path"},
                "include_ambiguous": _AMBIG,
            },
            ("name",),
        ),
        lambda g, a: g.explain(a["name"], include_ambiguous=a.get("include_ambiguous", False)),
    ),
    Tool(
        "hubs",
        "Orientation: most depended-on symbols, largest files, entry points, directories.",
        _obj({"limit": _int(1, 100, 10, "rows per list")}),
        lambda g, a: g.hubs(limit=a.get("limit", 10)),
    ),
    Tool(
        "boundaries",
        "What the code consumes and provides: routes, env vars, HTTP endpoints, programs "
        "run, dependencies, Kubernetes objects; for the repo or one symbol or file.",
        _obj({"name": {**_STR, "description": "a symbol or file (default: all)"}}),
        lambda g, a: g.boundaries(a.get("name")),
    ),
)
BY_NAME = {t.name: t for t in TOOLS}
# Arguments named as the CLI names them (`--limit`, NAME, TEXT); the names these tools had
# before are still taken, for clients written against them.
ALIASES: dict[str, dict[str, str]] = {
    "context": {"question": "text"},
    "affected": {"target": "name"},
    "explain": {"target": "name"},
    "boundaries": {"target": "name"},
    "hubs": {"top": "limit"},
}


# -- the graph, re-opened when the store changes ---------------------------------------------------


class LiveGraph:
    """The repository's graph, opened on first use and re-opened when the store changes
    (checked per call by one ``stat`` of ``meta.json``: inode, size, mtime)."""

    def __init__(self, repo: str = ".", store: str | None = None):
        root = os.path.realpath(repo)
        if store is None and not os.path.isdir(root):
            raise RepoNotFound(f"{repo} is not a directory: pass the root of an indexed repository")
        if store is None:  # from a sub-directory too, as git does
            root = find_root(root)
        self.root = root if os.path.isdir(root) else None
        self.store = os.path.abspath(store or _store.default_store(root))
        self._graph: Graph | None = None
        self._stamp: tuple[int, int, int] | None = None
        self.opened = 0  # how many times the store was (re)opened

    def stamp(self) -> tuple[int, int, int] | None:
        """Identity of the store's current ``meta.json``, or None when there is none."""
        try:
            st = os.stat(os.path.join(self.store, _store.META))
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def get(self) -> Graph:
        """The graph of the store as it is now; raises StoreNotFound with the fix."""
        now = self.stamp()
        if self._graph is None or now != self._stamp:
            self._graph = None
            # raises when there is no index
            graph = Graph(self.root or self.store, store=self.store, root=self.root)
            self._graph, self._stamp = graph, now
            self.opened += 1
        return self._graph


# -- calls ----------------------------------------------------------------------------------------


class InvalidArguments(CtxframeError):
    """A tool's arguments do not match its schema."""


def validate(tool: Tool, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The arguments with their schema checked; InvalidArguments naming what is wrong."""
    import jsonschema

    args = dict(arguments or {})
    for old, new in ALIASES.get(tool.name, {}).items():
        if old in args:
            if new in args:
                raise InvalidArguments(
                    f"invalid arguments for {tool.name}: give {new!r} ({old!r} is its old name)"
                )
            args[new] = args.pop(old)
    errors = sorted(
        jsonschema.Draft202012Validator(tool.schema).iter_errors(args), key=lambda e: e.path
    )
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.path)
        raise InvalidArguments(
            f"invalid arguments for {tool.name}: {f'{where}: ' if where else ''}{e.message}"
        )
    return args


def _error(verb: str, status: str, code: str, message: str) -> dict[str, Any]:
    return {"verb": verb, "status": status, "error": {"code": code, "message": message}}


def call(live: LiveGraph, name: str, arguments: dict[str, Any] | None) -> tuple[dict, bool]:
    """Run one tool: (JSON-safe result, is_error). Never raises for bad input or a failed
    verb; an unexpected failure is an error result too (and one line on stderr)."""
    tool = BY_NAME.get(name)
    if tool is None:
        msg = f"unknown tool {name!r}: use one of {', '.join(BY_NAME)}"
        return _error(name, "error", "unknown-tool", msg), True
    try:
        args = validate(tool, arguments)
        result = tool.call(live.get(), args)
        data = result.to_dict() if hasattr(result, "to_dict") else result
        data = redact_obj(json.loads(json.dumps(data, default=str)))
    except InvalidArguments as exc:
        return _error(name, "error", "invalid-arguments", str(exc)), True
    except StoreNotFound as exc:
        return _error(name, "not-indexed", "not-indexed", str(exc)), True
    except CtxframeError as exc:
        return _error(name, "error", type(exc).__name__, str(exc)), True
    except Exception as exc:  # a bug must not take the server down
        print(f"ctxframe mcp: {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return _error(name, "error", "internal", f"{type(exc).__name__}: {exc}"), True
    status = data.get("status") if isinstance(data, dict) else None
    return data, status is not None and status not in SUCCESS


# -- the server -----------------------------------------------------------------------------------


def build_server(live: LiveGraph):
    """The MCP server object (the SDK's low-level ``Server``) answering from ``live``."""
    try:
        import mcp_types as types
        from mcp.server.lowlevel import Server
    except ImportError:
        raise CtxframeError(INSTALL_HINT) from None

    listed = [
        types.Tool(
            name=t.name,
            description=t.description,
            input_schema=t.schema,
            annotations=types.ToolAnnotations(
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        )
        for t in TOOLS
    ]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params) -> types.CallToolResult:
        data, is_error = call(live, params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
            structured_content=data if isinstance(data, dict) else {"result": data},
            is_error=is_error,
        )

    return Server(
        "ctxframe",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(repo: str = ".", store: str | None = None) -> None:
    """Serve the repository's graph over stdin/stdout until the client closes the pipe."""
    live = LiveGraph(repo, store)
    server = build_server(live)
    import anyio
    from mcp.server.stdio import stdio_server

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        live.get().warm()  # before the first call; a missing index is reported per call
    except CtxframeError as exc:
        print(f"ctxframe mcp: {exc}", file=sys.stderr)
    anyio.run(run)

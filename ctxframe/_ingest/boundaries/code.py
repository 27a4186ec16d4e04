"""Boundaries written in code, found by matching the reference table against a rule table:
env reads, outbound HTTP, process execution and route registrations — all as joins.

A rule is (language family, receiver, callee name) → what the call touches; the first
string-literal argument of the call names it (env var, URL, program, route path).
"""

from __future__ import annotations

import polars as pl

from ctxframe._core.languages import LANGUAGES
from ctxframe._ingest.boundaries._rows import is_secret_name
from ctxframe._ingest.boundaries.calls import CALL_NAMES, CHILD_PROCESS, ROUTE_NAMES, RULES
from ctxframe._ingest.boundaries.routes import STRUCTURE, route_rows, split_facts

_FAMILY = {lang.name: lang.family for lang in LANGUAGES}
_ROUTE_LANGUAGES = [lang.name for lang in LANGUAGES if lang.family in ("python", "js")]

BOUNDARY_NODE_COLS = {
    "id": pl.String,
    "kind": pl.String,
    "label": pl.String,
    "qualname": pl.String,
    "language": pl.String,
    "path": pl.String,
    "line_start": pl.Int32,
    "line_end": pl.Int32,
    "signature": pl.String,
    "doc": pl.String,
    "parent": pl.String,
    "transport": pl.String,
    "direction": pl.String,
    "secret": pl.Boolean,
}
BOUNDARY_EDGE_COLS = {
    "src": pl.String,
    "dst": pl.String,
    "kind": pl.String,
    "confidence": pl.String,
    "name": pl.String,
    "path": pl.String,
    "line": pl.Int32,
}


def _rules() -> pl.DataFrame:
    rows = [(fam, recv or "", name, what) for fam, recv, names, what in RULES for name in names]
    return pl.DataFrame(rows, schema=["family", "recv", "name", "what"], orient="row")


def _route_path(expr: pl.Expr) -> pl.Expr:
    """`/refunds/<order_id>`, `/refunds/<int:id>`, `/refunds/:id`, `/files/{path:path}` →
    `/refunds/{id}`, `/files/{path}`."""
    return (
        expr.str.replace_all(r"<(?:[^:>]+:)?([^>]+)>", "{$1}")
        .str.replace_all(r"\{([^{}:]+):[^{}]*\}", "{$1}")
        .str.replace_all(r":([A-Za-z_]\w*)", "{$1}")
    )


# A call that may register a route, or shape routes (a router, a mount): the tables of
# boundaries.calls decide which are (boundaries.routes).
_ROUTE_CALL = (pl.col("kind") == "call") & pl.col("name").is_in(ROUTE_NAMES + STRUCTURE)

# Only env reads and calls a rule, child_process or a route can name matter.
_MAY_MATCH = (pl.col("kind") == "env") | (
    (pl.col("kind") == "call") & pl.col("name").is_in(sorted(CALL_NAMES))
)
_SHAPING = (pl.col("kind") == "call") & pl.col("name").is_in(STRUCTURE)
# every row reads_boundaries reads: those, the imports, the calls that shape routes
_ASKED = _MAY_MATCH | (pl.col("kind") == "import") | _SHAPING


def reads_boundaries(refs: pl.DataFrame) -> bool:
    """Whether any of `refs` yields a boundary row or a handler (see from_refs)."""
    if not _may_read(refs.filter(_MAY_MATCH)):
        return False
    # What from_refs reads, lines as their order alone (it only joins, sorts and dedupes on
    # them): a file saved again with lines moved asks the same question, answered once.
    asked = refs.filter(_ASKED)
    rows = asked.with_columns(pl.col("line").rank("dense"))
    for seen, answer in _ANSWERS:
        if seen.equals(rows):
            return answer
    answer = _reads(asked)
    _ANSWERS.insert(0, (rows, answer))
    del _ANSWERS[_KEEP:]
    return answer


# the last few questions reads_boundaries answered in full (a watcher's saves repeat them)
_ANSWERS: list[tuple[pl.DataFrame, bool]] = []
_KEEP = 4


def _reads(refs: pl.DataFrame) -> bool:
    shaping = refs.filter(_SHAPING)
    facts = split_facts(shaping).select(pl.col("^f_(var|obj|include)$").is_not_null().any())
    if facts.sum_horizontal().item():
        return True  # a router, a mount or an include: the prefixes of other files' routes
    return not all(f.is_empty() for f in from_refs(refs))


def _may_read(refs: pl.DataFrame) -> bool:
    """Whether from_refs can find anything in these `_MAY_MATCH` rows: everything it yields
    comes from an env read, a call a rule names, a JS exec-style call or a route-like call
    (a cheap test: most calls named `get` or `run` are none of these)."""
    if refs.is_empty():
        return False
    rows = refs.with_columns(
        family=pl.col("language").replace_strict(_FAMILY, default=pl.col("language")),
        recv=pl.col("receiver").str.extract(r"([A-Za-z_]\w*)$", 1).fill_null(""),
    )
    calls = rows.filter(pl.col("kind") == "call")
    js_exec = (pl.col("family") == "js") & pl.col("name").is_in(CHILD_PROCESS)
    other = (pl.col("kind") != "call") | js_exec | _ROUTE_CALL
    return bool(
        rows.select(other.any()).item()
        or calls.join(_rules(), on=["family", "recv", "name"], how="semi").height
    )


def _os_environ(refs: pl.DataFrame) -> pl.Series:
    """``path NUL receiver`` of each name a Python file binds to the process environment:
    ``os.environ`` (or ``<alias>.environ`` for ``import os as <alias>``) and, after ``from os
    import environ``, ``environ``. Another ``environ`` (a WSGI app's parameter, a request's
    attribute) holds a request's variables, not the process's; an ``_environ`` attribute is
    taken to be a copy of the process's."""
    alias, module = pl.col("alias"), pl.col("module")
    plain = alias.is_null() | (alias == module)  # `import os`, `import os.path`: binds os
    name = pl.col("name")
    os_module = (module == "os") | (module.str.starts_with("os.") & name.is_null() & plain)
    python = (pl.col("kind") == "import") & (pl.col("language") == "python")
    binds = pl.when(plain).then(pl.lit("os")).otherwise(alias)
    bound = pl.when(name.is_null()).then(pl.concat_str(binds, pl.lit(".environ")))
    bound = bound.when(name == "environ").then(alias.fill_null("environ"))
    keys = refs.filter(python & os_module).select(pl.concat_str("path", bound, separator="\x00"))
    return keys.to_series().drop_nulls()


def from_refs(refs: pl.DataFrame | pl.LazyFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Boundary nodes and edges found in code, plus handler references (route → handler name)
    for the resolver to link like calls. `refs` may be lazy: only the rows that matter are read."""
    if isinstance(refs, pl.LazyFrame):
        refs = refs.filter(_MAY_MATCH | (pl.col("kind") == "import")).collect()
    # A JS file importing child_process: exec-style calls there run programs, whatever alias.
    child = (
        refs.filter(
            (pl.col("kind") == "import")
            & pl.col("module").is_in(["child_process", "node:child_process"])
        )
        .select("path")
        .unique()
    )
    environ = _os_environ(refs)
    imports = refs.filter(
        (pl.col("kind") == "import") & pl.col("language").is_in(_ROUTE_LANGUAGES)
    )
    refs = (
        refs.filter(_MAY_MATCH)
        .pipe(split_facts)
        .with_columns(
            family=pl.col("language").replace_strict(_FAMILY, default=pl.col("language")),
            # rules name the receiver's last part: `java.net.URI` → URI, `os.environ` → environ
            recv=pl.col("receiver").str.extract(r"([A-Za-z_]\w*)$", 1).fill_null(""),
        )
        .filter(
            (pl.col("family") != "python")
            | (pl.col("recv") != "environ")  # an `_environ` copy stands for the process's
            | pl.concat_str("path", "receiver", separator="\x00").is_in(environ.implode())
        )
    )
    calls = refs.filter(pl.col("kind") == "call")
    matched = pl.concat(
        [
            calls.join(_rules(), on=["family", "recv", "name"], how="inner"),
            calls.join(child, on="path", how="semi")
            .filter((pl.col("family") == "js") & pl.col("name").is_in(CHILD_PROCESS))
            .with_columns(what=pl.lit("exec")),
        ]
    ).unique(
        ["src", "path", "line", "name", "recv", "arg", "what"], keep="first", maintain_order=True
    )
    env_reads = pl.concat(
        [
            matched.filter((pl.col("what") == "env") & pl.col("arg").is_not_null()).select(
                "src", "path", "line", var=pl.col("arg")
            ),
            refs.filter(pl.col("kind") == "env").select("src", "path", "line", var=pl.col("name")),
        ]
    ).filter(pl.col("var").str.contains(r"^[A-Za-z_][A-Za-z0-9_]*$"))
    http = (
        matched.filter(pl.col("what") == "http")
        .with_columns(
            # only a literal that looks like a URL or a path names the endpoint
            arg=pl.when(pl.col("arg").str.contains(r"^([a-z][a-z0-9+.-]*://|/)")).then("arg"),
        )
        .with_columns(
            host=pl.col("arg").str.extract(r"^[a-z][a-z0-9+.-]*://([^/?#:]+)", 1),
        )
        .with_columns(
            target=pl.when(pl.col("host").is_not_null())
            .then(pl.col("host"))
            .when(pl.col("arg").str.starts_with("/"))
            .then(pl.lit("(relative)"))
            .otherwise(pl.lit("(dynamic)"))
        )
    )
    execs = matched.filter(pl.col("what") == "exec").with_columns(
        program=pl.col("arg").str.extract(r"^\s*([^\s]+)", 1).fill_null("(dynamic)")
    )
    routes = (
        route_rows(refs.filter(_ROUTE_CALL), imports)
        .with_columns(route=_route_path(pl.col("route")))
        .with_columns(rid=pl.concat_str(pl.lit("route:"), "method", pl.lit(" "), "route"))
    )

    def nodes_of(
        df: pl.DataFrame,
        id_: pl.Expr,
        kind: str,
        label: pl.Expr,
        transport: str,
        direction: str,
        secret: pl.Expr | None = None,
    ) -> pl.DataFrame:
        return df.select(
            id=id_,
            kind=pl.lit(kind),
            label=label,
            qualname=label,
            language=pl.lit(None, pl.String),
            path="path",
            line_start="line",
            line_end="line",
            signature=pl.lit(None, pl.String),
            doc=pl.lit(None, pl.String),
            parent=pl.lit(None, pl.String),
            transport=pl.lit(transport),
            direction=pl.lit(direction),
            secret=secret if secret is not None else pl.lit(None, pl.Boolean),
        )

    env_id = pl.concat_str(pl.lit("env:"), "var")
    http_id = pl.concat_str(pl.lit("http:"), "target")
    exec_id = pl.concat_str(pl.lit("exec:"), "program")
    secret = pl.col("var").map_elements(is_secret_name, return_dtype=pl.Boolean)
    nodes = pl.concat(
        [
            nodes_of(env_reads, env_id, "env", pl.col("var"), "config.env", "consumes", secret),
            nodes_of(
                http, http_id, "endpoint", pl.coalesce("host", "target"), "network.http", "consumes"
            ),
            nodes_of(execs, exec_id, "program", pl.col("program"), "process.exec", "consumes"),
            nodes_of(
                routes,
                pl.col("rid"),
                "route",
                pl.concat_str("method", pl.lit(" "), "route"),
                "network.http",
                "provides",
            ),
        ]
    ).cast(BOUNDARY_NODE_COLS)

    def edges_of(df: pl.DataFrame, src: pl.Expr, dst: pl.Expr, kind: str, name: pl.Expr):
        return df.select(
            src=src,
            dst=dst,
            kind=pl.lit(kind),
            confidence=pl.lit("EXTRACTED"),
            name=name,
            path="path",
            line="line",
        )

    decorated = routes.filter(pl.col("decorates").is_not_null())
    edges = pl.concat(
        [
            edges_of(env_reads, pl.col("src"), env_id, "reads", pl.col("var")),
            edges_of(http, pl.col("src"), http_id, "http", pl.coalesce("arg", "target")),
            edges_of(execs, pl.col("src"), exec_id, "exec", pl.coalesce("arg", "program")),
            edges_of(decorated, pl.col("rid"), pl.col("decorates"), "handles", pl.col("name")),
        ]
    ).cast(BOUNDARY_EDGE_COLS)
    # Express-style `app.post("/x", handler)`: the handler is a name to resolve like a call.
    handlers = routes.filter(pl.col("decorates").is_null()).select(
        src="rid",
        path="path",
        language="language",
        kind=pl.lit("handler"),
        name=pl.col("arg_name").str.extract(r"([A-Za-z_$][\w$]*)$", 1),
        receiver=pl.lit(None, pl.String),
        scope=pl.lit(None, pl.String),
        line="line",
    ).filter(pl.col("name").is_not_null())
    return nodes, edges, handlers


def uses_edges(import_edges: pl.DataFrame, deps: pl.DataFrame) -> pl.DataFrame:
    """`uses` edges from code files to the `dep:` nodes their imports name (INFERRED)."""
    if deps.is_empty():
        return pl.DataFrame(schema=BOUNDARY_EDGE_COLS)
    stubs = import_edges.filter(pl.col("dst").str.starts_with("module://")).with_columns(
        mod=pl.col("dst").str.strip_prefix("module://")
    )
    pkg = (
        pl.when(pl.col("mod").str.starts_with("@"))
        .then(pl.col("mod").str.extract(r"^(@[^/]+/[^/]+)", 1))
        .otherwise(pl.col("mod").str.extract(r"^([^/.]+)", 1))
    )
    key = lambda e: e.str.to_lowercase().str.replace_all(r"[-_.]+", "-")  # noqa: E731
    stubs = stubs.with_columns(key=key(pkg), gokey=pl.col("mod"))
    d = deps.select(dst_dep="id", key=key(pl.col("label")), gokey="label")
    plain = stubs.join(d.drop("gokey"), on="key", how="inner")
    go = stubs.join(d.drop("key"), on="gokey", how="inner")
    return (
        pl.concat([plain.select(go.columns), go])
        .select(
            src="src",
            dst="dst_dep",
            kind=pl.lit("uses"),
            confidence=pl.lit("INFERRED"),
            name="mod",
            path="path",
            line="line",
        )
        .unique(["src", "dst"], keep="first", maintain_order=True)
        .cast(BOUNDARY_EDGE_COLS)
    )

"""The on-disk contract: column names and types of every table in the store (see docs/schema.md)."""

from __future__ import annotations

import polars as pl

# 8: function metrics (cyclomatic, nesting, params, decorators, unreachable); 7: edges' `via`
# and `bound`; 6: tokens in the nodes' parts; 5: tables as datasets in parts; 4: tokens as
# codes + vocab; 3: versions
SCHEMA_VERSION = 8

NODE_KINDS = (
    "file",
    "module",
    "class",
    "struct",
    "interface",
    "enum",
    "type",
    "function",
    "method",
    "trait",  # Rust
    "namespace",  # C++, C#, Rust inline `mod m { … }`
    "declaration",  # C/C++ prototype or in-class method declaration (linked by `declares`)
    "table",  # SQL
    "view",
    "procedure",
    "document",  # one per Markdown / reStructuredText file
    "section",  # a heading, nested by level
    "bucket",  # `ctxframe index --dial`: an S3 bucket an env var points at (tables/views too)
    "script",  # a Python `if __name__ == "__main__":` block
)
EDGE_KINDS = (
    "contains", "imports", "calls", "extends", "implements", "declares", "mentions",
    "handles", "reads", "http", "exec", "uses", "sets", "selects", "routes", "runs",
)  # fmt: skip
BOUNDARY_KINDS = (
    "route", "env", "dep", "endpoint", "program", "workload", "service", "ingress",
    "configmap", "secret", "image",
)  # fmt: skip
CONFIDENCES = ("EXTRACTED", "INFERRED", "AMBIGUOUS")
PRODUCER = "ctxframe"  # the `producer` of every row ctxframe's own readers make

NODES = pl.Schema(
    {
        "id": pl.String,  # path::Qualified.Name | path (file) | module://name (stub)
        "kind": pl.String,
        "label": pl.String,  # short name as written: ProcessRefund
        "qualname": pl.String,  # PaymentRefundProcessor.ProcessRefund
        "language": pl.String,
        "path": pl.String,  # repo-relative, posix; null for module stubs
        "line_start": pl.Int32,
        "line_end": pl.Int32,
        "signature": pl.String,
        "doc": pl.String,
        "parent": pl.String,  # id of the enclosing node; null for files and stubs
        "producer": pl.String,
        # boundary nodes only (routes, env vars, deps, k8s objects, endpoints, programs)
        "transport": pl.String,  # network.http | config.env | process.exec | package | k8s …
        "direction": pl.String,  # consumes | provides
        "secret": pl.Boolean,  # by name only; a secret's value is never stored
        # functions and methods (ctxframe._ingest.metrics); null for other nodes
        "cyclomatic": pl.Int32,  # lizard's cyclomatic number
        "nesting": pl.Int32,  # deepest nesting of control structures
        "params": pl.Int32,  # parameters declared
        "decorators": pl.String,  # decorators, annotations, attributes: dotted names, "," between
        "unreachable": pl.Int32,  # first line of its body after a return/raise/break/continue
    }
)

EDGES = pl.Schema(
    {
        "src": pl.String,
        "dst": pl.String,  # null when the target resolves to nothing in the repo
        "kind": pl.String,
        "confidence": pl.String,
        "name": pl.String,  # the target as written at the site (callee, module, base)
        "path": pl.String,  # file the edge was read from
        "line": pl.Int32,
        "producer": pl.String,
        # how a call runs its target when it is not a plain call of what the site names: a
        # property (`property`, `setter`, `deleter`), a dunder an operator, a protocol or a
        # constructor runs (`__len__`, `__init__` inherited), `getattr`, `fixture`, a wrapper's
        # decorator, a library calling back; null for a plain call and for other kinds
        "via": pl.String,
        # the target runs on an instance made elsewhere (a method read through an instance, a
        # property, a dunder): it runs only where an instance of its class exists
        "bound": pl.Boolean,
    }
)


def conform_edges(frame):
    """`frame` (eager or lazy) with the EDGES columns in order, absent ones null."""
    names = frame.collect_schema().names() if hasattr(frame, "collect_schema") else frame.columns
    missing = [pl.lit(None, EDGES[c]).alias(c) for c in EDGES.names() if c not in names]
    return frame.with_columns(missing).select(EDGES.names()).cast(dict(EDGES))

FILES = pl.Schema(
    {
        "path": pl.String,
        "language": pl.String,  # null when no grammar applies
        "size": pl.Int64,
        "mtime_ns": pl.Int64,
        "lines": pl.Int32,
        "hash": pl.String,  # blake2b-128 hex of the bytes; null when skipped before reading
        "parse_errors": pl.Int32,
        "skip_reason": pl.String,  # null when indexed
    }
)

# The ranker's token table (docs/schema.md): `node` is the node's row in nodes.parquet (sorted by
# id), `field` an index into TOKEN_FIELDS, `token` a row of the vocabulary (sorted tokens).
TOKEN_FIELDS = ("name", "qualname", "path", "signature", "doc", "body")
TOKENS = pl.Schema({"node": pl.UInt32, "field": pl.UInt8, "token": pl.UInt32, "tf": pl.UInt16})
VOCAB = pl.Schema({"token": pl.String})

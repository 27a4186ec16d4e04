"""Native sources: env vars whose value, at dial time, is a database or bucket URL.

The graph knows environment variables by name only (`env:LEDGER_DATABASE_URL`). With
`ctxframe index --dial`, each such name whose value is present in the process environment is
looked at:

* `postgres://…` / `postgresql://…` — connected read-only; every table and view outside the
  system schemas becomes a `table` / `view` node (`table:ENVNAME/schema.name`, its columns in
  `doc`), linked `env:ENVNAME —declares→ table`.
* `s3://bucket/prefix` — a `bucket` node (`bucket:ENVNAME/bucket`) whose `doc` counts the
  top-level keys under the prefix; endpoint and credentials come from the usual AWS environment
  (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, …).

The env var's NAME identifies the source: the URL, user, password, host, port, database name
and prefix never enter a row. A source that cannot be reached is one line in the report (its
message scrubbed of all of those) and the index goes on. psycopg and boto3 are optional
(`pip install '.[dial]'` in a clone) and imported only here, only when a source of theirs is
dialled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import polars as pl

from ctxframe._ingest.adapters import EDGE_COLS, NODE_COLS

PRODUCER = "ctxframe.dial"
TIMEOUT = 10.0  # seconds to connect, and per statement / request
MAX_RELATIONS = 5000  # tables and views read from one database
MAX_KEY_PAGES = 100  # 1000 keys each: counts beyond are reported as "at least"

_PG_SCHEMES = ("postgres", "postgresql")
_CATALOG = r"""
SELECT n.nspname, c.relname, c.relkind,
       coalesce(string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                           ORDER BY a.attnum), '')
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_attribute a
       ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\_toast%%' AND n.nspname NOT LIKE 'pg\_temp\_%%'
GROUP BY n.nspname, c.relname, c.relkind
ORDER BY n.nspname, c.relname
LIMIT %s
"""


class Unreachable(Exception):
    """A source could not be read; the message is already scrubbed."""


@dataclass
class DialRun:
    """Rows from dialled sources, one line per source read and per source that failed."""

    nodes: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=NODE_COLS))
    edges: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=EDGE_COLS))
    dialled: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"dialled": self.dialled, "unreachable": self.unreachable}

    def lines(self) -> list[str]:
        return [f"dialled: {d}" for d in self.dialled] + [
            f"dial unreachable: {u}" for u in self.unreachable
        ]


def _scrub(message: str, value: str, extra: Iterable[str] = ()) -> str:
    """One line, without the URL, any URL at all, or any part of the connection info."""
    parts = {value, *extra}
    try:
        u = urlsplit(value)
        netloc = u.netloc
        parts |= {netloc, u.path.lstrip("/"), u.query, unquote(u.path.lstrip("/"))}
        userinfo, _, hosts = netloc.rpartition("@")
        user, _, password = userinfo.partition(":")
        parts |= {user, password, unquote(user), unquote(password), hosts}
        for hp in hosts.split(","):
            if hp.startswith("["):  # [::1]:5432
                host, _, port = hp[1:].partition("]")
                port = port.lstrip(":")
            else:
                host, _, port = hp.partition(":")
            parts |= {hp, host, port}
    except ValueError:
        pass
    text = re.sub(r"[A-Za-z][A-Za-z0-9+.-]*://\S+", "***", message)
    text = re.sub(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\[[0-9A-Fa-f:.]+\]", "***", text)  # resolved IPs
    for p in sorted((p for p in parts if p and len(p) >= 2), key=len, reverse=True):
        text = text.replace(p, "***")
    return " ".join(text.split())[:300]


def _node(id_: str, kind: str, label: str, doc: str, transport: str) -> dict:
    return {
        "id": id_,
        "kind": kind,
        "label": label,
        "qualname": label,
        "language": None,
        "path": None,
        "line_start": None,
        "line_end": None,
        "signature": None,
        "doc": doc if len(doc) <= 1000 else doc[:999] + "…",
        "parent": None,
        "transport": transport,
        "direction": "consumes",
        "secret": None,
        "producer": PRODUCER,
    }


def _edge(env_id: str, dst: str, label: str, path: str | None, line: int | None) -> dict:
    return {
        "src": env_id,
        "dst": dst,
        "kind": "declares",
        "confidence": "EXTRACTED",
        "name": label,
        "path": path,
        "line": line,
        "producer": PRODUCER,
    }


def _postgres(value: str, timeout: float) -> list[tuple[str, str, str]]:
    """(schema, name, 'table'|'view', columns) of every user relation, read-only."""
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise Unreachable("psycopg is not installed (pip install 'psycopg[binary]')") from None
    try:
        info = {str(v) for v in conninfo_to_dict(value).values() if v is not None}
    except Exception:
        info = set()
    try:
        with psycopg.connect(value, connect_timeout=max(1, int(timeout))) as conn:
            conn.read_only = True
            conn.execute("SELECT set_config('statement_timeout', %s, true)", [f"{timeout:g}s"])
            rows = conn.execute(_CATALOG, [MAX_RELATIONS]).fetchall()
            conn.rollback()
    except Exception as exc:
        raise Unreachable(_scrub(f"{type(exc).__name__}: {exc}", value, info)) from None
    kinds = {"r": "table", "p": "table", "f": "table", "v": "view", "m": "view"}
    return [(schema, name, kinds[k], cols) for schema, name, k, cols in rows]


def _s3(value: str, timeout: float) -> tuple[str, int, bool]:
    """(bucket, top-level keys under the prefix, capped?)."""
    u = urlsplit(value)
    bucket, prefix = u.netloc, u.path.lstrip("/")
    if not bucket:
        raise Unreachable("no bucket in the s3:// URL")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise Unreachable("boto3 is not installed (pip install boto3)") from None
    try:
        client = boto3.client(
            "s3",
            config=Config(
                connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1}
            ),
        )
        count = 0
        pages = client.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix, Delimiter="/"
        )
        for n, page in enumerate(pages, 1):
            count += len(page.get("Contents", [])) + len(page.get("CommonPrefixes", []))
            if n >= MAX_KEY_PAGES:
                return bucket, count, page.get("IsTruncated", False)
    except Exception as exc:
        raise Unreachable(_scrub(f"{type(exc).__name__}: {exc}", value, [prefix])) from None
    return bucket, count, False


def dial(
    env: pl.DataFrame | Iterable[tuple[str, str | None, int | None]],
    environ: Mapping[str, str],
    *,
    timeout: float = TIMEOUT,
) -> DialRun:
    """Dial every env var of the graph whose value in `environ` is a native source URL.

    `env`: the graph's `env` nodes (a frame with `label`, `path`, `line_start`) or
    (NAME, path, line) tuples; path and line place the `declares` edges.
    """
    if isinstance(env, pl.DataFrame):
        env = env.select("label", "path", "line_start").iter_rows()
    seen: dict[str, tuple[str | None, int | None]] = {}
    for name, path, line in env:
        seen.setdefault(name, (path, line))
    run = DialRun()
    nodes: list[dict] = []
    edges: list[dict] = []
    for name in sorted(seen):
        value = (environ.get(name) or "").strip()
        scheme = value.split("://", 1)[0].lower() if "://" in value else ""
        if scheme not in (*_PG_SCHEMES, "s3"):
            continue  # not a URL, or not a source ctxframe dials
        env_id, (path, line) = f"env:{name}", seen[name]
        kind = "postgres" if scheme in _PG_SCHEMES else "s3"
        try:
            if kind == "postgres":
                rels = _postgres(value, timeout)
                for schema, rel, rkind, cols in rels:
                    label = f"{schema}.{rel}"
                    nid = f"{rkind}:{name}/{label}"
                    doc = f"columns: {cols}" if cols else "no columns"
                    nodes.append(_node(nid, rkind, label, doc, "database"))
                    edges.append(_edge(env_id, nid, label, path, line))
                n_tables = sum(r[2] == "table" for r in rels)
                schemas = len({r[0] for r in rels})
                run.dialled.append(
                    f"{env_id} (postgres): {n_tables} tables, {len(rels) - n_tables} views "
                    f"in {schemas} schemas"
                )
            else:
                bucket, count, capped = _s3(value, timeout)
                nid = f"bucket:{name}/{bucket}"
                has_prefix = bool(urlsplit(value).path.strip("/"))
                where = "under the configured prefix" if has_prefix else "at the bucket's root"
                doc = f"{'at least ' if capped else ''}{count} top-level keys {where}"
                nodes.append(_node(nid, "bucket", bucket, doc, "storage.s3"))
                edges.append(_edge(env_id, nid, bucket, path, line))
                run.dialled.append(f"{env_id} (s3): 1 bucket, {doc}")
        except Unreachable as exc:
            run.unreachable.append(f"{env_id} ({kind}): {exc}")
        except ValueError as exc:  # a malformed URL
            run.unreachable.append(f"{env_id} ({kind}): {_scrub(str(exc), value)}")
    run.nodes = pl.DataFrame(nodes, schema=NODE_COLS).unique("id", keep="first").sort("id")
    run.edges = pl.DataFrame(edges, schema=EDGE_COLS).sort(pl.all(), nulls_last=True)
    return run

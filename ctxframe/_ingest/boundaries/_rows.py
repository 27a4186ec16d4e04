"""Row builders shared by the boundary readers: one dict per node or edge, schema-shaped."""

from __future__ import annotations

import re

# Names that mark a secret (matched on the upper-cased, underscore-split name).
_SECRET = re.compile(
    r"(^|_)(KEY|KEYS|TOKEN|TOKENS|SECRET|SECRETS|PASSWORD|PASSWD|PWD|CREDENTIAL|CREDENTIALS|DSN|"
    r"PRIVATE|CERT|AUTH|APIKEY|SALT|SIGNATURE|SESSION)($|_)"
)


def is_secret_name(name: str) -> bool:
    """True when an env-var or key name looks like it holds a secret (by name, never value)."""
    return bool(_SECRET.search(re.sub(r"[^A-Z0-9]+", "_", name.upper())))


def node(
    id: str,
    kind: str,
    label: str,
    *,
    path: str | None = None,
    line: int | None = None,
    qualname: str | None = None,
    signature: str | None = None,
    doc: str | None = None,
    transport: str | None = None,
    direction: str | None = None,
    secret: bool | None = None,
) -> dict:
    """A boundary node row (the shared columns of nodes.parquet plus the boundary columns)."""
    return {
        "id": id,
        "kind": kind,
        "label": label,
        "qualname": qualname or label,
        "language": None,
        "path": path,
        "line_start": line,
        "line_end": line,
        "signature": signature,
        "doc": doc,
        "parent": None,
        "transport": transport,
        "direction": direction,
        "secret": secret,
    }


def edge(
    src: str,
    dst: str,
    kind: str,
    path: str,
    line: int | None,
    *,
    confidence: str = "EXTRACTED",
    name: str | None = None,
) -> dict:
    """A boundary edge row."""
    return {
        "src": src,
        "dst": dst,
        "kind": kind,
        "confidence": confidence,
        "name": name or dst.split(":", 1)[-1],
        "path": path,
        "line": line,
    }


def env_node(name: str, path: str | None, line: int | None) -> dict:
    """`env:NAME`: an environment variable, by name only."""
    return node(
        f"env:{name}",
        "env",
        name,
        path=path,
        line=line,
        transport="config.env",
        direction="consumes",
        secret=is_secret_name(name),
    )


def line_of(text: str, needle: str, start: int = 0) -> int | None:
    """1-based line of the first occurrence of `needle` at or after `start`, or None."""
    i = text.find(needle, start)
    return None if i < 0 else text.count("\n", 0, i) + 1

"""OpenAPI / Swagger documents → `route:METHOD /path` nodes, linked to handlers by operationId
(resolved against the code's function names later, INFERRED)."""

from __future__ import annotations

import json
import posixpath

from ctxframe._ingest.boundaries._rows import edge, line_of, node

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def is_candidate(path: str, text: str) -> bool:
    ext = posixpath.splitext(path)[1]
    head = text[:2000]
    return ext in (".yaml", ".yml", ".json") and ("openapi" in head or "swagger" in head)


def route_id(method: str, route: str) -> str:
    """The id every route source agrees on: `route:POST /refunds/{id}`."""
    return f"route:{method.upper()} {route}"


def read(path: str, text: str) -> tuple[list[dict], list[dict]]:
    try:
        if path.endswith(".json"):
            doc = json.loads(text)
        else:
            import yaml

            doc = yaml.safe_load(text)
    except Exception:
        return [], []
    if not isinstance(doc, dict) or not ({"openapi", "swagger"} & set(doc)):
        return [], []
    nodes, edges = [], []
    for route, ops in (doc.get("paths") or {}).items():
        for method, op in (ops or {}).items():
            if method not in METHODS or not isinstance(op, dict):
                continue
            rid = route_id(method, route)
            line = line_of(text, route)
            nodes.append(
                node(
                    rid,
                    "route",
                    f"{method.upper()} {route}",
                    path=path,
                    line=line,
                    signature=op.get("summary"),
                    doc=op.get("operationId"),
                    transport="network.http",
                    direction="provides",
                )
            )
            edges.append(edge(path, rid, "declares", path, line))
            if op.get("operationId"):
                # dst "name:X" is resolved to a function named X after extraction.
                edges.append(
                    edge(
                        rid,
                        f"name:{op['operationId']}",
                        "handles",
                        path,
                        line,
                        confidence="INFERRED",
                        name=op["operationId"],
                    )
                )
    return nodes, edges

"""Env declarations: `.env*` files and compose `environment:` blocks → `env:NAME` nodes.

Only names are read; the text after `=` is never looked at, so no value can enter the store.
"""

from __future__ import annotations

import posixpath
import re

from ctxframe._ingest.boundaries._rows import edge, env_node

_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")
_COMPOSE = ("docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml")


def is_env_file(path: str) -> bool:
    """`.env`, `.env.example`, `.env.local`, `app.env`, …"""
    name = posixpath.basename(path)
    return name == ".env" or name.startswith(".env.") or name.endswith(".env")


def is_compose(path: str) -> bool:
    return posixpath.basename(path) in _COMPOSE


def read(path: str, text: str) -> tuple[list[dict], list[dict]]:
    """env nodes declared by an env file or a compose file."""
    names: list[tuple[str, int]] = []
    if is_env_file(path):
        for i, line in enumerate(text.splitlines(), 1):
            if m := _ASSIGN.match(line):
                names.append((m.group(1), i))
    elif is_compose(path):
        import yaml

        try:
            doc = yaml.safe_load(text) or {}
        except yaml.YAMLError:
            return [], []
        for svc in (doc.get("services") or {}).values() if isinstance(doc, dict) else []:
            env = (svc or {}).get("environment") or {}
            keys = list(env) if isinstance(env, dict) else [str(e).split("=", 1)[0] for e in env]
            for key in keys:
                line = next((i for i, ln in enumerate(text.splitlines(), 1) if key in ln), None)
                names.append((key, line))
    nodes = [env_node(n, path, line) for n, line in names]
    edges = [edge(path, f"env:{n}", "declares", path, line, name=n) for n, line in names]
    return nodes, edges

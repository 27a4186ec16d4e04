"""Project configuration: `.ctxframe/config.toml`, else `[tool.ctxframe]` in pyproject.toml."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field

from ctxframe._core.errors import ConfigError


def default_store(root: str) -> str:
    """Where the store of the repository at `root` lives unless told otherwise."""
    return os.path.join(root, ".ctxframe", "graph")


def find_root(start: str) -> str:
    """The nearest directory at or above `start` whose default store holds an index, as git
    finds its repository from a sub-directory; `start` (made real) when there is none."""
    here = first = os.path.realpath(start)
    while True:
        if os.path.isfile(os.path.join(default_store(here), "meta.json")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return first
        here = parent


@dataclass(frozen=True)
class Config:
    """Scope levers (seed 001): exclude is index-time, deprioritize and within are rank-time."""

    exclude: tuple[str, ...] = ()
    deprioritize: tuple[str, ...] = ()
    project_tokens: tuple[str, ...] = ()
    source: str | None = None  # file the configuration came from
    extra: dict = field(default_factory=dict)
    history: dict = field(default_factory=dict)  # the `[history]` table (ctxframe._history)


_KEYS = {"exclude", "deprioritize", "project_tokens"}
# tables other stages read and check themselves, kept as written in `Config.extra`
_TABLES = {"audit", "history"}  # ctxframe._audit.config, ctxframe._history.settings


def _pyproject_table(path: str) -> dict:
    """`[tool.ctxframe]` of a pyproject.toml; one that cannot be read holds none (the index
    skips the file with its reason, it does not stop)."""
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, OSError, RecursionError, UnicodeDecodeError):
        return {}
    tool = table.get("tool")
    own = tool.get("ctxframe") if isinstance(tool, dict) else None
    return own if isinstance(own, dict) else {}


def load_config(root: str) -> Config:
    """Read the configuration of the repository at `root` (defaults when there is none)."""
    own = os.path.join(root, ".ctxframe", "config.toml")
    pyproject = os.path.join(root, "pyproject.toml")
    table, source = {}, None
    try:
        if os.path.isfile(own):
            with open(own, "rb") as fh:
                table, source = tomllib.load(fh), own
        elif os.path.isfile(pyproject):
            table = _pyproject_table(pyproject)
            source = pyproject if table else None
    except (tomllib.TOMLDecodeError, OSError, RecursionError) as exc:
        raise ConfigError(f"cannot read {source or own}: {exc}; fix the TOML and re-run") from exc
    unknown = set(table) - _KEYS - _TABLES
    if unknown:
        raise ConfigError(
            f"{source}: unknown setting(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(_KEYS | _TABLES))}"
        )
    extra = {}
    for key in _TABLES & set(table):
        if not isinstance(table[key], dict):
            raise ConfigError(f"{source}: `{key}` must be a table ([{key}])")
        extra[key] = table[key]
    out = {}
    for key in _KEYS:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{source}: `{key}` must be a list of strings")
        out[key] = tuple(value)
    return Config(**out, source=source, extra=extra, history=extra.get("history", {}))

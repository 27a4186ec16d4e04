"""How the history is read: the `[history]` table of the configuration, overridden by the
command line (`index --no-history`, `--anonymize`), and the anonymizing key.

```toml
[history]                 # .ctxframe/config.toml, or [tool.ctxframe.history] in pyproject.toml
enabled = true            # read the git history into the store (default true)
since = "2 years ago"     # only commits since then (any date git reads)
max_commits = 20000       # only the newest N commits
anonymize = false         # keyed hashes instead of author names and emails
```

The key is never stored: it is `CTXFRAME_HISTORY_KEY` when set, else a random key kept in
the user's configuration directory (`$XDG_CONFIG_HOME/ctxframe/history.key`, mode 0600),
made on first use. The store keeps only its fingerprint, so a run with another key reads
the history again instead of mixing two sets of hashes.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass

from ctxframe._core.errors import ConfigError

_KEYS = {"enabled", "since", "max_commits", "anonymize"}
KEY_ENV = "CTXFRAME_HISTORY_KEY"


@dataclass(frozen=True)
class HistorySettings:
    enabled: bool = True
    since: str | None = None
    max_commits: int | None = None
    anonymize: bool = False

    def bounds(self) -> dict:
        """What the stored history was read under (a change reads it again)."""
        return {"since": self.since, "max_commits": self.max_commits}


def settings(table: dict | None, source: str | None = None, *, enabled: bool | None = None,
             anonymize: bool | None = None) -> HistorySettings:  # fmt: skip
    """The settings of a configuration's `history` table, with the command line's overrides
    (None: as configured)."""
    table = table or {}
    where = source or "the configuration"
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(
            f"{where}: unknown history setting(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(_KEYS))}"
        )
    for key in ("enabled", "anonymize"):
        if key in table and not isinstance(table[key], bool):
            raise ConfigError(f"{where}: history `{key}` must be true or false")
    since = table.get("since")
    if since is not None and (not isinstance(since, str) or not since.strip()):
        raise ConfigError(f"{where}: history `since` must be a date git reads, as a string")
    most = table.get("max_commits")
    if most is not None and (isinstance(most, bool) or not isinstance(most, int) or most < 1):
        raise ConfigError(f"{where}: history `max_commits` must be a whole number of at least 1")
    return HistorySettings(
        enabled=table.get("enabled", True) if enabled is None else enabled,
        since=since,
        max_commits=most,
        anonymize=table.get("anonymize", False) if anonymize is None else anonymize,
    )


def key_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "ctxframe", "history.key")


def anonymize_key() -> bytes:
    """The key of the keyed hashes (see the module's doc): never written into a store."""
    given = os.environ.get(KEY_ENV)
    if given:
        return given.encode("utf-8", "surrogateescape")
    path = key_path()
    try:
        with open(path, "rb") as fh:
            key = fh.read().strip()
        if key:
            return key
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    key = secrets.token_hex(32).encode()
    tmp = f"{path}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    try:
        os.link(tmp, path)  # the first writer's key wins; every later run reads it
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    with open(path, "rb") as fh:
        return fh.read().strip()

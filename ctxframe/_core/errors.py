"""Errors ctxframe raises. Every message says what to do next; the CLI prints it as one line.

CtxframeError
├── RepoNotFound        the path to index is not a directory
├── StoreNotFound       no index yet at the store path
├── StoreVersionError   the store was written by another schema version
├── StoreWriteError     the store cannot be written (old store left untouched)
├── SymbolNotFound      a verb was given a name that matches nothing
└── ConfigError         .ctxframe/config.toml or [tool.ctxframe] is invalid
"""

from __future__ import annotations


class CtxframeError(Exception):
    """Base of every error ctxframe raises on purpose."""


class RepoNotFound(CtxframeError):
    """The path to index is not a directory."""


class StoreNotFound(CtxframeError):
    """No store at the expected path."""


class StoreVersionError(CtxframeError):
    """The store on disk has another schema version."""


class StoreWriteError(CtxframeError):
    """The store could not be written; the previous one is untouched."""


class SymbolNotFound(CtxframeError):
    """A verb was given a name that matches no node."""


class ConfigError(CtxframeError):
    """The project configuration is invalid."""

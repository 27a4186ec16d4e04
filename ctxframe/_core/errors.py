"""Errors ctxframe raises. Every message says what to do next; the CLI prints it as one line.

CtxframeError
├── RepoNotFound        the path to index is not a directory
│   └── NothingToIndex  the directory holds no file to index (no store is made)
├── StoreNotFound       no index yet at the store path
├── StoreVersionError   the store was written by another schema version
├── StoreWriteError     the store cannot be written (old store left untouched)
├── StoreCorrupt        a store file is damaged or missing (`ctxframe index` rebuilds it)
├── StoreLocked         another `index` is writing the store (`--no-wait`)
├── BadInput            an argument cannot be used (not text, out of range)
├── SymbolNotFound      a verb was given a name that matches nothing
└── ConfigError         .ctxframe/config.toml or [tool.ctxframe] is invalid
"""

from __future__ import annotations


class CtxframeError(Exception):
    """Base of every error ctxframe raises on purpose."""


class RepoNotFound(CtxframeError):
    """The path to index is not a directory."""


class NothingToIndex(RepoNotFound):
    """The directory holds no file the walk takes: no store is made for it."""


class StoreNotFound(CtxframeError):
    """No store at the expected path."""


class StoreVersionError(CtxframeError):
    """The store on disk has another schema version."""


class StoreWriteError(CtxframeError):
    """The store could not be written; the previous one is untouched."""


class StoreCorrupt(CtxframeError):
    """A store file is damaged (size, hash or decoding) or missing; `ctxframe index` rebuilds."""


class StoreLocked(CtxframeError):
    """Another process holds the store's writer lock."""


class BadInput(CtxframeError):
    """An argument that cannot be used as given (not valid text, out of range)."""


class SymbolNotFound(CtxframeError):
    """A verb was given a name that matches no node."""


class ConfigError(CtxframeError):
    """The project configuration is invalid."""

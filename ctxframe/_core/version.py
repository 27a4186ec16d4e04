"""The installed ctxframe version (stored in every store's meta.json)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ctxframe")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+local"

"""The ctxframe version (stored in every store's meta.json): a literal, which the build reads
(hatch's dynamic version), so a fresh CLI process does not pay for `importlib.metadata`."""

__version__ = "0.1.0"

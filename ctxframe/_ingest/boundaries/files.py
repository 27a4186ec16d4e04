"""Which boundary reader a non-code file goes to; run inside the extraction workers."""

from __future__ import annotations

from ctxframe._ingest.boundaries import envfiles, kubernetes, manifests, openapi
from ctxframe._ingest.isolate import check_depth


def read_file(path: str, text: str) -> tuple[list[dict], list[dict]]:
    """Boundary nodes and edges declared by one file ([], [] for files that declare none).
    Data nested absurdly deep raises TooNested (the file is skipped with that reason)."""
    if manifests.is_manifest(path):
        check_depth(text)
        return manifests.read(path, text)
    if envfiles.is_env_file(path) or envfiles.is_compose(path):
        check_depth(text)
        return envfiles.read(path, text)
    if openapi.is_candidate(path, text):
        check_depth(text)
        nodes, edges = openapi.read(path, text)
        if nodes:
            return nodes, edges
    if kubernetes.is_candidate(path, text):
        check_depth(text)
        return kubernetes.read(path, text)
    return [], []

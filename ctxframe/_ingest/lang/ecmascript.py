"""JavaScript and TypeScript: relative import specifiers to candidate files."""

from __future__ import annotations

import posixpath

EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts")


def candidates(spec: str, path: str) -> tuple[str, tuple[str, ...]]:
    if not spec.startswith("."):
        return spec, ()
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    stem, ext = posixpath.splitext(target)
    cands = [target] if ext else []
    if ext in (".js", ".jsx", ".mjs", ".cjs"):
        cands += [stem + e for e in (".ts", ".tsx")]
    cands += [target + e for e in EXTENSIONS] + [f"{target}/index{e}" for e in EXTENSIONS]
    return target, tuple(dict.fromkeys(cands))

"""Rust: `use` trees expanded, module paths to candidate files."""

from __future__ import annotations

import posixpath
import re

STD_CRATES = {"std", "core", "alloc"}


def use_tree(text: str) -> list[tuple[list[str], str | None]]:
    """Expand a `use` argument (`a::b::{C, d::E as F, self}`) into (segments, local alias)."""
    text = re.sub(r"\s*(::|[{},])\s*", r"\1", text.strip())
    out: list[tuple[list[str], str | None]] = []

    def split_top(s: str) -> list[str]:
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += (ch == "{") - (ch == "}")
            cur += ch
        if cur:
            parts.append(cur)
        return parts

    def walk(prefix: list[str], s: str) -> None:
        if "{" in s and s.endswith("}"):
            head, _, body = s.partition("{")
            base = prefix + [p for p in head.split("::") if p]
            for part in split_top(body[:-1]):
                walk(base, part)
            return
        alias = None
        m = re.fullmatch(r"(.+?)\s+as\s+(\w+)", s)
        if m:
            s, alias = m.group(1), m.group(2)
        segs = prefix + [p for p in s.split("::") if p]
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        if segs and segs[-1] == "*":
            out.append((segs, None))
            return
        if segs:
            out.append((segs, alias if alias != "_" else None))

    walk([], text)
    return out


def module_dir(path: str) -> str:
    """Directory (with a trailing slash) holding the child modules of the file's module."""
    d = posixpath.dirname(path)
    base = posixpath.basename(path)
    prefix = f"{d}/" if d else ""
    if base in ("mod.rs", "lib.rs", "main.rs"):
        return prefix
    return f"{prefix}{base[:-3]}/"


def candidates(segs: list[str], path: str) -> tuple[str, str | None, tuple, tuple]:
    """(module, name, candidates, sub-candidates) for one `use` path of a Rust file."""
    glob = segs[-1] == "*"
    if glob:  # `use a::b::*`: the module a::b itself
        segs = segs[:-1]
    module = "::".join(segs[:-1]) if len(segs) > 1 and not glob else "::".join(segs)
    name = segs[-1] if len(segs) > 1 and not glob else None
    first = segs[0]
    if first in STD_CRATES:
        return module, name, (), ()
    if first not in ("crate", "self", "super"):  # a child module (or an external crate)
        segs = ["self", *segs]
        first = "self"
    if first == "crate":
        d, parts = path.split("/"), segs[1:]
        root = "/".join(d[: len(d) - 1 - d[::-1].index("src")]) + "/" if "src" in d[:-1] else ""
        base = root
    else:
        base, parts = module_dir(path), segs[1:]
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = posixpath.dirname(base.rstrip("/"))
                base = f"{base}/" if base else ""
            parts = parts[1:]
        if first == "super":
            base = posixpath.dirname(base.rstrip("/"))
            base = f"{base}/" if base else ""

    def files(ps: list[str]) -> tuple[str, ...]:
        if not ps:
            return tuple(f"{base}{f}" for f in ("lib.rs", "main.rs", "mod.rs"))
        stem = base + "/".join(ps)
        return (f"{stem}.rs", f"{stem}/mod.rs")

    mod_parts = parts[:-1] if name is not None else parts
    return module, name, files(mod_parts), files(parts) if name is not None else ()

"""Python: relative imports to module names, module names to candidate files, decorators,
`if __name__ == "__main__":` blocks."""

from __future__ import annotations

import posixpath
from functools import lru_cache


def decorations(items: list[dict]) -> dict[tuple[int, int], str]:
    """(start, end) of every call written as a Python decorator -> id of the definition it
    decorates: what `_Builder._decorated` finds from each call, found from the definitions."""
    out: dict[tuple[int, int], str] = {}
    first: dict[int, dict] = {}
    for item in items:
        parent = item["node"].parent
        if parent is None or parent.type != "decorated_definition":
            continue
        target = parent.child_by_field_name("definition")
        if target is None:
            continue
        if not first:
            for it in items:
                first.setdefault(it["start"], it)
        owner = first.get(target.start_byte)
        if owner is None:
            continue
        for deco in parent.children:
            if deco.type == "decorator":
                for call in deco.children:
                    if call.type == "call":
                        out[(call.start_byte, call.end_byte)] = owner["id"]
    return out


def absolute(module: str, path: str) -> str:
    """`..x` in `a/b/c.py` → `a.x`; absolute names pass through."""
    dots = len(module) - len(module.lstrip("."))
    if dots == 0:
        return module
    parts = posixpath.dirname(path).split("/") if "/" in path else []
    if dots > 1:
        parts = parts[: len(parts) - (dots - 1)] if dots - 1 <= len(parts) else []
    rest = module[dots:]
    return ".".join([p for p in parts if p] + ([rest] if rest else []))


@lru_cache(maxsize=4096)  # the same modules are imported file after file
def candidates(module: str) -> tuple[str, ...]:
    if not module:
        return ()
    base = module.replace(".", "/")
    return (f"{base}.py", f"{base}/__init__.py", f"src/{base}.py", f"src/{base}/__init__.py")


SCRIPT_LABEL = "__main__"
_MAIN = {'"__main__"', "'__main__'"}


def script_blocks(root, text: str) -> list[tuple[int, int]]:
    """(first line, last line) of each module-level `if __name__ == "__main__":` block
    (either operand order, or that test and others: `if sys.platform != "win32" and
    __name__ == "__main__":`): code that runs only when the file is executed, not imported.
    An `else:` after it runs at import and stays out; lines are 1-based."""
    out = []
    for stmt in root.named_children:
        if stmt.type != "if_statement":
            continue
        cond, body = stmt.child_by_field_name("condition"), stmt.child_by_field_name("consequence")
        if cond is not None and body is not None and _runs_as_main(cond, text):
            out.append((stmt.start_point[0] + 1, body.end_point[0] + 1))
    return out


def _runs_as_main(cond, text: str) -> bool:
    """The condition holds only when `__name__ == "__main__"` does."""
    if cond.type == "parenthesized_expression" and cond.named_child_count == 1:
        return _runs_as_main(cond.named_children[0], text)
    if cond.type == "boolean_operator":
        op = cond.child_by_field_name("operator")
        if op is None or text[op.start_byte : op.end_byte] != "and":
            return False
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        return any(c is not None and _runs_as_main(c, text) for c in (left, right))
    if cond.type != "comparison_operator":
        return False
    ops = [c.type for c in cond.children if not c.is_named]
    sides = {text[n.start_byte : n.end_byte] for n in cond.named_children}
    return ops == ["=="] and len(sides) == 2 and "__name__" in sides and bool(sides & _MAIN)

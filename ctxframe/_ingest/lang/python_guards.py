"""Which `return` statements of a function cannot run in the three calls a decorator factory
tells apart: applied to a definition (`@dec`: its first parameter holds that definition, the
others their defaults), called without its first argument (`@dec(...)`: the first parameter
holds its default, None), and called with a literal first argument (`@dec("name")`: a string
or number, neither None nor callable).

`def attrs(maybe_cls=None, ...)` returns `wrap` under `if maybe_cls is None` and
`wrap(maybe_cls)` after it: read per return, `@attrs` gives the class and `@attrs()` gives
`wrap`, where one return node for both gave every decorated class `wrap` and `wrap` every
class. Conditions are read three-valued over the parameters: `p is None`, `p is not None`,
`p`, `callable(p)`, `not`, `and`, `or`, and a local that is None unless a condition holds
(`func = None` ... `if callable(name): func = name`, `(func,) = args`). A first `*args` holds
the definition, or nothing. Anything else is unknown and keeps the return live; so is a
parameter the body may assign another value.
"""

from __future__ import annotations

DEF, NONE, LIT = "def", "none", "lit"  # a parameter holds a definition / None / a literal
ITEMS, EMPTY, LITEMS = "items", "empty", "litems"  # a first `*args`: holds the definition /
# nothing / a literal first
_TRUE = {DEF: True, NONE: False, ITEMS: True, EMPTY: False, LITEMS: True}  # `if p:` ("" is
# a literal too: LIT's truth is unknown)
_IS_NONE = {DEF: False, NONE: True, LIT: False, ITEMS: False, EMPTY: False, LITEMS: False}
_CALLABLE = {DEF: True, NONE: False, LIT: False, ITEMS: False, EMPTY: False, LITEMS: False}
_FIRST_CALLABLE = {ITEMS: True, LITEMS: False}  # `callable(args[0])`
_NESTED = {"function_definition", "class_definition", "lambda", "decorated_definition"}
_TARGETS = {"assignment", "augmented_assignment", "for_statement", "named_expression",
            "with_item", "as_pattern", "for_in_clause"}  # fmt: skip
_DEPTH = 3  # locals whose condition reads locals: followed this deep
_UNPACK = {"tuple_pattern", "list_pattern", "pattern_list"}
_SPLATS = ("list_splat_pattern", "dictionary_splat_pattern")


class Guards:
    """One function's returns, read against the three calls (`dead`)."""

    def __init__(self, fn_node, txt):
        self.fn, self.txt = fn_node, txt
        self.body = fn_node.child_by_field_name("body")
        self.envs: list[dict[str, str] | None] | None = None  # read once a return needs them
        self.scan: _Scan | None = None

    def _setup(self) -> None:
        first, none_default, names, star = _parameters(self.fn, self.txt)
        # applied to a definition; called without a first argument; with a literal first
        deco = {**{p: NONE for p in none_default}, first: ITEMS if star else DEF}
        bare = {first: EMPTY} if star else {first: NONE} if first in none_default else None
        lit = {first: LITEMS if star else LIT}
        self.envs = [deco, bare, lit] if first is not None else [None, None, None]
        self.scan = _Scan(self.body, self.txt, names)

    def dead(self, ret) -> tuple[bool, bool, bool]:
        """(dead when applied as a decorator, dead when called without a first argument,
        dead when called with a literal first argument)."""
        if self.body is None:
            return False, False, False
        conds = _conditions(ret, self.body)
        if not conds:
            return False, False, False
        if self.envs is None:
            self._setup()
        try:
            out = [
                env is not None
                and any(_truth(c, env, self.scan, _DEPTH) is (not pos) for c, pos in conds)
                for env in self.envs
            ]
        except RecursionError:  # a generated condition thousands of terms long: unknown
            return False, False, False
        return out[0], out[1], out[2]


def _parameters(fn_node, txt) -> tuple[str | None, set[str], set[str], bool]:
    """(the first parameter a call passes, the parameters whose default is None, all, whether
    the first is a `*args` that positional arguments go to)."""
    params = fn_node.child_by_field_name("parameters")
    skip = int(_in_class(fn_node) and not _static(fn_node, txt))  # a bound self or cls
    first, none_default, names, positional, is_star = None, set(), set(), True, False
    for p in params.named_children if params is not None else ():
        t = p.type
        if t == "typed_parameter" and p.named_child_count and p.named_children[0].type in _SPLATS:
            p = p.named_children[0]  # `*args: Any`
            t = p.type
        if t in _SPLATS or t == "keyword_separator":
            if t == "list_splat_pattern" and positional and first is None and not skip:
                star = _identifiers(p, txt)
                first, is_star = (star[0], True) if len(star) == 1 else (None, False)
            positional = False
            names.update(_identifiers(p, txt))
            continue
        if t == "identifier":
            name, default = p, None
        elif t == "typed_parameter":
            name, default = p.named_children[0] if p.named_child_count else None, None
        elif t in ("default_parameter", "typed_default_parameter"):
            name, default = p.child_by_field_name("name"), p.child_by_field_name("value")
        else:
            continue
        if name is None or name.type != "identifier":
            continue
        names.add(txt(name))
        if default is not None and default.type == "none":
            none_default.add(txt(name))
        if positional and skip:
            skip -= 1
        elif positional and first is None:
            first = txt(name)
    return first, none_default, names, is_star


def _in_class(fn_node) -> bool:
    node = fn_node.parent
    if node is not None and node.type == "decorated_definition":
        node = node.parent
    return (
        node is not None
        and node.type == "block"
        and node.parent is not None
        and (node.parent.type == "class_definition")
    )


def _static(fn_node, txt) -> bool:
    parent = fn_node.parent
    if parent is None or parent.type != "decorated_definition":
        return False
    return any(txt(d).strip() in ("@staticmethod",) for d in parent.named_children
               if d.type == "decorator")  # fmt: skip


class _Scan:
    """The names the body binds (outside nested definitions), and each local's plain
    assignments `name = value` with the statement that makes them."""

    def __init__(self, body, txt, params: set[str]):
        self.txt, self.params, self.body = txt, params, body
        self._plain: dict[str, list] | None = None
        self._other: set[str] = set()  # bound some other way: unknown

    @property
    def plain(self) -> dict[str, list]:
        if self._plain is None:  # read once a condition names something
            self._plain = {}
            self._walk()
        return self._plain

    @property
    def other(self) -> set[str]:
        _ = self.plain
        return self._other

    def _walk(self) -> None:
        stack = [self.body]
        while stack:
            node = stack.pop()
            if node.type in _NESTED:
                continue
            if node.type in _TARGETS:
                self._targets(node)
            stack.extend(node.named_children)

    def _targets(self, node) -> None:
        if node.type == "assignment":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and left.type == "identifier" and right is not None:
                self._plain.setdefault(self.txt(left), []).append((right, node))
                return
            if left is not None and right is not None and left.type in _UNPACK:
                for name in _identifiers(left, self.txt):  # `(func,) = args`: some value
                    self._plain.setdefault(name, []).append((right, node))
                return
            target = left
        elif node.type in ("augmented_assignment", "for_statement", "for_in_clause"):
            target = node.child_by_field_name("left")
        elif node.type == "named_expression":
            target = node.child_by_field_name("name")
        elif node.type == "as_pattern":
            target = node.child_by_field_name("alias")
        else:
            target = node  # with_item: its `as` target
        self._other.update(_identifiers(target, self.txt))


def _identifiers(node, txt) -> list[str]:
    if node is None:
        return []
    if node.type == "identifier":
        return [txt(node)]
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            out.append(txt(n))
        elif n.type not in ("attribute", "subscript", "call"):
            stack.extend(n.named_children)
    return out


def _conditions(node, body) -> list[tuple[object, bool]]:
    """The conditions (expression, holds) under which `node` runs: the `if`/`elif`/`else`
    branches around it and the early returns before it (`if C: ... return` makes `not C`
    hold after it)."""
    out, child = [], node
    while child is not None and child != body:
        parent = child.parent
        if parent is None:
            break
        t = parent.type
        if t == "if_statement":
            cond = parent.child_by_field_name("condition")
            if child == parent.child_by_field_name("consequence"):
                out.append((cond, True))
            elif child.type in ("elif_clause", "else_clause"):
                out.append((cond, False))
                for alt in parent.children_by_field_name("alternative"):
                    if alt == child:
                        break
                    out.append((alt.child_by_field_name("condition"), False))
        elif t == "elif_clause" and child == parent.child_by_field_name("consequence"):
            out.append((parent.child_by_field_name("condition"), True))
        elif t == "block":
            for s in parent.named_children:
                if s == child:
                    break
                if _exits(s):
                    out.append((s.child_by_field_name("condition"), False))
        elif t in _NESTED:
            break
        child = parent
    return [(c, pos) for c, pos in out if c is not None]


def _exits(stmt) -> bool:
    """An `if` without `elif`/`else` whose block ends in `return` or `raise`."""
    if stmt.type != "if_statement" or stmt.child_by_field_name("alternative") is not None:
        return False
    block = stmt.child_by_field_name("consequence")
    kids = block.named_children if block is not None else []
    return bool(kids) and kids[-1].type in ("return_statement", "raise_statement")


def _truth(expr, env: dict[str, str], scan: _Scan, depth: int, raw: bool = False) -> bool | None:
    """True, False or None (unknown) for a condition under the parameters' states."""
    t = expr.type
    if t == "parenthesized_expression" and expr.named_child_count == 1:
        return _truth(expr.named_children[0], env, scan, depth, raw)
    if t == "not_operator":
        inner = _truth(expr.child_by_field_name("argument"), env, scan, depth, raw)
        return None if inner is None else not inner
    if t == "boolean_operator":
        a = _truth(expr.child_by_field_name("left"), env, scan, depth, raw)
        b = _truth(expr.child_by_field_name("right"), env, scan, depth, raw)
        if scan.txt(expr.child_by_field_name("operator")) == "and":
            return False if False in (a, b) else (True if a and b else None)
        return True if True in (a, b) else (False if a is False and b is False else None)
    if t == "identifier":
        return _TRUE.get(_state(scan.txt(expr), env, scan, depth, raw))
    if t == "call":
        fn, args = expr.child_by_field_name("function"), expr.child_by_field_name("arguments")
        if fn is None or scan.txt(fn) != "callable" or args is None:
            return None
        kids = args.named_children
        if len(kids) != 1:
            return None
        arg = kids[0]
        if arg.type == "identifier":
            return _CALLABLE.get(_state(scan.txt(arg), env, scan, depth, raw))
        base, index = arg.child_by_field_name("value"), arg.child_by_field_name("subscript")
        if arg.type == "subscript" and base is not None and base.type == "identifier" and (
                index is not None and scan.txt(index) == "0"):  # fmt: skip
            return _FIRST_CALLABLE.get(_state(scan.txt(base), env, scan, depth, raw))
        return None
    if t == "comparison_operator" and expr.named_child_count == 2:
        left, right = expr.named_children
        ops = [c.type for c in expr.children if not c.is_named]
        if right.type != "none" or left.type != "identifier" or len(ops) != 1:
            return None
        op = ops[0]
        is_none = _IS_NONE.get(_state(scan.txt(left), env, scan, depth, raw))
        if is_none is None or op not in ("is", "==", "is not", "!="):
            return None
        return is_none if op in ("is", "==") else not is_none
    return None


def _state(name: str, env: dict[str, str], scan: _Scan, depth: int, raw: bool) -> str | None:
    """A name's state here: a parameter's, unless an assignment that can run changes it (`raw`:
    the parameters' states at the call, which the conditions of assignments are read with); a
    local's NONE when every assignment of another value is under a condition False here."""
    if name in scan.other:
        return None
    start = env.get(name)
    if raw or (start is None and name not in scan.plain):
        return start
    if start is None and (depth <= 0 or name in scan.params):
        return None
    some_none = False
    for value, stmt in scan.plain.get(name, ()):
        if value.type == "none" and start in (None, NONE):
            some_none = True
            continue
        if not any(_truth(c, env, scan, depth - 1, True) is (not pos)
                   for c, pos in _conditions(stmt, None)):  # fmt: skip
            return None
    return start if start is not None else (NONE if some_none else None)

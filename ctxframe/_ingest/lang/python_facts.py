"""Python value-flow facts for one file (the vocabulary is ctxframe._core.facts).

Runs in the extraction worker on the tree already parsed: one query
(`queries/python_facts.scm`) finds the statements that bind, move or call; names are resolved
to their binding scope here (Python's rules: a name assigned in a function is local to it,
class bodies are not seen from their methods, `global`/`nonlocal` redirect), so the facts the
resolver reads are already scope-exact.
"""

from __future__ import annotations

import bisect
import builtins
import re
import zlib
from collections import deque
from functools import lru_cache

from ctxframe._core import callbacks as _callbacks
from ctxframe._core import facts as F
from ctxframe._ingest.lang.python import absolute
from ctxframe._ingest.lang.python_guards import Guards

BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_")) | {"__import__"}
_PROPERTY = {"property", "cached_property", "cached_classproperty", "classproperty"}
_STRINGS = {"string", "concatenated_string"}
_CONTAINERS = {"list": "list", "tuple": "tuple", "set": "set", "dictionary": "dict",
               "expression_list": "tuple"}  # fmt: skip
_COMPREHENSIONS = {
    "list_comprehension": "=b:list",
    "set_comprehension": "=b:set",
    "dictionary_comprehension": "=b:dict",
    "generator_expression": "=x:",
}
_PATTERNS = {"pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list"}
_WRAPPED = {"list_splat_pattern", "parenthesized_expression", "as_pattern_target"}
_KEEP = {"assignment", "return_statement", "default_parameter", "typed_default_parameter"}
_SHORT = 40  # literals up to this many characters are values of their own (keys, flags)
_KEYLIKE = re.compile(r"[\w-]{1,40}")
ARGS, ARGSEP = F.ARGS, F.ARGSEP
_LITERAL_ARGS = {"string", "concatenated_string", "integer", "float", "true", "false", "none",
                 "unary_operator", "binary_operator", "comparison_operator", "not_operator",
                 "list_comprehension", "generator_expression", "dictionary_comprehension",
                 "set_comprehension"}  # fmt: skip
_LITERAL_DEFAULTS = _LITERAL_ARGS - {"string", "integer"}  # a short literal may be a key
_FIRST_LITERALS = {"string", "concatenated_string", "integer", "float"}  # never None, never
# callable
_CONST_ARGS = ("=b:", "=k:", "=B:", "=x:")
_LITERAL = re.compile(r"""('''|\"\"\"|'|")(?:\\.|(?!\1).)*\1""", re.S)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
STEP = F.STEP


class Facts:
    """One file's facts: made in two steps around the extractor's own call references.
    `Facts(...)` finds what each scope binds; `site(call, owner)` gives a call's node (the
    extractor stores it on its call reference); `run()` adds every other fact with `add`."""

    def __init__(self, path: str, text: str, ascii: bool, items: list[dict], caps: dict, add):
        self.path, self.text, self.ascii, self.add = path, text, ascii, add
        self.items = items
        self.starts = [it["start"] for it in items]
        self.by_start = {it["start"]: it for it in items}
        self.bound: dict[str | None, set[str]] = {None: set()}  # scope id -> local names
        self.binders: dict[tuple[str | None, str], set[str]] = {}  # how a scope binds a name
        self.def_value: dict[str, str] = {}  # a decorated definition's id -> what its name holds
        self.globals: dict[str, set[str]] = {}
        self.nonlocals: dict[str, set[str]] = {}
        self.stars = False  # a `from m import *` at module level
        self.memo: dict = {}
        self.lookups: dict = {}
        self.sites: set = set()
        self.counts: dict[str, int] = {}
        self.params: list[tuple[str, list[str]]] = []
        self.signatures: dict[str, dict[str, tuple[str, int]]] = {}  # fid -> name: (kind, pos)
        self.guards: dict[str, Guards] = {}  # fid -> its returns' conditions
        self.split: set[str] = set()  # functions with a return dead in some calls
        self.return_types: list[tuple] = []  # (function, return annotation, scope)
        # a return that hands back parameters: (their names, the nodes of its other values)
        self.handback: dict[int, tuple[list[str], list[str]]] = {}
        self._sources: dict | None = None
        self._implemented: set[tuple[str, str]] | None = None
        self.done: set[tuple[int, int]] = set()  # calls already described (by `site`)
        self.accessed: set[tuple] = set()  # (scope, receiver, member, how) already emitted
        self.fixtures: list[tuple[dict, str]] = []  # pytest fixtures: (definition, name)
        self.caps = caps
        defs = [it for it in items if it["kind"] in ("function", "method", "lambda", "class")]
        self.defs = defs
        self.collect_bindings(self.caps, defs)

    # -- helpers -----------------------------------------------------------------------------
    def txt(self, node) -> str:
        s = self.text[node.start_byte : node.end_byte]
        return s if self.ascii else s.encode("latin-1").decode("utf-8", "replace")

    def scope_of(self, byte: int) -> dict | None:
        i = bisect.bisect_right(self.starts, byte) - 1
        item = self.items[i] if i >= 0 else None
        while item is not None and item["end"] <= byte:
            item = item["parent"]
        return item

    def function_of(self, item: dict | None) -> dict | None:
        while item is not None and item["kind"] not in ("function", "method", "lambda"):
            item = item["parent"]
        return item

    def sid(self, item: dict | None) -> str:
        return item["id"] if item is not None else self.path

    def emit(self, kind, name, receiver=None, scope=None, line=0, src=None, alias=None) -> None:
        self.add((src or self.path, self.path, "python", kind, name, receiver, scope, line,
                  None, alias, None, None, None, None, None))  # fmt: skip

    def site_row(self, name: str, call: str | None, line: int, src: str, alias,
                 args: str | None = None) -> None:  # fmt: skip
        """A call the language query does not capture (`f()()`, `for`, `with`, `raise`, `@d`)."""
        self.add((src, self.path, "python", F.SITE, name, None, None, line, call, alias,
                  args, None, None, None, None))  # fmt: skip

    def flow(self, dst: str | None, src: str | None, kind: str = F.FLOW) -> None:
        if dst is not None and src is not None and dst != src:
            self.emit(kind, dst, src)

    def step(self, parent: str, step: str) -> str:
        return parent + STEP + step

    # -- scopes ------------------------------------------------------------------------------
    def bind(self, name: str, item: dict | None, how: str = "other") -> None:
        sid = item["id"] if item is not None else None
        if sid is not None and name in self.globals.get(sid, ()):
            sid = None
        self.bound.setdefault(sid, set()).add(name)
        self.binders.setdefault((sid, name), set()).add(how)

    def bind_target(self, node, item: dict | None) -> None:
        t = node.type
        if t == "identifier":
            self.bind(self.txt(node), item)
        elif t in _PATTERNS or t in _WRAPPED:
            for c in node.named_children:
                self.bind_target(c, item)

    def lookup(self, name: str, item: dict | None) -> str:
        """The node a name read in `item` stands for (its binding scope's slot)."""
        key = (name, item["id"] if item is not None else None)
        hit = self.lookups.get(key)
        if hit is not None:
            return hit
        s, first = item, True
        while s is not None:
            if s["kind"] == "class" and not first:
                s = s["parent"]
                continue
            first = False
            sid = s["id"]
            if name in self.bound.get(sid, ()) and name not in self.nonlocals.get(sid, ()):
                hit = f"{sid}|{name}"
                break
            s = s["parent"]
        if hit is None:
            if name in BUILTIN_NAMES and name not in self.bound[None] and not self.stars:
                hit = f"=B:{name}"
            else:
                hit = f"{self.path}|{name}"
        self.lookups[key] = hit
        return hit

    # -- expressions -------------------------------------------------------------------------
    def key(self, node, item: dict | None) -> str | None:
        """The node an expression's value is read from, or None when it says nothing."""
        t = node.type
        if t == "identifier":
            return self.lookup(self.txt(node), item)
        if t == "attribute":
            text = self.txt(node)
            if _DOTTED.fullmatch(text):
                return self.dotted(text, item)
        mk = (node.start_byte, node.end_byte, t)
        if mk in self.memo:
            return self.memo[mk]
        k = self._key(node, item)
        self.memo[mk] = k
        return k

    def dotted(self, text: str, item: dict | None) -> str:
        """`a.b.c` read in `item`."""
        parts = text.split(".")
        k = self.lookup(parts[0], item)
        for p in parts[1:]:
            k = k + STEP + "." + p
        return k

    def _key(self, node, item) -> str | None:
        t = node.type
        if t == "identifier":
            return self.lookup(self.txt(node), item)
        if t == "attribute":
            obj = node.child_by_field_name("object")
            base = self.key(obj, item) if obj is not None else None
            attr = node.child_by_field_name("attribute")
            return self.step(base, "." + self.txt(attr)) if base and attr is not None else None
        if t == "call":
            return self.call_key(node, item)
        if t == "subscript":
            return self.subscript_key(node, item)
        if t in ("parenthesized_expression", "await"):
            inner = node.named_children
            return self.key(inner[-1], item) if inner else None
        if t in _STRINGS:
            return self.string_key(node)
        if t == "integer":
            s = self.txt(node)
            return f"=k:{_lit('n', s)}" if len(s) <= _SHORT and s.isdigit() else "=b:int"
        if t == "float":
            return "=b:float"
        if t in ("true", "false", "comparison_operator", "not_operator"):
            return "=b:bool"
        if t in _CONTAINERS:
            return self.container(node, item)
        if t in _COMPREHENSIONS:
            return _COMPREHENSIONS[t]
        if t == "lambda":
            lam = self.by_start.get(node.start_byte)
            return f"={lam['id']}" if lam is not None and lam["kind"] == "lambda" else None
        if t in ("conditional_expression", "boolean_operator"):
            return self.union(node, item)
        if t == "named_expression":
            value = node.child_by_field_name("value")
            return self.key(value, item) if value is not None else None
        if t == "binary_operator":
            left = node.child_by_field_name("left")
            if left is not None and left.type in _STRINGS:
                return "=b:bytes" if self.txt(left)[:2].lower() in ("b'", 'b"') else "=b:str"
        return None

    def string_key(self, node) -> str:
        s = self.txt(node)
        head = s[: s.find(s[-1])] if s and s[-1] in "\"'" else ""
        if "b" in head.lower():
            return "=b:bytes"
        if node.type == "string" and not head and len(s) <= _SHORT + 2 and s[:1] in "\"'":
            body = s[1:-1]
            if s[:1] * 3 != s[:3] and _KEYLIKE.fullmatch(body):
                return f"=k:{_lit('s', body)}"
        return "=b:str"

    def call_key(self, node, item) -> str | None:
        fn = node.child_by_field_name("function")
        if fn is None:
            return None
        if fn.type == "identifier" and self.txt(fn) == "super":
            cls = self.enclosing_class(item)
            if cls is not None:
                return f"=s:{cls['id']}"
        callee = self.key(fn, item)
        if callee is None:
            return None
        return self.step(callee, f"({self.tag(node.child_by_field_name('arguments'), item)})")

    def tag(self, args, item) -> str:
        """What tells textually different calls of one callee apart: a hash of their
        arguments' nodes (literals left out: a changed message is the same call), and what
        python_guards tells apart after it (`f("name")`, `f(*args)` and `f()` are three)."""
        packed = self.packed_args(args, item)
        crc = format(zlib.crc32(packed.encode("utf-8", "replace")), "08x") if packed else ""
        return crc + self.shape_mark(args)

    def packed_args(self, args, item) -> str | None:
        """A call's arguments as stored on its row (`POS<ARGSEP>NODE`, `=KW<ARGSEP>NODE`
        joined by ARGS); literal ones are left out."""
        if args is None or args.type != "argument_list" or args.end_byte - args.start_byte <= 2:
            return None
        span = (args.start_byte, args.end_byte, "args")
        if span in self.memo:
            return self.memo[span]
        out = []
        pos = 0
        for a in args.named_children:
            t = a.type
            if t in _LITERAL_ARGS:
                pos += 1
                continue
            if t == "keyword_argument":
                v = a.child_by_field_name("value")
                if v is not None and v.type not in _LITERAL_ARGS:
                    k = self.key(v, item)
                    if k is not None and k[:3] not in _CONST_ARGS:
                        out.append(f"={self.txt(a.child_by_field_name('name'))}{ARGSEP}{k}")
            elif t in ("list_splat", "dictionary_splat", "comment"):
                if t == "list_splat":
                    pos = -10_000  # positions after `*args` are unknown
            else:
                k = self.key(a, item)
                if k is not None and pos >= 0 and k[:3] not in _CONST_ARGS:
                    out.append(f"{pos}{ARGSEP}{k}")
                pos += 1
        packed = ARGS.join(out) if out else None
        self.memo[span] = packed
        return packed

    def enclosing_class(self, item: dict | None) -> dict | None:
        fn = self.function_of(item)
        while fn is not None and fn["kind"] == "lambda":
            fn = self.function_of(fn["parent"])
        parent = fn["parent"] if fn is not None else None
        return parent if parent is not None and parent["kind"] == "class" else None

    def subscript_key(self, node, item) -> str | None:
        value = node.child_by_field_name("value")
        base = self.key(value, item) if value is not None else None
        if base is None:
            return None
        subs = node.children_by_field_name("subscript")
        return self.step(base, f"[{self.index(subs[0], item) if len(subs) == 1 else '?'}]")

    def index(self, node, item) -> str:
        """A subscript's key as a step: a literal, a node holding it, or unknown."""
        t = node.type
        if t == "integer":
            s = self.txt(node)
            return _lit("n", s) if s.isdigit() else "?"
        if t == "string":
            k = self.string_key(node)
            return k[3:] if k.startswith("=k:") else "?"
        if t == "identifier":
            k = self.key(node, item)
            return f"@{k}" if k and STEP not in k else "?"
        return "?"

    def container(self, node, item) -> str:
        """A display's value: its own (`c:PATH@BYTE`) with its elements when one of them can
        hold something callable, else just its builtin type."""
        t = node.type
        pairs = []
        if t == "dictionary":
            for pair in node.named_children:
                if pair.type == "pair":
                    k, v = pair.child_by_field_name("key"), pair.child_by_field_name("value")
                    if k is not None and v is not None:
                        idx = self.index(k, item) if k.type != "identifier" else "?"
                        pairs.append((idx, self.key(v, item)))
        else:
            i = 0
            for child in node.named_children:
                if child.type in ("list_splat", "dictionary_splat", "comment"):
                    i = -1
                    continue
                pairs.append((_lit("n", str(i)) if i >= 0 else "?", self.key(child, item)))
                if i >= 0:
                    i += 1
        parent = node.parent.type if node.parent is not None else ""
        kept = parent in _KEEP or not pairs  # a display bound to a name may be filled later
        if not kept and not any(k is not None and k[:3] not in ("=k:", "=b:") for _, k in pairs):
            return "=b:" + _CONTAINERS[t]
        value = "c:" + self.ordinal(item)
        for idx, k in pairs:
            self.flow(f"{value}|{idx}", k)
        return "=" + value

    def ordinal(self, item: dict | None) -> str:
        """`SCOPE#N`: the Nth value made in a scope (a display, a union), stable under edits
        elsewhere in the file."""
        sid = self.sid(item)
        n = self.counts[sid] = self.counts.get(sid, 0) + 1
        return f"{sid}#{n}"

    def union(self, node, item) -> str:
        key = "u:" + self.ordinal(item)
        for field in ("consequence", "alternative", "left", "right"):
            child = node.child_by_field_name(field)
            if child is not None:
                self.flow(key, self.key(child, item))
        if (
            node.type == "conditional_expression"
        ):  # `a if c else b`: fields unnamed in some grammars
            kids = node.named_children
            if len(kids) == 3:
                self.flow(key, self.key(kids[0], item))
                self.flow(key, self.key(kids[2], item))
        return key

    # -- the run -----------------------------------------------------------------------------
    def run(self) -> None:
        caps = self.caps
        for it in self.defs:
            if it["kind"] == "class":
                self.class_facts(it)
            else:
                self.function_facts(it)
        self.pass_through(caps.get("return", ()))
        for node in caps.get("assign", ()):
            parent = node.parent
            if parent is None or parent.type != "assignment":
                self.assignment(node)
        for node in caps.get("augassign", ()):
            self.augmented(node)
        for node in caps.get("return", ()):
            self.returned(node)
        for it, ann, outer in self.return_types:
            if it["id"] not in self.split:  # a union over the conditions the returns split
                self.annotate(f"{it['id']}|()", ann, outer, self.bound_first(it["id"]))
        for node in caps.get("yield", ()):
            self.yielded(node)
        for node in caps.get("for", ()):
            self.loop(node)
        for node in caps.get("with", ()):
            self.with_item(node)
        for node in caps.get("raise", ()):
            self.raised(node)
        for node in caps.get("walrus", ()):
            self.walrus(node)
        for node in caps.get("import", ()):
            self.imported(node)
        for node in caps.get("call", ()):
            self.call(node)
        self.implicit(caps)
        for it, name in self.fixtures:  # after the yields: a fixture that yields gives that
            how = "yield" if it["id"] in self.sites else "return"
            self.emit(F.FIXTURE, name, src=it["id"], alias=how)
        used = set(self.lookups.values())  # a function whose parameters are never read: no row
        for fid, packed in self.params:
            if any(f"{fid}|{p.split(ARGSEP, 1)[0]}" in used for p in packed):
                self.emit(F.PARAM, ARGS.join(packed), src=fid)

    def collect_bindings(self, caps: dict, defs: list[dict]) -> None:
        """Every name each scope binds, before any name is looked up."""
        for node in caps.get("global", ()):
            owner = self.scope_of(node.start_byte)
            if owner is not None:
                names = {self.txt(c) for c in node.named_children if c.type == "identifier"}
                self.globals.setdefault(owner["id"], set()).update(names)
        for node in caps.get("nonlocal", ()):
            owner = self.scope_of(node.start_byte)
            if owner is not None:
                names = {self.txt(c) for c in node.named_children if c.type == "identifier"}
                self.nonlocals.setdefault(owner["id"], set()).update(names)
        for it in defs:
            if it["kind"] != "lambda":
                self.bind(it["name"], it["parent"], "def")
            params = it["node"].child_by_field_name("parameters")
            if params is not None:
                for p in params.named_children:
                    name = _param_name(p)
                    if name is not None:
                        self.bind(self.txt(name), it, "param")
        for node in caps.get("assign", ()):
            item = self.scope_of(node.start_byte)
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                self.bind(self.txt(left), item, "assign")
            elif left is not None:
                self.bind_target(left, item)
        for node in caps.get("augassign", ()):
            left = node.child_by_field_name("left")
            if left is not None:
                self.bind_target(left, self.scope_of(node.start_byte))
        for node in caps.get("for", ()):
            left = node.child_by_field_name("left")
            if left is not None:
                self.bind_target(left, self.scope_of(node.start_byte))
        for node in caps.get("with", ()):
            value = node.child_by_field_name("value")
            if value is not None and value.type == "as_pattern":
                alias = value.child_by_field_name("alias")
                if alias is not None:
                    self.bind_target(alias, self.scope_of(node.start_byte))
        for node in caps.get("except", ()):
            for c in node.named_children:
                if c.type == "as_pattern":
                    alias = c.child_by_field_name("alias")
                    if alias is not None:
                        self.bind_target(alias, self.scope_of(node.start_byte))
        for node in caps.get("walrus", ()):
            name = node.child_by_field_name("name")
            if name is not None:
                self.bind(self.txt(name), self.function_of(self.scope_of(node.start_byte)))
        for node in caps.get("import", ()):
            item = self.scope_of(node.start_byte)
            for local, *_ in self.import_names(node):
                if local == "*":
                    self.stars = self.stars or item is None
                else:
                    self.bind(local, item)

    # -- definitions -------------------------------------------------------------------------
    def function_facts(self, it: dict) -> None:
        """Its parameters (one row: NAME<ARGSEP>KIND<ARGSEP>POS joined by ARGS; KIND `self`
        or `cls` for a bound first one), their defaults and annotations, what a lambda
        returns, and its name's binding when decorated."""
        node, fid = it["node"], it["id"]
        outer = it["parent"]
        decorators = self.decorators(it)
        method = it["kind"] == "method" and "staticmethod" not in decorators
        first_kind = "cls" if "classmethod" in decorators else "self"
        params = node.child_by_field_name("parameters")
        pos = 0
        kwonly = False
        packed = []
        for p in params.named_children if params is not None else ():
            t = p.type
            if t == "identifier":
                name_node = p
            elif t == "keyword_separator":
                kwonly = True
                continue
            else:
                name_node = _param_name(p)
                if name_node is None:
                    continue
            name = self.txt(name_node)
            if t == "list_splat_pattern":
                kind, kwonly = "*", True
            elif t == "dictionary_splat_pattern":
                kind = "**"
            elif kwonly:
                kind = "kw"
            elif pos == 0 and method:  # bound: calls through an instance skip it
                kind = first_kind
            else:
                kind = "pos"
            at = pos if kind[0] not in "k*" else -1
            packed.append(f"{name}{ARGSEP}{kind}{ARGSEP}{at}")
            if kind in ("*", "**"):  # a tuple, a dict of its own: builtin methods, unknown items
                self.flow(f"{fid}|{name}", f"=c:{fid}#{kind}")
            self.signatures.setdefault(fid, {})[name] = (kind, at)
            if kind not in ("kw", "*", "**"):
                pos += 1
            if t != "identifier":
                default = p.child_by_field_name("value")
                if default is not None and default.type not in _LITERAL_DEFAULTS:
                    self.flow(f"{fid}|{name}", self.key(default, outer))
                ann = p.child_by_field_name("type")
                if ann is not None:
                    self.annotate(f"{fid}|{name}", ann, outer)
        if packed:
            self.params.append((fid, packed))
        ret = node.child_by_field_name("return_type")
        if ret is not None:  # after the returns (`run`): a split one leaves it out
            self.return_types.append((it, ret, outer))
        if it["kind"] == "lambda":
            body = node.child_by_field_name("body")
            if body is not None:
                self.flow(f"{fid}|()", self.key(body, it))
            return
        if decorators:
            self.define(it, outer, decorators)

    def class_facts(self, it: dict) -> None:
        supers = it["node"].child_by_field_name("superclasses")
        i = 0
        for b in supers.named_children if supers is not None else ():
            if b.type in ("keyword_argument", "list_splat", "dictionary_splat", "comment"):
                continue
            k = self.key(b, it["parent"])
            if k is not None:
                self.emit(F.BASE, k, None, None, i, src=it["id"])
            i += 1
        decorators = self.decorators(it)
        if decorators:
            self.define(it, it["parent"], decorators)

    def decorators(self, it: dict) -> list[str]:
        """The decorators' expressions over a definition, outermost first, as their last name."""
        parent = it["node"].parent
        if parent is None or parent.type != "decorated_definition":
            it["decos"] = []
            return []
        nodes = [c.named_children[0] for c in parent.children
                 if c.type == "decorator" and c.named_child_count]  # fmt: skip
        it["decos"] = nodes
        out = []
        for n in nodes:
            while n.type == "call":
                fn = n.child_by_field_name("function")
                if fn is None:
                    break
                n = fn
            s = self.txt(n)
            out.append(s.rsplit(".", 1)[-1])
        return out

    def define(self, it: dict, outer: dict | None, names: list[str]) -> None:
        """A decorated definition's name is bound to what its decorators make of it (an
        undecorated one's binding the resolver makes from the definition itself)."""
        var = f"{self.sid(outer)}|{it['name']}"
        if outer is not None and it["name"] in self.globals.get(outer["id"], ()):
            var = f"{self.path}|{it['name']}"
        self.emit(F.REBOUND, it["id"])
        cur = f"={it['id']}"
        nodes = it.get("decos") or []
        for deco, name in zip(reversed(nodes), reversed(names), strict=True):
            if name in _PROPERTY or (name in ("getter",) and deco.type == "attribute"):
                self.emit(F.PROPERTY, it["name"], src=it["id"], alias="get")
                cur = f"{it['id']}|()"  # a property reads as what its getter returns
                continue
            if name in ("setter", "deleter") and deco.type == "attribute":
                self.emit(F.PROPERTY, it["name"], src=it["id"], alias=name[:3])
                return  # `@x.setter def x`: the name keeps the getter
            if name == "fixture":
                self.fixtures.append((it, _fixture_name(deco, self.txt) or it["name"]))
            if name == "usefixtures" and deco.type == "call":
                for used in _literal_names(deco.child_by_field_name("arguments"), self.txt):
                    self.emit(F.FIXTURE, used, src=it["id"], alias="use")
            if name in ("staticmethod", "classmethod", "abstractmethod", "override"):
                continue
            dk = self.key(deco, outer)
            if dk is None:
                continue
            applied = self.step(dk, f"(@{it['id']})")
            self.emit(F.DECORATED, applied, cur)
            line = deco.start_point[0] + 1
            self.site_row(name, applied, line, self.sid(outer), "decorator", f"0{ARGSEP}{cur}")
            cur = applied
        self.def_value[it["id"]] = cur
        if "overload" in names and (self.sid(outer), it["name"]) in self.implemented():
            return  # a typing stub: the implementation that follows binds the name
        self.flow(var, cur)
        if it["kind"] == "class":  # handed back, or one made from it with its methods
            self.flow(var, f"={it['id']}")

    def implemented(self) -> set[tuple[str, str]]:
        """(scope, name) of every definition not decorated with `@overload`."""
        if self._implemented is None:
            self._implemented = {
                (self.sid(it["parent"]), it["name"])
                for it in self.defs
                if it["kind"] != "lambda" and "overload" not in self.decorators(it)
            }
        return self._implemented

    def bound_first(self, fid: str) -> tuple[str, str] | None:
        """A method's bound first parameter: (name, `self` or `cls`), else None."""
        first = next(iter(self.signatures.get(fid, {}).items()), None)
        return first if first is not None and first[1][0] in ("self", "cls") else None

    def annotate(self, var: str, ann, item: dict | None, bound=None) -> None:
        """`var` may hold an instance of each type the annotation names (INFERRED); `Self`
        on a method (`bound`: its first parameter) names the receiver's own class. A typed
        collection (`List[Segment]`, `Iterable[X]`, `tuple[X, ...]`) yields instances of its
        element type when iterated."""
        for elem in _element_types(ann):
            self.annotate(self.step(var, "*"), elem, item, bound)
        for t in _annotation_types(ann):
            if _names_self(self.txt(t)):
                if bound is not None:
                    own = f"{var.rpartition('|')[0]}|{bound[0]}"
                    self.flow(var, self.step(own, "!") if bound[1][0] == "cls" else own,
                              F.FLOW_INFERRED)  # fmt: skip
                continue
            if t.type == "string":
                name = self.txt(t)[1:-1].strip()
                parts = name.split(".")
                if not name or not all(p.isidentifier() for p in parts):
                    continue
                k = self.lookup(parts[0], item)
                for p in parts[1:]:
                    k = self.step(k, "." + p)
            else:
                k = self.key(t, item)
            if k is not None:
                self.flow(var, self.step(k, "!"), F.FLOW_INFERRED)

    # -- statements --------------------------------------------------------------------------
    def assignment(self, node) -> None:
        item = self.scope_of(node.start_byte)
        lefts, cur = [], node
        while cur is not None and cur.type == "assignment":
            left = cur.child_by_field_name("left")
            if left is not None:
                lefts.append((left, cur.child_by_field_name("type")))
            cur = cur.child_by_field_name("right")
        for left, ann in lefts:
            if cur is not None:
                self.assign(left, cur, item)
            if ann is not None and left.type == "identifier":
                self.annotate(self.target_key(left, item), ann, item)
            if left.type == "identifier" and self.txt(left) == "__all__" and item is None:
                self.exports(cur)
            if left.type == "identifier" and self.txt(left) == "pytest_plugins" and item is None:
                for name in _literal_names(cur, self.txt, dotted=True):
                    self.emit(F.FIXTURE, name, alias="plugins")

    def exports(self, value) -> None:
        if value is None:
            return
        if value.type == "binary_operator":
            for field in ("left", "right"):
                self.exports(value.child_by_field_name(field))
            return
        if value.type in ("list", "tuple", "expression_list"):  # `__all__ = "a", "b"` too
            for c in value.named_children:
                if c.type == "string":
                    name = self.txt(c)[1:-1]
                    if name.isidentifier():
                        self.emit(F.ALL, name)

    def target_key(self, node, item) -> str:
        return self.lookup(self.txt(node), item)

    def assign(self, left, right, item) -> None:
        """`left = right` (and the parts of an unpacking, pairwise where both sides are written
        as tuples or lists)."""
        t = left.type
        if t == "identifier":
            self.flow(self.target_key(left, item), self.key(right, item))
        elif t == "attribute":
            self.store(left, right, item)
        elif t == "subscript":
            value = left.child_by_field_name("value")
            base = self.key(value, item) if value is not None else None
            subs = left.children_by_field_name("subscript")
            src = self.key(right, item)
            if base is not None and src is not None and len(subs) == 1:
                self.emit(F.STORE_ITEM, base, src, self.index(subs[0], item))
        elif t in _PATTERNS or t == "parenthesized_expression":
            self.unpack(left, right, item)

    def unpack(self, left, right, item) -> None:
        targets = [c for c in left.named_children if c.type != "comment"]
        if left.type == "parenthesized_expression":
            if targets:
                self.assign(targets[0], right, item)
            return
        star = next((i for i, c in enumerate(targets) if c.type == "list_splat_pattern"), None)
        values = None
        if right.type in ("tuple", "list", "expression_list"):
            values = [c for c in right.named_children if c.type != "comment"]
            if any(v.type in ("list_splat", "parenthesized_list_splat") for v in values):
                values = None
        if values is not None and (len(values) == len(targets) if star is None else
                                   len(values) >= len(targets) - 1):  # fmt: skip
            tail = len(targets) - 1 - (star if star is not None else 0)
            for i, tgt in enumerate(targets):
                if i == star:
                    rest = values[i : len(values) - tail]
                    self.starred(tgt, rest, item)
                elif star is not None and i > star:
                    self.assign(tgt, values[len(values) - (len(targets) - i)], item)
                else:
                    self.assign(tgt, values[i], item)
            return
        src = self.key(right, item)
        if src is None:
            return
        for i, tgt in enumerate(targets):
            if star is not None and i >= star:
                break  # positions past a starred target are not known
            self.assign_node(tgt, self.step(src, f"[{_lit('n', str(i))}]"), item)

    def starred(self, target, values: list, item) -> None:
        inner = target.named_children
        if not inner or inner[0].type != "identifier":
            return
        value = "c:" + self.ordinal(item)
        for i, v in enumerate(values):
            self.flow(f"{value}|{_lit('n', str(i))}", self.key(v, item))
        self.flow(self.target_key(inner[0], item), "=" + value)

    def assign_node(self, left, src: str, item) -> None:
        """`left = <the value of node src>`."""
        t = left.type
        if t == "identifier":
            self.flow(self.target_key(left, item), src)
        elif t in _PATTERNS or t == "parenthesized_expression":
            targets = [c for c in left.named_children if c.type != "comment"]
            for i, tgt in enumerate(targets):
                if tgt.type == "list_splat_pattern":
                    break
                self.assign_node(tgt, self.step(src, f"[{_lit('n', str(i))}]"), item)
        elif t == "attribute":
            self.store_node(left, src, item)

    def store(self, left, right, item) -> None:
        src = self.key(right, item)
        if src is not None:
            self.store_node(left, src, item)

    def store_node(self, left, src: str, item) -> None:
        obj, attr = left.child_by_field_name("object"), left.child_by_field_name("attribute")
        if obj is None or attr is None:
            return
        base = self.key(obj, item)
        if base is None:
            return
        name = self.txt(attr)
        cls = self.self_class(obj, item)
        if cls is not None:  # `self.x = …`: the class's slot, known here
            self.flow(f"{cls['id']}|{name}", src)
        else:
            self.emit(F.STORE, base, src, name)

    def self_class(self, obj, item) -> dict | None:
        """The class whose instance `obj` is when it is a method's first parameter."""
        if obj.type != "identifier":
            return None
        fn = self.function_of(item)
        if fn is None or fn["kind"] != "method":
            return None
        params = fn["node"].child_by_field_name("parameters")
        first = params.named_children[0] if params is not None and params.named_children else None
        name = _param_name(first) if first is not None else None
        if name is None or self.txt(name) != self.txt(obj) or fn is not item:
            return None
        return fn["parent"]

    def augmented(self, node) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier":
            return
        item = self.scope_of(node.start_byte)
        if self.txt(left) == "__all__" and item is None:
            self.exports(right)
        self.flow(self.target_key(left, item), self.key(right, item))

    def returned(self, node) -> None:
        item = self.scope_of(node.start_byte)
        fn = self.function_of(item)
        kids = node.named_children
        if fn is None or not kids:
            return
        value = kids[0]
        ret = f"{fn['id']}|()"
        guarded = ret + self.dead_in(node, fn)
        name = self.param_read(value, fn, item)
        if name is not None:
            self.emit(F.RETPARAM, ret, f"{fn['id']}|{name}", name)
            return
        handed = self.handback.get(node.start_byte)
        if handed is not None:  # each call gets its own argument back, and the other values
            for p in handed[0]:
                self.emit(F.RETPARAM, ret, f"{fn['id']}|{p}", p)
            for k in handed[1]:
                self.flow(guarded, k)
                if k.endswith("|()"):  # what g returns: its guarded returns too
                    for c in F.GUARDED:
                        self.flow(guarded, k + c)
            return
        self.flow(guarded, self.key(value, item))

    def dead_in(self, node, fn: dict) -> str:
        """Where a return's value goes: after the return node, the calls its conditions make
        it dead in (F.GUARDED: `d` a decorator's application, `a` a call without a first
        argument, `l` one with a literal first; ctxframe._ingest.lang.python_guards)."""
        if fn["kind"] == "lambda":
            return ""
        guards = self.guards.get(fn["id"])
        if guards is None:
            guards = self.guards[fn["id"]] = Guards(fn["node"], self.txt)
        dead = "".join(c for c, d in zip("dal", guards.dead(node), strict=True) if d)
        if dead:
            self.split.add(fn["id"])
        return dead

    def param_read(self, value, fn: dict, item: dict | None) -> str | None:
        """The name of `fn`'s parameter `value` reads (a bare name, not a method's self)."""
        if value.type != "identifier":
            return None
        k = self.key(value, item)
        if k is None or not k.startswith(fn["id"] + "|"):
            return None
        name = k[len(fn["id"]) + 1 :]
        if self.is_param(fn, name) and self.self_class(value, fn) is None:
            return name
        return None

    def pass_through(self, returns) -> None:
        """Which returns hand back a parameter through another function of this file: `return
        g(.., p, ..)` where g (a name bound to one function here) returns the parameter p is
        passed to, directly or so again (to a fixpoint). A decorator written as `return
        _apply(cls)` then gives each decorated class itself, not every class it decorates."""
        calls, passes, defs = [], {}, {}
        for node in returns:
            item = self.scope_of(node.start_byte)
            fn = self.function_of(item)
            kids = node.named_children
            if fn is None or not kids:
                continue
            defs[fn["id"]] = fn
            name = self.param_read(kids[0], fn, item)
            if name is not None:
                passes.setdefault(fn["id"], set()).add(name)
            elif kids[0].type == "call":
                calls.append((node, fn, item, kids[0]))
            elif kids[0].type == "identifier":
                local = self.locals_(kids[0], fn, item)
                if local is not None:
                    self.handback[node.start_byte] = local
                    passes.setdefault(fn["id"], set()).update(local[0])
        if not calls or not passes:
            return
        bound: dict[str, list[dict]] = {}  # a binding: the functions with a return bound to it
        for fn in defs.values():
            if fn["kind"] != "lambda":
                bound.setdefault(f"{self.sid(fn['parent'])}|{fn['name']}", []).append(fn)
        # a worklist: a return waits on its callee until the callee hands back a parameter
        queue, waiting = deque(calls), {}
        while queue:
            node, fn, item, call = entry = queue.popleft()
            g = bound.get(self.callee_binding(call, item), ())
            if node.start_byte in self.handback or len(g) != 1:
                continue
            p = self.passed(call, g[0], passes.get(g[0]["id"], ()), fn, item)
            if p is None:
                waiting.setdefault(g[0]["id"], []).append(entry)
                continue
            self.handback[node.start_byte] = ([p], [f"{g[0]['id']}|()"])  # and what g returns
            if p not in passes.setdefault(fn["id"], set()):
                passes[fn["id"]].add(p)
                queue.extend(waiting.pop(fn["id"], ()))

    def passed(self, call, g: dict, params, fn: dict, item: dict | None) -> str | None:
        """The parameter of `fn` that `call` (a call of g) passes to one of g's `params`, the
        parameters g hands back, or None."""
        sig = self.signatures.get(g["id"], {})
        # called as self.m(...): the bound first parameter is not in the arguments
        shift = int(any(k in ("self", "cls") for k, _ in sig.values()))
        for q in sorted(params):
            kind, pos = sig.get(q, ("", -1))
            arg = _argument(call.child_by_field_name("arguments"), q,
                            pos - shift if kind == "pos" else -1)  # fmt: skip
            p = self.param_read(arg, fn, item) if arg is not None else None
            if p is not None:
                return p
        return None

    def locals_(self, value, fn: dict, item: dict | None) -> tuple[list[str], list[str]] | None:
        """For `return x` where x is a local name of `fn` bound only by plain assignments and
        definitions, some of them `x = <parameter>`: (those parameters, the other values' nodes).
        A decorator's `wrapper = func` in one branch and `def wrapper` in another then hands
        back each call's own function, besides the wrapper."""
        x = self.txt(value)
        if item is not fn or self.lookup(x, item) != f"{fn['id']}|{x}" or self.is_param(fn, x):
            return None
        if not self.binders.get((fn["id"], x), set()) <= {"assign", "def"}:
            return None
        if self._sources is None:
            self._sources = self.local_sources()
        params, keys = [], []
        for p, k in self._sources.get((fn["id"], x), ()):
            if p is not None:
                params.append(p)
            elif k is not None:
                keys.append(k)
        return (sorted(set(params)), keys) if params else None

    def local_sources(self) -> dict[tuple[str, str], list[tuple[str | None, str | None]]]:
        """(function id, name) -> what each plain assignment or definition of that local name
        binds it to: (a parameter's name, None) or (None, a node)."""
        out: dict[tuple[str, str], list] = {}
        for node in self.caps.get("assign", ()):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            while right is not None and right.type == "assignment":
                right = right.child_by_field_name("right")
            if left is None or left.type != "identifier" or right is None:
                continue
            item = self.scope_of(node.start_byte)
            fn = self.function_of(item)
            if fn is None or item is not fn:
                continue
            p = self.param_read(right, fn, item)
            key = (fn["id"], self.txt(left))
            out.setdefault(key, []).append((p, None if p else self.key(right, item)))
        for it in self.defs:
            parent = it["parent"]
            if it["kind"] != "lambda" and parent is not None and parent["kind"] != "class":
                value = self.def_value.get(it["id"], f"={it['id']}")
                out.setdefault((parent["id"], it["name"]), []).append((None, value))
        return out

    def callee_binding(self, call, item: dict | None) -> str | None:
        """The binding a call's callee names: `g(...)` its scope's slot for g, `self.m(...)` (in
        a method, or a function nested in one) the slot of m in the method's class."""
        callee = call.child_by_field_name("function")
        if callee is None:
            return None
        if callee.type == "identifier":
            return self.lookup(self.txt(callee), item)
        obj, attr = callee.child_by_field_name("object"), callee.child_by_field_name("attribute")
        if callee.type != "attribute" or obj is None or attr is None or obj.type != "identifier":
            return None
        k = self.lookup(self.txt(obj), item)
        fn = self.function_of(item)
        while fn is not None and not k.startswith(fn["id"] + "|"):
            fn = self.function_of(fn["parent"])
        if fn is None or self.self_class(obj, fn) is None:
            return None
        return f"{fn['parent']['id']}|{self.txt(attr)}"

    def is_param(self, fn: dict, name: str) -> bool:
        params = fn["node"].child_by_field_name("parameters")
        for p in params.named_children if params is not None else ():
            n = _param_name(p)
            if n is not None and self.txt(n) == name:
                return True
        return False

    def yielded(self, node) -> None:
        item = self.scope_of(node.start_byte)
        fn = self.function_of(item)
        if fn is None:
            return
        fid = fn["id"]
        if fid not in self.sites:
            self.sites.add(fid)
            self.flow(f"{fid}|()", f"=g:{fid}")
        kids = node.named_children
        if not kids:
            return
        if kids[0].type == "expression_list" or self.txt(node).startswith("yield from"):
            k = self.key(kids[0], item)
            if k is not None and self.txt(node).startswith("yield from"):
                self.flow(f"{fid}|*", self.step(k, "*"))
                return
        self.flow(f"{fid}|*", self.key(kids[0], item))

    def loop(self, node) -> None:
        item = self.scope_of(node.start_byte)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            return
        src = self.key(right, item)
        if src is None:
            return
        line = node.start_point[0] + 1
        owner = self.sid(item)
        first = node.child(0)
        aiter, anext = (
            ("__aiter__", "__anext__") if first is not None and first.type == "async"
            else ("__iter__", "__next__")
        )  # fmt: skip
        it = self.step(src, "." + aiter)
        got = self.step(it, "()")
        nxt = self.step(got, "." + anext)
        value = self.step(nxt, "()")
        self.site_row(aiter, got, line, owner, "implicit")
        self.site_row(anext, value, line, owner, "implicit")
        elem = self.step(src, "*")
        self.flow(elem, value)
        self.assign_node(left, elem, item)

    def with_item(self, node) -> None:
        value = node.child_by_field_name("value")
        if value is None:
            return
        alias = None
        if value.type == "as_pattern":
            alias = value.child_by_field_name("alias")
            value = value.named_children[0] if value.named_children else None
            if value is None:
                return
        item = self.scope_of(node.start_byte)
        src = self.key(value, item)
        if src is None:
            return
        line, owner = node.start_point[0] + 1, self.sid(item)
        stmt = node.parent.parent if node.parent is not None else None
        first = stmt.child(0) if stmt is not None and stmt.type == "with_statement" else None
        names = (("__aenter__", "__aexit__") if first is not None and first.type == "async"
                 else ("__enter__", "__exit__"))  # fmt: skip
        enter = self.step(src, "." + names[0])
        entered = self.step(enter, "()")
        leave = self.step(src, "." + names[1])
        self.site_row(names[0], entered, line, owner, "implicit")
        self.site_row(names[1], self.step(leave, "()"), line, owner, "implicit")
        if alias is not None:
            targets = [c for c in alias.named_children if c.type != "comment"]
            for tgt in targets[:1]:
                self.assign_node(tgt, entered, item)
                if tgt.type == "identifier":
                    self.flow(self.target_key(tgt, item), src)

    def raised(self, node) -> None:
        kids = node.named_children
        if not kids or kids[0].type == "call":
            return
        item = self.scope_of(node.start_byte)
        k = self.key(kids[0], item)
        if k is None:
            return
        name = self.txt(kids[0]).rsplit(".", 1)[-1][:80]
        self.site_row(name, self.step(k, "()"), node.start_point[0] + 1, self.sid(item), "raise")

    def walrus(self, node) -> None:
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is None or value is None:
            return
        item = self.scope_of(node.start_byte)
        self.flow(self.lookup(self.txt(name), self.function_of(item)), self.key(value, item))

    # -- members run implicitly ----------------------------------------------------------------
    def access(self, member: str, obj, item: dict | None, how: str, line: int) -> None:
        """`obj`'s member runs without a call written: a property or descriptor read through
        `obj.member` (`get`, `set`, `del`), or a dunder an operator or a protocol calls (`op`).
        One row per scope, receiver, member and way."""
        if obj is None:
            return
        base = self.key(obj, item)
        if base is None or base[0] == "=":  # a literal or a display: no class of the repository
            return
        src = self.sid(item)
        mark = (src, base, member, how)
        if mark in self.accessed:
            return
        self.accessed.add(mark)
        self.add((src, self.path, "python", F.ACCESS, member, base, None, line, None, how,
                  None, None, None, None, None))  # fmt: skip

    def ops(self, members: tuple[str, ...], obj, item, line: int) -> None:
        for m in members:
            self.access(m, obj, item, "op", line)

    def implicit(self, caps: dict) -> None:
        """The members attribute reads, stores and deletes, subscripts, operators,
        comparisons, truth tests, f-string fields and `await` run."""
        for node in caps.get("attr", ()):
            parent = node.parent
            if parent is None or (parent.type == "call" and parent.child_by_field_name(
                    "function") == node):  # fmt: skip
                continue  # a method call: a call site of its own
            attr, obj = node.child_by_field_name("attribute"), node.child_by_field_name("object")
            if attr is None or obj is None or _inside_type(node):
                continue
            name = self.txt(attr)
            if name.startswith("__") and name.endswith("__"):
                continue
            item, line = self.scope_of(node.start_byte), node.start_point[0] + 1
            for how in _target_use(node):
                self.access(name, obj, item, how, line)
        for node in caps.get("subscript", ()):
            if _inside_type(node):
                continue
            obj = node.child_by_field_name("value")
            item, line = self.scope_of(node.start_byte), node.start_point[0] + 1
            for how in _target_use(node):
                self.access(_ITEM[how], obj, item, "op", line)
        for node in caps.get("binop", ()):
            op = node.child_by_field_name("operator")
            pair = _BINARY.get(self.txt(op)) if op is not None else None
            if pair is None or _inside_type(node):
                continue
            item, line = self.scope_of(node.start_byte), node.start_point[0] + 1
            self.access(pair[0], node.child_by_field_name("left"), item, "op", line)
            self.access(pair[1], node.child_by_field_name("right"), item, "op", line)
        for node in caps.get("unop", ()):
            op = node.child_by_field_name("operator")
            member = _UNARY.get(self.txt(op)) if op is not None else None
            if member is not None:
                item, line = self.scope_of(node.start_byte), node.start_point[0] + 1
                self.access(member, node.child_by_field_name("argument"), item, "op", line)
        for node in caps.get("compare", ()):
            self.comparison(node)
        for node in caps.get("truth", ()):
            t = node.type
            kids = ([node.child_by_field_name("argument")] if t == "not_operator" else
                    [node.child_by_field_name("left"), node.child_by_field_name("right")]
                    if t == "boolean_operator" else [node])  # fmt: skip
            for k in kids:
                if k is not None and k.type in _TRUTHY:
                    item = self.scope_of(k.start_byte)
                    self.access("__bool__", k, item, "op", k.start_point[0] + 1)
        for node in caps.get("ternary", ()):
            kids = node.named_children
            if len(kids) == 3 and kids[1].type in _TRUTHY:
                item = self.scope_of(node.start_byte)
                self.access("__bool__", kids[1], item, "op", node.start_point[0] + 1)
        for node in caps.get("interp", ()):
            kids = node.named_children
            if not kids:
                continue
            conv = next((c for c in kids if c.type == "type_conversion"), None)
            member = "__repr__" if conv is not None and "r" in self.txt(conv) else "__format__"
            item = self.scope_of(node.start_byte)
            self.access(member, kids[0], item, "op", node.start_point[0] + 1)
        for node in caps.get("await", ()):
            kids = node.named_children
            if kids:
                item = self.scope_of(node.start_byte)
                self.access("__await__", kids[0], item, "op", node.start_point[0] + 1)

    def comparison(self, node) -> None:
        """`a == b` runs `a.__eq__` (then `b.__eq__`), `a < b` `a.__lt__` and `b.__gt__`,
        `a in b` `b.__contains__`: pairwise along a chain."""
        kids = [c for c in node.children if c.type != "comment"]
        item, line = self.scope_of(node.start_byte), node.start_point[0] + 1
        for i in range(1, len(kids) - 1, 2):
            left, op, right = kids[i - 1], kids[i], kids[i + 1]
            if op.is_named:  # the grammar's operators are anonymous: `not in`, `is not` too
                continue
            text = " ".join(self.txt(op).split())
            if text in ("in", "not in"):
                self.access("__contains__", right, item, "op", line)
                continue
            pair = _COMPARE.get(text)
            if pair is not None:
                self.access(pair[0], left, item, "op", line)
                self.access(pair[1], right, item, "op", line)

    def builtin_call(self, name: str, args, item: dict | None, line: int) -> None:
        """What a builtin runs on its argument: `len(x)` `x.__len__`, `str(x)` `x.__str__`,
        `getattr(x, "name")` a read of `x.name`, `getattr(x, "visit_" + k)` every member
        named `visit_…`."""
        if args is None or args.type != "argument_list":
            return
        kids = [a for a in args.named_children if a.type not in ("comment", "keyword_argument")]
        if not kids:
            return
        members = _BUILTIN_RUNS.get(name)
        if members is not None:
            targets = kids if name == "print" else kids[:1]
            for k in targets:
                self.ops(members, k, item, line)
            return
        how = _REFLECT.get(name)
        if how is None or len(kids) < 2:
            return
        member = self.member_name(kids[1])
        if member is not None:
            self.access(member[0], kids[0], item, how if member[1] else "prefix", line)

    def member_name(self, node) -> tuple[str, bool] | None:
        """(a name, whether it is whole) of getattr's second argument: a literal, or the literal
        head of `"visit_" + x`, `f"visit_{x}"`, `"visit_%s" % x`."""
        t = node.type
        if t == "string":
            text = self.txt(node)
            head = text[: text.find(text[-1])] if text and text[-1] in "\"'" else ""
            if "f" in head.lower():
                body = text[len(head) + 1 :]
                cut = body.find("{")
                prefix = body[:cut] if cut > 0 else ""
                return (prefix, False) if _MEMBER.fullmatch(prefix or "-") else None
            body = text[len(head) + 1 : -1]
            return (body, True) if _MEMBER.fullmatch(body or "-") else None
        if t == "binary_operator":
            left = node.child_by_field_name("left")
            got = self.member_name(left) if left is not None else None
            if got is None:
                return None
            prefix = got[0].split("%", 1)[0]
            return (prefix, False) if len(prefix) >= 2 and _MEMBER.fullmatch(prefix) else None
        return None

    def import_names(self, node) -> list[tuple[str, str, str | None, str | None]]:
        """(local name, absolute module, imported name, "root") per name an import binds."""
        out = []
        if node.type == "import_statement":
            for c in node.named_children:
                if c.type == "dotted_name":
                    mod = self.txt(c)
                    out.append((mod.split(".")[0], mod.split(".")[0], None, "root"))
                elif c.type == "aliased_import":
                    n, a = c.child_by_field_name("name"), c.child_by_field_name("alias")
                    if n is not None and a is not None:
                        out.append((self.txt(a), self.txt(n), None, None))
            return out
        mod_node = node.child_by_field_name("module_name")
        if mod_node is None:
            return out
        module = absolute(self.txt(mod_node), self.path)
        for c in node.named_children:
            if c is mod_node or c.start_byte == mod_node.start_byte:
                continue
            if c.type == "wildcard_import":
                out.append(("*", module, "*", None))
            elif c.type == "dotted_name":
                n = self.txt(c)
                out.append((n, module, n, None))
            elif c.type == "aliased_import":
                n, a = c.child_by_field_name("name"), c.child_by_field_name("alias")
                if n is not None and a is not None:
                    out.append((self.txt(a), module, self.txt(n), None))
        return out

    def imported(self, node) -> None:
        item = self.scope_of(node.start_byte)
        sid = self.sid(item)
        for local, module, name, root in self.import_names(node):
            var = sid if local == "*" else self.lookup(local, item)
            self.emit(F.IMPORT, var, module, name, src=sid, alias=root)

    def fill(self, fn, name: str, args, item) -> None:
        """`d.update({...})`, `x.append(v)`…: stores into the container `d`/`x` holds."""
        obj = fn.child_by_field_name("object")
        base = self.key(obj, item) if obj is not None else None
        kids = [a for a in args.named_children if a.type != "comment"]
        if base is None or not kids:
            return
        if name == "update" and kids[0].type == "dictionary":
            for pair in kids[0].named_children:
                k, v = pair.child_by_field_name("key"), pair.child_by_field_name("value")
                if pair.type == "pair" and k is not None and v is not None:
                    value = self.key(v, item)
                    if value is not None:
                        self.emit(F.STORE_ITEM, base, value, self.index(k, item))
        elif name in ("append", "add") and len(kids) == 1:
            value = self.key(kids[0], item)
            if value is not None:
                self.emit(F.STORE_ITEM, base, value, "?")
        elif name in ("insert", "setdefault") and len(kids) == 2:
            value = self.key(kids[1], item)
            if value is not None:
                key = "?" if name == "insert" else self.index(kids[0], item)
                self.emit(F.STORE_ITEM, base, value, key)

    def call(self, node) -> None:
        """A call the language query did not capture (its callee is not a name or an
        attribute): a site of its own."""
        if (node.start_byte, node.end_byte) in self.done:
            return
        item = self.scope_of(node.start_byte)
        fn = node.child_by_field_name("function")
        if fn is None:
            return
        called, args = self.site(node, item)
        name = _LITERAL.sub("...", self.txt(fn))[:80]  # as written, literal text left out
        self.site_row(name, called, node.start_point[0] + 1, self.sid(item), None, args)

    def site(self, node, item: dict | None, receiver: str | None = None,
             name: str | None = None) -> tuple[str | None, str | None]:  # fmt: skip
        """(the node of a call's value, its arguments packed): the call node's parent is its
        callee; the arguments (see `packed_args`) are stored on the call's own row, once per
        call node. `receiver` and `name`, when given, are the callee as written (the
        extractor has them: a dotted receiver spares walking the tree)."""
        start, end = node.start_byte, node.end_byte
        self.done.add((start, end))
        args = node.child_by_field_name("arguments")
        if name is not None and name != "super" and (receiver is None or (
                receiver != "super" and _DOTTED.fullmatch(receiver))):  # fmt: skip
            callee = self.lookup(name, item) if receiver is None else (
                self.dotted(receiver, item) + STEP + "." + name)  # fmt: skip
            called = callee + STEP + f"({self.tag(args, item)})"
            self.memo[(start, end, "call")] = called
        else:
            called = self.key(node, item)
        if receiver is None and name is not None and called is not None and called.startswith(
                "=B:"):  # fmt: skip
            self.builtin_call(name, args, item, node.start_point[0] + 1)
        if name == "getfixturevalue" and receiver is not None and called is not None:
            wanted = _literal_names(args, self.txt)[:1]
            for fixture in wanted:  # `request.getfixturevalue("db")`: the fixture's value
                self.emit(F.FIXTURE, fixture, called, src=self.sid(self.function_of(item)),
                          alias="value")  # fmt: skip
        if called is None or (called[0] == "=" and not (
                receiver is None and name in _callbacks.builtin_callers()
                and called.startswith("=B:"))):  # fmt: skip
            return called, None
        shape = self.arg_shape(args)
        if called in self.sites:  # its arguments are on the first row: what it passes
            return called, shape
        self.sites.add(called)
        if name in _FILLERS and receiver is not None and args is not None:
            self.fill(node.child_by_field_name("function"), name, args, item)
        packed = self.packed_args(args, item)
        return called, ARGS.join(x for x in (packed, shape) if x) or None

    @staticmethod
    def shape_mark(args) -> str:
        """`l` when a call's first argument is a literal string or number, `p` when it passes
        another positional argument or a splat, else "": calls python_guards reads apart
        get their own nodes (F.SHAPE_MARK)."""
        if args is None or not args.named_child_count:
            return ""
        if args.type != "argument_list":  # f(x for x in y)
            return "p"
        first = args.named_children[0]
        if first.type in _FIRST_LITERALS:
            return "l"
        kinds = {a.type for a in args.named_children}
        return "" if kinds <= {"keyword_argument", "comment"} else "p"

    def arg_shape(self, args) -> str | None:
        """What tells a call without a first argument (ctxframe._resolve.flow): `~<ARGSEP>L`
        when its first argument is a literal string or number, `~<ARGSEP>P` when it passes
        another positional argument or a splat, else `,KEYWORD` for each keyword it gives;
        None for no argument. Adding a literal argument next to others leaves it as it was,
        so such an edit still keeps the value flow."""
        mark = self.shape_mark(args)
        if mark:
            return f"{F.SHAPE}{ARGSEP}{mark.upper()}"
        kws = "".join("," + self.txt(a.children[0]) for a in args.named_children
                      if a.type == "keyword_argument") if args is not None else ""  # fmt: skip
        return f"{F.SHAPE}{ARGSEP}{kws}" if kws else None


_FILLERS = {"update", "append", "add", "insert", "setdefault"}
_MEMBER = re.compile(r"[A-Za-z_]\w*")
_TRUTHY = {"identifier", "attribute", "subscript", "call"}
_ITEM = {"get": "__getitem__", "set": "__setitem__", "del": "__delitem__"}
_BINARY = {op: (f"__{m}__", f"__r{m}__") for op, m in (
    ("+", "add"), ("-", "sub"), ("*", "mul"), ("@", "matmul"), ("/", "truediv"),
    ("//", "floordiv"), ("%", "mod"), ("**", "pow"), ("<<", "lshift"), (">>", "rshift"),
    ("&", "and"), ("|", "or"), ("^", "xor"))}  # fmt: skip
_UNARY = {"-": "__neg__", "+": "__pos__", "~": "__invert__"}
_COMPARE = {"==": ("__eq__", "__eq__"), "!=": ("__ne__", "__ne__"), "<": ("__lt__", "__gt__"),
            "<=": ("__le__", "__ge__"), ">": ("__gt__", "__lt__"), ">=": ("__ge__", "__le__")}
# builtins that run a dunder of their (first) argument; `print` of each
_BUILTIN_RUNS = {
    "len": ("__len__",), "str": ("__str__",), "repr": ("__repr__",),
    "format": ("__format__",), "print": ("__str__",), "bool": ("__bool__",),
    "iter": ("__iter__",), "next": ("__next__",), "aiter": ("__aiter__",),
    "anext": ("__anext__",), "hash": ("__hash__",), "abs": ("__abs__",),
    "int": ("__int__", "__index__"), "float": ("__float__",), "complex": ("__complex__",),
    "round": ("__round__",), "bytes": ("__bytes__",), "dir": ("__dir__",),
    "reversed": ("__reversed__", "__len__", "__getitem__"), "divmod": ("__divmod__",),
    **dict.fromkeys(("list", "tuple", "set", "frozenset", "sorted", "enumerate", "zip", "sum",
                     "min", "max", "any", "all", "dict"), ("__iter__",)),
}  # fmt: skip
_REFLECT = {"getattr": "get", "hasattr": "get", "setattr": "set", "delattr": "del"}


def _target_use(node) -> tuple[str, ...]:
    """How an attribute or subscript is used where it stands: stored (`set`), deleted
    (`del`), read and stored (`x.a += 1`), else read."""
    parent, child = node.parent, node
    while parent is not None and parent.type in ("pattern_list", "tuple_pattern",
                                                  "list_pattern", "expression_list"):
        parent, child = parent.parent, parent  # an unpacking's target
    if parent is None:
        return ("get",)
    t = parent.type
    if t == "assignment" and parent.child_by_field_name("left") == child:
        return ("set",)
    if t == "augmented_assignment" and parent.child_by_field_name("left") == child:
        return ("get", "set")
    if t == "delete_statement":
        return ("del",)
    if t in ("for_statement", "for_in_clause") and parent.child_by_field_name("left") == child:
        return ("set",)
    return ("get",)


def _inside_type(node) -> bool:
    """Part of an annotation (`x: Optional[A]`, `-> A | None`) or a decorator's name
    (`@x.setter`): no member runs there."""
    p = node.parent
    for _ in range(3):
        if p is None or p.type in _STATEMENTS:
            return False
        if p.type in ("type", "decorator"):
            return True
        p = p.parent
    return False


_STATEMENTS = {"expression_statement", "assignment", "return_statement", "call", "argument_list",
               "if_statement", "block"}  # fmt: skip


def _literal_names(node, txt, dotted: bool = False) -> list[str]:
    """The identifiers (dotted names with `dotted`) written as string literals in a call's
    arguments or a list/tuple display, or a lone string."""
    if node is None:
        return []
    kids = [node] if node.type == "string" else node.named_children
    out = []
    for k in kids:
        if k.type == "string":
            text = txt(k).strip("\"'")
            if text.replace(".", "_").isidentifier() if dotted else text.isidentifier():
                out.append(text)
    return out


def _fixture_name(deco, txt) -> str | None:
    """`@pytest.fixture(name="client")`: the name a fixture is requested by."""
    if deco.type != "call":
        return None
    args = deco.child_by_field_name("arguments")
    for a in args.named_children if args is not None else ():
        if a.type == "keyword_argument":
            key, value = a.child_by_field_name("name"), a.child_by_field_name("value")
            if key is not None and txt(key) == "name" and value is not None and (
                    value.type == "string"):  # fmt: skip
                name = txt(value).strip("\"'")
                return name if name.isidentifier() else None
    return None


@lru_cache(maxsize=8192)
def _lit(kind: str, text: str) -> str:
    """A literal as a key: its kind and a hash of its text (literal text is never stored: it
    may be a secret's value)."""
    return f"{kind}:{zlib.crc32(text.encode('utf-8', 'replace')):08x}"


def _argument(args, name: str, pos: int):
    """The argument a call passes to parameter `name` (at position `pos`, -1: by keyword
    only), or None."""
    if args is None or args.type != "argument_list":
        return None
    i = 0
    for a in args.named_children:
        t = a.type
        if t == "keyword_argument":
            key = a.child_by_field_name("name")
            if key is not None and key.text.decode("utf-8", "replace") == name:
                return a.child_by_field_name("value")
        elif t == "list_splat":
            i = -10_000  # positions after `*args` are unknown
        elif t not in ("dictionary_splat", "comment"):
            if i == pos:
                return a
            i += 1
    return None


def _param_name(p):
    t = p.type
    if t == "identifier":
        return p
    if t in ("default_parameter", "typed_default_parameter"):
        return p.child_by_field_name("name")
    if t == "typed_parameter":
        for c in p.named_children:
            if c.type == "identifier":
                return c
            if c.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                return _param_name(c)
        return None
    if t in ("list_splat_pattern", "dictionary_splat_pattern"):
        for c in p.named_children:
            if c.type == "identifier":
                return c
    return None


def _names_self(text: str) -> bool:
    """`Self`, `typing.Self`, `"Self"`: the type of the receiver."""
    return text.strip("'\"").rpartition(".")[2] == "Self"


_COLLECTIONS = frozenset({
    "List", "list", "Sequence", "MutableSequence", "Iterable", "Iterator", "Collection",
    "Set", "set", "FrozenSet", "frozenset", "AbstractSet", "MutableSet", "Deque", "deque",
    "Tuple", "tuple", "Generator", "AsyncIterator", "AsyncIterable", "AsyncGenerator",
    "Reversible",
})  # fmt: skip


def _element_types(ann) -> list:
    """The element type of a typed collection annotation (`List[X]` -> X), inside
    `Optional[...]`/`X | None` too; none for others (a mapping iterates its keys)."""
    node = ann.named_children[0] if ann.type == "type" and ann.named_children else ann
    t = node.type
    if t == "binary_operator":
        return [x for f in ("left", "right") if (c := node.child_by_field_name(f)) is not None
                for x in _element_types(c)]  # fmt: skip
    if t not in ("generic_type", "subscript"):
        return []
    kids = node.named_children
    head = kids[0] if kids else None
    name = head.text.decode("utf-8", "replace").rsplit(".", 1)[-1] if head is not None else ""
    args = [c for k in kids[1:] for c in (k.named_children if k.type == "type_parameter"
                                          else [k])]  # fmt: skip
    if name in ("Optional", "Union"):
        return [x for a in args for x in _element_types(a)]
    if name in _COLLECTIONS and args:
        return [args[0]]
    return []


def _annotation_types(ann) -> list:
    """The type expressions an annotation names: `X`, `a.X`, `"X"`, the arguments of
    `Optional[…]`/`Union[…]`, both sides of `X | None`."""
    node = ann.named_children[0] if ann.type == "type" and ann.named_children else ann
    t = node.type
    if t in ("identifier", "attribute", "string"):
        return [node]
    if t == "binary_operator":
        return [x for f in ("left", "right") if (c := node.child_by_field_name(f)) is not None
                for x in _annotation_types(c)]  # fmt: skip
    if t in ("generic_type", "subscript"):
        kids = node.named_children
        head = kids[0] if kids else None
        name = head.text.decode("utf-8", "replace").rsplit(".", 1)[-1] if head is not None else ""
        if name in ("Optional", "Union"):
            return [x for k in kids[1:] for c in (k.named_children if k.type in (
                "type_parameter",) else [k]) for x in _annotation_types(c)]  # fmt: skip
        return []
    if t == "none":
        return []
    return []

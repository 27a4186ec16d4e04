"""What one repository offers other repositories and asks of them, beyond its own graph: the
packages its manifests build, and each outbound HTTP call as a method and a URL template.

A catalog reads these from the repository's files after indexing it (ctxframe._store.catalog).
The calls are the sites of the index's `http` edges, parsed again to evaluate the URL argument —
string literals, template strings, f-strings, `+` chains and `fmt.Sprintf`, with names bound
once in the file to such a value — and the method: the callee's name (`requests.post`,
`http.Get`), `fetch`'s `method:` option (GET when there are no options), `NewRequest`'s first
argument. Whatever cannot be known from the file becomes `{}` in the template (a method that
cannot be known is None). No Polars here: plain rows.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from functools import cache

from ctxframe._core.languages import BY_NAME
from ctxframe._ingest.boundaries.calls import RULES, VERBS

HOLE = "{}"  # a part of a URL that is not known from the file
_HTTP_NAMES = frozenset(n for _fam, _recv, names, what in RULES if what == "http" for n in names)
_FAMILIES = {"python", "js", "go"}  # the families whose calls are evaluated
_MAX_FILE = 1_000_000
_STRINGS = {"string", "template_string", "interpreted_string_literal", "raw_string_literal"}
_SUBSTITUTIONS = {"template_substitution", "interpolation"}
_QUOTES = {"string_start", "string_end"}
_PLUS = {"binary_expression", "binary_operator"}
_CALLS = {"call_expression", "call"}
# (family, callee name) -> (index of the method argument, index of the URL argument)
_METHOD_ARG = {
    ("go", "NewRequest"): (0, 1),
    ("go", "NewRequestWithContext"): (1, 2),
    ("python", "request"): (0, 1),
    ("python", "stream"): (0, 1),
}
_GO_METHODS = {"Get": "GET", "Post": "POST", "Head": "HEAD", "PostForm": "POST"}
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)$", re.DOTALL)
_PRINTF = re.compile(r"%[-+# 0-9.]*[a-zA-Z]")


# -- packages ----------------------------------------------------------------------------------
def normalise_package(ecosystem: str, name: str) -> str:
    """The name a dependency manifest writes for this package (PyPI names folded, PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower() if ecosystem == "pypi" else name


def built_packages(root: str, paths: list[str]) -> list[dict]:
    """One row per package a manifest among `paths` builds: `ecosystem`, `name`, `version`,
    `path`, `line` (pyproject.toml `[project]`/Poetry name, package.json name, go.mod module,
    Cargo.toml `[package]`)."""
    out = []
    for path in sorted(paths):
        base = path.rpartition("/")[2]
        if base not in ("pyproject.toml", "package.json", "go.mod", "Cargo.toml"):
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as fh:
                text = fh.read(_MAX_FILE)
            found = _package_of(base, text)
        except (OSError, UnicodeDecodeError, ValueError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if found is None:
            continue
        eco, name, version = found
        needles = (f'"{name}"', f"'{name}'", f"module {name}")
        lines = text.splitlines()
        line = next((i + 1 for i, ln in enumerate(lines) if any(n in ln for n in needles)), None)
        out.append(
            {
                "ecosystem": eco,
                "name": normalise_package(eco, name),
                "version": version,
                "path": path,
                "line": line,
            }
        )
    return out


def _package_of(base: str, text: str) -> tuple[str, str, str | None] | None:
    if base == "package.json":
        data = json.loads(text)
        name = data.get("name") if isinstance(data, dict) else None
        return ("npm", name, _str(data.get("version"))) if isinstance(name, str) else None
    if base == "go.mod":
        for raw in text.splitlines():
            parts = raw.split("//")[0].split()
            if len(parts) >= 2 and parts[0] == "module":
                return "go", parts[1].strip('"'), None
        return None
    data = tomllib.loads(text)
    if base == "Cargo.toml":
        pkg = data.get("package") or {}
        name = pkg.get("name")
        return ("cargo", name, _str(pkg.get("version"))) if isinstance(name, str) else None
    project = data.get("project") or {}
    poetry = (data.get("tool") or {}).get("poetry") or {}
    name = project.get("name") or poetry.get("name")
    version = project.get("version") or poetry.get("version")
    return ("pypi", name, _str(version)) if isinstance(name, str) else None


def _str(value) -> str | None:
    return value if isinstance(value, str) else None


# -- HTTP calls --------------------------------------------------------------------------------
def http_calls(root: str, sites: list[dict]) -> list[dict]:
    """Each outbound HTTP call site (`src`, `path`, `line`, `language`, `name`: the index's
    `http` edge) with `method`, `url` (the template), `base` (`absolute`, `relative` or
    `dynamic`: the URL starts with an unknown value), `host` (a literal host, else None) and
    `route` (the path template, `{}` for unknown segments; None when the URL has no path)."""
    by_path: dict[str, list[dict]] = {}
    for s in sites:
        by_path.setdefault(s["path"], []).append(s)
    out = []
    for path, group in sorted(by_path.items()):
        lang = BY_NAME.get(group[0].get("language") or "")
        calls = None
        if lang is not None and lang.family in _FAMILIES:
            calls = _file_calls(os.path.join(root, path), lang.grammar, lang.family)
        for s in group:
            method, url = None, None
            if calls is not None:
                method, url = calls.get(s["line"], (None, None))
            name = s.get("name")
            if url is None and name and name != "(dynamic)":
                url = name  # another language: the literal the index kept
            out.append(
                {
                    **{k: s[k] for k in ("src", "path", "line")},
                    "method": method,
                    "url": url,
                    **split_url(url),
                }
            )
    return out


def split_url(url: str | None) -> dict:
    """`base`, `host` and `route` of a URL template (see http_calls)."""
    base, host, rest = None, None, None
    if url:
        m = _URL.match(url)
        if m:
            base, rest = "absolute", m.group(3) or "/"
            host = m.group(2).rpartition("@")[2]
            host = re.sub(r":[0-9]+$", "", host).lower() or None
            if host is not None and HOLE in host:
                base, host = "dynamic", None
        elif url.startswith("/"):
            base, rest = "relative", url
        elif url.startswith(HOLE):
            rest = re.sub(r"^(\{\})+", "", url)
            base = "dynamic" if rest.startswith("/") else None
    route = None
    if rest is not None and rest.startswith("/"):
        route = re.split(r"[?#]", rest, maxsplit=1)[0]
        route = re.sub(r"\{[^{}]*\}", HOLE, route)
        route = re.sub(r"/{2,}", "/", route)
        route = route.rstrip("/") or "/"
    return {"base": base, "host": host, "route": route}


def _file_calls(
    full: str, grammar: str, family: str
) -> dict[int, tuple[str | None, str | None]] | None:
    """line -> (method, URL template) of the first HTTP call starting on that line."""
    try:
        with open(full, "rb") as fh:
            data = fh.read(_MAX_FILE + 1)
    except OSError:
        return None
    if len(data) > _MAX_FILE:
        return None
    tree = _parser(grammar).parse(data)
    ev = _Evaluator(data)
    ev.collect(tree.root_node)
    found: dict[int, tuple[str | None, str | None]] = {}
    for call in ev.calls:
        name = _callee(call, data)
        if name not in _HTTP_NAMES:
            continue
        line = call.start_point[0] + 1
        if line not in found:
            found[line] = ev.http_call(call, family, name)
    return found


@cache
def _parser(grammar: str):
    from tree_sitter_language_pack import get_parser

    return get_parser(grammar)


def _text(data: bytes, node) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _callee(call, data: bytes) -> str | None:
    fn = call.child_by_field_name("function")
    if fn is None:
        return None
    last = (
        fn.child_by_field_name("property")
        or fn.child_by_field_name("attribute")
        or fn.child_by_field_name("field")
        or fn
    )
    return _text(data, last) if last.type.endswith("identifier") else None


class _Evaluator:
    """A file's HTTP calls and the string values its names are bound to, and the evaluation
    of an expression into a URL template."""

    def __init__(self, data: bytes):
        self.data = data
        self.calls: list = []
        self.bindings: dict[str, list] = {}  # name -> the value nodes bound to it

    def collect(self, root) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            t = node.type
            if t in _CALLS:
                self.calls.append(node)
            elif t == "variable_declarator":  # JS/TS const/let/var
                self._bind(node.child_by_field_name("name"), node.child_by_field_name("value"))
            elif t == "assignment":  # Python
                self._bind(node.child_by_field_name("left"), node.child_by_field_name("right"))
            elif t in ("const_spec", "var_spec"):  # Go
                value = node.child_by_field_name("value")
                if value is not None and value.named_child_count:
                    self._bind(node.child_by_field_name("name"), value.named_children[0])
            stack.extend(reversed(node.children))
        self.calls.sort(key=lambda n: n.start_byte)

    def _bind(self, name, value) -> None:
        if name is not None and value is not None and name.type == "identifier":
            self.bindings.setdefault(_text(self.data, name), []).append(value)

    def value(self, node, depth: int = 0) -> str:
        """The node as a URL template: literal text, `{}` where a value is not known."""
        if node is None or depth > 12:
            return HOLE
        t = node.type
        if t in _STRINGS:
            parts = []
            for c in node.named_children:
                if c.type in _QUOTES:
                    continue
                if c.type in _SUBSTITUTIONS:
                    inner = c.named_children[0] if c.named_child_count else None
                    parts.append(self.value(inner, depth + 1))
                else:
                    parts.append(_text(self.data, c))
            if not node.named_child_count and t != "string":  # Go `""`
                return _text(self.data, node)[1:-1]
            return "".join(parts)
        if t in _PLUS:
            op = node.child_by_field_name("operator")
            if op is None or _text(self.data, op) != "+":
                return HOLE
            return self.value(node.child_by_field_name("left"), depth + 1) + self.value(
                node.child_by_field_name("right"), depth + 1
            )
        if t == "identifier":
            bound = self.bindings.get(_text(self.data, node), [])
            values = {self.value(v, depth + 1) for v in bound}
            return values.pop() if len(values) == 1 else HOLE
        if t in ("parenthesized_expression", "concatenated_string"):
            return "".join(self.value(c, depth + 1) for c in node.named_children) or HOLE
        if t in _CALLS and _callee(node, self.data) == "Sprintf":  # Go fmt.Sprintf
            args = self._args(node)
            if args:
                fmt = self.value(args[0], depth + 1)
                values = iter([self.value(a, depth + 1) for a in args[1:]])
                return _PRINTF.sub(lambda _m: next(values, HOLE), fmt.replace("%%", "%"))
        return HOLE

    def _args(self, call) -> list:
        args = call.child_by_field_name("arguments")
        if args is None:
            return []
        return [a for a in args.named_children if a.type not in ("keyword_argument", "comment")]

    def _keyword(self, call, key: str):
        args = call.child_by_field_name("arguments")
        for a in args.named_children if args is not None else []:
            if a.type == "keyword_argument":
                k = a.child_by_field_name("name")
                if k is not None and _text(self.data, k) == key:
                    return a.child_by_field_name("value")
        return None

    def _literal(self, node) -> str | None:
        text = self.value(node)
        return None if HOLE in text or not text else text

    def http_call(self, call, family: str, name: str) -> tuple[str | None, str | None]:
        """(method, URL template) of one HTTP call; None where not known."""
        args = self._args(call)
        method: str | None = None
        url_node = args[0] if args else self._keyword(call, "url")
        if (family, name) in _METHOD_ARG:
            m_i, u_i = _METHOD_ARG[family, name]
            method_node = args[m_i] if len(args) > m_i else self._keyword(call, "method")
            m = self._literal(method_node) if method_node is not None else None
            method = m.upper() if m else None
            url_node = args[u_i] if len(args) > u_i else self._keyword(call, "url")
        elif name in VERBS:
            method = name.upper()
        elif name in _GO_METHODS:
            method = _GO_METHODS[name]
        elif family == "js" and name in ("fetch", "request"):  # fetch(url, init), http.request
            method = "GET" if len(args) < 2 else self._option(args[1], "method")
        url = self.value(url_node) if url_node is not None else None
        if url is not None and not url.strip(HOLE):
            url = None  # nothing literal at all
        return method, url

    def _option(self, node, key: str) -> str | None:
        """The literal value of `key` in an object literal (the default GET when the object
        names no method); None when the options are not written here."""
        if node.type != "object":
            return None
        for pair in node.named_children:
            if pair.type != "pair":
                continue
            k = pair.child_by_field_name("key")
            if k is not None and _text(self.data, k).strip("'\"") == key:
                v = self._literal(pair.child_by_field_name("value"))
                return v.upper() if v else None
        return "GET"

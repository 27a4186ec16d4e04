"""JavaScript/TypeScript functions stored in properties and object literals (docs/schema.md,
"JavaScript and TypeScript definitions"): their ids, kinds and parents, the `src` of the calls
inside them, and what calls elsewhere resolve to."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._ingest.extract import extract_file

ROUTER = """\
var proto = module.exports = function (options) {
  return proto.handle(options);
};

/** Dispatch a request. */
proto.handle = function handle(req, res, out) {
  var self = this;
  next();
  function next() {
    self.process_params(req);
  }
};

proto.process_params = (req) => req;
"""

ROUTE = """\
function Route(path) {
  this.path = path;
}

class Stack {}
Stack.prototype.push = function push(x) {};

Route.prototype._options = function _options() {
  return this.dispatch();
};

Route.prototype.dispatch = function dispatch() {};
"""

EXPORTS = """\
exports.isAbsolute = function (path) {
  return check(path);
};
module.exports.normalize = (t) => t;
module.exports = function query(options) {};
"""

RESPONSE = """\
var res = Object.create(null);

res.send = function send(body) {
  this.set('Content-Length', 1);
};

res.set = res.header = function header(field, val) {};
res[method] = function () {};
this.hidden = function () {};
"""

OBJECTS = """\
const api = {
  get: function () {
    return this.put();
  },
  put() {},
  size: 1,
  arrow: () => 2,
};
X.prototype = { m: function () {}, k() {} };
state = { z: function () {} };
Y.config = { n: function () {} };
module.exports = { h: function () {}, i() {} };
register({ anonymous: function () {} });
function outer() {
  const local = { helper: function () {} };
  local.run = function () {
    go();
  };
  return { built() {} };
}
export const shared = { load: () => 1 };
"""

# (source, [(id after `PATH::`, kind, parent after `PATH::` or "" for the file)])
DEFS = [
    (ROUTER, [
        ("proto", "function", ""),
        ("proto.handle", "method", "proto"),
        ("proto.handle.next", "function", "proto.handle"),
        ("proto.process_params", "method", "proto"),
    ]),
    (ROUTE, [
        ("Route", "function", ""),
        ("Stack", "class", ""),
        ("Stack.push", "method", "Stack"),
        ("Route._options", "method", "Route"),
        ("Route.dispatch", "method", "Route"),
    ]),
    (EXPORTS, [
        ("isAbsolute", "function", ""),
        ("normalize", "function", ""),
        ("query", "function", ""),
    ]),
    (RESPONSE, [
        ("res.send", "method", ""),
        ("res.set", "method", ""),
    ]),
    (OBJECTS, [
        ("api.get", "method", ""),
        ("api.put", "method", ""),
        ("api.arrow", "method", ""),
        ("X.m", "method", ""),
        ("X.k", "method", ""),
        ("state.z", "method", ""),
        ("h", "method", ""),
        ("i", "method", ""),
        ("outer", "function", ""),
        ("outer.built", "method", "outer"),
        ("shared.load", "method", ""),
    ]),
]  # fmt: skip


def _defs(tmp_path: Path, name: str, source: str) -> list[tuple[str, str, str]]:
    (tmp_path / name).write_text(source)
    res = extract_file(str(tmp_path), name)
    assert res.parse_errors == 0
    prefix = f"{name}::"
    return [(d[0].removeprefix(prefix), d[1], d[10].removeprefix(name).removeprefix("::"))
            for d in res.defs]  # fmt: skip


@pytest.mark.parametrize("ext", ["js", "ts", "tsx"])
@pytest.mark.parametrize(("source", "want"), DEFS)
def test_definitions(tmp_path: Path, ext: str, source: str, want: list) -> None:
    assert _defs(tmp_path, f"a.{ext}", source) == want


def test_doc_and_lines_of_a_property_function(tmp_path: Path) -> None:
    (tmp_path / "r.js").write_text(ROUTER)
    row = next(d for d in extract_file(str(tmp_path), "r.js").defs if d[3] == "proto.handle")
    signature = "proto.handle = function handle(req, res, out) {"
    assert (row[2], row[6], row[7], row[8], row[9]) == (
        "handle", 6, 12, signature, "Dispatch a request."
    )  # fmt: skip


# (source, call name, its src after `PATH::` or "" for the file, receiver, scope)
CALLS = [
    (ROUTER, "handle", "proto", "proto", None),
    (ROUTER, "next", "proto.handle", None, None),
    (ROUTER, "process_params", "proto.handle.next", "self", "proto"),
    (ROUTE, "dispatch", "Route._options", "this", "Route"),
    (EXPORTS, "check", "isAbsolute", None, None),
    (RESPONSE, "set", "res.send", "this", "res"),
    (RESPONSE, "create", "", "Object", None),
    (OBJECTS, "put", "api.get", "this", "api"),
    (OBJECTS, "register", "", None, None),
    (OBJECTS, "go", "outer", None, None),
]  # fmt: skip


@pytest.mark.parametrize("ext", ["js", "ts", "tsx"])
@pytest.mark.parametrize(("source", "name", "src", "receiver", "scope"), CALLS)
def test_calls_inside_have_the_definition_as_src(
    tmp_path: Path, ext: str, source: str, name: str, src: str, receiver, scope
) -> None:
    path = f"a.{ext}"
    (tmp_path / path).write_text(source)
    calls = [r for r in extract_file(str(tmp_path), path).refs if r[3] == "call" and r[4] == name]
    want_src = f"{path}::{src}" if src else path
    assert [(r[0], r[5], r[6]) for r in calls] == [(want_src, receiver, scope)]


APP = """\
var utils = require('./utils');
var res = require('./response');
var Route = require('./route');

function handler(req, out) {
  out.send('hi');
  utils.isAbsolute('/x');
}

function bare() {
  send('hi');
}
"""

# (file, caller, callee as written, target, confidence)
EDGES = [
    ("app.js", "handler", "send", "response.js::res.send", "INFERRED"),
    ("app.js", "handler", "isAbsolute", "utils.js::isAbsolute", "EXTRACTED"),
    ("response.js", "res.send", "set", "response.js::res.set", "EXTRACTED"),
    ("route.js", "Route._options", "dispatch", "route.js::Route.dispatch", "EXTRACTED"),
    ("router.js", "proto.handle.next", "process_params", "router.js::proto.process_params",
     "EXTRACTED"),
    ("router.js", "proto.handle", "next", "router.js::proto.handle.next", "EXTRACTED"),
]  # fmt: skip


@pytest.fixture(scope="module")
def express_like(tmp_path_factory) -> cf.Graph:
    root = tmp_path_factory.mktemp("express-like")
    files = {"app.js": APP, "response.js": RESPONSE, "route.js": ROUTE, "router.js": ROUTER,
             "utils.js": EXPORTS}  # fmt: skip
    for name, text in files.items():
        (root / name).write_text(text)
    return cf.index(str(root), store=str(root / ".store"), progress=False)


@pytest.mark.parametrize(("path", "caller", "name", "dst", "confidence"), EDGES)
def test_calls_resolve_to_property_functions(
    express_like: cf.Graph, path: str, caller: str, name: str, dst: str, confidence: str
) -> None:
    calls = express_like.edges.filter(
        (pl.col("kind") == "calls") & (pl.col("src") == f"{path}::{caller}")
        & (pl.col("name") == name)
    )  # fmt: skip
    assert calls.select("dst", "confidence").rows() == [(dst, confidence)]


def test_method_is_contained_in_its_constructor(express_like: cf.Graph) -> None:
    contains = express_like.edges.filter(
        (pl.col("kind") == "contains") & (pl.col("src") == "route.js::Route")
    )
    assert sorted(contains["dst"]) == ["route.js::Route._options", "route.js::Route.dispatch"]


def test_a_bare_call_never_names_a_method(express_like: cf.Graph) -> None:
    """`send()` has no implicit `this`: it is not `res.send`, the only definition named so."""
    calls = express_like.edges.filter(
        (pl.col("kind") == "calls") & (pl.col("src") == "app.js::bare") & (pl.col("name") == "send")
    )
    assert calls["dst"].to_list() == [None]

"""Function metrics at extraction time: cyclomatic number as lizard 1.24.3 counts it (each
expected number below is what `lizard` prints for the same snippet), nesting depth, parameters
and decorators, for every language with a metrics query."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxframe._ingest.extract import extract_file
from ctxframe._ingest.metrics import decorator_name

PY = '''\
def outer(a, b=lambda x: x if x else 0, *args, c: int = 1, **kw):
    """doc"""
    f = lambda y: y and z or w
    def inner(q):
        if q:
            return 1
        return [i for i in q if i]
    if a:
        pass
    elif b:
        pass
    else:
        pass
    try:
        pass
    except ValueError:
        pass
    finally:
        pass
    while a and not b:
        for x in a:
            if x:
                break
    match a:
        case 1:
            pass
        case x if x > 2:
            pass
    return f"{a if b else c}"


class K:
    x = 1 if y else 2

    def m(self, /, a, *, b):
        with open(a) as f:
            assert f, "no"
        return a or b
'''

TS = """\
function outer(a?: number, b: string = "x"): number {
  const f = (x: number) => x > 0 ? 1 : 2;
  let z = a?.toString() ?? "q";
  if (a && b || z) { return 1; }
  for (const k of [1, 2]) { while (k) { break; } }
  switch (a) { case 1: break; case 2: break; default: break; }
  try { z = "1" } catch (e) { z = "2" }
  return [1, 2].map(v => { if (v) return 1; return 0; }).length;
}
function later(a) {
  const g = (x) =>
    x ? 1 : 2;
  return `${a ? 1 : 2}` + promise.catch(g);
}
class C {
  m(p: number | undefined, q?: string): void {
    if (p) { console.log(q); }
  }
}
"""

JS = """\
function outer(a, b) {
  const f = (x) => x > 0 ? 1 : 2;
  if (a && b || c) { return 1; }
  do { a++ } while (a < 3);
  x ??= 1;
  return { key: (a && b), other: a || b };
}
"""

GO = """\
package main

func outer(a int, b, c string) int {
	f := func(x int) int { if x > 0 { return 1 }; return 2 }
	if a > 0 && b != "" || c == "" { return 1 } else if a < 0 { return 2 }
	for i := 0; i < 3; i++ { }
	switch a { case 1: return 1; case 2, 3: return 2; default: return 0 }
	return f(a)
}
"""

JAVA = """\
class A {
  int m(int a, String b) {
    Runnable r = () -> { if (a > 0) { foo(); } };
    for (int i : xs) { if (i > 0 && a < 0 || b == null) continue; }
    switch (a) { case 1: break; case 2: break; default: break; }
    try { m2(); } catch (IOException e) { } catch (Exception e) { } finally { }
    return a > 0 ? 1 : 2;
  }
  void j(List<? extends T> a) { if (a) {} }
}
"""

C = """\
static int outer(int a, char *b) {
  if (a > 0 && b || !a) { return 1; }
  else if (a < -1) { return 2; }
  for (;;) { while (a) { a--; } }
  switch (a) { case 1: return 1; default: return 0; }
#if defined(A) && defined(B)
  return 3;
#endif
  return a ? 1 : 0;
}
"""

CPP = """\
int outer(int a) {
  auto f = [](int x) { if (x) return 1; return 0; };
  try { g(); } catch (const std::exception& e) { } catch (...) { }
  for (auto& v : xs) { if (v && a) {} }
  return a ? f(a) : 0;
}
"""

CS = """\
class A {
  int M(int a, string b) {
    foreach (var x in xs) { if (x > 0 && a > 0) { } }
    Func<int,int> f = x => x > 0 ? 1 : 0;
    var s = b ?? "x";
    try { } catch (Exception e) { } finally { }
    switch (a) { case 1: break; default: break; }
    return 1;
  }
}
"""

RUST = """\
fn outer(a: i32, b: Option<i32>) -> Result<i32, E> where T: Clone {
    let f = |x: i32| if x > 0 { 1 } else { 0 };
    let v = b.ok_or(E)?;
    if a > 0 && v > 0 || a < -1 { return Ok(1); }
    for i in 0..a { while i > 0 { loop { break; } } }
    match a { 1 => Ok(1), 2 | 3 => Ok(2), _ => Ok(0) }
}
"""

ZIG = """\
fn outer(a: i32, b: ?i32) !i32 {
    const v = b orelse 0;
    if (a > 0 and v > 0 or a < -1) return 1;
    for (xs) |x| { while (x > 0) {} }
    const r = try g(a);
    const q = h(a) catch 0;
    return switch (a) { 1 => 1, 2, 3 => 2, else => r + q };
}
"""

# (file, source, {qualified name: (cyclomatic, nesting, params)}); cyclomatic from lizard
CASES = [
    ("a.py", PY, {"outer": (16, 3, 5), "outer.inner": (4, 1, 1), "K.m": (2, 1, 3),
                  "outer.<lambda1>": (2, 0, 1)}),
    ("a.ts", TS, {"outer": (11, 2, 2), "outer.f": (2, 0, 1), "later": (3, 0, 1),
                  "C.m": (2, 1, 2)}),
    ("a.js", JS, {"outer": (7, 1, 2), "outer.f": (2, 0, 1)}),
    ("a.go", GO, {"outer": (8, 1, 3)}),
    ("A.java", JAVA, {"A.m": (11, 2, 2), "A.j": (2, 1, 1)}),
    ("a.c", C, {"outer": (10, 2, 2)}),
    ("a.cpp", CPP, {"outer": (8, 2, 1)}),
    ("a.cs", CS, {"A.M": (7, 2, 2)}),
    ("a.rs", RUST, {"outer": (11, 3, 2)}),
    ("a.zig", ZIG, {"outer": (12, 2, 2)}),
]  # fmt: skip


def _metrics(tmp_path: Path, name: str, source: str) -> dict[str, tuple]:
    (tmp_path / name).write_text(source)
    res = extract_file(str(tmp_path), name)
    assert res.skip_reason is None and res.parse_errors == 0
    return {row[3]: res.metrics.get(row[0]) for row in res.defs}


@pytest.mark.parametrize(("name", "source", "want"), CASES, ids=[c[0] for c in CASES])
def test_metrics_per_language(tmp_path: Path, name: str, source: str, want: dict) -> None:
    got = _metrics(tmp_path, name, source)
    assert {q: got[q][:3] for q in want} == want


@pytest.mark.parametrize(("name", "source"), [c[:2] for c in CASES], ids=[c[0] for c in CASES])
def test_one_walk_matches_as_two(name: str, source: str) -> None:
    """The extractor runs its query and the metrics patterns in one walk of the tree: its own
    patterns' matches come in the order they do alone, the metrics' are those of their query
    alone."""
    from collections import Counter

    from tree_sitter import QueryCursor

    from ctxframe._core.languages import language_for
    from ctxframe._ingest import extract, metrics

    def spans(caps: dict) -> tuple:
        return tuple(sorted((k, tuple((n.start_byte, n.end_byte) for n in v))
                            for k, v in caps.items()))  # fmt: skip

    lang = language_for(name)
    parser, alone, _roles = extract._compiled(lang.name)
    _, both, _, split = extract._compiled_walk(lang.name)
    root = parser.parse(source.encode()).root_node
    walked = [(p, spans(c)) for p, c in QueryCursor(both).matches(root)]
    assert split == alone.pattern_count and any(p >= split for p, _ in walked)
    assert [m for m in walked if m[0] < split] == [
        (p, spans(c)) for p, c in QueryCursor(alone).matches(root)
    ]
    own = QueryCursor(metrics.compiled(lang)).matches(root)
    assert Counter((p - split, c) for p, c in walked if p >= split) == Counter(
        (p, spans(c)) for p, c in own
    )


def test_a_python_class_has_no_metrics_but_its_decorators(tmp_path: Path) -> None:
    got = _metrics(
        tmp_path,
        "d.py",
        "@dataclass\nclass P:\n    @property\n    # a comment between\n    @functools.cache\n"
        "    def size(self):\n        return 1\n\n@app.route('/x', methods=['GET'])\ndef view():\n"
        "    return 1\n",
    )
    assert got["P"] == (None, None, None, "dataclass", None)
    assert got["P.size"] == (1, 0, 1, "property,functools.cache", None)
    assert got["view"] == (1, 0, 0, "app.route", None)


@pytest.mark.parametrize(("name", "source", "qual", "want"), [
    ("A.java", "class A { @Test @org.junit.Override public void m() {} }", "A.m",
     "Test,org.junit.Override"),
    ("a.rs", "#[test]\n#[should_panic]\nfn t() {}\n", "t", "test,should_panic"),
    ("a.ts", "class A {\n  @HostListener('click')\n  @Other\n  on(e) { return 1; }\n}\n", "A.on",
     "HostListener,Other"),
    ("a.cs", "class A { [Fact, Trait(\"a\",\"b\")] public void M() {} }", "A.M", "Fact,Trait"),
])  # fmt: skip
def test_decorators_per_language(tmp_path: Path, name, source, qual, want) -> None:
    assert _metrics(tmp_path, name, source)[qual][3] == want


@pytest.mark.parametrize(("name", "source", "want"), [
    ("u.py", "def f(x):\n    if x:\n        return 1\n        # done\n        print(x)\n"
             "    raise ValueError(x)\n    x += 1\n\n\ndef g(x):\n    return x\n",
     {"f": 5, "g": None}),
    ("u.js", "function f(x) {\n  return x;\n  helper();\n  function helper() {}\n}\n"
             "function g(x) {\n  return x;\n  function hoisted() {}\n}\n", {"f": 3, "g": None}),
    ("u.go", "package m\n\nfunc f(x int) int {\n\treturn x\n\tx++\n}\n", {"f": 5}),
])  # fmt: skip
def test_unreachable_statement(tmp_path: Path, name: str, source: str, want: dict) -> None:
    got = _metrics(tmp_path, name, source)
    assert {q: got[q][4] for q in want} == want


@pytest.mark.parametrize(("raw", "want"), [
    ("@app.route('/x')", "app.route"),
    ("#[tokio::test]", "tokio.test"),
    ("@ pytest . fixture(scope='module')", "pytest.fixture"),
    ("Fact", "Fact"),
])  # fmt: skip
def test_decorator_name(raw: str, want: str) -> None:
    assert decorator_name(raw) == want


def test_a_bad_metrics_query_costs_no_file(tmp_path: Path, monkeypatch) -> None:
    """Metrics are never worth a file: a language whose metrics query cannot compile still
    gets its definitions, only without metrics."""
    from ctxframe._ingest import extract, metrics

    def clear() -> None:
        metrics.compiled.cache_clear()
        extract._compiled_walk.cache_clear()

    clear()
    monkeypatch.setattr(metrics, "query_text", lambda stem: "(no_such_node) @scope")
    try:
        got = _metrics(tmp_path, "b.py", "def f(x):\n    return x\n")
    finally:
        clear()
    assert got == {"f": None}


def test_a_store_from_before_the_metrics_is_read_then_rebuilt(indexed_shop: Path) -> None:
    """Nodes written without the metric columns (schema 6) read with them null; the next
    index rebuilds the store whole, so unchanged files get their metrics too."""
    import json
    import os

    import polars as pl

    import ctxframe as cf
    from ctxframe._store import tables as _store

    store = indexed_shop / ".ctxframe" / "graph"
    version = store / os.readlink(store / "current")
    meta = json.loads((version / "meta.json").read_text())
    for part in sorted((version / "nodes").glob("part-*.parquet")):
        old = pl.read_parquet(part).drop(
            "cyclomatic", "nesting", "params", "decorators", "unreachable"
        )
        part.unlink()  # the part may be hard-linked from another version
        old.write_parquet(part)
        data = part.read_bytes()
        rel = f"nodes/{part.name}"
        meta["parts"][rel].update(size=len(data), sha256=_store.file_hash(data))
    meta["schema_version"] = 6
    (version / "meta.json").write_text(json.dumps(meta))
    old = cf.open(str(indexed_shop))
    assert old.nodes["cyclomatic"].null_count() == old.nodes.height
    report = cf.index(str(indexed_shop), progress=False).report
    assert report.mode == "full"
    new = cf.open(str(indexed_shop))
    card = new.nodes.filter(pl.col("id").str.ends_with("::PaymentRefundProcessor.ProcessRefund"))
    assert card["cyclomatic"].to_list() == [1] and card["params"].to_list() == [3]

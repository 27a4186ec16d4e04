"""Per-file extraction: read, hash, parse with tree-sitter, run the language's `.scm` query.

This module runs inside pool workers, so it imports no Polars: it returns plain columns
(dicts of lists) that the indexer turns into frames. Captures follow tree-sitter tags names:
`@definition.<kind>` with `@name`, `@reference.call` with `@name` and `@receiver`,
`@reference.extends|implements` with `@name`, `@reference.import` with `@import.*`.
"""

from __future__ import annotations

import bisect
import gc
import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import cache

from ctxframe._core import facts as F
from ctxframe._core.languages import BY_NAME, Language, language_for, query_source
from ctxframe._core.safeio import read_regular
from ctxframe._ingest import isolate, metrics
from ctxframe._ingest.boundaries.calls import (
    CALL_NAMES,
    INCLUDES,
    MOUNTS,
    ROUTE_KEYWORDS,
    ROUTERS,
)
from ctxframe._ingest.content import CONTENT_COLUMNS, own_text
from ctxframe._ingest.lang import ecmascript, others, python, python_facts, rust, sql
from ctxframe._ingest.metrics import METRIC_COLUMNS, NO_METRICS, measure

MAX_FILE_BYTES = 1_000_000
_SIG_CHARS = 200
_DOC_CHARS = 1000
_CLASS_LIKE = {"class", "struct", "interface", "enum", "trait"}
_SELF_NAMES = {"self", "cls", "this"}
_SCOPE_WORDS = {*_SELF_NAMES, "Self", "super", "super()"}  # receivers `_Builder._scope` reads
# Languages added after the foundation: comment node types that carry doc comments, siblings
# skipped between a doc comment and its definition, wrappers a doc comment sits above.
_COMMENT_TYPES = {"comment", "line_comment", "block_comment", "doc_comment"}
_SKIP_SIBLINGS = {"attribute_item", "inner_attribute_item"}
_WRAPPERS = ("export_statement", "decorator", "template_declaration")
_ANNOTATED = {"java", "csharp", "rust"}  # signatures skip leading @Annotation / [Attr] / #[attr]
_CPP_HINT = re.compile(
    rb"^[ \t]*(?:namespace\s+\w+\s*\{|template\s*<|class\s+\w+[^;\n]*\{|"
    rb"(?:public|private|protected)\s*:|#include\s*<(?:string|vector|memory|iostream|map)>)",
    re.MULTILINE,
)

DEF_COLUMNS = (
    "id", "kind", "label", "qualname", "language", "path",
    "line_start", "line_end", "signature", "doc", "parent",
)  # fmt: skip
# The definitions' columns as a batch holds them: the rows' own, then the function metrics
# (ctxframe._ingest.metrics), kept beside the rows by id.
DEF_FRAME_COLUMNS = DEF_COLUMNS + METRIC_COLUMNS
REF_COLUMNS = (
    "src", "path", "language", "kind", "name", "receiver", "scope", "line",
    "module", "alias", "candidates", "sub_candidates", "arg", "arg_name", "decorates",
)  # fmt: skip


@dataclass
class FileResult:
    """What one file yields: its row for files.parquet, its definitions and its raw references."""

    path: str
    language: str | None = None
    size: int = 0
    mtime_ns: int = 0
    lines: int = 0
    hash: str | None = None
    parse_errors: int = 0
    skip_reason: str | None = None
    defs: list[tuple] = field(default_factory=list)  # rows in DEF_COLUMNS order
    refs: list[tuple] = field(default_factory=list)  # rows in REF_COLUMNS order
    boundary_nodes: list[dict] = field(default_factory=list)  # manifests, k8s, env files…
    boundary_edges: list[dict] = field(default_factory=list)
    content: list[tuple] = field(default_factory=list)  # (node_id, own text): _ingest.content
    metrics: dict[str, tuple] = field(default_factory=dict)  # id -> METRIC_COLUMNS values


@dataclass
class Batch:
    """A worker's answer for many files: per-file facts, and definitions and references as
    columns (cheap to pickle and to turn into one frame)."""

    files: list[FileResult]
    defs: dict[str, list]
    refs: dict[str, list]
    boundary_nodes: list[dict] = field(default_factory=list)
    boundary_edges: list[dict] = field(default_factory=list)
    content: dict[str, list] = field(default_factory=dict)  # CONTENT_COLUMNS


_SEP, _NULL = "\0", "\x02"  # packed string columns: values joined by _SEP, None as _NULL


def _pack(col: list) -> list | tuple:
    """A column for the trip to the parent: a string column as one joined string (one object
    to pickle and one Polars split instead of a Python object per value), else the list."""
    n = len(col)
    if n == 0:
        return []
    try:  # every value a str (the common case): no None to count and replace
        blob = _SEP.join(col)
    except TypeError:
        pass
    else:
        return ("str", blob, False) if blob.count(_SEP) == n - 1 else col
    if col[0] is not None and not isinstance(col[0], str):
        return col
    nulls = col.count(None)
    if nulls == n:
        return ("null", n)
    first = col[0] if col[0] is not None else next(v for v in col if v is not None)
    if not isinstance(first, str):
        return col
    blob = _SEP.join([_NULL if v is None else v for v in col] if nulls else col)
    # A value holding the separator (or, with nulls, the null marker): send it plainly.
    if blob.count(_SEP) != n - 1 or (nulls and blob.count(_NULL) != nulls):
        return col
    return ("str", blob, nulls > 0)


def _add_rows(cols: list[list], rows: list[tuple]) -> None:
    """Append one file's rows to the batch's columns, while the rows are fresh in the cache
    (transposing them all at the end costs several times as much)."""
    if rows:
        for col, values in zip(cols, zip(*rows, strict=True), strict=True):
            col.extend(values)


def _columns(
    cols: list[list], names: tuple[str, ...], packed: bool = True
) -> dict[str, list | tuple]:
    return {c: _pack(col) if packed else col for c, col in zip(names, cols, strict=True)}


@cache
def _compiled(lang_name: str):
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language, get_parser

    lang = BY_NAME[lang_name]
    ts_lang = get_language(lang.grammar)
    source = query_source(lang.query)
    query = Query(ts_lang, source)
    return get_parser(lang.grammar), query, _pattern_roles(query, source)


@cache
def _compiled_walk(lang_name: str):
    """`_compiled`'s parser, query and roles, the query followed by the language's metrics
    patterns (those from the returned index on; None when it has none that compile): one
    walk of a tree answers both, and the walk is most of a query's cost. The extractor's
    query is not compiled on its own then: its patterns are the first ones of the two."""
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language, get_parser

    lang = BY_NAME[lang_name]
    extra = metrics.query_text(lang.query)
    if extra is None:
        return (*_compiled(lang_name), None)
    source = query_source(lang.query)
    both_source = source + "\n" + extra
    try:
        both = Query(get_language(lang.grammar), both_source)
    except Exception:  # the metrics patterns do not compile: the extractor's query alone
        return (*_compiled(lang_name), None)
    own = len(source.encode("utf-8"))
    split = sum(both.start_byte_for_pattern(i) < own for i in range(both.pattern_count))
    return get_parser(lang.grammar), both, _pattern_roles(both, both_source)[:split], split


@cache
def compiled_pack(grammar: str, query: str):
    """Parser and compiled query of a pack (cached per process)."""
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language, get_parser

    return get_parser(grammar), Query(get_language(grammar), query)  # type: ignore[arg-type]


_CAPTURE = re.compile(rb"@([^\s()\[\]\"]+)")


def _pattern_roles(query, source: str) -> list[tuple[str, bool, str] | None]:
    """Per pattern, its one role capture as (capture, is a definition, kind), or None where
    its text names none or several (then each match is scanned, see `_role_of`)."""
    text = source.encode("utf-8")
    out: list[tuple[str, bool, str] | None] = []
    for i in range(query.pattern_count):
        body = text[query.start_byte_for_pattern(i) : query.end_byte_for_pattern(i)]
        roles = {_role(m.decode("utf-8")) for m in _CAPTURE.findall(body)} - {None}
        out.append(roles.pop() if len(roles) == 1 else None)
    return out


def _role(capture: str) -> tuple[str, bool | None, str] | None:
    if capture.startswith("definition."):
        return capture, True, capture[11:]
    if capture.startswith("reference."):
        return capture, False, capture[10:]
    if capture.startswith("flow."):  # Python value-flow statements (python_facts)
        return capture, None, capture[5:]
    if capture == "typed.decl":  # a declared type (`_Builder._typed`)
        return capture, None, "typed"
    return None


def _role_of(caps: dict) -> tuple[str, bool, str] | None:
    """The first role capture of a match: (capture, is a definition, kind)."""
    return next((r for key in caps if (r := _role(key)) is not None), None)


_PACKS: dict = {}  # extension -> Pack, set by extract_batch for the packs of the indexed repo
_UNCHANGED = "\0unchanged"  # internal marker: same bytes as the stored version, not re-parsed


def extract_batch(
    root: str, jobs: list[tuple[str, str | None]], packs: tuple = (), packed: bool = True
) -> Batch:
    """Extract every (path, known hash) under root; never raises for a bad file.

    `packs` are user language packs (ctxframe._ingest.packs.Pack) for extensions no built-in owns.
    `packed` joins string columns for the trip out of a worker (see `_pack`)."""
    global _PACKS
    _PACKS = {ext: pack for pack in packs for ext in pack.language.extensions}
    # The rows built here hold no reference cycles, yet the collector would rescan them over
    # and over as they pile up (a tenth of the batch's time): pause it for the batch.
    collecting = gc.isenabled()
    gc.disable()
    try:
        files: list[FileResult] = []
        defs: list[list] = [[] for _ in DEF_COLUMNS]
        metric_cols: list[list] = [[] for _ in METRIC_COLUMNS]
        refs: list[list] = [[] for _ in REF_COLUMNS]
        bnodes: list[dict] = []
        bedges: list[dict] = []
        content: list[list] = [[] for _ in CONTENT_COLUMNS]
        for p, h in jobs:
            try:
                f = extract_file(root, p, h)
            except Exception as exc:  # one bad file is skipped with the reason, never fatal
                f = FileResult(path=p, skip_reason=isolate.skip_reason(exc))
            _add_rows(defs, f.defs)
            got = f.metrics
            _add_rows(metric_cols, [got.get(row[0], NO_METRICS) for row in f.defs])
            _add_rows(refs, f.refs)
            _add_rows(content, f.content)
            bnodes += f.boundary_nodes
            bedges += f.boundary_edges
            f.defs, f.refs, f.boundary_nodes, f.boundary_edges, f.content = [], [], [], [], []
            f.metrics = {}
            files.append(f)
        defs_cols = _columns(defs + metric_cols, DEF_FRAME_COLUMNS, packed)
        refs_cols = _columns(refs, REF_COLUMNS, packed)
        content_cols = _columns(content, CONTENT_COLUMNS, packed)
    finally:
        if collecting:
            gc.enable()
    return Batch(files, defs_cols, refs_cols, bnodes, bedges, content_cols)


def extract_file(root: str, path: str, known_hash: str | None = None) -> FileResult:
    """Read one file and extract its symbols; problems become a skip reason, not an exception."""
    res = FileResult(path=path)
    full = os.path.join(root, path)
    try:
        st = os.stat(full)
        res.size, res.mtime_ns = st.st_size, st.st_mtime_ns
        if st.st_size > MAX_FILE_BYTES:
            res.skip_reason = "too large (> 1 MB)"
            return res
        data = read_regular(full, MAX_FILE_BYTES + 1)  # a FIFO put in its place never blocks
    except FileNotFoundError:
        res.skip_reason = "vanished while reading"
        return res
    except OSError as exc:
        res.skip_reason = f"unreadable: {exc.strerror or exc}"
        return res
    if data.find(b"\0", 0, 8192) != -1:
        res.skip_reason = "binary"
        return res
    lang = language_for(path)
    pack = None
    if lang is None and _PACKS:
        pack = _PACKS.get(os.path.splitext(path)[1].lower())
        lang = pack.language if pack is not None else None
    try:
        if not data.isascii():  # ASCII is valid UTF-8: no need to decode it to know
            data.decode("utf-8")
    except UnicodeDecodeError:
        res.skip_reason = "invalid UTF-8"
        return res
    res.hash = hashlib.blake2b(data, digest_size=16).hexdigest()
    res.lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if known_hash is not None and res.hash == known_hash:
        res.skip_reason = _UNCHANGED
        return res
    if pack is None:
        lang = file_language(path, data)
    if lang is not None:
        res.language = lang.name
        if lang.family == "docs":
            from ctxframe._ingest.docs import extract_document

            extract_document(res, lang, data)
        else:
            _parse_into(res, lang, data, pack)
        res.content = own_text(res.defs, path, data)
    else:
        from ctxframe._ingest.boundaries.files import read_file

        res.boundary_nodes, res.boundary_edges = read_file(path, data.decode("utf-8"))
    return res


def file_language(path: str, data: bytes) -> Language | None:
    """The built-in language that extracts a file: by its name, a C++ header named .h by its
    bytes (the extraction cache keys on it too)."""
    lang = language_for(path)
    if lang is not None and lang.name == "c" and path.endswith(".h") and _CPP_HINT.search(data):
        return BY_NAME["cpp"]  # a C++ header named .h
    return lang


def _parse_into(res: FileResult, lang: Language, data: bytes, pack=None) -> None:
    if pack is not None:
        parser, query = compiled_pack(pack.grammar, pack.query)
        roles = _PACK_ROLES.get(query)
        if roles is None:
            roles = _PACK_ROLES[query] = _pattern_roles(query, pack.query)
        split = None
    else:
        parser, query, roles, split = _compiled_walk(lang.name)
    from tree_sitter import QueryCursor

    tree = parser.parse(data)
    root = tree.root_node
    if root.has_error:
        res.parse_errors = _count_errors(root)
    matches = QueryCursor(query).matches(root)
    measured = None  # the metrics patterns' matches, when they ran in the same walk
    if split is not None:
        measured = [m for m in matches if m[0] >= split]
        matches = [m for m in matches if m[0] < split]
    defs, refs, flows = _split_matches(matches, roles)
    if lang.name == "sql":
        defs.extend(sql.procedures(data, defs))
    python_ = pack is None and lang.name == "python"
    decorators = _has_decorators(parser.language)
    builder = _Builder(res, lang, data, python=python_, decorators=decorators)
    builder.build(defs, refs, flows)
    if pack is None:
        res.metrics = measure(lang, root, builder.items, builder.text, measured)
    if python_:
        _scripts(res, root, data)


_SCRIPT_REFS = frozenset({"call", "env", F.SITE})  # references whose `src` is the caller


def _scripts(res: FileResult, root, data: bytes) -> None:
    """A node of kind `script` for each `if __name__ == "__main__":` block, and the calls
    and reads in it made from that node instead of the file: they run when the file is
    executed, not when it is imported. Not a scope: names it binds stay the module's; its
    lines stay the file's text (no signature either: the ranker reads no words of it)."""
    blocks = python.script_blocks(root, data.decode("latin-1"))
    if not blocks:
        return
    path, taken, label = res.path, {d[0] for d in res.defs}, python.SCRIPT_LABEL
    spans = []
    for n, (start, end) in enumerate(blocks, 1):
        node_id = f"{path}::{label}" + (f"#{n}" if n > 1 else "")
        if node_id in taken:
            continue
        res.defs.append((node_id, "script", label, label, "python", path, start, end,
                         None, None, path))  # fmt: skip
        spans.append((start, end, node_id))
    refs = res.refs
    for i, row in enumerate(refs):
        if row[0] == path and row[3] in _SCRIPT_REFS and row[7] is not None:
            for start, end, node_id in spans:
                if start <= row[7] <= end:
                    refs[i] = (node_id, *row[1:])
                    break


@cache
def _has_decorators(ts_language) -> bool:
    """Whether a grammar has `decorator` nodes: only then can a call decorate a definition."""
    return ts_language.id_for_node_kind("decorator", True) is not None


_PACK_ROLES: dict = {}  # a pack's compiled query -> its `_pattern_roles`


def _split_matches(matches: list, roles: list) -> tuple[list[tuple], list[tuple], dict]:
    """(kind, captured node, captures) of each match with a role: definitions, references;
    and the value-flow statements' nodes by kind (`@flow.<kind>`)."""
    defs: list[tuple] = []
    refs: list[tuple] = []
    flows: dict[str, list] = {}
    add_def, add_ref = defs.append, refs.append
    for pattern, caps in matches:
        role = roles[pattern]
        if role is None or role[0] not in caps:
            role = _role_of(caps)
            if role is None:
                continue
        key, is_def, kind = role
        if is_def is None:
            flows.setdefault(kind, []).append(caps if kind == "typed" else caps[key][0])
            continue
        (add_def if is_def else add_ref)((kind, caps[key][0], caps))
    return defs, refs, flows


def _count_errors(node) -> int:
    count, cursor, stack = 0, None, [node]
    while stack:
        cursor = stack.pop()
        if cursor.is_error or cursor.is_missing:
            count += 1
        if cursor.has_error:
            stack.extend(cursor.children)
    return count


def _text(data: bytes, node) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _utf8(piece: str) -> str:
    """A slice of `_Builder.text` (a file read as Latin-1) as the UTF-8 it holds: what
    `_text` gives for the same bytes."""
    return piece if piece.isascii() else piece.encode("latin-1").decode("utf-8", "replace")


class _Builder:
    """Turns one file's query matches into definition rows and reference rows."""

    def __init__(
        self, res: FileResult, lang: Language, data: bytes, python: bool = False,
        decorators: bool = True,
    ):  # fmt: skip
        self.res, self.lang, self.data = res, lang, data
        # One character per byte, so byte offsets index it: slicing it is cheaper than slicing
        # and decoding the bytes, and only a non-ASCII file needs `_utf8` after.
        self.text, self.ascii = data.decode("latin-1"), data.isascii()
        self.annotated = lang.name in _ANNOTATED
        self.python = python  # the built-in Python grammar: decorators found from definitions
        self.decorators = decorators  # the grammar has decorator nodes (`_has_decorators`)

    def build(self, defs: list, refs: list, flows: dict | None = None) -> None:
        """`defs` and `refs` hold (kind, captured node, captures) per match; `flows` (Python)
        the value-flow statements' nodes by kind."""
        items = self.items = self._definitions(defs)
        self._emit_defs(items)
        self.decorations = python.decorations(items) if self.python else None
        self.recv_vars = any(item["recv_var"] for item in items)  # Go: `func (s *T) m()`
        facts = None
        if self.python and flows is not None:
            add = self.res.refs.append
            facts = python_facts.Facts(self.res.path, self.text, self.ascii, items, flows, add)
        self.typed = self._typed(flows.get("typed", ()), items) if flows else {}
        self._emit_refs(refs, items, facts)
        if facts is not None:
            facts.run()

    # -- definitions -------------------------------------------------------------------------
    def _definitions(self, defs: list) -> list[dict]:
        data, text, ascii, seen = self.data, self.text, self.ascii, {}
        for kind, node, caps in defs:
            start, end = node.start_byte, node.end_byte
            key = (start, end)
            rtype, rvar = caps.get("receiver.type"), caps.get("receiver.var")
            if key in seen and (rtype is None or seen[key]["recv_type"]):
                continue
            if "name" in caps:
                name_node = caps["name"][0]
                name = text[name_node.start_byte : name_node.end_byte]
            else:  # an anonymous function (Python lambda): numbered below
                name = "<lambda>"
            item = {
                "kind": kind,
                "node": node,
                "name": (name if ascii else _utf8(name)).replace("::", "."),
                "start": start,
                "end": end,
                "recv_type": _text(data, rtype[0]).replace("::", ".") if rtype else None,
                "recv_var": _text(data, rvar[0]) if rvar else None,
            }
            if node.type == "file_scoped_namespace_declaration":  # C#: covers the rest
                item["end"], item["end_row"] = len(self.data), self.res.lines - 1
            seen[key] = item
        items = sorted(seen.values(), key=lambda d: (d["start"], -d["end"]))
        stack: list[dict] = []
        lambdas: dict[int, int] = {}  # per enclosing definition (id of its item), as PyCG counts
        for item in items:
            while stack and stack[-1]["end"] <= item["start"]:
                stack.pop()
            item["parent"] = stack[-1] if stack else None
            stack.append(item)
            if item["kind"] == "lambda":
                n = lambdas[id(item["parent"])] = lambdas.get(id(item["parent"]), 0) + 1
                item["name"] = f"<lambda{n}>"
        return items

    def _emit_defs(self, items: list[dict]) -> None:
        path, rows = self.res.path, self.res.defs
        by_qual: dict[str, dict] = {}
        used: dict[str, int] = {}
        for item in items:
            parent = item["parent"]
            kind = item["kind"]
            if kind == "function" and parent is not None and parent["kind"] in _CLASS_LIKE:
                kind = "method"
            if item["recv_type"]:  # Go method: qualified by its receiver type
                # (C++ `ns { T::m }` and Rust `mod m { impl T }` prefix the enclosing scope.)
                rtype = f"{parent['qual']}.{item['recv_type']}" if parent else item["recv_type"]
                qual = f"{rtype}.{item['name']}"
                owner = by_qual.get(rtype)
                if kind == "method" and owner is not None and owner["kind"] == "namespace":
                    kind = "function"  # C++ `ns::f() {}`: a namespace, not a type
                parent = owner or parent
            else:
                qual = f"{parent['qual']}.{item['name']}" if parent else item["name"]
            item["kind"], item["qual"], item["out_parent"] = kind, qual, parent
            item["rtype"] = rtype if item["recv_type"] else None
            by_qual.setdefault(qual, item)
        # A declaration (C/C++ prototype) never takes the plain id from its definition.
        for item in sorted(items, key=lambda it: it["kind"] == "declaration"):
            qual = item["qual"]
            n = used.get(qual, 0) + 1
            used[qual] = n
            item["id"] = f"{path}::{qual}" if n == 1 else f"{path}::{qual}#{n}"
        lang_name, signature, doc, add = self.lang.name, self._signature, self._doc, rows.append
        for item in items:
            parent, node = item["out_parent"], item["node"]
            add(
                (
                    item["id"],
                    item["kind"],
                    item["name"],
                    item["qual"],
                    lang_name,
                    path,
                    node.start_point[0] + 1,
                    item.get("end_row", node.end_point[0]) + 1,
                    signature(node),
                    doc(node),
                    parent["id"] if parent else path,
                )
            )
        self.starts = [item["start"] for item in items]
        self.by_qual = by_qual

    def _signature(self, node) -> str:
        """The definition's first line (Java, C#, Rust: the first after its annotations and
        blank lines), read line by line from the bytes rather than decoding the whole body."""
        text, pos, end = self.text, node.start_byte, node.end_byte
        annotated = skipping = self.annotated
        while True:
            eol = text.find("\n", pos, end)
            line = text[pos : end if eol == -1 else eol]
            if not self.ascii:
                line = _utf8(line)
            if skipping and eol != -1 and line.lstrip().startswith(("@", "#[", "[")):
                pos = eol + 1
                continue
            skipping = False
            if annotated:
                line = line.lstrip()
            if line or eol == -1 or not annotated:
                if eol != -1 and _open_brackets(line) > 0:  # `def save_session(` and more lines
                    return _whole_header(line, text, eol + 1, end, self.ascii)
                return line.rstrip()[:_SIG_CHARS]
            pos = eol + 1

    def _doc(self, node) -> str | None:
        if self.lang.doc == "docstring":
            body = node.child_by_field_name("body")
            if body is not None and body.named_child_count:
                first = body.named_child(0)
                if first.type == "expression_statement" and first.named_child_count:
                    first = first.named_child(0)
                if first.type == "string":
                    return _clean_docstring(_text(self.data, first))
            return None
        if self.lang.doc == "none":
            return None
        anchor = node
        wrappers = _WRAPPERS + (("statement",) if self.lang.name == "sql" else ())
        while anchor.parent is not None and anchor.parent.type in wrappers:
            anchor = anchor.parent
        lines: list[str] = []
        prev, row = anchor.prev_named_sibling, anchor.start_point[0]
        while prev is not None and prev.type in _SKIP_SIBLINGS:
            prev, row = prev.prev_named_sibling, prev.start_point[0]
        while prev is not None and prev.type in _COMMENT_TYPES and prev.end_point[0] >= row - 1:
            lines.insert(0, _text(self.data, prev))
            row = prev.start_point[0]
            prev = prev.prev_named_sibling
        if lines and self.lang.name == "sql":
            return _clean_comment("\n".join(ln.lstrip().removeprefix("--") for ln in lines))
        return _clean_comment("\n".join(lines)) if lines else None

    # -- references ---------------------------------------------------------------------------
    def _enclosing(self, byte: int, items: list[dict]) -> dict | None:
        i = bisect.bisect_right(self.starts, byte) - 1
        item = items[i] if i >= 0 else None
        while item is not None and item["end"] <= byte:
            item = item["parent"]
        return item

    def _emit_refs(self, refs: list, items: list[dict], facts=None) -> None:
        """Reference rows in match order; calls, the bulk of them, are made here in one loop
        (`_reference` makes the rest). With Python `facts`, a call's `module` is the node of
        its value (ctxframe._core.facts)."""
        data, text, ascii = self.data, self.text, self.ascii
        path, lang_name, starts = self.res.path, self.lang.name, self.starts
        append, reference, scope_of = self.res.refs.append, self._reference, self._scope
        typed = self.typed
        decorations, recv_vars, bisect_right = self.decorations, self.recv_vars, bisect.bisect_right
        for kind, node, caps in refs:
            if kind in _NOT_CALLS:
                reference(kind, node, caps, items)
                continue
            # `reference.call`, and a pack's other kinds
            start = node.start_byte
            i = bisect_right(starts, start) - 1  # the enclosing definition
            owner = items[i] if i >= 0 else None
            while owner is not None and owner["end"] <= start:
                owner = owner["parent"]
            name_node = caps["name"][0]
            name = text[name_node.start_byte : name_node.end_byte]
            if not ascii:
                name = _utf8(name)
            receiver = caps.get("receiver")
            scope = None
            if receiver is not None:
                receiver = receiver[0]
                receiver = text[receiver.start_byte : receiver.end_byte]
                if not ascii:
                    receiver = _utf8(receiver)
                if owner is not None and (receiver in _SCOPE_WORDS or recv_vars):
                    scope, receiver = scope_of(owner, receiver)
                if scope is None and typed:
                    scope = self._receiver_type(owner, receiver)
                if len(receiver) > 120:
                    receiver = receiver[:120]
            # Only the boundary rules read a call's arguments, and only of calls with these names.
            arg, arg_name = _call_args(data, node, name) if name in CALL_NAMES else (None, None)
            if decorations is None:
                decorates = self._decorated(node, items) if self.decorators else None
            else:
                decorates = decorations.get((start, node.end_byte)) if decorations else None
            module, args = facts.site(node, owner, receiver, name) if facts else (None, None)
            append(
                (owner["id"] if owner else path, path, lang_name, "call", name, receiver, scope,
                 node.start_point[0] + 1, module, None, args, None, arg, arg_name, decorates)
            )  # fmt: skip

    def _typed(self, decls, items: list[dict]) -> dict[tuple[str | None, str], str]:
        """(enclosing definition's id, name) -> `type:T` / `typehint:T` for the variables,
        parameters and fields the language declares a type for (`.scm` `@typed.decl`)."""
        out: dict[tuple[str | None, str], str] = {}
        text = self.text
        for caps in decls:
            name = caps.get("typed.name")
            kind = next((k for k in ("type", "new", "hint", "call") if f"typed.{k}" in caps), None)
            if name is None or kind is None:
                continue
            node = caps[f"typed.{kind}"][0]
            raw = text[node.start_byte : node.end_byte]
            t = raw if kind == "call" else _type_name(raw if self.ascii else _utf8(raw))
            if not t or t == "var":  # Java/C# `var x = new T()`: the `new` pattern says T
                continue
            decl = caps["typed.decl"][0]
            owner = self._enclosing(decl.start_byte, items)
            if owner is not None and owner["start"] == decl.start_byte:
                owner = owner["parent"]  # a field's declaration captured as its own definition
            prefix = {"type": _TYPE, "new": "type:", "hint": "typehint:", "call": "typecall:"}[kind]
            var = text[name[0].start_byte : name[0].end_byte]
            value = prefix + t
            out.setdefault((owner["id"] if owner else None, var), value)
            if any(c.type == "accessibility_modifier" for c in decl.children):  # TS `private p: T`
                cls = owner["parent"] if owner is not None else None
                if cls is not None:
                    out.setdefault((cls["id"], var), value)
        self._type_prefix_fix(out)
        return out

    def _type_prefix_fix(self, out: dict) -> None:
        """Declared types count as bindings where the language checks them (Go, Java, C#,
        Rust), as hints elsewhere."""
        checked = self.lang.name in _STATIC_TYPES
        for k, v in out.items():
            if v.startswith(_TYPE):
                out[k] = ("type:" if checked else "typehint:") + v[len(_TYPE) :]

    def _receiver_type(self, owner: dict | None, receiver: str) -> str | None:
        """The declared type of a call's receiver: a variable or parameter of an enclosing
        definition, or a field (`x`, `this.x`, `self.x`, Go `r.x`) of the enclosing type."""
        head, _, field = receiver.partition(".")
        if not head.isidentifier() or (field and not field.isidentifier()):
            return None
        if not field:
            item = owner
            while item is not None:
                hit = self.typed.get((item["id"], head))
                if hit is not None:
                    return hit
                item = item["parent"]
            return self.typed.get((None, head))
        if head not in _SELF_NAMES and not (owner and owner.get("recv_var") == head):
            return None
        item = owner
        while item is not None and item["kind"] not in _CLASS_LIKE:
            if item.get("rtype"):  # Go: the receiver's struct, declared in this file
                struct = self.by_qual.get(item["rtype"])
                return self.typed.get((struct["id"], field)) if struct else None
            item = item["parent"]
        return self.typed.get((item["id"], field)) if item is not None else None

    def _scope(self, owner: dict, receiver: str) -> tuple[str | None, str]:
        """The class a call on `self`/`cls`/`this` (or a Go receiver, Rust `Self`) resolves in,
        and the receiver as stored (`super()` becomes `super`)."""
        method = owner
        while method is not None and method["kind"] != "method":
            method = method["parent"]
        if method is not None and (
            receiver in _SELF_NAMES
            or (method["recv_var"] and receiver == method["recv_var"])
            or (receiver == "Self" and self.lang.name == "rust")
        ):
            return method.get("rtype") or (method["parent"] or {}).get("qual"), receiver
        if method is not None and receiver in ("super()", "super") and method["parent"]:
            return method["parent"]["qual"], "super"
        return None, receiver

    def _reference(self, kind: str, node, caps: dict, items: list[dict]) -> None:
        if kind == "import":
            self._import(caps, node)
            return
        if kind == "reexport":
            self._reexport(caps, node)
            return
        if kind in ("extends", "implements"):
            owner = self._enclosing(caps["name"][0].start_byte, items)
            if "receiver.type" in caps:  # Rust `impl Trait for Type`: the type implements
                rtype = _text(self.data, caps["receiver.type"][0]).replace("::", ".")
                owner = self._enclosing(node.start_byte, items)
                owner = self.by_qual.get(f"{owner['qual']}.{rtype}" if owner else rtype)
            # Go: the struct/interface type node sits inside the declaration we captured.
            if owner is None or owner["kind"] not in _CLASS_LIKE:
                return
            text = _text(self.data, caps["name"][0])
            text = text.split("<", 1)[0].split("[", 1)[0].strip().replace("::", ".")
            receiver, _, name = text.rpartition(".")
            if self.lang.name == "csharp" and owner["kind"] != "interface":
                kind = "implements" if re.match(r"I[A-Z]", name) else "extends"
            self._ref(owner["id"], kind, name, receiver or None, None, node)
            return
        owner = self._enclosing(node.start_byte, items)
        name = _text(self.data, caps["name"][0])
        receiver = _text(self.data, caps["receiver"][0]) if "receiver" in caps else None
        if receiver is not None and owner is not None:
            receiver = self._scope(owner, receiver)[1]
        if receiver is not None and len(receiver) > 120:
            receiver = receiver[:120]
        # env: os.environ["X"], process.env.X: the name is the reference
        src = owner["id"] if owner else self.res.path
        self._ref(src, "env", _unquote(name), receiver, None, node)

    def _decorated(self, call, items: list[dict]) -> str | None:
        """Id of the definition a decorator call decorates (`@app.post(...)` over a def)."""
        parent = call.parent
        if parent is None or parent.type != "decorator" or parent.parent is None:
            return None
        target = parent.parent.child_by_field_name("definition")
        if target is None:
            return None
        item = next((it for it in items if it["start"] == target.start_byte), None)
        return item["id"] if item else None

    def _ref(
        self, src, kind, name, receiver, scope, node, module=None, alias=None, cands=(), sub=(),
        arg=None, arg_name=None, decorates=None,
    ):  # fmt: skip
        self.res.refs.append(
            (
                src,
                self.res.path,
                self.lang.name,
                kind,
                name,
                receiver,
                scope,
                node.start_point[0] + 1,
                module,
                alias,
                "\n".join(cands) or None,
                "\n".join(sub) or None,
                arg,
                arg_name,
                decorates,
            )
        )

    def _reexport(self, caps: dict, node) -> None:
        """`export * from "m"` (name `*`) and `export { a as b } from "m"` (name a, alias b):
        import rows whose `scope` is `export` — the resolver follows a name through them."""
        raw = _text(self.data, caps["import.module"][0])
        module, cands = ecmascript.candidates(raw.strip("'\""), self.res.path)
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        pairs: list[tuple[str, str | None]] = []
        if clause is None:
            pairs.append(("*", None))
        else:
            for spec in clause.named_children:
                if spec.type != "export_specifier":
                    continue
                name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                if name is not None:
                    pairs.append(
                        (_text(self.data, name), _text(self.data, alias) if alias else None)
                    )
        for name, alias in pairs:
            self._ref(self.res.path, "import", name, None, "export", node, module, alias, cands)

    def _import(self, caps: dict, node) -> None:
        raw = _text(self.data, caps["import.module"][0])
        name = _text(self.data, caps["import.name"][0]) if "import.name" in caps else None
        alias = _text(self.data, caps["import.alias"][0]) if "import.alias" in caps else None
        if "import.default" in caps:
            name, alias = "default", _text(self.data, caps["import.default"][0])
        fam = self.lang.family
        if fam == "python":
            module = python.absolute(raw, self.res.path)
            cands = python.candidates(module)
            sub = python.candidates(f"{module}.{name}") if name else ()
            if name is None and alias is None:
                alias = raw  # `import a.b` binds the dotted name itself
        elif fam == "js":
            module, cands = ecmascript.candidates(raw.strip("'\""), self.res.path)
            sub = ()
        elif fam == "go":  # resolved against go.mod files at resolution time
            module, cands, sub = raw.strip('"`'), (), ()
            if alias is None:
                alias = module.rsplit("/", 1)[-1]
        elif fam == "rust":
            if node.type == "mod_item":
                moddir = rust.module_dir(self.res.path)
                cands = (f"{moddir}{raw}.rs", f"{moddir}{raw}/mod.rs")
                self._ref(self.res.path, "import", None, None, None, node, raw, raw, cands)
                return
            for segs, local in rust.use_tree(raw):
                module, name, cands, sub = rust.candidates(segs, self.res.path)
                self._ref(
                    self.res.path, "import", name, None, None, node, module, local, cands, sub
                )
            return
        else:
            module, cands, sub = others.candidates(fam, raw, self.res.path, node)
            if fam == "java" and alias is None and not module.endswith(".*"):
                alias = module.rsplit(".", 1)[-1]
        self._ref(self.res.path, "import", name, None, None, node, module, alias, cands, sub)


_NOT_CALLS = frozenset({"import", "extends", "implements", "env", "reexport"})
_TYPE = "type!:"  # a declared type, until `_type_prefix_fix` says how far it binds
_STATIC_TYPES = {"go", "java", "csharp", "rust"}
_NOT_TYPES = re.compile(r"^(?:\[|map\[|func\b|chan\b|\(|impl\b|dyn\b|fn\b)")


def _type_name(text: str) -> str | None:
    """A declared type as a dotted name (`*store.Store` -> `store.Store`, `&mut Pantry` ->
    `Pantry`, `List<Item>` -> `List`, `crate::a::T` -> `crate.a.T`), or None for a type no
    method call resolves in (slices, maps, functions, tuples)."""
    t = text.strip()
    while t[:1] in ("&", "*"):
        t = t[1:].lstrip()
    for word in ("mut ", "ref ", "readonly ", "final ", "const "):
        if t.startswith(word):
            t = t[len(word) :].lstrip()
    if _NOT_TYPES.match(t):
        return None
    t = re.split(r"[<\[(]", t, maxsplit=1)[0].rstrip("?! ").replace("::", ".")
    return t if re.fullmatch(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*", t) else None


_STRINGS = {"string", "string_literal", "interpreted_string_literal", "raw_string_literal",
            "template_string", "verbatim_string_literal"}  # fmt: skip
_NAMES = {"identifier", "member_expression", "attribute", "selector_expression", "field_access"}


def _unquote(text: str) -> str:
    text = text.strip()
    if text[:1] in "\"'`" and text[-1:] == text[:1]:
        return text[1:-1]
    for prefix in ('r"', 'b"', 'f"', "r'", "b'", "f'", '@"'):
        if text.startswith(prefix) and text.endswith(text[len(prefix) - 1]):
            return text[len(prefix) : -1]
    return text


_ROUTER_NAMES = frozenset(n for _f, n, _k in ROUTERS)
_MOUNT_NAMES = frozenset(n for _f, n, _k, _r in MOUNTS)
_INCLUDE_NAMES = frozenset(n for _f, n in INCLUDES)
ROUTE_FACT = "\x1e"  # what follows a call's literal in `arg`: `\x1ekey=value` facts of routes


def _call_args(data: bytes, call, callee: str = "") -> tuple[str | None, str | None]:
    """The first string-literal argument (URL, env name, program, route) of a call, and the
    first argument after it that names something (an Express handler, a Django view). Calls
    that build routes (boundaries.calls: ROUTERS, MOUNTS, `methods=`) add their facts to the
    literal, each as `ROUTE_FACT key=value`: `var` (the name the call is assigned to), `obj`
    (a mounted router as written), `include` (a Django module), and their keywords."""
    args = call.child_by_field_name("arguments")
    if args is None:
        return None, None
    kids = [k.named_children[0] if k.type == "argument" and k.named_child_count else k
            for k in args.named_children[:4]]  # fmt: skip
    literal, name = None, None
    for k in kids:
        if literal is None and k.type in _STRINGS:
            text = _text(data, k)
            if k.type != "template_string" or "${" not in text:
                literal = _unquote(text)[:300]
        elif literal is not None and name is None and k.type in _NAMES:
            name = _text(data, k)[:120]
    if literal is None and kids and kids[0].type == "list":  # subprocess.run(["psql", ...])
        first = kids[0].named_children[0] if kids[0].named_child_count else None
        if first is not None and first.type in _STRINGS:
            literal = _unquote(_text(data, first))[:300]
    facts = _route_facts(data, call, callee, args) if callee else ""
    if facts:
        return (literal or "") + facts, name
    return literal, name


def _route_facts(data: bytes, call, callee: str, args) -> str:
    """`ROUTE_FACT`-led facts of a call that builds routes (see `_call_args`), else ""."""
    out = []
    for k in args.named_children:
        if k.type == "keyword_argument":  # Python: methods=("GET", "POST"), url_prefix="/a"
            key, value = k.child_by_field_name("name"), k.child_by_field_name("value")
            key = _text(data, key) if key is not None else ""
            if key in ROUTE_KEYWORDS and value is not None and (lit := _literals(data, value)):
                out.append(f"{key}={lit}")
        elif (  # app.register_blueprint(auth.bp), app.use("/api", router)
            callee in _MOUNT_NAMES
            and k.type in _NAMES
            and not any(f.startswith("obj=") for f in out)
        ):
            out.append(f"obj={_text(data, k)[:120]}")
        if k.type in ("call", "call_expression"):  # path("polls/", include("polls.urls"))
            fn = k.child_by_field_name("function")
            inner = k.child_by_field_name("arguments")
            if fn is not None and _text(data, fn) in _INCLUDE_NAMES and inner is not None:
                first = inner.named_children[0] if inner.named_child_count else None
                if first is not None and first.type in _STRINGS:
                    out.append(f"include={_unquote(_text(data, first))[:200]}")
    if callee in _ROUTER_NAMES:  # bp = Blueprint(...), const router = express.Router()
        parent = call.parent
        target = None
        if parent is not None and parent.type == "assignment":
            target = parent.child_by_field_name("left")
        elif parent is not None and parent.type == "variable_declarator":
            target = parent.child_by_field_name("name")
        if target is not None and target.type == "identifier":
            out.append(f"var={_text(data, target)}")
    return "".join(ROUTE_FACT + f for f in out if ROUTE_FACT not in f)


def _literals(data: bytes, node) -> str | None:
    """A string literal, or a tuple/list/set of them, as text (`GET,POST`); else None."""
    if node.type in _STRINGS:
        return _unquote(_text(data, node))[:200]
    if node.type in ("tuple", "list", "set", "array"):
        parts = [_unquote(_text(data, c)) for c in node.named_children if c.type in _STRINGS]
        if parts and len(parts) == node.named_child_count:
            return ",".join(parts)[:200]
    return None


_STRING_LITERAL = re.compile(r"""("|')(?:\\.|(?!\1).)*\1""")


def _open_brackets(line: str) -> int:
    """How many `(` and `[` a line leaves open (string literals skipped)."""
    line = _STRING_LITERAL.sub("", line)
    return line.count("(") + line.count("[") - line.count(")") - line.count("]")


def _whole_header(first: str, text: str, pos: int, end: int, ascii: bool) -> str:
    """A declaration written over several lines, on one line: the lines after `first` until its
    brackets close (at most `_SIG_CHARS` characters), white space folded."""
    parts, depth = [first.rstrip()], _open_brackets(first)
    while depth > 0 and pos < end and sum(map(len, parts)) < _SIG_CHARS:
        eol = text.find("\n", pos, end)
        line = text[pos : end if eol == -1 else eol]
        if not ascii:
            line = _utf8(line)
        parts.append(line.strip())
        depth += _open_brackets(line)
        if eol == -1:
            break
        pos = eol + 1
    sig = " ".join(p for p in parts if p)
    sig = re.sub(r"([(\[])\s+", r"\1", sig)
    sig = re.sub(r",?\s+([)\]])", r"\1", sig)
    return sig[:_SIG_CHARS]


def _clean_docstring(s: str) -> str:
    for q in ('"""', "'''", '"', "'"):
        if s.endswith(q):
            start = s.find(q)
            s = s[start + len(q) : len(s) - len(q)]
            break
    lines = [ln.strip() for ln in s.strip().splitlines()]
    return "\n".join(lines)[:_DOC_CHARS] or None


def _clean_comment(s: str) -> str | None:
    out = []
    for ln in s.splitlines():
        ln = ln.strip()
        for prefix in ("/**", "/*", "*/", "///", "//", "*"):
            if ln.startswith(prefix):
                ln = ln[len(prefix) :]
                break
        ln = ln.removesuffix("*/").strip()
        if ln:
            out.append(ln)
    return "\n".join(out)[:_DOC_CHARS] or None

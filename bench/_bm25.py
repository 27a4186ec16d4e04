"""Standalone Okapi BM25 baselines for the eval scripts (not ctxframe rules).

Two systems, each with two tokenizers, scored beside ctxframe's rules by ``short_eval.py`` and
``swebench_eval.py``:

* ``bm25-file-*`` — one document per file: the file's path plus its whole text. The files are
  the source files ctxframe indexed (``g.files`` with no ``skip_reason`` whose ``language`` is a
  programming language: not null, not ``markdown`` or ``rst``); the system returns files. Docs
  are left out on purpose: issue texts share their prose ("to reproduce", "expected behavior",
  "environment"), and with ``.rst``/``.md`` files in the corpus a README or CONTRIBUTING page
  tops most Sphinx and many Django issues (SWE-bench dev file Acc@1 21.0 with docs, against
  the code-only figure in docs/ranking.md) — a weaker baseline than the field's.
* ``*-src`` variants (``bm25-file-plain-src``, ``bm25-symbol-plain-src``) leave test files out
  of the corpus (``is_test_path``: a ``test``/``tests``/``testing`` folder, ``test_*.py``,
  ``*_test(s).py``, ``tests.py``, ``conftest.py``). SWE-bench gold files are never tests (the
  test patch is separate) while issue texts quote test-like code, so test files are the main
  distractors of a whole-file ranker; ctxframe itself halves test nodes' scores unless the
  question asks about tests. On short_dev the ``-src`` variants cannot answer category d.
* ``bm25-symbol-*`` — one document per Python symbol, defined exactly as
  ``../shared/eval/short_dev/baseline_bm25.py`` defines it: module-level functions and classes,
  methods, nested classes and their methods, including definitions inside module/class-level
  ``if``/``try`` blocks (functions nested in functions are not symbols); definitions sharing a
  qualified name in one file (overloads, property setters) are merged into one document. The
  document is the qualified name split on ``_``, ``.`` and camelCase plus the source text from
  the first decorator line to the end of the definition (a class's text holds its methods). The
  ``.py`` files are those of ``g.files`` (as above); a file ``ast`` cannot parse (Python 2 code
  in old releases) gives no symbols and is counted. Ids are ctxframe-style ``path::Qual.name``.

Tokenizers (query and documents alike; the query's distinct terms each count once):

* ``plain`` (short_dev's): lowercase the text, then maximal runs of ``[a-z0-9]``. ``AsyncClient``
  is one token ``asyncclient``; ``_redirect_method`` is ``redirect``, ``method``.
* ``ident``: maximal runs of ``[A-Za-z0-9]`` in the original text, each cut at camelCase
  boundaries by ``[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+`` (the regex short_dev uses for
  qualified names), then lowercased: ``HTTPStatusError`` -> ``http status error``,
  ``getResponse2`` -> ``get response 2``; snake_case splits on ``_`` as in ``plain``.

Scoring: k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)); documents with a positive
score are ranked by score, ties in document order (path, then line) — short_dev's rule.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

K1, B = 1.2, 0.75
TOKEN_RE = re.compile(r"[a-z0-9]+")
WORD_RE = re.compile(r"[A-Za-z0-9]+")
CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
TOKENIZERS = ("plain", "ident")
SYSTEMS = (
    "bm25-file-plain",
    "bm25-file-ident",
    "bm25-file-plain-src",
    "bm25-symbol-plain",
    "bm25-symbol-ident",
    "bm25-symbol-plain-src",
)
# test code (left out by the ``-src`` variants): a folder named test/tests/testing, test_*.py,
# *_test.py, *_tests.py, tests.py, conftest.py
TEST_PATH_RE = re.compile(
    r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_tests?\.py$|(^|/)(tests|conftest)\.py$"
)


def is_test_path(path: str) -> bool:
    """True for a test file by its path (see ``TEST_PATH_RE``)."""
    return TEST_PATH_RE.search(path) is not None


def tokens_plain(text: str) -> list[str]:
    """short_dev's tokenizer: lowercase, then runs of ``[a-z0-9]``."""
    return TOKEN_RE.findall(text.lower())


def tokens_ident(text: str) -> list[str]:
    """Identifier splitting: camelCase and snake_case parts, lowercased."""
    out: list[str] = []
    for word in WORD_RE.findall(text):
        if word.isdigit() or (word.isalpha() and word.islower()):
            out.append(word)  # nothing to split (a fast path)
        else:
            out.extend(w.lower() for w in CAMEL_RE.findall(word))
    return out


def tokenizer(name: str):
    """The tokenizer function called ``name`` (``plain`` or ``ident``)."""
    return {"plain": tokens_plain, "ident": tokens_ident}[name]


def name_tokens(qualname: str) -> list[str]:
    """short_dev's qualified-name tokens: split on ``_`` and ``.``, then camelCase, lowercased."""
    out = []
    for part in re.split(r"[._]+", qualname):
        out.extend(w.lower() for w in CAMEL_RE.findall(part))
    return out


def parse_system(name: str) -> tuple[str, str, bool] | None:
    """``(unit, tokenizer, src_only)`` of a baseline name ``bm25-UNIT-TOK[-src]`` (unit
    ``file`` or ``symbol``; ``-src``: test files left out), None for anything else."""
    parts = name.split("-")
    src = len(parts) == 4 and parts[3] == "src"
    if (
        len(parts) in (3, 4)
        and (len(parts) == 3 or src)
        and parts[0] == "bm25"
        and parts[1] in ("file", "symbol")
        and parts[2] in TOKENIZERS
    ):
        return parts[1], parts[2], src
    return None


# --------------------------------------------------------------------------- the index


class BM25:
    """Okapi BM25 over token lists, with an inverted index (numpy postings)."""

    def __init__(self, docs: Sequence[Sequence[str]]) -> None:
        self.n = len(docs)
        lengths = np.array([len(d) for d in docs], dtype=np.float64)
        self.avgdl = float(lengths.mean()) if self.n else 0.0
        self.norm = K1 * (1 - B + B * lengths / (self.avgdl or 1.0))
        posting_docs: dict[str, list[int]] = {}
        posting_tf: dict[str, list[int]] = {}
        for i, toks in enumerate(docs):
            for t, f in Counter(toks).items():
                posting_docs.setdefault(t, []).append(i)
                posting_tf.setdefault(t, []).append(f)
        self.postings = {
            t: (np.array(d, dtype=np.int64), np.array(posting_tf[t], dtype=np.float64))
            for t, d in posting_docs.items()
        }
        self.idf = {
            t: math.log(1 + (self.n - len(d) + 0.5) / (len(d) + 0.5))
            for t, d in posting_docs.items()
        }

    def search(self, query_tokens: Iterable[str]) -> np.ndarray:
        """Indices of the documents with a positive score, best first (ties: document order)."""
        scores = np.zeros(self.n, dtype=np.float64)
        for t in sorted(set(query_tokens)):
            post = self.postings.get(t)
            if post is None:
                continue
            d, f = post
            scores[d] += self.idf[t] * f * (K1 + 1) / (f + self.norm[d])
        hit = np.flatnonzero(scores > 0)
        return hit[np.argsort(-scores[hit], kind="stable")]


# --------------------------------------------------------------------------- documents


def python_symbols(src: str) -> list[tuple[str, str, int, int, str]]:
    """``(qualname, kind, start, end, text)`` of every symbol of a Python source (short_dev's
    definition; ``kind`` is ``class`` or ``function``). Raises ``SyntaxError`` and friends."""
    tree = ast.parse(src)
    lines = src.splitlines()
    found: list[tuple[str, str, int, int]] = []

    def walk(body, prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                start = min([d.lineno for d in node.decorator_list] + [node.lineno])
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                qual = prefix + node.name
                found.append((qual, kind, start, node.end_lineno or node.lineno))
                if kind == "class":
                    walk(node.body, qual + ".")
            elif isinstance(node, ast.If):
                walk(node.body, prefix)
                walk(node.orelse, prefix)
            elif isinstance(node, ast.Try):
                walk(node.body, prefix)
                for handler in node.handlers:
                    walk(handler.body, prefix)
                walk(node.orelse, prefix)
                walk(node.finalbody, prefix)

    walk(tree.body, "")
    return [(q, k, s, e, "\n".join(lines[s - 1 : e])) for q, k, s, e in found]


def read_text(path: Path) -> str | None:
    """A file's text (UTF-8, undecodable bytes replaced), or None when unreadable."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


DOC_LANGUAGES = ("markdown", "rst")


def indexed_files(graph, *, docs: bool = False) -> list[str]:
    """Source files ctxframe indexed (sorted), from the public ``g.files``: a language it
    parses, and (unless ``docs``) not a Markdown/reST document."""
    import polars as pl

    files = graph.files.filter(pl.col("skip_reason").is_null() & pl.col("language").is_not_null())
    if not docs:
        files = files.filter(~pl.col("language").is_in(list(DOC_LANGUAGES)))
    return sorted(files["path"].to_list())


@dataclass
class Corpus:
    """One repository's BM25 documents and index for one unit and tokenizer."""

    unit: str  # "file" or "symbol"
    tok: str
    ids: list[str]  # file paths, or "path::Qual.name"
    paths: list[str]
    kinds: list[str]  # "file", "class" or "function"
    index: BM25
    unparsed: list[str] = field(default_factory=list)  # .py files ast could not parse

    def search(self, text: str, limit: int | None = None) -> list[int]:
        """Document indices for a query text, best first."""
        hits = self.index.search(tokenizer(self.tok)(text))
        return (hits if limit is None else hits[:limit]).tolist()

    @cached_property
    def kind_of(self) -> dict[str, str]:
        """``{id: kind}``."""
        return dict(zip(self.ids, self.kinds, strict=True))


def file_corpus(root: Path, paths: Sequence[str], tok: str) -> Corpus:
    """Documents = path + whole text of every file in ``paths`` (order: path)."""
    fn = tokenizer(tok)
    ids, docs = [], []
    for p in sorted(paths):
        text = read_text(root / p)
        if text is None:
            continue
        ids.append(p)
        docs.append(fn(p) + fn(text))
    return Corpus("file", tok, ids, list(ids), ["file"] * len(ids), BM25(docs))


def symbol_documents(root: Path, paths: Sequence[str]):
    """``(id, kind, path, line, text)`` per symbol of the ``.py`` files and the unparsable
    files; merged per id (overloads), ordered by path then line."""
    docs: dict[str, list] = {}
    unparsed = []
    for p in sorted(x for x in paths if x.endswith(".py")):
        text = read_text(root / p)
        if text is None:
            unparsed.append(p)
            continue
        try:
            syms = python_symbols(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            unparsed.append(p)
            continue
        for qual, kind, start, _end, body in syms:
            sid = f"{p}::{qual}"
            if sid in docs:
                docs[sid][3] += "\n" + body
            else:
                docs[sid] = [kind, p, start, body]
    order = sorted(docs, key=lambda s: (docs[s][1], docs[s][2]))
    return [(s, *docs[s]) for s in order], unparsed


def symbol_corpus(root: Path, paths: Sequence[str], tok: str, documents=None) -> Corpus:
    """Documents = qualified-name tokens + source text of every Python symbol."""
    fn = tokenizer(tok)
    rows, unparsed = documents if documents is not None else symbol_documents(root, paths)
    ids, kinds, fpaths, docs = [], [], [], []
    for sid, kind, path, _line, text in rows:
        qual = sid.split("::", 1)[1]
        ids.append(sid)
        kinds.append(kind)
        fpaths.append(path)
        docs.append(name_tokens(qual) + fn(text))
    return Corpus("symbol", tok, ids, fpaths, kinds, BM25(docs), unparsed)


def corpora(root: Path, graph, systems: Iterable[str]) -> dict[str, Corpus]:
    """The corpora the named baseline systems need, built once per repository."""
    wanted = [(s, parse_system(s)) for s in systems]
    wanted = [(s, p) for s, p in wanted if p]
    out: dict[str, Corpus] = {}
    if not wanted:
        return out
    paths = indexed_files(graph)
    sym_docs = None
    for name, (unit, tok, src) in wanted:
        use = [p for p in paths if not is_test_path(p)] if src else paths
        if unit == "file":
            out[name] = file_corpus(root, use, tok)
        else:
            if sym_docs is None:
                sym_docs = symbol_documents(root, paths)
            docs = sym_docs
            if src:
                docs = ([r for r in sym_docs[0] if not is_test_path(r[2])], sym_docs[1])
            out[name] = symbol_corpus(root, use, tok, docs)
    return out

"""Registry of embedded languages: file extensions, tree-sitter grammar, query file, family."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Language:
    """One embedded language: how files are recognised and which grammar and query parse them."""

    name: str
    grammar: str
    query: str  # stem of ctxframe/queries/<query>.scm
    extensions: tuple[str, ...]
    family: str  # calls resolve only within a family (js and ts share one)
    doc: str  # "docstring" (first string in the body) or "comment" (comments just above)


LANGUAGES: tuple[Language, ...] = (
    Language("python", "python", "python", (".py", ".pyi"), "python", "docstring"),
    Language(
        "javascript", "javascript", "javascript", (".js", ".jsx", ".mjs", ".cjs"), "js", "comment"
    ),
    Language("typescript", "typescript", "typescript", (".ts", ".mts", ".cts"), "js", "comment"),
    Language("tsx", "tsx", "typescript", (".tsx",), "js", "comment"),
    Language("go", "go", "go", (".go",), "go", "comment"),
    Language("java", "java", "java", (".java",), "java", "comment"),
    Language("c", "c", "c", (".c", ".h"), "c", "comment"),  # C and C++ share one family
    Language(
        "cpp",
        "cpp",
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp", ".inl"),
        "c",
        "comment",
    ),
    Language("csharp", "csharp", "csharp", (".cs",), "csharp", "comment"),
    Language("rust", "rust", "rust", (".rs",), "rust", "comment"),
    Language("zig", "zig", "zig", (".zig",), "zig", "comment"),
    Language("sql", "sql", "sql", (".sql",), "sql", "comment"),
    # Documents: headings become sections by a line scanner (ctxframe/_docs.py), no query.
    Language("markdown", "markdown", "", (".md", ".markdown"), "docs", "none"),
    Language("rst", "rst", "", (".rst",), "docs", "none"),
)

BY_NAME = {lang.name: lang for lang in LANGUAGES}
_BY_EXT = {ext: lang for lang in LANGUAGES for ext in lang.extensions}


def language_for(path: str) -> Language | None:
    """The embedded language that parses `path`, by extension; None when there is none.
    (String operations, not PurePosixPath: this runs once per file of the repository.)"""
    name = path.rpartition("/")[2]
    if name.endswith(".d.ts"):
        return _BY_EXT[".ts"]
    dot = name.rfind(".")
    if dot <= 0 or dot == len(name) - 1:  # no suffix: `Makefile`, `.bashrc`, `a.`
        return None
    return _BY_EXT.get(name[dot:].lower())


@cache
def query_source(query: str) -> str:
    """Text of the packaged `.scm` query file `queries/<query>.scm`, after the text of every
    file it names in a `; inherits: a, b` line (the nvim-treesitter convention)."""
    text = resources.files("ctxframe").joinpath("queries", f"{query}.scm").read_text("utf-8")
    parents = re.findall(r"^;\s*inherits:\s*(.+)$", text, flags=re.MULTILINE)
    names = [n.strip() for line in parents for n in line.split(",") if n.strip()]
    return "".join(query_source(n) + "\n" for n in names) + text

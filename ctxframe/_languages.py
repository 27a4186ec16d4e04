"""Registry of embedded languages: file extensions, tree-sitter grammar, query file, family."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import PurePosixPath


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
)

BY_NAME = {lang.name: lang for lang in LANGUAGES}
_BY_EXT = {ext: lang for lang in LANGUAGES for ext in lang.extensions}


def language_for(path: str) -> Language | None:
    """The embedded language that parses `path`, by extension; None when there is none."""
    name = PurePosixPath(path).name
    if name.endswith(".d.ts"):
        return _BY_EXT[".ts"]
    return _BY_EXT.get(PurePosixPath(name).suffix.lower())


@cache
def query_source(query: str) -> str:
    """Text of the packaged `.scm` query file `queries/<query>.scm`."""
    return (
        resources.files("ctxframe").joinpath("queries").joinpath(f"{query}.scm").read_text("utf-8")
    )

"""What every audit section reads: the graph's frames and what is derived from them once per
audit (modules, packages, definitions, the text of the repository's files), built lazily."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import polars as pl

from ctxframe._audit.config import AuditConfig
from ctxframe._audit.modules import auto_depth, fold, modules
from ctxframe._core.paths import glob_to_regex, is_test_path_expr

# definitions the audit judges (dead code, complexity, risk): code, not documents or boundaries
DEFINITION_KINDS = ("function", "method", "class", "struct", "interface", "enum", "trait")
FUNCTION_KINDS = ("function", "method")
# edges that make a definition used (`contains` and doc `mentions` do not)
USE_KINDS = ("calls", "imports", "extends", "implements", "handles", "reads", "uses",
             "declares", "covers")  # fmt: skip
TEST_DEPTH = 6  # calls from a test this deep still test (`change-plan`'s rule)
_MAX_TEXT_BYTES = 1_000_000


class Reach(Protocol):
    """A traversal over the graph's node rows (ctxframe._graph.traverse.Traversal)."""

    ids: pl.Series

    def reach(self, start: list[int], *, reverse: bool, depth: int, **kw) -> pl.DataFrame: ...


@dataclass
class AuditInput:
    """The frames an audit reads. `coverage` is the measured per-function coverage (columns
    id, lines, covered, share, stale) when the index read coverage data; `traversal` walks
    the calls (built from the frames when not given); `refs` gives the raw references
    (imports with the names they bind) when the store has them; `extra` holds frames other
    sections read (history); `memo(name, build)` keeps what is costly to derive with the
    index version (the word table: the working tree's text as the first audit of a version
    read it)."""

    nodes: pl.DataFrame
    edges: pl.DataFrame
    files: pl.DataFrame
    root: str | None = None
    config: AuditConfig = field(default_factory=AuditConfig)
    coverage: pl.DataFrame | None = None
    traversal: Reach | None = None
    # the graph's test reach (ctxframe._graph.testreach.TestReach, or a callable giving it):
    # `pairs` (row, t) over the rows of `nodes`
    test_reach: Any = None
    refs: Any = None  # a callable returning the refs frame, or the frame, or None
    extra: dict[str, Any] = field(default_factory=dict)
    # memo(name, build): a frame kept with the graph's version (built by `build()` once)
    memo: Any = None


class Facts:
    """The audit's shared, lazily derived tables (each built once)."""

    def __init__(self, given: AuditInput):
        self.input = given
        self.config = given.config
        nodes, edges, files = given.nodes, given.edges, given.files
        if self.config.exclude:
            rx = "|".join(f"(?:{glob_to_regex(g)})" for g in self.config.exclude)
            out = pl.col("path").fill_null("").str.contains(rx)
            nodes, files = nodes.filter(~out), files.filter(~out)
            edges = edges.filter(~out)
        self.nodes, self.edges, self.files = nodes, edges, files
        self.root = given.root if given.root and os.path.isdir(given.root) else None
        self.notes: list[str] = []

    # -- modules and packages -----------------------------------------------------------------
    @cached_property
    def modules(self) -> pl.DataFrame:
        """path, language, lines, module, parent, python, is_test, package (folded)."""
        imports = self.edges.filter(pl.col("kind") == "imports").select("dst", "name")
        mods = modules(self.files, imports)
        return mods.with_columns(package=fold(pl.col("parent"), pl.col("python"), self.depth(mods)))

    def depth(self, mods: pl.DataFrame | None = None) -> int:
        if self.config.package_depth:
            return self.config.package_depth
        if "_depth" not in self.__dict__:
            self.__dict__["_depth"] = auto_depth(mods if mods is not None else self.modules)
        return self.__dict__["_depth"]

    @cached_property
    def file_info(self) -> pl.DataFrame:
        """path -> module, package, is_test (for joins)."""
        return self.modules.select("path", "module", "package", "is_test", "language")

    # -- definitions --------------------------------------------------------------------------
    @cached_property
    def definitions(self) -> pl.DataFrame:
        """The code's definitions with their place and metrics: id, kind, label, qualname,
        path, line_start, line_end, parent, parent_kind, language, cyclomatic, nesting,
        params, decorators, lines, module, package, is_test."""
        defs = self.nodes.filter(
            pl.col("kind").is_in(DEFINITION_KINDS)
            & pl.col("transport").is_null()
            & pl.col("path").is_not_null()
        )
        kinds = self.nodes.select(parent="id", parent_kind="kind")
        return (
            defs.join(kinds, on="parent", how="left")
            .join(self.file_info.drop("language"), on="path", how="left")
            .with_columns(
                lines=(pl.col("line_end") - pl.col("line_start") + 1).cast(pl.Int32),
                is_test=pl.col("is_test").fill_null(False) | is_test_path_expr("path"),
                package=pl.col("package").fill_null("."),
            )
            .select(
                "id",
                "kind",
                "label",
                "qualname",
                "path",
                "line_start",
                "line_end",
                "parent",
                "parent_kind",
                "language",
                "cyclomatic",
                "nesting",
                "params",
                "decorators",
                "lines",
                "module",
                "package",
                "is_test",
            )
        )

    @cached_property
    def functions(self) -> pl.DataFrame:
        """The definitions that are functions or methods."""
        return self.definitions.filter(pl.col("kind").is_in(FUNCTION_KINDS))

    # -- dependencies -------------------------------------------------------------------------
    @cached_property
    def file_imports(self) -> pl.DataFrame:
        """Import edges between two indexed files: src, dst (paths), path, line, name."""
        known = self.modules["path"].implode()
        return self.edges.filter(
            (pl.col("kind") == "imports")
            & pl.col("src").is_in(known)
            & pl.col("dst").is_in(known)
            & (pl.col("src") != pl.col("dst"))
        ).select("src", "dst", "path", "line", "name")

    @cached_property
    def file_calls(self) -> pl.DataFrame:
        """Resolved calls (not AMBIGUOUS) from one file's code into another's: src, dst (paths),
        path, line."""
        where = self.nodes.select("id", p="path")
        return (
            self.edges.filter(
                (pl.col("kind") == "calls")
                & pl.col("dst").is_not_null()
                & (pl.col("confidence") != "AMBIGUOUS")
            )
            .join(where.rename({"id": "src", "p": "sp"}), on="src")
            .join(where.rename({"id": "dst", "p": "dp"}), on="dst")
            .filter(pl.col("sp") != pl.col("dp"))
            .select(src="sp", dst="dp", path="path", line="line")
        )

    # -- use of definitions --------------------------------------------------------------------
    @cached_property
    def inbound(self) -> pl.DataFrame:
        """Per definition id: edges into it from another node (by kind and confidence):
        id, sure (EXTRACTED/INFERRED uses), ambiguous (AMBIGUOUS uses)."""
        e = self.edges.filter(
            pl.col("kind").is_in(USE_KINDS)
            & pl.col("dst").is_not_null()
            & (pl.col("src") != pl.col("dst"))
        )
        return e.group_by(pl.col("dst").alias("id")).agg(
            sure=(pl.col("confidence") != "AMBIGUOUS").sum().cast(pl.Int32),
            ambiguous=(pl.col("confidence") == "AMBIGUOUS").sum().cast(pl.Int32),
        )

    @cached_property
    def unresolved_calls(self) -> pl.DataFrame:
        """Per callee name as written: calls that resolved to nothing (name, n)."""
        return (
            self.edges.filter((pl.col("kind") == "calls") & pl.col("dst").is_null())
            .group_by("name")
            .agg(n=pl.len().cast(pl.Int32))
        )

    # -- text ----------------------------------------------------------------------------------
    @cached_property
    def texts(self) -> pl.DataFrame | None:
        """path, text, code (a file with a parser) of every indexed file under 1 MB, read from
        the working tree; None when the repository is not on this machine."""
        if self.root is None:
            self.notes.append("the repository is not here: names were not searched in its text")
            return None
        indexed = self.files.filter(pl.col("skip_reason").is_null())
        paths, texts = [], []
        for path in indexed["path"]:
            try:
                with open(os.path.join(self.root, path), "rb") as fh:
                    data = fh.read(_MAX_TEXT_BYTES + 1)
            except OSError:
                continue
            if len(data) <= _MAX_TEXT_BYTES:
                paths.append(path)
                texts.append(data.decode("utf-8", "replace"))
        docs = pl.col("language").is_in(["markdown", "rst"]).fill_null(False) | pl.col(
            "path"
        ).str.contains(
            r"(?i)\.(?:txt|rst|md|markdown|adoc|rdoc)$|(?:^|/)(?:README|CHANGE|HISTORY|NEWS)"
        )
        return pl.DataFrame({"path": paths, "text": texts}).join(
            indexed.select(
                "path",
                code=pl.col("language").is_not_null() & ~docs,
                # configuration and templates: what they name, a tool or a page calls
                config=pl.col("language").is_null() & ~docs,
            ),
            on="path",
        )

    @cached_property
    def word_table(self) -> pl.DataFrame | None:
        """(path, word, n, code, config): how often each word a section asks about — a
        definition's name, a file's name, a name an import binds — is written in each file,
        in code, strings and comments alike (what vulture calls a use, and more); None
        without the text. Tokenized once, in one lazy pass, for every section, and kept with
        the index version when the graph offers a memo."""
        memo = self.input.memo
        if memo is None or self.root is None:
            return self._words()
        table = memo("audit_words", self._words)
        if table is None:
            return None
        return table.filter(pl.col("path").is_in(self.files["path"].implode()))

    def _words(self) -> pl.DataFrame | None:
        texts = self.texts
        if texts is None:
            return None
        words = [
            self.definitions["label"],
            self.modules["path"].str.extract(r"([^/]+?)(?:\.[^./]+)?$"),
        ]
        if self.imports is not None:
            local = self.imports.select(
                pl.coalesce("alias", "name").str.extract(r"^([A-Za-z_$][\w$]*)")
            )
            words.append(local.to_series())
        wanted = pl.concat(words).drop_nulls().unique().implode()
        return (
            texts.lazy()
            .select(
                "path",
                "code",
                "config",
                word=pl.col("text").str.extract_all(r"[A-Za-z_$][\w$]*"),
            )
            .explode("word")
            .filter(pl.col("word").is_in(wanted))
            .group_by("path", "word")
            .agg(
                n=pl.len().cast(pl.Int32),
                code=pl.col("code").first(),
                config=pl.col("config").first(),
            )
            .collect()
        )

    def word_counts(self, words: pl.Series) -> pl.DataFrame | None:
        """For each of `words`: how often it is written as a whole word in code files
        (`in_code`), in configuration and templates (`in_config`: YAML, TOML, INI, JSON,
        HTML, …), in documents (`in_doc`), and the first file it is written in (`where`);
        None without the text."""
        table = self.word_table
        if table is None:
            return None
        wanted = pl.Series("word", words, dtype=pl.String).unique().implode()
        return (
            table.filter(pl.col("word").is_in(wanted))
            .group_by("word")
            .agg(
                in_code=pl.col("n").filter(pl.col("code")).sum().cast(pl.Int32),
                in_config=pl.col("n").filter(pl.col("config")).sum().cast(pl.Int32),
                in_doc=pl.col("n").filter(~pl.col("code") & ~pl.col("config")).sum().cast(pl.Int32),
                where=pl.col("path").min(),
                config_at=pl.col("path").filter(pl.col("config")).min(),
            )
        )

    def words_per_file(self, words: pl.Series) -> pl.DataFrame | None:
        """(path, word, n): how often each of `words` is written in each file."""
        table = self.word_table
        if table is None:
            return None
        wanted = pl.Series("word", words, dtype=pl.String).unique().implode()
        return table.filter(pl.col("word").is_in(wanted)).select("path", "word", "n")

    # -- references (internal store table) ------------------------------------------------------
    @cached_property
    def imports(self) -> pl.DataFrame | None:
        """The names each file's imports bind: path, line, language, module, name, alias,
        scope (`export` for a re-export); None when the store keeps no references."""
        refs = self.input.refs
        if callable(refs):
            try:
                refs = refs()
            except Exception:
                refs = None
        if refs is None:
            return None
        if isinstance(refs, pl.LazyFrame):
            refs = refs.filter(pl.col("kind") == "import").collect()
        want = ["path", "line", "language", "module", "name", "alias", "scope"]
        if not set(want) <= set(refs.columns):
            return None
        return refs.filter(pl.col("kind") == "import").select(want)

"""`ctxframe hook prompt`: a coding agent's prompt hook — stdin is the prompt (plain text, or the
JSON a hook receives, e.g. Claude Code's UserPromptSubmit ``{"prompt": ..., "cwd": ...}``),
stdout a compact context block, or nothing at all when the abstain decision says the prompt is
not about this code. A hook must never block the agent: the exit code is 0 whatever happens
(errors go to stderr as one line); only a misused command line exits otherwise.

It runs as a fresh process for every prompt, so it takes the short road through the store:
the nodes, the ranker's cached tables and, only when it speaks, the edges and file hashes of
its hits — the same ranking and abstain decision as ``graph.query(text, abstain=True)``
without loading what the other verbs need (DuckDB, the full edge index).
"""

from __future__ import annotations

import json
import os
from typing import IO

import polars as pl

from ctxframe._core.config import default_store, find_root, load_config
from ctxframe._core.errors import CtxframeError
from ctxframe._core.inputs import clean_text
from ctxframe._graph.context import Context, build_context
from ctxframe._graph.edges import SubsetEdgeIndex
from ctxframe._graph.query import QueryResult, answer
from ctxframe._ingest.redact import redact_rendered
from ctxframe._rank.abstain import assess
from ctxframe._rank.ranker import RankIndex
from ctxframe._rank.tokens import tokenize
from ctxframe._store import cache as _cache
from ctxframe._store import tables as _store

PROMPT_KEYS = ("prompt", "user_prompt", "text")
# Ranking time grows with the words of the question (~0.5 s for 1,000 characters of pasted code
# on Django): a prompt is read up to here, where its ask usually is.
MAX_PROMPT_CHARS = 1000
DEFAULT_BUDGET_TOKENS = 1500
TITLE = "ctxframe: code in this repository that matches the prompt"


def read_prompt(raw: str) -> tuple[str, str | None]:
    """(prompt, cwd) from a hook's stdin: a JSON object's ``prompt``/``user_prompt``/``text``
    (and ``cwd``), else the text itself. A JSON object without a prompt raises."""
    s = raw.strip()
    if s.startswith("{"):
        try:
            data = json.loads(s)
        except ValueError:
            return raw, None
        if isinstance(data, dict):
            cwd = data.get("cwd") if isinstance(data.get("cwd"), str) else None
            for key in PROMPT_KEYS:
                if isinstance(data.get(key), str):
                    return data[key], cwd
            raise CtxframeError(
                f"hook input is JSON without a prompt: expected one of {', '.join(PROMPT_KEYS)}"
            )
    return raw, None


class PromptIndex:
    """What one prompt needs from a store, read on demand."""

    def __init__(self, store: str, root: str | None):
        self.store = os.path.abspath(store)
        self._snap = _store.Snapshot(self.store)
        self.meta = self._snap.meta
        self.root = root or self.meta.get("root")
        self.nodes = self._snap.read("nodes")

    def rank_index(self) -> RankIndex:
        """The ranker's state from its cache beside the store (built and saved when missing),
        exactly as `Graph` does."""
        return _cache.ranker(self._snap, self.nodes)

    def query(self, text: str, limit: int) -> QueryResult | None:
        """`graph.query(text, limit=limit, abstain=True)`; None when it abstains."""
        cfg = load_config(self.root) if self.root and os.path.isdir(self.root) else None
        if cfg is not None and cfg.project_tokens:
            project = tuple(t for p in cfg.project_tokens for t in tokenize(p))
        else:
            project = tuple(tokenize(os.path.basename(self.root.rstrip("/")) if self.root else ""))
        index = self.rank_index()
        ranking = index.rank(
            text,
            limit=limit,
            deprioritize=tuple(cfg.deprioritize) if cfg is not None else (),
            project_tokens=project,
        )
        top = ranking.hits["id"][0] if ranking.hits.height else None
        if assess(index, ranking.question or text, top).abstain:
            return None
        ids = ranking.hits["id"].implode()
        edges = (
            self._snap.scan("edges")
            .select("src", "dst", "kind", "confidence", "name", "line")  # what arrows read
            .filter(pl.col("src").is_in(ids) | pl.col("dst").is_in(ids))
            .collect()
        )
        return answer(ranking, SubsetEdgeIndex(edges, self.nodes), limit=limit)

    def files(self, paths: list[str]) -> pl.DataFrame:
        """The `files` rows (path, hash) of the given paths."""
        return (
            self._snap.scan("files")
            .filter(pl.col("path").is_in(pl.Series(paths, dtype=pl.String).implode()))
            .select("path", "hash")
            .collect()
        )


def prompt_context(
    text: str,
    *,
    repo: str = ".",
    store: str | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    format: str = "md",
    limit: int | None = None,
) -> Context | None:
    """The context block for a prompt (its first ``MAX_PROMPT_CHARS`` characters), or None
    when the prompt is not about this code."""
    if not text.strip():
        return None
    text = text[:MAX_PROMPT_CHARS]
    root = os.path.realpath(repo)
    pi = PromptIndex(store or default_store(root), root if os.path.isdir(root) else None)
    if limit is None:
        limit = max(5, min(50, budget_tokens // 80))
    result = pi.query(text, limit)
    if result is None or result.hits.is_empty():
        return None
    ctx = build_context(
        result,
        nodes=pi.nodes,
        files=pi.files(result.hits["path"].drop_nulls().unique().to_list()),
        root=pi.root,
        budget_tokens=budget_tokens,
        format=format,
    )
    ctx.title = TITLE
    return ctx


def _read_stdin(stdin: IO[str]) -> str:
    """The prompt as text: bytes that are not UTF-8 become U+FFFD, never an error."""
    raw = getattr(stdin, "buffer", None)
    if raw is not None:
        return raw.read().decode("utf-8", "replace")
    return stdin.read()


def prompt_hook(
    stdin: IO[str],
    stdout: IO[str],
    stderr: IO[str],
    *,
    repo: str | None = None,
    store: str | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    format: str = "md",
) -> int:
    """Read a prompt from ``stdin``, write its context block (or nothing) to ``stdout``.
    Always returns 0; a problem is one line on ``stderr``."""
    try:
        prompt, cwd = read_prompt(_read_stdin(stdin))
        prompt = clean_text(prompt, "prompt")  # lone surrogates and bad bytes: U+FFFD
        root = repo if repo is not None else find_root(cwd or ".")
        ctx = prompt_context(
            prompt, repo=root, store=store, budget_tokens=budget_tokens, format=format
        )
        if ctx is not None:
            text = redact_rendered(ctx.render(), ctx.format)
            stdout.write(text + "\n" if ctx.counter.count(text + "\n") <= budget_tokens else text)
    except CtxframeError as exc:
        print(f"ctxframe hook: {exc}", file=stderr)
    except Exception as exc:  # a hook must never break the agent's turn
        print(f"ctxframe hook: {type(exc).__name__}: {exc}", file=stderr)
    return 0

"""Language packs: any grammar bundled by tree-sitter-language-pack, added by the user.

A pack is a folder `.ctxframe/packs/<language>/` in the indexed repository holding

* `tags.scm` — a query with the standard tree-sitter tags captures (`@definition.<kind>` with
  `@name`, `@reference.call` with `@name` and optionally `@receiver`, `@reference.extends` /
  `@reference.implements` with `@name`). `@definition.module` becomes a `namespace` node
  (`module` is ctxframe's kind for import stubs); other kinds are kept as written.
* `pack.toml` — `extensions = [".rb", ".rake"]` (required), `grammar = "ruby"` (default: the
  folder name), `timeout_seconds = 10` (per-file parse limit, see below).

A broken pack (no tags.scm, a query that does not compile, an unknown grammar, no extensions)
is reported with the file and the error, and indexing goes on without it. Extensions a built-in
language owns stay with the built-in language.

Pack files are parsed in a child process, one file at a time, under a per-file time limit: a
grammar whose parser never returns (tree-sitter-language-pack's `cobol` hangs even on one byte)
costs the limit, then that file is skipped with `parse timeout (> Ns)` and the child restarts for
the remaining files. Built-in languages are parsed in the ordinary worker pool.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from multiprocessing import get_context

from ctxframe._core.languages import _BY_EXT, Language
from ctxframe._ingest.extract import (
    DEF_FRAME_COLUMNS,
    REF_COLUMNS,
    Batch,
    FileResult,
    compiled_pack,
    extract_batch,
)

PACKS_DIR = os.path.join(".ctxframe", "packs")
DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Pack:
    """One loaded language pack."""

    language: Language
    grammar: str
    query: str  # the tags.scm text, as compiled
    path: str  # repo-relative path of tags.scm
    timeout: float = DEFAULT_TIMEOUT


def load_packs(root: str) -> tuple[list[Pack], list[str]]:
    """The packs under ROOT/.ctxframe/packs/ that compile, and one message per broken one."""
    base = os.path.join(root, PACKS_DIR)
    if not os.path.isdir(base):
        return [], []
    packs: list[Pack] = []
    errors: list[str] = []
    taken: dict[str, str] = {}
    for name in sorted(os.listdir(base)):
        folder = os.path.join(base, name)
        if not os.path.isdir(folder):
            continue
        rel = os.path.join(PACKS_DIR, name)
        try:
            pack = _load_one(name, folder, rel)
        except PackError as exc:
            errors.append(str(exc))
            continue
        exts = []
        for ext in pack.language.extensions:
            if ext in _BY_EXT:
                errors.append(
                    f"{rel}/pack.toml: extension {ext} is already indexed by the built-in "
                    f"{_BY_EXT[ext].name} language; the pack does not take it"
                )
            elif ext in taken:
                errors.append(f"{rel}/pack.toml: extension {ext} already taken by {taken[ext]}")
            else:
                exts.append(ext)
                taken[ext] = rel
        if exts:
            lang = pack.language
            packs.append(
                Pack(
                    Language(lang.name, lang.grammar, "", tuple(exts), lang.family, lang.doc),
                    pack.grammar,
                    pack.query,
                    pack.path,
                    pack.timeout,
                )
            )
    return packs, errors


class PackError(Exception):
    """A pack that cannot be used; the message names the file and the problem."""


def _load_one(name: str, folder: str, rel: str) -> Pack:
    cfg: dict = {}
    toml_path = os.path.join(folder, "pack.toml")
    if os.path.isfile(toml_path):
        try:
            with open(toml_path, "rb") as fh:
                cfg = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise PackError(f"{rel}/pack.toml: {exc}") from None
    exts = cfg.get("extensions")
    if not exts or not isinstance(exts, list) or not all(isinstance(e, str) for e in exts):
        raise PackError(f'{rel}/pack.toml: needs extensions = [".ext", …]')
    exts = tuple(e.lower() if e.startswith(".") else f".{e.lower()}" for e in exts)
    grammar = str(cfg.get("grammar", name))
    timeout = float(cfg.get("timeout_seconds", DEFAULT_TIMEOUT))
    tags = os.path.join(folder, "tags.scm")
    try:
        with open(tags, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise PackError(f"{rel}/tags.scm: {exc.strerror or exc}") from None
    text = text.replace("@definition.module", "@definition.namespace")
    try:
        from tree_sitter_language_pack import get_language

        get_language(grammar)  # type: ignore[arg-type]
    except Exception as exc:  # any failure: the grammar is not bundled
        raise PackError(
            f"{rel}/pack.toml: grammar {grammar!r} is not bundled by "
            f"tree-sitter-language-pack ({exc})"
        ) from None
    try:
        compiled_pack(grammar, text)
    except Exception as exc:  # tree_sitter.QueryError and friends
        raise PackError(f"{rel}/tags.scm: query error: {exc}") from None
    lang = Language(name, grammar, "", exts, name, "comment")
    return Pack(lang, grammar, text, f"{rel}/tags.scm", timeout)


def _child(conn, root: str, jobs: list, packs: tuple) -> None:

    for job in jobs:
        conn.send(extract_batch(root, [job], packs))
    conn.close()


def extract_guarded(root: str, jobs: list[tuple[str, str | None]], packs: tuple) -> list:
    """Extract pack-language files in a child process under each pack's per-file time limit;
    a file whose parse does not finish in time becomes a `parse timeout` skip."""

    limit = {ext: p.timeout for p in packs for ext in p.language.extensions}
    ctx = get_context("fork" if os.name == "posix" and os.uname().sysname == "Linux" else "spawn")
    out: list[Batch] = []
    todo = list(jobs)
    while todo:
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(child, root, todo, packs), daemon=True)
        proc.start()
        child.close()
        done = 0
        try:
            for path, _hash in todo:
                timeout = limit.get(os.path.splitext(path)[1].lower(), DEFAULT_TIMEOUT)
                if parent.poll(timeout):
                    try:
                        out.append(parent.recv())
                    except EOFError:  # the child died on this file
                        out.append(_skipped(Batch, FileResult, path, "parser crashed"))
                    done += 1
                    if not proc.is_alive() and not parent.poll(0):
                        break
                    continue
                out.append(_skipped(Batch, FileResult, path, f"parse timeout (> {timeout:g}s)"))
                done += 1
                break
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join()
            parent.close()
        todo = todo[done:]
    return out


def _skipped(batch_cls, result_cls, path: str, reason: str):

    return batch_cls(
        [result_cls(path=path, skip_reason=reason)],
        {c: [] for c in DEF_FRAME_COLUMNS},
        {c: [] for c in REF_COLUMNS},
    )

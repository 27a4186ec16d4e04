"""Labelled query sets: JSONL in, a Polars frame out.

One JSON object per line (blank lines and lines starting with ``#`` or ``//`` are skipped)::

    {"id": "q01", "query": "where is refund processing implemented",
     "repo": "shop",                       # optional: repo root, relative to the JSONL file
     "store": null,                        # optional: store directory, relative likewise
     "gold": ["services/payments/refund_processor.py::RefundProcessor"],   # node ids
     "gold_files": ["services/payments/refund_processor.py"],              # repo-relative paths
     "gold_functions": ["RefundProcessor.process"],   # qualnames, or "path::Qualname"
     "tags": ["tier:exact", "intent:none"]}

``gold`` (alias ``gold_ids``), ``gold_files`` and ``gold_functions`` are each optional; a query
with none of them is a question with no structural answer (tag it ``no-answer``): it counts in
the abstain measures, never in the ranking metrics. When ``gold_files`` is missing it is derived
from the files of the ``gold`` nodes at evaluation time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from ctxframe._core.errors import CtxframeError
from ctxframe._core.safeio import read_regular

__all__ = ["QUERY_SCHEMA", "QuerySetError", "load_queries"]

QUERY_SCHEMA = pl.Schema(
    {
        "qid": pl.String,
        "query": pl.String,
        "repo": pl.String,
        "store": pl.String,
        "gold_ids": pl.List(pl.String),
        "gold_files": pl.List(pl.String),
        "gold_functions": pl.List(pl.String),
        "tags": pl.List(pl.String),
    }
)


class QuerySetError(CtxframeError, ValueError):
    """A query set line that cannot be read (bad JSON, no query text, wrong field type)."""


def _strings(value: Any, field: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        out = []
        for v in value:
            if not isinstance(v, str):
                raise QuerySetError(f"{where}: {field} must hold strings, got {v!r}")
            out.append(v)
        return out
    raise QuerySetError(f"{where}: {field} must be a list of strings")


def _resolve(base: str | None, value: Any) -> str | None:
    if not value:
        return None
    value = str(value)
    if base is None or os.path.isabs(value):
        return value
    return os.path.normpath(os.path.join(base, value))


def _row(obj: Any, n: int, where: str, base: str | None) -> dict[str, Any]:
    if not isinstance(obj, Mapping):
        raise QuerySetError(f"{where}: each line must be a JSON object")
    text = obj.get("query", obj.get("text"))
    if not isinstance(text, str) or not text.strip():
        raise QuerySetError(f"{where}: missing 'query' text")
    gold = obj.get("gold", obj.get("gold_ids"))
    return {
        "qid": str(obj.get("id") or obj.get("qid") or f"q{n:03d}"),
        "query": text,
        "repo": _resolve(base, obj.get("repo")),
        "store": _resolve(base, obj.get("store")),
        "gold_ids": _strings(gold, "gold", where),
        "gold_files": _strings(obj.get("gold_files"), "gold_files", where),
        "gold_functions": _strings(obj.get("gold_functions"), "gold_functions", where),
        "tags": _strings(obj.get("tags"), "tags", where),
    }


def load_queries(source: Any) -> pl.DataFrame:
    """Load a query set: a JSONL path, a list of dicts, or a DataFrame (returned normalised).

    ``repo`` and ``store`` of a JSONL file resolve relative to the file's folder. Columns:
    ``qid, query, repo, store, gold_ids, gold_files, gold_functions, tags``.
    """
    if isinstance(source, pl.DataFrame):
        rows = source.to_dicts()
        base = None
        where = "queries"
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise QuerySetError(f"no query set at {path}")
        base = str(path.resolve().parent)
        rows = []
        try:  # a FIFO or a device is refused, never waited on
            text = read_regular(str(path)).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise QuerySetError(
                f"{path} is not UTF-8 text (byte {exc.start}): give a JSONL query set "
                "(docs/ranking.md)"
            ) from None
        except OSError as exc:
            raise QuerySetError(f"cannot read {path}: {exc.strerror}") from None
        if "\0" in text[:8192]:
            raise QuerySetError(f"{path} is binary: give a JSONL query set (docs/ranking.md)")
        for lineno, line in enumerate(text.splitlines(), 1):
            s = line.strip()
            if not s or s.startswith("#") or s.startswith("//"):
                continue
            try:
                rows.append((lineno, json.loads(s)))
            except json.JSONDecodeError as exc:
                raise QuerySetError(f"{path}:{lineno}: bad JSON: {exc.msg}") from None
        out = [_row(obj, i, f"{path}:{ln}", base) for i, (ln, obj) in enumerate(rows, 1)]
        return _frame(out)
    else:
        rows = list(source)
        base = None
        where = "queries"
    out = [_row(obj, i, f"{where}[{i - 1}]", base) for i, obj in enumerate(rows, 1)]
    return _frame(out)


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    df = pl.DataFrame(rows, schema=QUERY_SCHEMA)
    dup = df.filter(pl.col("qid").is_duplicated())["qid"].unique().to_list()
    if dup:
        raise QuerySetError(f"duplicate query ids: {', '.join(sorted(dup)[:5])}")
    return df

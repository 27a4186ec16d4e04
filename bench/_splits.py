"""Held-out halves of the labelled dev sets: a ``dev`` (tuning) half and a ``test`` half.

The split is deterministic and needs no stored list: every question id gets the key
``blake2b(id, digest_size=8)`` (an unsigned 64-bit integer). Questions are ordered by
``(stratum, key)`` and assigned alternately, ``dev``, ``test``, ``dev``, ... along that order (even
positions are ``dev``, odd ``test``). Because the alternation runs through the strata one after
another, each stratum is split evenly (at most one apart) and so are the totals.

Strata: the short set uses ``(category, project)`` (so each half has about half of every category
and of every project); SWE-bench uses the project. Adding or removing questions can move others
of the same stratum between halves: the split is of the set as it is, recomputed on every run.

Both eval scripts import this module and take ``--half dev|test|all``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

HALVES = ("dev", "test")
CHOICES = ("dev", "test", "all")


def id_key(qid: str) -> int:
    """The stable hash of a question id: blake2b, 8 bytes, big-endian."""
    return int.from_bytes(hashlib.blake2b(qid.encode("utf-8"), digest_size=8).digest(), "big")


def assign(ids_and_strata: Iterable[tuple[str, Any]]) -> dict[str, str]:
    """``{id: "dev" | "test"}`` for ``(id, stratum)`` pairs (strata must be sortable)."""
    order = sorted(ids_and_strata, key=lambda p: (p[1], id_key(p[0]), p[0]))
    return {qid: HALVES[i % 2] for i, (qid, _s) in enumerate(order)}


def split(
    rows: Iterable[dict[str, Any]], id_of: Callable[[dict], str], stratum_of: Callable[[dict], Any]
) -> dict[str, str]:
    """Halves of dict rows: ``{id: half}``."""
    return assign((id_of(r), stratum_of(r)) for r in rows)


def short_halves(questions: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Halves of the short set (``questions-dev.jsonl`` rows), stratified by category, project."""
    return split(questions, lambda q: q["id"], lambda q: (q["category"], q["project"]))


def swebench_halves(instances: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Halves of the SWE-bench dev set, stratified by repository."""
    return split(instances, lambda i: i["instance_id"], lambda i: i["repo"])


def pick(rows: list[dict[str, Any]], halves: dict[str, str], half: str, id_of) -> list[dict]:
    """The rows of one half (``all``: every row), order kept."""
    if half == "all":
        return list(rows)
    if half not in HALVES:
        raise ValueError(f"half must be one of {CHOICES}, not {half!r}")
    return [r for r in rows if halves[id_of(r)] == half]

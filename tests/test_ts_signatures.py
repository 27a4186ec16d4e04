"""TypeScript members declared without a body (an interface's methods, a `.d.ts` class's,
abstract ones) are method nodes of their type; a call never resolves to an interface's or a
`.d.ts` member, typed or not: what runs is an implementation."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import ctxframe as cf

TYPES = """\
export interface Schema<T> {
  safeParse(data: unknown): { success: boolean };
  parse(data: unknown): T;
}
export declare abstract class ZodType<T> {
  abstract _parse(input: unknown): T;
  safeParse(data: unknown): { success: boolean };
}
"""
USE = """\
import { Schema } from './types';

export function check(s: Schema<string>, x: unknown) {
  return s.safeParse(x);
}

export function loose(o) {
  return o.safeParse(1);
}
"""
IMPL = """\
export class Impl {
  safeParse(data) {
    return { success: true };
  }
}
"""


def test_signatures_are_methods_of_their_type(tmp_path: Path) -> None:
    (tmp_path / "types.d.ts").write_text(TYPES)
    (tmp_path / "use.ts").write_text(USE)
    (tmp_path / "impl.ts").write_text(IMPL)
    g = cf.index(str(tmp_path), store=str(tmp_path / ".store"), progress=False)
    methods = g.nodes.filter((pl.col("kind") == "method") & (pl.col("path") == "types.d.ts"))
    assert methods.select("id", "parent").rows() == [
        ("types.d.ts::Schema.parse", "types.d.ts::Schema"),
        ("types.d.ts::Schema.safeParse", "types.d.ts::Schema"),
        ("types.d.ts::ZodType._parse", "types.d.ts::ZodType"),
        ("types.d.ts::ZodType.safeParse", "types.d.ts::ZodType"),
    ]
    calls = g.edges.filter(pl.col("kind") == "calls").sort("src")
    assert calls.select("src", "dst", "confidence").rows() == [
        ("use.ts::check", "impl.ts::Impl.safeParse", "INFERRED"),  # what runs, not `Schema`'s
        ("use.ts::loose", "impl.ts::Impl.safeParse", "INFERRED"),  # by name: not a declaration
    ]

"""Per-language coverage: how much of each language ctxframe understood, so a weak language shows.

One row per language (files whose language is null are left out): indexed files, files with
parse errors and the ERROR/MISSING node count, nodes (and nodes by kind), and call resolution:
`calls` counts distinct (caller, callee name) call sites read from that language's files;
`calls_resolved` those with an EXTRACTED or INFERRED target, `calls_ambiguous` those with only
AMBIGUOUS targets; `resolved_share` = calls_resolved / calls (null when there are no calls).
"""

from __future__ import annotations

import polars as pl

COLUMNS = (
    "language", "files", "files_with_errors", "parse_errors", "nodes", "nodes_by_kind",
    "calls", "calls_resolved", "calls_ambiguous", "resolved_share",
)  # fmt: skip


def coverage(nodes: pl.DataFrame, edges: pl.DataFrame, files: pl.DataFrame) -> pl.DataFrame:
    """The coverage table (columns in COLUMNS), sorted by number of files, most first."""
    indexed = files.filter(pl.col("skip_reason").is_null() & pl.col("language").is_not_null())
    per_file = indexed.group_by("language").agg(
        files=pl.len().cast(pl.Int64),
        files_with_errors=(pl.col("parse_errors").fill_null(0) > 0).sum().cast(pl.Int64),
        parse_errors=pl.col("parse_errors").fill_null(0).sum().cast(pl.Int64),
    )
    symbols = nodes.filter(
        pl.col("path").is_not_null() & (pl.col("kind") != "file") & pl.col("language").is_not_null()
    )
    kinds = (
        symbols.group_by("language", "kind")
        .len()
        .sort("language", "len", "kind", descending=[False, True, False])
        .group_by("language", maintain_order=True)
        .agg(
            nodes=pl.col("len").sum().cast(pl.Int64),
            nodes_by_kind=pl.concat_str(
                "kind", pl.lit(" "), pl.col("len").cast(pl.String)
            ).str.join(", "),
        )
    )
    lang_of = indexed.select("path", "language")
    calls = (
        edges.filter(pl.col("kind") == "calls")
        .join(lang_of, on="path", how="inner")
        .group_by("language", "src", "name")
        .agg(
            resolved=pl.col("confidence").is_in(["EXTRACTED", "INFERRED"]).any(),
            ambiguous=(pl.col("confidence") == "AMBIGUOUS").any(),
        )
        .group_by("language")
        .agg(
            calls=pl.len().cast(pl.Int64),
            calls_resolved=pl.col("resolved").sum().cast(pl.Int64),
            calls_ambiguous=(pl.col("ambiguous") & ~pl.col("resolved")).sum().cast(pl.Int64),
        )
    )
    out = (
        per_file.join(kinds, on="language", how="left")
        .join(calls, on="language", how="left")
        .with_columns(
            pl.col("nodes", "calls", "calls_resolved", "calls_ambiguous").fill_null(0),
            pl.col("nodes_by_kind").fill_null(""),
        )
        .with_columns(
            resolved_share=pl.when(pl.col("calls") > 0).then(
                (pl.col("calls_resolved") / pl.col("calls")).round(3)
            )
        )
    )
    return out.select(COLUMNS).sort(["files", "language"], descending=[True, False])


def format_coverage(table: pl.DataFrame) -> str:
    """The coverage table as aligned text, one line per language."""
    if table.height == 0:
        return "coverage: no file in an embedded language"
    head = f"{'language':<11}{'files':>7}{'errors':>8}{'nodes':>9}{'calls':>9}{'resolved':>10}"
    lines = ["coverage by language:", "  " + head + "  nodes by kind"]
    for r in table.iter_rows(named=True):
        share = "-" if r["resolved_share"] is None else f"{100 * r['resolved_share']:.0f}%"
        errors = f"{r['files_with_errors']}" if r["files_with_errors"] else "0"
        lines.append(
            f"  {r['language']:<11}{r['files']:>7}{errors:>8}{r['nodes']:>9}{r['calls']:>9}"
            f"{share:>10}  {r['nodes_by_kind']}"
        )
    return "\n".join(lines)

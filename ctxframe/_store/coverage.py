"""Per-language coverage: how much of each language ctxframe understood, so a weak language shows.

One row per language (files whose language is null are left out): indexed files, files with
parse errors and the ERROR/MISSING node count, nodes (and nodes by kind), and call resolution:
`calls` counts distinct (caller, callee name) call sites read from that language's files;
`calls_resolved` those with an EXTRACTED or INFERRED target, split into `calls_extracted` (a
target through bindings) and `calls_inferred` (only by type or a unique name), and
`calls_ambiguous` those with only AMBIGUOUS targets; `resolved_share` = calls_resolved / calls
(null when there are no calls). The split says how much of the resolution a reader can trust
as written (docs/schema.md, confidence).
"""

from __future__ import annotations

import polars as pl

COLUMNS = (
    "language", "files", "files_with_errors", "parse_errors", "nodes", "nodes_by_kind",
    "calls", "calls_resolved", "calls_extracted", "calls_inferred", "calls_ambiguous",
    "resolved_share",
)  # fmt: skip


_SUMS = ("files", "files_with_errors", "parse_errors", "calls", "calls_resolved",
         "calls_extracted", "calls_inferred", "calls_ambiguous")  # fmt: skip
COUNTS = {"language": pl.String, "key": pl.String, "n": pl.Int64}


def counts(nodes: pl.DataFrame, edges: pl.DataFrame, files: pl.DataFrame) -> pl.DataFrame:
    """The coverage figures as (language, key, n) rows: a key is one of the summed columns or
    `kind:<node kind>`. Every figure is a sum over files, so counts of parts add up."""
    indexed = files.filter(pl.col("skip_reason").is_null() & pl.col("language").is_not_null())
    per_file = indexed.group_by("language").agg(
        files=pl.len().cast(pl.Int64),
        files_with_errors=(pl.col("parse_errors").fill_null(0) > 0).sum().cast(pl.Int64),
        parse_errors=pl.col("parse_errors").fill_null(0).sum().cast(pl.Int64),
    )
    kinds = (
        nodes.filter(
            pl.col("path").is_not_null()
            & (pl.col("kind") != "file")
            & pl.col("language").is_not_null()
        )
        .group_by("language", "kind")
        .len()
        .select("language", key=pl.lit("kind:") + pl.col("kind"), n=pl.col("len").cast(pl.Int64))
    )
    # A call site is a distinct (caller, callee name); a caller lives in one file.
    lang_of = indexed.select("path", "language")
    calls = (
        pl.concat(
            [
                chunk.select("src", "name", "path", "confidence", "kind")
                .filter(pl.col("kind") == "calls")
                .join(lang_of, on="path", how="inner")
                .group_by("language", "src", "name")
                .agg(
                    resolved=pl.col("confidence").is_in(["EXTRACTED", "INFERRED"]).any(),
                    extracted=(pl.col("confidence") == "EXTRACTED").any(),
                    ambiguous=(pl.col("confidence") == "AMBIGUOUS").any(),
                )
                .group_by("language")
                .agg(
                    calls=pl.len().cast(pl.Int64),
                    calls_resolved=pl.col("resolved").sum().cast(pl.Int64),
                    calls_extracted=pl.col("extracted").sum().cast(pl.Int64),
                    calls_inferred=(pl.col("resolved") & ~pl.col("extracted")).sum().cast(pl.Int64),
                    calls_ambiguous=(pl.col("ambiguous") & ~pl.col("resolved"))
                    .sum()
                    .cast(pl.Int64),
                )
                for chunk in _src_chunks(edges, _CHUNK_ROWS)
            ]
        )
        .group_by("language")
        .agg(pl.all().sum())
    )
    wide = [
        f.unpivot(index="language", variable_name="key", value_name="n") for f in (per_file, calls)
    ]
    return pl.concat([*wide, kinds]).cast(COUNTS)


_CHUNK_ROWS = 400_000


def _src_chunks(edges: pl.DataFrame, rows: int) -> list[pl.DataFrame]:
    """Edges sorted by src in slices of about `rows` rows that never split a src (so a call
    site is in one slice and the grouping stays small); unsorted edges stay whole."""
    src = edges["src"]
    if edges.height <= rows or not src.is_sorted(nulls_last=True):
        return [edges]
    out, start = [], 0
    while start < edges.height:
        end = start + rows
        if end < edges.height:
            end = int(src.search_sorted(src[end], side="left"))
            if end <= start:  # one src longer than a slice
                end = int(src.search_sorted(src[start + rows], side="right"))
        out.append(edges.slice(start, end - start))
        start = end
    return out


def table(counts: pl.DataFrame) -> pl.DataFrame:
    """The coverage table (columns in COLUMNS) from counts, summed per language and key; a
    language with no indexed file is left out. Sorted by number of files, most first."""
    c = counts.group_by("language", "key").agg(pl.col("n").sum()).filter(pl.col("n") != 0)
    kinds = (
        c.filter(pl.col("key").str.starts_with("kind:"))
        .with_columns(kind=pl.col("key").str.strip_prefix("kind:"))
        .sort("language", "n", "kind", descending=[False, True, False])
        .group_by("language", maintain_order=True)
        .agg(
            nodes=pl.col("n").sum(),
            nodes_by_kind=pl.concat_str("kind", pl.lit(" "), pl.col("n").cast(pl.String)).str.join(
                ", "
            ),
        )
    )
    sums = c.filter(pl.col("key").is_in(_SUMS)).pivot(
        on="key", index="language", values="n", on_columns=list(_SUMS)
    )
    out = (
        sums.filter(pl.col("files") > 0)
        .join(kinds, on="language", how="left")
        .with_columns(
            pl.col("nodes", *_SUMS).fill_null(0).cast(pl.Int64),
            pl.col("nodes_by_kind").fill_null(""),
        )
        .with_columns(
            resolved_share=pl.when(pl.col("calls") > 0).then(
                (pl.col("calls_resolved") / pl.col("calls")).round(3)
            )
        )
    )
    return out.select(COLUMNS).sort(["files", "language"], descending=[True, False])


def coverage(nodes: pl.DataFrame, edges: pl.DataFrame, files: pl.DataFrame) -> pl.DataFrame:
    """The coverage table (columns in COLUMNS), sorted by number of files, most first."""
    return table(counts(nodes, edges, files))


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

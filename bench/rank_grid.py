"""Grid search of the default rule's combination weights on the tuning halves, offline.

Usage::

    python bench/rank_grid.py dump [--set swe|short] [--half dev] [--out DIR] [--k1 1.2 --b 0.75]
    python bench/rank_grid.py grid [--set swe|short] [--out DIR] \
        --grid content=1,2,3 file_content=0,0.5

``dump`` ranks every question of the half once and stores, per scored node, the parts the
default rule adds up (``cf.rules.IdfTiers``): the name score (tiers and, for long questions,
the evidence bonus), the node's own BM25F (``content`` weighs it), the whole file's BM25F (file
nodes; ``file_content``), its best definition's score inside the file, and the intent flags.
``grid`` then recombines those parts for every point of the grid — the file and function ranks
follow with a sort, no re-ranking — and prints the metrics of ``bench/rank_tune.py``. The graph
stage (callers, prior, agreement) is not part of the dump; judge it with rank_tune.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import _splits
import polars as pl
import short_eval as se
import swebench_eval as sw

DEFAULT_OUT = c.RESULTS_DIR / "rank-grid"


def _sum_names(rule, matches: pl.DataFrame, weights: dict[str, float]) -> pl.DataFrame:
    qw = pl.col("qtoken").replace_strict(weights, default=0.0, return_dtype=pl.Float64)
    return (
        rule.best_per_token(matches, qw)
        .group_by("node_row")
        .agg(score=pl.col("value").sum())
        .collect()
    )


PART_COLUMNS = (
    "name_code", "name_prose", "b_path", "b_module", "b_name", "b_frame", "b_title",
    "cnode_code", "cnode_prose", "cfile_code", "cfile_prose",
)  # fmt: skip


def parts(graph, text: str, rule) -> pl.DataFrame:
    """The default rule's parts for every node scored by names or content (see the module
    docstring): for a long question the name and content scores split into the identifier
    and path tokens' share (``_code``) and the prose tokens' share (``_prose``), and each kind
    of hint bonus apart; a short question has everything in ``_code``."""
    from ctxframe._rank.evidence import EvidenceWeights, hint_bonus
    from ctxframe._rank.fields import BODY, DOC, SIGNATURE
    from ctxframe._rank.question import Question
    from ctxframe._rank.rules import bm25f

    ix = graph._rank_index
    q = Question.parse(text, rule.weights)
    project = graph._project_tokens
    matches = ix.match_table(q, project_tokens=project, dice=rule.dice)
    content = ix.content(q, project_tokens=project)
    fw = {SIGNATURE: rule.w_signature, DOC: rule.w_doc, BODY: rule.w_body}
    fields = tuple(f for f, x in fw.items() if x)
    share = rule.long_max_share if rule.evidence and q.long else rule.max_share
    rows_node = content.rows(unit="node", fields=fields, max_share=share)
    rows_file = content.rows(unit="file", fields=fields, max_share=share)
    kw = {"k1": rule.k1, "b": rule.b, "field_weights": fw}
    named: list[pl.DataFrame] = []
    if rule.evidence and q.long:
        ev, w = q.evidence, rule.weights
        import math

        kind = {t: ev.weights[t] / (1 + w.tf_log * math.log(ev.counts[t])) for t in ev.weights}
        prose = {t: (ev.weights[t] if abs(kind[t] - w.prose) < 1e-9 else 0.0) for t in ev.weights}
        code = {t: ev.weights[t] - prose[t] for t in ev.weights}
        named.append(_sum_names(rule, matches, code).rename({"score": "name_code"}))
        named.append(_sum_names(rule, matches, prose).rename({"score": "name_prose"}))
        scale = max(ev.weights.values(), default=1.0)
        zero = dict(
            path_bonus=0.0, module_bonus=0.0, name_bonus=0.0, frame_bonus=0.0, title_file_bonus=0.0
        )
        base = matches.select("node_id", "label")
        for col, key in (("b_path", "path_bonus"), ("b_module", "module_bonus"),
                         ("b_name", "name_bonus"), ("b_frame", "frame_bonus"),
                         ("b_title", "title_file_bonus")):  # fmt: skip
            one = EvidenceWeights(**{**zero, key: getattr(w, key)})
            b = hint_bonus(base, ev, one)
            if b.height:
                rows = b.join(matches.select("node_id", "node_row").unique(), on="node_id")
                named.append(rows.select("node_row", **{col: pl.col("bonus") * scale}))
        for col, tw in (("cnode_code", code), ("cnode_prose", prose)):
            named.append(
                bm25f(rows_node, token_weights=tw, **kw).select(
                    node_row="doc_row", **{col: "score"}
                )
            )
        for col, tw in (("cfile_code", code), ("cfile_prose", prose)):
            named.append(
                bm25f(rows_file, token_weights=tw, **kw).select(
                    node_row="doc_row", **{col: "score"}
                )
            )
    else:
        plain = dataclasses.replace(rule, content=0.0, content_long=0.0)
        names = plain.score(matches, content)
        named.append(names.select(pl.col("node_row").cast(pl.UInt32), name_code="score"))
        named.append(bm25f(rows_node, **kw).select(node_row="doc_row", cnode_code="score"))
        named.append(bm25f(rows_file, **kw).select(node_row="doc_row", cfile_code="score"))
    frame = None
    for part in named:
        part = part.with_columns(pl.col("node_row").cast(pl.UInt32))
        frame = (
            part if frame is None else frame.join(part, on="node_row", how="full", coalesce=True)
        )
    for col in PART_COLUMNS:
        if col not in frame.columns:
            frame = frame.with_columns(pl.lit(0.0).alias(col))
    frame = frame.with_columns(pl.col(list(PART_COLUMNS)).fill_null(0.0)).select(
        "node_row", *PART_COLUMNS
    )
    rows = frame["node_row"]
    a = ix._attrs
    return frame.with_columns(
        test=a["test"].gather(rows),
        stub=a["stub"].gather(rows),
        doc=a["doc"].gather(rows),
        file_row=a["file_row"].gather(rows),
        kind=ix.nodes["kind"].gather(rows),
        id=ix.nodes["id"].gather(rows),
        path=ix.nodes["path"].gather(rows),
    )


def dump_swe(half: str, out: Path, rule) -> None:
    instances = sw.load_instances()
    halves = _splits.swebench_halves(instances)
    instances = _splits.pick(instances, halves, half, lambda i: i["instance_id"])
    frames, gold_rows = [], []
    for graph, inst, gold, fn_gold in sw.indexed_gold(instances):
        frames.append(
            parts(graph, inst["problem_statement"], rule).with_columns(
                qid=pl.lit(inst["instance_id"])
            )
        )
        gold_rows.append(
            {
                "qid": inst["instance_id"],
                "project": inst["project"],
                "gold_files": gold,
                "gold_fns": fn_gold,
            }
        )
    out.mkdir(parents=True, exist_ok=True)
    pl.concat(frames).write_parquet(out / "swe-parts.parquet")
    (out / "swe-gold.json").write_text(json.dumps(gold_rows))


def dump_short(half: str, out: Path, rule) -> None:
    questions = se.read_jsonl(se.DATA_DIR / "questions-dev.jsonl")
    halves = _splits.short_halves(questions)
    questions = _splits.pick(questions, halves, half, lambda q: q["id"])
    frames, gold_rows = [], []
    for project in sorted(se.PROJECTS):
        graph = se.ensure_graph(se.ensure_tree(project))
        kinds = dict(zip(graph.nodes["id"].to_list(), graph.nodes["kind"].to_list(), strict=True))
        for q in questions:
            if q["project"] != project or not q["gold_symbols"]:
                continue
            gold = [se.to_node_id(s) for s in q["gold_symbols"]]
            frames.append(parts(graph, q["question"], rule).with_columns(qid=pl.lit(q["id"])))
            gold_rows.append(
                {
                    "qid": q["id"],
                    "category": q["category"],
                    "gold": gold,
                    "gold_classes": [g for g in gold if kinds.get(g) == "class"],
                }
            )
        del graph
    out.mkdir(parents=True, exist_ok=True)
    pl.concat(frames).write_parquet(out / "short-parts.parquet")
    (out / "short-gold.json").write_text(json.dumps(gold_rows))


def combine(p: pl.DataFrame, w: dict[str, float]) -> pl.DataFrame:
    """The total score of each node under weights ``w`` (see the module docstring)."""
    is_file = pl.col("kind") == "file"
    g = w.get
    name = (
        pl.col("name_code")
        + g("prose", 1.0) * pl.col("name_prose")
        + g("bonus", 1.0)
        * (
            g("path", 1.0) * pl.col("b_path")
            + g("module", 1.0) * pl.col("b_module")
            + g("named", 1.0) * pl.col("b_name")
            + g("frame", 1.0) * pl.col("b_frame")
            + g("title_file", 1.0) * pl.col("b_title")
        )
    )
    cprose = g("cprose", 1.0)
    cnode = pl.col("cnode_code") + cprose * pl.col("cnode_prose")
    cfile = pl.col("cfile_code") + cprose * pl.col("cfile_prose")
    total = (
        name
        + g("content", 1.0) * cnode
        + pl.when(is_file).then(g("file_content", 0.0) * cfile).otherwise(0.0)
    )
    p = p.with_columns(total=total)
    if w.get("file_best", 0.0):
        best = (
            p.filter(~is_file)
            .group_by("qid", "file_row")
            .agg(best=pl.col("total").max())
            .rename({"file_row": "node_row"})
        )
        p = p.join(best, on=["qid", "node_row"], how="left").with_columns(
            total=pl.col("total") + w["file_best"] * pl.col("best").fill_null(0.0)
        )
    if w.get("sym_file", 0.0):  # a definition gains a share of its file's total
        ftot = p.filter(is_file).select("qid", file_row="node_row", ftot="total")
        p = (
            p.join(ftot, on=["qid", "file_row"], how="left")
            .with_columns(
                total=pl.when(is_file)
                .then(pl.col("total"))
                .otherwise(pl.col("total") + w["sym_file"] * pl.col("ftot").fill_null(0.0))
            )
            .drop("ftot")
        )
    mult = (
        pl.when(pl.col("test")).then(w.get("test", 0.5)).otherwise(1.0)
        * pl.when(pl.col("stub")).then(0.25).otherwise(1.0)
        * pl.when(pl.col("doc")).then(w.get("doc", 0.5)).otherwise(1.0)
    )
    return p.with_columns(total=(pl.col("total") * mult).round(6)).filter(pl.col("total") > 0)


def swe_metrics(p: pl.DataFrame, gold: list[dict], w: dict[str, float]) -> dict[str, Any]:
    s = combine(p, w).sort(["qid", "total", "id"], descending=[False, True, False])
    files = (
        s.filter(pl.col("path").is_not_null())
        .group_by("qid", "path", maintain_order=True)
        .agg()
        .with_columns(rank=pl.int_range(1, pl.len() + 1).over("qid"))
    )
    defs = (
        s.filter(
            ~pl.col("kind").is_in(list(sw.NON_DEFINITION_KINDS)) & pl.col("path").is_not_null()
        )
        .with_columns(rank=pl.int_range(1, pl.len() + 1).over("qid"))
        .select("qid", "id", "rank")
    )
    g = pl.DataFrame(gold)
    gf = g.select("qid", "project", path="gold_files").explode("path")
    fr = (
        gf.join(files, on=["qid", "path"], how="left")
        .group_by("qid", "project")
        .agg(
            worst=pl.when(pl.col("rank").is_null().any()).then(None).otherwise(pl.col("rank").max())
        )
    )
    gn = g.filter(pl.col("gold_fns").list.len() > 0).select("qid", id="gold_fns").explode("id")
    nr = (
        gn.join(defs, on=["qid", "id"], how="left")
        .group_by("qid")
        .agg(
            worst=pl.when(pl.col("rank").is_null().any()).then(None).otherwise(pl.col("rank").max())
        )
    )
    n, nf = fr.height, nr.height

    def acc(frame, k):
        return round(100 * frame.filter(pl.col("worst") <= k).height / max(frame.height, 1), 1)

    out = {"n": n, "file@1": acc(fr, 1), "file@5": acc(fr, 5), "file@10": acc(fr, 10)}
    out["fn@10"] = acc(nr, 10) if nf else None
    for proj in ("django", "sympy", "sphinx"):
        out[proj] = acc(fr.filter(pl.col("project") == proj), 1)
    return out


def short_metrics(p: pl.DataFrame, gold: list[dict], w: dict[str, float]) -> dict[str, Any]:
    s = combine(p, w).filter(pl.col("kind").is_in(list(se.SYMBOL_KINDS)))
    s = s.sort(["qid", "total", "id"], descending=[False, True, False]).with_columns(
        rank=pl.int_range(1, pl.len() + 1).over("qid"),
        base=pl.col("id").str.replace(r"#\d+$", ""),
    )
    ranks, cats = [], []
    by_q = {q: f for (q,), f in s.partition_by("qid", as_dict=True).items()}
    for gq in gold:
        f = by_q.get(gq["qid"])
        r = None
        if f is not None:
            hit = f.filter(
                pl.col("base").is_in(gq["gold"])
                | pl.any_horizontal(
                    [pl.col("base").str.starts_with(c + ".") for c in gq["gold_classes"]]
                    or [pl.lit(False)]
                )
            )
            r = int(hit["rank"].min()) if hit.height else None
        ranks.append(r)
        cats.append(gq["category"])

    def acc(rs, k):
        return round(100 * sum(1 for r in rs if r is not None and r <= k) / max(len(rs), 1), 1)

    out = {"n": len(ranks), "sym@1": acc(ranks, 1), "sym@5": acc(ranks, 5)}
    for cat in "abcde":
        rs = [r for r, cc in zip(ranks, cats, strict=True) if cc == cat]
        if rs:
            out[cat] = f"{acc(rs, 1):.0f}/{acc(rs, 5):.0f}"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("dump", "grid"))
    ap.add_argument("--set", choices=("swe", "short"), default="swe")
    ap.add_argument("--half", choices=_splits.CHOICES, default="dev")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--rule", default="{}", help="IdfTiers keyword arguments (JSON) for dump")
    ap.add_argument("--grid", nargs="*", default=[], help="name=v1,v2,... (combination weights)")
    a = ap.parse_args(argv)
    import ctxframe as cf

    if a.mode == "dump":
        rule = cf.rules.IdfTiers(**json.loads(a.rule))
        t0 = time.perf_counter()
        (dump_swe if a.set == "swe" else dump_short)(a.half, a.out, rule)
        print(f"dumped {a.set} parts in {time.perf_counter() - t0:.0f} s to {a.out}")
        return 0
    p = pl.read_parquet(a.out / f"{a.set}-parts.parquet")
    gold = json.loads((a.out / f"{a.set}-gold.json").read_text())
    axes = [(k, [float(x) for x in v.split(",")]) for k, v in (g.split("=") for g in a.grid)]
    records = []
    for point in itertools.product(*[vals for _k, vals in axes]):
        w = dict(zip([k for k, _v in axes], point, strict=True))
        m = (swe_metrics if a.set == "swe" else short_metrics)(p, gold, w)
        records.append({**{k: v for k, v in w.items()}, **m})
    print(se.render(records, False))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "2")
    sys.exit(main())

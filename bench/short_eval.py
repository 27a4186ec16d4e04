"""Short engineer questions (short_dev): gold symbols of httpx, Jinja2 and Rich, every system.

Usage::

    python bench/short_eval.py [--rules idf-tiers bm25 bm25-symbol-plain ...] [--half dev|test|all]
                               [--out DIR] [--no-abstain] [--markdown] [--long]

``../shared/eval/short_dev/`` (relative to the repo root; ``CTXFRAME_EVAL_DATA`` overrides the
``shared/eval`` folder) holds 75 questions on the sdists of httpx 0.28.1, Jinja2 3.1.4 and Rich
13.9.4 and 30 non-code prompts; its README is the contract followed here. The three sdists are
downloaded by package name (``pip download --no-deps --no-binary :all: NAME==VERSION``) into
``CACHE/short_dev/dl/``, checked against the README's sha256, unpacked to
``CACHE/short_dev/src/<name>-<version>/`` and indexed there once (``cf.index``; later runs
``cf.open`` the store), ``CACHE`` being ``bench/_common.py``'s cache dir.

Systems: ctxframe rules by name (``idf-tiers``, ``bm25``, ``flat-name-bonus``,
``idf-tiers-plain``, ``package.module:Rule``), run as ``g.query(question, limit=2000,
rule=...)``, and the standalone baselines of ``bench/_bm25.py`` (``bm25-file-plain``,
``bm25-file-ident``, ``bm25-file-plain-src``, ``bm25-symbol-plain``, ``bm25-symbol-ident``,
``bm25-symbol-plain-src``; ``bm25-symbol-plain`` is short_dev's own baseline, reproduced
exactly). The default prints an overview and Acc@1/5 pivots; ``--long`` every metric per group.

Scoring (short_dev/README, "Scoring rule"):

* a ctxframe system's ranked symbol list = its hits of kind ``function``, ``method`` or ``class``
  in rank order (files, module stubs, documents and sections left out); an id's ``#2``-style
  suffix (a second definition of one qualified name: overload, property setter) is dropped, as
  short_dev gives overloads one id. Gold ``path:Qual.name`` is ctxframe's ``path::Qual.name``.
* symbol rank = rank of the first returned symbol equal to a gold symbol, or defined inside a
  gold *class* (a method counts for its class; a class never counts for a method).
* file rank = rank, in the same symbol list, of the first symbol whose file is a gold file.
* ``bm25-file-*`` returns files, not symbols: no symbol rank; its file rank is the rank of the
  first gold file in its file list (identical in meaning at k = 1). ``dfile_acc@k`` puts every
  system on that footing: the rank of the first gold file among *distinct* files (ctxframe:
  files ordered by their best hit of any kind, file nodes included; ``bm25-symbol``: by their
  best symbol).
* ``jinja2-22`` (gold: only ``docs/switching.rst``) is left out of the figures and reported
  apart: the rank of that file among the files of all hits (ctxframe: files ordered by their
  best node of any kind; ``bm25-file``: its list; ``bm25-symbol`` cannot return it).

Acc@k = share of questions whose rank is <= k; MRR = mean of 1/rank (0 when not found).

Abstain: every non-code prompt (``short_dev/prompts-noncode-dev.jsonl``, 30, and the repo's
``data-samples/prompts-noncode.jsonl``, 35) is run against each of the three graphs with
``g.query(prompt, abstain=True)``; abstained = no hits. The share of the 75 real questions (each
on its own project's graph) that abstain is the wrong-abstain rate.

Halves (``bench/_splits.py``): the questions split into a ``dev`` (tuning) and a ``test``
(held-out) half, stratified by category and project; ``--half all`` runs every question and
reports both halves as well.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bm25
import _common as c
import _splits

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = c.eval_data_dir() / "short_dev"
NONCODE_REPO = REPO_ROOT / "data-samples" / "prompts-noncode.jsonl"
DEFAULT_OUT = c.RESULTS_DIR / "short"
DEFAULT_SYSTEMS = ("idf-tiers", "bm25", *_bm25.SYSTEMS)
LIMIT_HITS = 2000
SYMBOL_KINDS = frozenset({"function", "method", "class"})
KS = (1, 5)
CATEGORIES = "abcde"
# the sdists of short_dev/README's "Provenance" table
PROJECTS = {
    "httpx": ("0.28.1", "75e98c5f16b0f35b567856f597f06ff2270a374470a5c2392242528e3e3e42fc"),
    "jinja2": ("3.1.4", "4a3aee7acbbe7303aede8e9648d13b8bf88a429282aa6122a993f0ac800cb369"),
    "rich": ("13.9.4", "439594978a49a09530cff7ebc4b5c7103ef57baf48d5ea3184f21d9a2befa098"),
}
UNSCORED_DOC = "jinja2-22"


# --------------------------------------------------------------------------- sources


def short_cache() -> Path:
    """``CACHE/short_dev/``."""
    path = c.cache_dir() / "short_dev"
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256(path: Path) -> str:
    """Hex sha256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _find_archive(dl: Path, name: str, version: str) -> Path | None:
    wanted = f"{name}-{version}.tar.gz".lower()
    for p in dl.glob("*.tar.gz"):
        if p.name.lower() == wanted:
            return p
    return None


def ensure_sdist(name: str, version: str, digest: str) -> Path:
    """The sdist in ``CACHE/short_dev/dl/``, downloaded with pip when missing; sha256 checked."""
    dl = short_cache() / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    archive = _find_archive(dl, name, version)
    if archive is None:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        cmd += ["-q", "-d", str(dl), f"{name}=={version}"]
        c.log(f"downloading {name}=={version} sdist into {dl}")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        archive = _find_archive(dl, name, version)
        if proc.returncode != 0 or archive is None:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise c.Unavailable(f"pip download {name}=={version} failed: {tail[0]}")
    got = sha256(archive)
    if got != digest:
        raise c.Unavailable(f"{archive}: sha256 {got} is not short_dev's {digest}")
    return archive


def ensure_tree(name: str) -> Path:
    """``CACHE/short_dev/src/<name>-<version>/`` (the sdist root all gold paths are under)."""
    version, digest = PROJECTS[name]
    archive = ensure_sdist(name, version, digest)
    tree = short_cache() / "src" / f"{name}-{version}"
    if not tree.is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        c.log(f"extracting {archive.name} -> {tree}")
        c.extract_archive(archive, tree)
    return tree


def ensure_graph(tree: Path):
    """Open the stored index of ``tree`` (inside it), indexing it first when there is none."""
    return c.open_or_index(tree)


# --------------------------------------------------------------------------- data


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """JSON objects, one a line (blank and ``#`` lines skipped)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(json.loads(line))
    return out


def to_node_id(gold: str) -> str:
    """short_dev's ``path:Qual.name`` as ctxframe's node id ``path::Qual.name``."""
    path, _, qual = gold.partition(":")
    return f"{path}::{qual}"


def base_id(node_id: str) -> str:
    """A node id without ctxframe's ``#2`` suffix for a repeated qualified name."""
    head, sep, tail = node_id.rpartition("#")
    return head if sep and tail.isdigit() and "::" in head else node_id


# --------------------------------------------------------------------------- systems


def resolve_rule(spec: str):
    """A ctxframe rule: a registry name, ``idf-tiers-plain`` (the default rule without
    long-query evidence), a rule file (``FILE.toml``) or ``package.module:Name``."""
    import ctxframe as cf

    if spec == "idf-tiers-plain":
        return cf.rules.IdfTiers(evidence=False, name="idf-tiers-plain")
    if spec.endswith(".toml"):  # a rule file (cf.rules.save, bench/rank_fit.py)
        return cf.rules.load(spec)
    if ":" in spec:
        import importlib

        mod, _, attr = spec.partition(":")
        obj = getattr(importlib.import_module(mod), attr)
        return obj() if isinstance(obj, type) else obj
    return spec


class Ranked:
    """One system's answer to one question: a ranked symbol list and a ranked file list."""

    def __init__(self, symbols: list[str], symbol_paths: list[str], files: list[str]) -> None:
        self.symbols = symbols  # ids "path::Qual" (None when the system returns files only)
        self.symbol_paths = symbol_paths
        self.files = files  # distinct files, best first (all node kinds for ctxframe)


def rank_ctxframe(graph, text: str, rule) -> Ranked:
    """``g.query`` hits as a symbol list (function/method/class) and a file list."""
    hits = graph.query(text, limit=LIMIT_HITS, rule=rule).hits
    files = list(dict.fromkeys(p for p in hits["path"].to_list() if p is not None))
    sym = hits.filter(hits["kind"].is_in(list(SYMBOL_KINDS)))
    return Ranked([base_id(i) for i in sym["id"].to_list()], sym["path"].to_list(), files)


def rank_bm25(corpus: _bm25.Corpus, text: str) -> Ranked:
    """A baseline's ranking: symbols (``bm25-symbol``) or files only (``bm25-file``)."""
    order = corpus.search(text)
    if corpus.unit == "file":
        return Ranked(None, None, [corpus.ids[i] for i in order])
    paths = [corpus.paths[i] for i in order]
    return Ranked([corpus.ids[i] for i in order], paths, list(dict.fromkeys(paths)))


def score(ranked: Ranked, gold: Sequence[str], gold_files: Sequence[str], gold_kind) -> dict:
    """short_dev's symbol rank and file rank of one answer (None = not found)."""
    sym_rank = file_rank = None
    if ranked.symbols is None:  # a file ranker
        files = set(gold_files)
        file_rank = next((r for r, f in enumerate(ranked.files, 1) if f in files), None)
        return {"symbol_rank": None, "file_rank": file_rank}
    classes = [g for g in gold if gold_kind.get(g) == "class"]
    gold_set = set(gold)
    files = set(gold_files)
    for r, (sid, path) in enumerate(zip(ranked.symbols, ranked.symbol_paths, strict=True), 1):
        if sym_rank is None and (sid in gold_set or any(sid.startswith(g + ".") for g in classes)):
            sym_rank = r
        if file_rank is None and path in files:
            file_rank = r
        if sym_rank is not None and file_rank is not None:
            break
    return {"symbol_rank": sym_rank, "file_rank": file_rank}


# --------------------------------------------------------------------------- run


def run(questions, systems: Sequence[str], halves: dict[str, str]) -> tuple[list[dict], dict]:
    """Per (question, system) rows, and facts about the corpora (sizes, unmapped gold)."""
    import polars as pl

    by_project: dict[str, list[dict]] = {}
    for q in questions:
        by_project.setdefault(q["project"], []).append(q)
    rules = {s: resolve_rule(s) for s in systems if _bm25.parse_system(s) is None}
    rows: list[dict] = []
    facts: dict[str, Any] = {}
    for project, qs in sorted(by_project.items()):
        tree = ensure_tree(project)
        graph = ensure_graph(tree)
        t0 = time.perf_counter()
        corpora = _bm25.corpora(tree, graph, systems)
        kinds = dict(zip(graph.nodes["id"].to_list(), graph.nodes["kind"].to_list(), strict=True))
        sym_kinds = graph.nodes.filter(pl.col("kind").is_in(list(SYMBOL_KINDS)))
        facts[project] = {
            "tree": str(tree),
            "nodes": graph.nodes.height,
            "symbol_nodes": sym_kinds.height,
            "symbol_nodes_without_#n": sum("#" not in i for i in sym_kinds["id"].to_list()),
            "bm25_built_s": round(time.perf_counter() - t0, 2),
            **{
                f"{name}_docs": len(cp.ids)
                for name, cp in corpora.items()
                if name.endswith("-plain")
            },
            "unparsed_py": sorted({p for cp in corpora.values() for p in cp.unparsed}),
            "unmapped_gold": [],
        }
        for q in qs:
            gold = [to_node_id(s) for s in q["gold_symbols"]]
            missing = [g for g in gold if g not in kinds]
            facts[project]["unmapped_gold"].extend(missing)
            gold_kind = {g: kinds.get(g) for g in gold}
            base = {
                "id": q["id"],
                "project": project,
                "category": q["category"],
                "half": halves[q["id"]],
                "scorable": bool(gold),
                "n_gold": len(gold),
            }
            for system in systems:
                t1 = time.perf_counter()
                if system in rules:
                    ranked = rank_ctxframe(graph, q["question"], rules[system])
                else:
                    ranked = rank_bm25(corpora[system], q["question"])
                ms = (time.perf_counter() - t1) * 1000
                row = dict(base, system=system, ms=round(ms, 1))
                row.update(score(ranked, gold, q["gold_files"], gold_kind))
                # the rank of a gold file among distinct files (used for jinja2-22)
                gf = set(q["gold_files"])
                row["file_list_rank"] = next(
                    (r for r, f in enumerate(ranked.files, 1) if f in gf), None
                )
                row["top5"] = (ranked.symbols or ranked.files)[:5]
                rows.append(row)
        del graph
    return rows, facts


def measure_abstain(questions, halves: dict[str, str], data: Path = DATA_DIR) -> dict[str, Any]:
    """Non-code prompts abstained per graph, and real questions wrongly abstained."""
    sets = {}
    dev_prompts = data / "prompts-noncode-dev.jsonl"
    if dev_prompts.is_file():
        sets["short_dev/prompts-noncode-dev"] = [
            (p["id"], p["prompt"]) for p in read_jsonl(dev_prompts)
        ]
    if NONCODE_REPO.is_file():
        sets["data-samples/prompts-noncode"] = [
            (p["id"], p["query"]) for p in read_jsonl(NONCODE_REPO)
        ]
    # the prompts split too (stratified by set), for a tuner that must not see the test half
    prompt_half = _splits.assign((pid, name) for name, ps in sets.items() for pid, _t in ps)
    prompt_rows = []
    question_rows = []
    for project in sorted(PROJECTS):
        graph = ensure_graph(ensure_tree(project))
        for set_name, prompts in sets.items():
            for pid, text in prompts:
                res = graph.query(text, abstain=True)
                prompt_rows.append(
                    {
                        "set": set_name,
                        "graph": project,
                        "id": pid,
                        "half": prompt_half[pid],
                        "abstained": res.hits.height == 0,
                        "top": None if res.hits.height == 0 else res.hits["id"][0],
                    }
                )
        for q in questions:
            if q["project"] != project:
                continue
            res = graph.query(q["question"], abstain=True)
            question_rows.append(
                {
                    "id": q["id"],
                    "project": project,
                    "half": halves[q["id"]],
                    "abstained": res.hits.height == 0,
                    "reason": res.abstained,
                }
            )
        del graph
    return {"prompts": prompt_rows, "questions": question_rows}


# --------------------------------------------------------------------------- tables


def summarise(rows: list[dict], group: str) -> list[dict]:
    """Metrics (in %) per (group value, system) plus ``all``; only scorable questions."""
    out = []
    systems = list(dict.fromkeys(r["system"] for r in rows))
    scorable = [r for r in rows if r["scorable"]]
    values = [*sorted({r.get(group) for r in scorable} - {None}), "all"]
    for value in values:
        for system in systems:
            sel = [
                r
                for r in scorable
                if r["system"] == system and (value == "all" or r[group] == value)
            ]
            if not sel:
                continue
            n = len(sel)
            rec: dict[str, Any] = {group: value, "system": system, "n": n}
            file_only = (_bm25.parse_system(system) or ("", ""))[0] == "file"
            for level in ("symbol", "file"):
                for k in KS:
                    key = f"{level}_acc@{k}"
                    if level == "symbol" and file_only:
                        rec[key] = None
                        continue
                    hits = sum(1 for r in sel if (r[f"{level}_rank"] or 10**9) <= k)
                    rec[key] = round(100 * hits / n, 1)
                mrr = sum(1 / r[f"{level}_rank"] for r in sel if r[f"{level}_rank"]) / n
                rec[f"{level}_mrr"] = (
                    None if (level == "symbol" and file_only) else round(100 * mrr, 1)
                )
            for k in KS:  # rank among distinct files (what a file ranker returns)
                hits = sum(1 for r in sel if (r["file_list_rank"] or 10**9) <= k)
                rec[f"dfile_acc@{k}"] = round(100 * hits / n, 1)
            rec["median_ms"] = round(sorted(r["ms"] for r in sel)[n // 2], 1)
            out.append(rec)
    return out


def pivot(table: list[dict], group: str, level: str) -> list[dict]:
    """One row per system, one ``Acc@1 / Acc@5`` column per group value (with ``n``)."""
    out: dict[str, dict] = {}
    for rec in table:
        row = out.setdefault(rec["system"], {"system": rec["system"]})
        one, five = rec[f"{level}_acc@1"], rec[f"{level}_acc@5"]
        cell = "-" if one is None else f"{one:.1f} / {five:.1f}"
        row[f"{rec[group]} (n={rec['n']})"] = cell
    # file rankers have no symbol level: no row of dashes
    return [r for r in out.values() if any(v != "-" for k, v in r.items() if k != "system")]


def abstain_tables(ab: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """Per (set, graph) share of prompts abstained; per (half) share of questions abstained."""
    prompt_t = []
    keys = list(dict.fromkeys((r["set"], r["graph"]) for r in ab["prompts"]))
    for set_name, graph in keys:
        sel = [r for r in ab["prompts"] if r["set"] == set_name and r["graph"] == graph]
        n_ab = sum(r["abstained"] for r in sel)
        prompt_t.append(
            {
                "set": set_name,
                "graph": graph,
                "prompts": len(sel),
                "abstained": n_ab,
                "abstained_%": round(100 * n_ab / len(sel), 1),
            }
        )
        for half in _splits.HALVES:
            part = [r for r in sel if r["half"] == half]
            pct = 100 * sum(r["abstained"] for r in part) / len(part) if part else None
            prompt_t[-1][f"{half}_%"] = None if pct is None else round(pct, 1)
        answered = [r["id"] for r in sel if not r["abstained"]]
        prompt_t[-1]["answered"] = ", ".join(answered)
    question_t = []
    for half in (*_splits.HALVES, "all"):
        sel = [r for r in ab["questions"] if half == "all" or r["half"] == half]
        if not sel:
            continue
        n_ab = sum(r["abstained"] for r in sel)
        question_t.append(
            {
                "half": half,
                "questions": len(sel),
                "wrongly_abstained": n_ab,
                "wrong_%": round(100 * n_ab / len(sel), 1),
                "ids": ", ".join(r["id"] for r in sel if r["abstained"]),
            }
        )
    return prompt_t, question_t


def render(records: list[dict], markdown: bool) -> str:
    """A list of flat dicts as a Markdown or plain text table."""
    if not records:
        return "(none)"
    cols = list(records[0])
    if markdown:
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in records:
            lines.append("| " + " | ".join("-" if r[k] is None else str(r[k]) for k in cols) + " |")
        return "\n".join(lines)
    cells = [[c.fmt(r[k], 1) if isinstance(r[k], float) else r[k] for k in cols] for r in records]
    return c.format_table(cols, cells)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA_DIR, help="the short_dev folder")
    ap.add_argument(
        "--rules",
        nargs="+",
        default=list(DEFAULT_SYSTEMS),
        help="ctxframe rules and/or baselines (bm25-file-plain|ident, bm25-symbol-plain|ident)",
    )
    ap.add_argument("--half", choices=_splits.CHOICES, default="all", help="which half to run")
    ap.add_argument("--project", action="append", default=None, help="only this project")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory")
    ap.add_argument("--no-abstain", action="store_true", help="skip the abstain measure")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument(
        "--long", action="store_true", help="every metric per group (default: Acc@1/5 pivots)"
    )
    a = ap.parse_args(argv)

    qfile = a.data / "questions-dev.jsonl"
    if not qfile.is_file():
        print(f"short_eval: no data at {qfile}; skipped", file=sys.stderr)
        return 0
    questions = read_jsonl(qfile)
    halves = _splits.short_halves(questions)  # over the whole set, before any filter
    questions = _splits.pick(questions, halves, a.half, lambda q: q["id"])
    if a.project:
        questions = [q for q in questions if q["project"] in set(a.project)]
    counts = {h: sum(1 for q in questions if halves[q["id"]] == h) for h in _splits.HALVES}
    n_q = len(questions)
    print(f"half: {a.half} ({n_q} questions: dev {counts['dev']}, test {counts['test']})")
    t0 = time.perf_counter()
    try:
        rows, facts = run(questions, a.rules, halves)
    except c.Unavailable as exc:
        print(f"short_eval: {exc}", file=sys.stderr)
        return 1

    out: dict[str, Any] = {
        "machine": c.machine_info(),
        "half": a.half,
        "systems": list(a.rules),
        "questions": len(questions),
        "corpora": facts,
    }
    halves_run = [a.half] if a.half != "all" else ["all", *_splits.HALVES]
    overview = []
    for half in halves_run:
        sel = [r for r in rows if half == "all" or r["half"] == half]
        for rec in summarise(sel, "half_"):
            overview.append({"half": half, **{k: v for k, v in rec.items() if k != "half_"}})
    out["overview"] = overview
    print("\n## overview (scorable questions; metrics in %)")
    print(render(overview, a.markdown))
    for half in halves_run:
        sel = [r for r in rows if half == "all" or r["half"] == half]
        n_q = len({r["id"] for r in sel if r["scorable"]})
        for group in ("category", "project"):
            table = summarise(sel, group)
            out[f"by_{group}_{half}"] = table
            if a.long:
                print(f"\n## half {half}: by {group} ({n_q} scorable questions; metrics in %)")
                print(render(table, a.markdown))
                continue
            for level in ("symbol", "file"):
                print(
                    f"\n## half {half}: {level} Acc@1 / Acc@5 by {group} "
                    f"({n_q} scorable questions; %)"
                )
                print(render(pivot(table, group, level), a.markdown))
    doc_rows = [r for r in rows if r["id"] == UNSCORED_DOC]
    if doc_rows:
        print(f"\n## {UNSCORED_DOC} (gold only docs/switching.rst; not in the figures above)")
        doc_t = [{"system": r["system"], "file_list_rank": r["file_list_rank"]} for r in doc_rows]
        print(render(doc_t, a.markdown))
        out["unscored"] = doc_t
    for project, f in facts.items():
        if f["unmapped_gold"]:
            print(f"{project}: gold symbols not ctxframe nodes: {f['unmapped_gold']}")
    if not a.no_abstain:
        ab = measure_abstain(questions, halves, a.data)
        prompt_t, question_t = abstain_tables(ab)
        print("\n## abstain: non-code prompts (g.query(p, abstain=True) returns no hits)")
        print(
            render([{k: v for k, v in r.items() if k != "answered"} for r in prompt_t], a.markdown)
        )
        for r in prompt_t:
            print(f"  answered on {r['graph']} ({r['set']}): {r['answered'] or '-'}")
        print("\n## abstain: real questions wrongly abstained (each on its own project's graph)")
        print(render(question_t, a.markdown))
        out["abstain_prompts"] = prompt_t
        out["abstain_questions"] = question_t
        out["abstain_rows"] = ab
    out["elapsed_s"] = round(time.perf_counter() - t0, 1)
    a.out.mkdir(parents=True, exist_ok=True)
    c.write_json(a.out / f"summary-{a.half}.json", out)
    with open(a.out / f"rows-{a.half}.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "2")
    sys.exit(main())

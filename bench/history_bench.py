"""The git history in the graph (issue 41): read cold against `git log --numstat`, update after
one new commit, what it adds to a cold index, revisions and change coupling against an
independent reference, warm analyses, and the per-function history against `git log -L`.

    python bench/history_bench.py [--repo numpy pytest] [--repeat 3] [--functions 12]
                                  [--mirrors /work/.mirror] [--out FILE]

Each repository is a full clone's git directory (the search tool's `fetch github:OWNER/NAME`
puts it in `/work/.mirror/OWNER+NAME/repo`; `--mirrors` or CTXFRAME_BENCH_MIRRORS moves it),
cloned `--shared` into `~/.cache/ctxframe-bench/history/NAME` once (a blob the mirror left out
gets an empty stand-in through `git replace`, so `git log --numstat` can read every commit).
Nothing is copied into this repository.

The reference for revisions and coupling is independent of ctxframe's code: the readable
`git log --numstat -M` output (renames written `dir/{old => new}`), parsed line by line in
plain Python, code-maat's definitions applied with dicts and Counters.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import _common as C

REPOS = {"numpy": "numpy+numpy", "pytest": "pytest-dev+pytest", "django": "django+django"}
TARGETS = {
    "read/git": "<= 1.5",
    "update s": "< 1",
    "revisions equal": "yes",
    "coupling equal": "yes",
    "hotspots warm s": "< 2",
    "coupling warm s": "< 2",
    'g.audit("hotspots") warm s': "< 2",
    'g.audit("coupling") warm s': "< 2",
}


def _git(cwd: Path, *args: str, env: dict | None = None) -> str:
    out = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)  # fmt: skip
    if out.returncode != 0:
        raise C.Unavailable(f"git {args[0]} failed in {cwd}: {out.stderr.strip()[:200]}")
    return out.stdout


def ensure_tree(name: str, mirrors: Path) -> Path:
    """A work tree of the mirrored repository, cloned --shared into the bench cache."""
    src = mirrors / REPOS.get(name, name.replace("/", "+")) / "repo"
    dest = C.cache_dir() / "history" / name
    if not dest.is_dir():
        if not src.is_dir():
            raise C.Unavailable(
                f"no git directory for {name} at {src}: fetch it first (the search tool's "
                f"`fetch github:{REPOS.get(name, name).replace('+', '/')}`)"
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        C.log(f"cloning {src} into {dest} (--shared)")
        subprocess.run(["git", "clone", "-q", "--shared", str(src), str(dest)], check=True)
        with open(dest / ".git" / "info" / "exclude", "a", encoding="utf-8") as fh:
            fh.write(".ctxframe/\n")
    listed = _git(dest, "rev-list", "--objects", "--missing=print", "HEAD").splitlines()
    missing = [line[1:] for line in listed if line.startswith("?")]
    if missing:
        stand_in = subprocess.run(
            ["git", "-C", str(dest), "hash-object", "-w", "--stdin"],
            input="", capture_output=True, text=True,
        ).stdout.strip()
        for sha in missing:
            _git(dest, "replace", "-f", sha, stand_in)
        C.log(f"{name}: {len(missing)} blob(s) missing from the mirror replaced by an empty one")
    return dest


# -- the independent reference -------------------------------------------------------------------


def _unbrace(path: str) -> tuple[str, str | None]:
    """`a/{b => c}/d` -> (`a/c/d`, `a/b/d`); `x => y` -> (`y`, `x`); else (path, None)."""
    if " => " not in path:
        return path, None
    if "{" in path and "}" in path:
        pre, rest = path.split("{", 1)
        mid, post = rest.split("}", 1)
        old, new = mid.split(" => ", 1)
        norm = lambda p: p.replace("//", "/").lstrip("/")  # noqa: E731
        return norm(pre + new + post), norm(pre + old + post)
    old, new = path.split(" => ", 1)
    return new, old


def reference(tree: Path, follow: bool) -> tuple[Counter, dict]:
    """(revisions per entity, coupling pairs) from `git log --numstat -M` text, code-maat's
    definitions (max changeset 30, min revs 5, min shared 5, min degree 30)."""
    text = _git(tree, "-c", "core.quotepath=off", "log", "--numstat", "-M", "--relative",
                "--format=@@%H")  # fmt: skip
    commits: list[list[tuple[str, str | None]]] = []
    for line in text.splitlines():
        if line.startswith("@@"):
            commits.append([])
        elif line and commits:
            _added, _deleted, path = line.split("\t", 2)
            commits[-1].append(_unbrace(path))
    later: dict[str, str] = {}
    sets: list[set[str]] = []
    for files in commits:  # newest first
        names = set()
        for new, _old in files:
            names.add(later.get(new, new) if follow else new)
        if follow:
            for new, old in files:
                if old is not None:
                    later[old] = later.get(new, new)
        sets.append(names)
    revisions = Counter(n for s in sets for n in s)
    kept = [s for s in sets if len(s) <= 30]
    revs = Counter(n for s in kept for n in s)
    shared = Counter(p for s in kept for p in itertools.combinations(sorted(s), 2))
    pairs = {}
    for (a, b), n in shared.items():
        avg = (revs[a] + revs[b]) / 2
        degree = n / avg * 100
        if avg >= 5 and n >= 5 and degree >= 30:
            pairs[(a, b)] = (n, int(degree))
    return revisions, pairs


def compare(tree: Path) -> dict:
    from ctxframe._history import analyses as A
    from ctxframe._history import gitlog

    commits, changes = gitlog.read_log(str(tree), ["HEAD"])
    out = {}
    for follow in (False, True):
        rows = A.entities(commits, changes, follow_renames=follow)
        ours_revs = dict(A.revisions(rows).select("entity", "revisions").iter_rows())
        coupled = A.coupling(rows).select("a", "b", "shared", "degree")
        ours_pairs = {(a, b): (n, int(d)) for a, b, n, d in coupled.iter_rows()}
        ref_revs, ref_pairs = reference(tree, follow)
        key = "renames followed" if follow else "paths as logged"
        out[key] = {
            "entities": len(ref_revs),
            "revisions_differ": sum(
                1 for k in set(ref_revs) | set(ours_revs) if ref_revs.get(k) != ours_revs.get(k)
            ),
            "pairs": len(ref_pairs),
            "pairs_differ": len(set(ref_pairs.items()) ^ set(ours_pairs.items())),
        }
    return out


# -- timings --------------------------------------------------------------------------------------


def read_cold(tree: Path, repeat: int) -> dict:
    """`git log --numstat` (the command ctxframe runs) against ctxframe's whole read: git, the
    parse into frames, the two Parquet tables written; interleaved, medians."""
    from ctxframe._history import gitlog

    head = _git(tree, "rev-parse", "HEAD").strip()
    cmd = gitlog.log_command(str(tree), [head])
    git_s, ours_s = [], []
    scratch = Path(tempfile.mkdtemp(prefix="ctxframe-history-bench-"))
    try:
        for _ in range(repeat):
            m = C.run_measured(cmd)  # its output read into a file, as ctxframe reads a pipe
            git_s.append(m.wall_s)
            t = time.perf_counter()
            commits, changes = gitlog.read_log(str(tree), [head])
            commits.write_parquet(scratch / "commits.parquet")
            changes.write_parquet(scratch / "changes.parquet")
            ours_s.append(time.perf_counter() - t)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"git_s": statistics.median(git_s), "read_s": statistics.median(ours_s),
            "git_runs": git_s, "read_runs": ours_s, "commits": commits.height,
            "changes": changes.height}  # fmt: skip


def _index(cli: list[str], tree: Path, *extra: str, env: dict | None = None) -> C.Measurement:
    m = C.run_measured([*cli, "index", "--repo", str(tree), "--no-progress", "--json", *extra],
                       env=env, timeout=1800)  # fmt: skip
    if not m.ok:
        raise C.Unavailable(f"ctxframe index failed: {m.failure()}")
    return m


def cold_index(cli: list[str], tree: Path, repeat: int) -> dict:
    """A cold `index --rebuild --no-cache` with history (its default: a first read of a long
    history goes to the background job) against `--no-history`, interleaved; and how long
    until the background job has written the history."""
    from ctxframe._store.history import wait_history

    store = tree / ".ctxframe" / "graph"
    off, on, ready, cpu_off, cpu_on = [], [], [], [], []
    for _ in range(repeat):
        m = _index(cli, tree, "--rebuild", "--no-cache", "--no-history")
        off.append(m.wall_s)
        cpu_off.append(m.user_s + m.sys_s)
        t = time.perf_counter()
        m = _index(cli, tree, "--rebuild", "--no-cache")
        on.append(m.wall_s)
        cpu_on.append(m.user_s + m.sys_s)  # the index's own, pool workers included
        wait_history(str(store))
        ready.append(time.perf_counter() - t)
    return {"no_history_s": statistics.median(off), "history_s": statistics.median(on),
            "history_ready_s": statistics.median(ready), "runs_off": off, "runs_on": on,
            "runs_ready": ready, "cpu_no_history_s": statistics.median(cpu_off),
            "cpu_history_s": statistics.median(cpu_on), "runs_cpu_off": cpu_off,
            "runs_cpu_on": cpu_on}  # fmt: skip


def update_after_commit(cli: list[str], tree: Path) -> dict:
    """On a shared clone of the tree indexed with its history: one new commit, then the
    history's own update (in-process: plan and read) and a whole `ctxframe index` run."""
    import ctxframe as cf
    from ctxframe._history import update
    from ctxframe._history.settings import HistorySettings
    from ctxframe._store import history as stored
    from ctxframe._store.tables import Snapshot

    work = Path(tempfile.mkdtemp(prefix="ctxframe-history-update-"))
    try:
        copy = work / "tree"
        subprocess.run(["git", "clone", "-q", "--shared", str(tree), str(copy)], check=True)
        for ref in _git(tree, "for-each-ref", "--format=%(refname)", "refs/replace").split():
            _git(copy, "fetch", "-q", str(tree), f"{ref}:{ref}")
        _index(cli, copy, env={"CTXFRAME_HISTORY_INLINE_MAX": "10000000"})
        target = max((p for p in copy.rglob("*.py") if ".git" not in p.parts),
                     key=lambda p: p.stat().st_size)  # fmt: skip
        with open(target, "a", encoding="utf-8") as fh:
            fh.write("\n\ndef ctxframe_bench_added():\n    return 1\n")
        env = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@b",
               "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
        _git(copy, "commit", "-q", "-am", "bench: one new commit", env=env)
        snap = Snapshot(str(copy / ".ctxframe" / "graph"))
        state = stored.stored_state(snap)
        t = time.perf_counter()
        p = update.plan(str(copy), HistorySettings(), state)
        got = update.read(str(copy), p, HistorySettings(),
                          stored=lambda: (snap.read("commits"), snap.read("changes")))  # fmt: skip
        history_s = time.perf_counter() - t
        m = _index(cli, copy)
        report = C.parse_json_output(m.stdout)
        g = cf.open(str(copy))
        return {"action": p.action, "history_update_s": history_s, "index_s": m.wall_s,
                "index_history": report.get("history"), "commits": got[0].height,
                "graph_commits": g.commits.height}  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


def warm(tree: Path, repeat: int) -> dict:
    import ctxframe as cf

    g = cf.open(str(tree))
    out = {}
    calls = {
        "hotspots": lambda: g.hotspots(),
        "coupling": lambda: g.coupling(),
        "hidden_coupling": lambda: g.hidden_coupling(),
        "ownership": lambda: g.ownership(),
        "audit_hotspots": lambda: _Rows(g.audit("hotspots"), "hotspots"),
        "audit_coupling": lambda: _Rows(g.audit("coupling"), "coupling"),
    }
    for name, call in calls.items():
        t = time.perf_counter()
        call()
        first = time.perf_counter() - t
        runs = []
        for _ in range(repeat):
            t = time.perf_counter()
            res = call()
            runs.append(time.perf_counter() - t)
        out[name] = {"first_s": first, "warm_s": statistics.median(runs),
                     "rows": res.frame.height}  # fmt: skip
    out["top_hotspots"] = g.hotspots(limit=5).frame["entity"].head(5).to_list()
    out["top_hidden"] = g.hidden_coupling().frame.select("a", "b").head(5).rows()
    return out


class _Rows:
    """An audit as the rows of one of its frames (what `warm` counts)."""

    def __init__(self, audit, frame: str):
        self.frame = audit.frames[frame]


def functions_check(tree: Path, n: int) -> dict:
    """Per-function history of the hottest Python file against `git log -L --first-parent`
    (n functions sampled), and `git blame` (the alternative) on the same functions."""
    import random

    import polars as pl

    import ctxframe as cf
    from ctxframe._history.functions import blame_history, function_history

    g = cf.open(str(tree))
    hot = g.hotspots(limit=50).frame.filter(pl.col("entity").str.ends_with(".py"))
    path = hot["entity"][0]
    fns = g.nodes.filter((pl.col("path") == path) & pl.col("kind").is_in(["function", "method"]))
    fns = fns.select("id", "line_start", "line_end")
    t = time.perf_counter()
    ours = function_history(str(tree), path, fns)
    ours_s = time.perf_counter() - t
    t = time.perf_counter()
    blame = blame_history(str(tree), path, fns)
    blame_s = time.perf_counter() - t
    random.seed(41)
    sample = random.sample(fns.rows(), min(n, fns.height))
    agree = agree_blame = 0
    t = time.perf_counter()
    for fid, s, e in sample:
        out = _git(tree, "log", "-L", f"{s},{e}:{path}", "--first-parent", "--no-patch",
                   "--format=%H")  # fmt: skip
        truth = len({x for x in out.split() if x})
        agree += ours.filter(pl.col("id") == fid)["revisions"][0] == truth
        b = blame.filter(pl.col("id") == fid)["revisions"]
        agree_blame += (b[0] if b.len() else 0) == truth
    log_l = (time.perf_counter() - t) / max(1, len(sample))
    return {"file": path, "functions": fns.height, "sampled": len(sample),
            "hunks_s": ours_s, "hunks_agree": agree, "blame_s": blame_s,
            "blame_agree": agree_blame, "log_L_s_per_function": log_l}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", nargs="+", default=["numpy", "pytest"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--functions", type=int, default=12, help="functions checked with log -L")
    ap.add_argument("--mirrors", default=os.environ.get("CTXFRAME_BENCH_MIRRORS", "/work/.mirror"))
    ap.add_argument("--skip-index", action="store_true", help="no cold index comparison")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    cli = C.check_ctxframe_cli("history")
    results: dict = {"machine": C.machine_info(), "repos": {}}
    for name in a.repo:
        try:
            tree = ensure_tree(name, Path(a.mirrors))
        except C.Unavailable as exc:
            C.log(f"{name}: skipped: {exc}")
            results["repos"][name] = {"skipped": str(exc)}
            continue
        r: dict = {"tree": str(tree), "head": _git(tree, "rev-parse", "HEAD").strip()}
        C.log(f"{name}: cold read against git log --numstat")
        r["read"] = read_cold(tree, a.repeat)
        C.log(f"{name}: revisions and coupling against the reference")
        r["equal"] = compare(tree)
        if not a.skip_index:
            C.log(f"{name}: cold index with and without history")
            r["cold_index"] = cold_index(cli, tree, a.repeat)
        else:
            _index(cli, tree, env={"CTXFRAME_HISTORY_INLINE_MAX": "10000000"})
        C.log(f"{name}: one new commit")
        r["update"] = update_after_commit(cli, tree)
        C.log(f"{name}: warm analyses")
        r["warm"] = warm(tree, 5)
        C.log(f"{name}: per-function history against git log -L")
        r["functions"] = functions_check(tree, a.functions)
        results["repos"][name] = r
    rows = _table(results["repos"])
    names = [n for n, r in results["repos"].items() if "skipped" not in r]
    print(C.format_table(["measure", *names, "target"], rows))
    C.write_json(Path(a.out) if a.out else C.default_out("history"), results)
    return 0 if names else 1


def _table(repos: dict) -> list[list]:
    done = {n: r for n, r in repos.items() if "skipped" not in r}

    def row(label: str, get) -> list:
        vals = []
        for r in done.values():
            try:
                vals.append(get(r))
            except (KeyError, TypeError):
                vals.append(None)
        return [label, *vals, TARGETS.get(label, "")]

    def eq(r, key):
        e = r["equal"][key]
        return (f"{e['entities'] - e['revisions_differ']}/{e['entities']} revs, "
                f"{e['pairs'] - e['pairs_differ']}/{e['pairs']} pairs")  # fmt: skip

    return [
        row("commits", lambda r: r["read"]["commits"]),
        row("changes", lambda r: r["read"]["changes"]),
        row("git log --numstat s", lambda r: r["read"]["git_s"]),
        row("read s", lambda r: r["read"]["read_s"]),
        row("read/git", lambda r: r["read"]["read_s"] / r["read"]["git_s"]),
        row("update s", lambda r: r["update"]["history_update_s"]),
        row("index after commit s", lambda r: r["update"]["index_s"]),
        row("cold index --no-history s", lambda r: r["cold_index"]["no_history_s"]),
        row("cold index s", lambda r: r["cold_index"]["history_s"]),
        row("history ready s", lambda r: r["cold_index"]["history_ready_s"]),
        row("cold index CPU --no-history s", lambda r: r["cold_index"]["cpu_no_history_s"]),
        row("cold index CPU s", lambda r: r["cold_index"]["cpu_history_s"]),
        row("revisions equal", lambda r: _same(r, "revisions_differ")),
        row("coupling equal", lambda r: _same(r, "pairs_differ")),
        row("  as logged", lambda r: eq(r, "paths as logged")),
        row("  renames followed", lambda r: eq(r, "renames followed")),
        row("hotspots warm s", lambda r: r["warm"]["hotspots"]["warm_s"]),
        row("hotspots first s", lambda r: r["warm"]["hotspots"]["first_s"]),
        row("coupling warm s", lambda r: r["warm"]["coupling"]["warm_s"]),
        row("hidden coupling warm s", lambda r: r["warm"]["hidden_coupling"]["warm_s"]),
        row("ownership warm s", lambda r: r["warm"]["ownership"]["warm_s"]),
        row('g.audit("hotspots") warm s', lambda r: r["warm"]["audit_hotspots"]["warm_s"]),
        row('g.audit("coupling") warm s', lambda r: r["warm"]["audit_coupling"]["warm_s"]),
        row("fn history (hunks) s", lambda r: r["functions"]["hunks_s"]),
        row("  = log -L", lambda r: _agree(r, "hunks_agree")),
        row("fn history (blame) s", lambda r: r["functions"]["blame_s"]),
        row("  = log -L ", lambda r: _agree(r, "blame_agree")),
        row("git log -L s / function", lambda r: r["functions"]["log_L_s_per_function"]),
    ]


def _same(r: dict, key: str) -> str:
    e = r["equal"]
    return "no" if e["paths as logged"][key] or e["renames followed"][key] else "yes"


def _agree(r: dict, key: str) -> str:
    return f"{r['functions'][key]}/{r['functions']['sampled']}"


if __name__ == "__main__":
    sys.exit(main())

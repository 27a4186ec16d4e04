"""Fault benchmark: wrong answers, aborted indexes, tracebacks, orphans and stored secrets.

Usage::

    python bench/faults_bench.py [--code DIR] [--flips 88] [--kills 20] [--fuzz 600]
                                 [--out bench/results/faults.json]

Runs each experiment of issue 17 against the ctxframe found on `sys.path` (or the source tree
`--code DIR`, e.g. an older checkout, to compare) and prints one row per experiment:

* wrong answers, four routes: a stale derived cache, a long-lived Graph mixing store versions,
  a damaged part that still decodes kept by an incremental index, `status` false stale in a
  tree holding a symlink and an unreadable directory;
* malformed non-code files (and a non-UTF-8 file name) that abort the index;
* tracebacks (an exception that is not a CtxframeError) on single-bit flips of store files
  (query, card, index), on fuzzed input to every verb (Graph methods and the CLI) and on a
  full disk (a small tmpfs; skipped with the reason when it cannot be mounted);
* orphan processes after SIGKILLs of `ctxframe index` at random points;
* planted secrets found in the store outside the `doc` column.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data-samples" / "shop"


def _cf():
    import ctxframe

    return ctxframe


def _is_clean_error(exc: BaseException) -> bool:
    return isinstance(exc, _cf().CtxframeError)


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)


def _store_files(store: str) -> list[Path]:
    """The table files of the store's current version (the flat directory of an older store)."""
    cur = Path(store) / "current"
    base = Path(store) / os.readlink(cur) if cur.is_symlink() else Path(store)
    return sorted(p for p in base.rglob("*") if p.suffix in (".parquet", ".arrow"))


def _tables(store: str) -> dict:
    import polars as pl

    from ctxframe._store import tables as t

    out = {}
    for name in ("nodes", "edges", "files", "tokens"):
        frame = t.read_table(store, name)
        if name == "files":
            frame = frame.drop("mtime_ns")
        out[name] = frame.sort(pl.all(), nulls_last=True)
    return out


def _same_tables(a: str, b: str) -> bool:
    ta, tb = _tables(a), _tables(b)
    return all(ta[n].equals(tb[n]) for n in ta)


# ------------------------------------------------------------------------------ wrong answers
def route_stale_cache(work: Path) -> bool:
    """A Graph opened before a re-index builds its rank cache after it: a fresh reader must
    still rank the new function first."""
    cf = _cf()
    repo = work / "cache"
    two = "def {}():\n    return 1\n\ndef middle_fn():\n    return 2\n"
    _write(repo, {"a.py": two.format("alpha_unique_fn"), "b.py": "x = 1\n"})
    cf.index(str(repo), progress=False)  # warm-up: the two timed runs below are fast
    time.sleep(1.02 - time.time() % 1)  # both runs within one second, as the issue found
    cf.index(str(repo), progress=False)
    old = cf.open(str(repo))
    repr(old), old.tokens, old.edges  # shown in a notebook: its frames are read
    (repo / "a.py").write_text(two.format("zeta_unique_fn"))  # same counts, new order
    cf.index(str(repo), progress=False)
    old.query("alpha unique fn")  # builds (and caches) its rank index, of the old version
    old.card("a.py")
    hits = cf.open(str(repo)).query("zeta_unique_fn", limit=3).hits
    return not (hits.height and hits["id"][0] == "a.py::zeta_unique_fn")


def route_mixed_versions(work: Path) -> bool:
    """A long-lived Graph reads nodes, then the store is re-indexed, then it reads edges."""
    cf = _cf()
    repo = work / "mixed"
    _write(repo, {"a.py": "def f():\n    return g()\n\ndef g():\n    return 1\n"})
    cf.index(str(repo), progress=False)
    g = cf.open(str(repo))
    nodes = g.nodes
    body = "".join(f"def h{i}():\n    return f()\n\n" for i in range(40))
    (repo / "b.py").write_text("from a import f\n\n" + body)
    cf.index(str(repo), progress=False)
    edges = g.edges
    ids = set(nodes["id"].to_list())
    srcs = set(edges["src"].to_list())
    return not srcs <= ids


def route_accepted_corruption(work: Path) -> bool:
    """A part damaged in a way that still decodes (a rewritten row): the next incremental
    index must not keep it, and `status` must not call that store fresh."""
    import polars as pl

    cf = _cf()
    repo = work / "corrupt"
    shutil.copytree(SAMPLE, repo)
    g = cf.index(str(repo), progress=False)
    nodes_file = next(p for p in _store_files(g.store) if p.parent.name == "nodes")
    frame = pl.read_parquet(nodes_file)
    bad = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 5).then(pl.lit("eb/serc/BAD")).otherwise("id").alias("id")
    )
    data = io.BytesIO()
    bad.write_parquet(data, compression="snappy", statistics=False)
    os.chmod(nodes_file, 0o644)
    with open(nodes_file, "r+b") as fh:  # in place: every hard link of the part sees it
        fh.write(data.getvalue())
        fh.truncate()
    (repo / "services" / "payments" / "gateway.py").write_text(
        (repo / "services" / "payments" / "gateway.py").read_text() + "\n# touched\n"
    )
    with contextlib.suppress(Exception):
        cf.index(str(repo), progress=False)
    full = str(work / "corrupt-full")
    cf.index(str(repo), store=full, rebuild=True, progress=False)
    try:
        return not _same_tables(g.store, full)
    except Exception as exc:
        return not _is_clean_error(exc)


def route_false_stale(work: Path) -> bool:
    """`status` right after `index` in a tree with a symlink and an unreadable directory."""
    cf = _cf()
    repo = work / "stale"
    _write(repo, {"a.py": "def f():\n    return 1\n", "locked/b.py": "x = 1\n"})
    os.symlink("a.py", repo / "link.py")
    real_scandir = os.scandir

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    os.scandir = scandir  # root reads any directory: refuse this one as a user's walk would
    try:
        cf.index(str(repo), progress=False)
        return not cf.status(str(repo)).fresh
    finally:
        os.scandir = real_scandir


def wrong_answers(work: Path) -> dict:
    routes = {
        "stale cache": route_stale_cache,
        "mixed versions": route_mixed_versions,
        "accepted corruption": route_accepted_corruption,
        "false stale": route_false_stale,
    }
    out = {}
    for name, fn in routes.items():
        try:
            out[name] = bool(fn(work))
        except Exception as exc:  # an experiment that cannot even run counts as wrong
            out[name] = f"error: {type(exc).__name__}: {exc}"[:200]
    return {"count": sum(1 for v in out.values() if v), "total": len(out), "routes": out}


# ------------------------------------------------------------------------------ malformed files
DEEP = 5000
MALFORMED: dict[str, tuple[str, str | bytes]] = {
    "k8s metadata list": ("deploy/a.yaml", "apiVersion: v1\nkind: Service\nmetadata: [a, b]\n"),
    "k8s secret data int": ("deploy/s.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n"
                            "  name: s\ndata: 5\n"),
    "k8s spec string": ("deploy/d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                        "  name: d\nspec: x\n"),
    "k8s containers int": ("deploy/c.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                           "  name: d\nspec:\n  template:\n    spec:\n      containers: 5\n"),
    "k8s kind list": ("deploy/k.yaml", "apiVersion: v1\nkind: [1, 2]\nmetadata:\n  name: k\n"),
    "compose environment int": ("docker-compose.yml", "services:\n  web:\n    environment: 5\n"),
    "compose services list": ("compose.yaml", "services: [1, 2]\n"),
    "openapi paths list": ("openapi.yaml", "openapi: 3.0.0\ninfo: {title: t}\npaths: [1, 2]\n"),
    "openapi path int": ("api/openapi.json", '{"openapi": "3.0.0", "paths": {"/x": 5}}'),
    "openapi servers int": ("spec/openapi.yml", "openapi: 3.0.0\nservers: 5\npaths: {}\n"),
    "deep yaml": ("deploy/deep.yaml", "apiVersion: v1\nkind: ConfigMap\ndata: "
                  + "[" * DEEP + "]" * DEEP + "\n"),
    "deep json": ("package.json", '{"dependencies": ' + "[" * DEEP + "]" * DEEP + "}"),
    "deep toml": ("pyproject.toml", "[project]\nname = 'x'\ndependencies = "
                  + "[" * DEEP + "]" * DEEP + "\n"),
    "package.json deps list": ("web/package.json", '{"dependencies": [1, 2]}'),
    "pyproject deps int": ("lib/pyproject.toml", "[project]\nname = 'x'\ndependencies = 5\n"),
    "non-UTF-8 file name": (b"caf\xe9.py", "x = 1\n"),
}  # fmt: skip


def malformed(work: Path) -> dict:
    cf = _cf()
    aborted, details = [], {}
    for i, (name, (rel, content)) in enumerate(MALFORMED.items()):
        repo = work / f"malformed-{i}"
        _write(repo, {"ok.py": "def ok():\n    return 1\n"})
        target = os.path.join(os.fsencode(str(repo)), rel) if isinstance(rel, bytes) else None
        if target is not None:
            with open(target, "wb") as fh:
                fh.write(content.encode() if isinstance(content, str) else content)
        else:
            _write(repo, {rel: content})
        try:
            g = cf.index(str(repo), progress=False)
            skipped = g.files.filter(g.files["skip_reason"].is_not_null())
            details[name] = dict(skipped.select("path", "skip_reason").iter_rows()) or "indexed"
            if "ok.py::ok" not in set(g.nodes["id"].to_list()):
                aborted.append(name)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            aborted.append(name)
            details[name] = f"aborted: {type(exc).__name__}: {str(exc)[:120]}"
    return {"count": len(aborted), "total": len(MALFORMED), "aborted": aborted, "details": details}


# ------------------------------------------------------------------------------ tracebacks
def _run_verbs(repo: str, store: str) -> list[str]:
    """query, card and an incremental index; the exceptions that are not CtxframeErrors."""
    cf = _cf()
    bad = []
    for verb in ("query", "card", "index"):
        try:
            if verb == "index":
                cf.index(repo, store=store, progress=False)
            else:
                g = cf.open(repo, store=store)
                if verb == "query":
                    g.query("refund processing", limit=5)
                else:
                    g.card("PaymentGateway")
        except Exception as exc:
            if not _is_clean_error(exc):
                bad.append(f"{verb}: {type(exc).__name__}: {str(exc)[:100]}")
    return bad


def bit_flips(work: Path, n: int, seed: int = 17) -> dict:
    """n single-bit flips over the store's table files: tracebacks, and flips that were
    accepted (decoded without error, then kept by an incremental index)."""
    cf = _cf()
    rng = random.Random(seed)
    repo = work / "flips"
    shutil.copytree(SAMPLE, repo)
    shutil.rmtree(repo / ".ctxframe" / "adapters", ignore_errors=True)
    pristine = work / "flips-pristine"
    cf.index(str(repo), store=str(pristine), progress=False)
    full = work / "flips-full"
    cf.index(str(repo), store=str(full), rebuild=True, progress=False)
    tracebacks, accepted, decoded = [], 0, 0
    for i in range(n):
        store = work / "flips-store"
        shutil.rmtree(store, ignore_errors=True)
        shutil.copytree(pristine, store, symlinks=True, copy_function=shutil.copyfile)
        files = _store_files(str(store))
        f = files[i % len(files)]
        data = bytearray(f.read_bytes())
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
        f.write_bytes(bytes(data))
        bad = _run_verbs(str(repo), str(store))
        tracebacks += [f"{f.name}@{at}: {b}" for b in bad]
        try:
            if _same_tables(str(store), str(full)):
                continue
            accepted += 1  # the store after index differs from a rebuild, and no error said so
        except Exception as exc:
            if not _is_clean_error(exc):
                tracebacks.append(f"{f.name}@{at}: read after index: {type(exc).__name__}")
            else:
                decoded += 0
    return {"count": len(tracebacks), "total": n * 3, "accepted": accepted,
            "examples": tracebacks[:10]}  # fmt: skip


_FUZZ_TEXT = [
    "\udcff", "a\ud800b", "\udce9t\udce9", "--limit=5", "-", "--", "\x00", "*", "[", "(?",
    "\\", "%s%n", "' OR 1=1 --", "::", "a::", "::b", "../../etc/passwd", "é" * 3, "🙂",
    " ", "", "\n", "\t\r", "x" * 5000, "PaymentGateway", "services/payments/gateway.py",
    "module://requests", "http:api.test", "k8s:", "env:", "#2", "a > b", "$(rm -rf /)",
]  # fmt: skip
_FUZZ_INTS = [0, -1, 1, 2, 10**9, -(10**9), 3]


def _fuzz_cases(rng: random.Random, n: int) -> list[tuple[str, tuple, dict]]:
    def text() -> str:
        if rng.random() < 0.6:
            return rng.choice(_FUZZ_TEXT)
        return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0xD800, 0xE000),
                                       rng.randrange(0x80, 0x3000), 0]))
                       for _ in range(rng.randrange(1, 12)))  # fmt: skip

    verbs = ["query", "rank", "card", "affected", "path", "change_plan", "explain", "hubs",
             "boundaries", "neighbourhood"]  # fmt: skip
    cases = []
    for _ in range(n):
        v = rng.choice(verbs)
        if v in ("query", "rank"):
            cases.append((v, (text(),), {"limit": rng.choice(_FUZZ_INTS)}))
        elif v == "path":
            cases.append((v, (text(), text()), {}))
        elif v in ("affected", "change_plan", "neighbourhood"):
            cases.append((v, (text(),), {"depth": rng.choice(_FUZZ_INTS)}))
        elif v == "hubs":
            cases.append((v, (), {"top": rng.choice(_FUZZ_INTS)}))
        elif v == "boundaries":
            cases.append((v, (rng.choice([None, text()]),), {}))
        else:
            cases.append((v, (text(),), {}))
    return cases


def _cli_argv(v: str, args: tuple, kw: dict, repo: str) -> list[str]:
    name = v.replace("_", "-")
    argv = [name, *[a for a in args if a is not None]]
    if name == "rank":
        argv[0] = "query"
    if "limit" in kw:
        argv += ["--limit", str(kw["limit"])]
    if "depth" in kw and name != "neighbourhood":
        argv += ["--depth", str(kw["depth"])]
    if "top" in kw:
        argv += ["--top", str(kw["top"])]
    if name == "neighbourhood":
        argv[0] = "card"
    return [*argv, "--repo", repo]


def fuzz(work: Path, n: int, seed: int = 5) -> dict:
    """n fuzzed calls of the Graph verbs and n of the CLI (in process, stdout discarded)."""
    cf = _cf()
    from ctxframe.cli import main

    repo = work / "fuzz"
    shutil.copytree(SAMPLE, repo)
    g = cf.index(str(repo), progress=False)
    rng = random.Random(seed)
    bad = []
    for v, args, kw in _fuzz_cases(rng, n):
        try:
            str(getattr(g, v)(*args, **kw))
        except Exception as exc:
            if not _is_clean_error(exc):
                bad.append(f"Graph.{v}{(args, kw)!r}: {type(exc).__name__}: {str(exc)[:80]}")
    for v, args, kw in _fuzz_cases(rng, n):
        argv = _cli_argv(v, args, kw, str(repo))
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                main(argv)
        except SystemExit:
            pass  # argparse refusing an argument: usage and one error line
        except Exception as exc:
            bad.append(f"cli {argv[:3]!r}: {type(exc).__name__}: {str(exc)[:80]}")
        if "Traceback" in err.getvalue():
            bad.append(f"cli {argv[:3]!r}: traceback printed")
    return {"count": len(bad), "total": 2 * n, "examples": bad[:10]}


def disk_full(work: Path) -> dict:
    """Index into a store on a 3 MB tmpfs: a clean error (or success), never a traceback."""
    cf = _cf()
    mnt = work / "tmpfs"
    mnt.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)],
                       check=True, capture_output=True)  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as exc:
        return {"count": 0, "total": 0, "skipped": f"cannot mount a tmpfs: {exc}"[:200]}
    try:
        (mnt / "filler").write_bytes(b"\0" * (3 * 1024 * 1024 - 120 * 1024))
        repo = work / "diskfull"
        shutil.copytree(SAMPLE, repo)
        _write(
            repo,
            {
                f"gen/m{i}.py": "".join(
                    f"def f{i}_{j}(a, b):\n    return a + b\n\n" for j in range(60)
                )
                for i in range(40)
            },
        )
        try:
            cf.index(str(repo), store=str(mnt / "store"), progress=False)
            return {"count": 0, "total": 1, "result": "indexed (the disk was not full enough)"}
        except Exception as exc:
            if _is_clean_error(exc):
                return {"count": 0, "total": 1, "result": str(exc)[:200]}
            return {"count": 1, "total": 1, "result": f"{type(exc).__name__}: {str(exc)[:200]}"}
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


# ------------------------------------------------------------------------------ orphans
def _descendants_of(marker: str) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    out.append(int(pid))
        except OSError:
            continue
    return out


def orphans(work: Path, kills: int, seed: int = 3, code: str | None = None) -> dict:
    """SIGKILL `ctxframe index` (a pool of workers: 1500 files) at a random point, `kills`
    times: runs that leave a process behind, and temp folders left after the next run."""
    rng = random.Random(seed)
    repo = work / "orphans"
    _write(repo, {f"pkg/m{i}.py": "".join(f"def f{i}_{j}(a):\n    return f{i}_{j - 1}(a)\n\n"
                                          for j in range(1, 30)) for i in range(1500)})  # fmt: skip
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code
    marker = str(repo)
    left = 0
    for _ in range(kills):
        proc = subprocess.Popen([sys.executable, "-m", "ctxframe", "index", marker, "--no-progress",
                                 "--rebuild"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        time.sleep(rng.uniform(0.8, 3.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(0.5)
        alive = _descendants_of(marker)
        if alive:
            left += 1
            for pid in alive:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
    subprocess.run([sys.executable, "-m", "ctxframe", "index", marker, "--no-progress"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    store = repo / ".ctxframe" / "graph"
    temp = [p.name for p in store.parent.glob("graph.tmp-*")] + [
        p.name for p in store.glob(".staging-*")
    ]
    spills = [p for p in Path(tempfile.gettempdir()).glob("ctxframe-spill-*")
              if not _pid_alive_of(p.name)]  # fmt: skip
    return {"count": left, "total": kills, "temp_left": temp, "dead_spills_left": len(spills)}


def _pid_alive_of(name: str) -> bool:
    head = name[len("ctxframe-spill-") :].split("-")[0]
    if not head.isdigit():
        return True  # an older name without a pid: cannot tell
    try:
        os.kill(int(head), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ------------------------------------------------------------------------------ secrets
def planted(i: int) -> str:
    return f"Pw{i:02d}zQ7x"


SECRETS: dict[str, str] = {
    "app/db.py": (
        "import requests, subprocess, os\nfrom sqlalchemy import create_engine\n\n"
        f'def fetch():\n    return requests.get("https://admin:{planted(1)}@db.example/x")\n\n'
        f'def dump():\n    subprocess.run("mysql -uroot -p{planted(2)} shop", shell=True)\n\n'
        f'def dump2():\n    os.system("mysqldump --password={planted(3)} shop")\n\n'
        f'def engine():\n    return create_engine("postgresql://u:{planted(4)}@h/db")\n\n'
        f'def connect(host, password="{planted(5)}"):\n    return host\n\n'
        f'def client(api_key: str = "{planted(6)}", timeout=3):\n    return api_key\n\n'
        f'def jdbc():\n    return requests.get("https://h/db?user=u&password={planted(7)}")\n\n'
        f'def psql():\n    subprocess.run("psql --password {planted(8)} -h db")\n'
    ),
    "web/api.js": (
        f'function f() {{ return fetch("https://u:{planted(9)}@api.example/v1"); }}\n'
        "const cp = require('child_process');\n"
        f"function g() {{ cp.execSync('mysql -p{planted(10)} shop'); }}\n"
        f'function login(user, password = "{planted(11)}") {{ return user; }}\n'
    ),
    "web/svc.ts": (
        "export class Svc {\n"
        f'  constructor(private token: string = "{planted(12)}") {{}}\n'
        "}\n"
        f'export function get() {{ return fetch("https://{planted(13)}@api.example/"); }}\n'
    ),
    "go/main.go": (
        'package main\n\nimport "net/http"\n\n'
        f'func F() {{ http.Get("https://u:{planted(14)}@api.example/") }}\n'
    ),
    "rs/lib.rs": f'fn f() {{ let _ = reqwest::get("https://u:{planted(15)}@h.example"); }}\n',
    "requirements.txt": (
        f"git+https://user:{planted(16)}@github.com/org/private.git#egg=private\n"
        f"--extra-index-url https://user:{planted(17)}@pypi.example/simple\nrequests==2.0\n"
    ),
    "pyproject.toml": (
        "[project]\nname = 'x'\n"
        f"dependencies = ['lib @ git+https://u:{planted(18)}@git.example/lib.git']\n"
    ),
    "package.json": json.dumps(
        {"dependencies": {"p": f"git+https://u:{planted(19)}@github.com/o/p.git"}}
    ),
    "openapi.yaml": (
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\n"
        f"servers:\n  - url: https://u:{planted(20)}@api.example/v1\n"
        "paths:\n  /x:\n    get:\n      operationId: getX\n"
    ),
    "docker-compose.yml": (
        "services:\n  web:\n    image: web\n    environment:\n"
        f"      - DATABASE_URL=postgres://u:{planted(21)}@db/x\n"
    ),
    ".env": f"DATABASE_URL=postgres://u:{planted(22)}@db/x\nAPI_TOKEN={planted(23)}\n",
    "Cargo.toml": (
        "[package]\nname = 'x'\n\n[dependencies]\n"
        f"p = {{ git = 'https://u:{planted(24)}@git.example/p.git' }}\n"
    ),
    "app/docs.py": (
        f'def documented():\n    """Connects to https://u:{planted(25)}@db.example (docs)."""\n'
    ),
}
N_SECRETS = 25


def secrets(work: Path) -> dict:
    """Index a tree holding N_SECRETS planted credentials; which values reach the store
    outside the `doc` column (raw bytes of every non-table file, decoded cells of tables)."""
    import polars as pl

    cf = _cf()
    repo = work / "secrets"
    _write(repo, SECRETS)
    g = cf.index(str(repo), progress=False)
    g.query("fetch db")  # the derived caches too
    g.card("fetch")
    needles = [planted(i) for i in range(1, N_SECRETS + 1)]
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in Path(g.store).rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            frame = pl.read_parquet(path)
            text = json.dumps(frame.drop("doc", strict=False).to_dicts(), default=str)
        elif path.suffix == ".arrow":
            frame = pl.read_ipc(path)
            text = json.dumps(frame.drop("doc", strict=False).to_dicts(), default=str)
        else:
            text = path.read_bytes().decode("latin-1")
        for needle in needles:
            if needle in text:
                found.setdefault(needle, []).append(str(path.relative_to(g.store)))
    return {"count": len(found), "total": N_SECRETS, "found": found}


# ------------------------------------------------------------------------------ main
def measure(args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix="ctxframe-faults-"))
    try:
        res = {
            "wrong answers": wrong_answers(work),
            "malformed files aborting the index": malformed(work),
            "tracebacks: corrupt store": bit_flips(work, args.flips),
            "tracebacks: fuzzed input": fuzz(work, args.fuzz),
            "tracebacks: disk full": disk_full(work),
            "orphans after SIGKILL": orphans(work, args.kills, code=args.code)
            if args.kills
            else {"count": 0, "total": 0, "skipped": "--kills 0"},
            "planted secrets in the store (outside doc)": secrets(work),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--code", default=None, help="a ctxframe source tree to measure instead")
    ap.add_argument("--flips", type=int, default=88)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--fuzz", type=int, default=600, help="fuzzed calls per surface")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.code:
        sys.path.insert(0, args.code)
    import ctxframe

    res = measure(args)
    print(f"ctxframe {ctxframe.__file__}")
    print(f"{'experiment':48} {'count':>6} {'of':>6}")
    for name, r in res.items():
        print(f"{name:48} {r['count']:>6} {r['total']:>6}" + (
            f"   ({r['skipped']})" if "skipped" in r else ""))  # fmt: skip
    out = args.out or ROOT / "bench" / "results" / "faults.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2, default=str))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402  (the shared harness: tables, JSON, compiling the CLI)


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
                                stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())  # fmt: skip
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
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=tempfile.gettempdir())  # fmt: skip
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


# ------------------------------------------------------------------------------ planted corpus
def _b64url(raw: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _synthetic_key(i: int) -> str:
    """PEM-shaped lines of made-up base64 (never a real key)."""
    import base64
    import hashlib

    body = b"".join(hashlib.sha512(f"ctxframe-fake-key-{i}-{k}".encode()).digest()
                    for k in range(6))  # fmt: skip
    text = base64.b64encode(body).decode()
    return "\n".join(text[k : k + 64] for k in range(0, len(text), 64))


def planted_forms() -> list[tuple[str, str, str, str]]:
    """(form, path, text, secret): synthetic secrets, each in the form and file kind it is
    written in, in every language and file kind ctxframe reads. Generated, never committed."""
    def v(i: int) -> str:  # a generic secret value: letters and digits, unique
        return f"Qz{i:02d}x7Kp9Lw{i:02d}"

    def up(i: int) -> str:  # capitals and digits
        return f"Q7X{i:02d}ZK9W"

    jwt = lambda i: ".".join([_b64url(b'{"alg":"HS256","typ":"JWT"}'),  # noqa: E731
                              _b64url(f'{{"sub":"user{i}","n":{i}}}'.encode()),
                              _b64url(f"made-up signature {i} Qz7x".encode())])  # fmt: skip
    forms = [
        ("py url userinfo", "app/db.py", 'import requests\n\ndef fetch():\n    return requests.get("https://admin:{s}@db.example/x")\n', v(1)),  # noqa: E501
        ("py mysql -p shell", "app/dump.py", 'import subprocess\n\ndef dump():\n    subprocess.run("mysql -uroot -p{s} shop", shell=True)\n', v(2)),  # noqa: E501
        ("py --password=", "app/dump2.py", 'import os\n\ndef dump2():\n    os.system("mysqldump --password={s} shop")\n', v(3)),  # noqa: E501
        ("py engine url", "app/engine.py", 'from sqlalchemy import create_engine\n\ndef engine():\n    return create_engine("postgresql://u:{s}@h/db")\n', v(4)),  # noqa: E501
        ("py password default", "app/conn.py", 'def connect(host, password="{s}"):\n    return host\n', v(5)),  # noqa: E501
        ("py api_key annotated default", "app/client.py", 'def client(api_key: str = "{s}", timeout=3):\n    return api_key\n', v(6)),  # noqa: E501
        ("py query parameter", "app/jdbc.py", 'import requests\n\ndef jdbc():\n    return requests.get("https://h/db?user=u&password={s}")\n', v(7)),  # noqa: E501
        ("py --password X", "app/psql.py", 'import subprocess\n\ndef psql():\n    subprocess.run("psql --password {s} -h db")\n', v(8)),  # noqa: E501
        ("py exec list mysql -pX", "app/execs.py", 'import subprocess\n\ndef mysql_list():\n    subprocess.run(["mysql", "-p{s}", "shop"])\n', v(9)),  # noqa: E501
        ("py exec list --token X", "app/deploy.py", 'import subprocess\n\ndef deploy():\n    subprocess.run(["deploy-tool", "--token", "{s}"])\n', v(10)),  # noqa: E501
        ("py bearer header", "app/headers.py", 'import requests\n\ndef call_api():\n    return requests.get("https://api.example", headers={{"Authorization": "Bearer {s}"}})\n', v(11)),  # noqa: E501
        ("py jwt literal", "app/jwt_fixture.py", 'def session_cookie():\n    return "{s}"\n', jwt(12)),  # noqa: E501
        ("py aws access key id", "app/aws.py", 'def aws_client():\n    key_id = "{s}"\n    return key_id\n', f"AKIA{up(13)}ABCDEFG"),  # noqa: E501
        ("py aws secret (keyword)", "app/aws2.py", 'def aws_secret():\n    aws_secret_access_key = "{s}"\n    return aws_secret_access_key\n', "wJalr14XUtnFEMIK7MDENGbPxRfiCYEXAMPLEKY"),  # noqa: E501
        ("py docstring url", "app/docs.py", 'def documented():\n    """Connects to https://u:{s}@db.example (docs)."""\n', v(15)),  # noqa: E501
        ("py comment github token", "app/ci.py", '# a token for the CI: {s}\ndef ci():\n    return 1\n', "ghp_" + f"Ab{16:02d}cdEfGhIjKlMnOpQrStUvWxYz0123456789"[:36]),  # noqa: E501
        ("py SECRET_KEY", "app/settings.py", 'SECRET_KEY = "{s}"\n\ndef get_settings():\n    return SECRET_KEY\n', f"django-insecure-{v(17)}"),  # noqa: E501
        ("py private key", "app/keys.py", 'def load_key():\n    return """-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----\n"""\n', _synthetic_key(18)),  # noqa: E501
        ("py telegram bot token", "app/bot.py", 'def bot():\n    return Bot("{s}")\n', f"1234567{19:02d}:AAH{19:02d}x7Kp9LwQzAbCdEfGhIjKlMnOpQrZ{19:02d}"),  # noqa: E501
        ("py google api key", "app/maps.py", 'def maps():\n    return fetch_maps(key="{s}")\n', "AIza" + f"Sy{20:02d}Qz7xKp9LwAbCdEfGhIjKlMnOpQrStU"),  # noqa: E501
        ("py sendgrid", "app/mail.py", 'def mailer():\n    return Mailer("{s}")\n', f"SG.{21:02d}abcdefghijklmnopqrst." + "Qz7xKp9LwAbCdEfGhIjKlMnOpQrStUvWxYz01234567"),  # noqa: E501
        ("py high entropy near salt", "app/sig.py", 'def signer():\n    salt_value = "{s}"\n    return salt_value\n', f"9f86d081884c7d659a2feaa0c55ad0{22:02d}"),  # noqa: E501
        ("js url userinfo", "web/api.js", 'function f() {{ return fetch("https://u:{s}@api.example/v1"); }}\n', v(23)),  # noqa: E501
        ("js execSync mysql", "web/db.js", "const cp = require('child_process');\nfunction g() {{ cp.execSync('mysql -p{s} shop'); }}\n", v(24)),  # noqa: E501
        ("js default password", "web/login.js", 'function login(user, password = "{s}") {{ return user; }}\n', v(25)),  # noqa: E501
        ("js object apiKey", "web/config.js", 'const config = {{ apiKey: "{s}", region: "eu" }};\nfunction cfg() {{ return config; }}\n', v(26)),  # noqa: E501
        ("ts constructor token", "web/svc.ts", 'export class Svc {{\n  constructor(private token: string = "{s}") {{}}\n}}\n', v(27)),  # noqa: E501
        ("ts url token", "web/get.ts", 'export function get() {{ return fetch("https://{s}@api.example/"); }}\n', v(28)),  # noqa: E501
        ("tsx slack token", "web/App.tsx", 'export function App() {{ const slack = "{s}"; return <div>{{slack.length}}</div>; }}\n', f"xoxb-{29:02d}1234567890-123456789012-Qz7xKp9LwAbCdEf{29:02d}"),  # noqa: E501
        ("go url userinfo", "go/main.go", 'package main\n\nimport "net/http"\n\nfunc F() {{ http.Get("https://u:{s}@api.example/") }}\n', v(30)),  # noqa: E501
        ("go stripe constant", "go/pay.go", 'package main\n\nconst stripeKey = "{s}"\n\nfunc Pay() string {{ return stripeKey }}\n', f"sk_live_{31:02d}Qz7xKp9LwAbCdEfGhIjKlMnOp"),  # noqa: E501
        ("go exec --token", "go/deploy.go", 'package main\n\nimport "os/exec"\n\nfunc Deploy() {{ exec.Command("deploy-tool", "--token", "{s}").Run() }}\n', v(32)),  # noqa: E501
        ("java password field", "java/Db.java", 'class Db {{\n  String password = "{s}";\n  void open() {{}}\n}}\n', v(33)),  # noqa: E501
        ("c define token", "c/conf.c", '#define API_TOKEN "{s}"\nint conf(void) {{ return 0; }}\n', v(34)),  # noqa: E501
        ("cpp secret", "cpp/auth.cpp", 'const char* client_secret = "{s}";\nint auth() {{ return 1; }}\n', v(35)),  # noqa: E501
        ("csharp connection string", "cs/Repo.cs", 'class Repo {{\n  string Conn() {{ return "Server=db;User Id=sa;Password={s};"; }}\n}}\n', v(36)),  # noqa: E501
        ("rust url userinfo", "rs/lib.rs", 'fn f() {{ let _ = reqwest::get("https://u:{s}@h.example"); }}\n', v(37)),  # noqa: E501
        ("rust api_key", "rs/keys.rs", 'fn key() -> &\'static str {{ let api_key = "{s}"; api_key }}\n', v(38)),  # noqa: E501
        ("zig token", "zig/main.zig", 'const token = "{s}";\npub fn main() void {{ _ = token; }}\n', v(39)),  # noqa: E501
        ("sql identified by", "db/users.sql", "CREATE USER app IDENTIFIED BY '{s}';\nCREATE TABLE t (id int);\n", v(40)),  # noqa: E501
        ("markdown export token", "docs/setup.md", "# Setup\n\nRun this first:\n\n```bash\nexport API_TOKEN={s}\n```\n", v(41)),  # noqa: E501
        ("markdown curl bearer", "docs/api.md", '# API\n\nCall it:\n\n    curl -H "Authorization: Bearer {s}" https://api.example\n', v(42)),  # noqa: E501
        ("rst password", "docs/conf.rst", "Config\n======\n\n.. code-block:: python\n\n   password = \"{s}\"\n", v(43)),  # noqa: E501
        (".env token", ".env", "DEBUG=true\nAPI_TOKEN={s}\n", v(44)),
        (".env database url", ".env.local", "DATABASE_URL=postgres://u:{s}@db/x\n", v(45)),
        (".env opaque value", "config/app.env", "PAYMENTS_ENDPOINT_CONFIG={s}\n", v(46)),
        ("k8s Secret data", "deploy/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {s}\n", _b64url(f"k8s-secret-{47}-Qz7x".encode()) + "Zz"),  # noqa: E501
        ("k8s Secret stringData", "deploy/secret2.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n  token: {s}\n", v(48)),  # noqa: E501
        ("compose env url", "docker-compose.yml", "services:\n  web:\n    image: web\n    environment:\n      - DATABASE_URL=postgres://u:{s}@db/x\n", v(49)),  # noqa: E501
        ("requirements git url", "requirements.txt", "git+https://user:{s}@github.com/org/private.git#egg=private\nrequests==2.0\n", v(50)),  # noqa: E501
        ("pyproject dependency url", "pyproject.toml", "[project]\nname = 'x'\ndependencies = ['lib @ git+https://u:{s}@git.example/lib.git']\n", v(51)),  # noqa: E501
        ("package.json git dep", "package.json", '{{"dependencies": {{"p": "git+https://u:{s}@github.com/o/p.git"}}}}', v(52)),  # noqa: E501
        ("Cargo git dep", "Cargo.toml", "[package]\nname = 'x'\n\n[dependencies]\np = {{ git = 'https://u:{s}@git.example/p.git' }}\n", v(53)),  # noqa: E501
        ("openapi server url", "openapi.yaml", "openapi: 3.0.0\ninfo: {{title: t, version: '1'}}\nservers:\n  - url: https://u:{s}@api.example/v1\npaths:\n  /x:\n    get:\n      operationId: getX\n", v(54)),  # noqa: E501
        ("docker config auth", "ops/docker-config.json", '{{"auths": {{"registry.example": {{"auth": "{s}"}}}}}}', _b64url(f"user:Qz{55}x7Kp9Lw".encode())),  # noqa: E501
        ("ci yaml token", ".github/workflows/ci.yml", "jobs:\n  build:\n    env:\n      NPM_TOKEN: {s}\n", v(56)),  # noqa: E501
        ("npmrc auth token", ".npmrc", "//registry.npmjs.org/:_authToken={s}\n", f"npm_{57:02d}Qz7xKp9LwAbCdEfGhIjKlMnOpQrStUv"),  # noqa: E501
        ("slack webhook url", "app/notify.py", 'def notify():\n    return post("{s}")\n', f"https://hooks.slack.com/services/T{58:02d}ABCDEF/B{58:02d}GHIJKL/Qz7xKp9LwAbCdEf{58:02d}"),
    ]  # fmt: skip
    out = []
    for form, path, text, secret in forms:
        out.append((form, path, text.format(s=secret), secret))
    return out


def planted_needles(secret: str) -> list[str]:
    """What must not appear: the value, and (for a value longer than a mask could hide in
    part) its last 12 characters; a key's body: each of its lines."""
    if "\n" in secret:
        return [ln for ln in secret.split("\n") if len(ln) >= 12]
    return [secret] + ([secret[-12:]] if len(secret) > 16 else [])


def planted_repo(root: Path) -> list[tuple[str, str, str, str]]:
    """Write every planted form into `root` (a file per form, forms sharing a file appended)."""
    forms = planted_forms()
    files: dict[str, str] = {}
    for _, path, text, _secret in forms:
        files[path] = files.get(path, "") + ("\n" if path in files else "") + text
    _write(root, files)
    return forms


def _outputs(repo: Path, forms, quick: bool = False) -> dict[str, str]:
    """What every way out prints for the planted repository: each verb on the CLI (text and
    --json), the hook, MCP tool results, serve's pages, explain, export."""
    from ctxframe.cli import main

    outs: dict[str, str] = {}

    def cli(name: str, argv: list[str], stdin: str | None = None) -> None:
        out, err = io.StringIO(), io.StringIO()
        old = sys.stdin
        if stdin is not None:
            sys.stdin = io.StringIO(stdin)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                    contextlib.suppress(SystemExit):  # fmt: skip
                main([*argv, "--repo", str(repo)])
        finally:
            sys.stdin = old
        outs[name] = out.getvalue() + err.getvalue()

    words = ["connect", "password", "token", "api key", "secret", "database url", "deploy",
             "fetch", "mysql", "bearer", "session cookie", "aws", "stripe", "setup",
             "slack"]  # fmt: skip
    if quick:
        words = words[:3]
    for w in words:
        for fmt in ("md", "json", "xml"):
            cli(f"context {w} {fmt}", ["context", w, "--budget", "8000", "--format", fmt])
        cli(f"query {w}", ["query", w, "--limit", "50"])
        cli(f"query {w} --json", ["query", w, "--limit", "50", "--json"])
        cli(f"hook {w}", ["hook", "prompt"], stdin=json.dumps({"prompt": f"where is the {w} used",
                                                             "cwd": str(repo)}))  # fmt: skip
    for path in sorted({p for _, p, _, _ in forms}):  # every planted file's own context
        stem = os.path.splitext(os.path.basename(path))[0].strip(".") or path
        for fmt in ("md",) if quick else ("md", "json"):
            cli(f"context {path} {fmt}", ["context", f"{stem} {path}", "--budget", "8000",
                                          "--format", fmt])  # fmt: skip
        cli(f"hook {path}", ["hook", "prompt"], stdin=json.dumps({"prompt": f"how does {stem} work",
                                                                "cwd": str(repo)}))  # fmt: skip
    names = sorted({p for _, p, _, _ in forms} | {"connect", "client", "deploy", "Svc", "Db",
                                                   "stripeKey", "documented", "fetch"})  # fmt: skip
    for n in names:
        for verb in ("card", "explain") if quick else ("card", "explain", "affected",
                                                       "change-plan"):  # fmt: skip
            cli(f"{verb} {n}", [verb, n])
            cli(f"{verb} {n} --json", [verb, n, "--json"])
    cli("hubs", ["hubs", "--json"])
    cli("boundaries", ["boundaries", "--json"])
    cli("boundaries text", ["boundaries"])
    for _, _, _, secret in forms[:10]:
        cli(f"query secret {secret[:6]}", ["query", secret, "--json"])
    exp = repo.parent / f"{repo.name}-export"
    for fmt in ("csv", "ndjson", "parquet"):
        cli(f"export {fmt}", ["export", str(exp / fmt), "--format", fmt])
        for f in (exp / fmt).iterdir():
            outs[f"export {fmt} {f.name}"] = _file_text(f)
    try:  # the MCP tools, through their own call path
        from ctxframe._apps import mcp as _mcp

        live = _mcp.LiveGraph(str(repo))
        for w in words[:6]:
            outs[f"mcp context {w}"] = json.dumps(_mcp.call(live, "context", {"question": w}))
            outs[f"mcp query {w}"] = json.dumps(_mcp.call(live, "query", {"text": w}))
        for n in names[:12]:
            outs[f"mcp card {n}"] = json.dumps(_mcp.call(live, "card", {"name": n}))
            outs[f"mcp explain {n}"] = json.dumps(_mcp.call(live, "explain", {"name": n}))
    except Exception as exc:  # reported, not hidden
        outs["mcp"] = f"mcp not measured: {type(exc).__name__}: {exc}"
    outs.update(_serve_pages(repo, words, names))
    return outs


def _serve_pages(repo: Path, words: list[str], names: list[str]) -> dict[str, str]:
    import threading
    import urllib.parse
    import urllib.request

    from ctxframe._apps import serve

    cf = _cf()
    srv = serve.make_server(cf.open(str(repo)), port=0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    out = {}
    try:
        base = f"http://127.0.0.1:{srv.server_port}"
        urls = [f"/api/query?q={urllib.parse.quote(w)}&limit=50" for w in words]
        urls += [f"/api/card?name={urllib.parse.quote(n)}" for n in names]
        urls += [f"/api/neighbourhood?name={urllib.parse.quote(n)}" for n in names[:10]]
        urls += ["/api/summary", "/api/hubs", "/api/boundaries", "/"]
        for u in urls:
            with urllib.request.urlopen(base + u, timeout=10) as r:
                out[f"serve {u}"] = r.read().decode("utf-8", "replace")
    finally:
        srv.shutdown()
        srv.server_close()
    return out


def _file_text(path: Path) -> str:
    """Every byte of a file as text, and for a table its decoded cells."""
    import polars as pl

    raw = path.read_bytes()
    text = raw.decode("latin-1")
    with contextlib.suppress(Exception):
        if path.suffix == ".parquet":
            text += pl.read_parquet(path).write_csv()
        elif path.suffix == ".arrow":
            text += pl.read_ipc(path).write_csv()
    if path.suffix in (".blobs",):
        import zlib

        with contextlib.suppress(Exception):
            d = zlib.decompressobj()
            rest = raw
            while rest:
                text += d.decompress(rest).decode("utf-8", "replace")
                rest = d.unused_data
                d = zlib.decompressobj()
    if path.suffix == ".sqlite":
        text += raw.decode("utf-8", "replace")
    return text


def planted_secrets(work: Path, quick: bool = False) -> dict:
    """Index a repository holding every planted form; which secrets reach any output verb,
    any byte of the store (caches included) or of the extraction cache, or are found by
    `query <secret>`."""
    cf = _cf()
    repo = work / "planted"
    xdir = work / "planted-xcache"
    old = os.environ.get("CTXFRAME_CACHE_DIR")
    os.environ["CTXFRAME_CACHE_DIR"] = str(xdir)
    try:
        forms = planted_repo(repo)
        # 64+ files to parse: the extraction cache is written too
        _write(repo, {f"filler/m{i}.py": f"def filler_{i}():\n    return {i}\n" for i in range(70)})
        g = cf.index(str(repo), progress=False)
        g.query("password token secret")
        g.card("connect")
        outs = _outputs(repo, forms, quick)
        for path in sorted(p for p in Path(g.store).rglob("*") if p.is_file()):
            outs[f"store {path.relative_to(g.store)}"] = _file_text(path)
        for path in sorted(p for p in xdir.rglob("*") if p.is_file()):
            outs[f"xcache {path.relative_to(xdir)}"] = _file_text(path)
        leaks: dict[str, list[str]] = {}
        for form, _path, _text, secret in forms:
            for needle in planted_needles(secret):
                # `query SECRET` echoes the question it was given: not a leak
                where = [k for k, v in outs.items()
                         if needle in v and not k.startswith("query secret")]  # fmt: skip
                if where:
                    leaks.setdefault(form, []).extend(where[:5])
        searchable = []
        g2 = cf.open(str(repo))
        from ctxframe._rank.tokens import tokenize

        vocab = set(g2.tokens["token"].unique().to_list())
        for form, path, _text, secret in forms:
            if "\n" in secret:
                continue
            # the value's own words (6+ characters with a digit) are not in the token table,
            # and `query VALUE` finds nothing in its file
            own = {t for t in tokenize(secret) if len(t) >= 6 and any(c.isdigit() for c in t)}
            hits = g2.query(secret, limit=5).hits
            in_file = hits.height and path in set(hits["path"].drop_nulls().to_list())
            if own & vocab or (in_file and own):
                searchable.append(form)
    finally:
        if old is None:
            os.environ.pop("CTXFRAME_CACHE_DIR", None)
        else:
            os.environ["CTXFRAME_CACHE_DIR"] = old
    return {"count": len(leaks), "total": len(forms), "outputs": len(outs),
            "leaks": leaks, "searchable": searchable}  # fmt: skip


# ------------------------------------------------------------------------------ issue 45
def _cli(argv: list[str], code: str | None = None, stdin: bytes | None = None,
         timeout: float = 30.0) -> tuple[int | None, str, str, float]:  # fmt: skip
    """(exit code, stdout, stderr, seconds) of one CLI run in its own process; None for a
    run killed at `timeout` (a hang)."""
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code
    t0 = time.perf_counter()
    try:
        # run from the temp directory: `-m` puts the working directory first on sys.path,
        # which would shadow the tree `code` names
        p = subprocess.run([sys.executable, "-m", "ctxframe", *argv], input=stdin, env=env,
                           capture_output=True, timeout=timeout,
                           cwd=tempfile.gettempdir())  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, "", "", time.perf_counter() - t0
    out = p.stdout.decode("utf-8", "replace")
    return p.returncode, out, p.stderr.decode("utf-8", "replace"), time.perf_counter() - t0


def _bad_stderr(err: str) -> bool:
    """A traceback, an internal error, or more than one line of error."""
    lines = [ln for ln in err.splitlines() if ln.startswith("ctxframe: error")]
    return "Traceback" in err or "internal error" in err or len(lines) > 1


_DAMAGE_VERBS = (["query", "refund processing", "--json", "--limit", "5"],
                 ["card", "PaymentGateway", "--json"],
                 ["affected", "PaymentGateway", "--json"])  # fmt: skip


_ANSWER_SCRIPT = """
import contextlib, io, json, sys
from ctxframe.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        try:
            c = main(argv)
        except SystemExit as exc:
            c = exc.code
        except BaseException as exc:
            c, e = 99, io.StringIO(f"Traceback: {type(exc).__name__}: {exc}")
    out.append([c, o.getvalue(), e.getvalue()])
print(json.dumps(out))
"""


def _answers(repo: Path, code: str | None) -> list[tuple[int | None, str, str, float]]:
    """The damage verbs' (exit code, stdout, stderr, seconds), in one fresh process (a hang
    of any is a None code for all)."""
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code
    argvs = [[*v, "--repo", str(repo)] for v in _DAMAGE_VERBS]
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", _ANSWER_SCRIPT, json.dumps(argvs)], env=env,
                           capture_output=True, timeout=60,
                           cwd=tempfile.gettempdir())  # fmt: skip
        got = json.loads(p.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return [(None, "", "hang or crash", time.perf_counter() - t0)] * len(argvs)
    return [(c, o, e, time.perf_counter() - t0) for c, o, e in got]


def _derived_files(version: Path) -> list[Path]:
    return sorted(p for p in (version / "cache").iterdir() if p.is_file())


def _damage_variants(version: Path, older: Path) -> list[tuple[str, Path, object]]:
    """(name, file, how): every derived file and a part of each table, each damaged every
    way: a flipped bit, cut in half, swapped with another, taken from another version, a
    FIFO, a link to /, to .., a link loop."""
    targets = _derived_files(version) + [version / _rel for _rel in (
        "nodes/part-000.parquet", "edges/part-000.parquet", "tokens/part-000.parquet",
        "vocab/part-000.parquet", "files/part-000.parquet", "meta.json")]  # fmt: skip
    out = []
    for f in targets:
        rel = f.relative_to(version)
        for how in ("flip", "truncate", "swap", "other-version", "fifo", "link-root",
                    "link-dotdot", "link-loop"):  # fmt: skip
            if how == "other-version" and not (older / rel).exists():
                continue
            out.append((f"{rel} {how}", f, how))
    out.append(("cache/ from another version", version / "cache", "other-cache-dir"))
    return out


def _apply(f: Path, how: str, version: Path, older: Path) -> None:
    rel = f.relative_to(version)
    if how == "other-cache-dir":
        shutil.rmtree(f)
        shutil.copytree(older / "cache", f)
        return
    data = f.read_bytes()
    if how in ("flip", "truncate", "swap", "other-version"):
        os.chmod(f, 0o644)
    if how == "flip":
        b = bytearray(data)
        b[len(b) // 2] ^= 0x04
        f.unlink()
        f.write_bytes(bytes(b))
    elif how == "truncate":
        f.unlink()
        f.write_bytes(data[: len(data) // 2])
    elif how == "swap":
        others = [p for p in _derived_files(version) if p != f] or [version / "meta.json"]
        other = others[0]
        tmp = f.with_suffix(".swap")
        os.replace(f, tmp)
        os.replace(other, f)
        os.replace(tmp, other)
    elif how == "other-version":
        f.unlink()
        shutil.copyfile(older / rel, f)
    else:
        f.unlink()
        if how == "fifo":
            os.mkfifo(f)
        elif how == "link-root":
            os.symlink("/", f)
        elif how == "link-dotdot":
            os.symlink("..", f)
        else:
            os.symlink(f.name, f)


def damaged_files(work: Path, code: str | None = None, limit: int | None = None) -> dict:
    """Every derived file under the version's cache/ and a part of each table, damaged every
    way: a wrong answer is exit 0 with another answer than the undamaged store's; a bad
    error is a traceback, an internal error or a hang; then `index` must leave a store that
    answers as before."""
    cf = _cf()
    repo = work / "damage"
    shutil.copytree(SAMPLE, repo)
    shutil.rmtree(repo / ".ctxframe" / "adapters", ignore_errors=True)
    cf.index(str(repo), progress=False)
    (repo / "services" / "extra.py").write_text("def extra_fn():\n    return 1\n")
    cf.index(str(repo), progress=False)
    store = Path(cf.open(str(repo)).store)

    def warm() -> None:  # every derived file: ranker, edge lookup, card cache
        cf.open(str(repo)).warm()
        _cli(["card", "PaymentGateway", "--repo", str(repo)], code)

    versions = sorted(store.glob("v-*"))
    for v in versions:  # both versions get their caches
        os.unlink(store / "current")
        os.symlink(v.name, store / "current")
        warm()
    version, older = versions[-1], versions[0]
    os.unlink(store / "current")
    os.symlink(version.name, store / "current")
    want = [(c, o) for c, o, _e, _t in _answers(repo, code)]
    pristine = work / "damage-pristine"
    shutil.copytree(store, pristine, symlinks=True)
    variants = _damage_variants(version, older)
    if limit and limit < len(variants):  # spread over every file and every damage
        variants = variants[:: -(-len(variants) // limit)]
    wrong, bad, unrepaired = [], [], []
    for name, f, how in variants:
        shutil.rmtree(store)
        shutil.copytree(pristine, store, symlinks=True)
        _apply(store / f.relative_to(version.parent), how, store / version.name,
               store / older.name)  # fmt: skip
        for verb, (code_, out, err, _t) in zip(_DAMAGE_VERBS, _answers(repo, code),
                                               strict=True):  # fmt: skip
            if code_ is None or _bad_stderr(err):
                bad.append(f"{name}: {verb[0]}: {'hang' if code_ is None else err.strip()[:120]}")
            elif code_ == 0 and (code_, out) not in want:
                wrong.append(f"{name}: {verb[0]}")
        c, _o, err, _t = _cli(["index", "--repo", str(repo), "--no-progress"], code)
        after = [(c2, o2) for c2, o2, _e, _t in _answers(repo, code)]
        if c != 0 or after != want:
            unrepaired.append(f"{name}: index exit {c}: {err.strip()[:100]}")
    return {"count": len(wrong) + len(bad), "total": len(variants) * len(_DAMAGE_VERBS),
            "variants": len(variants), "wrong": wrong[:20], "bad": bad[:20],
            "unrepaired": unrepaired[:20]}  # fmt: skip


IGNORE_CASES: dict[str, tuple[str, str]] = {
    ".gitignore [z-a]": (".gitignore", "[z-a]\n*.log\n"),
    ".ctxframeignore [z-a]": (".ctxframeignore", "[z-a]\n"),
    "nested .gitignore [z-a]": ("sub/.gitignore", "[z-a]\n"),
    ".git/info/exclude [z-a]": (".git/info/exclude", "[z-a]\n"),
    "config exclude [z-a]": (".ctxframe/config.toml", 'exclude = ["[z-a]", "*.log"]\n'),
    "pyproject exclude [z-a]": ("pyproject.toml", '[tool.ctxframe]\nexclude = ["[z-a]"]\n'),
    "config deprioritize [z-a]": (".ctxframe/config.toml", 'deprioritize = ["[z-a]"]\n'),
    "lone !": (".gitignore", "!\n"),
    "trailing backslash": (".gitignore", "foo\\\n"),
    "open bracket": (".gitignore", "[\n**/[\n"),
    "bad range in class": (".gitignore", "*.[z-a]py\n"),
    "NUL in pattern": (".gitignore", "a\x00b\n"),
}  # fmt: skip


def ignore_patterns(work: Path) -> dict:
    """Invalid ignore patterns in every place ctxframe reads them: indexes that abort (an
    exception, or the one good file missing) and queries that fail."""
    cf = _cf()
    aborted = {}
    for i, (name, (rel, text)) in enumerate(IGNORE_CASES.items()):
        repo = work / f"ignore-{i}"
        _write(repo, {"ok.py": "def ok():\n    return 1\n", "sub/keep.py": "x = 1\n", rel: text})
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                g = cf.index(str(repo), progress=False)
                g.query("ok")
            if "ok.py::ok" not in set(g.nodes["id"].to_list()):
                aborted[name] = "ok.py not indexed"
        except Exception as exc:
            aborted[name] = f"{type(exc).__name__}: {str(exc)[:100]}"
    return {"count": len(aborted), "total": len(IGNORE_CASES), "aborted": aborted}


def _long_inputs() -> dict[str, str]:
    rng = random.Random(11)
    words = ["refund", "payment", "gateway", "order", "process", "xyzzy", "client"]
    distinct = " ".join(f"{rng.choice(words)}{i}" for i in range(20000))[:100_000]
    return {"distinct words": distinct, "one word": ("PaymentGateway " * 7000)[:100_000],
            "one character": "a" * 100_000}  # fmt: skip


def long_inputs(work: Path, code: str | None = None, runs: int = 2) -> dict:
    """Every verb on the CLI (a fresh process, as an agent runs it) with 100,000-character
    names and questions, the best of `runs`: runs over 2 s, and runs that do not end in a
    clean answer; beside each, the same verb on a short input in the same run (the cost of
    a fresh process on this machine at this moment)."""
    cf = _cf()
    repo = work / "long"
    shutil.copytree(SAMPLE, repo)
    cf.index(str(repo), progress=False)
    cf.open(str(repo)).warm()

    def best(argv: list[str], stdin: bytes | None = None) -> tuple[int | None, str, float]:
        got = [_cli(argv, code, stdin=stdin, timeout=60) for _ in range(runs)]
        c, _out, err, _t = got[-1]
        return c, err, min(t for *_, t in got)

    slow, bad, times, short = [], [], {}, {}
    inputs = {"short": "PaymentGateway", **_long_inputs()}
    for kind, text in inputs.items():
        argvs = {v: [v, text] for v in ("query", "context", "card", "affected", "explain",
                                         "change-plan", "boundaries")}  # fmt: skip
        argvs["path"] = ["path", text, text]
        for verb, argv in argvs.items():
            extra = [] if verb == "context" else ["--json"]
            c, err, t = best([*argv, "--repo", str(repo), *extra])
            (short if kind == "short" else times)[f"{verb} ({kind})"] = round(t, 2)
            if kind != "short" and (c is None or t > 2.0):
                slow.append(f"{verb} ({kind}): {t:.1f}s")
            if c is None or _bad_stderr(err):
                bad.append(f"{verb} ({kind}): {err.strip()[:100]}")
        c, err, t = best(["hook", "prompt", "--repo", str(repo)],
                         stdin=json.dumps({"prompt": text}).encode())  # fmt: skip
        (short if kind == "short" else times)[f"hook ({kind})"] = round(t, 2)
        if kind != "short" and (c is None or t > 2.0):
            slow.append(f"hook ({kind}): {t:.1f}s")
    return {"count": len(slow), "total": len(times), "slow": slow, "bad": bad,
            "max_s": max(times.values()), "max_short_s": max(short.values()),
            "seconds": times, "short_seconds": short}  # fmt: skip


def json_outputs(work: Path, code: str | None = None, n: int = 60, seed: int = 7) -> dict:
    """Every verb's --json (and context --format json) over random and long questions at
    random budgets: outputs that do not parse as one JSON document."""
    cf = _cf()
    repo = work / "json"
    shutil.copytree(SAMPLE, repo)
    cf.index(str(repo), progress=False)
    rng = random.Random(seed)
    texts = [*_FUZZ_TEXT, "refund " * 2000, "x" * 20000, '"\\\n' * 500]
    broken = []
    cases = 0
    for _ in range(n):
        verb = rng.choice(["query", "context", "card", "affected", "explain", "change-plan",
                           "boundaries", "hubs", "path"])  # fmt: skip
        t = rng.choice(texts).replace("\x00", "") or "x"  # no NUL in a command line
        budget = str(rng.choice([1, 3, 10, 40, 100, 500, 4000]))
        argv = {"hubs": ["hubs"], "boundaries": ["boundaries"], "path": ["path", t, t],
                "context": ["context", t, "--format", "json", "--budget", budget]}.get(
            verb, [verb, t])  # fmt: skip
        if verb != "context":
            argv = [*argv, "--json", "--budget", budget]
        if t.startswith("-"):  # a question that starts with "-" goes after "--"
            argv = [argv[0], "--repo", str(repo), "--", *argv[1:]]
        else:
            argv = [*argv, "--repo", str(repo)]
        c, out, _err, _t = _cli(argv, code)
        cases += 1
        try:
            json.loads(out)
        except ValueError:
            if c == 0 or out.strip():
                broken.append(f"{verb} budget {budget}: {out[:80]!r}")
    return {"count": len(broken), "total": cases, "broken": broken[:10]}


def serve_idle(work: Path, idle: int = 300) -> dict:
    """`serve` while `idle` connections are held open (and 50 send half a request): seconds
    to answer a normal request; a duplicate Host header must be refused."""
    import socket
    import threading

    from ctxframe._apps import serve

    cf = _cf()
    repo = work / "serve"
    shutil.copytree(SAMPLE, repo)
    cf.index(str(repo), progress=False)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        srv = serve.make_server(cf.open(str(repo)), port=0)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        port = srv.server_port
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(idle)]
        for _ in range(50):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /api/summary HTTP/1.1\r\nHo")
            held.append(s)
        time.sleep(0.5)
        t0 = time.monotonic()
        answer = b""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
                s.sendall(b"GET /api/query?q=refund HTTP/1.1\r\nHost: localhost\r\n\r\n")
                while chunk := s.recv(65536):
                    answer += chunk
        except OSError:
            pass
        seconds = time.monotonic() - t0
        dup = b""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
                s.sendall(b"GET /api/summary HTTP/1.1\r\nHost: localhost\r\n"
                          b"Host: evil.test\r\n\r\n")  # fmt: skip
                dup = s.recv(64)
        except OSError:
            pass
        for s in held:
            s.close()
        srv.shutdown()
        srv.server_close()
    ok = b" 200 " in answer[:20] and seconds < 1.0
    refused = b" 400 " in dup[:20] or b" 403 " in dup[:20]
    return {"count": int(not ok) + int(not refused), "total": 2, "seconds": round(seconds, 3),
            "answered": answer[:15].decode("latin-1"), "duplicate_host": dup[:15].decode()}


def traceback_cases(work: Path, code: str | None = None) -> dict:
    """The one-line errors of issue 45 item 9 (and 43's): each a clean line, non-zero exit."""
    cf = _cf()
    repo = work / "tb"
    shutil.copytree(SAMPLE, repo)
    cf.index(str(repo), progress=False)
    store = repo / ".ctxframe" / "graph"
    binary = work / "binary.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)
    plain = work / "plain-file"
    plain.write_text("x")
    bad = {}

    def pointer(how: str) -> None:
        cur = store / "current"
        target = os.readlink(cur)
        cur.unlink()
        {"garbage": lambda: cur.write_bytes(b"\x00\xffgarbage"),
         "link to /": lambda: os.symlink("/", cur), "link to ..": lambda: os.symlink("..", cur),
         "loop": lambda: os.symlink("current", cur), "fifo": lambda: os.mkfifo(cur)}[how]()
        return target

    cases: list[tuple[str, list[str], bytes | None, object]] = []
    for how in ("garbage", "link to /", "link to ..", "loop", "fifo"):
        cases.append((f"current {how}: query", ["query", "refund", "--repo", str(repo)], None,
                      how))  # fmt: skip
    cases += [
        ("--store a regular file", ["query", "refund", "--repo", str(repo), "--store",
                                    str(plain)], None, None),
        ("serve --port 99999", ["serve", "--repo", str(repo), "--port", "99999"], None, None),
        ("serve --port -1", ["serve", "--repo", str(repo), "--port=-1"], None, None),
        ("serve --port 70000", ["serve", "--repo", str(repo), "--port", "70000"], None, None),
        ("eval a binary file", ["eval", str(binary), "--repo", str(repo)], None, None),
        ("hook: invalid UTF-8", ["hook", "prompt", "--repo", str(repo)],
         b"\xff\xfe refund \xc3(", None),
        ("hook: lone surrogate", ["hook", "prompt", "--repo", str(repo)],
         b'{"prompt": "refund \\udc80 gateway"}', None),
    ]  # fmt: skip
    for name, argv, stdin, how in cases:
        target = pointer(how) if how else None
        try:
            c, _out, err, _t = _cli(argv, code, stdin=stdin, timeout=30)
        finally:
            if target:
                cur = store / "current"
                cur.unlink()
                os.symlink(target, cur)
        hook = argv[0] == "hook"
        if c is None or _bad_stderr(err) or (not hook and c == 0) or (hook and c != 0):
            bad[name] = "hang" if c is None else f"exit {c}: {err.strip()[-160:]}"
    return {"count": len(bad), "total": len(cases), "bad": bad}


# ------------------------------------------------------------------------------ main
def measure(args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix="ctxframe-faults-"))
    code = args.code
    skip = set(args.skip or ())

    def run(name: str, fn, *a):
        if name in skip:
            return {"count": 0, "total": 0, "skipped": "--skip"}
        _common.log(f"faults: {name}")
        t0 = time.perf_counter()
        try:
            out = fn(*a)
        except Exception as exc:  # an experiment the code under test cannot even run
            out = {"count": 1, "total": 1, "error": f"{type(exc).__name__}: {exc}"[:300]}
        out["seconds_run"] = round(time.perf_counter() - t0, 1)
        return out

    try:
        res = {
            "wrong answers": run("wrong", wrong_answers, work),
            "malformed files aborting the index": run("malformed", malformed, work),
            "tracebacks: corrupt store": run("flips", bit_flips, work, args.flips),
            "tracebacks: fuzzed input": run("fuzz", fuzz, work, args.fuzz),
            "tracebacks: disk full": run("disk", disk_full, work),
            "orphans after SIGKILL": run("orphans", orphans, work, args.kills, 3, code)
            if args.kills
            else {"count": 0, "total": 0, "skipped": "--kills 0"},
            "planted secrets in the store (outside doc)": run("secrets", secrets, work),
            "planted secrets: outputs, store, caches": run("planted", planted_secrets, work),
            "damaged files: wrong answers, bad errors": run("damage", damaged_files, work, code,
                                                            args.variants),
            "invalid ignore patterns aborting": run("ignore", ignore_patterns, work),
            "verbs over 2 s on 100,000 characters": run("long", long_inputs, work, code),
            "--json outputs that do not parse": run("json", json_outputs, work, code),
            "serve: 300 idle connections": run("serve", serve_idle, work),
            "tracebacks: item 9 one-line errors": run("tracebacks", traceback_cases, work,
                                                      code),
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
    ap.add_argument("--skip", action="append", default=None,
                    help="leave out an experiment (wrong, malformed, flips, fuzz, disk, orphans, "
                         "secrets, planted, damage, ignore, long, json, serve, tracebacks)")
    ap.add_argument("--variants", type=int, default=None,
                    help="damaged-file variants to try (default: all, about 160)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.code:
        sys.path.insert(0, args.code)
    import ctxframe

    _common.compile_ctxframe()
    res = measure(args)
    print(f"ctxframe {ctxframe.__file__}")
    rows = [[name, r["count"], r["total"], r.get("skipped", "")] for name, r in res.items()]
    print(_common.format_table(["experiment", "count", "of", "note"], rows))
    extra = res.get("serve: 300 idle connections", {})
    if "seconds" in extra:
        print(f"serve answered in {extra['seconds']} s with 300 idle + 50 half-sent connections")
    longest = res.get("verbs over 2 s on 100,000 characters", {})
    if "max_s" in longest:
        print(f"slowest verb on a 100,000-character input: {longest['max_s']} s (a fresh "
              f"process; the slowest on a short input in the same run: "
              f"{longest['max_short_s']} s)")
    out = args.out or ROOT / "bench" / "results" / "faults.json"
    _common.write_json(out, {"machine": _common.machine_info(), "results": res})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

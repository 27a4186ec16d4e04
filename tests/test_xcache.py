"""The extraction cache (ctxframe._store.xcache): a warm index equals a cold one table for
table, damaged packs are re-extracted, concurrent indexers share it, secrets never reach it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from ctxframe._store import build as _indexer
from ctxframe._store import tables as _store
from ctxframe._store import xcache
from ctxframe.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "data-samples" / "shop"
_TABLES = ("nodes", "edges", "files", "tokens", "vocab", "refs", "bnodes", "bedges")
# Stored in the order extraction yields them (batches of a pool, then the cached files), the
# other tables sorted: the same rows, but not always in the same order.
_EXTRACTION_ORDER = ("refs", "bnodes", "bedges")

# Snippets of each kind extraction handles: code (several grammars), documents, boundary files.
SNIPPETS = {
    "app/models.py": (
        '"""Orders."""\nimport os\nfrom .db import connect\n\n\nclass Order:\n'
        '    """An order."""\n\n    def total(self, rate=1):\n        return connect(rate)\n'
        "\n\ndef main():\n    return Order().total(os.environ.get('RATE'))\n"
    ),
    "app/db.py": "def connect(rate):\n    return rate * 2\n",
    "app/secret.py": (
        'DSN = "postgres://admin:hunter2@db.internal:5432/shop"\n\n'
        'def login(user, password="hunter2"):\n    return user\n'
    ),
    "svc/main.go": (
        'package main\n\nimport "fmt"\n\ntype S struct{}\n\nfunc (s *S) Run() int { '
        "return 1 }\n\nfunc main() { fmt.Println((&S{}).Run()) }\n"
    ),
    "web/api.ts": (
        "import { get } from './http';\nexport class Api {\n  load(id: number) "
        "{ return get(`/items/${id}`); }\n}\n"
    ),
    "web/http.ts": "export function get(url: string) { return fetch(url); }\n",
    "inc/util.h": "namespace util { class Box { public: int n; }; }\n",
    "docs/guide.md": "# Guide\n\nCall `Order.total`.\n\n## Setup\n\nRun it.\n",
    ".env": "DATABASE_URL=postgres://app:hunter2@db/shop\nRATE=2\n",
    "package.json": '{"name": "web", "dependencies": {"left-pad": "1.0.0"}}\n',
    "blob.bin": "\0\1\2 binary",
}


def _repo(where: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = where / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return where


def _tables(store: str) -> dict[str, pl.DataFrame]:
    out = {}
    for name in _TABLES:
        frame = _store.read_table(store, name)
        out[name] = frame.drop("mtime_ns") if name == "files" else frame
    return out


def _same(a: str, b: str) -> None:
    """Every table of two stores equal: as stored (sorted tables) and as a set of rows."""
    ta, tb = _tables(a), _tables(b)
    for name in _TABLES:
        x, y = ta[name], tb[name]
        assert x.schema == y.schema, name
        assert x.sort(pl.all(), nulls_last=True).equals(y.sort(pl.all(), nulls_last=True)), name
        if name not in _EXTRACTION_ORDER:
            assert x.equals(y), name


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    """A private cache used for every index, whatever the number of files."""
    where = tmp_path / "xcache"
    monkeypatch.setenv("CTXFRAME_CACHE_DIR", str(where))
    monkeypatch.delenv("CTXFRAME_NO_CACHE", raising=False)
    monkeypatch.setattr(xcache, "MIN_JOBS", 1)
    return where


def _index(root: Path, **kw):
    return _indexer.index(str(root), progress=False, **kw)


def _packs(cache: Path) -> list[Path]:
    where = cache / xcache.LAYOUT
    if not where.exists():
        return []
    return sorted(p for p in where.iterdir() if not p.name.startswith("."))


_SLOW = pytest.mark.slow  # the shop through the pool: the snippets cover those paths by default


@pytest.mark.parametrize(
    ("corpus", "mode"),
    [
        *[("snippets", m) for m in ("one-batch", "pooled", "pooled-spilled")],
        ("shop", "one-batch"),
        pytest.param("shop", "pooled", marks=_SLOW),
        pytest.param("shop", "pooled-spilled", marks=_SLOW),
    ],
)
def test_warm_index_equals_no_cache(tmp_path: Path, cache: Path, monkeypatch, corpus, mode):
    """Cold (fills the cache), warm (every file from it) and --no-cache stores are equal."""
    if mode != "one-batch":
        monkeypatch.setattr(_indexer, "_POOL_MIN_FILES", 1)
        monkeypatch.setattr(_indexer, "_CHUNK", 4)
        monkeypatch.setattr(_indexer, "_SPILL_FILES", 0 if mode == "pooled-spilled" else 10**9)
        monkeypatch.setattr(xcache, "_PART_FILES", 2)  # a spilled warm run: several parts
    copies = []
    for name in ("cold", "warm", "plain"):
        dest = tmp_path / name
        if corpus == "shop":
            shutil.copytree(SAMPLE, dest)
        else:
            _repo(dest, SNIPPETS)
        copies.append(dest)
    cold = _index(copies[0])
    assert cold.cached == 0 and cold.parsed > 0
    assert len(_packs(cache)) == 1
    warm = _index(copies[1])
    plain = _index(copies[2], cache=False)
    # every parsed file but binaries (re-detected from their bytes) came from the cache
    assert warm.cached == warm.parsed == plain.parsed
    assert plain.cached == 0
    assert len(_packs(cache)) == 1  # a fully warm run adds no pack
    _same(warm.store, plain.store)
    _same(cold.store, plain.store)


def test_only_changed_files_are_parsed(tmp_path: Path, cache: Path) -> None:
    """Another release: the files whose bytes differ are parsed, the rest come from the
    cache; a file's bytes under another path are another entry (ids derive from paths)."""
    _index(_repo(tmp_path / "v1", SNIPPETS))
    v2 = dict(SNIPPETS)
    v2["app/db.py"] = "def connect(rate):\n    return rate * 3\n\n\ndef close():\n    pass\n"
    v2["app/orders.py"] = SNIPPETS["app/models.py"]  # same bytes, new path
    del v2["web/http.ts"]
    warm = _index(_repo(tmp_path / "v2", v2))
    plain = _index(_repo(tmp_path / "v2-plain", v2), cache=False)
    assert (warm.parsed, warm.cached) == (plain.parsed, plain.parsed - 2)
    _same(warm.store, plain.store)
    assert len(_packs(cache)) == 2  # the second run's new entries: one more pack


def test_spilled_lookup_equals_in_memory(tmp_path: Path, cache: Path, monkeypatch) -> None:
    """A lookup over two packs given a scratch directory streams references and body counts
    there in parts of whole files, one batch scanning each; together they equal the
    in-memory lookup's one batch."""
    _index(_repo(tmp_path / "v1", SNIPPETS))
    v2 = {**SNIPPETS, "app/db.py": "def connect(rate):\n    return rate * 3\n"}
    _index(_repo(tmp_path / "v2", v2))
    assert len(_packs(cache)) == 2
    both = {**v2, "app/old_db.py": SNIPPETS["app/db.py"]}
    root = _repo(tmp_path / "both", both)
    jobs = [(p, None) for p in sorted(both)]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(xcache, "_PART_FILES", 3)  # parts of at most 3 files
    [plain], left = xcache.Session().lookup(str(root), jobs)
    spilled, left_too = xcache.Session().lookup(str(root), jobs, str(scratch))
    assert left == left_too and [j for j in jobs if j not in left] == [
        (p, None) for p in sorted(v2) if p != "blob.bin"
    ]
    assert len(spilled) > 2 and all(
        isinstance(b.refs, pl.LazyFrame) and isinstance(b.content, pl.LazyFrame) for b in spilled
    )
    # each part of references holds whole files, at most three
    part_paths = [set(b.refs.collect()["path"]) for b in spilled]
    assert all(len(p) <= 3 for p in part_paths)
    assert sum(map(len, part_paths)) == len(set().union(*part_paths))
    for name in ("defs", "refs", "boundary_nodes", "boundary_edges", "content"):
        a = getattr(plain, name)
        b = pl.concat([getattr(part, name).lazy() for part in spilled]).collect()
        assert a.sort(pl.all(), nulls_last=True).equals(b.sort(pl.all(), nulls_last=True)), name
    assert [f.path for f in plain.files] == [f.path for b in spilled for f in b.files]


def _secret_free(cache: Path) -> None:
    for pack in _packs(cache):
        for part in pack.glob("*.parquet"):
            frame = pl.read_parquet(part)
            for col in frame.columns:
                if frame[col].dtype == pl.String:
                    assert not frame[col].str.contains("hunter2").any(), (part.name, col)


def test_no_secret_value_is_cached(tmp_path: Path, cache: Path) -> None:
    """The cache holds redacted rows and token counts, never a password written in code."""
    _index(_repo(tmp_path / "a", SNIPPETS))
    assert _packs(cache)
    _secret_free(cache)
    assert "hunter2" in (tmp_path / "a" / "app" / "secret.py").read_text()
    warm = _index(_repo(tmp_path / "b", SNIPPETS))
    assert warm.cached > 0
    for name in _TABLES:
        frame = _store.read_table(warm.store, name)
        for col in frame.columns:
            if frame[col].dtype == pl.String:
                assert not frame[col].str.contains("hunter2").any(), (name, col)


def _truncate(part: Path) -> None:
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])


def _flip(part: Path) -> None:
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage",
    [
        ("refs.parquet", _truncate),
        ("defs.parquet", _flip),
        ("content.parquet", _flip),
        ("files.parquet", lambda p: p.unlink()),
        ("manifest.json", lambda p: p.write_text('{"parts": ')),
        ("manifest.json", lambda p: p.write_text("[]")),
    ],
    ids=["truncated", "flipped-defs", "flipped-content", "missing-part", "bad-json", "not-a-map"],
)
def test_damaged_pack_is_re_extracted(tmp_path: Path, cache: Path, damage) -> None:
    """A pack whose bytes do not match its manifest is deleted and its files parsed again:
    the store is the same as without a cache, never a wrong table."""
    _index(_repo(tmp_path / "a", SNIPPETS))
    (pack,) = _packs(cache)
    part, hurt = damage
    hurt(pack / part)
    again = _index(_repo(tmp_path / "b", SNIPPETS))
    plain = _index(_repo(tmp_path / "c", SNIPPETS), cache=False)
    assert again.cached == 0
    _same(again.store, plain.store)
    assert pack not in _packs(cache)  # removed, and the run wrote a sound one
    assert _index(_repo(tmp_path / "d", SNIPPETS)).cached == plain.parsed


def test_other_code_fingerprint_never_hits(tmp_path: Path, cache: Path, monkeypatch) -> None:
    """Entries made by other code (a ctxframe, grammar or query edit) are not used."""
    _index(_repo(tmp_path / "a", SNIPPETS))
    monkeypatch.setattr(xcache, "fingerprint", lambda: "another ctxframe")
    assert _index(_repo(tmp_path / "b", SNIPPETS)).cached == 0


def test_query_file_is_part_of_the_key(cache: Path, monkeypatch) -> None:
    """Editing one language's .scm query changes its files' keys only."""
    data = b"def f():\n    pass\n"
    before = xcache.entry_key("a.py", data, "h"), xcache.entry_key("a.go", b"package a\n", "h")
    real = xcache._query_hash

    def edited(query):
        return "edited" if query == "python" else real(query)

    monkeypatch.setattr(xcache, "_query_hash", edited)
    after = xcache.entry_key("a.py", data, "h"), xcache.entry_key("a.go", b"package a\n", "h")
    assert before[0] != after[0] and before[1] == after[1]


def test_small_jobs_and_no_cache_leave_it_alone(tmp_path: Path, cache: Path, monkeypatch):
    """--no-cache (and CTXFRAME_NO_CACHE) neither read nor write it; nor does an edit of a
    few files (fewer than MIN_JOBS to extract)."""
    root = _repo(tmp_path / "a", SNIPPETS)
    _index(root, cache=False)
    monkeypatch.setenv("CTXFRAME_NO_CACHE", "1")
    _index(root, rebuild=True)
    assert _packs(cache) == []
    monkeypatch.delenv("CTXFRAME_NO_CACHE")
    monkeypatch.setattr(xcache, "MIN_JOBS", 64)
    _index(root, rebuild=True)
    assert _packs(cache) == []


def test_lru_eviction_keeps_the_cap(tmp_path: Path, cache: Path, monkeypatch) -> None:
    """Past the cap, the least recently used packs go first; a pack used by a run is new."""
    first = dict(SNIPPETS)
    _index(_repo(tmp_path / "a", first))
    (pack_a,) = _packs(cache)
    size = sum(p.stat().st_size for p in pack_a.glob("*.parquet"))
    second = {f"other/{k}": v for k, v in SNIPPETS.items()}
    _index(_repo(tmp_path / "b", second))
    pack_b = next(p for p in _packs(cache) if p != pack_a)
    os.utime(pack_b, (1, 1))  # b: used long ago; a: just now
    assert _index(_repo(tmp_path / "a2", first)).cached > 0  # touches a
    freed = xcache.evict(str(cache), cap=int(size * 1.5))
    assert freed > 0 and _packs(cache) == [pack_a]
    monkeypatch.setenv("CTXFRAME_CACHE_MAX_MB", "0")  # a cap of 0: every pack goes at once
    _index(_repo(tmp_path / "c", {f"third/{k}": v for k, v in SNIPPETS.items()}))
    assert _packs(cache) == []


def test_cli_cache_info_clear_and_no_cache(tmp_path: Path, cache: Path, capsys) -> None:
    root = _repo(tmp_path / "a", SNIPPETS)
    assert main(["index", "--repo", str(root), "--no-cache", "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] == 0
    assert main(["cache", "info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == 0
    assert main(["index", "--repo", str(root), "--rebuild", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["cache", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["path"] == str(cache) and info["packs"] == 1 and info["entries"] >= 9
    assert info["bytes"] > 0 and info["max_bytes"] == xcache.DEFAULT_MAX_MB * 1048576
    copy = _repo(tmp_path / "b", SNIPPETS)
    assert main(["index", "--repo", str(copy), "--no-progress"]) == 0
    assert "from the extraction cache" in capsys.readouterr().out
    assert main(["cache", "info"]) == 0
    assert f"extraction cache {cache}:" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert "cleared" in capsys.readouterr().out
    assert _packs(cache) == []


_WORKER = """
import sys
from ctxframe._store import build
r = build.index(sys.argv[1], progress=False, processes=1)
print(r.parsed, r.cached)
"""


def test_concurrent_indexers_share_the_cache(tmp_path: Path, cache: Path) -> None:
    """Several processes filling one cache at once: each run and each later warm run gives
    the same store as without the cache (packs appear whole, by one rename)."""
    files = {f"pkg/m{i:03d}.py": f"def f{i}(x):\n    return g{i - 1}(x)\n" for i in range(70)}
    files.update(SNIPPETS)
    roots = [_repo(tmp_path / f"r{i}", files) for i in range(3)]
    env = {**os.environ, "CTXFRAME_CACHE_DIR": str(cache)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(r)], env=env, stdout=subprocess.PIPE)
        for r in roots
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    plain = _index(_repo(tmp_path / "plain", files), cache=False)
    for r in roots:
        _same(str(r / ".ctxframe" / "graph"), plain.store)
    assert 1 <= len(_packs(cache)) <= 3
    warm = _index(_repo(tmp_path / "warm", files))
    assert warm.cached == plain.parsed
    _same(warm.store, plain.store)


def test_branch_switch_in_place_takes_cached_rows(tmp_path: Path, cache: Path) -> None:
    """Back on a branch indexed before: the store's re-index (its delta or incremental path)
    takes the switched files from the cache and equals a full rebuild without it."""
    v2 = {k: v.replace("rate", "ratio") for k, v in SNIPPETS.items()}
    root = _repo(tmp_path / "repo", SNIPPETS)
    _index(root)
    _repo(root, v2)
    changed = _index(root)
    assert changed.cached == 0 and changed.parsed > 0
    _repo(root, SNIPPETS)
    back = _index(root)
    assert back.cached == changed.parsed and back.mode in ("delta", "incremental")
    plain = _index(_repo(tmp_path / "plain", SNIPPETS), cache=False)
    _same(back.store, plain.store)


@pytest.mark.slow
def test_django_50_after_51_equals_no_cache(tmp_path: Path, monkeypatch) -> None:
    """Django 5.0 indexed after 5.1 takes most files from the cache, and its store has the
    same rows as a --no-cache index of it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import _common

    monkeypatch.setenv("CTXFRAME_CACHE_DIR", str(tmp_path / "xcache"))
    new = _common.ensure_corpus(_common.CORPORA["django"])
    old = _common.ensure_corpus(_common.Corpus("django", "5.0", "django/db/models/query.py"))
    trees = {
        name: shutil.copytree(src, tmp_path / name, symlinks=True)
        for name, src in (("5.1", new), ("5.0", old), ("5.0-plain", old))
    }
    assert _index(trees["5.1"]).cached == 0
    warm = _index(trees["5.0"])
    plain = _index(trees["5.0-plain"], cache=False)
    assert warm.parsed == plain.parsed and warm.cached > 0.8 * plain.parsed
    _same(warm.store, plain.store)


def test_unwritable_cache_never_fails_the_index(tmp_path: Path, cache: Path) -> None:
    """A cache directory that cannot be written (here: a file in its place) leaves the index
    as it would be without the cache."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("not a directory")
    got = _index(_repo(tmp_path / "a", SNIPPETS))
    plain = _index(_repo(tmp_path / "b", SNIPPETS), cache=False)
    assert got.cached == 0
    _same(got.store, plain.store)


def test_files_not_looked_up_are_left_out_of_the_pack(tmp_path: Path, cache: Path, monkeypatch):
    """A file extracted but never looked up (unreadable to the cache, changed in between)
    adds no entry; the others in its batch do, and a later run takes only them."""
    real = xcache._wanted

    def blind(root, path, known):
        return None if path == "app/models.py" else real(root, path, known)

    monkeypatch.setattr(xcache, "_wanted", blind)
    _index(_repo(tmp_path / "a", SNIPPETS))
    monkeypatch.setattr(xcache, "_wanted", real)
    warm = _index(_repo(tmp_path / "b", SNIPPETS))
    plain = _index(_repo(tmp_path / "c", SNIPPETS), cache=False)
    assert warm.cached == plain.parsed - 1
    _same(warm.store, plain.store)

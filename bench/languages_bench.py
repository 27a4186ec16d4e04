"""Index one real project per language family and print ctxframe's coverage report.

Not part of CI. Every corpus is fetched at run time by package name with the ordinary clients
(PyPI via ``pip download``, npm via ``npm pack``, Debian via ``apt-get download`` /
``apt-get install``) into the bench cache (``~/.cache/ctxframe-bench/`` or
``CTXFRAME_BENCH_CACHE``); nothing downloaded enters the repository.

    python bench/languages_bench.py [--corpus NAME ...] [--no-linux] [--out FILE]

For each corpus: ``ctxframe index DIR --rebuild --json`` measured as a child (wall time, peak
RSS), then the per-language coverage table (files, parse errors, nodes, resolved-call share).
The ``linux`` corpus (Debian ``linux-source``: the kernel tarball in /usr/src) is the scale
check: it reports time, peak RSS, nodes and edges beside ``ctags -R`` on the same tree in the
same run (targets, informational: under 5 minutes on 2 cores, RSS under 2 GB). The Debian
tarball's top-level ``.gitignore`` ends with a packaging rule ignoring everything (``/*``); the
bench removes that block from its extracted copy so the tree is indexed as upstream would be.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c


@dataclasses.dataclass(frozen=True)
class Source:
    """A corpus fetched by package name: ``how`` is pypi-sdist, pypi-wheel, npm or deb."""

    name: str
    how: str
    package: str
    family: str  # the language family it stands for
    subdir: str = ""  # index only this part of the unpacked tree


SOURCES = {
    s.name: s
    for s in (
        Source("requests", "pypi-sdist", "requests==2.32.3", "python"),
        Source("zod", "npm", "zod@3.23.8", "typescript"),
        Source("react-native-webview", "npm", "react-native-webview@13.12.2", "java"),
        Source("cobra", "deb", "golang-github-spf13-cobra-dev", "go", "usr/share/gocode"),
        Source("serde-json", "deb", "librust-serde-json-dev", "rust", "usr/share/cargo"),
        Source("greenlet", "pypi-sdist", "greenlet==3.1.1", "cpp"),
        Source("pythonnet", "pypi-sdist", "pythonnet==3.0.4", "csharp"),
        Source("ziglang", "pypi-wheel", "ziglang==0.13.0", "zig", "ziglang/lib/std"),
        Source("postgresql", "deb", "postgresql-15", "sql", "usr/share/postgresql"),
    )
}
LINUX = "linux"


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise c.Unavailable(f"{' '.join(cmd)}: {(proc.stderr or proc.stdout).strip()[-300:]}")


def fetch(src: Source) -> Path:
    """Unpacked tree of one corpus in the cache (downloaded once)."""
    base = c.cache_dir() / "languages" / src.name
    tree = base / "tree"
    if tree.is_dir() and any(tree.iterdir()):
        return tree / src.subdir if src.subdir else tree
    dl = base / "download"
    dl.mkdir(parents=True, exist_ok=True)
    if src.how in ("pypi-sdist", "pypi-wheel"):
        fmt = ["--no-binary", ":all:"] if src.how == "pypi-sdist" else ["--only-binary", ":all:"]
        _run(
            [sys.executable, "-m", "pip", "download", "--no-deps", *fmt, src.package, "-d", str(dl)]
        )
    elif src.how == "npm":
        if not shutil.which("npm"):
            raise c.Unavailable("npm is not installed")
        _run(["npm", "pack", src.package, "--silent"], cwd=dl)
    elif src.how == "deb":
        _run(["apt-get", "download", src.package], cwd=dl)
    files = sorted(p for p in dl.iterdir() if p.is_file())
    if not files:
        raise c.Unavailable(f"nothing downloaded for {src.package}")
    tree.mkdir(parents=True, exist_ok=True)
    for f in files:
        if f.suffix == ".deb":
            _run(["dpkg-deb", "-x", str(f), str(tree)])
        else:
            c.unpack(f, tree)
    return tree / src.subdir if src.subdir else tree


def fetch_linux() -> Path:
    """The kernel tree from Debian's ``linux-source`` package, extracted into the cache."""
    tars = sorted(glob.glob("/usr/src/linux-source-*.tar.*"))
    if not tars:
        c._apt_install("linux-source")
        tars = sorted(glob.glob("/usr/src/linux-source-*.tar.*"))
    if not tars:
        raise c.Unavailable("apt-get could not install linux-source")
    name = Path(tars[-1]).name.split(".tar")[0]
    base = c.cache_dir() / "linux"
    tree = base / name
    if not tree.is_dir():
        base.mkdir(parents=True, exist_ok=True)
        _run(["tar", "-xf", tars[-1], "-C", str(base)])
    gi = tree / ".gitignore"
    text = gi.read_text() if gi.is_file() else ""
    cut = text.find("# Debian packaging: ignore everything")
    if cut != -1:  # the packaging rule `/*` would hide the whole tree
        gi.write_text(text[: text.rfind("#\n", 0, cut)])
    return tree


def index_measured(tree: Path, store: Path, timeout: float) -> tuple[c.Measurement, dict]:
    cmd = [*c.ctxframe_cmd(), "index", "--repo", str(tree), "--rebuild", "--json"]
    cmd += ["--store", str(store)]
    m = c.run_measured(cmd, timeout=timeout)
    data = c.parse_json_output(m.stdout) if m.ok else {}
    return m, data if isinstance(data, dict) else {}


def coverage_rows(store: Path, root: Path) -> list[dict]:
    import ctxframe as cf

    g = cf.open(str(root), store=str(store))
    return g.coverage().to_dicts()


def print_coverage(rows: list[dict]) -> None:
    import polars as pl

    from ctxframe._store.coverage import COLUMNS, format_coverage

    table = pl.DataFrame(rows, schema_overrides={"resolved_share": pl.Float64}).select(COLUMNS)
    print(format_coverage(table))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", nargs="*", default=[*SOURCES, LINUX])
    ap.add_argument("--no-linux", action="store_true", help="skip the Linux kernel scale run")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    names = [n for n in args.corpus if not (args.no_linux and n == LINUX)]
    results: dict[str, dict] = {}
    failed = False
    work = c.cache_dir() / "languages" / "stores"
    for name in names:
        try:
            tree = fetch_linux() if name == LINUX else fetch(SOURCES[name])
        except (c.Unavailable, KeyError, OSError) as exc:
            c.log(f"{name}: unavailable: {exc}")
            results[name] = {"error": str(exc)}
            continue
        store = work / name
        shutil.rmtree(store, ignore_errors=True)
        c.log(f"{name}: indexing {tree}")
        m, data = index_measured(tree, store, args.timeout)
        entry: dict = {"tree": str(tree), "index": m.to_json()}
        if not m.ok:
            c.log(f"{name}: ctxframe index failed: {m.failure()}")
            failed = True
            results[name] = entry
            continue
        rows = coverage_rows(store, tree)
        entry.update(
            files=data.get("files"), nodes=data.get("nodes"), edges=data.get("edges"),
            coverage=rows,
        )  # fmt: skip
        print(
            f"\n== {name} ({SOURCES[name].family if name in SOURCES else 'c, kernel'}): "
            f"{data.get('files')} files, {data.get('nodes')} nodes, {data.get('edges')} edges "
            f"in {m.wall_s:.1f}s, peak RSS {m.peak_tree_mb:.0f} MB (tree), "
            f"{m.peak_single_mb:.0f} MB (largest process)"
        )
        print_coverage(rows)
        if name == LINUX:
            try:
                c.ensure_ctags()
                tags = store.parent / "linux.tags"
                cm = c.run_measured(["ctags", "-R", "-f", str(tags), str(tree)], timeout=3600)
                entry["ctags"] = cm.to_json()
                print(
                    f"ctags -R on the same tree: {cm.wall_s:.1f}s, peak RSS "
                    f"{cm.peak_single_mb:.0f} MB; ctxframe/ctags = {m.wall_s / cm.wall_s:.1f}x; "
                    f"targets: < 300 s ({'met' if m.wall_s < 300 else 'missed'}), "
                    f"< 2048 MB ({'met' if m.peak_tree_mb < 2048 else 'missed'}) "
                    f"on {os.cpu_count()} cores"
                )
            except c.Unavailable as exc:
                entry["ctags"] = {"error": str(exc)}
        results[name] = entry
    out = args.out or c.default_out("languages")
    c.write_json(out, {"machine": c.machine_info(), "results": results})
    c.log(f"results: {out}")
    print(json.dumps({k: v.get("error", "ok") for k, v in results.items()}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

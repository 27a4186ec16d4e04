"""Coverage data as rows: which lines ran, and under which test (where the data says).

Three formats, found at the repository's root or given by path: coverage.py's data file
(`.coverage`, read through the `coverage` package's own API, with its dynamic contexts —
`dynamic_context = test_function` or pytest-cov's `--cov-context=test` name the test that ran
each line), Cobertura XML (`coverage.xml`) and LCOV (`lcov.info`, its `TN:` test names as
contexts). Each gives (path, line, context, hit) rows: `hit` false for a line the data lists
as executable but not run, `context` "" where no test is named. Paths are made relative to
the repository (an absolute path under the root, else the longest suffix that is a file of
the repository: data measured in an installed copy).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import polars as pl

from ctxframe._core.errors import CtxframeError

DEFAULT_NAMES = (".coverage", "coverage.xml", "lcov.info")
ROWS = {"path": pl.String, "line": pl.Int32, "context": pl.String, "hit": pl.Boolean}


class CoverageDataError(CtxframeError):
    """Coverage data that cannot be read."""


@dataclass(frozen=True)
class Source:
    """A coverage data file: its path, format (`coverage`, `cobertura`, `lcov`), and what
    tells a changed one (size, mtime, hash)."""

    path: str
    kind: str
    size: int
    mtime_ns: int
    sha256: str

    def stamp(self) -> dict:
        """What the store's meta keeps of it."""
        return {"path": self.path, "kind": self.kind, "size": self.size,
                "mtime_ns": self.mtime_ns, "sha256": self.sha256}  # fmt: skip


def _kind(path: str) -> str:
    name = os.path.basename(path).lower()
    if name.endswith(".xml"):
        return "cobertura"
    if name.endswith((".info", ".lcov")):
        return "lcov"
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head.startswith(b"SQLite format 3"):
        return "coverage"
    if head.lstrip().startswith(b"<"):
        return "cobertura"
    if head.startswith((b"TN:", b"SF:")):
        return "lcov"
    raise CoverageDataError(
        f"{path}: not coverage data (coverage.py's data file, Cobertura XML or LCOV): "
        "give one of those with --coverage, or --no-coverage"
    )


def find(root: str, given: str | None = None, enabled: bool = True) -> Source | None:
    """The coverage data to read: `given` (a path, relative to the current directory), else
    the first of DEFAULT_NAMES at the root; None when disabled or there is none."""
    if not enabled:
        return None
    if given is not None:
        path = os.path.abspath(given)
        if not os.path.isfile(path):
            raise CoverageDataError(f"{given}: no such coverage data file")
    else:
        path = next((p for n in DEFAULT_NAMES if os.path.isfile(p := os.path.join(root, n))), None)
        if path is None:
            return None
    st = os.stat(path)
    with open(path, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    return Source(path, _kind(path), st.st_size, st.st_mtime_ns, digest)


def read(source: Source, root: str, paths: pl.Series) -> pl.DataFrame:
    """(path, line, context, hit) rows of the data, for the repository's files `paths`."""
    try:
        raw = {"coverage": _coverage_py, "cobertura": _cobertura, "lcov": _lcov}[source.kind](
            source.path
        )
    except CoverageDataError:
        raise
    except Exception as exc:  # a foreign file format: one line, never a traceback
        raise CoverageDataError(
            f"{source.path}: cannot read it as {source.kind} data ({type(exc).__name__}: "
            f"{exc}): give another file with --coverage, or --no-coverage"
        ) from exc
    return _relative(raw, root, paths)


def _coverage_py(path: str) -> pl.DataFrame:
    try:
        from coverage import CoverageData
    except ImportError as exc:
        raise CoverageDataError(
            f"{path} is coverage.py data: reading it needs the `coverage` package "
            "(pip install 'ctxframe[coverage]'), or pass --no-coverage"
        ) from exc
    data = CoverageData(basename=path)
    data.read()
    files, lines, contexts = [], [], []
    for measured in sorted(data.measured_files()):
        by_line = data.contexts_by_lineno(measured)
        for line, ctxs in by_line.items():
            for ctx in ctxs or [""]:
                files.append(measured)
                lines.append(line)
                contexts.append(ctx)
    frame = pl.DataFrame(
        {"path": files, "line": lines, "context": contexts},
        schema={"path": pl.String, "line": pl.Int32, "context": pl.String},
    ).with_columns(hit=pl.lit(True))
    return pl.concat([frame, _not_run(path, data.measured_files())])


def _not_run(path: str, measured) -> pl.DataFrame:
    """The statements coverage.py's analysis finds but the data never saw run (for each
    measured file still where it was measured): what makes a covered share."""
    from coverage import Coverage

    cov = Coverage(data_file=path, config_file=False)
    cov.load()
    rows: list[tuple[str, int]] = []
    for file in measured:
        if not os.path.isfile(file):
            continue
        try:
            _, _, _, missing, _ = cov.analysis2(file)
        except Exception:  # a file coverage.py cannot parse any more: its share stays unknown
            continue
        rows.extend((file, n) for n in missing)
    return pl.DataFrame(rows, schema={"path": pl.String, "line": pl.Int32}, orient="row").select(
        "path", "line", context=pl.lit(""), hit=pl.lit(False)
    )


def _cobertura(path: str) -> pl.DataFrame:
    from defusedxml import ElementTree

    tree = ElementTree.parse(path)
    sources = [s.text or "" for s in tree.getroot().iter("source")]
    rows: list[tuple[str, int, bool]] = []
    for cls in tree.getroot().iter("class"):
        name = cls.get("filename") or ""
        full = next((os.path.join(s, name) for s in sources if s), name)
        for ln in cls.iter("line"):
            number = ln.get("number")
            if number and number.isdigit():
                rows.append((full, int(number), int(ln.get("hits") or 0) > 0))
    return pl.DataFrame(
        rows, schema={"path": pl.String, "line": pl.Int32, "hit": pl.Boolean}, orient="row"
    ).select("path", "line", context=pl.lit(""), hit="hit")


def _lcov(path: str) -> pl.DataFrame:
    rows: list[tuple[str, int, str, bool]] = []
    test, file = "", None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            line = raw.strip()
            if line.startswith("TN:"):
                test = line[3:].strip()
            elif line.startswith("SF:"):
                file = line[3:].strip()
            elif line.startswith("DA:") and file is not None:
                parts = line[3:].split(",")
                if len(parts) >= 2 and parts[0].isdigit():
                    hits = parts[1].strip()
                    ran = hits.isdigit() and int(hits) > 0
                    rows.append((file, int(parts[0]), test if ran else "", ran))
            elif line == "end_of_record":
                file = None
    return pl.DataFrame(rows, schema=ROWS, orient="row")


def _relative(raw: pl.DataFrame, root: str, paths: pl.Series) -> pl.DataFrame:
    """Data paths as the repository's: under the root, else the longest path suffix that is
    one of `paths` (a file measured where the package was installed)."""
    if raw.is_empty():
        return pl.DataFrame(schema=ROWS)
    root = os.path.realpath(root)
    seen = raw.select("path").unique()
    mapped = []
    known = set(paths.to_list())
    for p in seen["path"].to_list():
        norm = p.replace("\\", "/")
        real = os.path.realpath(p) if os.path.isabs(p) else os.path.join(root, norm)
        rel = os.path.relpath(real, root).replace(os.sep, "/") if real.startswith(
            root + os.sep) else None  # fmt: skip
        if rel is None or rel not in known:
            parts = norm.split("/")
            rel = next((s for i in range(len(parts)) if (s := "/".join(parts[i:])) in known), None)
        mapped.append((p, rel))
    table = pl.DataFrame(mapped, schema={"path": pl.String, "rel": pl.String}, orient="row")
    return (
        raw.join(table, on="path")
        .filter(pl.col("rel").is_not_null())
        .select(path="rel", line="line", context="context", hit="hit")
        .cast(ROWS)
    )

"""`Audit`: the audit's frames with their summary, as text, Markdown, HTML (a notebook view
and a self-contained page), JSON and Parquet. `run` builds one from an `AuditInput`."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import polars as pl

from ctxframe._audit.facts import AuditInput, Facts
from ctxframe._audit.sections import FRAME_SECTION, SECTIONS, Section
from ctxframe._core.errors import BadInput
from ctxframe._render.budget import fit_blocks
from ctxframe._render.html import render

PREVIEW_ROWS = 10  # rows each report table shows
TEXT_ROWS = 5  # rows per section in the text form
JSON_ROWS = 100  # rows per frame in `to_dict()` unless told


def section_names(asked: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """The sections to compute, in report order: all of them, or those named (a section's
    name or one of its frames' names)."""
    if asked is None:
        return list(SECTIONS)
    names = [asked] if isinstance(asked, str) else list(asked)
    out = []
    for name in names:
        key = str(name).strip().lower().replace("-", "_")
        key = {"dead_code": "dead", "untested_code": "untested"}.get(key, key)
        section = key if key in SECTIONS else FRAME_SECTION.get(key)
        if section is None:
            known = ", ".join(SECTIONS)
            raise BadInput(f"no audit section {name!r}; sections: {known}")
        if section not in out:
            out.append(section)
    return [s for s in SECTIONS if s in out]


def run(given: AuditInput, sections: str | list[str] | None = None) -> Audit:
    """Compute the asked sections (all by default) over the input's frames."""
    wanted = section_names(sections)
    f = Facts(given)
    frames: dict[str, pl.DataFrame] = {}
    lines: dict[str, str] = {}
    computed: dict[str, dict[str, pl.DataFrame]] = {}
    skipped: list[str] = []

    def compute(name: str) -> dict[str, pl.DataFrame]:
        if name not in computed:
            s = SECTIONS[name]
            computed[name] = s.compute(f, get)
        return computed[name]

    def get(frame: str) -> pl.DataFrame:
        return compute(FRAME_SECTION[frame])[frame]

    for name in wanted:
        s = SECTIONS[name]
        missing = [k for k in s.needs if k not in given.extra]
        if missing:
            skipped.append(f"{s.title}: needs {', '.join(missing)}")
            continue
        got = compute(name)
        for frame in s.frames:
            frames[frame] = got[frame]
        lines[name] = s.summary(got, f)
    code = f.modules.filter(~pl.col("is_test"))
    overview = {
        "root": given.root,
        "files": int(f.files["skip_reason"].is_null().sum()),
        "code_files": code.height,
        "lines": int(code["lines"].sum() or 0),
        "functions": f.functions.filter(~pl.col("is_test")).height,
        "languages": sorted(code["language"].unique().to_list()),
        "package_depth": f.depth(),
        "coverage_data": given.coverage is not None and not given.coverage.is_empty(),
    }
    return Audit(
        frames=frames,
        sections=[s for s in wanted if s in lines],
        lines=lines,
        overview=overview,
        notes=[*dict.fromkeys(f.notes), *skipped],
        thresholds=dict(f.config.thresholds),
    )


@dataclass
class Audit:
    """The audit of one graph: a Polars frame per finding (`audit.dead`, `audit.cycles`, …;
    columns in docs/audit.md), a one-line summary per section, and the renderings."""

    frames: dict[str, pl.DataFrame]
    sections: list[str]
    lines: dict[str, str]
    overview: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    thresholds: dict[str, int] = field(default_factory=dict)
    verb = "audit"

    def __getattr__(self, name: str) -> pl.DataFrame:
        frames = self.__dict__.get("frames", {})
        if name in frames:
            return frames[name]
        raise AttributeError(
            f"this audit has no frame {name!r}; it has: {', '.join(frames) or 'none'}"
        )

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.__getattr__(name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.frames})

    # -- summary -------------------------------------------------------------------------------
    @property
    def summary(self) -> dict[str, Any]:
        """The overview (root, files, lines, functions, languages, package depth) and one line
        per section, plus notes on what could not be looked at."""
        return {
            **self.overview,
            "sections": {s: self.lines[s] for s in self.sections},
            "notes": list(self.notes),
        }

    def _head(self) -> str:
        o = self.overview
        langs = ", ".join(o["languages"]) or "no code"
        return (f"audit of {o['root'] or 'the index'}: {o['code_files']:,} code files, "
                f"{o['lines']:,} lines, {o['functions']:,} functions ({langs})")  # fmt: skip

    # -- text ----------------------------------------------------------------------------------
    def blocks(self, rows: int = TEXT_ROWS) -> list[list[str]]:
        out = [["summary"] + [f"  {SECTIONS[s].title:<14} {self.lines[s]}" for s in self.sections]]
        if self.notes:
            out.append(["notes"] + [f"  {n}" for n in self.notes])
        for s in self.sections:
            sec = SECTIONS[s]
            main = sec.frames[0]
            frame = self.frames[main]
            cols = _present(frame, sec.show.get(main, ()))
            lines = [f"{sec.title} — {main} ({frame.height:,} rows)"]
            lines += [f"  {line}" for line in _aligned(frame, cols, rows)]
            if frame.height > rows:
                lines.append(f"  … {frame.height - rows:,} more (audit.{main})")
            out.append(lines)
        return out

    def render(self, budget_tokens: int | None = None) -> str:
        """The text form: the summary, then each section's first rows; within the budget
        (tokens, 4 characters each) when one is given."""
        fitted = fit_blocks(
            self.blocks(), budget_tokens=budget_tokens or 100_000, noun="lines",
            header=[self._head()],
        )  # fmt: skip
        return fitted.text

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        shown = ", ".join(f"{k} ({v.height})" for k, v in self.frames.items())
        return f"<ctxframe.Audit {self.overview.get('root')}: {shown}>"

    # -- Markdown ------------------------------------------------------------------------------
    def to_markdown(self, rows: int = PREVIEW_ROWS) -> str:
        """A Markdown report: the summary, then per section its tables' first `rows` rows."""
        out = [f"# Audit of {self.overview.get('root') or 'the index'}", "", self._head() + ".", ""]
        out += [f"- **{SECTIONS[s].title}**: {_md(self.lines[s])}" for s in self.sections]
        if self.notes:
            out += ["", *[f"> {_md(n)}" for n in self.notes]]
        for s in self.sections:
            sec = SECTIONS[s]
            out += ["", f"## {sec.title}", "", sec.about]
            for name in sec.frames:
                frame = self.frames[name]
                cols = _present(frame, sec.show.get(name, ()))
                out += ["", f"### `{name}` ({frame.height:,} rows)", ""]
                if frame.is_empty():
                    out.append("_none_")
                    continue
                out.append("| " + " | ".join(cols) + " |")
                out.append("|" + "---|" * len(cols))
                for row in _cells(frame, cols, rows):
                    out.append("| " + " | ".join(_md(c) for c in row) + " |")
                if frame.height > rows:
                    out.append(f"\n… {frame.height - rows:,} more rows (`audit.{name}`)")
        return "\n".join(out) + "\n"

    # -- HTML ----------------------------------------------------------------------------------
    def _sections_view(self, rows: int) -> list[dict]:
        view = []
        for s in self.sections:
            sec: Section = SECTIONS[s]
            tables = []
            for name in sec.frames:
                frame = self.frames[name]
                cols = _present(frame, sec.show.get(name, ()))
                cells = _cells(frame, cols, rows)
                tables.append({"name": name, "rows": frame.height, "columns": cols, "cells": cells})
            view.append(
                {"name": s, "title": sec.title, "about": sec.about, "line": self.lines[s],
                 "tables": tables, "chart": self.chart(s)}
            )  # fmt: skip
        return view

    def chart(self, section: str) -> str:
        """The section's chart as inline SVG ('' when it has none)."""
        sec = SECTIONS[section]
        if sec.chart is None:
            return ""
        cache = self.__dict__.setdefault("_charts", {})
        if section not in cache:
            got = {k: self.frames[k] for k in sec.frames}
            try:
                cache[section] = sec.chart(got, _ChartContext(self))
            except Exception as exc:  # a chart is never worth the report
                cache[section] = ""
                self.notes.append(f"the {sec.title} chart could not be drawn: {exc}")
        return cache[section]

    def _repr_html_(self) -> str:
        return render(
            "audit", head=self._head(), summary=self._summary_rows(), notes=self.notes,
            sections=self._sections_view(PREVIEW_ROWS),
        )  # fmt: skip

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": self.render(), "text/html": self._repr_html_()}

    def _summary_rows(self) -> list[dict]:
        return [{"name": s, "title": SECTIONS[s].title, "line": self.lines[s]}
                for s in self.sections]  # fmt: skip

    def to_html(self, path: str | None = None, rows: int = PREVIEW_ROWS) -> str:
        """One self-contained HTML page (no script, no network: tables and inline SVG). With
        `path`, written there (and the path returned); else the page itself."""
        page = render(
            "audit_page", title=f"Audit of {self.overview.get('root') or 'the index'}",
            head=self._head(), summary=self._summary_rows(), notes=self.notes,
            sections=self._sections_view(rows), overview=self.overview,
            generated=datetime.now().strftime("%Y-%m-%d %H:%M"),
        )  # fmt: skip
        if path is None:
            return page
        _write(path, page)
        return path

    # -- JSON and Parquet ----------------------------------------------------------------------
    def to_dict(self, rows: int = JSON_ROWS) -> dict[str, Any]:
        """JSON-safe: `verb` audit, `status` ok, the summary, and per frame its row count,
        columns and first `rows` rows (`export()` writes them all)."""
        frames = {}
        for name, frame in self.frames.items():
            frames[name] = {
                "rows": frame.height,
                "columns": frame.columns,
                "data": [_jsonable(r) for r in frame.head(rows).to_dicts()],
            }
        return {"verb": self.verb, "status": "ok", "summary": self.summary,
                "sections": list(self.sections), "frames": frames}  # fmt: skip

    def export(self, directory: str) -> dict[str, str]:
        """Every frame as `DIR/<frame>.parquet` and the summary as `DIR/summary.json`, for
        dashboards; returns frame -> path. Each file is renamed into place whole."""
        os.makedirs(directory, exist_ok=True)
        out = {}
        for name, frame in self.frames.items():
            path = os.path.join(directory, f"{name}.parquet")
            tmp = f"{path}.tmp-{os.getpid()}"
            frame.write_parquet(tmp)
            os.replace(tmp, path)
            out[name] = path
        _write(os.path.join(directory, "summary.json"),
               json.dumps(_jsonable(self.summary), indent=2) + "\n")  # fmt: skip
        out["summary"] = os.path.join(directory, "summary.json")
        return out


class _ChartContext:
    """What a chart reads besides its frames."""

    def __init__(self, audit: Audit):
        self.overview = audit.overview

        class _Cfg:
            thresholds = audit.thresholds or {"cyclomatic": 15}

        self.config = _Cfg()

    def depth(self) -> int:
        return self.overview.get("package_depth", 1)


def _write(path: str, text: str) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _present(frame: pl.DataFrame, cols: tuple[str, ...]) -> list[str]:
    got = [c for c in cols if c in frame.columns]
    return got or frame.columns[:6]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.2f}"
    if isinstance(value, list):
        return " → ".join(str(v) for v in value)
    return str(value)


def _cells(frame: pl.DataFrame, cols: list[str], rows: int) -> list[list[str]]:
    return [
        [_cell(r[c]) for c in cols] for r in frame.head(rows).select(cols).iter_rows(named=True)
    ]


def _aligned(frame: pl.DataFrame, cols: list[str], rows: int) -> list[str]:
    cells = [cols, *_cells(frame, cols, rows)]
    cells = [[c if len(c) <= 70 else c[:69] + "…" for c in row] for row in cells]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cols))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in cells]  # fmt: skip


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, date | datetime):
        return value.isoformat()
    return value

"""The history's results: a Polars frame each (`.frame`), text (`str()`), HTML for notebooks
(table and picture), `to_dict()` in the common JSON envelope (`verb` `history`, `section`),
and `.plot()` where a picture says more than the table (a matplotlib chart, static PNG)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, ClassVar

import polars as pl

from ctxframe._render.budget import DEFAULT_BUDGET_TOKENS, fit_blocks
from ctxframe._render.history_charts import Chart, matrix, scatter, timeline
from ctxframe._render.html import render

OK, NOT_INDEXED = "ok", "not-indexed"


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, datetime):
        return v.date().isoformat()
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, bool):
        return "yes" if v else ""
    if isinstance(v, float):
        return f"{v:.2f}" if abs(v) < 10 else f"{v:.0f}"
    return str(v)


def _json(v: Any) -> Any:
    if isinstance(v, datetime | date):
        return v.isoformat()
    return v


@dataclass
class HistoryResult:
    """One analysis of the history (see ctxframe._history.analyses)."""

    verb: ClassVar[str] = "history"
    section: ClassVar[str] = "history"
    title_text: ClassVar[str] = "history"
    columns: ClassVar[tuple[str, ...]] = ()
    code_columns: ClassVar[tuple[str, ...]] = ("entity", "a", "b", "path", "id", "package")
    empty: ClassVar[str] = "no rows"

    frame: pl.DataFrame = field(default_factory=pl.DataFrame)
    note: str = ""
    limit: int = 20
    status: str = OK
    message: str = ""
    budget_tokens: int = field(default=DEFAULT_BUDGET_TOKENS, kw_only=True)

    @property
    def ok(self) -> bool:
        return self.status == OK

    def shown(self) -> pl.DataFrame:
        cols = [c for c in self.columns if c in self.frame.columns] or self.frame.columns
        return self.frame.select(cols).head(self.limit)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verb": self.verb, "status": self.status, "section": self.section}
        if not self.ok:
            out["error"] = {"code": self.status, "message": self.message, "candidates": []}
            return out
        rows = [{k: _json(v) for k, v in r.items()} for r in self.frame.head(self.limit).to_dicts()]
        return {**out, "note": self.note, "total": self.frame.height, "rows": rows}

    def header(self) -> list[str]:
        if not self.ok:
            return [self.message]
        head = f"{self.title_text} ({self.frame.height} rows)"
        return [head] + ([f"  {self.note}"] if self.note else [])

    def blocks(self) -> list[list[str]]:
        if not self.ok:
            return []
        shown = self.shown()
        if shown.is_empty():
            return [[f"  {self.empty}"]]
        cells = [[_cell(v) for v in row] for row in shown.iter_rows()]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(shown.columns)]
        line = "  " + "  ".join(c.ljust(w) for c, w in zip(shown.columns, widths, strict=True))
        rows = [["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()]
                for r in cells]  # fmt: skip
        return [[line.rstrip()], *rows]

    def render(self, budget_tokens: int | None = None) -> str:
        fitted = fit_blocks(
            self.blocks(), budget_tokens=budget_tokens or self.budget_tokens, noun="rows",
            header=self.header(),
        )  # fmt: skip
        return fitted.text

    def __str__(self) -> str:
        return self.render()

    def plot(self) -> Chart | None:
        """The analysis as a picture (None where a table is the picture)."""
        return None

    def _picture(self) -> str | None:
        if not self.ok or self.frame.is_empty():
            return None
        chart = self.plot()
        return chart.data_uri() if chart is not None else None

    def _repr_html_(self) -> str:
        if not self.ok:
            return render("message", message=self.message)
        shown = self.shown()
        return render(
            "history",
            title=f"{self.title_text} ({self.frame.height} rows)",
            note=self.note,
            picture=self._picture(),
            columns=shown.columns,
            code_columns=[i for i, c in enumerate(shown.columns) if c in self.code_columns],
            rows=[[_cell(v) for v in r] for r in shown.iter_rows()],
            more=max(0, self.frame.height - shown.height),
            empty=self.empty,
        )

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": self.render(), "text/html": self._repr_html_()}


class Hotspots(HistoryResult):
    section = "hotspots"
    title_text = "hotspots: revisions x complexity"
    columns = ("entity", "revisions", "complexity", "score", "last_year", "trend", "authors",
               "last_change")  # fmt: skip
    empty = "no file with both a history and a complexity"

    def plot(self) -> Chart:
        return scatter(
            self.frame.head(400), x="complexity", y="revisions", score="score", label="entity",
            title=self.title_text, xlabel="complexity (" + _measure(self.note) + ")",
            ylabel="revisions (commits)",
        )  # fmt: skip


def _measure(note: str) -> str:
    return note.split("complexity: ", 1)[1].split(";")[0] if "complexity: " in note else "lines"


class Coupling(HistoryResult):
    section = "coupling"
    title_text = "change coupling"
    columns = ("a", "b", "shared", "degree", "average", "revisions_a", "revisions_b")
    empty = "no pair passes the thresholds"

    def plot(self) -> Chart:
        """The matrix of the files in the pairs that changed together most often."""
        pairs = self.frame.sort(["shared", "degree"], descending=True)
        return matrix(pairs, a="a", b="b", value="degree", title=self.title_text)


class HiddenCoupling(Coupling):
    section = "hidden-coupling"
    title_text = "hidden coupling: coupled, with no path in the graph"
    columns = ("a", "b", "shared", "degree", "average")
    empty = "every coupled pair is connected in the graph"


class Ownership(HistoryResult):
    section = "ownership"
    title_text = "ownership"
    columns = ("entity", "authors", "main_author", "main_share", "island", "revisions",
               "score")  # fmt: skip


class Age(HistoryResult):
    section = "age"
    title_text = "age: days since the last change"
    columns = ("entity", "age_days", "last_change", "first_change", "revisions", "authors",
               "last_author")  # fmt: skip


class Timeline(HistoryResult):
    section = "timeline"
    title_text = "changes per package"
    columns = ("period", "package", "commits")

    def plot(self) -> Chart:
        return timeline(self.frame, group="package", period="period", value="commits",
                        title=self.title_text)  # fmt: skip


class Functions(HistoryResult):
    section = "functions"
    title_text = "function history"
    columns = ("id", "revisions", "authors", "last_change", "last_author", "complexity",
               "score")  # fmt: skip


class Commits(HistoryResult):
    section = "commits"
    title_text = "commits"
    columns = ("sha", "author_time", "author_name", "subject", "files", "added", "deleted")
    code_columns = ("sha",)


@dataclass
class Summary:
    """Several sections at once (`ctxframe history`): the history's size, then each."""

    facts: dict
    sections: list[HistoryResult]
    verb: ClassVar[str] = "history"
    budget_tokens: int = field(default=DEFAULT_BUDGET_TOKENS, kw_only=True)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.sections)

    def to_dict(self) -> dict[str, Any]:
        out = {"verb": self.verb, "status": OK, "section": "summary",
               **{k: _json(v) for k, v in self.facts.items()}}  # fmt: skip
        for s in self.sections:
            d = s.to_dict()
            out[s.section] = {k: v for k, v in d.items() if k not in ("verb", "section")}
        return out

    def _line(self) -> str:
        f = self.facts
        span = f"{_cell(f.get('first'))} .. {_cell(f.get('last'))}"
        more = " (reading more in the background)" if f.get("pending") else ""
        anon = ", authors anonymized" if f.get("anonymized") else ""
        return (f"history: {f.get('commits', 0)} commits by {f.get('authors', 0)} authors, "
                f"{span}, {f.get('files', 0)} paths changed{anon}{more}")  # fmt: skip

    def render(self, budget_tokens: int | None = None) -> str:
        budget = budget_tokens or self.budget_tokens
        blocks: list[list[str]] = []
        for s in self.sections:
            blocks.append([""])
            blocks.extend([[line] for line in s.header()])
            blocks.extend(s.blocks())
        return fit_blocks(blocks, budget_tokens=budget, noun="rows", header=[self._line()]).text

    def __str__(self) -> str:
        return self.render()

    def _repr_html_(self) -> str:
        parts = [render("message", message=self._line())]
        parts += [s._repr_html_() for s in self.sections]
        return "\n".join(parts)

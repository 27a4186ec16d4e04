"""`cf.explore(graph)`: an ipywidgets explorer for notebooks (JupyterLab, Notebook, VS Code).

A query box with a rule selector -> ranked hits -> selecting a hit shows its card and its
neighbourhood picture; tabs for hubs and boundaries. Everything shown is the verbs' own HTML, so
the explorer shows exactly what `g.query(...)`, `g.card(...)`, `g.neighbourhood(...).plot()`,
`g.hubs()` and `g.boundaries()` show in a cell. ipywidgets is imported only here.

Live: when the graph moves to a new version (`g.watch()` after a save, or `g.refresh()`), the
explorer runs its question again, keeps the selected hit when it is still there and redraws the
tabs; any interaction also checks the version first (one attribute read).
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

from ctxframe._render.html import render
from ctxframe._render.text import hit_name, location

HINT = "where is refund processing implemented"


def _hit_label(hit: dict) -> str:
    loc = location(hit) if hit.get("path") else hit["id"]
    return f"{hit['rank']:>2}. {hit_name(hit)}  [{hit['kind']}]  {loc}"


class Explorer:
    """The widget tree and its callbacks; display it (or `.widget`) in a cell."""

    def __init__(self, graph: Any, *, limit: int = 15, depth: int = 1, rule: str | None = None):
        import ipywidgets as W

        from ctxframe._rank import rules

        self.graph = graph
        self.limit = limit
        self.depth = depth
        self.result = None
        self.selected: str | None = None  # the node whose card is shown
        self._lock = threading.RLock()  # a watch thread redraws while the user clicks
        self._version = self._graph_version()
        names = list(rules.RULES)
        self.query = W.Text(
            placeholder=f"ask the code, e.g. {HINT}",
            continuous_update=False,
            layout=W.Layout(width="100%"),
        )
        self.rule = W.Dropdown(
            options=names,
            value=rule or names[0],
            description="rule",
            layout=W.Layout(width="240px"),
        )
        self.status = W.HTML()
        self.live = W.HTML()  # "updated …" after the graph moved to a new version
        self.hits = W.Select(options=[], rows=14, layout=W.Layout(width="100%"))
        self.card = W.HTML(layout=W.Layout(width="100%"))
        self.picture = W.HTML(layout=W.Layout(width="100%"))
        self.hubs = W.HTML()
        self.boundaries = W.HTML()

        self.query.observe(lambda ch: self.search(), names="value")
        self.rule.observe(lambda ch: self.search(), names="value")
        self.hits.observe(self._on_select, names="value")

        search = W.VBox(
            [
                W.HBox([self.query, self.rule]),
                self.status,
                self.live,
                W.HBox(
                    [
                        W.Box([self.hits], layout=W.Layout(width="40%", min_width="260px")),
                        W.Box(
                            [self.card],
                            layout=W.Layout(width="60%", padding="0 0 0 12px", overflow="auto"),
                        ),
                    ]
                ),
                self.picture,
            ]
        )
        self.tabs = W.Tab(children=[search, self.hubs, self.boundaries])
        self.tabs.titles = ("search", "hubs", "boundaries")
        self.tabs.observe(self._on_tab, names="selected_index")
        self.widget = W.VBox([self.tabs])
        subscribe = getattr(graph, "_subscribe", None)
        if callable(subscribe):
            subscribe(self._on_graph_update)  # held weakly: a dropped explorer stops listening

    # -- live updates ---------------------------------------------------------------------------
    def _graph_version(self) -> str | None:
        try:
            return getattr(self.graph, "version", None)
        except Exception:  # a graph-like object without versions
            return None

    def _check_version(self, what: str = "refreshed") -> bool:
        """Has the graph moved since this explorer last drew? Then the cached tabs go and a
        line says when and why."""
        now = self._graph_version()
        if now == self._version:
            return False
        self._version = now
        self.hubs.value = ""
        self.boundaries.value = ""
        when = datetime.now().strftime("%H:%M:%S")
        self.live.value = render("search_live", when=when, what=what, version=now)
        return True

    def _on_graph_update(self, update: Any = None) -> None:
        """The graph moved (a watch thread, or `refresh()`): draw everything again."""
        self.reload(update)

    def reload(self, update: Any = None) -> None:
        """Draw the current question, card and tab again from the graph's newest version."""
        with self._lock:
            what = update.what() if hasattr(update, "what") else "refreshed"
            if not self._check_version(what):
                return
            keep = self.selected
            if self.query.value.strip():
                self.search()
                ids = [i for _, i in self.hits.options]
                if keep in ids and self.hits.value != keep:
                    self.hits.value = keep  # the observer shows its card
            elif keep is not None:
                self.select(keep)
            self._on_tab({"new": self.tabs.selected_index})

    # -- callbacks --------------------------------------------------------------------------------
    def search(self, text: str | None = None) -> Any:
        """Run the query in the box (or `text`, which is put in the box) and list the hits."""
        with self._lock:
            return self._search(text)

    def _search(self, text: str | None) -> Any:
        if text is not None and text != self.query.value:
            self.query.value = text  # the observer runs the search
            return self.result
        self._check_version()
        q = self.query.value.strip()
        if not q:
            self.hits.options = []
            self.status.value = ""
            return None
        res = self.graph.query(q, limit=self.limit, rule=self.rule.value)
        self.result = res
        rows = res.hits.to_dicts()
        self.hits.options = [(_hit_label(h), h["id"]) for h in rows]
        self.status.value = render(
            "search_status", shown=len(rows), total=res.total, query=q, rule=res.rule
        )
        if rows:
            self.hits.value = rows[0]["id"]  # select the best hit: its card shows at once
        else:
            self.card.value = render("message", message="no matches")
            self.picture.value = ""
        return res

    def select(self, node_id: str) -> None:
        """Show the card and the neighbourhood picture of a node (a hit's id)."""
        with self._lock:
            self._check_version()
            self.selected = node_id
            self.card.value = self.graph.card(node_id)._repr_html_()
            nb = self.graph.neighbourhood(node_id, depth=self.depth)
            self.picture.value = nb.plot(height=460)._repr_html_()

    def _on_select(self, change: dict) -> None:
        if change.get("new"):
            self.select(change["new"])

    def _on_tab(self, change: dict) -> None:
        with self._lock:
            self._check_version()
            if change.get("new") == 1 and not self.hubs.value:
                self.hubs.value = self.graph.hubs()._repr_html_()
            elif change.get("new") == 2 and not self.boundaries.value:
                from ctxframe._apps.fallback import boundaries_of

                self.boundaries.value = boundaries_of(self.graph)._repr_html_()

    def snapshot_html(self) -> str:
        """What the explorer shows now as plain HTML (question, hits, card, picture with its
        static SVG): the output where widgets cannot run (exported HTML, notebook viewers)."""
        hits = [{"id": i, "label": label} for label, i in self.hits.options]
        return render(
            "explorer_snapshot",
            query=self.query.value.strip(),
            status=self.status.value,
            hits=hits,
            selected=self.selected,
            card=self.card.value,
            picture=self.picture.value,
        )

    def _repr_mimebundle_(self, **kwargs) -> dict:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.snapshot_html()  # a front end with widgets shows those
        return bundle


def explore(graph: Any, *, limit: int = 15, depth: int = 1, rule: str | None = None) -> Explorer:
    """An interactive explorer of `graph`: query, hits, card, neighbourhood, hubs, boundaries."""
    return Explorer(graph, limit=limit, depth=depth, rule=rule)

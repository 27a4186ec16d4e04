"""`Graph`: the indexed repository as Polars frames, with DuckDB SQL and the verbs as methods."""

from __future__ import annotations

import functools
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING

import polars as pl

from ctxframe._core.config import Config, find_root, load_config
from ctxframe._core.errors import BadInput
from ctxframe._core.inputs import NAME_MAX, QUESTION_MAX, clean_int, clean_text, cut
from ctxframe._graph import verbs
from ctxframe._graph.context import DEFAULT_BUDGET_TOKENS as CONTEXT_BUDGET
from ctxframe._graph.context import Context, build_context
from ctxframe._graph.edges import EdgeIndex, SubsetEdgeIndex
from ctxframe._graph.lookups import Lookups
from ctxframe._graph.neighbourhood import Neighbourhood, neighbourhood
from ctxframe._graph.query import QueryResult, answer
from ctxframe._rank.abstain import assess
from ctxframe._rank.fields import TokenTable
from ctxframe._rank.ranker import RankIndex, Ranking
from ctxframe._rank.tokens import token_frequencies, tokenize
from ctxframe._render.html import render
from ctxframe._store import cache as _cache
from ctxframe._store import tables as _store
from ctxframe._store.coverage import coverage
from ctxframe._store.export import Exported, export

if TYPE_CHECKING:
    from ctxframe._audit import Audit
    from ctxframe._graph.live import GraphWatch
    from ctxframe._store.build import IndexReport


def _text(value, what: str) -> str:
    """A name as looked up: valid text, cut to NAME_MAX characters (said)."""
    return cut(clean_text(value, what), NAME_MAX, what if len(what) > 1 else f"name {what}")


def _question(value) -> str:
    """A question as ranked: valid text, cut to QUESTION_MAX characters (said)."""
    text = clean_text(value, "query")
    if not text.strip():
        raise BadInput("the question is empty: say in words what to look for")
    return cut(text, QUESTION_MAX, "question")


def _opt_text(value, what: str) -> str | None:
    return None if value is None else cut(clean_text(value, what), NAME_MAX, what)


def _limit(value) -> int:
    return clean_int(value, "limit", 1, 1_000_000)


def _depth(value) -> int:
    return clean_int(value, "depth", 1, 50)


# Built from one store version, dropped when the graph moves to another (see `_move`).
_DERIVED = ("_tables", "_token_weights", "_config", "_duck", "_rank_index", "_lookups",
            "_project_tokens", "_decoded_tokens", "_history_cache")  # fmt: skip
_CONTRACT = ("nodes", "edges", "files", "tokens", "vocab")
_CONFIG = ("_config", "_project_tokens")  # from the repository, not the store: always re-read


def _hist():
    """ctxframe._graph.history, imported on first use (a fresh `query` never needs it)."""
    from ctxframe._graph import history

    return history


def _live(method):
    """A public call: it runs under the graph's lock (one call at a time, whichever thread)
    and first moves the graph to a version its watch prepared, so a call never mixes two
    versions."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with self._call():
            return method(self, *args, **kwargs)

    return call


def _parallel(jobs: list[Callable[[], object]]) -> None:
    """Run the jobs in threads (index builds: Polars releases the GIL); errors propagate."""
    if len(jobs) <= 1:
        for job in jobs:
            job()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        for future in [pool.submit(job) for job in jobs]:
            future.result()


def _same_tables(a: _store.Snapshot, b: _store.Snapshot, names=_CONTRACT) -> bool:
    """Both versions hold byte-identical `names` tables (by default nodes, edges, files and
    tokens: an index that found nothing to change): what was built from one serves the
    other."""
    if a.version is None or b.version is None:
        return False
    try:
        return all(
            [(r, i.get("size"), i.get("sha256")) for r, i in a.info(name)]
            == [(r, i.get("size"), i.get("sha256")) for r, i in b.info(name)]
            for name in names
        )
    except Exception:  # a table missing from either: not the same
        return False


def _patch_lookups(old: Lookups, new: Lookups) -> Callable[[], None] | None:
    """Give `new` the symbol index `old` built, patched for the rows that changed
    (ctxframe._graph.lookup): far less than building it again. The arrow index of `old`, or
    of the lookups `old`'s own pending patch starts from, is patched by the function
    returned (ctxframe._graph.edges), in a thread of its own after `refresh`, after the new
    version is offered by a watch; until it lands, `new` answers arrows from the edges that
    touch the asked rows."""
    built = old.__dict__
    if "symbols" in built:
        new.__dict__["symbols"] = built["symbols"].patched(new.nodes)
    base = old if "edge_index" in built else old.arrows_base
    if base is None:
        return None
    new.pending_arrows, new.arrows_base = True, base

    def finish() -> None:
        index = base.edge_index.patched(base.nodes, base.edges, new.nodes, new.edges)
        new.land_arrows(index or EdgeIndex(new.edges, new.nodes))

    return finish


_LOOKUP_TABLES = ("nodes", "edges")  # what the symbol, arrow and traversal indexes read
_RANK_TABLES = ("nodes", "edges", "tokens", "vocab")  # what the ranking index reads


class Graph:
    """Nodes, edges, files and tokens of one indexed repository; verbs are methods.


    `Graph(path)` opens an existing index, as `cf.open(path)` does: `path` is the repository
    (its store is `path/.ctxframe/graph/`) or a store directory itself; `store=` names the store
    of a repository kept elsewhere. `report` is the `IndexReport` of the run that built this
    object (`cf.index`), None when it was only opened.

    A Graph reads one version of its store until told to move (snapshot isolation), whatever
    later `index` runs write: `refresh()` moves it to the newest version (re-indexing first),
    `watch()` keeps it current while files change. It may be shared between threads: its
    calls run one at a time."""

    report: IndexReport | None = None

    def __init__(self, path: str = ".", *, store: str | None = None, root: str | None = None):
        if store is None and os.path.isfile(os.path.join(path, "meta.json")):
            store = path  # a store directory
        else:
            real = os.path.realpath(path)
            if store is None and os.path.isdir(real):  # from a sub-directory, as git does
                real = find_root(real)
            root = root or (real if os.path.isdir(real) else None)
            store = store or _store.default_store(real)
        self.store = os.path.abspath(store)
        self._lock = threading.RLock()
        self._depth = 0  # calls in progress (nested ones included), under the lock
        self._pending: dict | None = None  # the next version's state, prepared by a watch
        self._had: set[str] = set()  # indexes built for some version: a watch rebuilds them
        self._had_parts: set[str] = set()  # likewise, of the lookups
        self._watch: GraphWatch | None = None
        self._listeners: list[weakref.WeakMethod | Callable] = []
        self._at(_store.Snapshot(self.store))
        self.root = root or self._meta.get("root")
        self.report = None
        self._queries = 0

    def _at(self, snap: _store.Snapshot) -> None:
        self._snap, self._meta, self._tables = snap, snap.meta, {}

    # -- versions: refresh, watch ----------------------------------------------------------------
    @contextmanager
    def _call(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0 and self._pending is not None:
                self._apply(self._pending)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1

    @property
    def version(self) -> str | None:
        """The store version this graph reads (None for a store written before versions)."""
        with self._call():
            return self._snap.version

    @property
    def meta(self) -> dict:
        """The version's meta.json: root, git_head, indexed_at, counts, parts."""
        with self._call():
            return self._meta

    def refresh(self, reindex: bool | None = None) -> Graph:
        """Move to the store's newest version; returns the graph. With `reindex`, index the
        repository first (incremental: only what changed is parsed). By default it re-indexes
        when it can and should: the repository is on this machine, the store is writable and
        no `watch()` of this graph keeps it current already; `reindex=False` only moves.
        The symbol lookup this graph had built is patched for the new version before it
        returns, the arrow index in a thread (calls meanwhile read the edges of their nodes),
        the rest as calls need them; only the table parts the edit wrote are read; when
        nothing changed, everything built is kept."""
        if reindex is None:
            reindex = self._reindexable()
        report = None
        if reindex:
            from ctxframe._store.build import index

            if not self.root or not os.path.isdir(self.root):
                from ctxframe._core.errors import RepoNotFound

                raise RepoNotFound(
                    f"cannot re-index: the repository {self.root} is not here; "
                    "call refresh(reindex=False) to move to the newest index"
                )
            report = index(self.root, store=self.store, progress=False)
        with self._lock:
            self._pending = None
            moved = self._move(_store.Snapshot(self.store), report)
        if moved:
            self._notify(None)
        return self

    def _reindexable(self) -> bool:
        if self._watch is not None and self._watch.running:
            return False
        root, store = self.root, self.store
        if not root or not os.path.isdir(root):
            return False
        return os.access(store if os.path.isdir(store) else os.path.dirname(store), os.W_OK)

    def _move(self, snap: _store.Snapshot, report: IndexReport | None = None) -> bool:
        """Read `snap` from now on (under the lock); False when it is the version read already."""
        if report is not None:
            self.report = report
        if snap.version is not None and snap.version == self._snap.version:
            return False
        if _same_tables(self._snap, snap):
            self._snap, self._meta = snap, snap.meta
            for name in (*_CONFIG, "_history_cache"):  # the history may have moved on
                self.__dict__.pop(name, None)
            return True
        # the symbol and edge lookups at once, in parallel (every verb needs them); the
        # ranking and traversal indexes by the call that needs them, as on a fresh graph
        lookups = self.__dict__.get("_lookups")
        parts = set(lookups.__dict__) if lookups is not None else set()
        fresh, _ = self._built_at(snap, set(self.__dict__), parts, set(self._tables))
        # the replaced objects stay alive until every name is switched: their clean-up (a
        # snapshot closing its files) never runs half-way through the switch
        old = [self._snap, *(self.__dict__.get(n) for n in _DERIVED)]
        for name in _DERIVED:
            self.__dict__.pop(name, None)
        self.__dict__.update({n: fresh.__dict__[n] for n in _DERIVED if n in fresh.__dict__})
        self._snap, self._meta = snap, snap.meta
        lookups = self.__dict__.get("_lookups")
        if lookups is not None:
            lookups._cache_dir = fresh._cache_dir
        del old
        return True

    def _prepare(
        self,
        report: IndexReport | None = None,
        offered: Callable[[], None] | None = None,
        defer: Callable[[Callable[[], None]], None] | None = None,
    ) -> str | None:
        """(A watch thread, after an index.) Read the newest version off to the side, build
        there the indexes this graph has built already, and leave the result for the graph's
        next call to switch to (`_call`): no call ever waits for the rebuild. The symbol
        lookup every verb needs comes first; the arrow, ranking and traversal indexes follow
        and are handed over when ready (a call that needs one sooner builds it); `offered()`
        is called in between. `defer(job)` runs that rest elsewhere (a watch's worker, so
        the next save is seen meanwhile); by default it runs here. Returns the version
        prepared, None when the graph reads it already."""
        snap = _store.Snapshot(self.store)
        with self._lock:
            pending = self._pending
            current = pending["_snap"] if pending else self._snap
            if snap.version is not None and snap.version == current.version:
                return None
            # what this graph built, or a version before it (its rest may still be on the way)
            built = self._had = (set(self.__dict__) | self._had) & set(_DERIVED)
            lookups = self.__dict__.get("_lookups")
            parts = set(lookups.__dict__) if lookups is not None else set()
            parts = self._had_parts = parts | self._had_parts
            tables = set(self._tables)
        state: dict = {"_snap": snap, "_meta": snap.meta, "report": report}
        later = None
        if pending and _same_tables(current, snap):  # what was prepared serves this one too
            state = {**pending, **state}
        elif not _same_tables(current, snap):
            fresh, later = self._built_at(snap, built, parts, tables, later_arrows=True)
            state.update({n: fresh.__dict__[n] for n in _DERIVED if n in fresh.__dict__})
        with self._lock:
            self._pending = state
        if offered is not None:
            offered()
        if later is None:
            return snap.version

        def _target() -> dict | None:
            """The offered state, or the graph that switched to it (None: a newer one came)."""
            with self._lock:
                if self._pending is state:
                    return state
                return self.__dict__ if self._snap is snap else None

        def rest() -> None:
            late = later(frozenset(_target() or ()))
            with self._lock:
                target = _target()
                for name, value in late.items():
                    if target is not None and name not in target:
                        target[name] = value

        (defer or (lambda job: job()))(rest)
        return snap.version

    _FIRST = ("symbols", "edge_index")  # what verbs look up
    _LATER = ("traversal",)

    def _built_at(
        self,
        snap: _store.Snapshot,
        built: set[str],
        parts: set[str],
        tables: set[str],
        later_arrows: bool = False,
    ) -> tuple[Graph, Callable[[], dict]]:
        """A graph object at `snap` with the tables read and the symbol and edge lookups built
        that this one has, and a function building the rest (ranking, traversal) that returns
        the graph attributes it made and writes the new indexes into the version's cache (for
        a later process to map in). Builds run in parallel threads (Polars releases the GIL)
        and read or write no cache on the way: the version is new."""
        with self._lock:  # what this graph built, and the version it built it from
            old_snap, old_tables = self._snap, dict(self._tables)
            old = {n: self.__dict__.get(n) for n in ("_lookups", "_rank_index")}
        fresh = Graph.__new__(Graph)
        fresh.__dict__.update(self.__dict__.copy())
        for name in (*_DERIVED, "_lock", "_listeners", "_watch"):
            fresh.__dict__.pop(name, None)
        fresh._lock, fresh._depth, fresh._pending = threading.RLock(), 0, None
        fresh._at(snap)
        # An index built from tables the new version holds byte for byte is kept (an edit
        # inside a body changes the tokens and files only: the lookups stay).
        keep_rank = old["_rank_index"] is not None and _same_tables(old_snap, snap, _RANK_TABLES)
        keep_lookups = old["_lookups"] is not None and _same_tables(old_snap, snap, _LOOKUP_TABLES)
        reads = []  # the tables read before, read again in parallel unless the same part
        for name in sorted(tables - {"tokens", "vocab"}):  # the ranking index's: when built
            if name in old_tables and _same_tables(old_snap, snap, (name,)):
                fresh._tables[name] = old_tables[name]
            elif name in old_tables and name in ("nodes", "edges"):  # the parts an edit wrote

                def moved(name=name) -> None:
                    fresh._tables[name] = snap.read_from(name, old_snap, old_tables[name])

                reads.append(moved)
            else:
                reads.append(functools.partial(fresh._table, name))
        _parallel(reads)
        lookups = arrows_later = None
        if "_lookups" in built and keep_lookups:
            lookups = old["_lookups"].with_files(fresh.files)
            fresh.__dict__["_lookups"] = lookups
        elif "_lookups" in built:
            lookups = Lookups(fresh.nodes, fresh.edges, fresh.files, cache_dir=None)
            fresh.__dict__["_lookups"] = lookups
            if old["_lookups"] is not None:  # patch what was built: a few files changed
                arrows_later = _patch_lookups(old["_lookups"], lookups)
            first = [functools.partial(getattr, lookups, p) for p in self._FIRST if p in parts
                     and not (p == "edge_index" and lookups.pending_arrows)]  # fmt: skip
            if arrows_later is not None and not later_arrows:
                threading.Thread(target=arrows_later, name="ctxframe-arrows", daemon=True).start()
                arrows_later = None
            _parallel(first)
        if "_rank_index" in built and keep_rank:
            fresh.__dict__["_rank_index"] = old["_rank_index"]
        cache_dir = fresh._cache_dir

        def later(have: frozenset[str] = frozenset()) -> dict:
            """`have`: what a call built for this version meanwhile (not built again)."""
            late: dict = {}
            jobs: list[Callable[[], object]] = []
            if "_rank_index" in built and not keep_rank and "_rank_index" not in have:
                jobs.append(lambda: late.update(_rank_index=fresh._build_rank_index()))
            if arrows_later is not None:
                jobs.append(arrows_later)
            if lookups is not None:
                jobs += [functools.partial(getattr, lookups, p) for p in self._LATER if p in parts]
            _parallel(jobs)
            if "_rank_index" in late:
                _cache.save(cache_dir, late["_rank_index"].state())
            if lookups is not None:
                lookups._cache_dir = cache_dir
                if "edge_index" in lookups.__dict__:
                    _cache.save(cache_dir, lookups.edge_index.frames())
            return late

        return fresh, later

    def _apply(self, state: dict) -> None:
        """Switch to a prepared state (under the lock, between calls); never back to a
        version older than the one read (a `refresh()` may have overtaken the watch)."""
        self._pending = None
        state = dict(state)
        report = state.pop("report", None)
        snap, now = state["_snap"], self._snap.version
        if now is not None and (snap.version is None or snap.version <= now):
            return
        if set(state) == {"_snap", "_meta"}:  # the same tables: keep what was built
            self._move(snap, report)
            return
        old = [self._snap, *(self.__dict__.get(n) for n in _DERIVED)]
        for name in _DERIVED:
            self.__dict__.pop(name, None)
        self.__dict__.update(state)
        del old
        if report is not None:
            self.report = report

    def _subscribe(self, callback: Callable[[object], None]) -> None:
        """Call `callback(update)` after each move (a watch's `Update`, or None after
        `refresh()`); a bound method is held weakly (a closed explorer stops listening)."""
        ref = weakref.WeakMethod(callback) if hasattr(callback, "__self__") else callback
        self._listeners.append(ref)

    def _notify(self, update: object) -> None:
        for ref in list(self._listeners):
            fn = ref() if isinstance(ref, weakref.WeakMethod) else ref
            if fn is None:
                self._listeners.remove(ref)
                continue
            try:
                fn(update)
            except Exception as exc:  # a listener's failure is its own: one line, go on
                import sys

                print(f"ctxframe: a graph listener failed: {type(exc).__name__}: {exc}",
                      file=sys.stderr)  # fmt: skip

    def watch(
        self,
        *,
        debounce_ms: int | None = None,
        poll: bool = False,
        initial: bool = True,
        on_update: Callable | None = None,
    ) -> GraphWatch:
        """Keep this graph current while the repository's files change: a background thread
        re-indexes each settled burst of saves (only the changed files are walked and parsed)
        and builds the new version's indexes off to the side; the graph switches at its next
        call, never in the middle of one, and an open `cf.explore(graph)` redraws. Returns the
        running watch: `.stop()` ends it, `.log` has one line per update; `on_update(update)`
        is called (in the watch thread) after each. `debounce_ms` (default 50): quiet time
        after a save before re-indexing. A graph watches once: a running watch is returned."""
        from ctxframe._graph.live import GraphWatch

        if self._watch is not None and self._watch.running:
            return self._watch
        self._watch = GraphWatch(
            self, debounce_ms=debounce_ms, poll=poll, initial=initial, on_update=on_update
        )
        return self._watch

    # -- tables ----------------------------------------------------------------------------------
    def _table(self, name: str) -> pl.DataFrame:
        frame = self._tables.get(name)
        if frame is None:
            frame = self._tables[name] = self._snap.read(name)
        return frame

    @property
    def nodes(self) -> pl.DataFrame:
        """One row per node (see docs/schema.md)."""
        with self._call():
            return self._table("nodes")

    @property
    def edges(self) -> pl.DataFrame:
        """One row per edge (see docs/schema.md)."""
        with self._call():
            return self._table("edges")

    @property
    def files(self) -> pl.DataFrame:
        """One row per walked file, indexed or skipped with a reason."""
        with self._call():
            return self._table("files")

    @property
    def test_coverage(self) -> pl.DataFrame:
        """Per definition and file, from the coverage data the index read: executable lines
        the data knows (`lines`), those that ran (`covered`), `share`, and `stale` (the file
        changed since the data was written); empty when it read none."""
        from ctxframe._resolve.covers import TABLE

        with self._call():
            snap = self._snap
            return self._table("coverage") if snap.has("coverage") else pl.DataFrame(schema=TABLE)

    def _token_table(self) -> TokenTable:
        return TokenTable(self._table("tokens"), self._table("vocab"))

    @property
    def tokens(self) -> pl.DataFrame:
        """The token table the ranker scores, one row per (node, field, token): ``node_id``,
        ``field`` (name, qualname, path, signature, doc, body), ``token``, ``tf`` (stored as
        integer codes with a vocabulary, see docs/schema.md)."""
        with self._call():
            decoded = self.__dict__.get("_decoded_tokens")
            if decoded is None:
                decoded = self._token_table().decoded(self.nodes["id"])
                self.__dict__["_decoded_tokens"] = decoded
            return decoded

    @property
    def _cache_dir(self) -> str | None:
        return self._snap.dir if self._snap.version else None

    @property
    def token_weights(self) -> pl.DataFrame:
        """The df table of the name fields (name, qualname, path): per token, how many nodes
        hold it and its weight `0.1 + ln(N / (1 + df))`, N = number of nodes (the name tiers'
        IDF)."""
        with self._call():
            weights = self.__dict__.get("_token_weights")
            if weights is None:
                names = self.tokens.filter(pl.col("field").is_in(["name", "qualname", "path"]))
                weights = token_frequencies(
                    names.select("node_id", "token"), self.nodes.height
                ).rename({"idf": "weight"})
                self.__dict__["_token_weights"] = weights
            return weights

    @property
    def config(self) -> Config:
        """Scope levers from `.ctxframe/config.toml` or `[tool.ctxframe]`."""
        with self._call():
            cfg = self.__dict__.get("_config")
            if cfg is None:
                root = self.root
                cfg = load_config(root) if root and os.path.isdir(root) else Config()
                self.__dict__["_config"] = cfg
            return cfg

    @cached_property
    def _duck(self):
        import duckdb

        con = duckdb.connect()
        for name in ("nodes", "edges", "files", "tokens"):
            con.register(name, getattr(self, name))
        from ctxframe._store.history import stored_state

        if stored_state(self._snap) is not None:  # the git history, when read
            con.register("commits", self._snap.read("commits"))
            con.register("changes", self._snap.read("changes"))
        return con

    @_live
    def sql(self, query: str, params: list | dict | None = None) -> pl.DataFrame:
        """Run DuckDB SQL over the tables `nodes`, `edges`, `files`, `tokens`; a Polars frame."""
        return self._duck.sql(query, params=params).pl()

    @cached_property
    def _rank_index(self) -> RankIndex:
        ix = _cache.cached_ranker(self._cache_dir, self.nodes, self._build_rank_index)
        # where a dense rule reads node source and keeps its vectors (ctxframe._rank.dense)
        ix.source_root = self.root
        cache = self._cache_dir
        ix.vector_dir = os.path.join(cache, "cache", "vectors") if cache else None
        return ix

    def _build_rank_index(self) -> RankIndex:
        table = self._token_table()
        return RankIndex(self.nodes, table.tokens, table.vocab, edges=self.edges)

    @cached_property
    def _lookups(self) -> Lookups:
        return Lookups(self.nodes, self.edges, self.files, cache_dir=self._cache_dir)

    @_live
    def rank(
        self,
        text: str,
        limit: int = 20,
        rule=None,
        within: str | None = None,
        kinds: list[str] | tuple[str, ...] | None = None,
    ) -> pl.DataFrame:
        """Only the ranking of `query` (no neighbourhoods): one row per hit, best first, with
        `rank`, `id`, `kind`, `path`, `score` and `tier` — what rule experiments compare.
        `kinds` keeps only those node kinds (``["function", "method", "class"]``)."""
        text, within = _question(text), _opt_text(within, "within")
        return self._ranking(text, limit=_limit(limit), rule=rule, within=within, kinds=kinds).hits

    def _ranking(
        self,
        text: str,
        *,
        limit: int,
        rule,
        within,
        deprioritize=None,
        kinds=None,
        explain=False,
        parts=False,
    ) -> Ranking:
        cfg = self.config
        return self._rank_index.rank(
            text,
            limit=limit,
            rule=rule,
            within=within,
            deprioritize=tuple(cfg.deprioritize if deprioritize is None else deprioritize),
            project_tokens=self._project_tokens,
            kinds=kinds,
            explain=explain,
            parts=parts,
        )

    @_live
    def query(
        self,
        text: str,
        limit: int = 20,
        rule=None,
        within: str | None = None,
        include_ambiguous: bool = False,
        deprioritize: list[str] | tuple[str, ...] | None = None,
        abstain: bool = False,
        kinds: list[str] | tuple[str, ...] | None = None,
        explain: bool = False,
    ) -> QueryResult:
        """Rank nodes for a question in words; each hit carries its 1-hop neighbourhood.
        ``kinds`` keeps only those node kinds (``["function", "method", "class"]``: symbols).

        ``abstain=True`` (hooks, agents): when the best match is weak — only common tokens and
        no path or name of this graph in the text — return no hits and say "no structural
        match" (``result.abstained`` holds why; see ctxframe._rank.abstain).

        ``explain=True``: ``result.evidence`` holds each hit's evidence rows (field, token,
        tier, weight, contribution: why it ranks where it does; ``result.explain(rank)`` one
        hit's), and the text shows them (ctxframe._rank.explain)."""
        text, within, limit = _question(text), _opt_text(within, "within"), _limit(limit)
        ranking = self._ranking(
            text,
            limit=limit,
            rule=rule,
            within=within,
            deprioritize=deprioritize,
            kinds=kinds,
            explain=explain,
        )
        if abstain:
            top = ranking.hits["id"][0] if ranking.hits.height else None
            decision = assess(self._rank_index, ranking.question or text, top)
            if decision.abstain:
                result = answer(ranking, None, limit=limit)
                result.abstained = decision.reason
                result.hits = result.hits.clear()
                result.neighbours = result.neighbours.clear()
                result.total = 0
                if result.evidence is not None:
                    result.evidence = result.evidence.clear()
                return result
        self._queries += 1  # asked again: worth the full edge lookup for the warm path
        if self._queries < 2 and "_lookups" not in self.__dict__ and "edges" not in self._tables:
            index = SubsetEdgeIndex(self._edges_of(ranking.hits["id"]), self.nodes)
        else:
            index = self._lookups.arrows_index(one_shot=self._queries < 2)
        result = answer(ranking, index, limit=limit, include_ambiguous=include_ambiguous)
        if not explain:
            result._explainer = lambda: self._ranking(
                text,
                limit=limit,
                rule=rule,
                within=within,
                deprioritize=deprioritize,
                kinds=kinds,
                explain=True,
            ).evidence
        return result

    def _edges_of(self, ids: pl.Series) -> pl.DataFrame:
        """The edges from or to the given nodes, scanned (a one-shot query, such as a CLI run,
        reads no more of the edge table than that)."""
        return (
            self._snap.scan("edges")
            .select("src", "dst", "kind", "confidence", "name", "line")  # what arrows read
            .filter(pl.col("src").is_in(ids.implode()) | pl.col("dst").is_in(ids.implode()))
            .collect()
        )

    @_live
    def context(
        self,
        question: str,
        budget_tokens: int = CONTEXT_BUDGET,
        format: str = "md",
        limit: int | None = None,
        rule=None,
        within: str | None = None,
        abstain: bool = False,
        tokenizer=None,
    ) -> Context:
        """The ranked hits as text to paste into a prompt: the first hits with their place,
        source (trimmed around the question's words; checked against the indexed file hash)
        and neighbours as one-liners, then more hits at one line each grouped by file, within
        ``budget_tokens`` (chars/4, or ``tokenizer="tiktoken"``), ending with what was left
        out. ``format``: md, xml or json; ``limit``: hits ranked (default budget / 40)."""
        if limit is None:
            limit = max(10, min(200, budget_tokens // 40))
        result = self.query(question, limit=limit, rule=rule, within=within, abstain=abstain)
        return build_context(
            result,
            nodes=self.nodes,
            files=self.files,
            root=self.root,
            budget_tokens=budget_tokens,
            format=format,
            tokenizer=tokenizer,
        )

    @_live
    def warm(self) -> Graph:
        """Build the ranking, name, arrow and traversal indexes now instead of on first use
        (a server before its first request, a notebook before a demo)."""
        lk = self._lookups
        for _ in (self._rank_index, lk.symbols, lk.edge_index, lk.traversal):
            pass
        self._queries = max(self._queries, 1)
        return self

    def export(self, directory: str, format: str = "parquet") -> Exported:
        """Write this graph's version of the contract tables as one file per table
        (`nodes.parquet`, `edges.csv`, ...) into `directory`, for tools that want single files."""
        with self._call():
            return export(self._snap, clean_text(directory, "directory"), format)

    @cached_property
    def _project_tokens(self) -> tuple[str, ...]:
        if self.config.project_tokens:
            return tuple(t for p in self.config.project_tokens for t in tokenize(p))
        name = os.path.basename(self.root.rstrip("/")) if self.root else ""
        return tuple(tokenize(name))

    # -- verbs ---------------------------------------------------------------------------------
    # A symbol or file is always `name` (an id, a qualified name, a label, or a file's path).
    @_live
    def card(self, name: str, include_ambiguous: bool = False) -> verbs.Card:
        """A known symbol: kind, place, signature, doc, parent, callers, callees, members."""
        name = _text(name, "name")
        return verbs.card(self._lookups, name, include_ambiguous=include_ambiguous)

    @_live
    def affected(
        self, name: str, depth: int = 3, include_ambiguous: bool = False
    ) -> verbs.Affected:
        """Blast radius of a symbol or file: who depends on it, by depth (a floor)."""
        name, depth = _text(name, "name"), _depth(depth)
        return verbs.affected(self._lookups, name, depth=depth, include_ambiguous=include_ambiguous)

    @_live
    def path(
        self, a: str, b: str, undirected: bool = False, include_ambiguous: bool = False
    ) -> verbs.PathResult:
        """Shortest paths from symbol A to symbol B, each hop with kind and confidence."""
        a, b = _text(a, "a"), _text(b, "b")
        return verbs.path(
            self._lookups, a, b, undirected=undirected, include_ambiguous=include_ambiguous
        )

    @_live
    def change_plan(
        self, name: str, depth: int = 2, include_ambiguous: bool = False
    ) -> verbs.ChangePlan:
        """An ordered checklist of what to look at before editing a symbol: its callers, blast
        radius, the tests that run it (and those coverage data saw run it), docs, boundaries."""
        return verbs.change_plan(
            self._lookups, _text(name, "name"), depth=_depth(depth),
            include_ambiguous=include_ambiguous,
        )  # fmt: skip

    @_live
    def explain(self, name: str, include_ambiguous: bool = False) -> verbs.Explanation:
        """A plain-language paragraph about a symbol or file, from graph facts only."""
        return verbs.explain(
            self._lookups, _text(name, "name"), include_ambiguous=include_ambiguous
        )

    @_live
    def hubs(self, limit: int = 10, *, top: int | None = None) -> verbs.Hubs:
        """Orientation: most depended-on symbols, largest files, entry points, directories
        (`limit` rows each; `top=` is its old name)."""
        limit = top if top is not None else limit
        return verbs.hubs(self._lookups, limit=clean_int(limit, "limit", 1, 100_000))

    @_live
    def boundaries(self, name: str | None = None) -> verbs.Boundaries:
        """What the repo consumes and provides (routes, env vars, HTTP, exec, deps, k8s); with
        a name, only what that symbol or file reaches through its callees."""
        return verbs.boundaries(self._lookups, _opt_text(name, "name"))

    @_live
    def coverage(self) -> pl.DataFrame:
        """Per language: files, parse errors, nodes (by kind) and the share of call sites
        resolved EXTRACTED or INFERRED (see ctxframe._store.coverage)."""
        return coverage(self.nodes, self.edges, self.files)

    @_live
    def audit(self, sections: str | list[str] | None = None) -> Audit:
        """The audit of this graph: architecture (package graph, import cycles, contracts),
        complexity, dead and untested code, risk and boundaries — a Polars frame per finding
        (docs/audit.md) with a summary, shown in notebooks, `.to_html(path)`,
        `.to_markdown()`, `.export(dir)`. `sections` asks for some only (`"cycles"`)."""
        from ctxframe._audit import AuditInput, parse, run

        cfg = self.config
        given = AuditInput(
            nodes=self.nodes,
            edges=self.edges,
            files=self.files,
            root=self.root,
            config=parse(cfg.extra.get("audit"), cfg.source),
            coverage=self._measured_coverage(),
            test_reach=self._test_reach_pairs,
            refs=self._import_refs,
            memo=self._version_memo,
            extra=self._history_extra(),
        )
        return run(given, sections)

    def _history_extra(self) -> dict:
        """The history's frames for the audit's `hotspots` and `coupling` sections, when the
        store has a history (or a background read of it runs)."""
        from ctxframe._store.history import job, stored_state

        if stored_state(self._snap) is None and job(self.store) is None:
            return {}
        h = _hist()
        made = {"hotspots": h.hotspots, "knowledge_islands": h.knowledge_islands,
                "coupling": h.coupling, "hidden_coupling": h.hidden_coupling}  # fmt: skip
        return {"git history": lambda name: made[name](self)}

    def _test_reach_pairs(self):
        """The graph's test reach (what change-plan reads), its (row, test file) pairs kept in
        this version's cache: an audit in a new process reads them instead of walking."""
        from types import SimpleNamespace

        built = self._lookups.__dict__.get("_test_reach_False")
        if built is not None:
            return built
        pairs = self._version_memo("audit_test_reach", lambda: self._lookups.test_reach().pairs)
        return SimpleNamespace(pairs=pairs)

    def _version_memo(self, name: str, build: Callable[[], pl.DataFrame | None]):
        """A frame kept in this version's cache (built once per version, best effort)."""
        got = _cache.load(self._cache_dir, (name,))
        if got is not None:
            return got[name]
        frame = build()
        if frame is not None:
            _cache.save(self._cache_dir, {name: frame})
        return frame

    def _measured_coverage(self) -> pl.DataFrame | None:
        """The coverage data the index read (`test_coverage`), None when it read none."""
        table = self.test_coverage
        return table if table.height else None

    def _import_refs(self) -> pl.DataFrame | None:
        """The raw import references (internal `refs` table), None when the store has none."""
        if not self._snap.has("refs"):
            return None
        return self._snap.scan("refs").filter(pl.col("kind") == "import").collect()

    @_live
    def neighbourhood(
        self,
        name: str,
        depth: int = 1,
        include_ambiguous: bool = False,
        cap: int | None = None,
    ) -> Neighbourhood:
        """Nodes within `depth` hops of a symbol or file, both ways; `.plot()` draws it. At most
        `cap` nodes are kept, nearest first (default 40 at depth 1, 25 deeper: a readable
        picture), the rest counted in `+N more` boxes."""
        name, depth = _text(name, "name"), _depth(depth)
        if cap is None:
            cap = 40 if depth <= 1 else 25
        return neighbourhood(
            self._lookups, name, depth=depth, include_ambiguous=include_ambiguous, cap=cap
        )

    # -- the git history (ctxframe._graph.history; docs/schema.md: commits, changes) ---------------
    @property
    def commits(self) -> pl.DataFrame:
        """The git history's commits, newest first (sha, parents, author and committer time,
        author name and email, subject); raises when the index holds no history."""
        with self._call():
            return _hist().tables(self)[0]

    @property
    def changes(self) -> pl.DataFrame:
        """One row per file a commit changed: sha, path, added, deleted, old_path."""
        with self._call():
            return _hist().tables(self)[1]

    @_live
    def history(self, limit: int = 5, hops: int = 3):
        """The history at a glance: its size, then the hotspots, the most coupled files, the
        hidden coupling and the knowledge islands (`limit` rows each)."""
        return _hist().summary(self, limit=clean_int(limit, "limit", 1, 100_000), hops=hops)

    @_live
    def hotspots(self, level: str = "file", limit: int = 20, since=None, complexity=None,
                 files: int = 10):  # fmt: skip
        """Revisions × complexity (CodeScene's hotspots) per code file, or per function of
        the `files` hottest files (`level="function"`); `.frame` has them all, `.plot()` the
        scatter. `complexity`: a frame (`path` or `id`, `complexity`) instead of lines of
        code; `since`: a date or a span back from the last commit (`1y`, `6mo`)."""
        note = "complexity: " + ("given" if complexity is not None else "lines of code")
        return _hist().result(
            _hist().R.Hotspots if level == "file" else _hist().R.Functions,
            lambda: _hist().hotspots(self, level, since, complexity, files), note,
            clean_int(limit, "limit", 1, 1_000_000),
        )  # fmt: skip

    @_live
    def coupling(self, level: str = "file", limit: int = 20, since=None,
                 depth: int | None = None, **thresholds):  # fmt: skip
        """Change coupling (code-maat's): pairs of files, or packages (`level="package"`), that
        change in the same commits; `max_changeset`, `min_revs`, `min_shared`, `min_degree`
        filter the noise. `.plot()` draws the matrix."""
        return _hist().result(
            _hist().R.Coupling,
            lambda: _hist().coupling(self, level, since, depth, **thresholds),
            _hist()._coupling_note(thresholds), clean_int(limit, "limit", 1, 1_000_000),
        )  # fmt: skip

    @_live
    def hidden_coupling(self, hops: int = 3, limit: int = 20, since=None,
                        undirected: bool = False, **thresholds):  # fmt: skip
        """Coupled code files with no path between them in the graph within `hops`
        file-to-file dependencies: what only the history shows."""
        hops = clean_int(hops, "hops", 1, 50)
        return _hist().result(
            _hist().R.HiddenCoupling,
            lambda: _hist().hidden_coupling(self, hops, since, undirected, **thresholds),
            f"no path within {hops} hops; " + _hist()._coupling_note(thresholds),
            clean_int(limit, "limit", 1, 1_000_000),
        )  # fmt: skip

    @_live
    def ownership(self, level: str = "file", limit: int = 20, since=None,
                  depth: int | None = None, islands: bool = False):  # fmt: skip
        """Authors per file (or package): the main developer and their share of the added
        lines; `islands=True`: the hotspots one author wrote alone (knowledge islands)."""
        if islands:
            return _hist().result(
                _hist().R.Ownership, lambda: _hist().knowledge_islands(self, since=since),
                "knowledge islands: hotspots one author wrote alone",
                clean_int(limit, "limit", 1, 1_000_000),
            )  # fmt: skip
        return _hist().result(
            _hist().R.Ownership, lambda: _hist().ownership(self, level, since, depth),
            "main developer: most added lines", clean_int(limit, "limit", 1, 1_000_000),
        )  # fmt: skip

    @_live
    def age(self, level: str = "file", path: str | None = None, limit: int = 20):
        """Days since the last change per code file (longest untouched first), or per
        function of the file `path` (`level="function"`)."""
        return _hist().result(
            _hist().R.Age, lambda: _hist().age(self, level, path),
            "from the newest commit", clean_int(limit, "limit", 1, 1_000_000),
        )  # fmt: skip

    @_live
    def timeline(self, every: str = "1mo", depth: int | None = 1, since=None, limit: int = 50):
        """Commits per package per period (`every`: `1mo`, `1q`, `1y`); `.plot()` draws it."""
        return _hist().result(
            _hist().R.Timeline, lambda: _hist().timeline(self, every, depth, since),
            f"per {every}, packages by their first {depth} folder(s)",
            clean_int(limit, "limit", 1, 1_000_000),
        )  # fmt: skip

    @_live
    def history_commits(self, limit: int = 20):
        """The commits, newest first, with their files changed and lines added and deleted."""
        return _hist().result(
            _hist().R.Commits, lambda: _hist().commits_frame(self), "newest first",
            clean_int(limit, "limit", 1, 1_000_000),
        )  # fmt: skip

    @_live
    def function_history(self, path: str, limit: int = 50):
        """Each function of the file `path`: its own revisions, authors and last change
        (ctxframe._hist().functions)."""
        path = _text(path, "path")
        return _hist().result(
            _hist().R.Functions, lambda: _hist().functions(self, path),
            "revisions on the first-parent history", clean_int(limit, "limit", 1, 1_000_000),
        )  # fmt: skip

    @_live
    def summary(self) -> dict:
        """Counts by kind and confidence, for display."""
        return {
            "root": self.root,
            "indexed_at": self.meta.get("indexed_at"),
            "git_head": self.meta.get("git_head"),
            "files": int(self.files["skip_reason"].is_null().sum()),
            "nodes": dict(self.nodes.group_by("kind").len().sort("kind").iter_rows()),
            "edges": dict(self.edges.group_by("kind").len().sort("kind").iter_rows()),
        }

    @_live
    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"<ctxframe.Graph {s['root']}: {s['files']} files, {self.nodes.height} nodes, "
            f"{self.edges.height} edges>"
        )

    @_live
    def _repr_html_(self) -> str:
        s = self.summary()
        return render(
            "graph",
            root=s["root"],
            files=s["files"],
            n_nodes=self.nodes.height,
            n_edges=self.edges.height,
            indexed_at=s["indexed_at"],
            git_head=s["git_head"],
            nodes=sorted(s["nodes"].items(), key=lambda kv: (-kv[1], kv[0])),
            edges=sorted(s["edges"].items(), key=lambda kv: (-kv[1], kv[0])),
        )


def open_graph(path: str = ".", store: str | None = None) -> Graph:
    """Open the index of the repository (or store directory) at `path`."""
    if store is None and not os.path.isdir(path):
        from ctxframe._core.errors import RepoNotFound

        raise RepoNotFound(f"{path} is not a directory: pass the root of an indexed repository")
    return Graph(path, store=store)


def index_graph(
    path: str = ".",
    *,
    store: str | None = None,
    rebuild: bool = False,
    progress: bool | None = None,
    dial: bool = False,
    wait: bool = True,
    cache: bool = True,
    coverage: str | bool | None = None,
    history: bool | None = None,
    anonymize: bool | None = None,
) -> Graph:
    """Index (incrementally) the repository at `path` and open the result; `graph.report`
    says what the run did."""
    from ctxframe._store.build import index

    report = index(
        path, store=store, rebuild=rebuild, progress=progress, dial=dial, wait=wait, cache=cache,
        coverage=coverage, history=history, anonymize=anonymize,
    )  # fmt: skip
    graph = Graph(report.store, root=report.root)
    graph.report = report
    return graph

"""Solve the value-flow facts of a repository: points-to sets of nodes over values, to a
fixpoint, in the manner of PyCG's assignment graph.

Semi-naive: each round applies the rules to the pairs found in the round before only. The
rules: copy along flows; look attributes up (a module's slot; a class's along its MRO, an
instance's binding methods; `super()` past the class); call (a function's return value, a
class's instance and `__init__`, an instance's `__call__`, arguments into parameters);
subscripts of containers; stores into attributes and elements; iteration (elements, a
generator's yields); `!` (an instance of an annotation's class). Rules make new flows, which
carry what their source already holds. A node with more than CAP values stops spreading.

What a lookup finds never depends on the order values arrive in: a class's lookups wait until
its MRO is whole (every class on it has a class in each base expression; one that never is
reads what it has once nothing else moves), and a lookup takes the first class on the MRO with
a static slot of the name (a definition or a class-body assignment) together with every slot a
store made (`self.x = …`) before it, a store's slot made later reaching the reads registered
before. Only the CAP, and a class whose MRO changes after it was read (`unstable`: a base that
gains a second class), depend on order: `capped` and `unstable` record where.
Flows from annotations join last: what they add is INFERRED.

The tables (ctxframe._resolve.flow_tables, 64-bit hashes) are renumbered to dense ids once;
the rounds then run on numpy arrays joined by binary search (ctxframe._resolve.flow_index):
a round costs what its new pairs touch, with a few microseconds per operation.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import polars as pl

from ctxframe._core.facts import GUARDED
from ctxframe._resolve.flow_index import (
    EMPTY,
    I64,
    KeySet,
    Rel,
    expand,
    first_of_runs,
    high,
    keyset_remove,
    low,
    pair,
    rel_remove,
    search,
    search_both,
    unique,
)
from ctxframe._resolve.flow_tables import (
    BFUNC,
    BINST,
    BOUND,
    CLASS,
    CONT,
    EXT,
    FUNC,
    GEN,
    INST,
    LIT,
    MODULE,
    OPEN,
    SUPER,
    WRAP,
    H,
    Tables,
)  # fmt: skip

CAP = 48  # values of one node beyond which it stops spreading them
MAX_ROUNDS = 200
_MRO_EVERY = 4
_U = pl.UInt64
NULL_KEY = np.int64((1 << 32) - 1)  # a key read through a node: matches no element's
_NO_RANK = np.int64(1 << 40)  # no class on the MRO has a static slot of the name


def _hash(s: str) -> int:
    return pl.select(H(pl.lit(s))).item()


@dataclass
class Solution:
    """Points-to pairs (n, v): `exact` from bindings, `inferred` added by annotations."""

    exact: pl.DataFrame
    inferred: pl.DataFrame
    tables: Tables
    wrapped: pl.DataFrame  # call, deco: a decorator's application whose wrapper calls through
    mro: pl.DataFrame  # cls, anc, rank (last: `type.mro` reads as a default to dataclasses)
    solver: _Solver | None = None  # the exact phase's (kept for an incremental solve)


def solve(t: Tables, keep: bool = False) -> Solution:
    """Both phases to their fixpoint; with `keep`, the solver as the first left it (for an
    incremental solve: `_Solver.update`)."""
    s = _Solver(t)
    s.run(s.initial())
    s.decorator_defaults()
    s.wrapped_frame = s.transparent()
    return s.solution(t, keep)


class _Space:
    """Dense ids for a set of 64-bit hashes: at first 0..len-1 in hash order (the named
    `parts`' non-null hashes; one dense rank over all the parts gives every part's ids at
    once); hashes added later take the ids after (`extend`). Ids may stand for no hash (a
    store's new slot, `_slot_nodes`): `named` says which do."""

    def __init__(self, parts: dict[str, pl.Series]):
        every = pl.concat([p.cast(_U).rename("h") for p in parts.values()])
        rank = every.rank("dense").cast(pl.Int64)
        ids = (rank - 1).fill_null(-1).to_numpy()
        self.hashes = np.zeros(int(rank.max() or 0), dtype=np.uint64)
        known = ids >= 0
        self.hashes[ids[known]] = every.fill_null(0).to_numpy()[known]
        self.named = np.ones(len(self.hashes), dtype=bool)
        self._sorted, self._sorted_ids = self.hashes, None  # None: ids are in hash order
        self._of, start = {}, 0
        for name, part in parts.items():
            self._of[name] = ids[start : start + part.len()]
            start += part.len()

    def __len__(self) -> int:
        return len(self.hashes)

    def of(self, name: str) -> np.ndarray:
        """The ids of the part `name` (-1 for a null), as the space was made."""
        return self._of[name]

    def ids(self, col: pl.Series | np.ndarray) -> np.ndarray:
        """Each hash's id; -1 for a null or a hash outside the space."""
        if len(col) == 0:
            return EMPTY
        if isinstance(col, pl.Series):
            null = col.is_null().to_numpy()
            h = col.cast(_U).fill_null(0).to_numpy()
        else:
            h, null = col.astype(np.uint64), np.zeros(len(col), dtype=bool)
        keys = self._sorted
        if len(keys) == 0:
            return np.full(len(h), -1, dtype=I64)
        at = np.minimum(search(keys, h), len(keys) - 1)
        ok = (keys[at] == h) & ~null
        found = at if self._sorted_ids is None else self._sorted_ids[at]
        return np.where(ok, found, -1).astype(I64)

    def extend(self, hashes: np.ndarray, first: int) -> int:
        """Give the hashes not in the space yet ids from `first` on (ids between the last and
        `first` stand for no hash); returns the id after the last."""
        h = np.unique(hashes.astype(np.uint64))
        h = h[self.ids(h) < 0]
        if len(h) == 0:
            return max(first, len(self.hashes))
        ids = np.arange(first, first + len(h), dtype=I64)
        self._grow(first + len(h))
        self.hashes[ids] = h
        self.named[ids] = True
        self._index(h, ids)
        return first + len(h)

    def assign(self, ids: np.ndarray, hashes: np.ndarray) -> None:
        """Name ids that stood for no hash."""
        self._grow(int(ids.max()) + 1 if len(ids) else 0)
        self.hashes[ids] = hashes
        self.named[ids] = True
        self._index(hashes.astype(np.uint64), ids.astype(I64))

    def _grow(self, size: int) -> None:
        if size > len(self.hashes):
            more = size - len(self.hashes)
            self.hashes = np.concatenate([self.hashes, np.zeros(more, dtype=np.uint64)])
            self.named = np.concatenate([self.named, np.zeros(more, dtype=bool)])

    def _index(self, h: np.ndarray, ids: np.ndarray) -> None:
        if self._sorted_ids is None:
            self._sorted_ids = np.arange(len(self._sorted), dtype=I64)
        order = np.argsort(h)
        at = search(self._sorted, h[order])
        self._sorted = np.insert(self._sorted, at, h[order])
        self._sorted_ids = np.insert(self._sorted_ids, at, ids[order])


def _at(col: np.ndarray, rows: np.ndarray, fill) -> np.ndarray:
    """col[rows], `fill` where a row is -1."""
    if len(col) == 0:
        return np.full(len(rows), fill, dtype=col.dtype)
    return np.where(rows >= 0, col[rows.clip(0)], fill)


def _hashed(col: pl.Series) -> pl.Series:
    return pl.select(H(pl.lit(col))).to_series() if col.len() else col.cast(_U)


# Every column of the tables holding an id, by space: a spec `table.column`, or `#table.column`
# for a string column whose hash is the id.
_K_PARTS = ("#subs.key", "#stores.name", "#store_items.key", "#elems.key", "#args.kw",
            "#params.pname", "#retparams.pname", "attrs.name_h", "values.kh", "slots.name_h",
            "named.name_h", "#shapes.kws")  # fmt: skip
_V_PARTS = ("values.v", "values.vt", "values.inst", "values.open", "values.wrap",
            "values.bound", "values.res", "seeds.v", "slots.owner", "elems.cont", "params.f",
            "retparams.f", "bases.cls", "named.owner", "kept.own", "through.w",
            "through.f")  # fmt: skip
_N_PARTS = ("flows.src", "flows.dst", "inferred.src", "inferred.dst", "seeds.n", "attrs.base",
            "attrs.dst", "calls.callee", "calls.dst", "subs.base", "subs.keynode", "subs.dst",
            "iters.base", "iters.dst", "instof.base", "instof.dst", "args.call", "args.arg",
            "params.node", "stores.base", "stores.val", "store_items.base",
            "store_items.keynode", "store_items.val", "decorated.call", "decorated.arg",
            "bases.base", "values.ret", "values.yld", "slots.slot", "elems.slot", "named.node",
            "shapes.call", "kept.var", *(f"values.ret_{c}" for c in GUARDED))  # fmt: skip
_VALUE_COLUMNS = {"vt": "V", "inst": "V", "open": "V", "wrap": "V", "bound": "V", "res": "V",
                  "ret": "N", "yld": "N", "kh": "K",
                  **{f"ret_{c}": "N" for c in GUARDED}}  # fmt: skip


def _column(t: Tables, spec: str) -> pl.Series:
    """The column a spec names (hashed for `#`; a list column's items for `shapes.kws`)."""
    table, _, col = spec.lstrip("#").partition(".")
    frame = getattr(t, table)
    if spec == "#shapes.kws":
        series = frame.select(pl.col("kws").explode()).to_series()
    else:
        series = frame[col]
    return _hashed(series) if spec.startswith("#") else series


def _parts(t: Tables, specs: tuple) -> dict[str, pl.Series]:
    return {spec: _column(t, spec) for spec in specs}


_MAX_DOOMED = 200_000  # pairs an edit may delete before a full solve is the cheaper one
# relations keyed by a node (their rows' nodes are what an edit touched)
_NODE_KEYED = ("attrs", "calls", "subs", "iters", "instof", "stores", "items", "args",
               "decorated", "shapes", "consts", "flows", "inferred")  # fmt: skip


def search_both_high(sorted_src: np.ndarray, probes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(probe index, position) of every entry of sorted `sorted_src` equal to a probe."""
    from ctxframe._resolve.flow_index import expand

    return expand(*search_both(sorted_src, probes, probes, "right"))


def _pure(frame: pl.DataFrame) -> np.ndarray:
    """Whether each row is an expression on a constant (flow_tables: `pure`)."""
    if "pure" in frame.columns:
        return frame["pure"].fill_null(False).to_numpy()
    return np.zeros(frame.height, dtype=bool)


def _ids_of(solver, t: Tables, space: str, spec: str) -> np.ndarray:
    return getattr(solver, space).ids(_column(t, spec))


def _parts_hashes(t: Tables, specs: tuple) -> np.ndarray:
    cols = [_column(t, spec).cast(_U).drop_nulls() for spec in specs]
    return pl.concat(cols).to_numpy() if cols else np.zeros(0, dtype=np.uint64)


def _diff(old: Tables, new: Tables) -> tuple[Tables, Tables]:
    """(rows only `old` has, rows only `new` has), table by table: a table empty on either
    side is its own diff, the others' anti joins run in one batch."""
    gone, come, names, plans = {}, {}, [], []
    for f in dataclasses.fields(Tables):
        a, b = getattr(old, f.name), getattr(new, f.name)
        if a.is_empty() or b.is_empty():  # nothing to take away: each side is its own diff
            gone[f.name], come[f.name] = a, b
            continue
        lists = [c for c, t in a.schema.items() if isinstance(t, pl.List)]
        on = [c for c in a.columns if c not in lists]
        tmp = [pl.col(c).list.join("\x00").alias(f"_{c}") for c in lists]
        la, lb = a.lazy(), b.lazy()
        if tmp:
            la, lb = la.with_columns(tmp), lb.with_columns(tmp)
            on += [f"_{c}" for c in lists]
        drop = [f"_{c}" for c in lists]
        names.append(f.name)
        plans += [la.join(lb, on=on, how="anti", nulls_equal=True).drop(drop),
                  lb.join(la, on=on, how="anti", nulls_equal=True).drop(drop)]  # fmt: skip
    done = pl.collect_all(plans) if plans else []
    for k, name in enumerate(names):
        gone[name], come[name] = done[2 * k], done[2 * k + 1]
    return Tables(**gone), Tables(**come)


class Fallback(Exception):
    """An incremental solve cannot vouch for its answer: solve everything again."""


class _Solver:
    def __init__(self, t: Tables):
        self.t = t
        fixed = {"fixed": pl.Series([_hash("__init__"), _hash("__call__"), _hash("?")], dtype=_U)}
        K = _Space({**_parts(t, _K_PARTS), **fixed})
        V = _Space(_parts(t, _V_PARTS))
        N = _Space(_parts(t, _N_PARTS))
        self.N, self.V, self.K = N, V, K
        n_nodes = len(N)
        self.next_node = n_nodes  # ids of slots no fact names (a store's new attribute)
        self.init_k, self.call_k, self.q_k = K.of("fixed")
        self.dry = False  # rules report what they derive without registering reads
        self.strict = False  # an incremental solve: what it cannot vouch for raises Fallback
        self.touched: list[np.ndarray] = []  # nodes an incremental solve changed
        self._values_init(t)
        # outside names the callback table tells apart: their attributes, and the callables
        # whose result calls an argument (functools.partial)
        xa = t.ext_attrs
        owner, xname, xval = V.ids(xa["owner"]), K.ids(xa["name_h"]), V.ids(xa["value"])
        ok = (owner >= 0) & (xname >= 0) & (xval >= 0)
        self.ext_attrs = Rel(pair(owner[ok], xname[ok]), value=xval[ok])
        xr = V.ids(t.ext_returns["v"])
        self.ext_returns = Rel(
            xr[xr >= 0], pos=t.ext_returns["pos"].to_numpy().astype(I64)[xr >= 0]
        )
        self.ext = V.ids(pl.Series([_hash("x:")], dtype=_U))[0]
        # points: pair keys (node, value)
        self.points = KeySet()
        self.bcopy = KeySet()
        self.tcopy = KeySet()  # a test's store into the tested code: no test's values pass
        rows = self._rows(t, lambda space, spec: getattr(self, space).of(spec))
        self._build(rows, n_nodes)
        for space in (N, V, K):
            space._of = {}  # only the tables' own columns needed them
        # what later rounds read again: subscript reads, reads a later store's slot may
        # answer, the reads looking down into subclasses, the (node, value) pairs whose
        # lookups depend on a class's MRO; each with the pair (`trig`) that made it
        self.reads_known = Rel(EMPTY, dst=EMPTY, trig=EMPTY)  # (container, key) -> dst
        self.reads_any = Rel(EMPTY, dst=EMPTY, trig=EMPTY)  # container -> dst (unknown key)
        none = np.zeros(0, dtype=bool)
        self.reads = Rel(EMPTY, cls=EMPTY, dst=EMPTY, how=EMPTY, down=none, trig=EMPTY)  # by name
        self.down_reads = Rel(EMPTY, name=EMPTY, dst=EMPTY, trig=EMPTY)  # by class
        self.class_reads = Rel(EMPTY, n=EMPTY, v=EMPTY)  # by class
        self.pending = Rel(EMPTY, key=EMPTY)  # class -> (node, value) waiting for its MRO
        n_v = len(self.vk)
        self.complete = np.ones(n_v, dtype=bool)  # a class whose MRO is whole
        self.forced = np.zeros(n_v, dtype=bool)  # read before its MRO was whole (`_force`)
        self.unstable: list[np.ndarray] = []  # classes whose MRO changed after it was read
        self.capped: list[np.ndarray] = []  # nodes that turned values away (CAP)
        self.defaults = EMPTY  # (arg, application): decorators given their argument
        self.empty_after = EMPTY  # those whose callee held nothing once everything was solved
        self.wrapped = EMPTY  # (application, w:F) pairs a transparent decorator's holds
        # classes
        self.base_count = -1
        self.mro = Rel(EMPTY, anc=EMPTY, rank=EMPTY)
        self.mro_rank = Rel(EMPTY, rank=EMPTY)  # (class, ancestor) -> rank
        self.ext_base = np.zeros(n_v, dtype=bool)
        self.ext_ident = np.full(n_v, -1, dtype=I64)  # a class's outside base with a name
        self.desc = Rel(EMPTY, sub=EMPTY)
        self.down = Rel(EMPTY, slot=EMPTY)
        self._mro()

    # -- kept with a version (ctxframe._resolve.flow_state) ------------------------------------
    _DERIVED = ("calls_by_dst", "subs_by_key", "items_by_key", "params_pos", "params_kw",
                "retparams", "applied", "kept_var", "kept_own", "bases_cls", "bases_node",
                "bases_pos", "base_nodes", "by_dst", "slotdef", "ret_by", "vt", "inst", "open",
                "wrap", "bound", "res", "ret", "yld", "kh", "in_tests", "definition",
                "class_like", "classes", "t")  # fmt: skip

    def __getstate__(self) -> dict:
        """The solver without what `_derive` and the value arrays make again."""
        return {k: v for k, v in self.__dict__.items() if k not in self._DERIVED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.t = None
        self._value_views()
        self._derive()

    # -- the tables as relations of ids ------------------------------------------------------
    def _values_init(self, t: Tables) -> None:
        """Arrays indexed by value id: kind, target and what the rules read of each value."""
        V = self.V
        n_v = len(V)
        self.vk = np.zeros(n_v, dtype=np.int8)
        self.of_tests = np.zeros(n_v, dtype=bool)  # defined or made in a test file
        for name in _VALUE_COLUMNS:
            setattr(self, f"_v_{name}", np.full(n_v, -1, dtype=I64))
        self._set_values(t.values, V.of("values.v"),
                         lambda n: getattr(self, _VALUE_COLUMNS[n]).of(f"values.{n}"))  # fmt: skip

    def _set_values(self, values: pl.DataFrame, v: np.ndarray, ids) -> None:
        self.vk[v] = values["vk"].to_numpy()
        # a function or class a test file defines and stores into the tested code's modules,
        # classes, objects or containers (`timezone.now = lambda: fixed`) is a patch for that
        # test: it never reaches the code's own reads (`_edges`). Instances and containers
        # pass: they carry the code's own classes (a test's migration with its operations).
        self.of_tests[v] = values["test"].to_numpy()
        for name in _VALUE_COLUMNS:
            getattr(self, f"_v_{name}")[v] = ids(name)
        self._value_views()

    def _value_views(self) -> None:
        """The value arrays under the names the rules read, and what is made of them."""
        self.vt, self.inst, self.open, self.wrap = (
            self._v_vt,
            self._v_inst,
            self._v_open,
            self._v_wrap,
        )
        self.bound, self.res, self.ret, self.yld = (
            self._v_bound,
            self._v_res,
            self._v_ret,
            self._v_yld,
        )
        self.kh = self._v_kh
        self.ret_by = {c: getattr(self, f"_v_ret_{c}") for c in GUARDED}
        self.guarded = any((r >= 0).any() for r in self.ret_by.values())
        self.in_tests = self.of_tests & np.isin(self.vk, [FUNC, CLASS, BOUND, SUPER, GEN])
        self.definition = np.isin(self.vk, [FUNC, CLASS, INST, OPEN, BOUND, SUPER, GEN])
        self.class_like = np.isin(self.vk, [CLASS, EXT, BFUNC])
        self.classes = np.flatnonzero(self.vk == CLASS).astype(I64)

    def _rows(self, t: Tables, ids) -> dict:
        """Each relation's rows (key, {column: array}) from the tables; `ids(space, spec)`
        gives a column's ids."""
        N = functools.partial(ids, "N")
        V = functools.partial(ids, "V")
        K = functools.partial(ids, "K")

        def num(col: pl.Series, fill=-1) -> np.ndarray:
            return col.fill_null(fill).to_numpy().astype(I64)

        sh = t.shapes
        kws = sh.select("call", "kws").explode("kws")  # as `#shapes.kws` is
        kw_call = self.N.ids(kws["call"])
        kw_ok = kws["kws"].is_not_null().to_numpy()
        subs, items = t.subs, t.store_items
        return {
            "consts": (N("seeds.n"), {"v": V("seeds.v"), "pure": t.seeds["pure"].to_numpy()}),
            "flows": (N("flows.src"), {"dst": N("flows.dst")}),
            "inferred": (N("inferred.src"), {"dst": N("inferred.dst")}),
            "attrs": (
                N("attrs.base"),
                {"name": K("attrs.name_h"), "dst": N("attrs.dst"), "pure": _pure(t.attrs)},
            ),
            "calls": (
                N("calls.callee"),
                {"dst": N("calls.dst"), "live": t.calls["live"].to_numpy(), "pure": _pure(t.calls)},
            ),
            "subs": (
                N("subs.base"),
                {
                    "key": K("#subs.key"),
                    "q": (subs["key"] == "?").fill_null(False).to_numpy(),
                    "keynode": N("subs.keynode"),
                    "dst": N("subs.dst"),
                    "pure": _pure(subs),
                },
            ),
            "iters": (N("iters.base"), {"dst": N("iters.dst"), "pure": _pure(t.iters)}),
            "instof": (N("instof.base"), {"dst": N("instof.dst"), "pure": _pure(t.instof)}),
            "stores": (
                N("stores.base"),
                {
                    "name": K("#stores.name"),
                    "val": N("stores.val"),
                    "test": t.stores["test"].to_numpy(),
                },
            ),
            "items": (
                N("store_items.base"),
                {
                    "key": K("#store_items.key"),
                    "keynode": N("store_items.keynode"),
                    "val": N("store_items.val"),
                    "test": items["test"].to_numpy(),
                },
            ),
            "args": (
                N("args.call"),
                {"arg": N("args.arg"), "pos": num(t.args["pos"]), "kw": K("#args.kw")},
            ),
            "params": (
                V("params.f"),
                {
                    "node": N("params.node"),
                    "pos": num(t.params["pos"]),
                    "pname": K("#params.pname"),
                },
            ),
            "retparams": (V("retparams.f"), {"pname": K("#retparams.pname")}),
            "decorated": (N("decorated.call"), {"arg": N("decorated.arg")}),
            "through": (pair(V("through.w"), V("through.f")), {}),
            "shapes": (
                N("shapes.call"),
                {
                    "passes": sh["passes"].to_numpy(),
                    "literal": sh["literal"].to_numpy(),
                    "pure": _pure(sh),
                },
            ),
            "shape_kws": (pair(kw_call[kw_ok], K("#shapes.kws")[kw_ok]), {}),
            "kept": (N("kept.var"), {"own": V("kept.own")}),
            "slots": (pair(V("slots.owner"), K("slots.name_h")), {"slot": N("slots.slot")}),
            "named": (pair(V("named.owner"), K("named.name_h")), {"node": N("named.node")}),
            "elems": (pair(V("elems.cont"), K("#elems.key")), {"slot": N("elems.slot")}),
            "bases": (V("bases.cls"), {"node": N("bases.base"), "pos": num(t.bases["pos"], 0)}),
        }

    def _build(self, rows: dict, n_nodes: int) -> None:
        """The relations the rules read, from `_rows`."""
        key, c = rows["consts"]
        self.consts = Rel(key, dense=n_nodes, **c)
        key, c = rows["flows"]
        self.copy_static = KeySet(pair(key, c["dst"]))  # the facts' own flows
        self.copy = KeySet(self.copy_static.key)  # and the rules'
        key, c = rows["inferred"]
        self.inferred = KeySet(pair(key, c["dst"]))
        for name in ("attrs", "calls", "subs", "iters", "instof", "stores", "items", "args",
                     "decorated", "shapes"):  # fmt: skip
            key, c = rows[name]
            setattr(self, name, Rel(key, dense=n_nodes, **c))
        for name in ("params", "retparams", "kept", "bases"):
            key, c = rows[name]
            setattr(self, f"_r_{name}", Rel(key, **c))
        self.calls_through = KeySet(rows["through"][0])
        self.shape_kws = KeySet(rows["shape_kws"][0])
        key, c = rows["slots"]
        ok = (high(key) >= 0) & (low(key) >= 0) & (c["slot"] >= 0)
        self.slots = Rel(key[ok], slot=c["slot"][ok], static=np.ones(ok.sum(), dtype=bool))
        key, c = rows["named"]
        ok = (high(key) >= 0) & (low(key) >= 0)
        named = Rel(key[ok], node=c["node"][ok])
        keep = first_of_runs(named.key)
        self.named = Rel(named.key[keep], node=named["node"][keep])
        key, c = rows["elems"]
        self.elems = Rel(key, slot=c["slot"], static=np.ones(len(key), dtype=bool))
        self._derive()

    def _derive(self) -> None:
        """The relations made from the others: by destination, by key node, parameters by
        position and by name, the classes' bases, the definitions slots hold."""
        n_nodes = self.next_node
        self.calls_by_dst = Rel(self.calls["dst"], dense=n_nodes, callee=self.calls.key)
        s = self.subs
        keyed = s["keynode"] >= 0
        self.subs_by_key = Rel(s["keynode"][keyed], base=s.key[keyed], dst=s["dst"][keyed])
        it = self.items
        keyed = it["keynode"] >= 0
        self.items_by_key = Rel(it["keynode"][keyed], base=it.key[keyed], val=it["val"][keyed],
                                test=it["test"][keyed])  # fmt: skip
        p = self._r_params
        at = p["pos"] >= 0
        self.params_pos = Rel(pair(p.key[at], p["pos"][at]), node=p["node"][at],
                              pname=p["pname"][at])  # fmt: skip
        self.params_kw = Rel(pair(p.key, p["pname"]), node=p["node"], pos=p["pos"])
        self.retparams = self._r_retparams
        self.applied = KeySet(self.decorated.key)  # calls that apply a decorator
        k = self._r_kept
        ok = (k.key >= 0) & (k["own"] >= 0)
        self.kept_var = KeySet(k.key[ok])
        self.kept_own = KeySet(pair(k.key[ok], k["own"][ok]))
        b = self._r_bases
        self.bases_cls, self.bases_node, self.bases_pos = b.key, b["node"], b["pos"]
        self.base_nodes = KeySet(self.bases_node)
        # by destination: what re-derives a node's values (`update`)
        self.by_dst = {name: Rel(getattr(self, name)["dst"], base=getattr(self, name).key)
                       for name in ("attrs", "subs", "iters", "instof")}  # fmt: skip
        self.slotdef = self._slotdefs(self.copy_static.key)

    def _slotdefs(self, flows: np.ndarray) -> Rel:
        """(slot -> function) of the flows from a constant node holding a function."""
        src, dst = high(flows), low(flows)
        i, j = self.consts.find(src)
        v = self.consts["v"][j]
        fn = (v >= 0) & (self.vk[v.clip(0)] == FUNC)
        return Rel(dst[i[fn]], f=v[fn])

    # -- incremental -------------------------------------------------------------------------
    def update(self, removed: Tables, added: Tables, z: np.ndarray | None = None) -> np.ndarray:
        """Solve again after some files' facts changed: `removed` and `added` are the rows
        their tables lost and gained (`_diff` of `flow_tables.build(..., whole=False)` of
        their facts before and after). Deletes
        what the old rows derived and what that derived in turn (over-deleting: DRed),
        re-derives what still holds, and adds what the new rows derive. Returns the nodes
        whose values may have changed. Raises Fallback for what it cannot vouch for equals
        a full solve: a node the CAP turned values away from, or one whose values reach such
        a node (`z`: their order there would change), a class's MRO changing after it was
        read, a decorated class's name, a value whose kind or targets changed, a decorator
        left without a value gaining or losing one."""
        self.strict, self.touched, self.new_flows, self.touched_keys = True, [], [], []
        self._z = np.zeros(0, dtype=bool) if z is None else z
        try:
            if removed.kept.height or added.kept.height:
                raise Fallback("a decorated class's name")
            self._extend(added)
            gone = self._rows(removed, functools.partial(_ids_of, self, removed))
            come = self._rows(added, functools.partial(_ids_of, self, added))
            calls_at, trig = self._triggers(gone, come)
            doomed, flows = self._overdelete(gone, calls_at, trig)
            self._apply(gone, come, doomed, flows)
            return self._rederive(gone, come, doomed, flows, calls_at, trig)
        finally:
            self.strict = False

    def _extend(self, added: Tables) -> None:
        """The spaces and the value arrays take the new rows' ids; a node a store had made
        (`_slot_nodes`) that a fact now names keeps its id."""
        self.K.extend(_parts_hashes(added, _K_PARTS), len(self.K))
        n_v = len(self.V)
        self.V.extend(_parts_hashes(added, _V_PARTS), n_v)
        named = added.named
        owner, name = self.V.ids(named["owner"]), self.K.ids(named["name_h"])
        at = self.named.get(pair(owner, name))
        had = (owner >= 0) & (name >= 0) & (at >= 0)
        node = self.named["node"][at[had]] if had.any() else EMPTY
        unnamed = ~self.N.named[node] if len(node) else np.zeros(0, dtype=bool)
        if unnamed.any():
            h = named["node"].to_numpy()[had][unnamed]
            fresh = self.N.ids(h) < 0
            self.N.assign(node[unnamed][fresh], h[fresh])
        self.next_node = self.N.extend(_parts_hashes(added, _N_PARTS), self.next_node)
        self._grow_values(len(self.V))
        vals = added.values
        v = self.V.ids(vals["v"])
        fresh = v >= n_v
        known = vals.filter(pl.Series(~fresh))
        if known.height:  # a value the tables knew: the same kind and targets, or solve again
            kv = v[~fresh]
            same = self.vk[kv] == known["vk"].to_numpy()
            for name_, space in _VALUE_COLUMNS.items():
                same &= getattr(self, f"_v_{name_}")[kv] == getattr(self, space).ids(known[name_])
            same &= self.of_tests[kv] == known["test"].to_numpy()
            if not same.all():
                raise Fallback("a value's kind or targets changed")
        if fresh.any():
            rows = vals.filter(pl.Series(fresh))
            self._set_values(rows, v[fresh],
                             lambda n: getattr(self, _VALUE_COLUMNS[n]).ids(rows[n]))  # fmt: skip

    def _grow_values(self, n_v: int) -> None:
        more = n_v - len(self.vk)
        if more <= 0:
            return

        def grow(a: np.ndarray, fill) -> np.ndarray:
            return np.concatenate([a, np.full(more, fill, dtype=a.dtype)])

        self.vk, self.of_tests = grow(self.vk, 0), grow(self.of_tests, False)
        for name in _VALUE_COLUMNS:
            setattr(self, f"_v_{name}", grow(getattr(self, f"_v_{name}"), -1))
        # a new class waits for the MRO to take it in (`_remro`: it becomes whole then)
        self.complete, self.forced = grow(self.complete, False), grow(self.forced, False)
        self.ext_base, self.ext_ident = grow(self.ext_base, False), grow(self.ext_ident, -1)
        self._value_views()

    def _holders(self, values: np.ndarray) -> np.ndarray:
        """The pairs whose value is one of these."""
        if len(values) == 0 or len(self.points) == 0:
            return EMPTY
        k = self.points.key
        return k[np.isin(low(k), values)]

    def _at_nodes(self, nodes: np.ndarray) -> np.ndarray:
        """The pairs of these nodes, constants at nodes a rule reads included."""
        nodes = unique(nodes[nodes >= 0])
        i, v = self._values(nodes)
        ci, cj = self.consts.find(nodes)
        return unique(np.concatenate([pair(nodes[i], v), pair(nodes[ci], self.consts["v"][cj])]))

    def _triggers(self, gone: dict, come: dict) -> tuple[np.ndarray, np.ndarray]:
        """(the call nodes whose row, arguments, decorator or shape changed, the pairs whose
        rules read something else that changed): a function's parameters or returns (each
        call of it), a class's or a module's slot (the reads it answers or shadows), a
        container's element (what reads the container)."""
        calls_at = [rows["calls"][1]["dst"] for rows in (gone, come)]
        calls_at += [rows[name][0] for rows in (gone, come) for name in ("args", "decorated",
                     "shapes")]  # fmt: skip
        calls_at = unique(np.concatenate(calls_at))
        keys = [EMPTY]
        funcs = np.concatenate([rows[name][0] for rows in (gone, come)
                                for name in ("params", "retparams")])  # fmt: skip
        funcs = unique(funcs[funcs >= 0])
        if len(funcs):
            bound = self.bound[funcs]
            keys.append(self._holders(np.concatenate([funcs, bound[bound >= 0]])))
            held = np.isin(self.slotdef["f"], funcs)  # slots holding them: as a changed slot
            at = np.isin(self.slots["slot"], self.slotdef.key[held])
            keys.append(self._slot_readers(self.slots.key[at]))
        changed = [rows["slots"][0] for rows in (gone, come)]
        keys.append(self._slot_readers(np.concatenate(changed)))
        conts = np.concatenate([high(rows["elems"][0]) for rows in (gone, come)])
        if len(conts):
            keys.append(self._holders(unique(conts)))
        return calls_at[calls_at >= 0], unique(np.concatenate(keys))

    _RULE_RELS = ("attrs", "calls", "subs", "iters", "instof", "stores", "items")

    def _restricted(self, rows: dict, calls_at: np.ndarray) -> dict:
        """The rules' relations holding only these rows, and the calls at `calls_at` as the
        solver has them now (what a changed row derived, and nothing else)."""
        rels = {}
        for name in self._RULE_RELS:
            key, c = rows[name]
            ok = key >= 0
            cols = {k: v[ok] for k, v in c.items()}
            if name == "calls":
                cur = self.calls
                m = np.isin(cur["dst"], calls_at)
                key = np.concatenate([key[ok], cur.key[m]])
                cols = {k: np.concatenate([cols[k], cur[k][m]]) for k in cur.cols}
                rels[name] = Rel(key, **cols)
            else:
                rels[name] = Rel(key[ok], **cols)
        s, it = rels["subs"], rels["items"]
        keyed = s["keynode"] >= 0
        rels["subs_by_key"] = Rel(s["keynode"][keyed], base=s.key[keyed], dst=s["dst"][keyed])
        keyed = it["keynode"] >= 0
        rels["items_by_key"] = Rel(it["keynode"][keyed], base=it.key[keyed],
                                   val=it["val"][keyed], test=it["test"][keyed])  # fmt: skip
        return rels

    def _fire_rows(self, rels: dict):
        """(copies, bcopies, consts) the rules derive from the pairs at the restricted
        relations' nodes, reading those relations alone."""
        bases = [rels[name].key for name in self._RULE_RELS]
        bases += [rels["subs_by_key"].key, rels["items_by_key"].key]
        pairs = self._at_nodes(np.concatenate(bases))
        saved = {name: getattr(self, name) for name in rels}
        try:
            for name, rel in rels.items():
                setattr(self, name, rel)
            return self._rules(high(pairs), low(pairs))
        finally:
            for name, rel in saved.items():
                setattr(self, name, rel)

    def _rules(self, n: np.ndarray, v: np.ndarray):
        copies, bcopies, consts = [], [], []
        for rule in (self._stores, self._attrs, self._calls, self._subs, self._iters,
                     self._instof, self._decorators):  # fmt: skip
            c_, b_, k_ = rule(n, v)
            copies += c_
            bcopies += b_
            consts += k_
        return copies, bcopies, consts

    def _slot_readers(self, slots: np.ndarray) -> np.ndarray:
        """The pairs whose reads a change of these (owner, name) slots may answer otherwise:
        reads of the name on the owner, a subclass or an ancestor (looking down)."""
        if len(slots) == 0:
            return EMPTY
        _, j = self.reads.find(unique(low(slots)))
        if len(j) == 0:
            return EMPTY
        r = self.reads
        rc, rn = r["cls"][j], r.key[j]
        related = np.isin(pair(rc, rn), slots)  # the owner itself
        a, b = self.mro.find(rc)  # the owner among the reading class's ancestors
        hit = np.isin(pair(self.mro["anc"][b], rn[a]), slots)
        related[a[hit]] = True
        a, b = self.desc.find(rc)  # or among its subclasses (a read looking down)
        hit = np.isin(pair(self.desc["sub"][b], rn[a]), slots)
        related[a[hit]] = True
        trig = r["trig"][j][related]
        return trig[self.points.has(trig)]

    def _overdelete(self, gone: dict, calls_at: np.ndarray, trig: np.ndarray):
        """What the old rows derived and what that derived, as the old tables had it: (pair
        keys, {table: flow keys})."""
        self.dry = True
        try:
            doomed = [EMPTY]
            flows = {"copy": [EMPTY], "bcopy": [EMPTY], "tcopy": [EMPTY]}
            key, c = gone["flows"]
            ok = (key >= 0) & (c["dst"] >= 0)
            src, dst = key[ok], c["dst"][ok]
            flows["copy"].append(pair(src, dst))
            start = [_cat([self._carry(src, dst)])]
            key, c = gone["consts"]
            out = ~c["pure"] & (key >= 0)
            start.append((key[out], c["v"][out]))
            i, dst2 = self.copy.of_high(key[out])
            start.append((dst2, c["v"][out][i]))
            key, c = gone["decorated"]  # an application gone: its default flow, its `w:` pairs
            apps = pair(c["arg"], key)
            dflt = apps[np.isin(apps, self.defaults)]
            dflt = dflt[self.copy.has(dflt) & ~self.copy_static.has(dflt)]
            flows["copy"].append(dflt)
            start.append(self._carry(high(dflt), low(dflt)))
            wrapped = self.wrapped[np.isin(high(self.wrapped), key)]
            start.append((high(wrapped), low(wrapped)))
            # what the gone rows (and the calls whose arguments changed) derived
            copies, bcopies, consts = self._fire_rows(self._restricted(gone, calls_at))
            start += consts
            start.append(self._doomed_flows(copies, bcopies, flows))
            delta = self._existing(_cat(start))
            fired = trig
            while len(delta) or len(fired):
                doomed.append(delta)
                n, v = high(delta), low(delta)
                step = [self._along(n, v, self.copy), self._bound(*self._along(n, v, self.bcopy)),
                        self._untested(*self._along(n, v, self.tcopy))]  # fmt: skip
                fn, fv = high(fired), low(fired)
                copies, bcopies, consts = self._rules(np.concatenate([n, fn]),
                                                      np.concatenate([v, fv]))  # fmt: skip
                step += consts
                step.append(self._doomed_flows(copies, bcopies, flows))
                found = self._existing(_cat(step))
                known = KeySet(np.concatenate(doomed))
                delta = found[~known.has(found)]
                fired = EMPTY
                if sum(len(d) for d in doomed) > _MAX_DOOMED:
                    raise Fallback("an edit reaching too far")
            doomed = unique(np.concatenate(doomed))
            flows = {k: unique(np.concatenate(v)) for k, v in flows.items()}
        finally:
            self.dry = False
        capped = self._capped_nodes()
        dn = high(doomed)
        if len(capped) and np.isin(dn, capped).any():
            raise Fallback("values removed at a node the CAP filled")
        return doomed, flows

    def _capped_nodes(self) -> np.ndarray:
        if not self.capped:
            return EMPTY
        if len(self.capped) > 1:
            self.capped = [unique(np.concatenate(self.capped))]
        return self.capped[0]

    def _doomed_flows(self, copies: list, bcopies: list, flows: dict):
        """Flows the rules derived (`_edges`' input) that exist: they go, and so does what they
        carried."""
        plain = [c[:2] for c in copies if len(c) == 2]
        tested = [c for c in copies if len(c) == 3]
        plain += [(s[~t], d[~t]) for s, d, t in tested]
        tested = [(s[t], d[t]) for s, d, t in tested]
        out = []
        for new, name, how in ((plain, "copy", None), (bcopies, "bcopy", self._bound),
                               (tested, "tcopy", self._untested)):  # fmt: skip
            if not new:
                continue
            src = np.concatenate([s for s, _ in new])
            dst = np.concatenate([d for _, d in new])
            ok = (src >= 0) & (dst >= 0)
            keys = unique(pair(src[ok], dst[ok]))
            table = getattr(self, name)
            keys = keys[table.has(keys)]
            if name == "copy":
                keys = keys[~self.copy_static.has(keys)]  # a fact's own flow stays
            if len(keys) == 0:
                continue
            flows[name].append(keys)
            carried = self._carry(high(keys), low(keys))
            out.append(how(*carried) if how else carried)
        return _cat(out)

    def _existing(self, nv: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """The pairs among (n, v) the solution holds."""
        n, v = nv
        keys = unique(pair(n, v))
        return keys[self.points.has(keys)]

    def _apply(self, gone: dict, come: dict, doomed: np.ndarray, flows: dict) -> None:
        """The doomed pairs and flows out, the old rows out and the new ones in."""
        key, c = gone["decorated"]
        self.defaults = self.defaults[~np.isin(self.defaults, pair(c["arg"], key))]
        self.wrapped = self.wrapped[~np.isin(high(self.wrapped), key)]
        self.empty_after = self.empty_after[~np.isin(self.empty_after, pair(c["arg"], key))]
        self.points = keyset_remove(self.points, doomed)
        for name, keys in flows.items():
            setattr(self, name, keyset_remove(getattr(self, name), keys))
        key, c = gone["flows"]
        static_gone = pair(key, c["dst"])
        self.copy_static = keyset_remove(self.copy_static, static_gone)
        self.copy = keyset_remove(self.copy, static_gone)
        key, c = come["flows"]
        ok = (key >= 0) & (c["dst"] >= 0)
        static_new = unique(pair(key[ok], c["dst"][ok]))
        self.copy_static.add(self.copy_static.new(static_new))
        self.copy.add(self.copy.new(static_new))
        key, c = gone["inferred"]
        self.inferred = keyset_remove(self.inferred, pair(key, c["dst"]))
        key, c = come["inferred"]
        self.inferred.add(self.inferred.new(pair(key, c["dst"])))
        # rows of the rules' tables; a `pure` row (an expression on a constant) stays
        for name in ("consts", "attrs", "calls", "subs", "iters", "instof", "stores", "items",
                     "args", "decorated", "shapes"):  # fmt: skip
            rel = getattr(self, name)
            key, c = gone[name]
            keep = ~c["pure"] if "pure" in c else np.ones(len(key), dtype=bool)
            rel = rel_remove(rel, key[keep], {k: v[keep] for k, v in c.items()}, {"pure", "live"})
            key, c = come[name]
            ok = key >= 0
            if name == "consts":
                ok &= c["v"] >= 0
            if "pure" in c and c["pure"].any():  # a string's own row: once, whoever wrote it
                other = c["dst"] if "dst" in c else c.get("v", np.zeros(len(key), dtype=I64))
                mine = rel["dst"] if "dst" in rel.cols else rel.cols.get("v", EMPTY * 0)
                if name == "shapes":
                    there = rel.get(key) >= 0
                else:
                    there = KeySet(pair(rel.key, mine)).has(pair(key, other))
                ok &= ~(c["pure"] & there)
            rel.add(key[ok], **{k: v[ok] for k, v in c.items()})
            setattr(self, name, rel)
        for name in ("params", "retparams", "bases"):
            rel = getattr(self, f"_r_{name}")
            key, c = gone[name]
            rel = rel_remove(rel, key, c)
            key, c = come[name]
            rel.add(key, **c)
            setattr(self, f"_r_{name}", rel)
        self.calls_through = keyset_remove(self.calls_through, gone["through"][0])
        self.calls_through.add(self.calls_through.new(come["through"][0]))
        self.shape_kws = keyset_remove(self.shape_kws, gone["shape_kws"][0])
        self.shape_kws.add(self.shape_kws.new(come["shape_kws"][0]))
        # static slots: gone ones stay as a store's (one may write them), new ones are static
        static = self.slots["static"].copy()  # a copy: `_restore` puts back the one it had
        key, c = gone["slots"]
        at = self.slots.get(key)
        static[at[at >= 0]] = False
        key, c = come["slots"]
        ok = (high(key) >= 0) & (low(key) >= 0) & (c["slot"] >= 0)
        key, slot = key[ok], c["slot"][ok]
        at = self.slots.get(key)
        static[at[at >= 0]] = True
        self.slots.cols["static"] = static
        new = at < 0
        if new.any():
            k, first = np.unique(key[new], return_index=True)
            self.slots.add(k, slot=slot[new][first], static=np.ones(len(k), dtype=bool))
            self._down_add(high(k), low(k), slot[new][first])
        # named nodes and elements: a string's own, kept whatever file wrote them
        key, c = come["named"]
        ok = (high(key) >= 0) & (low(key) >= 0) & (self.named.get(key) < 0)
        k, first = np.unique(key[ok], return_index=True)
        self.named.add(k, node=c["node"][ok][first])
        key, c = come["elems"]
        ok = (high(key) >= 0) & (low(key) >= 0) & (self.elems.get(key) < 0)
        k, first = np.unique(key[ok], return_index=True)
        self.elems.add(k, slot=c["slot"][ok][first], static=np.ones(len(k), dtype=bool))
        self._derive()
        self.pending = Rel(
            self.pending.key, key=self.pending["key"]
        )  # stale ones skip (_fire_pending)

    def _rederive(self, gone: dict, come: dict, doomed: np.ndarray, flows: dict,
                  calls_at: np.ndarray, trig: np.ndarray) -> np.ndarray:  # fmt: skip
        """What still holds of the doomed pairs, and what the new rows derive, to the
        fixpoint; returns the nodes whose values may have changed."""
        dn = unique(high(doomed))
        out = []
        # flows into doomed nodes carry again; constants at them hold again
        for name, how in (("copy", None), ("bcopy", self._bound), ("tcopy", self._untested)):
            keys = getattr(self, name).key
            into = keys[np.isin(low(keys), dn)]
            carried = self._carry(high(into), low(into))
            out.append(how(*carried) if how else carried)
        read = dn[self._read(dn)]
        ci, cj = self.consts.find(read)
        out.append((read[ci], self.consts["v"][cj]))
        # the new flows and constants
        key, c = come["flows"]
        ok = (key >= 0) & (c["dst"] >= 0)
        out.append(self._carry(key[ok], c["dst"][ok]))
        key, c = come["consts"]
        ok = (key >= 0) & (c["v"] >= 0)
        at = ok & self._read(key)
        out.append((key[at], c["v"][at]))
        i, dst = self.copy.of_high(key[ok])
        out.append((dst, c["v"][ok][i]))
        # what the new rows (and the calls whose arguments changed) derive; a constant a new
        # row reads joins the pairs
        rels = self._restricted(come, calls_at)
        bases = np.concatenate([rels[name].key for name in self._RULE_RELS]
                               + [rels["subs_by_key"].key, rels["items_by_key"].key])  # fmt: skip
        consts = self._at_nodes(bases)
        consts = consts[~self.points.has(consts) & self._read(high(consts))]
        out.append((high(consts), low(consts)))
        copies, bcopies, k = self._fire_rows(rels)
        out += k
        out.append(self._edges(copies, bcopies))
        # the rules of the other pairs whose reads changed, of the pairs left at the doomed
        # nodes (they may derive what a doomed pair did) and of those writing into them
        producers = [dn, self.calls_by_dst["callee"][self.calls_by_dst.find(dn)[1]]]
        for rel in self.by_dst.values():
            producers.append(rel["base"][rel.find(dn)[1]])
        again = unique(np.concatenate([trig, self._at_nodes(np.concatenate(producers))]))
        again = again[self.points.has(again) | (self.consts_at(again) & self._read(high(again)))]
        if len(again):
            out.append(self._step(high(again), low(again)))
        # classes whose MRO changed: new ones become whole, read ones raise (`_remro`)
        out.append(self._remro())
        self.run(_cat(out))
        self._net_check(doomed, flows)
        touched = np.concatenate([dn, *self.touched])
        self._strata_check(unique(touched))
        rows = [rows[name][0] for rows in (gone, come) for name in _NODE_KEYED]
        rows += [rows[name][1]["dst"] for rows in (gone, come) for name in ("flows", "attrs",
                 "calls", "subs", "iters", "instof")]  # fmt: skip
        touched = np.concatenate([touched, *rows])
        return unique(touched[touched >= 0])

    def _net_check(self, doomed: np.ndarray, flows: dict) -> None:
        """What the edit changed in the end, pairs and flows (deleted and derived again
        counts as unchanged): none of it may reach a node the CAP filled (`z`)."""
        gone = doomed[~self.points.has(doomed)]
        self._check_z(high(gone), "values removed")
        new = unique(np.concatenate([EMPTY, *self.touched_keys])) if self.touched_keys else EMPTY
        new = new[~np.isin(new, doomed)]
        self._check_z(high(new), "new values")
        for name, keys in flows.items():
            table = getattr(self, name)
            self._check_z(low(keys[~table.has(keys)]), "flows removed")
        for name, keys in self.new_flows:
            self._check_z(low(keys[~np.isin(keys, flows[name])]), "new flows")

    def pure_nodes(self) -> np.ndarray:
        """The nodes of constants and of expressions on constants (`pure` rows): what is
        written of them is the same in every file, and rows no file writes any more stay
        (their values reach no other node)."""
        nodes = [self.consts.key[self.consts["pure"]]]
        for rel in (self.attrs, self.calls, self.subs, self.iters, self.instof):
            m = rel["pure"]
            nodes += [rel.key[m], rel["dst"][m]]
        return unique(np.concatenate(nodes))

    def _read(self, nodes: np.ndarray) -> np.ndarray:
        """Whether a rule reads each node (a constant there joins the pairs: `initial`)."""
        mask = self.base_nodes.has(nodes)
        for rel in (self.attrs, self.calls, self.subs, self.iters, self.instof, self.stores,
                    self.items):  # fmt: skip
            mask |= rel.get(nodes) >= 0
        return mask

    def consts_at(self, keys: np.ndarray) -> np.ndarray:
        """Whether each pair is a constant."""
        at = self.consts.find(high(keys))
        mask = np.zeros(len(keys), dtype=bool)
        i, j = at
        mask[i[self.consts["v"][j] == low(keys)[i]]] = True
        return mask

    def _strata_check(self, touched: np.ndarray) -> None:
        """Which decorators are left without a value (`decorator_defaults`) and which are
        transparent (`transparent`) was decided once the rounds were done: an incremental
        solve raises when either would be decided otherwise now, or when it changed the
        values of a decorator's application, its argument or the decorator's returns."""
        if not np.array_equal(self._empty_decorators(), self.empty_after):
            raise Fallback("a decorator left without a value changed")
        dst, wrap, _ = self._wrapped()
        if not np.array_equal(unique(pair(dst, wrap)), self.wrapped):
            raise Fallback("a transparent decorator's application changed")
        d = self.decorated
        if len(d) == 0 or len(touched) == 0:
            return
        _, j = self.calls_by_dst.find(d.key)
        callee = self.calls_by_dst["callee"][j]
        _, f = self._values(callee)
        rets = self.ret[f[self.vk[f] == FUNC]]
        watched = np.concatenate([d.key, d["arg"], callee, rets[rets >= 0]])
        if np.isin(touched, watched).any():
            raise Fallback("a decorator's application changed")

    def _check_z(self, nodes: np.ndarray, what: str) -> None:
        if not self.strict or len(nodes) == 0:
            return
        z = self._z
        n = nodes[(nodes >= 0) & (nodes < len(z))]
        if len(n) and z[n].any():
            raise Fallback(f"{what} at a node whose values reach a capped one")

    def solution(self, t: Tables, keep: bool = False) -> Solution:
        """The Solution of the exact phase as it stands, with the flows from annotations
        added (INFERRED); the solver is left as the exact phase had it."""
        exact = self.points.key.copy()
        inferred = self.inferred_keys()
        return Solution(self.pairs_frame(exact), self.pairs_frame(inferred), t,
                        self.wrapped_frame, self.mro_frame(), self if keep else None)  # fmt: skip

    def inferred_keys(self) -> np.ndarray:
        """The pairs the flows from annotations add (INFERRED), the solver left as it is."""
        if len(self.inferred) == 0:
            return EMPTY
        exact = KeySet.__new__(KeySet)
        exact.key = self.points.key  # adding makes a new array: this one stays the exact pairs
        saved = self._checkpoint()
        try:
            self.add_flows(high(self.inferred.key), low(self.inferred.key))
            return self.points.key[~exact.has(self.points.key)]
        finally:
            self._restore(saved)

    def _checkpoint(self) -> dict:
        """What `_restore` needs to put the solver back as it is now (the relations and key
        sets are copied, their arrays shared: growing one makes new arrays)."""
        out = {}
        for name, value in self.__dict__.items():
            if isinstance(value, Rel):
                copy = Rel.__new__(Rel)
                copy.key, copy.cols, copy._starts = value.key, dict(value.cols), value._starts
                value = copy
            elif isinstance(value, KeySet):
                copy = KeySet.__new__(KeySet)
                copy.key = value.key
                value = copy
            elif isinstance(value, list):
                value = list(value)
            elif isinstance(value, np.ndarray):
                value = value.copy()
            out[name] = value
        return out

    def _restore(self, saved: dict) -> None:
        self.__dict__.clear()
        self.__dict__.update(saved)

    def cap_reach(self) -> np.ndarray:
        """Per node, whether its values reach a node the CAP turned values away from, or the
        read of a class whose MRO changed after it was read (`unstable`): where the order
        values arrive in decides what a full solve keeps, so an incremental solve whose net
        change touches one cannot vouch for its answer. Walks back along flows and from a
        rule's destination to the node it reads (a flow a rule makes or unmakes is checked
        itself: `_net_check`)."""
        n = self.next_node
        seeds = [np.concatenate(self.capped)] if self.capped else []
        if self.unstable:
            _, j = self.class_reads.find(unique(np.concatenate(self.unstable)))
            seeds.append(self.class_reads["n"][j])
        reach = np.zeros(n, dtype=bool)
        if not seeds:
            return reach
        src, dst = [], []
        for ks in (self.copy, self.bcopy, self.tcopy):
            src.append(high(ks.key))
            dst.append(low(ks.key))
        for rel in (self.attrs, self.calls, self.subs, self.iters, self.instof):
            src.append(rel.key)
            dst.append(rel["dst"])
        keyed = self.subs["keynode"] >= 0
        src.append(self.subs["keynode"][keyed])
        dst.append(self.subs["dst"][keyed])
        src, dst = np.concatenate(src), np.concatenate(dst)
        ok = (src >= 0) & (dst >= 0) & (src < n) & (dst < n)
        src, dst = src[ok], dst[ok]
        order = np.argsort(dst)
        src = src[order]
        starts = np.zeros(n + 1, dtype=I64)
        np.cumsum(np.bincount(dst, minlength=n), out=starts[1:])
        front = unique(np.concatenate(seeds))
        front = front[(front >= 0) & (front < n)]
        reach[front] = True
        while len(front):
            _, j = expand(starts[front], starts[front + 1])
            nxt = src[j]
            nxt = unique(nxt[~reach[nxt]])
            reach[nxt] = True
            front = nxt
        return reach

    # -- output ------------------------------------------------------------------------------
    def pairs_frame(self, keys: np.ndarray) -> pl.DataFrame:
        n, v = high(keys), low(keys)
        known = self.N.named[n]
        return pl.DataFrame(
            {"n": self.N.hashes[n[known]], "v": self.V.hashes[v[known]]},
            schema={"n": _U, "v": _U},
        )

    def mro_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "cls": self.V.hashes[self.mro.key],
                "anc": self.V.hashes[self.mro["anc"]],
                "rank": self.mro["rank"].astype(np.int32),
            },
            schema={"cls": _U, "anc": _U, "rank": pl.Int32},
        )

    # -- driver ------------------------------------------------------------------------------
    def run(self, delta: tuple[np.ndarray, np.ndarray]) -> None:
        """Rounds until nothing is new; then the classes whose MRO never became whole read
        the one they have (`_force`), and rounds go on while that finds something."""
        while True:
            self._rounds(delta)
            if len(self.pending) == 0:
                return
            delta = self._force()

    def _relookup(self, changed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The lookups of classes already read whose MRO changed, made again (what they found
        before stands: these classes are `unstable`)."""
        _, j = self.class_reads.find(changed)
        return self._fire(unique(pair(self.class_reads["n"][j], self.class_reads["v"][j])))

    def _remro(self) -> tuple[np.ndarray, np.ndarray]:
        """The MRO built again: the pairs waiting for classes now whole run, the lookups of
        classes read before their MRO changed run again, and the reads looking down into
        subclasses find those the MRO gained."""
        was = self.complete.copy()
        changed, new_sub, new_anc = self._mro()
        out = []
        newly = np.flatnonzero(self.complete & ~was).astype(I64)
        if len(newly):
            out.append(self._fire_pending(newly))
        unstable = changed[was[changed]]
        if len(unstable):
            if self.strict:
                raise Fallback("a read class's MRO changed")
            self.unstable.append(unstable)
            out.append(self._relookup(unstable))
        if len(new_sub):
            out.append(self._edges([], self._down_growth(new_sub, new_anc)))
        return _cat(out)

    def add_flows(self, src: np.ndarray, dst: np.ndarray) -> None:
        self.copy.add(self.copy.new(pair(src, dst)))
        self.run(self._carry(src, dst))

    def _rounds(self, delta: tuple[np.ndarray, np.ndarray]) -> None:
        """Rounds until nothing is new. When a round gives a class's base expression a value,
        the MRO is rebuilt at the next round counted a multiple of _MRO_EVERY from the start
        (each rebuild costs a pass; a fixed count, so when it happens never depends on what
        else is going on)."""
        keys = self._new(*delta)
        stale = False  # a base expression gained a class since the MRO was built
        for i in range(MAX_ROUNDS):
            if len(keys) == 0 and not stale:
                return
            step = (EMPTY, EMPTY)
            if len(keys):
                self.points.add(keys)
                n, v = high(keys), low(keys)
                step = self._step(n, v)
                stale = stale or bool((self.base_nodes.has(n) & self.class_like[v]).any())
            if stale and i % _MRO_EVERY == 0:
                stale = False
                step = _cat([step, self._remro()])
            keys = self._new(*step)

    def _new(self, n: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The pairs not known yet (as sorted keys), but none for a node past CAP values, and
        none giving a decorated class's name another definition."""
        keys = self.points.new(pair(n, v))
        if len(keys) == 0:
            return keys
        keys = self._kept(keys)
        nodes = high(keys)
        starts = np.flatnonzero(first_of_runs(nodes))
        fresh = np.diff(np.append(starts, len(nodes)))
        ok = self.points.count_high(nodes[starts]) + fresh <= CAP
        if self.strict:
            if not ok.all():
                raise Fallback("a node's values past CAP")
            self.touched.append(nodes[starts])
            self.touched_keys.append(keys)
        if ok.all():
            return keys
        self.capped.append(nodes[starts][~ok])
        return keys[np.repeat(ok, fresh)]

    def _kept(self, keys: np.ndarray) -> np.ndarray:
        n, v = high(keys), low(keys)
        drop = self.kept_var.has(n)
        drop[drop] = self.definition[v[drop]]
        if not drop.any():
            return keys
        drop[drop] = ~self.kept_own.has(keys[drop])
        return keys[~drop]

    def _step(self, n: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What one round of the rules derives from the new pairs (n, v)."""
        out = [
            self._along(n, v, self.copy),
            self._bound(*self._along(n, v, self.bcopy)),
            self._untested(*self._along(n, v, self.tcopy)),
        ]
        copies, bcopies = [], []
        for rule in (self._stores, self._attrs, self._calls, self._subs, self._iters,
                     self._instof, self._decorators):  # fmt: skip
            c, b, k = rule(n, v)
            copies += c
            bcopies += b
            out += k
        out.append(self._edges(copies, bcopies))
        return _cat(out)

    def _along(self, n, v, edges: KeySet) -> tuple[np.ndarray, np.ndarray]:
        i, dst = edges.of_high(n)
        return dst, v[i]

    def _edges(self, copies: list, bcopies: list) -> tuple[np.ndarray, np.ndarray]:
        """New flows join the tables and carry what their sources already hold. A copy given
        as (src, dst, tested) is, where `tested`, a test's store into the tested code: it
        carries no value a test file defines."""
        plain = [c[:2] for c in copies if len(c) == 2]
        tested = [c for c in copies if len(c) == 3]
        if tested:
            plain += [(s[~t], d[~t]) for s, d, t in tested]
            tested = [(s[t], d[t]) for s, d, t in tested]
        out = []
        for new, table, how, how_name in ((plain, self.copy, None, "copy"),
                                          (bcopies, self.bcopy, self._bound, "bcopy"),
                                          (tested, self.tcopy, self._untested,
                                           "tcopy")):  # fmt: skip
            if not new:
                continue
            src = np.concatenate([s for s, _ in new])
            dst = np.concatenate([d for _, d in new])
            ok = (src >= 0) & (dst >= 0)
            keys = table.new(pair(src[ok], dst[ok]))
            if len(keys) == 0:
                continue
            if self.strict:  # a new way in changes when values arrive there
                self.new_flows.append((how_name, keys))
                self.touched.append(low(keys))
            table.add(keys)
            carried = self._carry(high(keys), low(keys))
            out.append(how(*carried) if how else carried)
        return _cat(out)

    def _untested(self, n: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pairs whose value no test file defines."""
        keep = ~self.in_tests[v]
        return n[keep], v[keep]

    def _values(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index into nodes, value) of every value the nodes hold now."""
        return self.points.of_high(nodes)

    def _carry(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i, v = self._values(src)
        ci, cj = self.consts.find(src)
        return (np.concatenate([dst[i], dst[ci]]),
                np.concatenate([v, self.consts["v"][cj]]))  # fmt: skip

    def initial(self) -> tuple[np.ndarray, np.ndarray]:
        """What the constants give: the flows out of them (a constant node itself only joins
        the pairs when some rule reads it)."""
        read = KeySet(
            np.concatenate(
                [
                    r.key
                    for r in (
                        self.attrs,
                        self.calls,
                        self.subs,
                        self.iters,
                        self.instof,
                        self.stores,
                        self.items,
                    )
                ]
                + [self.bases_node]
            )
        )
        c = self.consts
        at = read.has(c.key)
        flows = self.copy_static.key
        carried = self._carry(high(flows), low(flows))
        return _cat([carried, (c.key[at], c["v"][at])])

    def _bound(self, n: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Methods read through an instance are bound (calls skip their first parameter)."""
        if len(v) == 0:
            return n, v
        b = self.bound[v]
        return n, np.where(b >= 0, b, v)

    def _slot_nodes(self, owner: np.ndarray, name: np.ndarray) -> np.ndarray:
        """The node `owner|name` (a new id when no fact names it)."""
        keys = pair(owner, name)
        at = self.named.get(keys)
        missing = at < 0
        if missing.any():
            new = unique(keys[missing])
            ids = np.arange(self.next_node, self.next_node + len(new), dtype=I64)
            self.next_node += len(new)
            self.N._grow(self.next_node)  # ids that stand for no hash
            self.named.add(new, node=ids)
            at = self.named.get(keys)
        return self.named["node"][at]

    # -- attributes --------------------------------------------------------------------------
    def _attrs(self, n, v):
        i, r = self.attrs.find(n)
        if len(i) == 0:
            return [], [], []
        n, v, name, dst = self._ready(n[i], v[i], self.attrs["name"][r], self.attrs["dst"][r])
        vk = self.vk[v]
        copies, bcopies = [], []
        trig = pair(n, v)
        m = vk == MODULE
        if m.any():
            at = self.slots.get(pair(v[m], name[m]))
            hit = at >= 0
            copies.append((self.slots["slot"][at[hit]], dst[m][hit]))
            # a store may make a missing slot later (`_late_lookups`)
            self._register(name[m], v[m], dst[m], 2, np.zeros(m.sum(), bool), trig[m])
        named_n, named_v = [], []  # outside names the callback table tells apart
        c, sup, opened = vk == CLASS, vk == SUPER, vk == OPEN
        ins = (vk == INST) | opened
        cls = np.where(c, v, self.vt[v])
        failed = []
        for mask, how in ((c, 0), (ins, 1), (sup, 3)):
            if not mask.any():
                continue
            mc, mn, md = cls[mask], name[mask], dst[mask]
            pi, slot, fs = self._lookup(mc, mn, skip_self=how == 3)
            (copies if how == 0 else bcopies).append((slot, md[pi]))
            fail = fs == _NO_RANK
            # an instance of a subclass may run the subclass's own member: `self.x` (an `o:`
            # value) always, an instance whose class sets no `x` of its own
            down = (vk[mask] == OPEN) | (fail & (how == 1))
            self._register(mn, mc, md, how, down, trig[mask])
            if down.any():
                bcopies.append(self._lookup_down(mc[down], mn[down], md[down]))
            if how == 3:
                if fail.any() and len(self.ext_attrs):  # `super().open()` into a library base
                    sc, sn, sd = mc[fail], mn[fail], md[fail]
                    at = self.ext_attrs.get(pair(self.ext_ident[sc], sn))
                    ok = (self.ext_ident[sc] >= 0) & (at >= 0)
                    named_n.append(sd[ok])
                    named_v.append(self.ext_attrs["value"][at[ok]])
            else:
                failed.append((mc[fail], mn[fail], md[fail], how))
        # a builtin scalar's or an outside object's attribute is outside too (a name the
        # callback table tells apart keeps its identity); a container's (its elements, its
        # methods' results) is unknown
        x = vk == EXT
        if x.any() and len(self.ext_attrs):
            at = self.ext_attrs.get(pair(v[x], name[x]))
            hit = at >= 0
            named_n.append(dst[x][hit])
            named_v.append(self.ext_attrs["value"][at[hit]])
            x[np.flatnonzero(x)[hit]] = False
        other = np.isin(vk, [BOUND, FUNC, GEN, LIT, BINST, BFUNC, WRAP]) | x
        outside = [dst[other]]
        for mc, mn, md, how in failed:  # no class on the MRO defines the name
            ext = self.ext_base[mc]
            ident = self.ext_ident[mc]
            at = self.ext_attrs.get(pair(ident, mn)) if len(self.ext_attrs) else np.full(
                len(mc), -1, dtype=I64)  # fmt: skip
            hit = (ident >= 0) & (at >= 0) & (how == 1)
            named_n.append(md[hit])
            named_v.append(self.ext_attrs["value"][at[hit]] if hit.any() else EMPTY)
            outside.append(md[ext & ~hit])
        reads = c | ins | sup
        if not self.dry:
            self.class_reads.add(cls[reads], n=n[reads], v=v[reads])
        out = np.concatenate(outside)
        consts = [(out, np.full(len(out), self.ext, dtype=I64))]
        if named_n:
            consts.append((np.concatenate(named_n), np.concatenate(named_v)))
        return copies, bcopies, consts

    def _register(self, name, cls, dst, how: int, down, trig) -> None:
        """Every read, with the pair that made it (`trig`): a slot a later store makes may
        answer it (`_late_lookups`: a module's read (`how` 2), a class's (0), an instance's
        (1) or `super()`'s (3)); a read looking down into subclasses (`down`) is also kept by
        class, for subclasses the MRO gains later; and an edit that changes a class's or a
        module's slots finds the reads to make again (`update`)."""
        if self.dry or len(name) == 0:
            return
        self.reads.add(name, cls=cls, dst=dst, how=np.full(len(name), how, dtype=I64),
                       down=down, trig=trig)  # fmt: skip
        if down.any():
            self.down_reads.add(cls[down], name=name[down], dst=dst[down], trig=trig[down])

    def _lookup(self, cls: np.ndarray, name: np.ndarray, skip_self: bool = False):
        """Along each `cls`'s MRO (past the class itself with `skip_self`): the first class
        with a static slot `name` (a definition or an assignment in its body) and every slot
        a store made (`self.x = …`) before it, or along the whole MRO when no class has a
        static one. Returns (probe index, slot) of each slot found and, per probe, the rank
        of the first static slot (_NO_RANK: none). Which slots exist is what the facts say
        and what stores make: never which arrived first."""
        i, j = self.mro.find(cls)
        rank = self.mro["rank"][j]
        if skip_self:
            keep = rank > 0
            i, j, rank = i[keep], j[keep], rank[keep]
        at = self.slots.get(pair(self.mro["anc"][j], name[i]))
        ok = at >= 0
        i, at, rank = i[ok], at[ok], rank[ok]
        static = self.slots["static"][at]
        fs = np.full(len(cls), _NO_RANK, dtype=I64)
        np.minimum.at(fs, i[static], rank[static])
        take = rank <= fs[i]
        return i[take], self.slots["slot"][at[take]], fs

    def _lookup_down(self, cls, name, dst) -> tuple[np.ndarray, np.ndarray]:
        """`self.x` in a class that never sets `x`, or read through `o:`: the subclasses' own
        `x` — one probe of the index of every (ancestor, name) a subclass defines, so a base
        with a thousand subclasses costs what its matches cost."""
        i, j = self.down.find(pair(cls, name))
        return self.down["slot"][j], dst[i]

    def _down_index(self) -> None:
        """(ancestor, name) -> slot of every slot a proper subclass of the ancestor owns."""
        sub = self.mro["rank"] > 0
        cls, anc = self.mro.key[sub], self.mro["anc"][sub]
        i, j = self.slots.find_high(cls)
        self.down = Rel(pair(anc[i], low(self.slots.key[j])), slot=self.slots["slot"][j])

    def _down_add(self, owner, name, slot) -> None:
        """New slots (a store's) join the index under each ancestor of their owner."""
        i, j = self.mro.find(owner)
        up = self.mro["rank"][j] > 0
        i, j = i[up], j[up]
        if len(i):
            self.down.add(pair(self.mro["anc"][j], name[i]), slot=slot[i])

    def _late_lookups(self, owner, name, slot):
        """Reads registered before a store made the slot (owner, name) find it now (see
        `_register`): a module's read of the name; a class's or an instance's whose MRO
        holds the owner before its first static slot of the name; one looking down into
        subclasses, the owner being one."""
        i, j = self.reads.find(name)
        r = self.reads
        live = self.points.has(r["trig"][j])  # reads of pairs an edit removed are gone
        i, j = i[live], j[live]
        rc, rd, how, down = r["cls"][j], r["dst"][j], r["how"][j], r["down"][j]
        own, sl = owner[i], slot[i]
        mods = (how == 2) & (rc == own)
        copies = [(sl[mods], rd[mods])]
        c = (how != 2) & (how != 4)  # 4: a call's `__init__` / `__call__` (`_calls`)
        rank = _at(self.mro_rank["rank"], self.mro_rank.get(pair(rc, own)), -1)
        _, _, fs = self._lookup(rc, name[i])
        along = c & (rank >= 0) & (rank <= fs) & ((how != 3) | (rank > 0))
        copies.append((sl[along & (how == 0)], rd[along & (how == 0)]))
        b = along & (how != 0)
        below = c & down & (_at(self.mro_rank["rank"], self.mro_rank.get(pair(own, rc)), -1) > 0)
        return copies, [(sl[b], rd[b]), (sl[below], rd[below])]

    def _down_growth(self, sub: np.ndarray, anc: np.ndarray) -> list:
        """Classes that became subclasses of `anc`: the reads looking down from anc find
        their own slots."""
        i, j = self.down_reads.find(anc)
        live = self.points.has(self.down_reads["trig"][j])
        i, j = i[live], j[live]
        at = self.slots.get(pair(sub[i], self.down_reads["name"][j]))
        ok = at >= 0
        return [(self.slots["slot"][at[ok]], self.down_reads["dst"][j][ok])]

    def _ready(self, n, v, *cols):
        """The rows whose value needs no MRO or whose class's MRO is complete (`_mro`); the
        others wait in `pending` until it is, so a lookup reads the MRO once it is whole."""
        vk = self.vk[v]
        classy = np.isin(vk, [CLASS, INST, OPEN, SUPER])
        if not classy.any():
            return (n, v, *cols)
        cls = np.where(vk == CLASS, v, self.vt[v])
        wait = classy & ~self.complete[cls.clip(0)]
        if not wait.any():
            return (n, v, *cols)
        if not self.dry:
            self.pending.add(cls[wait], key=pair(n[wait], v[wait]))
        keep = ~wait
        return (n[keep], v[keep], *(c[keep] for c in cols))

    def _fire(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The class-dependent rules (`_attrs`, `_calls`) run on these pairs."""
        n, v = high(keys), low(keys)
        copies, bcopies, out = [], [], []
        for rule in (self._attrs, self._calls):
            c, b, o = rule(n, v)
            copies += c
            bcopies += b
            out += o
        out += [self._edges(copies, bcopies)]
        return _cat(out)

    def _fire_pending(self, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pairs waiting for these classes' MROs, run now."""
        _, j = self.pending.find(classes)
        if len(j) == 0:
            return EMPTY, EMPTY
        keys = unique(self.pending["key"][j])
        keys = keys[self.points.has(keys) | self.consts_at(keys)]  # an edit may have removed some
        rest = np.ones(len(self.pending), dtype=bool)
        rest[j] = False
        self.pending = Rel(self.pending.key[rest], key=self.pending["key"][rest])
        return self._fire(keys)

    def _force(self) -> tuple[np.ndarray, np.ndarray]:
        """Once nothing else moves: the classes some base of which never got a class (or
        whose ancestors' did not) read the MRO they have."""
        cls = unique(self.pending.key)
        self.forced[cls] = True
        self.complete[cls] = True
        return self._fire_pending(cls)

    # -- calls -------------------------------------------------------------------------------
    def _calls(self, n, v):
        i, r = self.calls.find(n)
        if len(i) == 0:
            return [], [], []
        n, v, dst, live = self._ready(n[i], v[i], self.calls["dst"][r], self.calls["live"][r])
        vk = self.vk[v]
        fn, bd = vk == FUNC, vk == BOUND
        f_dst = np.concatenate([dst[fn], dst[bd]])
        f_f = np.concatenate([v[fn], self.vt[v[bd]]])
        f_shift = np.concatenate([np.zeros(fn.sum(), I64), np.ones(bd.sum(), I64)])
        f_live = np.concatenate([live[fn], live[bd]])
        c, ins = vk == CLASS, (vk == INST) | (vk == OPEN)
        cls = np.where(c, v, self.vt[v])
        init_dst, init_f, _ = self._method(cls[c], dst[c], live[c], self.init_k)
        call_dst, call_f, call_live = self._method(cls[ins], dst[ins], live[ins], self.call_k)
        trig = pair(n, v)
        for mask, name in ((c, self.init_k), (ins, self.call_k)):
            self._register(np.full(mask.sum(), name, dtype=I64), cls[mask], dst[mask], 4,
                           np.zeros(mask.sum(), dtype=bool), trig[mask])  # fmt: skip
        reads = c | ins
        self.class_reads.add(cls[reads], n=n[reads], v=v[reads])
        called_f = np.concatenate([f_f[f_live], call_f[call_live]])
        called_dst = np.concatenate([f_dst[f_live], call_dst[call_live]])
        copies = [(self.ret[called_f], called_dst)]
        if self.guarded:
            shift = np.concatenate([f_shift[f_live], np.ones(call_live.sum(), I64)])
            copies += self._guarded(called_f, called_dst, shift)
        copies += self._bind_args(
            np.concatenate([f_dst, init_dst, call_dst]),
            np.concatenate([f_f, init_f, call_f]),
            np.concatenate([f_shift, np.ones(len(init_dst) + len(call_dst), I64)]),
        )
        lc = c & live
        other = np.isin(vk, [BFUNC, EXT]) & live
        consts = [(dst[lc], self.inst[v[lc]]), (dst[other], self.res[v[other]])]
        if len(self.ext_returns) and (vk == EXT).any():  # functools.partial(f): calls f
            a, b = self.ext_returns.find(v)
            i, j = self.args.find(dst[a])
            same = self.args["pos"][j] == self.ext_returns["pos"][b][i]
            copies.append((self.args["arg"][j][same], dst[a][i][same]))
        return copies, [], consts

    def _guarded(self, f, dst, shift) -> list:
        """The returns a decorator factory's conditions leave live for each call (see
        ctxframe._ingest.lang.python_guards): not those dead when applied to a definition at
        a decorator's application, nor those dead without a first argument at a call that
        passes none (no positional argument, no splat, no keyword naming the parameter), nor
        those dead with a literal first argument at a call passing one."""
        has = np.zeros(len(f), dtype=bool)
        for r in self.ret_by.values():
            has |= r[f] >= 0
        f, dst, shift = f[has], dst[has], shift[has]
        if len(f) == 0:
            return []
        applied = self.applied.has(dst)
        at = self.shapes.get(dst)
        passes = _at(self.shapes["passes"], at, False)
        literal = ~applied & _at(self.shapes["literal"], at, False)
        pname = _at(self.params_pos["pname"], self.params_pos.get(pair(f, shift)), -1)
        named = (pname >= 0) & self.shape_kws.has(pair(dst, pname))
        bare = ~applied & ~passes & ~named
        kinds = {"d": applied, "a": bare, "l": literal}
        out = []
        for c in GUARDED:
            skip = np.logical_or.reduce([kinds[k] for k in c])
            out.append((self.ret_by[c][f[~skip]], dst[~skip]))
        return out

    def _method(self, cls, dst, live, name: int):
        """(dst, f, live) of the method `name` the classes find on their MRO."""
        pi, slot, _ = self._lookup(cls, np.full(len(cls), name, dtype=I64))
        i, j = self.slotdef.find(slot)
        return dst[pi][i], self.slotdef["f"][j], live[pi][i]

    def _bind_args(self, dst, f, shift) -> list:
        """Arguments into parameters (positional shifted past a bound `self`), and a function
        returning a parameter returns that call's argument."""
        i, j = self.args.find(dst)
        if len(i) == 0:
            return []
        a = self.args
        arg, pos, kw, f, shift, dst = a["arg"][j], a["pos"][j], a["kw"][j], f[i], shift[i], dst[i]
        out = []
        p = pos >= 0
        pi, pj = self.params_pos.find(pair(f[p], pos[p] + shift[p]))
        out.append((arg[p][pi], self.params_pos["node"][pj]))
        k = kw >= 0
        ki, kj = self.params_kw.find(pair(f[k], kw[k]))
        out.append((arg[k][ki], self.params_kw["node"][kj]))
        ri, rj = self.retparams.find(f)
        if len(ri):
            pname = self.retparams["pname"][rj]
            xi, xj = self.params_kw.find(pair(f[ri], pname))
            ppos = self.params_kw["pos"][xj]
            r = ri[xi]
            match = ((pos[r] + shift[r] == ppos) & (pos[r] >= 0)) | (kw[r] == pname[xi])
            out.append((arg[r][match], dst[r][match]))
        return out

    # -- containers, stores, iteration, annotations, decorators ----------------------------
    def _subs(self, n, v):
        vk = self.vk[v]
        cm = vk == CONT
        i, r = self.subs.find(n[cm])
        cv = v[cm][i]
        trigs = [pair(n[cm][i], cv)]
        s = self.subs
        keynode, dst = s["keynode"][r], s["dst"][r]
        fixed = keynode < 0
        conts = [cv[fixed]]
        khs = [s["key"][r][fixed]]
        qs = [s["q"][r][fixed]]
        dsts = [dst[fixed]]
        # a key held by a node: the literals it holds now (the key is read as unknown)
        dyn = ~fixed
        a, lit = self._values(keynode[dyn])
        a = a[self.vk[lit] == LIT]
        conts.append(cv[dyn][a])
        khs.append(np.full(len(a), NULL_KEY, dtype=I64))
        qs.append(np.zeros(len(a), dtype=bool))
        dsts.append(dst[dyn][a])
        trigs = [trigs[0][fixed], trigs[0][dyn][a]]
        # a literal arriving at a key node: the containers its subscript's base holds now
        lm = vk == LIT
        i, r = self.subs_by_key.find(n[lm])
        lv = v[lm][i]
        b, cont = self._values(self.subs_by_key["base"][r])
        ok = self.vk[cont] == CONT
        conts.append(cont[ok])
        khs.append(self.kh[lv[b[ok]]])
        qs.append(np.zeros(ok.sum(), dtype=bool))
        dsts.append(self.subs_by_key["dst"][r][b[ok]])
        trigs.append(pair(n[lm][i][b[ok]], lv[b[ok]]))
        cont, kh, q, dst, trig = (np.concatenate(x) for x in (conts, khs, qs, dsts, trigs))
        if len(cont) == 0:
            return [], [], []
        if not self.dry:
            self.reads_known.add(pair(cont[~q], kh[~q]), dst=dst[~q], trig=trig[~q])
            self.reads_any.add(cont[q], dst=dst[q], trig=trig[q])
        return [self._element_flows(cont, kh, q, dst)], [], []

    def _element_flows(self, cont, kh, q, dst) -> tuple[np.ndarray, np.ndarray]:
        """`container[key]` reads the element stored under key (and those of unknown key);
        an unknown key reads every element."""
        k = ~q
        exact = self.elems.get(pair(cont[k], kh[k]))
        loose = self.elems.get(pair(cont[k], np.full(k.sum(), self.q_k, dtype=I64)))
        i, j = self.elems.find_high(cont[q])
        e = self.elems["slot"]
        dk = dst[k]
        return (
            np.concatenate([e[exact[exact >= 0]], e[loose[loose >= 0]], e[j]]),
            np.concatenate([dk[exact >= 0], dk[loose >= 0], dst[q][i]]),
        )

    def _stores(self, n, v):
        copies, bcopies = [], []
        i, r = self.stores.find(n)
        if len(i):
            sv = v[i]
            vk = self.vk[sv]
            ok = np.isin(vk, [CLASS, MODULE, INST, OPEN])
            owner = np.where((vk == INST) | (vk == OPEN), self.vt[sv], sv)[ok]
            name, val = self.stores["name"][r][ok], self.stores["val"][r][ok]
            tested = self.stores["test"][r][ok] & ~self.of_tests[owner]  # a test's patch
            slot = self._slot_nodes(owner, name)
            copies.append((val, slot, tested))
            keys = pair(owner, name)
            at = self.slots.get(keys)
            new = at < 0
            if new.any() and not self.dry:  # a store makes the slot it writes visible to lookups
                keys, first = np.unique(keys[new], return_index=True)
                o, nm, sl = owner[new][first], name[new][first], slot[new][first]
                self.slots.add(keys, slot=sl, static=np.zeros(len(keys), dtype=bool))
                self._down_add(o, nm, sl)
                c, b = self._late_lookups(o, nm, sl)
                copies += c
                bcopies += b
        cont, key, val, test = self._item_stores(n, v)
        if len(cont):
            slot = self._slot_nodes(cont, key)
            copies.append((val, slot, test & ~self.of_tests[cont]))
            copies.append(self._new_elems(cont, key, slot))
        return copies, bcopies, []

    def _item_stores(self, n, v):
        """`base[key] = value` into the containers base holds (key literal or a node's):
        (container, key, value node)."""
        vk = self.vk[v]
        cm = vk == CONT
        i, r = self.items.find(n[cm])
        cv = v[cm][i]
        it = self.items
        key, keynode, val, test = it["key"][r], it["keynode"][r], it["val"][r], it["test"][r]
        fixed = key >= 0
        conts, keys, vals, tests = [cv[fixed]], [key[fixed]], [val[fixed]], [test[fixed]]
        dyn = keynode >= 0
        a, lit = self._values(keynode[dyn])
        ok = self.vk[lit] == LIT
        conts.append(cv[dyn][a[ok]])
        keys.append(self.kh[lit[ok]])
        vals.append(val[dyn][a[ok]])
        tests.append(test[dyn][a[ok]])
        lm = vk == LIT
        i, r = self.items_by_key.find(n[lm])
        lv = v[lm][i]
        b, cont = self._values(self.items_by_key["base"][r])
        ok = self.vk[cont] == CONT
        conts.append(cont[ok])
        keys.append(self.kh[lv[b[ok]]])
        vals.append(self.items_by_key["val"][r][b[ok]])
        tests.append(self.items_by_key["test"][r][b[ok]])
        return tuple(np.concatenate(x) for x in (conts, keys, vals, tests))

    def _new_elems(self, cont, key, slot) -> tuple[np.ndarray, np.ndarray]:
        """Elements a store adds: later reads find them, and so do the reads made before."""
        keys = pair(cont, key)
        new = self.elems.get(keys) < 0
        if not new.any() or self.dry:
            return EMPTY, EMPTY
        keys, first = np.unique(keys[new], return_index=True)
        cont, key, slot = cont[new][first], key[new][first], slot[new][first]
        self.elems.add(keys, slot=slot, static=np.zeros(len(keys), dtype=bool))
        srcs, dsts = [], []
        loose = key == self.q_k
        for slots, (i, j), reads in (
            (slot, self.reads_known.find(keys), self.reads_known),
            (slot[loose], self.reads_known.find_high(cont[loose]), self.reads_known),
            (slot, self.reads_any.find(cont), self.reads_any),
        ):
            live = self.points.has(reads["trig"][j])  # reads of pairs an edit removed are gone
            srcs.append(slots[i[live]])
            dsts.append(reads["dst"][j[live]])
        return np.concatenate(srcs), np.concatenate(dsts)

    def _iters(self, n, v):
        i, r = self.iters.find(n)
        if len(i) == 0:
            return [], [], []
        v, dst = v[i], self.iters["dst"][r]
        vk = self.vk[v]
        c = vk == CONT
        a, b = self.elems.find_high(v[c])
        g = vk == GEN
        return [(self.elems["slot"][b], dst[c][a]), (self.yld[v[g]], dst[g])], [], []

    def _instof(self, n, v):
        i, r = self.instof.find(n)
        if len(i) == 0:
            return [], [], []
        v, dst = v[i], self.instof["dst"][r]
        vk = self.vk[v]
        c = vk == CLASS
        o = np.isin(vk, [BFUNC, EXT])
        return [], [], [(dst[c], self.open[v[c]]), (dst[o], self.res[v[o]])]

    def _decorators(self, n, v):
        """A decorator from outside the repository (or a builtin) leaves the definition as
        it was."""
        if len(self.decorated) == 0:
            return [], [], []
        m = np.isin(self.vk[v], [EXT, BFUNC])
        _, r = self.calls.find(n[m])
        dst = self.calls["dst"][r]
        a, b = self.decorated.find(dst)
        return [(self.decorated["arg"][b], dst[a])], [], []

    def transparent(self) -> pl.DataFrame:
        """A decorator that returns a wrapper calling the function it was given (`@wraps(f)
        def wrapper(*a): return f(*a)`): its application also holds `w:F` for each function F
        it is applied to, so a call of the decorated name is an edge to F too (through the
        wrapper: not a direct call). Returns (call, deco): each such application and its
        decorator."""
        dst, wrap, deco = self._wrapped()
        self.wrapped = unique(pair(dst, wrap))
        self.run((dst, wrap))
        self.empty_after = self._empty_decorators()
        known = self.N.named[dst]
        return pl.DataFrame(
            {"call": self.N.hashes[dst[known]], "deco": self.V.hashes[deco[known]]},
            schema={"call": _U, "deco": _U},
        ).unique()

    def _wrapped(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(application, w:F, decorator) of each transparent decorator's application."""
        d = self.decorated
        if len(d) == 0 or len(self.calls_through) == 0:
            return EMPTY, EMPTY, EMPTY
        i, j = self.calls_by_dst.find(d.key)
        applied, arg, callee = d.key[i], d["arg"][i], self.calls_by_dst["callee"][j]
        a, f = self._values(callee)
        fn = self.vk[f] == FUNC
        a, f = a[fn], f[fn]
        b, w = self._values(self.ret[f])
        a, f = a[b], f[b]
        ok = self.calls_through.has(pair(w, f))
        if not ok.any():
            return EMPTY, EMPTY, EMPTY
        src, dst, deco = arg[a[ok]], applied[a[ok]], f[ok]
        c, held = self._values(src)  # the definitions decorated (a constant's, or held)
        ci, cj = self.consts.find(src)
        c, held = np.concatenate([c, ci]), np.concatenate([held, self.consts["v"][cj]])
        fn = (self.vk[held] == FUNC) & (self.wrap[held.clip(0)] >= 0)
        return dst[c[fn]], self.wrap[held[fn]], deco[c[fn]]

    def _empty_decorators(self) -> np.ndarray:
        """(arg, application) keys of the decorators' applications whose callee holds nothing."""
        d = self.decorated
        i, j = self.calls_by_dst.find(d.key)
        call, arg, callee = d.key[i], d["arg"][i], self.calls_by_dst["callee"][j]
        empty = self.points.count_high(callee) == 0
        return unique(pair(arg[empty], call[empty]))

    def decorator_defaults(self) -> None:
        """A decorator whose value is unknown leaves the definition as it was (once the rounds
        are done: only then is "unknown" known)."""
        keys = self._empty_decorators()
        self.defaults = keys
        if len(keys):
            src, dst = high(keys), low(keys)
            self.copy.add(self.copy.new(keys))
            self.run(self._carry(src, dst))

    # -- classes -----------------------------------------------------------------------------
    def _mro(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cls, anc, rank) from the bases' class values, in depth-first order keeping each
        ancestor's last place (C3's order wherever C3 and that agree, which is the common
        case), and which classes' MROs are whole (`complete`: every class on it has a class
        in each base expression). Returns the classes whose MRO changed and the (class,
        ancestor) pairs it gained past rank 0."""
        i, held = self._values(self.bases_node)
        vk = self.vk[held]
        c = vk == CLASS
        k = pair(self.bases_cls[i][c], held[c])
        order = np.lexsort((self.bases_pos[i][c], k))
        k, pos = k[order], self.bases_pos[i][c][order]
        first = first_of_runs(k)  # one place per (class, base class): the first
        k, pos = k[first], pos[first]
        ext = np.isin(vk, [EXT, BFUNC])
        ext_cls = self.bases_cls[i][ext]
        # what the MRO is made of: (class, base class) pairs, outside bases, classes (an
        # edit's new class has no base; while solving, these only grow)
        count = (len(k), len(ext_cls), len(self.classes))
        if count == self.base_count:
            return EMPTY, EMPTY, EMPTY
        self.base_count = count
        bases = Rel(high(k), anc=low(k), pos=pos)
        # a path's key: (pos+1) per level in base 64 digits, left-aligned (depth-first order)
        cls_, anc_, key_ = [self.classes], [self.classes], [np.zeros(len(self.classes), I64)]
        fc, fa, fk = cls_[0], anc_[0], key_[0]
        for depth in range(1, 10):
            a, b = bases.find(fa)
            if len(a) == 0:
                break
            step = (np.clip(bases["pos"][b], 0, 62) + 1) * np.int64(64) ** (10 - depth)
            fc, fa, fk = fc[a], bases["anc"][b], fk[a] + step
            # one path per (class, ancestor) at each depth, the last in depth-first order: its
            # extensions come after every other's, so the MRO is the same, and a class whose
            # base expressions hold several classes no longer multiplies paths at every level
            ca = pair(fc, fa)
            o = np.lexsort((fk, ca))
            keep = o[np.append(ca[o][1:] != ca[o][:-1], True)]
            fc, fa, fk = fc[keep], fa[keep], fk[keep]
            cls_.append(fc)
            anc_.append(fa)
            key_.append(fk)
        cls, anc, key = (np.concatenate(x) for x in (cls_, anc_, key_))
        # by class, then path (ties: by ancestor); each ancestor at its last place
        order = np.lexsort((self.V.hashes[anc], key, cls))  # ties: by hash, never by id
        cls, anc, key = cls[order], anc[order], key[order]
        ca = pair(cls, anc)
        o2 = np.lexsort((-np.arange(len(ca)), ca))
        last = o2[first_of_runs(ca[o2])]
        last.sort()
        cls, anc = cls[last], anc[last]
        starts = first_of_runs(cls)
        idx = np.arange(len(cls), dtype=I64)
        rank = idx - np.maximum.accumulate(np.where(starts, idx, 0))
        self.mro = Rel(cls, anc=anc, rank=rank)  # sorted by class, each class's in rank order
        ca = pair(cls, anc)
        old = self.mro_rank
        at = old.get(ca)
        fresh = (at < 0) | (_at(old["rank"], at, -1) != rank)
        kept = KeySet(ca[~fresh])
        left = ~kept.has(old.key)
        lost = high(old.key[left])  # classes an ancestor or a place left
        below = (fresh & (rank > 0)).any() or (left & (old["rank"] > 0)).any()
        changed = np.concatenate([cls[fresh], lost])
        gained = (at < 0) & (rank > 0)
        self.mro_rank = Rel(ca, rank=rank)
        # whole: each class on the MRO has a class-like value in every base expression
        resolved = np.zeros(len(self.bases_node), dtype=bool)
        resolved[i[self.class_like[held]]] = True
        own_ok = np.ones(len(self.vk), dtype=bool)
        own_ok[self.bases_cls[~resolved]] = False
        complete = np.ones(len(self.vk), dtype=bool)
        complete[cls[~own_ok[anc]]] = False
        self.complete = complete | self.forced
        ext_base = np.zeros(len(self.vk), dtype=bool)
        ext_base[ext_cls] = True
        has = ext_base[anc]
        self.ext_base = np.zeros(len(self.vk), dtype=bool)
        self.ext_base[cls[has]] = True
        # an outside base the callback table names: its instances' members keep the name
        ident = np.full(len(self.vk), -1, dtype=I64)
        named = self.res[held[ext]]
        named_ok = named >= 0
        ident[ext_cls[named_ok]] = np.where(named[named_ok] != self.ext, named[named_ok], -1)
        self.ext_ident = np.full(len(self.vk), -1, dtype=I64)
        via = ident[anc]
        self.ext_ident[cls[via >= 0]] = via[via >= 0]
        sub = rank > 0
        self.desc = Rel(anc[sub], sub=cls[sub])
        if below or len(self.down) == 0:  # a subclass came or went: the index made again
            self._down_index()  # (slots added since stand in it: `_down_add`)
        return unique(changed), cls[gained], anc[gained]


def _cat(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return EMPTY, EMPTY
    n = np.concatenate([p[0] for p in parts])
    v = np.concatenate([p[1] for p in parts])
    ok = (n >= 0) & (v >= 0)
    return (n, v) if ok.all() else (n[ok], v[ok])

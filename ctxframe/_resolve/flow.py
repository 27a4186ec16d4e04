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

from dataclasses import dataclass

import numpy as np
import polars as pl

from ctxframe._core.facts import GUARDED
from ctxframe._resolve.flow_index import (
    EMPTY,
    I64,
    KeySet,
    Rel,
    first_of_runs,
    high,
    low,
    pair,
    search,
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


def solve(t: Tables) -> Solution:
    """Both phases to their fixpoint."""
    s = _Solver(t)
    s.run(s.initial())
    s.decorator_defaults()
    wrapped = s.transparent()
    exact = s.points.key.copy()
    s.add_flows(s.inferred_src, s.inferred_dst)
    inferred = s.points.key[~KeySet(exact).has(s.points.key)]
    return Solution(s.pairs_frame(exact), s.pairs_frame(inferred), t, wrapped, s.mro_frame())


class _Space:
    """Dense ids 0..len-1 for a set of 64-bit hashes (in hash order): the named `parts`'
    non-null hashes. One dense rank over all the parts gives every part's ids at once."""

    def __init__(self, parts: dict[str, pl.Series]):
        every = pl.concat([p.cast(_U).rename("h") for p in parts.values()])
        rank = every.rank("dense").cast(pl.Int64)
        ids = (rank - 1).fill_null(-1).to_numpy()
        self.hashes = np.zeros(int(rank.max() or 0), dtype=np.uint64)
        known = ids >= 0
        self.hashes[ids[known]] = every.fill_null(0).to_numpy()[known]
        self._of, start = {}, 0
        for name, part in parts.items():
            self._of[name] = ids[start : start + part.len()]
            start += part.len()

    def __len__(self) -> int:
        return len(self.hashes)

    def of(self, name: str) -> np.ndarray:
        """The ids of the part `name` (-1 for a null)."""
        return self._of[name]

    def ids(self, col: pl.Series) -> np.ndarray:
        """Each hash's id; -1 for a null or a hash outside the space."""
        if col.len() == 0:
            return EMPTY
        h = col.cast(_U).fill_null(0).to_numpy()
        at = np.minimum(search(self.hashes, h), max(len(self.hashes) - 1, 0))
        ok = (self.hashes[at] == h) if len(self.hashes) else np.zeros(len(h), dtype=bool)
        ok &= ~col.is_null().to_numpy()
        return np.where(ok, at, -1).astype(I64)


def _at(col: np.ndarray, rows: np.ndarray, fill) -> np.ndarray:
    """col[rows], `fill` where a row is -1."""
    if len(col) == 0:
        return np.full(len(rows), fill, dtype=col.dtype)
    return np.where(rows >= 0, col[rows.clip(0)], fill)


def _hashed(col: pl.Series) -> pl.Series:
    return pl.select(H(pl.lit(col))).to_series() if col.len() else col.cast(_U)


class _Solver:
    def __init__(self, t: Tables):
        self.t = t
        names = {
            "subs_key": _hashed(t.subs["key"]),
            "stores": _hashed(t.stores["name"]),
            "items_key": _hashed(t.store_items["key"]),
            "elems": _hashed(t.elems["key"]),
            "kw": _hashed(t.args["kw"]),
            "pname": _hashed(t.params["pname"]),
            "rpname": _hashed(t.retparams["pname"]),
            "fixed": pl.Series([_hash("__init__"), _hash("__call__"), _hash("?")], dtype=_U),
        }

        def parts(*specs: str) -> dict[str, pl.Series]:
            """Columns of the tables by their `table.column` names."""
            return {spec: getattr(t, spec.partition(".")[0])[spec.partition(".")[2]]
                    for spec in specs}  # fmt: skip

        K = _Space({**names, **parts("attrs.name_h", "values.kh", "slots.name_h")})
        V = _Space(parts("values.v", "values.vt", "values.inst", "values.open", "values.wrap",
                         "values.bound", "values.res",
                         "seeds.v", "slots.owner", "elems.cont", "params.f", "retparams.f",
                         "bases.cls"))  # fmt: skip
        N = _Space(parts(
            "flows.src", "flows.dst", "inferred.src", "inferred.dst", "seeds.n", "attrs.base",
            "attrs.dst", "calls.callee", "calls.dst", "subs.base", "subs.keynode", "subs.dst",
            "iters.base", "iters.dst", "instof.base", "instof.dst", "args.call", "args.arg",
            "params.node", "stores.base", "stores.val", "store_items.base",
            "store_items.keynode", "store_items.val", "decorated.call", "decorated.arg",
            "bases.base", "values.ret", "values.yld", "slots.slot", "elems.slot", "named.node",
            *(f"values.ret_{c}" for c in GUARDED),
        ))  # fmt: skip
        self.N, self.V, self.K = N, V, K
        n_nodes = len(N)
        self.next_node = n_nodes  # ids of slots no fact names (a store's new attribute)
        self.nv = np.int64(max(len(V), 1))
        self.init_k, self.call_k, self.q_k = K.of("fixed")
        # values: arrays indexed by value id
        v = V.of("values.v")
        n_v = len(V)

        def column(name: str, space: _Space, fill=-1) -> np.ndarray:
            out = np.full(n_v, fill, dtype=I64)
            out[v] = space.of(f"values.{name}")
            return out

        self.vk = np.zeros(n_v, dtype=np.int8)
        self.vk[v] = t.values["vk"].to_numpy()
        self.vt, self.inst = column("vt", V), column("inst", V)
        self.open, self.wrap = column("open", V), column("wrap", V)
        self.bound, self.res = column("bound", V), column("res", V)
        self.ret, self.yld = column("ret", N), column("yld", N)
        self.ret_by = {c: column(f"ret_{c}", N) for c in GUARDED}
        self.guarded = any((r >= 0).any() for r in self.ret_by.values())
        self.kh = column("kh", K)
        # a function or class a test file defines and stores into the tested code's modules,
        # classes, objects or containers (`timezone.now = lambda: fixed`) is a patch for that
        # test: it never reaches the code's own reads (`_edges`). Instances and containers
        # pass: they carry the code's own classes (a test's migration with its operations).
        self.of_tests = np.zeros(n_v, dtype=bool)  # defined or made in a test file
        self.of_tests[v] = t.values["test"].to_numpy()
        self.in_tests = self.of_tests & np.isin(self.vk, [FUNC, CLASS, BOUND, SUPER, GEN])
        self.ext = V.ids(pl.Series([_hash("x:")], dtype=_U))[0]
        # points: pair keys (node, value); constants: the seeds, by node
        self.points = KeySet()
        seeds_n, seeds_v = N.of("seeds.n"), V.of("seeds.v")
        self.consts = Rel(seeds_n, dense=n_nodes, v=seeds_v)
        fs, fd = N.of("flows.src"), N.of("flows.dst")
        self.flow_src, self.flow_dst = fs, fd
        self.copy = KeySet(pair(fs, fd))
        self.bcopy = KeySet()
        self.tcopy = KeySet()  # a test's store into the tested code: no test's values pass
        self.inferred_src, self.inferred_dst = N.of("inferred.src"), N.of("inferred.dst")
        # the rules' tables, by the node they read
        self.attrs = Rel(N.of("attrs.base"), dense=n_nodes, name=K.of("attrs.name_h"),
                         dst=N.of("attrs.dst"))  # fmt: skip
        self.calls = Rel(N.of("calls.callee"), dense=n_nodes, dst=N.of("calls.dst"),
                         live=t.calls["live"].to_numpy())  # fmt: skip
        self.calls_by_dst = Rel(self.calls["dst"], dense=n_nodes, callee=self.calls.key)
        sk = K.of("subs_key")
        sq = (t.subs["key"] == "?").fill_null(False).to_numpy()
        sbase, skn, sdst = N.of("subs.base"), N.of("subs.keynode"), N.of("subs.dst")
        self.subs = Rel(sbase, dense=n_nodes, key=sk, q=sq, keynode=skn, dst=sdst)
        keyed = skn >= 0
        self.subs_by_key = Rel(skn[keyed], dense=n_nodes, base=sbase[keyed], dst=sdst[keyed])
        self.iters = Rel(N.of("iters.base"), dense=n_nodes, dst=N.of("iters.dst"))
        self.instof = Rel(N.of("instof.base"), dense=n_nodes, dst=N.of("instof.dst"))
        self.stores = Rel(N.of("stores.base"), dense=n_nodes, name=K.of("stores"),
                          val=N.of("stores.val"), test=t.stores["test"].to_numpy())  # fmt: skip
        ib, ikn = N.of("store_items.base"), N.of("store_items.keynode")
        ik, iv = K.of("items_key"), N.of("store_items.val")
        it = t.store_items["test"].to_numpy()
        self.items = Rel(ib, dense=n_nodes, key=ik, keynode=ikn, val=iv, test=it)
        keyed = ikn >= 0
        self.items_by_key = Rel(ikn[keyed], dense=n_nodes, base=ib[keyed], val=iv[keyed],
                                test=it[keyed])  # fmt: skip
        self.args = Rel(N.of("args.call"), dense=n_nodes, arg=N.of("args.arg"),
                        pos=t.args["pos"].fill_null(-1).to_numpy().astype(I64),
                        kw=K.of("kw"))  # fmt: skip
        pf, pnode = V.of("params.f"), N.of("params.node")
        ppos = t.params["pos"].fill_null(-1).to_numpy().astype(I64)
        pname = K.of("pname")
        at = ppos >= 0
        self.params_pos = Rel(pair(pf[at], ppos[at]), node=pnode[at], pname=pname[at])
        self.params_kw = Rel(pair(pf, pname), node=pnode, pos=ppos)
        self.retparams = Rel(V.of("retparams.f"), pname=K.of("rpname"))
        self.decorated = Rel(N.of("decorated.call"), dense=n_nodes, arg=N.of("decorated.arg"))
        self.applied = KeySet(self.decorated.key)  # calls that apply a decorator
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
        self.ext_ident = np.full(n_v, -1, dtype=I64)  # a class's outside base with a name
        # (function, decorator) where the function calls one of the decorator's parameters
        through = t.through
        self.calls_through = KeySet(pair(V.ids(through["w"]), V.ids(through["f"])))
        sh = t.shapes
        self.shapes = Rel(
            N.ids(sh["call"]), passes=sh["passes"].to_numpy(), literal=sh["literal"].to_numpy()
        )
        kws = sh.select("call", "kws").explode("kws").drop_nulls()
        self.shape_kws = KeySet(pair(N.ids(kws["call"]), K.ids(_hashed(kws["kws"]))))
        # a decorated class's name holds no definition or instance but its class (flow_tables)
        var, own = N.ids(t.kept["var"]), V.ids(t.kept["own"])
        ok = (var >= 0) & (own >= 0)
        self.kept_var = np.zeros(n_nodes, dtype=bool)
        self.kept_var[var[ok]] = True
        self.kept_own = KeySet(pair(var[ok], own[ok]))
        self.definition = np.isin(self.vk, [FUNC, CLASS, INST, OPEN, BOUND, SUPER, GEN])
        # slots: (owner, name) -> the node lookups find; `named`: every node `owner|name`
        static = np.ones(t.slots.height, dtype=bool)  # stores add the others (`_stores`)
        self.slots = Rel(pair(V.of("slots.owner"), K.of("slots.name_h")),
                         slot=N.of("slots.slot"), static=static)  # fmt: skip
        no, nn = V.ids(t.named["owner"]), K.ids(t.named["name_h"])
        ok = (no >= 0) & (nn >= 0)
        named = Rel(pair(no[ok], nn[ok]), node=N.of("named.node")[ok])
        keep = first_of_runs(named.key)
        self.named = Rel(named.key[keep], node=named["node"][keep])
        self.elems = Rel(pair(V.of("elems.cont"), K.of("elems")),
                         slot=N.of("elems.slot"))  # fmt: skip
        funcs = self.vk[seeds_v.clip(0)] == FUNC
        seeded = Rel(seeds_n[funcs & (seeds_v >= 0)], f=seeds_v[funcs & (seeds_v >= 0)])
        i, j = seeded.find(fs)
        self.slotdef = Rel(fd[i], f=seeded["f"][j])
        # what later rounds read again: subscript reads, lookups that found nothing, and the
        # (node, value) pairs whose lookups depend on a class's MRO
        self.reads_known = Rel(EMPTY, dst=EMPTY)  # (container, key) -> dst
        self.reads_any = Rel(EMPTY, dst=EMPTY)  # container -> dst (an unknown key)
        none = np.zeros(0, dtype=bool)
        self.reads = Rel(EMPTY, cls=EMPTY, dst=EMPTY, how=EMPTY, down=none)  # by name
        self.down_reads = Rel(EMPTY, name=EMPTY, dst=EMPTY)  # by class
        self.pending = Rel(EMPTY, key=EMPTY)  # class -> (node, value) waiting for its MRO
        self.complete = np.ones(n_v, dtype=bool)  # a class whose MRO is whole
        self.forced = np.zeros(n_v, dtype=bool)  # read before its MRO was whole (`_force`)
        self.unstable: list[np.ndarray] = []  # classes whose MRO changed after it was read
        self.capped: list[np.ndarray] = []  # nodes that turned values away (CAP)
        self.class_reads = Rel(EMPTY, n=EMPTY, v=EMPTY)  # by class
        # classes
        self.bases_cls, self.bases_node = V.of("bases.cls"), N.of("bases.base")
        self.bases_pos = t.bases["pos"].fill_null(0).to_numpy().astype(I64)
        self.base_nodes = KeySet(self.bases_node)
        self.class_like = np.isin(self.vk, [CLASS, EXT, BFUNC])
        self.classes = np.flatnonzero(self.vk == CLASS).astype(I64)
        self.base_count = -1
        self.mro = Rel(EMPTY, anc=EMPTY, rank=EMPTY)
        self.mro_rank = Rel(EMPTY, rank=EMPTY)  # (class, ancestor) -> rank
        self.mro_rank_keys = KeySet()
        self.mro_keys = KeySet()
        self.ext_base = np.zeros(n_v, dtype=bool)
        self.desc = Rel(EMPTY, sub=EMPTY)
        self._mro()

    # -- output ------------------------------------------------------------------------------
    def pairs_frame(self, keys: np.ndarray) -> pl.DataFrame:
        n, v = high(keys), low(keys)
        known = n < len(self.N)
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
        if ok.all():
            return keys
        self.capped.append(nodes[starts][~ok])
        return keys[np.repeat(ok, fresh)]

    def _kept(self, keys: np.ndarray) -> np.ndarray:
        n, v = high(keys), low(keys)
        at = n < len(self.kept_var)
        drop = np.zeros(len(keys), dtype=bool)
        drop[at] = self.kept_var[n[at]] & self.definition[v[at]]
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
        for new, table, how in ((plain, self.copy, None), (bcopies, self.bcopy, self._bound),
                                (tested, self.tcopy, self._untested)):  # fmt: skip
            if not new:
                continue
            src = np.concatenate([s for s, _ in new])
            dst = np.concatenate([d for _, d in new])
            ok = (src >= 0) & (dst >= 0)
            keys = table.new(pair(src[ok], dst[ok]))
            if len(keys) == 0:
                continue
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
        carried = self._carry(self.flow_src, self.flow_dst)
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
        m = vk == MODULE
        if m.any():
            at = self.slots.get(pair(v[m], name[m]))
            hit = at >= 0
            copies.append((self.slots["slot"][at[hit]], dst[m][hit]))
            miss = ~hit  # a store may make the slot later (`_late_lookups`)
            self._register(name[m][miss], v[m][miss], dst[m][miss], 2, np.zeros(miss.sum(), bool),
                           np.zeros(miss.sum(), I64))  # fmt: skip
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
            self._register(mn, mc, md, how, down, fs)
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
        self.class_reads.add(cls[reads], n=n[reads], v=v[reads])
        out = np.concatenate(outside)
        consts = [(out, np.full(len(out), self.ext, dtype=I64))]
        if named_n:
            consts.append((np.concatenate(named_n), np.concatenate(named_v)))
        return copies, bcopies, consts

    def _register(self, name, cls, dst, how: int, down, fs) -> None:
        """Reads a slot made later may still answer (`_late_lookups`): a module's read that
        found nothing (`how` 2); a class's (0), an instance's (1) or `super()`'s (3) read
        whose MRO has a class without a static slot of that name before the first with one
        (`fs`, its rank), or that looks down into subclasses (`down`: also by class, for
        subclasses the MRO gains later)."""
        keep = (fs != 0) | down
        if keep.any():
            self.reads.add(name[keep], cls=cls[keep], dst=dst[keep],
                           how=np.full(keep.sum(), how, dtype=I64), down=down[keep])  # fmt: skip
        if down.any():
            self.down_reads.add(cls[down], name=name[down], dst=dst[down])

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
        """`self.x` in a class that never sets `x`: the subclasses' own `x`."""
        i, j = self.desc.find(cls)
        at = self.slots.get(pair(self.desc["sub"][j], name[i]))
        ok = at >= 0
        return self.slots["slot"][at[ok]], dst[i[ok]]

    def _late_lookups(self, owner, name, slot):
        """Reads registered before a store made the slot (owner, name) find it now (see
        `_register`): a module's read of the name; a class's or an instance's whose MRO
        holds the owner before its first static slot of the name; one looking down into
        subclasses, the owner being one."""
        i, j = self.reads.find(name)
        r = self.reads
        rc, rd, how, down = r["cls"][j], r["dst"][j], r["how"][j], r["down"][j]
        own, sl = owner[i], slot[i]
        mods = (how == 2) & (rc == own)
        copies = [(sl[mods], rd[mods])]
        c = how != 2
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
        cont, kh, q, dst = (np.concatenate(x) for x in (conts, khs, qs, dsts))
        if len(cont) == 0:
            return [], [], []
        self.reads_known.add(pair(cont[~q], kh[~q]), dst=dst[~q])
        self.reads_any.add(cont[q], dst=dst[q])
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
            if new.any():  # a store makes the slot it writes visible to lookups
                keys, first = np.unique(keys[new], return_index=True)
                o, nm, sl = owner[new][first], name[new][first], slot[new][first]
                self.slots.add(keys, slot=sl, static=np.zeros(len(keys), dtype=bool))
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
        if not new.any():
            return EMPTY, EMPTY
        keys, first = np.unique(keys[new], return_index=True)
        cont, key, slot = cont[new][first], key[new][first], slot[new][first]
        self.elems.add(keys, slot=slot)
        srcs, dsts = [], []
        i, j = self.reads_known.find(keys)
        srcs.append(slot[i])
        dsts.append(self.reads_known["dst"][j])
        loose = key == self.q_k
        i, j = self.reads_known.find_high(cont[loose])
        srcs.append(slot[loose][i])
        dsts.append(self.reads_known["dst"][j])
        i, j = self.reads_any.find(cont)
        srcs.append(slot[i])
        dsts.append(self.reads_any["dst"][j])
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
        d = self.decorated
        empty = pl.DataFrame(schema={"call": _U, "deco": _U})
        if len(d) == 0 or len(self.calls_through) == 0:
            return empty
        i, j = self.calls_by_dst.find(d.key)
        applied, arg, callee = d.key[i], d["arg"][i], self.calls_by_dst["callee"][j]
        a, f = self._values(callee)
        fn = self.vk[f] == FUNC
        a, f = a[fn], f[fn]
        b, w = self._values(self.ret[f])
        a, f = a[b], f[b]
        ok = self.calls_through.has(pair(w, f))
        if not ok.any():
            return empty
        src, dst, deco = arg[a[ok]], applied[a[ok]], f[ok]
        c, held = self._values(src)  # the definitions decorated (a constant's, or held)
        ci, cj = self.consts.find(src)
        c, held = np.concatenate([c, ci]), np.concatenate([held, self.consts["v"][cj]])
        fn = (self.vk[held] == FUNC) & (self.wrap[held.clip(0)] >= 0)
        self.run((dst[c[fn]], self.wrap[held[fn]]))
        known = dst < len(self.N)
        return pl.DataFrame(
            {"call": self.N.hashes[dst[known]], "deco": self.V.hashes[deco[known]]},
            schema={"call": _U, "deco": _U},
        ).unique()

    def decorator_defaults(self) -> None:
        """A decorator whose value is unknown leaves the definition as it was (once the rounds
        are done: only then is "unknown" known)."""
        d = self.decorated
        i, j = self.calls_by_dst.find(d.key)
        call, arg, callee = d.key[i], d["arg"][i], self.calls_by_dst["callee"][j]
        empty = self.points.count_high(callee) == 0
        if empty.any():
            src, dst = arg[empty], call[empty]
            self.copy.add(self.copy.new(pair(src, dst)))
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
        count = len(k) + len(ext_cls)
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
        order = np.lexsort((anc, key, cls))
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
        triples = (cls * self.nv + anc) * np.int64(1024) + np.minimum(rank, 1023)
        fresh = ~self.mro_keys.has(triples)
        changed = cls[fresh]
        ca = pair(cls, anc)
        gained = fresh & (rank > 0) & ~self.mro_rank_keys.has(ca)
        self.mro_keys = KeySet(triples)
        self.mro_rank = Rel(ca, rank=rank)
        self.mro_rank_keys = KeySet(ca)
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
        return unique(changed), cls[gained], anc[gained]


def _cat(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return EMPTY, EMPTY
    n = np.concatenate([p[0] for p in parts])
    v = np.concatenate([p[1] for p in parts])
    ok = (n >= 0) & (v >= 0)
    return (n, v) if ok.all() else (n[ok], v[ok])

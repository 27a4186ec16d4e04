"""Solve the value-flow facts of a repository: points-to sets of nodes over values, as
iterated Polars joins to a fixpoint, in the manner of PyCG's assignment graph.

Semi-naive: each round applies the rules to the pairs found in the round before only, and
reads the tables it needs through sorted indexes (ctxframe._resolve.flow_index), so a round
costs what its new pairs touch. The rules: copy along flows; look attributes up (a module's
slot; a class's along its MRO, an instance's binding methods; `super()` past the class);
call (a function's return value, a class's instance and `__init__`, an instance's
`__call__`, arguments into parameters); subscripts of containers; stores into attributes and
elements; iteration (elements, a generator's yields); `!` (an instance of an annotation's
class). Rules make new flows, which carry what their source already holds. A node with more
than CAP values stops spreading. The MRO is built from the bases' values, and the rules run
again over everything when it grows. Flows from annotations join last: what they add is
INFERRED.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ctxframe._resolve import flow_tables as ft
from ctxframe._resolve.flow_index import Dispatch, Growing, Index, pair
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
    SUPER,
    H,
    Tables,
    slot,
)  # fmt: skip

CAP = 48  # values of one node beyond which it stops spreading them
MAX_ROUNDS = 200
_MRO_EVERY = 4
_U = pl.UInt64
_EDGES = {"src": _U, "dst": _U}


def _hash(s: str) -> int:
    return pl.select(H(pl.lit(s))).item()


@dataclass
class Solution:
    """Points-to pairs (n, v): `exact` from bindings, `inferred` added by annotations."""

    exact: pl.DataFrame
    inferred: pl.DataFrame
    tables: Tables
    mro: pl.DataFrame  # cls, anc, rank


def solve(t: Tables) -> Solution:
    """Both phases to their fixpoint."""
    s = _Solver(t)
    s.run(s.initial())
    s.decorator_defaults()
    exact = s.points.all()
    s.add_flows(t.inferred)
    inferred = s.points.all().join(exact, on=["n", "v"], how="anti")
    return Solution(exact, inferred, t, s.mro.frame)


class _Solver:
    def __init__(self, t: Tables):
        self.t = t
        self.ext = _hash(ft.EXTERNAL)
        self.init_h, self.call_h = _hash("__init__"), _hash("__call__")
        self.points = Growing(pl.DataFrame(schema={"n": _U, "v": _U}), "n")
        self.consts = Index(t.seeds, "n")
        self.copy = Growing(t.flows.select("src", "dst"), "src")
        self.bcopy = Growing(pl.DataFrame(schema=_EDGES), "src")
        self.values = Index(t.values, "v")
        self.vstr = Index(t.values.select("v", "vs"), "v")
        keyed = t.subs.filter(pl.col("keynode").is_not_null())
        items_keyed = t.store_items.filter(pl.col("keynode").is_not_null())
        self.dispatch = Dispatch(
            {
                "attrs": (t.attrs, "base"),
                "calls": (t.calls, "callee"),
                "subs": (t.subs, "base"),
                "subs_by_key": (keyed, "keynode"),
                "iters": (t.iters, "base"),
                "instof": (t.instof, "base"),
                "stores": (t.stores, "base"),
                "items": (t.store_items, "base"),
                "items_by_key": (items_keyed, "keynode"),
            }
        )
        self.calls = Index(t.calls, "callee")
        self.args = Index(t.args, "call")
        self.params = Index(t.params, "f")
        self.retparams = Index(t.retparams, "f")
        self.decorated = Index(t.decorated, "call")
        self.slots = Growing(
            t.slots.select("owner", "name_h", "slot", k=pair("owner", "name_h")), "k"
        )
        self.elems = Growing(t.elems.with_columns(k=pair("cont", H(pl.col("key")))), "k")
        self.elems_of = Growing(t.elems, "cont")
        funcs = t.values.filter(pl.col("vk") == FUNC).select(f="v")
        seeded = t.seeds.join(funcs, left_on="v", right_on="f", how="semi")
        self.slotdef = Index(
            t.flows.join(seeded, left_on="src", right_on="n").select(slot="dst", f="v"), "slot"
        )
        self.reads = pl.DataFrame(schema={"cont": _U, "kh": _U, "q": pl.Boolean, "dst": _U})
        self.misses = Growing(
            pl.DataFrame(schema={"cls": _U, "name_h": _U, "dst": _U, "how": pl.Int8}), "name_h"
        )
        # (n, v, cls): the pairs whose lookups depend on class cls's MRO
        self.class_reads = Growing(pl.DataFrame(schema={"n": _U, "v": _U, "cls": _U}), "cls")
        self.base_count = -1
        self.base_nodes = Index(t.bases.select("base").unique(), "base")
        self.class_like = t.values.filter(pl.col("vk").is_in([CLASS, EXT, BFUNC])).select("v")
        self.mro = Index(pl.DataFrame(schema={"cls": _U, "anc": _U, "rank": pl.Int32}), "cls")
        self.ext_base = pl.DataFrame(schema={"cls": _U})
        self.desc = Index(pl.DataFrame(schema={"cls": _U, "sub": _U}), "cls")
        self._mro()

    # -- driver ------------------------------------------------------------------------------
    def run(self, delta: pl.DataFrame) -> None:
        """Rounds until nothing is new; then the lookups that found nothing on an instance
        look down into the subclasses the final MRO knows (`_lookup_down`), and rounds go on
        while that finds something."""
        for _ in range(8):
            self._rounds(delta)
            r = self.misses.all().filter(pl.col("how") == 1)
            down = self._lookup_down(r.with_columns(n=pl.col("dst"), v=pl.col("cls")))
            delta = self._edges([], [down.select(src="slot", dst="dst")])
            delta = pl.concat(delta) if delta else pl.DataFrame(schema={"n": _U, "v": _U})
            if self._new(delta).is_empty():
                return

    def _relookup(self, changed: pl.Series) -> pl.DataFrame:
        """The lookups of the classes whose MRO grew, made again (the rest stands)."""
        every = self.class_reads.take(changed).select("n", "v").unique()
        dk = every.join(self.values.take(every["v"]).drop("vs"), on="v", how="inner")
        hits = self.dispatch.take(every["n"])
        copies, bcopies, out = [], [], []
        for rule in (self._attrs, self._calls):
            c, b, k = rule(dk, hits)
            copies += c
            bcopies += b
            out += k
        out += self._edges(copies, bcopies)
        if not out:
            return pl.DataFrame(schema={"n": _U, "v": _U})
        return pl.concat([o.select(pl.col("n").cast(_U), pl.col("v").cast(_U)) for o in out])

    def add_flows(self, flows: pl.DataFrame) -> None:
        self.copy.add(flows)
        self._rounds(self._carry(flows))

    def _rounds(self, delta: pl.DataFrame) -> None:
        """Rounds until nothing is new; when a round gives a class's base expression a value,
        the MRO is rebuilt at once and the lookups it changes are made again."""
        delta = self._new(delta)
        stale = False  # a base expression gained a class since the MRO was built
        for i in range(MAX_ROUNDS):
            done = delta.is_empty()
            if done and not stale:
                return
            self.points.add(delta)
            step = self._step(delta)
            at_bases = delta.join(self.base_nodes.take(delta["n"]), left_on="n", right_on="base")
            stale = stale or at_bases.join(self.class_like, on="v", how="semi").height > 0
            if stale and (done or i % _MRO_EVERY == 0):  # each rebuild costs a pass: not always
                stale = False
                changed = self._mro()
                if changed.len():
                    step = pl.concat([step, self._relookup(changed)])
            delta = self._new(step)

    def _new(self, pairs: pl.DataFrame) -> pl.DataFrame:
        """The pairs not known yet, but none for a node past CAP values."""
        pairs = pairs.select(pl.col("n").cast(_U), pl.col("v").cast(_U)).unique()
        if pairs.is_empty():
            return pairs
        known = self.points.take(pairs["n"])
        pairs = pairs.join(known, on=["n", "v"], how="anti")
        if pairs.is_empty():
            return pairs
        counts = (
            pl.concat([known.select("n"), pairs.select("n")])
            .group_by("n")
            .len()
            .filter(pl.col("len") > CAP)
        )
        return pairs.join(counts, on="n", how="anti") if counts.height else pairs

    def _step(self, d: pl.DataFrame) -> pl.DataFrame:
        """What one round of the rules derives from the new pairs `d`."""
        dk = d.join(self.values.take(d["v"]).drop("vs"), on="v", how="inner")
        out = [self._along(d, self.copy), self._bound(self._along(d, self.bcopy))]
        copies, bcopies = [], []
        hits = self.dispatch.take(d["n"])
        for rule in (self._stores, self._attrs, self._calls, self._subs, self._iters,
                     self._instof, self._decorators):  # fmt: skip
            c, b, k = rule(dk, hits)
            copies += c
            bcopies += b
            out += k
        out += self._edges(copies, bcopies)
        return pl.concat([o.select(pl.col("n").cast(_U), pl.col("v").cast(_U)) for o in out])

    def _along(self, d: pl.DataFrame, edges: Growing) -> pl.DataFrame:
        e = edges.take(d["n"])
        return d.join(e, left_on="n", right_on="src").select(n="dst", v="v")

    def _edges(self, copies: list, bcopies: list) -> list[pl.DataFrame]:
        """New flows join the tables and carry what their sources already hold."""
        out = []
        for new, table, bound in ((copies, self.copy, False), (bcopies, self.bcopy, True)):
            new = [e for e in new if e.height]
            if not new:
                continue
            edges = pl.concat([e.select(pl.col("src").cast(_U), pl.col("dst").cast(_U))
                               for e in new]).unique()  # fmt: skip
            edges = edges.join(table.take(edges["src"]), on=["src", "dst"], how="anti")
            if edges.is_empty():
                continue
            table.add(edges)
            carried = self._carry(edges)
            out.append(self._bound(carried) if bound else carried)
        return out

    def _carry(self, edges: pl.DataFrame) -> pl.DataFrame:
        known = pl.concat([self.points.take(edges["src"]), self.consts.take(edges["src"])])
        return known.join(edges, left_on="n", right_on="src").select(n="dst", v="v")

    def initial(self) -> pl.DataFrame:
        """What the constants give: the flows out of them (a constant node itself only joins
        the pairs when some rule reads it)."""
        t = self.t
        read = pl.concat(
            [t.attrs.select(n="base"), t.calls.select(n="callee"), t.subs.select(n="base"),
             t.iters.select(n="base"), t.instof.select(n="base"), t.stores.select(n="base"),
             t.store_items.select(n="base")]
        )  # fmt: skip
        return pl.concat([self._carry(t.flows), t.seeds.join(read.unique(), on="n", how="semi")])

    def _bound(self, pairs: pl.DataFrame) -> pl.DataFrame:
        """Methods read through an instance are bound (calls skip their first parameter)."""
        if pairs.is_empty():
            return pairs
        b = self.values.take(pairs["v"]).filter(pl.col("bound").is_not_null())
        return pairs.join(b.select("v", "bound"), on="v", how="left").select(
            "n", v=pl.coalesce("bound", "v")
        )

    def _str(self, rows: pl.DataFrame, col: str, out: str) -> pl.DataFrame:
        """`rows` with the string of value column `col` as `out` (to compute slots from)."""
        s = self.vstr.take(rows[col]).rename({"v": col, "vs": out})
        return rows.join(s, on=col, how="left")

    # -- attributes --------------------------------------------------------------------------
    def _attrs(self, d: pl.DataFrame, hits: dict):
        e = hits.get("attrs")
        if e is None:
            return [], [], []
        rows = d.join(e, left_on="n", right_on="base")
        vk = pl.col("vk")
        mods = rows.filter(vk == MODULE).with_columns(k=pair("v", "name_h"))
        found_m = mods.join(self.slots.take(mods["k"]).select("k", "slot"), on="k")
        miss_m = mods.join(found_m.select("k", "dst"), on=["k", "dst"], how="anti")
        classes = rows.filter(vk == CLASS).with_columns(cls=pl.col("v"))
        insts = rows.filter(vk == INST).with_columns(cls=pl.col("vt"))
        sup = rows.filter(vk == SUPER).with_columns(cls=pl.col("vt"))
        found_c, miss_c = self._lookup(classes)
        found_i, miss_i = self._lookup(insts)
        found_s, _ = self._lookup(sup, skip_self=True)
        down = self._lookup_down(miss_i)
        copies = [found_m.select(src="slot", dst="dst"), found_c.select(src="slot", dst="dst")]
        bcopies = [x.select(src="slot", dst="dst") for x in (found_i, found_s, down)]
        # a builtin scalar's or an outside object's attribute is outside too; a container's
        # (its elements, its methods' results) is unknown
        other = rows.filter(vk.is_in([BOUND, FUNC, GEN, LIT, BINST, BFUNC, EXT]))
        failed = pl.concat([miss_c.select("cls", "dst"), miss_i.select("cls", "dst")])
        outside = pl.concat(
            [other.select("dst"), failed.join(self.ext_base, on="cls", how="semi").select("dst")]
        )
        self.misses.add(
            pl.concat(
                [
                    x.select(cls=c, name_h="name_h", dst="dst", how=pl.lit(how, pl.Int8))
                    for x, c, how in ((miss_m, "v", 2), (miss_c, "cls", 0), (miss_i, "cls", 1))
                ]
            )
        )
        reads = pl.concat([x.select("n", "v", "cls") for x in (classes, insts, sup)])
        self.class_reads.add(reads.unique())
        return copies, bcopies, [outside.select(n="dst", v=pl.lit(self.ext, _U))]

    def _lookup(
        self, rows: pl.DataFrame, skip_self: bool = False
    ) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The first class along `cls`'s MRO with a slot `name_h`: (found rows with `slot`,
        rows found nowhere)."""
        if rows.is_empty():
            return rows.with_columns(slot=pl.lit(None, _U)), rows
        m = rows.join(self.mro.take(rows["cls"]), on="cls")
        if skip_self:
            m = m.filter(pl.col("rank") > 0)
        m = m.with_columns(k=pair("anc", "name_h"))
        hit = (
            m.join(self.slots.take(m["k"]).select("k", "slot"), on="k")
            .sort("rank")
            .unique(["n", "v", "name_h", "dst"], keep="first")
        )
        miss = rows.join(hit.select("n", "v", "name_h", "dst"), on=["n", "v", "name_h", "dst"],
                         how="anti")  # fmt: skip
        return hit, miss

    def _lookup_down(self, miss: pl.DataFrame) -> pl.DataFrame:
        """`self.x` in a class that never sets `x`: the subclasses' own `x`."""
        if miss.is_empty():
            return miss.with_columns(slot=pl.lit(None, _U))
        m = miss.join(self.desc.take(miss["cls"]), on="cls").with_columns(k=pair("sub", "name_h"))
        return m.join(self.slots.take(m["k"]).select("k", "slot"), on="k")

    def _late_lookups(self, new: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Lookups that found nothing before a store made the slot: they find it now."""
        r = self.misses.take(new["name_h"])
        mods = r.filter(pl.col("how") == 2).join(
            new, left_on=["cls", "name_h"], right_on=["owner", "name_h"]
        )
        r = r.filter(pl.col("how") < 2)
        cls = r.join(self.mro.take(r["cls"]), on="cls").join(
            new, left_on=["anc", "name_h"], right_on=["owner", "name_h"]
        )
        copies = pl.concat([mods.select("slot", "dst"),
                            cls.filter(pl.col("how") == 0).select("slot", "dst")])  # fmt: skip
        bound = cls.filter(pl.col("how") == 1).select("slot", "dst")
        return copies.rename({"slot": "src"}), bound.rename({"slot": "src"})

    # -- calls -------------------------------------------------------------------------------
    def _calls(self, d: pl.DataFrame, hits: dict):
        e = hits.get("calls")
        if e is None:
            return [], [], []
        rows = d.join(e, left_on="n", right_on="callee")
        vk = pl.col("vk")
        funcs = pl.concat(
            [
                rows.filter(vk == FUNC).select("dst", "live", f="v", shift=pl.lit(0)),
                rows.filter(vk == BOUND).select("dst", "live", f="vt", shift=pl.lit(1)),
            ]
        )
        classes = rows.filter(vk == CLASS).with_columns(cls=pl.col("v"))
        inits = self._method(classes, self.init_h)
        insts = rows.filter(vk == INST).with_columns(cls=pl.col("vt"))
        dunder_calls = self._method(insts, self.call_h)
        self.class_reads.add(pl.concat([x.select("n", "v", "cls") for x in (classes, insts)]))
        called = (
            pl.concat([funcs.select("dst", "f", "shift"), dunder_calls])
            .join(rows.select("dst", "live").unique(), on="dst")
            .filter(pl.col("live"))
        )
        rets = self.values.take(called["f"]).select(f="v", ret="ret")
        copies = [called.join(rets, on="f").select(src="ret", dst="dst")]
        copies += self._bind_args(pl.concat([funcs.drop("live"), inits, dunder_calls]))
        live = pl.col("live")
        consts = [
            classes.filter(live).select(n="dst", v="inst"),
            rows.filter(vk.is_in([BFUNC, EXT]) & live).select(n="dst", v="res"),
        ]
        return copies, [], consts

    def _method(self, rows: pl.DataFrame, name_h: int) -> pl.DataFrame:
        """(dst, f, shift) of the method `name_h` the classes in `rows` find on their MRO."""
        rows = rows.with_columns(name_h=pl.lit(name_h, _U))
        found, _ = self._lookup(rows)
        defs = self.slotdef.take(found["slot"])
        return found.join(defs, on="slot").select("dst", "f", shift=pl.lit(1))

    def _bind_args(self, targets: pl.DataFrame) -> list[pl.DataFrame]:
        """Arguments into parameters (positional shifted past a bound `self`), and a function
        returning a parameter returns that call's argument."""
        if targets.is_empty():
            return []
        args = targets.join(self.args.take(targets["dst"]), left_on="dst", right_on="call")
        if args.is_empty():
            return []
        params = self.params.take(targets["f"])
        by_pos = args.filter(pl.col("pos") >= 0).with_columns(pos=pl.col("pos") + pl.col("shift"))
        pos = by_pos.join(params.filter(pl.col("pos") >= 0), on=["f", "pos"]).select(
            src="arg", dst="node"
        )
        kw = (
            args.filter(pl.col("kw").is_not_null())
            .join(params, left_on=["f", "kw"], right_on=["f", "pname"])
            .select(src="arg", dst="node")
        )
        rp = self.retparams.take(targets["f"])
        if rp.is_empty():
            return [pos, kw]
        ret = (
            args.join(rp, on="f")
            .join(params.select("f", "pname", ppos="pos"), on=["f", "pname"])
            .filter(
                ((pl.col("pos") + pl.col("shift")) == pl.col("ppos")) & (pl.col("pos") >= 0)
                | (pl.col("kw") == pl.col("pname"))
            )
            .select(src="arg", dst="dst")
        )
        return [pos, kw, ret]

    # -- containers, stores, iteration, annotations, decorators ----------------------------
    def _subs(self, d: pl.DataFrame, hits: dict):
        if "subs" not in hits and "subs_by_key" not in hits:
            return [], [], []
        empty = pl.DataFrame(schema=self.t.subs.schema)
        conts = d.filter(pl.col("vk") == CONT)
        lits = d.filter(pl.col("vk") == LIT)
        rows = conts.join(hits.get("subs", empty), left_on="n", right_on="base")
        fixed = rows.filter(pl.col("keynode").is_null()).select(
            "v", kh=H(pl.col("key")), q=pl.col("key") == "?", dst="dst"
        )
        dyn = rows.filter(pl.col("keynode").is_not_null())
        known = self._lits(self.points.take(dyn["keynode"])).rename({"n": "keynode"})
        a = dyn.join(known, on="keynode").select("v", kh="kh", q=pl.lit(False), dst="dst")
        keyed = lits.join(hits.get("subs_by_key", empty), left_on="n", right_on="keynode")
        conts_of = self._conts(self.points.take(keyed["base"])).rename({"n": "base", "v": "c"})
        b = keyed.join(conts_of, on="base").select(v="c", kh="kh", q=pl.lit(False), dst="dst")
        reads = pl.concat([fixed, a, b])
        self.reads = pl.concat([self.reads, reads.select(cont="v", kh="kh", q="q", dst="dst")])
        return [self._element_flows(reads)], [], []

    def _lits(self, pairs: pl.DataFrame) -> pl.DataFrame:
        """The literal values among `pairs`, with their key's hash `kh`."""
        lit = self.values.take(pairs["v"]).filter(pl.col("vk") == LIT).select("v", "kh")
        return pairs.join(lit, on="v")

    def _conts(self, pairs: pl.DataFrame) -> pl.DataFrame:
        cont = self.values.take(pairs["v"]).filter(pl.col("vk") == CONT).select("v")
        return pairs.join(cont, on="v", how="semi")

    def _element_flows(self, reads: pl.DataFrame) -> pl.DataFrame:
        """`container[key]` reads the element stored under key (and those of unknown key);
        an unknown key reads every element."""
        q = _hash("?")
        known = reads.filter(~pl.col("q")).with_columns(
            k=pair("v", "kh"), kq=pair("v", pl.lit(q, _U))
        )
        exact = known.join(self.elems.take(known["k"]).select("k", "slot"), on="k")
        loose = known.join(self.elems.take(known["kq"]).select(kq="k", slot="slot"), on="kq")
        anyk = reads.filter(pl.col("q"))
        every = anyk.join(self.elems_of.take(anyk["v"]), left_on="v", right_on="cont")
        return pl.concat([x.select(src="slot", dst="dst") for x in (exact, loose, every)])

    def _stores(self, d: pl.DataFrame, hits: dict):
        copies, bcopies = [], []
        st = hits.get("stores")
        st = d.join(st, left_on="n", right_on="base") if st is not None else None
        if st is not None and st.height:
            owners = pl.concat(
                [
                    st.filter(pl.col("vk").is_in([CLASS, MODULE])).with_columns(owner=pl.col("v")),
                    st.filter(pl.col("vk") == INST).with_columns(owner=pl.col("vt")),
                ]
            )
            owners = self._str(owners, "owner", "os").with_columns(
                slot=slot(pl.col("os"), pl.col("name")), name_h=H(pl.col("name"))
            )
            copies.append(owners.select(src="val", dst="slot"))
            new = owners.select("owner", "name_h", "slot", k=pair("owner", "name_h"))
            new = new.join(self.slots.take(new["k"]).select("k", "slot"), on=["k", "slot"],
                           how="anti").unique()  # fmt: skip
            if new.height:  # a store makes the slot it writes visible to lookups
                self.slots.add(new)
                c, b = self._late_lookups(new)
                copies.append(c)
                bcopies.append(b)
        items = self._item_stores(d, hits) if "items" in hits or "items_by_key" in hits else None
        if items is not None and items.height:
            copies.append(items.select("src", "dst"))
            copies.append(self._new_elems(items.select("cont", "key", slot="dst")))
        return copies, bcopies, []

    def _item_stores(self, d: pl.DataFrame, hits: dict) -> pl.DataFrame:
        """`base[key] = value` into the containers base holds (key literal or a node's)."""
        empty = pl.DataFrame(schema=self.t.store_items.schema)
        conts = d.filter(pl.col("vk") == CONT)
        lits = d.filter(pl.col("vk") == LIT)
        by_base = conts.join(hits.get("items", empty), left_on="n", right_on="base")
        fixed = by_base.filter(pl.col("key").is_not_null()).select("v", "key", "val")
        dyn = by_base.filter(pl.col("keynode").is_not_null())
        known = self._lits(self.points.take(dyn["keynode"])).rename({"n": "keynode", "v": "kv"})
        a = dyn.join(known, on="keynode").select("v", "kv", "val")
        keyed = lits.join(hits.get("items_by_key", empty), left_on="n", right_on="keynode")
        conts_of = self._conts(self.points.take(keyed["base"])).rename({"n": "base", "v": "c"})
        b = keyed.join(conts_of, on="base").select(v="c", kv="v", val="val")
        dyn_rows = self._str(pl.concat([a, b]), "kv", "ks").select(
            "v", key=pl.col("ks").str.slice(2), val="val"
        )
        rows = pl.concat([fixed, dyn_rows])
        if rows.is_empty():
            return rows.select(src="val", dst="val", cont="v", key="key")
        rows = self._str(rows, "v", "cs")
        return rows.select(src="val", dst=slot(pl.col("cs"), pl.col("key")), cont="v", key="key")

    def _new_elems(self, new: pl.DataFrame) -> pl.DataFrame:
        """Elements a store adds: later reads find them, and so do the reads made before."""
        new = new.with_columns(kh=H(pl.col("key")), k=pair("cont", H(pl.col("key"))))
        new = new.join(self.elems.take(new["k"]).select("k", "slot"), on=["k", "slot"],
                       how="anti").unique()  # fmt: skip
        if new.is_empty():
            return pl.DataFrame(schema=_EDGES)
        self.elems.add(new.select("cont", "key", "slot", "k"))
        self.elems_of.add(new.select("cont", "key", "slot"))
        r = self.reads
        q = _hash("?")
        exact = new.join(r.filter(~pl.col("q")), on=["cont", "kh"])
        loose = new.filter(pl.col("kh") == q).join(r.filter(~pl.col("q")), on="cont")
        anything = new.join(r.filter(pl.col("q")), on="cont")
        return pl.concat([x.select(src="slot", dst="dst") for x in (exact, loose, anything)])

    def _iters(self, d: pl.DataFrame, hits: dict):
        if "iters" not in hits:
            return [], [], []
        rows = d.join(hits["iters"], left_on="n", right_on="base")
        conts = rows.filter(pl.col("vk") == CONT)
        conts = conts.join(self.elems_of.take(conts["v"]), left_on="v", right_on="cont")
        gens = rows.filter(pl.col("vk") == GEN).select(src="yld", dst="dst")
        return [conts.select(src="slot", dst="dst"), gens], [], []

    def _instof(self, d: pl.DataFrame, hits: dict):
        if "instof" not in hits:
            return [], [], []
        rows = d.join(hits["instof"], left_on="n", right_on="base")
        classes = rows.filter(pl.col("vk") == CLASS).select(n="dst", v="inst")
        others = rows.filter(pl.col("vk").is_in([BFUNC, EXT])).select(n="dst", v="res")
        return [], [], [classes, others]

    def _decorators(self, d: pl.DataFrame, hits: dict):
        """A decorator from outside the repository (or a builtin) leaves the definition as
        it was."""
        if "calls" not in hits or self.t.decorated.is_empty():
            return [], [], []
        rows = d.filter(pl.col("vk").is_in([EXT, BFUNC]))
        rows = rows.join(hits["calls"], left_on="n", right_on="callee")
        rows = rows.join(self.decorated.take(rows["dst"]), left_on="dst", right_on="call")
        return [rows.select(src="arg", dst="dst")], [], []

    def decorator_defaults(self) -> None:
        """A decorator whose value is unknown leaves the definition as it was (once the rounds
        are done: only then is "unknown" known)."""
        dec = self.t.decorated.join(self.t.calls, left_on="call", right_on="dst")
        known = self.points.take(dec["callee"]).select("n").unique()
        empty = dec.join(known, left_on="callee", right_on="n", how="anti")
        if empty.height:
            edges = empty.select(src="arg", dst="call")
            self.copy.add(edges)
            self.run(self._carry(edges))

    # -- classes -----------------------------------------------------------------------------
    def _mro(self) -> pl.Series:
        """(cls, anc, rank) from the bases' class values, in depth-first order keeping each
        ancestor's last place (C3's order wherever C3 and that agree, which is the common
        case); returns the classes whose MRO changed."""
        t = self.t
        classes = t.values.filter(pl.col("vk") == CLASS).select(cls="v")
        held = t.bases.join(self.points.take(t.bases["base"]), left_on="base", right_on="n")
        bases = (
            held.join(classes, left_on="v", right_on="cls", how="semi")
            .select("cls", anc="v", pos="pos")
            .unique(["cls", "anc"])
        )
        outside = t.values.filter(pl.col("vk").is_in([EXT, BFUNC])).select("v")
        ext = held.join(outside, on="v", how="semi")
        count = bases.height + ext.height
        if count == self.base_count:
            return pl.Series("cls", [], dtype=_U)
        self.base_count = count
        before = self.mro.frame
        # a path's key: (pos+1) per level in base 64 digits, left-aligned (depth-first order)
        paths = classes.select("cls", anc="cls", key=pl.lit(0, pl.Int64), depth=pl.lit(0))
        frontier = paths
        for depth in range(1, 10):
            step = frontier.join(bases, left_on="anc", right_on="cls").select(
                "cls",
                anc="anc_right",
                key=pl.col("key")
                + (pl.col("pos").clip(0, 62) + 1).cast(pl.Int64) * 64 ** (10 - depth),
                depth=pl.lit(depth),
            )
            if step.is_empty():
                break
            paths = pl.concat([paths, step])
            frontier = step
        mro = (
            paths.sort("cls", "key")
            .unique(["cls", "anc"], keep="last", maintain_order=True)
            .with_columns(rank=pl.int_range(pl.len()).over("cls").cast(pl.Int32))
            .select("cls", "anc", "rank")
        )
        self.mro = Index(mro, "cls")
        self.ext_base = (
            mro.join(ext.select(anc="cls").unique(), on="anc", how="semi").select("cls").unique()
        )
        self.desc = Index(mro.filter(pl.col("rank") > 0).select(cls="anc", sub="cls"), "cls")
        return mro.join(before, on=["cls", "anc", "rank"], how="anti")["cls"].unique()

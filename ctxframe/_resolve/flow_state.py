"""The solved value flow kept with an index version, and solved again when files change.

A full index solves every Python file's facts (ctxframe._resolve.flow) and keeps the solver as
its exact phase left it, with the tables the edges are made from. An edit then solves only
what it changes (`flow._Solver.update`: what the old rows derived goes, what still holds is
derived again, what the new rows derive is added) and makes the edges of the files whose
sites read a changed value again (`FlowState.update`); a change it cannot vouch for gives
None, and the caller solves everything again. The state is written beside the version that
made it (`save`, `load`): a pickle whose arrays follow it as raw bytes, and its CRC-32.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import mmap
import os
import pickle
import threading
import types
import zlib
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ctxframe._core import facts as F
from ctxframe._resolve import flow, flow_edges
from ctxframe._resolve import flow_tables as ft
from ctxframe._resolve.flow_index import high, pair, unique

FORMAT = 3
_ALIGN = 64  # where each array's bytes start in the file
_FILE = "flow-state.pkl"
_KEY = "flow-state.json"
_U = pl.UInt64


def solve(facts: pl.DataFrame, defs: pl.DataFrame, files: pl.DataFrame):
    """`flow_edges.python_edges` of these facts, and the FlowState of their solve."""
    solved: list = []
    edges = flow_edges.python_edges(facts, defs, files, solved)
    return edges, FlowState.create(*solved[0])


@dataclass
class Result:
    """An incremental solve's answer: the Python edges of `paths` (the changed files and the
    files whose sites read a value that changed), as `flow_edges.python_edges` gives them."""

    paths: list[str]
    calls: pl.DataFrame
    fallback: pl.DataFrame
    extends: pl.DataFrame
    unresolved: pl.DataFrame


@dataclass
class FlowState:
    """The exact phase's solver, the context its tables were made in, and the tables the
    edges are made from (whole, hash-keyed frames)."""

    solver: flow._Solver | None  # None: spent (an edit only a full solve could answer)
    ctx: ft.Context
    frames: dict[str, pl.DataFrame]
    wrapped: pl.DataFrame  # call, deco
    members: pl.DataFrame  # name, n: how many methods of each name
    whole_paths: frozenset[str] = frozenset()  # files a whole-repository table reads
    fixtures: frozenset[str] = frozenset()  # pytest fixtures' names
    exporters: frozenset[str] = frozenset()  # modules a star import reads
    z: np.ndarray | None = None  # flow._Solver.cap_reach, made when first needed
    inferred: np.ndarray | None = None  # the pairs annotations add (`flow._Solver.inferred_keys`)
    cache: dict = field(default_factory=dict)  # path -> (its facts' digest, its tables)
    stats: dict = field(default_factory=dict)

    @classmethod
    def create(
        cls,
        t: ft.Tables,
        sol: flow.Solution,
        ctx: ft.Context,
        facts: pl.DataFrame,
        defs: pl.DataFrame,
    ) -> FlowState:
        """The state of a full solve of tables `t` (made from these facts and Python
        definitions)."""
        solver = sol.solver
        solver.t = None  # the tables' frames: the ones the edges read are kept below
        every = ft.Context(ctx.modules, None)  # implicit runs of any name: filtered when read
        access = _access_rows(facts)
        frames = {
            "uses": t.uses,
            "bases": t.bases.select("cls", "base"),
            "access_names": access.select("name", "path").unique(),
            "values": _named_values(t.values),
            "slots": t.slots.select("owner", "name_h", "slot", "name"),
            "props": t.props,
            "bound": t.flows.select(n="dst"),
            "slotdef": flow_edges._slotdef(t),
            "wrapped_names": flow_edges.wrapped_names(t, sol.wrapped),
        }
        frames["readers"] = _readers(
            {"sites": t.sites, "access": access, "bases": t.bases, "args": t.args}, t.attrs
        )
        return cls(solver, every, frames, sol.wrapped, _member_counts(defs),
                   *_whole_inputs(t, facts, ctx))  # fmt: skip

    # -- an edit -------------------------------------------------------------------------------
    def update(
        self,
        paths: list[str],
        old_facts: pl.DataFrame,
        old_defs: pl.DataFrame,
        new_facts: pl.DataFrame,
        new_defs: pl.DataFrame,
        files: pl.DataFrame,
        defs: pl.DataFrame,
        facts_of,
        also: list[str] = (),
    ) -> Result | None:
        """Solve again after the files `paths` changed from (old facts, old Python
        definitions) to (new ones); `defs` holds every definition now (their first lines:
        `extends` edges), `facts_of(paths)` gives other files' facts (those whose edges the
        change reaches; `also` names more of them: their calls matched by name may find
        another definition). None when only a full solve can answer (`flow.Fallback`: the
        state is then spent, and answers None from then on)."""
        if self.solver is None:  # spent
            return None
        if set(paths) & self.whole_paths:  # a fixture's definer, asker by mark or plugin list
            return None
        if (new_facts["kind"] == F.FIXTURE).any():  # one becomes so
            return None
        exporting = bool(set(paths) & self.exporters)
        if _whole_inputs_of(old_facts, old_defs, self.fixtures, exporting) != _whole_inputs_of(
            new_facts, new_defs, self.fixtures, exporting
        ):  # what it star-imports or exports to a star import, which fixtures it asks for
            return None
        cols = ["id", "kind", "label", "parent", "line_start"]
        old_py = old_defs.filter(pl.col("language") == "python").select(cols)
        new_py = new_defs.filter(pl.col("language") == "python").select(cols)
        members, moved = _member_change(self.members, old_py, new_py)
        old = self._tables(paths, old_facts, old_py, files)
        new = self._tables(paths, new_facts, new_py, files)
        gone, come = flow._diff(old, new)
        if gone.uses.height or come.uses.height:
            return None
        s = self.solver
        if self.z is None:
            self.z = s.cap_reach()
        try:
            touched = s.update(gone, come, self.z)
        except flow.Fallback as exc:
            # the solver went part of the way: the state is spent (no copy is made to put it
            # back; the caller solves everything again and keeps that state)
            self.solver = None
            self.stats["fallback"] = str(exc)
            return None
        self.members = members
        self.inferred = None
        self._patch(gone, come, new, paths)
        touched = np.concatenate([touched, self._class_readers(gone, come)])
        affected = sorted(set(self._affected(touched, paths, moved)) | set(also))
        self.stats = {"touched": len(touched), "affected": len(affected)}
        others = [p for p in affected if p not in set(paths)]
        if others:
            rows = facts_of(others)
            mine = pl.col("path").is_in(pl.Series(others, dtype=pl.String).implode())
            tables = ft.build(rows, defs.filter(mine).select(cols), files, self.ctx, whole=False)
            tables = _concat_tables(new, tables)
        else:
            tables = new
        calls, fallback, extends, unresolved = self._edges(affected, tables, defs)
        return Result(affected, calls, fallback, extends, unresolved)

    def _tables(self, paths, facts, defs, files) -> ft.Tables:
        """`flow_tables.build` of these files' facts alone, the last edit's kept (a watcher
        saves the same file again and again)."""
        key = (tuple(paths), _digest(facts), _digest(defs))
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        tables = ft.build(facts, defs, files, self.ctx, whole=False)
        self.cache = {key: tables}
        return tables

    def _patch(self, gone: ft.Tables, come: ft.Tables, new: ft.Tables, paths: list[str]) -> None:
        """The kept frames with the changed files' rows replaced (`new`: their tables)."""
        fr = self.frames
        for name in ("bases", "uses", "slots", "props"):
            cols = fr[name].columns
            fr[name] = _replace(fr[name], getattr(gone, name).select(cols),
                                getattr(come, name).select(cols))  # fmt: skip
        vals = _named_values(come.values)
        every = pl.concat([fr["values"], vals])
        fr["values"] = every.unique("v", keep="first", maintain_order=True)
        fr["bound"] = _replace(fr["bound"], gone.flows.select(n="dst"), come.flows.select(n="dst"))
        sd = flow_edges._slotdef
        fr["slotdef"] = _replace(fr["slotdef"], sd(_with_values(gone, fr["values"])),
                                 sd(_with_values(come, fr["values"])))  # fmt: skip
        mine = pl.col("path").is_in(pl.Series(paths, dtype=pl.String).implode())
        fresh = {name: getattr(new, name) for name in ("sites", "access", "bases", "args")}
        fr["readers"] = pl.concat([fr["readers"].filter(~mine), _readers(fresh, new.attrs)])
        fr["access_names"] = pl.concat([fr["access_names"].filter(~mine),
                                        new.access.select("name", "path").unique()])  # fmt: skip

    def _class_readers(self, gone: ft.Tables, come: ft.Tables) -> np.ndarray:
        """The nodes holding a class (an instance of one, its `super()`) whose members
        changed, or a class above or below it: their implicit runs, constructors and
        `__call__` may change though their values did not."""
        owners = pl.concat([t.slots.select("owner") for t in (gone, come)]
                           + [t.props.select("owner") for t in (gone, come)])  # fmt: skip
        if owners.is_empty():
            return np.zeros(0, dtype=np.int64)
        s = self.solver
        cls = s.V.ids(owners["owner"].unique())
        cls = cls[cls >= 0]
        cls = cls[s.vk[cls] == ft.CLASS]
        if len(cls) == 0:
            return np.zeros(0, dtype=np.int64)
        _, j = s.desc.find(cls)
        _, k = s.mro.find(cls)
        family = unique(np.concatenate([cls, s.desc["sub"][j], s.mro["anc"][k]]))
        supers = np.flatnonzero((s.vk == ft.SUPER) & np.isin(s.vt, family))
        values = np.concatenate([family, s.inst[family], s.open[family], supers])
        return unique(high(s._holders(values[values >= 0])))

    def _affected(self, touched: np.ndarray, paths: list[str], moved: list[str]) -> list[str]:
        """The changed files and those whose sites, implicit runs, bases or arguments read a
        node whose values may have changed, or that run a member of a name that came or went
        (`moved`)."""
        s = self.solver
        known = touched[(touched >= 0) & (touched < len(s.N.named))]
        known = known[s.N.named[known]]
        hashes = pl.Series(s.N.hashes[known], dtype=_U)
        readers = self.frames["readers"]
        hit = readers.filter(pl.col("n").is_in(hashes.implode()))["path"].unique()
        named = self.frames["access_names"].filter(pl.col("name").is_in(moved))["path"].unique()
        return sorted(set(hit.to_list()) | set(named.to_list()) | set(paths))

    def _edges(self, paths: list[str], t: ft.Tables, defs: pl.DataFrame):
        """`flow_edges.edges` of these files' sites, implicit runs and bases (`t`: their
        tables)."""
        fr = self.frames
        mine = pl.col("path").is_in(pl.Series(paths, dtype=pl.String).implode())
        sites = t.sites
        members = _member_names(self.members)
        access = t.access.filter(
            (pl.col("how") == "prefix") | pl.col("name").is_in(members["name"].implode())
        )
        bases = t.bases
        args = t.args
        recv = flow_edges.receivers(sites)
        nodes = pl.concat([sites["callee"], access["base"], bases["base"], args["arg"],
                           recv.cast(_U), fr["bases"]["base"]]).unique()  # fmt: skip
        exact, inferred = self._points(nodes)
        base_points = exact.join(fr["bases"].select(n="base").unique(), on="n", how="semi")
        values = self._values(pl.concat([exact["v"], inferred["v"]]).unique())
        view = types.SimpleNamespace(
            sites=sites, access=access, args=args, bases=bases, bases_all=fr["bases"],
            base_points=base_points, uses=fr["uses"].filter(mine), values=values,
            slots=fr["slots"], props=fr["props"], flows=fr["bound"].select(dst="n"),
            slotdef=fr["slotdef"], wrapped_names=fr["wrapped_names"],
        )  # fmt: skip
        sol = flow.Solution(exact, inferred, view, self.wrapped, self.solver.mro_frame())
        keep = defs.filter(mine | pl.col("path").is_null()) if "path" in defs.columns else defs
        return flow_edges.edges(view, sol, keep)

    def _values(self, held: pl.Series) -> pl.DataFrame:
        """(v, vs, vk, vt) of the named values and of the others held (no string: an edge
        shows their target's)."""
        named = self.frames["values"]
        rest = held.filter(~held.is_in(named["v"].implode()))
        s = self.solver
        ids = s.V.ids(rest)
        ok = ids >= 0
        vt = s.vt[ids[ok]]
        frame = pl.DataFrame(
            {
                "v": rest.filter(pl.Series(ok)),
                "vs": pl.Series([None] * int(ok.sum()), dtype=pl.String),
                "vk": pl.Series(s.vk[ids[ok]], dtype=pl.Int8),
                "vt": pl.Series(np.where(vt >= 0, s.V.hashes[vt.clip(0)], 0), dtype=_U),
            }
        ).with_columns(vt=pl.when(pl.Series(vt >= 0)).then(pl.col("vt")))
        return pl.concat([named, frame], how="vertical_relaxed")

    def _points(self, nodes: pl.Series) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(exact, inferred) pairs of these nodes (hashes)."""
        s = self.solver
        ids = s.N.ids(nodes)
        ids = unique(ids[ids >= 0])
        i, v = s._values(ids)
        exact = unique(pair(ids[i], v))
        if self.inferred is None:  # what the annotations add, once per state
            self.inferred = s.inferred_keys()
        inferred = self.inferred[np.isin(high(self.inferred), ids)]
        return s.pairs_frame(exact), s.pairs_frame(inferred)

    # -- kept with the version -----------------------------------------------------------------
    def __getstate__(self) -> dict:
        return {**self.__dict__, "cache": {}, "inferred": None}

    def save(self, version_dir: str) -> None:
        """Write the state into the version's cache (best effort: any OS error leaves none),
        its size and CRC-32 beside it (a check against torn or damaged bytes: what guards
        against a state made to run code is the unpickler, `_Unpickler`). A spent state
        (`update`'s Fallback) writes none."""
        if self.solver is None:
            return
        d = os.path.join(version_dir, "cache")
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(d)  # never makedirs: a version removed meanwhile must stay removed
            arrays: list[pickle.PickleBuffer] = []
            head = pickle.dumps(self, protocol=5, buffer_callback=arrays.append)
            tmp = os.path.join(d, f".{_FILE}.{os.getpid()}.tmp")
            spans, digest = [], zlib.crc32(head)
            with open(tmp, "wb") as fh:
                fh.write(head)
                at = len(head)
                for array in arrays:
                    raw = array.raw()
                    pad = bytes(-at % _ALIGN)
                    digest = zlib.crc32(raw, zlib.crc32(pad, digest))
                    fh.write(pad)
                    fh.write(raw)
                    spans.append([at + len(pad), raw.nbytes])
                    at += len(pad) + raw.nbytes
            os.replace(tmp, os.path.join(d, _FILE))
            key = {"format": FORMAT, "code": _code(), "size": at, "head": len(head),
                   "arrays": spans, "crc32": digest}  # fmt: skip
            tmp = os.path.join(d, f".{_KEY}.{os.getpid()}.tmp")
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(key, fh)
            os.replace(tmp, os.path.join(d, _KEY))
        except OSError:
            return


_NUMPY = {"scalar", "_frombuffer", "_reconstruct"}
_GLOBALS = {
    ("numpy", "dtype"), ("numpy", "ndarray"),
    ("polars.dataframe.frame", "DataFrame"), ("polars.series.series", "Series"),
    *(("builtins", n) for n in ("set", "frozenset", "slice", "range", "complex", "bytearray")),
    *((m, n) for m in ("numpy._core.multiarray", "numpy.core.multiarray", "numpy._core.numeric",
                       "numpy.core.numeric") for n in _NUMPY),
}  # fmt: skip


class _Unpickler(pickle.Unpickler):
    """Reads a kept state, naming no callable but the state's own classes and numpy's and
    Polars' data: a store is a folder others may hand over, and a pickle may run code."""

    def find_class(self, module: str, name: str):
        if (module, name) in _GLOBALS:
            return super().find_class(module, name)
        if module.startswith("ctxframe._resolve.") and "." not in name:
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a value-flow state")


def load(version_dir: str | None) -> FlowState | None:
    """The state kept with a version, or None: none kept, another format or code, or bytes
    whose size or CRC-32 differ from the recorded ones (then it is never used). The arrays
    are writable views of the file's bytes, copied only where an edit writes them."""
    if version_dir is None:
        return None
    d = os.path.join(version_dir, "cache")
    try:
        with open(os.path.join(d, _KEY), encoding="utf-8") as fh:
            key = json.load(fh)
        if key.get("format") != FORMAT or key.get("code") != _code():
            return None
        size, head, spans = int(key["size"]), int(key["head"]), key["arrays"]
        if not 0 <= head <= size or not all(
            head <= int(a) and int(a) + int(n) <= size and int(n) >= 0 for a, n in spans
        ):
            return None
        with open(os.path.join(d, _FILE), "rb") as fh:
            if os.fstat(fh.fileno()).st_size != size:
                return None
            view = memoryview(_mapped(fh, size))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if zlib.crc32(view) != key.get("crc32"):
        return None
    try:
        arrays = [view[int(a) : int(a) + int(n)] for a, n in spans]
        state = _Unpickler(io.BytesIO(view[:head]), buffers=arrays).load()
    except Exception:
        return None
    return state if isinstance(state, FlowState) else None


def _mapped(fh, size: int):
    """The file's bytes, copy-on-write: pages are read as they are touched, and writing one
    never reaches the file (a version's files are replaced, never written in place). Windows
    cannot remove a mapped file, so there they are read."""
    if os.name == "nt" or size == 0:
        data = bytearray(size)
        if fh.readinto(data) != size:
            raise ValueError("short read")
        return data
    return mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_COPY)


_MEMO: dict[str, FlowState] = {}  # version directory -> the state a process made for it
_WRITING: list[threading.Thread] = []  # the save under way (the state is not touched meanwhile)


BACKGROUND = False  # a watcher's process: write the state in a thread


def keep(version_dir: str, state: FlowState) -> None:
    """Keep a state with the version just written: for this process (a watcher's next edit
    starts from it, unread) and in a file beside it — written at once, or with BACKGROUND by
    a thread (the process waits for it before it exits; the next edit, before it touches
    the state)."""
    _settle()
    _MEMO.clear()
    _MEMO[version_dir] = state
    if not BACKGROUND:
        state.save(version_dir)
        return
    writer = threading.Thread(target=state.save, args=(version_dir,), name="ctxframe-flow-state")
    _WRITING.append(writer)
    writer.start()


def _settle() -> None:
    while _WRITING:
        _WRITING.pop().join()


def recall(version_dir: str | None) -> FlowState | None:
    """The state this process made for the version, else the one written beside it."""
    if version_dir is None:
        return None
    _settle()
    state = _MEMO.pop(version_dir, None)
    return state if state is not None else load(version_dir)


def carry(old_dir: str, new_dir: str) -> None:
    """A version whose Python facts are its predecessor's keeps its state: this process's
    (the same object), and the file written beside it (linked, best effort)."""
    _settle()
    state = _MEMO.pop(old_dir, None)
    if state is not None:
        _MEMO.clear()
        _MEMO[new_dir] = state
    src, dst = os.path.join(old_dir, "cache"), os.path.join(new_dir, "cache")
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(dst)
        for name in (_FILE, _KEY):
            tmp = os.path.join(dst, f".{name}.{os.getpid()}.tmp")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            try:
                os.link(os.path.join(src, name), tmp)
            except OSError:
                import shutil

                shutil.copyfile(os.path.join(src, name), tmp)
            os.replace(tmp, os.path.join(dst, name))
    except OSError:
        return


def _code() -> str:
    """The resolver's source: a state made by other code is never read."""
    h = hashlib.blake2b(digest_size=16)
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def _replace(frame: pl.DataFrame, gone: pl.DataFrame, come: pl.DataFrame) -> pl.DataFrame:
    """`frame` without the rows of `gone` (one each) and with those of `come`."""
    if gone.height:
        lists = [c for c, t in frame.schema.items() if isinstance(t, pl.List)]
        on = [c for c in frame.columns if c not in lists]
        frame = frame.join(gone.select(on).unique(), on=on, how="anti", nulls_equal=True)
    if come.height:
        frame = pl.concat([frame, come.select(frame.columns)], how="vertical_relaxed")
    return frame


def _digest(frame: pl.DataFrame) -> tuple:
    """A frame's rows, whatever their order, as a short key."""
    if frame.is_empty():
        return (0, 0)
    h = frame.hash_rows(seed=7)
    return (frame.height, int(h.sum()), int((h * 3 + 1).sum()))


def _concat_tables(a: ft.Tables, b: ft.Tables) -> ft.Tables:
    import dataclasses

    return ft.Tables(**{f.name: pl.concat([getattr(a, f.name), getattr(b, f.name)],
                                          how="vertical_relaxed")
                        for f in dataclasses.fields(ft.Tables)})  # fmt: skip


def _with_values(t: ft.Tables, values: pl.DataFrame):
    return types.SimpleNamespace(values=values, seeds=t.seeds, flows=t.flows, slotdef=None)


_NAMED_KINDS = [ft.FUNC, ft.CLASS, ft.MODULE, ft.EXT, ft.BFUNC]


def _named_values(values: pl.DataFrame) -> pl.DataFrame:
    """(v, vs, vk, vt) of the values edges name (definitions, modules, outside names); the
    rest (instances, literals, containers) are named by nothing an edge shows."""
    keep = values.filter(pl.col("vk").is_in(_NAMED_KINDS))
    return keep.select("v", "vs", "vk", "vt")


def _readers(fr: dict, attrs: pl.DataFrame) -> pl.DataFrame:
    """(n, path): the nodes each file's sites (their callees and the callees' receivers),
    implicit runs, bases and arguments read."""
    sites = fr["sites"]
    return pl.concat(
        [
            sites.select(n="callee", path="path"),
            fr["access"].select(n="base", path="path"),
            fr["bases"].select(n="base", path="path"),
            fr["args"]
            .join(sites.select("call", "path").unique(), on="call")
            .select(n="arg", path="path"),
            sites.join(attrs.select(callee="dst", n="base"), on="callee").select("n", "path"),
        ]
    ).unique()


def _access_rows(facts: pl.DataFrame) -> pl.DataFrame:
    """Every implicit member run of these facts, whatever its name (Tables.access's rows)."""
    rows = ft._accesses(facts.filter(pl.col("kind") == F.ACCESS), None)
    return rows.with_columns(base=ft.H(pl.col("receiver")), name_h=ft.H(pl.col("name")))


def _methods(defs: pl.DataFrame) -> pl.DataFrame:
    return defs.filter(pl.col("kind") == "method").group_by(name="label").agg(n=pl.len())


def _member_counts(defs: pl.DataFrame) -> pl.DataFrame:
    """(name, n): how many methods of the repository have each name."""
    return _methods(defs).with_columns(pl.col("n").cast(pl.Int64))


def _member_change(counts, old_defs, new_defs) -> tuple[pl.DataFrame, list[str]]:
    """The method-name counts after the change, and the names that came or went (with the
    dunders a truth test and `format()` fall back from)."""
    delta = pl.concat([
        _methods(old_defs).with_columns(pl.col("n").cast(pl.Int64) * -1),
        _methods(new_defs).with_columns(pl.col("n").cast(pl.Int64)),
    ])  # fmt: skip
    if delta.is_empty():
        return counts, []
    after = pl.concat([counts, delta]).group_by("name").agg(pl.col("n").sum())
    after = after.filter(pl.col("n") > 0)
    before, now = set(counts["name"].to_list()), set(after["name"].to_list())
    moved = before ^ now
    moved |= {{"__len__": "__bool__", "__str__": "__format__"}[m] for m in moved
              if m in ("__len__", "__str__")}  # fmt: skip
    return after, sorted(moved)


def _member_names(counts: pl.DataFrame) -> pl.DataFrame:
    """(name): the names an implicit run may reach (ctxframe._resolve.flow_tables._members)."""
    return ft._members(counts.select(kind=pl.lit("method"), label="name"))


def _whole_inputs_of(
    facts: pl.DataFrame, defs: pl.DataFrame, fixtures: frozenset, exporting: bool
) -> tuple:
    """What the whole-repository tables read of these files: their star imports, what they
    export to one when some module star-imports them (`__all__`, else their public top-level
    names) and the parameters that ask for a fixture by name."""
    star = facts.filter((pl.col("kind") == F.IMPORT) & (pl.col("scope") == "*"))
    listed = frozenset(facts.filter(pl.col("kind") == F.ALL).select("path", "name").rows())
    top = defs.filter(~pl.col("parent").str.contains("::", literal=True))
    keys = pl.concat([
        facts.filter(pl.col("kind").is_in([F.FLOW, F.IMPORT])).select(key="name"),
        top.select(key=pl.col("parent") + "|" + pl.col("label")),
    ])  # fmt: skip
    public = keys.filter(pl.col("key").str.contains(r"^[^|:]+\.pyi?\|[A-Za-z]\w*$"))
    if listed or not exporting:
        public = public.clear()
    if not exporting:
        listed = frozenset()
    params = ft._params(facts.filter(pl.col("kind") == F.PARAM))
    asking = params.filter(pl.col("pname").is_in(sorted(fixtures))).select("f", "pname")
    return (
        frozenset(star.select("path", "name", "receiver", "alias").rows()),
        listed,
        frozenset(public["key"].to_list()),
        frozenset(asking.rows()),
    )


def _whole_inputs(t: ft.Tables, facts: pl.DataFrame, ctx: ft.Context):
    """The files whose facts a whole-repository table reads whole (a fixture's definer),
    the fixtures' names, and the modules a star import reads."""
    fixtures = facts.filter(pl.col("kind") == F.FIXTURE)
    star = facts.filter((pl.col("kind") == F.IMPORT) & (pl.col("scope") == "*"))
    rows = ft._nearest(
        star.select(scope="src", var="name", module="receiver", iname="scope", root="alias"),
        ctx.modules, "module",
    )  # fmt: skip
    return (frozenset(fixtures["path"].to_list()), frozenset(fixtures["name"].unique().to_list()),
            frozenset(rows["mpath"].drop_nulls().to_list()))  # fmt: skip

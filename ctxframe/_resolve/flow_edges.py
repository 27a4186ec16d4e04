"""Python `calls` and `extends` edges from the solved value flow (ctxframe._resolve.flow).

A call site links to what its callee's values are: a function or lambda (a method read
through an instance too), a class's own `__init__` (the class itself when it has none: the
edge's `dst` kind says so), an instance's `__call__`. Confidence: EXTRACTED when the value
came through bindings, INFERRED when only a type annotation brought it. A site whose callee
has values but none of them is callable in the repository (a builtin's method, a library's
function) links nowhere, and is never matched by name. Only a site nothing is known about
(a method of an unknown receiver, a name bound nowhere in its file) goes to the name
matching of ctxframe._resolve.resolve, returned as references.
"""

from __future__ import annotations

import polars as pl

from ctxframe._core import facts as F
from ctxframe._resolve import flow, flow_tables
from ctxframe._resolve.flow_tables import BOUND, CLASS, FUNC, INST, OPEN, WRAP, H, slot

_EDGE = ["src", "dst", "kind", "confidence", "name", "path", "line"]
_REF = ["src", "path", "language", "kind", "name", "receiver", "scope", "line"]


def python_edges(
    facts: pl.DataFrame, defs: pl.DataFrame, files: pl.DataFrame, keep: list | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(call edges, call references left to name matching, extends edges, base references
    left to name matching) of the Python files whose facts are given. `defs` needs id, kind,
    label, parent, language, line_start. With `keep`, what was solved is appended to it
    (ctxframe._resolve.flow_state.FlowState.create makes an incremental solve's start)."""
    py = defs.filter(pl.col("language") == "python").select(
        "id", "kind", "label", "parent", "line_start"
    )
    ctx = flow_tables.context(files, py)
    tables = flow_tables.build(facts, py, files, ctx)
    sol = flow.solve(tables, keep=keep is not None)
    out = edges(tables, sol, defs)
    if keep is not None:  # what ctxframe._resolve.flow_state.FlowState.create reads
        keep.append((tables, sol, ctx, facts, py))
    return out


def edges(
    tables, sol: flow.Solution, defs: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """`python_edges`' answer from the tables and their solution (the tables may hold some
    files' sites only: their edges)."""
    points = pl.concat(
        [
            sol.exact.with_columns(confidence=pl.lit("EXTRACTED")),
            sol.inferred.with_columns(confidence=pl.lit("INFERRED")),
        ]
    )
    sites = tables.sites.with_row_index("site")
    calls, fallback = _calls(sites, points, sol)
    uses = tables.uses.select(
        "src", "dst", kind=pl.lit("uses"), confidence=pl.lit("EXTRACTED"), name="name",
        path="path", line="line", via=pl.lit("fixture"), bound=pl.lit(False),
    )  # fmt: skip
    calls = pl.concat(
        [calls, _access_edges(tables, points, sol), _callback_edges(sites, points, sol), uses]
    )
    extends, unresolved = _extends(tables, sol, defs)
    return calls, fallback, extends, unresolved


def _calls(sites: pl.DataFrame, points: pl.DataFrame, sol: flow.Solution):
    t = sol.tables
    kinds = t.values.select("v", "vk", "vt")
    vstr = t.values.select("v", "vs")
    hit = sites.join(points, left_on="callee", right_on="n").join(kinds, on="v", how="left")
    plain = {"via": pl.lit(None, pl.String), "bound": pl.lit(False)}
    func = hit.filter(pl.col("vk") == FUNC).with_columns(target=pl.col("v"), **plain)
    bound = hit.filter(pl.col("vk") == BOUND).with_columns(
        target=pl.col("vt"), via=pl.lit(None, pl.String), bound=pl.lit(True)
    )
    wrapped = hit.filter(pl.col("vk") == WRAP).with_columns(
        target=pl.col("vt"), via=pl.lit("@"), bound=pl.lit(False)
    )
    classes = hit.filter(pl.col("vk") == CLASS).join(
        vstr.rename({"v": "v", "vs": "cs"}), on="v", how="left"
    )
    own = _slotdef(t).rename({"slot": "init"})
    classes = (
        classes.with_columns(init=slot(pl.col("cs"), pl.lit("__init__")))
        .join(own, on="init", how="left")
        .with_columns(target=pl.coalesce("f", "v"), **plain)
    )
    made = _constructors(classes, sol)
    insts = hit.filter(pl.col("vk").is_in([INST, OPEN])).with_columns(
        cls=pl.col("vt"), n=pl.col("callee"), name_h=pl.lit(_h("__call__"), pl.UInt64),
        dst=pl.col("call"),
    )  # fmt: skip
    called = _instance_calls(insts, sol).with_columns(via=pl.lit("__call__"), bound=pl.lit(True))
    keep = ["site", "target", "confidence", "via", "bound"]
    linked = pl.concat([x.select(keep) for x in (func, bound, wrapped, classes, made, called)])
    linked = (
        linked.join(vstr, left_on="target", right_on="v", how="inner")
        .sort("site", "vs", "confidence", "via", "bound", nulls_last=False)
        .unique(["site", "vs"], keep="first", maintain_order=True)
        .select("site", dst="vs", confidence="confidence", via="via", bound="bound")
    )
    edges = _via_decorators(sites.join(linked, on="site", how="inner"), sol)
    held = points.select("n").unique()  # the nodes that hold a value
    known = sites.join(held, left_on="callee", right_on="n", how="semi")
    written = pl.col("alias").is_null()
    dead = known.filter(written).join(linked, on="site", how="anti")
    unknown = sites.join(known, on="site", how="anti").filter(written)
    fallback, unresolved = _fallback(unknown, t, held)
    nulls = pl.concat([dead.select(sites.columns), unresolved.select(sites.columns)]).with_columns(
        dst=pl.lit(None, pl.String), confidence=pl.lit(None, pl.String),
        via=pl.lit(None, pl.String), bound=pl.lit(None, pl.Boolean),
    )  # fmt: skip
    out = pl.concat([edges.select(_site_edge()), nulls.select(_site_edge())])
    return out, fallback


def _site_edge() -> list:
    return [
        "src",
        "dst",
        pl.lit("calls").alias("kind"),
        "confidence",
        "name",
        "path",
        pl.col("line").cast(pl.Int32),
        "via",
        "bound",
    ]


def _via_decorators(edges: pl.DataFrame, sol: flow.Solution) -> pl.DataFrame:
    """An edge to a decorated function through its decorator's wrapper (`via` "@") names the
    decorator: `@setup_only`."""
    through = pl.col("via") == "@"
    if sol.wrapped.is_empty() or not edges.select(through.any()).item():
        return edges
    wrapped = wrapped_names(sol.tables, sol.wrapped)
    return (
        edges.join(wrapped, on="dst", how="left")
        .with_columns(
            via=pl.when(through)
            .then(pl.lit("@") + pl.col("deco").fill_null("decorator"))
            .otherwise(pl.col("via"))
        )
        .drop("deco")
    )


def wrapped_names(t, wrapped: pl.DataFrame) -> pl.DataFrame:
    """(dst, deco): each function a transparent decorator wraps, and its decorators' names
    joined by ", @"."""
    if getattr(t, "wrapped_names", None) is not None:
        return t.wrapped_names
    vstr = t.values.select("v", "vs")
    return (
        wrapped.join(t.decorated, on="call")
        .join(t.seeds, left_on="arg", right_on="n")
        .join(vstr.rename({"v": "v", "vs": "dst"}), on="v")
        .join(vstr.rename({"v": "deco", "vs": "deco_id"}), on="deco")
        .select("dst", name=pl.col("deco_id").str.extract(r"([^.:]+)$", 1))
        .group_by("dst")
        .agg(deco=pl.col("name").unique().sort().str.join(", @"))
    )


def _members(held: pl.DataFrame, sol: flow.Solution) -> pl.DataFrame:
    """`held` (v, vk, vt, member, ...) with `target`: a function value itself, a bound
    method's function, or an instance's `member` along its class's MRO."""
    t = sol.tables
    plain = held.filter(pl.col("member").is_null() & (pl.col("vk") == FUNC)).with_columns(
        target=pl.col("v")
    )
    bound = held.filter(pl.col("member").is_null() & (pl.col("vk") == BOUND)).with_columns(
        target=pl.col("vt")
    )
    insts = (
        held.filter(pl.col("member").is_not_null() & pl.col("vk").is_in([INST, OPEN]))
        .with_columns(name_h=H(pl.col("member")))
        .join(sol.mro, left_on="vt", right_on="cls")
        .join(
            t.slots.select("owner", "name_h", "slot"),
            left_on=["anc", "name_h"],
            right_on=["owner", "name_h"],
        )
        .join(_slotdef(t), on="slot")
        .sort("rank", "f")
        .unique(["row", "v"], keep="first", maintain_order=True)
        .with_columns(target=pl.col("f"))
    )
    keep = [c for c in held.columns if c not in ("v", "vk", "vt")] + ["target"]
    return pl.concat([x.select(keep) for x in (plain, bound, insts)])


def _callback_edges(sites: pl.DataFrame, points: pl.DataFrame, sol: flow.Solution):
    """Library code calling back (ctxframe/_core/callbacks.toml): what a call hands to
    `threading.Thread(target=)`, `map`, `CliRunner().invoke`, and the application a test
    client's constructor was given, called from each of its request methods. `via` names the
    library."""
    from ctxframe._core import callbacks

    t = sol.tables
    vals = t.values.select("v", "vs", "vk", "vt")
    held = sites.join(points, left_on="callee", right_on="n").join(vals, on="v")
    bare = pl.col("vs").str.slice(2)
    libname = pl.when(pl.col("vs").str.starts_with("B:")).then("builtins." + bare).otherwise(bare)
    held = (
        held.filter(pl.col("vk") == flow_tables.EXT)
        .with_columns(lib=libname)
        .vstack(held.filter(pl.col("vk") == flow_tables.BFUNC).with_columns(lib=libname))
    )

    def handed(calls: pl.DataFrame, spec: pl.DataFrame, on: str) -> pl.DataFrame:
        """The values of the arguments `spec` names, at each call: (row, member, v, ...)."""
        args = calls.join(spec, on=on).join(t.args, on="call")
        args = args.filter(
            (pl.col("pos").is_not_null() & (pl.col("pos_right") == pl.col("pos")))
            | (pl.col("kw").is_not_null() & (pl.col("kw_right") == pl.col("kw")))
        )
        return args.join(points.rename({"confidence": "aconf"}), left_on="arg", right_on="n").join(
            vals, on="v")  # fmt: skip

    # a call of a library callable that calls its argument
    rules = callbacks.calls().rename({"callable": "lib"})
    direct = handed(held.select("site", "src", "call", "path", "line", "lib", "confidence"),
                    rules.rename({"pos": "pos", "kw": "kw"}), "lib")  # fmt: skip
    direct = direct.with_row_index("row")
    # a test client: what its constructor got, called back from its request methods
    cl = callbacks.clients()
    made = held.select("call", lib=pl.col("lib")).join(cl.select(lib="cls").unique(), on="lib")
    sub = _library_subclasses(sol, cl["cls"].unique())
    made_sub = (
        sites.join(points, left_on="callee", right_on="n").join(sub, on="v").select("call", "lib")
    )
    ctor = (
        pl.concat([made, made_sub]).unique()
        .join(cl.select(lib="cls", pos="pos", kw="kw", member="member").unique(), on="lib")
        .join(t.args, on="call")
        .filter(
            (pl.col("pos").is_not_null() & (pl.col("pos_right") == pl.col("pos")))
            | (pl.col("kw").is_not_null() & (pl.col("kw_right") == pl.col("kw")))
        )
        .join(points.rename({"confidence": "aconf"}), left_on="arg", right_on="n")
        .select("lib", "member", "v", "aconf")
        .unique()
    )  # fmt: skip
    methods = cl.select(mlib=pl.col("cls") + "." + pl.col("method"), lib="cls").unique()
    requests = (
        held.select("site", "src", "path", "line", "confidence", mlib="lib")
        .join(methods, on="mlib")
        .join(ctor, on="lib")
        .join(vals, on="v")
        .with_row_index("row")
    )
    # the library's request method calls the repository subclass's own override (`open`)
    over = callbacks.overridable().select(mlib=pl.col("cls") + "." + pl.col("method"),
                                          lib="cls", member="member")  # fmt: skip
    recv = pl.col("callee_key").str.replace(F.STEP + r"\.[A-Za-z_]\w*$", "")
    overrides = (
        held.select("site", "src", "path", "line", "confidence", "call_key", mlib="lib")
        .join(over, on="mlib")
        .with_columns(callee_key=flow_tables.callee_key(pl.col("call_key")))
        .with_columns(recv=H(recv))
        .join(points.rename({"confidence": "aconf"}), left_on="recv", right_on="n")
        .join(sub.rename({"lib": "sublib"}), on="v")
        .filter(pl.col("sublib") == pl.col("lib"))
        .join(vals, on="v")
        .filter(pl.col("vk").is_in([INST, OPEN]))
        .with_row_index("row")
    )
    cols = ["src", "path", "line", "lib", "confidence", "aconf", "v", "vk", "vt", "member", "row"]
    both = pl.concat([direct.select(cols), requests.select(cols), overrides.select(cols)])
    if both.is_empty():
        strings = dict.fromkeys(["src", "dst", "kind", "confidence", "name", "path"], pl.String)
        return pl.DataFrame(schema=strings | {"line": pl.Int32, "via": pl.String,
                                              "bound": pl.Boolean})  # fmt: skip
    linked = _members(both, sol).join(t.values.select(target="v", dst="vs"), on="target")
    sure = (pl.col("confidence") == "EXTRACTED") & (pl.col("aconf") == "EXTRACTED")
    conf = pl.when(sure).then(pl.lit("EXTRACTED")).otherwise(pl.lit("INFERRED"))
    return linked.select(
        "src", "dst", kind=pl.lit("calls"), confidence=conf,
        name=pl.col("lib").str.extract(r"([^.]+)$", 1), path="path",
        line=pl.col("line").cast(pl.Int32), via="lib", bound=pl.lit(False),
    ).pipe(_first, ["src", "dst", "via"], ["line", "confidence", "path", "name"])  # fmt: skip


def _library_subclasses(sol: flow.Solution, libs: pl.Series) -> pl.DataFrame:
    """(v, lib): each class of the repository extending a library class the callback table
    follows (a base expression holding `x:LIB`), and every subclass of those."""
    t = sol.tables
    want = libs.to_frame("lib").with_columns(x=H(pl.lit("x:") + pl.col("lib")))
    held = getattr(t, "base_points", None)
    held = sol.exact if held is None else held  # the pairs of every base node
    direct = (
        t.bases_all.join(held, left_on="base", right_on="n")
        if getattr(t, "bases_all", None) is not None
        else t.bases.join(held, left_on="base", right_on="n")
    )
    direct = direct.join(want, left_on="v", right_on="x").select(anc="cls", lib="lib")
    below = sol.mro.filter(pl.col("rank") > 0).join(direct, on="anc").select(v="cls", lib="lib")
    return pl.concat([direct.select(v="anc", lib="lib"), below]).unique()


_MADE = ("__init__", "__new__", "__post_init__")


def _constructors(classes: pl.DataFrame, sol: flow.Solution) -> pl.DataFrame:
    """What calling a class runs besides its own `__init__`: an `__init__` it inherits, a
    `__new__`, a dataclass's `__post_init__` (the first along its MRO), `via` that name."""
    t = sol.tables
    names = pl.DataFrame({"mname": list(_MADE)}).with_columns(name_h=H(pl.col("mname")))
    hit = (
        classes.select("site", "v", "confidence", own="f")
        .join(sol.mro, left_on="v", right_on="cls")
        .join(names, how="cross")
        .join(
            t.slots.select("owner", "name_h", "slot"),
            left_on=["anc", "name_h"],
            right_on=["owner", "name_h"],
        )
        .join(_slotdef(t), on="slot")
        .sort("rank", "f")
        .unique(["site", "v", "mname"], keep="first", maintain_order=True)
        .filter(pl.col("own").is_null() | (pl.col("f") != pl.col("own")))
    )
    return hit.select("site", target="f", confidence="confidence", via="mname", bound=pl.lit(False))


_HOW = {"get": "property", "set": "setter", "del": "deleter"}
_FALLBACK = {"__bool__": "__len__", "__format__": "__str__"}


def _access_edges(t, points: pl.DataFrame, sol: flow.Solution) -> pl.DataFrame:
    """Members run without a call written (F.ACCESS): a property's getter, setter or deleter
    read through an instance, the dunder an operator or a protocol runs, every `visit_…`
    of a `getattr(x, "visit_" + k)` — the first along the instance's class's MRO and, for an
    instance that may be of a subclass (`self`), each subclass's own. `via` says which."""
    schema = dict.fromkeys(["src", "dst", "kind", "confidence", "name", "path"], pl.String)
    schema |= {"line": pl.Int32, "via": pl.String, "bound": pl.Boolean}
    acc = t.access
    if acc.is_empty():
        return pl.DataFrame(schema=schema)
    # a truth test runs `__bool__`, else `__len__`; `format()` and f-strings `__format__`,
    # else (object's) `__str__`: each falls back along the MRO as a member of its own
    fallback = acc.filter(pl.col("name").is_in(list(_FALLBACK))).with_columns(
        pl.col("name").replace_strict(_FALLBACK)
    )
    acc = pl.concat([acc, fallback.with_columns(name_h=H(pl.col("name")))])
    kinds = t.values.select("v", "vk", "vt", "vs")
    on = (
        acc.with_row_index("a")
        .join(points, left_on="base", right_on="n")
        .join(kinds, on="v")
        .filter(pl.col("vk").is_in([INST, OPEN]))
    )
    mro = sol.mro
    methods = _slotdef(t).join(t.slots.select("owner", "name_h", "slot", sname="name"), on="slot")
    # along the MRO of the instance's class
    look = on.join(mro, left_on="vt", right_on="cls")
    props = look.filter(pl.col("how").is_in(list(_HOW))).join(
        t.props, left_on=["anc", "name_h", "how"], right_on=["owner", "name_h", "how"]
    )
    ops = look.filter(pl.col("how") == "op").join(
        methods, left_on=["anc", "name_h"], right_on=["owner", "name_h"]
    )
    first = [
        x.sort("rank").filter(pl.col("rank") == pl.col("rank").min().over("a", "v"))
        for x in (props, ops)
    ]
    prefix = (
        look.filter(pl.col("how") == "prefix")
        .join(methods, left_on="anc", right_on="owner")
        .filter(pl.col("sname").str.starts_with(pl.col("name")))
    )
    # and, for `o:` values, each subclass's own members: the members joined to their owners'
    # ancestors first, so a base with a thousand subclasses costs what its matches cost
    below = mro.filter(pl.col("rank") > 0).select(owner="cls", anc="anc")
    opened = on.filter(pl.col("vk") == OPEN)
    down_props = opened.join(
        t.props.join(below, on="owner"), left_on=["vt", "name_h", "how"],
        right_on=["anc", "name_h", "how"],
    )  # fmt: skip
    members_below = methods.join(below, on="owner")
    down_ops = opened.filter(pl.col("how") == "op").join(
        members_below, left_on=["vt", "name_h"], right_on=["anc", "name_h"]
    )
    down_prefix = (
        opened.filter(pl.col("how") == "prefix")
        .join(members_below, left_on="vt", right_on="anc")
        .filter(pl.col("sname").str.starts_with(pl.col("name")))
    )
    first = [
        pl.concat([first[0], down_props], how="diagonal_relaxed"),
        pl.concat([first[1], down_ops], how="diagonal_relaxed"),
    ]
    prefix = pl.concat([prefix, down_prefix], how="diagonal_relaxed")
    vstr = t.values.select(f="v", target="vs")
    ops_prefix = pl.concat([first[1], prefix], how="diagonal_relaxed").join(vstr, on="f")
    via = pl.when(pl.col("how") == "prefix").then(pl.lit("getattr")).otherwise(pl.col("name"))
    rows = pl.concat(
        [
            first[0].select(
                "src",
                "path",
                "line",
                "name",
                "confidence",
                dst="f",
                via=pl.col("how").replace_strict(_HOW),
            ),
            ops_prefix.select("src", "path", "line", "name", "confidence", dst="target", via=via),
        ]
    )
    return (
        rows.pipe(_first, ["src", "dst", "name", "via"], ["confidence", "path", "line"])
        .select(
            "src",
            "dst",
            kind=pl.lit("calls"),
            confidence="confidence",
            name="name",
            path="path",
            line=pl.col("line").cast(pl.Int32),
            via="via",
            bound=pl.lit(True),
        )
    )


def _first(frame: pl.DataFrame, keys: list[str], order: list[str]) -> pl.DataFrame:
    """One row per `keys`: the first by `order`, whatever order the rows came in."""
    return frame.sort(order, nulls_last=True).unique(keys, keep="first", maintain_order=True)


def _h(s: str) -> int:
    return pl.select(H(pl.lit(s))).item()


def _slotdef(t) -> pl.DataFrame:
    """(slot, f): a slot bound to a function definition (`def f` in a class or module)."""
    if getattr(t, "slotdef", None) is not None:
        return t.slotdef
    funcs = t.values.filter(pl.col("vk") == FUNC).select(f="v")
    seeded = t.seeds.join(funcs, left_on="v", right_on="f", how="semi")
    return t.flows.join(seeded, left_on="src", right_on="n").select(slot="dst", f="v")


def _instance_calls(insts: pl.DataFrame, sol: flow.Solution) -> pl.DataFrame:
    """Calling an instance runs its class's `__call__` (along the MRO)."""
    if insts.is_empty():
        return insts.select("site", target=pl.col("v"), confidence="confidence")
    t = sol.tables
    hit = (
        insts.join(sol.mro, on="cls")
        .join(t.slots, left_on=["anc", "name_h"], right_on=["owner", "name_h"])
        .sort("rank", "slot")
        .unique(["site", "v"], keep="first", maintain_order=True)
        .join(_slotdef(t), on="slot")
    )
    return hit.select("site", target="f", confidence="confidence")


def receivers(sites: pl.DataFrame) -> pl.Series:
    """Each site's receiver node (hash): its callee without the last attribute step (the
    callee itself when it has none)."""
    key = flow_tables.callee_key(pl.col("call_key"))
    return sites.select(H(key.str.replace(F.STEP + r"\.[A-Za-z_]\w*$", ""))).to_series()


def _fallback(unknown: pl.DataFrame, t, held: pl.DataFrame):
    """Sites nothing is known about that name matching may still link: a method call whose
    receiver has no value (`held`: the nodes that hold one), or a bare name its file binds
    nowhere. Others stay unresolved."""
    unknown = unknown.with_columns(callee_key=flow_tables.callee_key(pl.col("call_key")))
    key = pl.col("callee_key")
    attr = key.str.extract(F.STEP + r"\.([A-Za-z_]\w*)$", 1)
    receiver = key.str.replace(F.STEP + r"\.[A-Za-z_]\w*$", "")
    rows = unknown.with_columns(attr=attr, recv=H(receiver))
    bound = t.flows.select(n="dst")  # an anti join: duplicates need no unique
    on_recv = rows.filter(pl.col("attr").is_not_null()).join(
        held, left_on="recv", right_on="n", how="anti"
    )
    bare_name = key.str.extract(r"^([^|]+)\|([A-Za-z_]\w*)$", 2)
    bare = (
        rows.filter(pl.col("attr").is_null())
        .with_columns(bn=bare_name, bp=key.str.extract(r"^([^|]+)\|", 1))
        .filter((pl.col("bp") == pl.col("path")) & pl.col("bn").is_not_null())
        .join(bound, left_on="callee", right_on="n", how="anti")
    )
    refs = pl.concat(
        [
            on_recv.select(
                "src", "path", language=pl.lit("python"), kind=pl.lit("call"), name="name",
                receiver=pl.lit("?"), scope=pl.lit(None, pl.String), line="line",
            ),
            bare.select(
                "src", "path", language=pl.lit("python"), kind=pl.lit("call"), name="name",
                receiver=pl.lit(None, pl.String), scope=pl.lit(None, pl.String), line="line",
            ),
        ]
    )  # fmt: skip
    taken = pl.concat([on_recv.select("site"), bare.select("site")])
    rest = unknown.join(taken, on="site", how="anti")
    return refs.with_columns(pl.col("line").cast(pl.Int32)), rest


def _extends(t, sol: flow.Solution, defs: pl.DataFrame) -> pl.DataFrame:
    """A class extends the classes its base expressions hold."""
    classes = t.values.filter(pl.col("vk") == CLASS).select("v", "vs")
    hit = t.bases.join(sol.exact, left_on="base", right_on="n").join(classes, on="v")
    lines = defs.select(src="id", line=pl.col("line_start").cast(pl.Int32))
    edges = (
        hit.join(lines, on="src", how="left")
        .select(
            "src",
            dst="vs",
            kind=pl.lit("extends"),
            confidence=pl.lit("EXTRACTED"),
            name="name",
            path="path",
            line="line",
        )
        .pipe(_first, ["src", "dst"], ["line", "name", "path"])
    )
    # a base no class value reached: matched by name as before (`mod.Base`: through `mod`)
    rest = t.bases.join(hit.select("base", "cls").unique(), on=["base", "cls"], how="anti")
    root = pl.col("key").str.extract(r"^[^|]*\|([A-Za-z_]\w*)" + F.STEP, 1)
    refs = rest.join(lines, on="src", how="left").select(
        "src", "path", language=pl.lit("python"), kind=pl.lit("extends"), name="name",
        receiver=root, scope=pl.lit(None, pl.String), line="line",
    )  # fmt: skip
    return edges, refs.unique()


FACT_KINDS = list(F.KINDS)

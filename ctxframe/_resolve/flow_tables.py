"""The value-flow facts of a repository as the solver's tables (see ctxframe._core.facts).

Every node and value string becomes a 64-bit hash (`H`): the solver's joins run on integers,
and a slot's node can be computed from its owner's value string and a name (`slot`). Modules
are resolved here: dotted names to files, packages to their `__init__.py` (a virtual one for
a directory without it), `from m import *` to the names `m` exports.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import polars as pl

from ctxframe._core import facts as F
from ctxframe._core.frames import string_lists
from ctxframe._core.paths import is_test_path_expr

SEED = 0x5EED
# value kinds
FUNC, CLASS, MODULE, INST, SUPER, BOUND, GEN, CONT, LIT, BINST, BFUNC, EXT = range(1, 13)
_PREFIX_KIND = {"i": INST, "s": SUPER, "m": BOUND, "g": GEN, "c": CONT, "k": LIT, "b": BINST,
                "B": BFUNC, "x": EXT}  # fmt: skip
EXTERNAL = "x:"
_BUILTIN_CONTAINERS = ["b:list", "b:dict", "b:set", "b:tuple"]  # containers of unknown elements


def H(e: pl.Expr) -> pl.Expr:
    """The hash of a string column: a node's or a value's id."""
    return e.hash(SEED)


def in_tests(key: pl.Expr) -> pl.Expr:
    """Whether a node's or a value's string belongs to a test file: its path is the part
    before `::`, `|`, `#` or a step, past a leading `=` and a one-letter kind (`i:`, `c:`)."""
    bare = key.str.replace(r"^=?(?:[A-Za-z]:)?", "")
    return is_test_path_expr(bare.str.extract(r"^([^|#\x1f(]+?)(?:::|[|#\x1f(]|$)", 1))


def slot(owner: pl.Expr, name: pl.Expr) -> pl.Expr:
    """The node of `owner|name` (a class's or module's attribute, a container's element)."""
    return H(pl.concat_str(owner, pl.lit("|"), name))


@dataclass
class Tables:
    """Facts as integer-keyed frames (columns named in each builder below)."""

    flows: pl.DataFrame  # src, dst
    inferred: pl.DataFrame  # src, dst (from annotations)
    seeds: pl.DataFrame  # n, v
    attrs: pl.DataFrame  # base, name, name_h, dst
    calls: pl.DataFrame  # callee, dst
    subs: pl.DataFrame  # base, key, keynode, dst
    iters: pl.DataFrame  # base, dst
    instof: pl.DataFrame  # base, dst
    args: pl.DataFrame  # call, arg, pos, kw
    shapes: pl.DataFrame  # call, passes (a positional argument or splat), literal, kws
    kept: pl.DataFrame  # var, own: a decorated class's name and the class (`_decorated_classes`)
    params: pl.DataFrame  # f, node, pos, pname, pkind
    retparams: pl.DataFrame  # f, pname
    stores: pl.DataFrame  # base, name, val, test (the store is in a test file)
    store_items: pl.DataFrame  # base, key, keynode, val, test
    decorated: pl.DataFrame  # call, arg
    sites: pl.DataFrame  # src, callee, call, name, line, path, alias, callee_key
    bases: pl.DataFrame  # cls, base, pos, name
    values: pl.DataFrame  # v, vs, vk, vt, test (defined in a test file), ...
    slots: pl.DataFrame  # owner, name_h, slot
    elems: pl.DataFrame  # cont, key, slot
    named: pl.DataFrame  # owner, name_h, node: every node `owner|name` of the facts


def build(facts: pl.DataFrame, defs: pl.DataFrame, files: pl.DataFrame) -> Tables:
    """The solver's tables from the facts (refs of kind `v.*` and Python's `call` refs), the
    Python definitions (id, kind, label, parent) and the indexed files (path, language)."""
    parts = facts.partition_by("kind", as_dict=True)
    empty = facts.clear()
    of = {kind: parts.get((kind,), empty) for kind in (*F.KINDS, "call")}
    modules = _modules(files)
    params = _params(of[F.PARAM])
    imports, star_flows = _imports(of[F.IMPORT], of[F.ALL], of[F.FLOW], modules, defs)
    flows = pl.concat(
        [
            of[F.FLOW].select(src="receiver", dst="name"),
            _bindings(defs, of[F.REBOUND]),
            _receivers(params, defs),
            imports.filter(pl.col("src").is_not_null()).select("src", "dst"),
            star_flows,
        ]
    )
    consts = pl.concat([imports.filter(pl.col("src").is_null()).select("dst", "value"),
                        _submodules(modules)])  # fmt: skip
    site_rows = pl.concat([of["call"], of[F.SITE]])
    args, shapes = _args(site_rows)
    read = pl.concat(
        [
            flows.select(s="src"),
            of[F.FLOW_INFERRED].select(s="receiver"),
            args.select(s="arg"),
            of[F.STORE].select(s="name"),
            of[F.STORE].select(s="receiver"),
            of[F.STORE_ITEM].select(s="name"),
            of[F.STORE_ITEM].select(s="receiver"),
            of[F.DECORATED].select(s="name"),
            of[F.BASE].select(s="name"),
            site_rows.select(s="module"),
        ]
    )
    exprs = _expressions(read)
    # `roots`: every node but the expressions' own (which all hold a step)
    roots = pl.concat([exprs.select(s="parent"), flows.select(s="src"), args.select(s="arg"),
                       of[F.STORE].select(s="receiver"), of[F.STORE_ITEM].select(s="receiver"),
                       of[F.DECORATED].select(s="receiver")])  # fmt: skip
    nodes = pl.concat([exprs.select(s="node"), roots])
    strings = pl.concat([nodes, consts.select(s=pl.lit("=") + pl.col("value"))])
    strings = strings.filter(pl.col("s").str.starts_with("=")).unique()
    seeds = pl.concat(
        [
            strings.select(n=H(pl.col("s")), v=H(pl.col("s").str.slice(1))),
            consts.select(n=H(pl.col("dst")), v=H(pl.col("value"))),
        ]
    ).unique()
    slot_keys = pl.concat([flows.select(key="dst"), consts.select(key="dst")]).unique()
    exprs = exprs.with_columns(node=H(pl.col("node")), parent=H(pl.col("parent")))
    hashed = flows.select(src=H(pl.col("src")), dst=H(pl.col("dst"))).unique()
    args = args.select(call=H(pl.col("call")), arg=H(pl.col("arg")), pos="pos", kw="kw")
    shapes = shapes.with_columns(call=H(pl.col("call")))
    named = pl.concat([roots, read, slot_keys.select(s="key"),
                       of[F.FLOW_INFERRED].select(s="name")])  # fmt: skip
    # Independent tables, made in threads while this one goes on (Polars lets go of the GIL).
    with ThreadPoolExecutor(max_workers=2) as pool:
        later = {
            "named": pool.submit(_named, named),
            "values": pool.submit(_values, defs, strings, modules, params),
            "slots": pool.submit(_slots, slot_keys),
            "elems": pool.submit(_elems, slot_keys),
        }
        tables = _tables(of, exprs, hashed, args, slot_keys, defs, params, seeds, site_rows)
    kept = _decorated_classes(defs, of[F.REBOUND])
    return Tables(**tables, shapes=shapes, kept=kept,
                  **{name: job.result() for name, job in later.items()})  # fmt: skip


def _decorated_classes(defs: pl.DataFrame, rebound: pl.DataFrame) -> pl.DataFrame:
    """(var, own) for each decorated class: its name's node and the class (and any other
    definition of that name in that scope). A class decorator
    hands back the class it is given or one made from it: other classes, instances and
    functions reach its name only because the decorator's values are merged over all its
    calls (a builder object keeping each class it was given), so the solver keeps every
    definition but the class itself out of that name."""
    var = pl.col("parent") + "|" + pl.col("label")
    named = defs.filter(pl.col("kind").is_in(["class", "function"])).with_columns(var=var)
    dec = named.filter(pl.col("kind") == "class").join(rebound.select(id="name"), on="id")
    # every definition of that name in that scope is its own (`if ...: class C` / `else:`)
    return named.join(dec.select("var").unique(), on="var").select(H(pl.col("var")),
                                                                   own=H(pl.col("id")))  # fmt: skip


def _tables(of, exprs, hashed, args, slot_keys, defs, params, seeds, site_rows) -> dict:
    """The tables `build` makes in its own thread."""
    step = pl.col("step")
    live = _live(of, exprs, hashed, args, slot_keys, defs)
    alive = pl.col("dst").is_in(live.implode())
    return dict(
        flows=hashed.filter(alive),
        inferred=of[F.FLOW_INFERRED].select(src=H(pl.col("receiver")), dst=H(pl.col("name"))),
        seeds=seeds,
        attrs=_steps(exprs, ".").filter(alive),
        calls=exprs.filter(step.str.starts_with("(")).select(
            callee="parent", dst="node", live=pl.col("node").is_in(live.implode())
        ),
        subs=_subscripts(exprs).filter(alive),
        iters=exprs.filter(step == "*").select(base="parent", dst="node").filter(alive),
        instof=exprs.filter(step == "!").select(base="parent", dst="node").filter(alive),
        args=args,
        params=params.select(
            f=H(pl.col("f")),
            node=H(pl.col("f") + "|" + pl.col("pname")),
            pos="pos",
            pname="pname",
            pkind="pkind",
        ),
        retparams=of[F.RETPARAM].select(f=H(pl.col("name").str.strip_suffix("|()")), pname="scope"),
        stores=of[F.STORE].select(
            base=H(pl.col("name")),
            name="scope",
            val=H(pl.col("receiver")),
            test=is_test_path_expr("path"),
        ),
        store_items=_keyed(of[F.STORE_ITEM]),
        decorated=of[F.DECORATED].select(call=H(pl.col("name")), arg=H(pl.col("receiver"))),
        sites=_sites(site_rows, exprs),
        bases=of[F.BASE].select(
            cls=H(pl.col("src")),
            base=H(pl.col("name")),
            pos="line",
            src="src",
            name=pl.col("name").str.extract(r"([A-Za-z_][\w]*)$", 1),
            path="path",
            key="name",
        ),
    )


def _live(of: dict, exprs, flows, args, slot_keys, defs) -> pl.Series:
    """The nodes whose values something reads: a flow's source, a rule's base, an argument,
    a stored value, a base class, a slot of a class, module or container, a return or yield
    node. Values reaching any other node (a call whose result nobody uses) are not kept."""
    key = pl.col("key")  # the owner: the key up to its last `|`
    owner = pl.when(key.str.contains("|", literal=True)).then(key.str.replace(r"\|[^|]*$", ""))
    classes = defs.filter(pl.col("kind") == "class").select(owner="id")
    keys = slot_keys.filter(~pl.col("key").str.contains(F.STEP, literal=True))
    slotted = keys.with_columns(owner=owner).filter(
        ~pl.col("owner").str.contains("::", literal=True)
        | pl.col("key").str.starts_with("c:")
        | pl.col("key").str.ends_with("|()")
        | pl.col("key").str.contains(F.GUARDED_RETURN)
        | pl.col("key").str.ends_with("|*")
        | pl.col("owner").is_in(classes["owner"].implode())
    )
    parts = [
        flows["src"],
        exprs["parent"],
        args["arg"],
        slotted.select(H(pl.col("key")))["key"],
        *(
            of[k].select(H(pl.col(c))).to_series()
            for k, c in (
                (F.STORE, "name"),
                (F.STORE, "receiver"),
                (F.STORE_ITEM, "name"),
                (F.STORE_ITEM, "receiver"),
                (F.DECORATED, "receiver"),
                (F.BASE, "name"),
                (F.FLOW_INFERRED, "receiver"),
            )
        ),
    ]
    keynodes = exprs.filter(pl.col("step").str.starts_with("[@")).select(
        H(pl.col("step").str.slice(2, pl.col("step").str.len_chars() - 3))
    )
    parts.append(keynodes.to_series())
    stored_keys = of[F.STORE_ITEM].filter(pl.col("scope").str.starts_with("@"))
    parts.append(stored_keys.select(H(pl.col("scope").str.slice(1))).to_series())
    return pl.concat([p.cast(pl.UInt64).rename("n") for p in parts]).unique()


def _params(rows: pl.DataFrame) -> pl.DataFrame:
    """(f, pname, pkind, pos) from each function's packed parameters."""
    parts = (
        rows.select(f="src", p=pl.col("name").str.split(F.ARGS))
        .explode("p")
        .with_columns(p=pl.col("p").str.split_exact(F.ARGSEP, 2))
    )
    return parts.select(
        "f",
        pname=pl.col("p").struct.field("field_0"),
        pkind=pl.col("p").struct.field("field_1"),
        pos=pl.col("p").struct.field("field_2").cast(pl.Int32),
    )


def _bindings(defs: pl.DataFrame, rebound: pl.DataFrame) -> pl.DataFrame:
    """An undecorated definition's name, in its enclosing scope, holds the definition."""
    named = defs.filter(pl.col("kind").is_in(["function", "method", "class"]))
    named = named.join(rebound.select(id="name"), on="id", how="anti")
    return named.select(
        src=pl.lit("=") + pl.col("id"), dst=pl.col("parent") + "|" + pl.col("label")
    )


def _receivers(params: pl.DataFrame, defs: pl.DataFrame) -> pl.DataFrame:
    """A method's bound first parameter holds an instance of its class (`cls`: the class)."""
    first = params.filter(pl.col("pkind").is_in(["self", "cls"])).join(
        defs.select(f="id", cls="parent"), on="f"
    )
    value = pl.when(pl.col("pkind") == "self").then(pl.lit("=i:") + pl.col("cls"))
    return first.select(src=value.otherwise(pl.lit("=") + pl.col("cls")),
                        dst=pl.col("f") + "|" + pl.col("pname"))  # fmt: skip


def _expressions(keys: pl.DataFrame) -> pl.DataFrame:
    """(node, parent, step) of every expression node among `keys` and of their parents: a
    key's parts split at STEP, every prefix a node."""
    parts = (
        keys.filter(pl.col("s").str.contains(F.STEP, literal=True))
        .unique()
        .select(p=pl.col("s").str.split(F.STEP))
        .with_columns(i=pl.int_ranges(1, pl.col("p").list.len()))
        .explode("i")
    )
    return parts.select(
        node=pl.col("p").list.head(pl.col("i") + 1).pipe(string_lists).list.join(F.STEP),
        parent=pl.col("p").list.head(pl.col("i")).pipe(string_lists).list.join(F.STEP),
        step=pl.col("p").list.get(pl.col("i")),
    ).unique("node")


def _args(sites: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(call, arg, pos, kw): the arguments packed on each call row (ctxframe._core.facts),
    and (call, passes, literal, kws): whether a row passes a positional argument or a splat,
    whether every row's first argument is a literal, and the keywords given where none does
    (the `~` entry). Sites that share a call node
    (a decorator written twice alike) pass each one's arguments: all of them flow, whatever
    order the rows come in."""
    rows = (
        sites.filter(pl.col("candidates").is_not_null())
        .select(call="module", a=pl.col("candidates").str.split(F.ARGS))
        .explode("a")
        .with_columns(parts=pl.col("a").str.splitn(F.ARGSEP, 2))
        .select(
            "call",
            head=pl.col("parts").struct.field("field_0"),
            arg=pl.col("parts").struct.field("field_1"),
        )
        .unique()
    )
    shape = rows.filter(pl.col("head") == F.SHAPE).select("call", p=pl.col("arg").str.split(","))
    first = pl.col("p").list.first()
    shapes = shape.group_by("call").agg(
        passes=first.is_in(["P", "L"]).any(),
        literal=(first == "L").all(),
        kws=pl.col("p").list.slice(1).list.explode(keep_nulls=False, empty_as_null=False).unique(),
    )
    rows = rows.filter(pl.col("head") != F.SHAPE)
    kw = pl.col("head").str.starts_with("=")
    args = rows.select(
        "call",
        "arg",
        pos=pl.when(kw).then(-1).otherwise(pl.col("head").cast(pl.Int32, strict=False)),
        kw=pl.when(kw).then(pl.col("head").str.slice(1)),
    )
    return args, shapes


def _sites(rows: pl.DataFrame, exprs: pl.DataFrame) -> pl.DataFrame:
    """Call sites: the caller, the name as written, the call node (`call_key`, its hash
    `call`) and its callee node (the call node's parent)."""
    sites = rows.select(
        "src",
        "path",
        name="name",
        line="line",
        alias=pl.when(pl.col("kind") == F.SITE).then(pl.col("alias")),
        call_key="module",
        call=H(pl.col("module")),
    )
    return sites.join(exprs.select(call="node", callee="parent"), on="call", how="left")


def callee_key(call: pl.Expr) -> pl.Expr:
    """The callee node's key of a call node's key (up to its last step)."""
    back = call.str.reverse().str.find("(" + F.STEP, literal=True)
    return call.str.head(call.str.len_chars() - back - 2)


def _steps(exprs: pl.DataFrame, prefix: str) -> pl.DataFrame:
    rows = exprs.filter(pl.col("step").str.starts_with(prefix))
    name = pl.col("step").str.slice(len(prefix))
    return rows.select(base="parent", name=name, name_h=H(name), dst="node")


def _subscripts(exprs: pl.DataFrame) -> pl.DataFrame:
    rows = exprs.filter(pl.col("step").str.starts_with("["))
    key = pl.col("step").str.slice(1, pl.col("step").str.len_chars() - 2)
    dyn = key.str.starts_with("@")
    return rows.select(
        base="parent",
        key=pl.when(dyn).then(None).otherwise(key),
        keynode=pl.when(dyn).then(H(key.str.slice(1))),
        dst="node",
    )


def _keyed(rows: pl.DataFrame) -> pl.DataFrame:
    key = pl.col("scope")
    dyn = key.str.starts_with("@")
    return rows.select(
        base=H(pl.col("name")),
        key=pl.when(dyn).then(None).otherwise(key),
        keynode=pl.when(dyn).then(H(key.str.slice(1))),
        val=H(pl.col("receiver")),
        test=is_test_path_expr("path"),
    )


def _slots(keys: pl.DataFrame) -> pl.DataFrame:
    """(owner, name) of every `owner|name` node: what attribute lookups find."""
    plain = keys.filter(
        ~pl.col("key").str.starts_with("c:") & ~pl.col("key").str.contains(F.STEP, literal=True)
    )
    split = pl.col("key").str.split_exact("|", 1)
    parts = plain.with_columns(
        owner=split.struct.field("field_0"), name=split.struct.field("field_1")
    ).filter(pl.col("name").is_not_null() & (pl.col("name") != "()") & (pl.col("name") != "*"))
    return parts.select(
        owner=H(pl.col("owner")), name_h=H(pl.col("name")), slot=H(pl.col("key")),
        owner_s="owner", name="name",
    )  # fmt: skip


def _named(strings: pl.DataFrame) -> pl.DataFrame:
    """(owner, name_h, node) of every node `owner|name` (no step): a slot a store may write
    into, found by its owner's value and the name."""
    s = pl.col("s")
    plain = strings.filter(~s.str.contains(F.STEP, literal=True) & ~s.str.starts_with("=")).unique()
    split = s.str.split_exact("|", 1)
    parts = plain.with_columns(
        owner=split.struct.field("field_0"), name=split.struct.field("field_1")
    ).filter(pl.col("name").is_not_null())
    return parts.select(owner=H(pl.col("owner")), name_h=H(pl.col("name")), node=H(s))


def _elems(keys: pl.DataFrame) -> pl.DataFrame:
    rows = keys.filter(pl.col("key").str.starts_with("c:"))
    cont = pl.col("key").str.extract(r"^(c:[^|]*)\|", 1)
    key = pl.col("key").str.extract(r"^c:[^|]*\|(.*)$", 1)
    return rows.select(cont=H(cont), key=key, slot=H(pl.col("key")))


_BUILTIN_RESULT = {
    "str": "b:str", "repr": "b:str", "format": "b:str", "chr": "b:str", "hex": "b:str",
    "oct": "b:str", "bin": "b:str", "ascii": "b:str", "bytes": "b:bytes", "bytearray": "b:bytes",
    "int": "b:int", "len": "b:int", "ord": "b:int", "hash": "b:int", "id": "b:int",
    "float": "b:float", "bool": "b:bool", "isinstance": "b:bool", "issubclass": "b:bool",
    "callable": "b:bool", "hasattr": "b:bool", "list": "b:list", "sorted": "b:list",
    "dict": "b:dict", "vars": "b:dict", "globals": "b:dict", "locals": "b:dict", "set": "b:set",
    "frozenset": "b:set", "tuple": "b:tuple", "dir": "b:list",
}  # fmt: skip


def _values(
    defs: pl.DataFrame, strings: pl.DataFrame, modules: pl.DataFrame, params: pl.DataFrame
) -> pl.DataFrame:
    """Every value: id `v`, string `vs`, kind `vk`, target `vt` (the definition or class it is
    about), and what the rules read of it: `ret`/`yld` (a function's return and yield nodes),
    `inst` (a class's instance), `bound` (a method's bound form), `res` (what calling a
    builtin or outside value gives), `kh` (a literal as a subscript key)."""
    callable_ = defs.filter(pl.col("kind").is_in(["function", "method", "lambda"]))
    classes = defs.filter(pl.col("kind") == "class")
    bound = params.filter(pl.col("pkind").is_in(["self", "cls"])).select(id="f").unique()
    rows = [
        callable_.select(vs="id", vk=pl.lit(FUNC), t="id"),
        classes.select(vs="id", vk=pl.lit(CLASS), t="id"),
        classes.select(vs=pl.lit("i:") + pl.col("id"), vk=pl.lit(INST), t="id"),
        classes.select(vs=pl.lit("s:") + pl.col("id"), vk=pl.lit(SUPER), t="id"),
        bound.select(vs=pl.lit("m:") + pl.col("id"), vk=pl.lit(BOUND), t="id"),
        modules.select(vs="mpath", vk=pl.lit(MODULE), t="mpath").unique(),
    ]
    lits = strings.select(vs=pl.col("s").str.slice(1)).filter(
        pl.col("vs").str.contains(r"^[cbkBxg]:")
    )
    rows.append(
        lits.select(
            "vs",
            vk=pl.when(pl.col("vs").is_in(_BUILTIN_CONTAINERS))
            .then(pl.lit(CONT, pl.Int64))
            .otherwise(
                pl.col("vs").str.slice(0, 1).replace_strict(_PREFIX_KIND, return_dtype=pl.Int64)
            ),
            t=pl.when(pl.col("vs").str.starts_with("g:")).then(pl.col("vs").str.slice(2)),
        )
    )
    rows.append(pl.DataFrame({"vs": [EXTERNAL], "vk": [EXT], "t": [None]},
                             schema={"vs": pl.String, "vk": pl.Int64, "t": pl.String}))  # fmt: skip
    out = pl.concat([r.with_columns(pl.col("vk").cast(pl.Int64)) for r in rows])
    out = out.unique("vs", keep="first", maintain_order=True)
    vk, vs, t = pl.col("vk"), pl.col("vs"), pl.col("t")
    has_bound = vs.is_in(bound["id"].implode())
    return out.select(
        v=H(vs),
        vs="vs",
        vk=vk.cast(pl.Int8),
        vt=H(t),
        ret=pl.when(vk.is_in([FUNC, BOUND])).then(H(t + "|()")),
        # the returns a decorator factory's conditions leave out of some calls (F.GUARDED)
        **{f"ret_{c}": pl.when(vk.is_in([FUNC, BOUND])).then(H(t + f"|(){c}")) for c in F.GUARDED},
        yld=pl.when(vk == GEN).then(H(t + "|*")),
        inst=pl.when(vk == CLASS).then(H(pl.lit("i:") + vs)),
        bound=pl.when((vk == FUNC) & has_bound).then(H(pl.lit("m:") + vs)),
        res=pl.when(vk == BFUNC)
        .then(H(vs.str.slice(2).replace_strict(_BUILTIN_RESULT, default=EXTERNAL)))
        .when(vk == EXT)
        .then(H(pl.lit(EXTERNAL))),
        kh=pl.when(vk == LIT).then(H(vs.str.slice(2))),
        test=in_tests(vs),
    )


# -- modules -----------------------------------------------------------------------------------


def _modules(files: pl.DataFrame) -> pl.DataFrame:
    """(dotted, mpath): every Python module and package of the repository; a package without
    `__init__.py` gets a virtual one. A `src/` layout also answers without its prefix."""
    py = files.filter(pl.col("language") == "python").select("path")
    real = py.with_columns(
        dotted=pl.col("path")
        .str.replace(r"\.pyi?$", "")
        .str.replace(r"(^|/)__init__$", "")
        .str.replace_all("/", "."),
        pyi=pl.col("path").str.ends_with(".pyi"),
    ).filter(pl.col("dotted") != "")
    dirs = (
        py.select(parts=pl.col("path").str.split("/"))
        .with_columns(n=pl.col("parts").list.len() - 1)
        .filter(pl.col("n") > 0)
        .with_columns(i=pl.int_ranges(1, pl.col("n") + 1))
        .explode("i")
        .select(dir=pl.col("parts").list.slice(0, pl.col("i")).pipe(string_lists).list.join("/"))
        .unique()
    )
    virtual = dirs.select(
        path=pl.col("dir") + "/__init__.py",
        dotted=pl.col("dir").str.replace_all("/", "."),
        pyi=pl.lit(True),
    )
    allm = pl.concat([real, virtual]).sort("dotted", "pyi", "path")
    allm = allm.unique("dotted", keep="first", maintain_order=True).select("dotted", mpath="path")
    src = allm.filter(pl.col("dotted").str.starts_with("src.")).with_columns(
        pl.col("dotted").str.slice(4)
    )
    return pl.concat([allm, src]).unique("dotted", keep="first", maintain_order=True)


def _submodules(modules: pl.DataFrame) -> pl.DataFrame:
    """A package's attribute named after each of its submodules holds that module."""
    sub = modules.filter(pl.col("dotted").str.contains(".", literal=True)).with_columns(
        parent=pl.col("dotted").str.replace(r"\.[^.]+$", ""),
        last=pl.col("dotted").str.extract(r"([^.]+)$", 1),
    )
    return sub.join(
        modules.select(parent="dotted", ppath="mpath"), on="parent", how="inner"
    ).select(dst=pl.col("ppath") + "|" + pl.col("last"), value="mpath")


def _imports(
    imports: pl.DataFrame,
    alls: pl.DataFrame,
    flows: pl.DataFrame,
    modules: pl.DataFrame,
    defs: pl.DataFrame,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Import bindings as flows (src: a module's slot) and constants (value: a module, or
    `x:` for one outside the repository), and `from m import *` as flows per exported name."""
    rows = imports.select(
        scope="src", var="name", module="receiver", iname="scope", root="alias"
    ).join(modules, left_on="module", right_on="dotted", how="left")
    plain = rows.filter(pl.col("iname").is_null())
    consts = plain.select(
        src=pl.lit(None, pl.String), dst="var", value=pl.coalesce("mpath", pl.lit(EXTERNAL))
    )
    named = rows.filter(pl.col("iname").is_not_null() & (pl.col("iname") != "*"))
    from_slot = named.filter(pl.col("mpath").is_not_null()).select(
        src=pl.col("mpath") + "|" + pl.col("iname"), dst="var", value=pl.lit(None, pl.String)
    )
    sub = named.with_columns(subdotted=pl.col("module") + "." + pl.col("iname")).join(
        modules.rename({"mpath": "subpath"}), left_on="subdotted", right_on="dotted", how="inner"
    )
    sub_consts = sub.select(src=pl.lit(None, pl.String), dst="var", value="subpath")
    external = named.filter(pl.col("mpath").is_null()).select(
        src=pl.lit(None, pl.String), dst="var", value=pl.lit(EXTERNAL)
    )
    out = pl.concat([consts, from_slot, sub_consts, external])
    stars = rows.filter((pl.col("iname") == "*") & pl.col("mpath").is_not_null()).select(
        importer="scope", exporter="mpath"
    )
    return out, _star_flows(stars, alls, flows, out, defs)


def _star_flows(
    stars: pl.DataFrame,
    alls: pl.DataFrame,
    flows: pl.DataFrame,
    imports: pl.DataFrame,
    defs: pl.DataFrame,
) -> pl.DataFrame:
    """`from m import *`: the importer's slot of each name m exports (its `__all__`, else its
    public names: what it assigns, imports, defines or star-imports itself) takes m's slot."""
    if stars.is_empty():
        return pl.DataFrame(schema={"src": pl.String, "dst": pl.String})
    top = defs.filter(~pl.col("parent").str.contains("::", literal=True))
    keys = pl.concat(
        [
            flows.select(key="name"),
            imports.select(key="dst"),
            top.select(key=pl.col("parent") + "|" + pl.col("label")),
        ]
    ).unique()
    own = keys.select(
        module=pl.col("key").str.extract(r"^([^|:]+\.pyi?)\|", 1),
        name=pl.col("key").str.extract(r"^[^|:]+\.pyi?\|([A-Za-z_]\w*)$", 1),
    ).drop_nulls()
    listed = alls.select(module="path", name="name").unique()
    has_all = listed.select("module").unique()
    public = own.filter(~pl.col("name").str.starts_with("_")).join(has_all, on="module", how="anti")
    exported = pl.concat([listed, public]).unique()
    total = pl.DataFrame(schema={"importer": pl.String, "name": pl.String, "exporter": pl.String})
    for _ in range(16):  # chains of star imports
        got = stars.join(exported, left_on="exporter", right_on="module", how="inner").select(
            "importer", "name", "exporter"
        )
        new = got.join(total, on=["importer", "name", "exporter"], how="anti")
        if new.is_empty():
            break
        total = pl.concat([total, new])
        more = new.select(module="importer", name="name").join(has_all, on="module", how="anti")
        more = more.filter(~pl.col("name").str.starts_with("_"))
        exported = pl.concat([exported, more]).unique()
    return total.select(
        src=pl.col("exporter") + "|" + pl.col("name"),
        dst=pl.col("importer") + "|" + pl.col("name"),
    ).unique()


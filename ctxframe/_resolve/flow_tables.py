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

from ctxframe._core import callbacks as _callbacks
from ctxframe._core import facts as F
from ctxframe._core.frames import string_lists
from ctxframe._core.paths import is_test_path_expr
from ctxframe._resolve.roots import source_roots

SEED = 0x5EED
# value kinds
FUNC, CLASS, MODULE, INST, SUPER, BOUND, GEN, CONT, LIT, BINST, BFUNC, EXT, OPEN, WRAP = range(
    1, 15
)
# INST (`i:C`) is an instance of C itself (made by calling C); OPEN (`o:C`) one of C or of any
# subclass (a method's `self`, a declared type): its members are looked up down the subclasses too.
# WRAP (`w:F`) stands beside a transparent decorator's wrapper for the function F it calls
# through: inert to every rule, it makes a call of the decorated name an edge to F too
_PREFIX_KIND = {"i": INST, "s": SUPER, "m": BOUND, "g": GEN, "c": CONT, "k": LIT, "b": BINST,
                "B": BFUNC, "x": EXT, "o": OPEN}  # fmt: skip
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
    access: pl.DataFrame  # src, path, line, receiver, base, name, name_h, how (F.ACCESS)
    props: pl.DataFrame  # f, owner, name_h, how: a property's getter, setter or deleter
    uses: pl.DataFrame  # src, dst, name, path, line: a test or fixture -> each fixture it asks for
    through: pl.DataFrame  # w, f: a function nested in f that calls one of f's parameters
    ext_attrs: pl.DataFrame  # owner, name_h, value: an outside name's attribute (callbacks)
    ext_returns: pl.DataFrame  # v, pos: an outside callable returning a call of its argument
    bases: pl.DataFrame  # cls, base, pos, name
    values: pl.DataFrame  # v, vs, vk, vt, test (defined in a test file), ...
    slots: pl.DataFrame  # owner, name_h, slot
    elems: pl.DataFrame  # cont, key, slot
    named: pl.DataFrame  # owner, name_h, node: every node `owner|name` of the facts


@dataclass
class Context:
    """What one file's tables read of the whole repository: its modules (by dotted name) and
    the names of its methods (an implicit member run naming none is dropped)."""

    modules: pl.DataFrame
    members: pl.DataFrame | None


def context(files: pl.DataFrame, defs: pl.DataFrame) -> Context:
    """The repository's Context from its indexed files and Python definitions."""
    return Context(_modules(files), _members(defs))


def build(
    facts: pl.DataFrame,
    defs: pl.DataFrame,
    files: pl.DataFrame,
    ctx: Context | None = None,
    whole: bool = True,
) -> Tables:
    """The solver's tables from the facts (refs of kind `v.*` and Python's `call` refs), the
    Python definitions (id, kind, label, parent) and the indexed files (path, language).

    Every row but a few comes from one file's facts alone, given the Context: `whole=False`
    makes only those (of the files whose facts and definitions are given: an incremental
    solve diffs one file's rows). The rest need every file: `from m import *` (what m
    exports), pytest's fixtures (the nearest one of a name), a package's submodules, and the
    outside names the callback table knows."""
    parts = facts.partition_by("kind", as_dict=True)
    empty = facts.clear()
    of = {kind: parts.get((kind,), empty) for kind in (*F.KINDS, "call")}
    ctx = context(files, defs) if ctx is None else ctx
    modules = ctx.modules
    params = _params(of[F.PARAM])
    imports, star_flows = _imports(of[F.IMPORT], of[F.ALL], of[F.FLOW], modules, defs, whole)
    fixture_flows, uses = _fixtures(of[F.FIXTURE] if whole else empty, params, defs, modules)
    # what the implicit runs read counts whatever the names (an edit elsewhere may add a
    # method of the name); the runs kept are those that may reach a definition
    every_access = _accesses(of[F.ACCESS], None)
    access = _accesses(of[F.ACCESS], ctx.members)
    flows = pl.concat(
        [
            of[F.FLOW].select(src="receiver", dst="name"),
            _bindings(defs, of[F.REBOUND]),
            _receivers(params, defs),
            imports.filter(pl.col("src").is_not_null()).select("src", "dst"),
            star_flows,
            fixture_flows,
        ]
    )
    consts = imports.filter(pl.col("src").is_null()).select("dst", "value")
    if whole:
        consts = pl.concat([consts, _submodules(modules)])
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
            every_access.select(s="receiver"),
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
        [  # `=V` holds V wherever it is written (`pure`); a binding's constant is its file's
            strings.select(n=H(pl.col("s")), v=H(pl.col("s").str.slice(1)), pure=pl.lit(True)),
            consts.select(n=H(pl.col("dst")), v=H(pl.col("value")), pure=pl.lit(False)),
        ]
    ).unique(["n", "v"], keep="first", maintain_order=True)
    slot_keys = pl.concat([flows.select(key="dst"), consts.select(key="dst")]).unique()
    # an expression on a constant (`"".join`, `str(…)`) is the same node in every file that
    # writes it: its rows are `pure`, a function of their strings, whichever file made them
    exprs = exprs.with_columns(node=H(pl.col("node")), parent=H(pl.col("parent")),
                               pure=pl.col("node").str.starts_with("="))  # fmt: skip
    hashed = flows.select(src=H(pl.col("src")), dst=H(pl.col("dst"))).unique()
    args = args.select(call=H(pl.col("call")), arg=H(pl.col("arg")), pos="pos", kw="kw")
    shapes = shapes.with_columns(call=H(pl.col("call")), pure=pl.col("call").str.starts_with("="))
    named = pl.concat([roots, read, slot_keys.select(s="key"),
                       of[F.FLOW_INFERRED].select(s="name")])  # fmt: skip
    # Independent tables, made in threads while this one goes on (Polars lets go of the GIL).
    with ThreadPoolExecutor(max_workers=2) as pool:
        later = {
            "named": pool.submit(_named, named),
            "values": pool.submit(_values, defs, strings, modules, params, whole),
            "slots": pool.submit(_slots, slot_keys),
            "elems": pool.submit(_elems, slot_keys),
        }
        tables = _tables(of, exprs, hashed, args, slot_keys, defs, params, seeds, site_rows,
                         every_access)  # fmt: skip
    kept = _decorated_classes(defs, of[F.REBOUND])
    named_attrs = _callbacks.attributes().select(
        owner=H(pl.col("owner")), name_h=H(pl.col("name")), value=H(pl.col("value"))
    )
    outs = _callbacks.returns().select(v=H(pl.lit("x:") + pl.col("callable")), pos="pos")
    return Tables(**tables, shapes=shapes, kept=kept, uses=uses, ext_attrs=named_attrs,
                  ext_returns=outs,
                  through=_calls_through(tables["sites"], params, defs),
                  access=access.with_columns(base=H(pl.col("receiver")), name_h=H(pl.col("name"))),
                  props=_properties(of[F.PROPERTY], defs),
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


def _tables(of, exprs, hashed, args, slot_keys, defs, params, seeds, site_rows, access) -> dict:
    """The tables `build` makes in its own thread."""
    step = pl.col("step")
    live = _live(of, exprs, hashed, args, slot_keys, defs, access)
    # what one file's facts read decides what is live, but for a `pure` node (any file's)
    alive = pl.col("dst").is_in(live.implode()) | pl.col("pure")
    return dict(
        flows=hashed.filter(pl.col("dst").is_in(live.implode())),
        inferred=of[F.FLOW_INFERRED].select(src=H(pl.col("receiver")), dst=H(pl.col("name"))),
        seeds=seeds,
        attrs=_steps(exprs, ".").filter(alive),
        calls=exprs.filter(step.str.starts_with("(")).select(
            callee="parent",
            dst="node",
            live=pl.col("node").is_in(live.implode()) | "pure",
            pure="pure",
        ),
        subs=_subscripts(exprs).filter(alive),
        iters=exprs.filter(step == "*")
        .select(base="parent", dst="node", pure="pure")
        .filter(alive),
        instof=exprs.filter(step == "!")
        .select(base="parent", dst="node", pure="pure")
        .filter(alive),
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


def _live(of: dict, exprs, flows, args, slot_keys, defs, access) -> pl.Series:
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
    parts.append(access.select(H(pl.col("receiver"))).to_series())  # implicit calls read them
    return pl.concat([p.cast(pl.UInt64).rename("n") for p in parts]).unique()


def _calls_through(sites: pl.DataFrame, params: pl.DataFrame, defs: pl.DataFrame) -> pl.DataFrame:
    """(w, f) hashes: a function w nested in f that calls a parameter of f — a decorator's
    wrapper calling the function it wraps."""
    nodes = params.select("f", node=H(pl.col("f") + "|" + pl.col("pname")))
    calling = sites.select("src", "callee").join(nodes, left_on="callee", right_on="node")
    nested = calling.filter(pl.col("src").str.starts_with(pl.col("f") + "."))
    funcs = defs.filter(pl.col("kind").is_in(["function", "method"])).select("id")
    return (
        nested.join(funcs, left_on="src", right_on="id", how="semi")
        .select(w=H(pl.col("src")), f=H(pl.col("f")))
        .unique()
    )


def _members(defs: pl.DataFrame) -> pl.DataFrame:
    """(name): every method's name in the repository, and the dunders a truth test and
    `format()` fall back from (`__bool__` for `__len__`, `__format__` for `__str__`)."""
    members = defs.filter(pl.col("kind") == "method").select(name="label").unique()
    return pl.concat(
        [
            members,
            members.filter(pl.col("name").is_in(["__len__", "__str__"])).select(
                name=pl.col("name").replace({"__len__": "__bool__", "__str__": "__format__"})
            ),
        ]
    ).unique()


def _accesses(rows: pl.DataFrame, members: pl.DataFrame | None) -> pl.DataFrame:
    """The implicit member runs (F.ACCESS) that may reach a definition: those naming a method
    of some class of the repository (a property is one), or a prefix of members' names
    (every one when `members` is None)."""
    named = rows.filter(pl.col("alias") != "prefix")
    if members is not None:
        named = named.join(members, on="name", how="semi")
    keep = ["src", "path", "line", "receiver", "name", pl.col("alias").alias("how")]
    return pl.concat([named.select(keep), rows.filter(pl.col("alias") == "prefix").select(keep)])


def _properties(rows: pl.DataFrame, defs: pl.DataFrame) -> pl.DataFrame:
    """(f, owner, name_h, how) per property function (F.PROPERTY) defined in a class."""
    classes = defs.filter(pl.col("kind") == "class").select(owner="id")
    return (
        rows.select(f="src", name="name", how="alias")
        .join(defs.select(f="id", owner="parent"), on="f")
        .join(classes, on="owner", how="semi")
        .select("f", owner=H(pl.col("owner")), name_h=H(pl.col("name")), how="how")
    )


def _fixtures(
    fixtures: pl.DataFrame, params: pl.DataFrame, defs: pl.DataFrame, modules: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """pytest's fixtures as values: a test's or a fixture's parameter named after a fixture it
    can see (its own module's, else the nearest `conftest.py` up its directories, or a module
    `pytest_plugins` names) holds what the fixture returns or yields, as does
    `request.getfixturevalue(name)`; `usefixtures(name)` asks for one too. Flows (src, dst),
    and a `uses` edge per request."""
    edge_schema = {"src": pl.String, "dst": pl.String, "name": pl.String, "path": pl.String,
                   "line": pl.Int32}  # fmt: skip
    no_flows = pl.DataFrame(schema={"src": pl.String, "dst": pl.String})
    defined = fixtures.filter(pl.col("alias").is_in(["yield", "return"]))
    if defined.is_empty():
        return no_flows, pl.DataFrame(schema=edge_schema)
    plugins = fixtures.filter(pl.col("alias") == "plugins").join(
        modules, left_on="name", right_on="dotted"
    )["mpath"].unique()
    path_of = pl.col("f").str.extract(r"^(.*?)::", 1)
    fx = defined.select(
        fid="src", pname="name", how="alias", fpath=pl.col("path"),
        fdir=pl.col("path").str.extract(r"^(.*)/[^/]*$", 1).fill_null(""),
        conftest=pl.col("path").str.contains(r"(^|/)conftest\.py$")
        | pl.col("path").is_in(plugins.implode()),
    ).with_columns(  # a plugin module's fixtures are seen everywhere
        fdir=pl.when(pl.col("fpath").is_in(plugins.implode())).then(pl.lit(""))
        .otherwise(pl.col("fdir"))
    )  # fmt: skip
    tests = defs.filter(pl.col("label").str.starts_with("test"))
    params_asked = (
        params.filter(~pl.col("pkind").is_in(["self", "cls", "*", "**"]))
        .join(defs.select(f="id", label="label"), on="f")
        .filter(
            pl.col("label").str.starts_with("test") | pl.col("f").is_in(defined["src"].implode())
        )
        .select("f", "pname", dst=pl.col("f") + "|" + pl.col("pname"))
    )
    marked = fixtures.filter(pl.col("alias") == "use").select(f="src", pname="name")
    on_class = marked.join(tests.select(f="parent", m="id"), on="f").select(f="m", pname="pname")
    used = pl.concat([marked, on_class]).with_columns(dst=pl.lit(None, pl.String))
    valued = fixtures.filter(pl.col("alias") == "value").select(
        f="src", pname="name", dst="receiver"
    )
    asking = pl.concat([params_asked, used, valued]).with_columns(path=path_of)
    seen = asking.join(fx, on="pname").filter(
        (pl.col("fid") != pl.col("f"))
        & (
            (pl.col("fpath") == pl.col("path"))
            | (pl.col("conftest") & ((pl.col("fdir") == "")
                                     | pl.col("path").str.starts_with(pl.col("fdir") + "/")))
        )
    )  # fmt: skip
    near = (
        pl.when(pl.col("fpath") == pl.col("path"))
        .then(1 << 20)
        .otherwise(pl.col("fdir").str.len_chars())
    )
    best = (
        seen.with_columns(near=near)
        .sort("near", "fid", descending=[True, False])
        .unique(["f", "pname", "dst"], keep="first", maintain_order=True)
    )
    value = pl.col("fid") + pl.when(pl.col("how") == "yield").then(pl.lit("|*")).otherwise(
        pl.lit("|()")
    )
    flows = best.filter(pl.col("dst").is_not_null()).select(src=value, dst="dst")
    lines = defs.select(f="id", line="line_start") if "line_start" in defs.columns else None
    uses = best.select(src="f", dst="fid", name="pname", path="path").unique()
    uses = (
        uses.join(lines.rename({"f": "src"}), on="src", how="left")
        if lines is not None
        else uses.with_columns(line=pl.lit(None, pl.Int32))
    )
    return flows, uses.select(list(edge_schema)).cast(edge_schema)


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
    """A method's bound first parameter holds an instance of its class or of a subclass (`cls`:
    the class)."""
    first = params.filter(pl.col("pkind").is_in(["self", "cls"])).join(
        defs.select(f="id", cls="parent"), on="f"
    )
    value = pl.when(pl.col("pkind") == "self").then(pl.lit("=o:") + pl.col("cls"))
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
    return rows.select(base="parent", name=name, name_h=H(name), dst="node", pure="pure")


def _subscripts(exprs: pl.DataFrame) -> pl.DataFrame:
    rows = exprs.filter(pl.col("step").str.starts_with("["))
    key = pl.col("step").str.slice(1, pl.col("step").str.len_chars() - 2)
    dyn = key.str.starts_with("@")
    return rows.select(
        base="parent",
        key=pl.when(dyn).then(None).otherwise(key),
        keynode=pl.when(dyn).then(H(key.str.slice(1))),
        dst="node",
        pure="pure",
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
    defs: pl.DataFrame,
    strings: pl.DataFrame,
    modules: pl.DataFrame,
    params: pl.DataFrame,
    whole: bool = True,
) -> pl.DataFrame:
    """Every value: id `v`, string `vs`, kind `vk`, target `vt` (the definition or class it is
    about), and what the rules read of it: `ret`/`yld` (a function's return and yield nodes),
    `inst` (a class's instance), `bound` (a method's bound form), `res` (what calling a
    builtin or outside value gives), `kh` (a literal as a subscript key)."""
    callable_ = defs.filter(pl.col("kind").is_in(["function", "method", "lambda"]))
    classes = defs.filter(pl.col("kind") == "class")
    # bound when read through an instance: a method whose first parameter is `self`/`cls`, or
    # one whose parameters nothing reads (no row says which; binding its arguments is moot)
    bound = pl.concat(
        [
            params.filter(pl.col("pkind").is_in(["self", "cls"])).select(id="f"),
            defs.filter(pl.col("kind") == "method")
            .join(params.select(id="f"), on="id", how="anti")
            .select("id"),
        ]
    ).unique()
    rows = [
        callable_.select(vs="id", vk=pl.lit(FUNC), t="id"),
        classes.select(vs="id", vk=pl.lit(CLASS), t="id"),
        classes.select(vs=pl.lit("i:") + pl.col("id"), vk=pl.lit(INST), t="id"),
        classes.select(vs=pl.lit("o:") + pl.col("id"), vk=pl.lit(OPEN), t="id"),
        callable_.select(vs=pl.lit("w:") + pl.col("id"), vk=pl.lit(WRAP), t="id"),
        classes.select(vs=pl.lit("s:") + pl.col("id"), vk=pl.lit(SUPER), t="id"),
        bound.select(vs=pl.lit("m:") + pl.col("id"), vk=pl.lit(BOUND), t="id"),
    ]
    if whole:  # the repository's own: every module, `x:`, the outside names the table knows
        rows.append(modules.select(vs="mpath", vk=pl.lit(MODULE), t="mpath").unique())
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
    named = _callbacks.values()  # outside names the callback table tells apart
    if whole:
        schema = {"vs": pl.String, "vk": pl.Int64, "t": pl.String}
        rows.append(pl.DataFrame({"vs": [EXTERNAL], "vk": [EXT], "t": [None]}, schema=schema))
        rows.append(named.select("vs", vk=pl.lit(EXT, pl.Int64), t=pl.lit(None, pl.String)))
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
        open=pl.when(vk == CLASS).then(H(pl.lit("o:") + vs)),
        wrap=pl.when(vk == FUNC).then(H(pl.lit("w:") + vs)),
        bound=pl.when((vk == FUNC) & has_bound).then(H(pl.lit("m:") + vs)),
        res=pl.when(vk == BFUNC)
        .then(H(vs.str.slice(2).replace_strict(_BUILTIN_RESULT, default=EXTERNAL)))
        .when(vk == EXT)
        .then(H(vs.replace_strict(named["vs"], named["res"], default=EXTERNAL))),
        kh=pl.when(vk == LIT).then(H(vs.str.slice(2))),
        test=in_tests(vs),
    )


# -- modules -----------------------------------------------------------------------------------


def _modules(files: pl.DataFrame) -> pl.DataFrame:
    """(dotted, mpath, root): every Python module and package of the repository under each
    source root above it (ctxframe._resolve.roots: a project's or a top-level package's
    parent, and the repository's root, ""); a package without `__init__.py` gets a virtual
    one. A `src/` layout also answers without its prefix."""
    py = files.filter(pl.col("language") == "python").select("path")
    declared = source_roots(files["path"])
    real = py.with_columns(pyi=pl.col("path").str.ends_with(".pyi"))
    dirs = (
        py.select(parts=pl.col("path").str.split("/"))
        .with_columns(n=pl.col("parts").list.len() - 1)
        .filter(pl.col("n") > 0)
        .with_columns(i=pl.int_ranges(1, pl.col("n") + 1))
        .explode("i")
        .select(dir=pl.col("parts").list.slice(0, pl.col("i")).pipe(string_lists).list.join("/"))
        .unique()
    )
    virtual = dirs.select(path=pl.col("dir") + "/__init__.py", pyi=pl.lit(True))
    every = pl.concat([real, virtual])
    # each module under each directory above it: the path below it, dotted; `declared` when
    # that directory is a source root, `package` when the name's head is a package there
    under = (
        every.with_columns(_parts=pl.col("path").str.split("/"))
        .with_columns(_i=pl.int_ranges(0, pl.col("_parts").list.len()))
        .explode("_i")
        .with_columns(root=pl.col("_parts").list.head(pl.col("_i")).pipe(string_lists).list.join("/"))
        .with_columns(
            declared=pl.col("root").is_in(declared.implode()),
            package=pl.col("_parts").list.len() - pl.col("_i") > 1,
        )
        .filter(pl.col("declared") | pl.col("package"))
        .with_columns(
            rel=pl.when(pl.col("root") == "")
            .then(pl.col("path"))
            .otherwise(pl.col("path").str.slice(pl.col("root").str.len_chars() + 1))
        )
        .with_columns(
            dotted=pl.col("rel")
            .str.replace(r"\.pyi?$", "")
            .str.replace(r"(^|/)__init__$", "")
            .str.replace_all("/", ".")
        )
        .filter(pl.col("dotted") != "")
    )
    allm = (
        under.sort("root", "dotted", "pyi", "path")
        .unique(["root", "dotted"], keep="first", maintain_order=True)
        .select("dotted", mpath="path", root="root", declared="declared")
    )
    src = allm.filter(
        (pl.col("root") == "") & pl.col("dotted").str.starts_with("src.")
    ).with_columns(pl.col("dotted").str.slice(4))
    return pl.concat([allm, src]).unique(["root", "dotted"], keep="first", maintain_order=True)


def _submodules(modules: pl.DataFrame) -> pl.DataFrame:
    """A package's attribute named after each of its submodules holds that module."""
    sub = modules.filter(pl.col("dotted").str.contains(".", literal=True)).with_columns(
        parent=pl.col("dotted").str.replace(r"\.[^.]+$", ""),
        last=pl.col("dotted").str.extract(r"([^.]+)$", 1),
    )
    return (
        sub.join(modules.select("root", parent="dotted", ppath="mpath"), on=["root", "parent"])
        .filter(pl.col("ppath") != pl.col("mpath"))
        .select(dst=pl.col("ppath") + "|" + pl.col("last"), value="mpath")
        .unique()
    )


def _imports(
    imports: pl.DataFrame,
    alls: pl.DataFrame,
    flows: pl.DataFrame,
    modules: pl.DataFrame,
    defs: pl.DataFrame,
    whole: bool = True,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Import bindings as flows (src: a module's slot) and constants (value: a module, or
    `x:` for one outside the repository), and `from m import *` as flows per exported name."""
    rows = _nearest(
        imports.select(scope="src", var="name", module="receiver", iname="scope", root="alias"),
        modules,
        "module",
    )
    plain = rows.filter(pl.col("iname").is_null())
    head = pl.when(pl.col("root") == "root").then(pl.col("module").str.extract(r"^([^.]+)", 1))
    consts = plain.select(
        src=pl.lit(None, pl.String), dst="var",
        value=pl.coalesce("mpath", _callbacks.identity(head.otherwise(pl.col("module")))),
    )  # fmt: skip
    named = rows.filter(pl.col("iname").is_not_null() & (pl.col("iname") != "*"))
    from_slot = named.filter(pl.col("mpath").is_not_null()).select(
        src=pl.col("mpath") + "|" + pl.col("iname"), dst="var", value=pl.lit(None, pl.String)
    )
    sub = (
        _nearest(
            named.with_columns(subdotted=pl.col("module") + "." + pl.col("iname")).drop("mpath"),
            modules,
            "subdotted",
        )
        .filter(pl.col("mpath").is_not_null())
        .rename({"mpath": "subpath"})
    )
    sub_consts = sub.select(src=pl.lit(None, pl.String), dst="var", value="subpath")
    external = named.filter(pl.col("mpath").is_null()).select(
        src=pl.lit(None, pl.String), dst="var",
        value=_callbacks.identity(pl.col("module") + "." + pl.col("iname")),
    )  # fmt: skip
    out = pl.concat([consts, from_slot, sub_consts, external])
    stars = rows.filter((pl.col("iname") == "*") & pl.col("mpath").is_not_null()).select(
        importer="scope", exporter="mpath"
    )
    if not whole:
        stars = stars.clear()
    return out, _star_flows(stars, alls, flows, out, defs)


def _nearest(rows: pl.DataFrame, modules: pl.DataFrame, col: str) -> pl.DataFrame:
    """`rows` with `mpath`: the module `col` names as the importer's own source root reads it,
    else as the repository's root does, else under any root (null: outside the repository).
    The importer is the file of `scope`."""
    rows = rows.with_row_index("_row").with_columns(_file=pl.col("scope").str.replace(r"::.*$", ""))
    mine = (pl.col("root") == "") | pl.col("_file").str.starts_with(pl.col("root") + "/")
    hits = (
        rows.select("_row", col, "_file")
        .join(modules, left_on=col, right_on="dotted")
        .filter(mine | pl.col("declared"))
        .with_columns(
            _rank=pl.when(mine).then(0).otherwise(1), _deep=pl.col("root").str.len_chars()
        )
        .sort("_row", "_rank", "_deep", "mpath", descending=[False, False, True, False])
        .unique("_row", keep="first")
        .select("_row", "mpath")
    )
    return rows.join(hits, on="_row", how="left").drop("_row", "_file")


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

"""Library code that calls back into the repository (the table in callbacks.toml): read by
the extraction (the builtins whose arguments are kept) and by the resolver.

The value flow gives the names in the table an identity: `x:threading.Thread` instead of the
one `x:` that stands for everything outside the repository (every prefix too, `x:threading`,
so `import threading; threading.Thread` reaches it), and an instance of a library class in
the table is `xi:werkzeug.test.Client`. After the solve, `edges` links each call the table
describes: the function (or the member of an instance) handed to `threading.Thread(target=)`,
to `map`, to `CliRunner().invoke(cli)`, and the application a test client was given, called
back from `client.get(...)`.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

_TABLE = Path(__file__).with_name("callbacks.toml")


@cache
def table() -> dict:
    with open(_TABLE, "rb") as fh:
        return tomllib.load(fh)


def _args(spec: list) -> list[tuple[int | None, str | None]]:
    return [(a, None) if isinstance(a, int) else (None, a) for a in spec]


def calls() -> pl.DataFrame:
    """(callable, pos, kw, member): a call of `callable` calls its argument there."""
    import polars as pl

    rows = [(c["callable"], p, k, c.get("member"))
            for c in table().get("call", ()) for p, k in _args(c["args"])]  # fmt: skip
    schema = {"callable": pl.String, "pos": pl.Int32, "kw": pl.String, "member": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")


@cache
def builtin_callers() -> frozenset[str]:
    """Builtins that call an argument (`map`, `sorted(key=)`): their calls keep their
    arguments as facts."""
    return frozenset(c["callable"][9:] for c in table().get("call", ())
                     if c["callable"].startswith("builtins."))  # fmt: skip


def returns() -> pl.DataFrame:
    """(callable, pos): a call of `callable` returns its argument, or what calls it."""
    import polars as pl

    rows = [(r["callable"], r["arg"]) for r in table().get("returns", ())]
    return pl.DataFrame(rows, schema={"callable": pl.String, "pos": pl.Int32}, orient="row")


def clients() -> pl.DataFrame:
    """(cls, method, pos, kw, member): `method` of an instance of `cls` calls back `member`
    of what its constructor got there."""
    import polars as pl

    rows = [(c["class"], m, p, k, c["member"]) for c in table().get("client", ())
            for m in c["methods"] for p, k in _args(c["args"])]  # fmt: skip
    schema = {"cls": pl.String, "method": pl.String, "pos": pl.Int32, "kw": pl.String,
              "member": pl.String}  # fmt: skip
    return pl.DataFrame(rows, schema=schema, orient="row")


def overridable() -> pl.DataFrame:
    """(cls, method, member): `method` of an instance of a repository class extending `cls`
    calls that class's own override of `member`."""
    import polars as pl

    rows = [(c["class"], m, o) for c in table().get("client", ())
            for m in c["methods"] for o in c.get("overridable", ())]  # fmt: skip
    schema = {"cls": pl.String, "method": pl.String, "member": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")


@cache
def classes() -> frozenset[str]:
    """Library classes whose instances the table follows (clients, owners of methods)."""
    owners = {c["callable"].rsplit(".", 1)[0] for c in table().get("call", ())
              if _is_method(c["callable"])}  # fmt: skip
    return frozenset(owners | {c["class"] for c in table().get("client", ())})


def _is_method(name: str) -> bool:
    """`pkg.mod.Class.method`: a method when its owner is spelt like a class."""
    owner = name.rsplit(".", 1)[0].rsplit(".", 1)[-1]
    return owner[:1].isupper()


@cache
def names() -> frozenset[str]:
    """Every dotted name the value flow tells apart, and every prefix of one."""
    full = {c["callable"] for c in table().get("call", ())}
    full |= {r["callable"] for r in table().get("returns", ())}
    full |= {f"{c['class']}.{m}" for c in table().get("client", ()) for m in c["methods"]}
    full |= classes()
    out = set()
    for n in full:
        if n.startswith("builtins."):
            continue
        parts = n.split(".")
        out |= {".".join(parts[: i + 1]) for i in range(len(parts))}
    return frozenset(out)


def values() -> pl.DataFrame:
    """(vs, res): the values with an identity (`x:NAME`, `xi:CLASS`) and what calling each
    gives: an instance for a class of the table, else anything outside (`x:`)."""
    import polars as pl

    ns = sorted(names())
    cls = classes()
    rows = [(f"x:{n}", f"xi:{n}" if n in cls else "x:") for n in ns]
    rows += [(f"xi:{c}", "x:") for c in sorted(cls)]
    return pl.DataFrame(rows, schema={"vs": pl.String, "res": pl.String}, orient="row")


def attributes() -> pl.DataFrame:
    """(owner, name, value): `x:a.b` has `c` = `x:a.b.c`; an instance `xi:C` has each method
    the table names, `x:C.method`."""
    import polars as pl

    ns = names()
    rows = [(f"x:{n.rsplit('.', 1)[0]}", n.rsplit(".", 1)[1], f"x:{n}") for n in ns if "." in n]
    rows += [(f"xi:{n.rsplit('.', 1)[0]}", n.rsplit(".", 1)[1], f"x:{n}") for n in ns
             if n.rsplit(".", 1)[0] in classes()]  # fmt: skip
    return pl.DataFrame(rows, schema={"owner": pl.String, "name": pl.String, "value": pl.String},
                        orient="row").unique()  # fmt: skip


def identity(dotted: pl.Expr) -> pl.Expr:
    """An outside name's value: `x:NAME` when the table tells it apart, else `x:`."""
    import polars as pl

    known = pl.Series(sorted(names()), dtype=pl.String).implode()
    return pl.when(dotted.is_in(known)).then(pl.lit("x:") + dotted).otherwise(pl.lit("x:"))

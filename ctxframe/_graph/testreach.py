"""Which tests run what: per test file, the code its test functions reach along calls.

A forward walk from each test file's test functions (pytest's `test*` functions and methods,
unittest's `test*`/`runTest`; every function of a test file that has none), along `calls`
edges to any depth, all test files at once. A call that runs on an instance made elsewhere
(the edge's `bound`: a method read through an instance, a property, a dunder) is followed only
once the walk has made an instance of the method's class or of a subclass — Rapid Type
Analysis per test file: a base class's `self.render()` reaches the overrides of the classes
that test made, not every override in the repository. Instances count wherever they are made:
in the test's own calls, in the fixtures it asks for (`uses`) and their calls, in a test
class's `setUp*`, and at import time (module and class bodies outside the tests); what
fixtures and setup run is not counted as what the test runs (coverage.py's `test_function`
contexts do not count it either). A test module's own functions are walked into only from its
own tests, and a decorator's wrapper is walked through to the function the caller named only.
"""

from __future__ import annotations

import polars as pl

from ctxframe._core.paths import is_test_path_expr

_MADE = ("__init__", "__new__", "__post_init__")
_SETUP = r"^(setUp|setUpClass|setup_method|setup_class|setup)$"
_I64 = pl.Int64


_SHIFT = 1 << 32


def _key(t: pl.Expr, row: pl.Expr) -> pl.Expr:
    """(test file, row) as one integer: joins and membership on a single column."""
    return t.cast(_I64) * _SHIFT + row.cast(_I64)


class TestReach:
    """The (test file, node row) pairs the test functions reach, built once per graph."""

    def __init__(self, nodes: pl.DataFrame, edges: pl.DataFrame, include_ambiguous: bool = False):
        n = nodes.select(
            "id", "kind", "label", "path", "parent", row=pl.int_range(pl.len(), dtype=pl.Int32)
        )
        by_id = n.select("id", "row")
        test = is_test_path_expr("path")
        self.files = n.filter((pl.col("kind") == "file") & test).select(
            "path", t=pl.int_range(pl.len(), dtype=pl.Int32)
        )
        code = n.filter(pl.col("kind").is_in(["function", "method"]) & test).join(
            self.files, on="path"
        )
        named = code.filter(pl.col("label").str.contains(r"^(test|runTest$)"))
        bare = code.join(named.select("t").unique(), on="t", how="anti")  # no test* function
        sources = pl.concat([named, bare]).select("t", "row")
        confs = ["EXTRACTED", "INFERRED"] + (["AMBIGUOUS"] if include_ambiguous else [])
        parent = n.select("row", prow=pl.col("parent")).join(
            by_id.rename({"id": "prow", "row": "owner"}), on="prow", how="left"
        )
        kinds = n.select("row", "kind", "label")
        calls = (
            edges.filter(
                (pl.col("kind") == "calls")
                & pl.col("dst").is_not_null()
                & pl.col("confidence").is_in(confs)
            )
            .select("src", "dst", "via", bound=pl.col("bound").fill_null(False))
            .join(by_id.rename({"id": "src", "row": "s"}), on="src")
            .join(by_id.rename({"id": "dst", "row": "d"}), on="dst")
            .join(parent.rename({"row": "d"}), on="d", how="left")
            .join(kinds.rename({"row": "d"}), on="d", how="left")
        )
        # a call through a decorator's wrapper reaches the function it names (`via` "@dec");
        # the wrapper's own call of its parameter reaches every function so decorated: the
        # walk takes the first and leaves the second out
        through = calls.filter(pl.col("via").fill_null("").str.starts_with("@")).select(
            "s", wrapped="d"
        )
        wrapper = (
            calls.filter(pl.col("via").is_null())
            .select("s", w="d")
            .join(through, on="s")
            .select(s="w", d="wrapped")
            .unique()
        )
        calls = calls.join(wrapper, on=["s", "d"], how="anti")
        classes = set(n.filter(pl.col("kind") == "class")["row"].to_list())
        owner_is_class = pl.col("owner").is_in(pl.Series(sorted(classes), dtype=pl.Int32)
                                               .implode())  # fmt: skip
        # a test module's own code runs in its own tests only: a view function a test defines
        # and registers on the application is reached from another test file's request only
        # through the context-insensitive store the application keeps them in
        module = pl.col("path").str.contains(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
        home = n.filter(pl.col("kind").is_in(["function", "method", "class"])).join(
            self.files.filter(module), on="path"
        ).select(d="row", home="t")
        self._steps = (
            calls.select(
                "s", "d", owner=pl.when(pl.col("bound") & owner_is_class).then(pl.col("owner"))
            )
            .unique()
            .join(home, on="d", how="left")
        )
        # the class a call makes: a class called, or its own `__init__`/`__new__` (`via` null)
        made = (
            pl.when(pl.col("kind") == "class")
            .then(pl.col("d"))
            .when(pl.col("label").is_in(_MADE) & pl.col("via").is_null() & owner_is_class)
            .then(pl.col("owner"))
        )
        self._makes = calls.select("s", cls=made).drop_nulls().unique()
        # each class and its ancestors (an instance of a subclass runs the base's methods)
        ext = (
            edges.filter(pl.col("kind") == "extends")
            .join(by_id.rename({"id": "src", "row": "sub"}), on="src")
            .join(by_id.rename({"id": "dst", "row": "anc"}), on="dst")
            .select("sub", "anc")
            .unique()
        )
        up = pl.DataFrame({"sub": sorted(classes), "anc": sorted(classes)},
                          schema={"sub": pl.Int32, "anc": pl.Int32})  # fmt: skip
        for _ in range(64):
            more = up.join(ext.rename({"sub": "anc", "anc": "next"}), on="anc").select(
                "sub", anc="next"
            )
            grown = pl.concat([up, more]).unique()
            if grown.height == up.height:
                break
            up = grown
        self._up = up
        uses = (
            edges.filter((pl.col("kind") == "uses") & pl.col("dst").is_not_null())
            .join(by_id.rename({"id": "src", "row": "s"}), on="src")
            .join(by_id.rename({"id": "dst", "row": "d"}), on="dst")
            .select("s", "d")
        )
        # setup: the fixtures the tests ask for (and theirs), setUp methods, the module's body
        setup = pl.concat(
            [
                code.filter(pl.col("label").str.contains(_SETUP)).select("t", "row"),
                n.filter(pl.col("kind") == "file").join(self.files, on="path").select("t", "row"),
            ]
        )
        asked = sources
        for _ in range(32):
            more = asked.join(uses.rename({"s": "row"}), on="row").select("t", row="d")
            grown = pl.concat([asked, more]).unique()
            if grown.height == asked.height:
                break
            asked = grown
        setup = pl.concat([setup, asked.join(sources, on=["t", "row"], how="anti")]).unique()
        # made at import: module and class bodies outside the tests
        bodies = n.filter(pl.col("kind").is_in(["file", "class"]) & ~test).select(s="row")
        self._global = self._makes.join(bodies, on="s", how="semi").select("cls").unique()
        self.pairs = self._walk(sources, setup)

    def _allowed(self, made: pl.DataFrame) -> pl.DataFrame:
        """(t, class) pairs a test file's instances make callable: each made class's
        ancestors, and the classes made at import for every test file."""
        every = self.files.select("t").join(self._global, how="cross")
        cls = pl.concat([made.select("t", "cls"), every])
        return cls.join(self._up, left_on="cls", right_on="sub").select(
            key=_key(pl.col("t"), pl.col("anc"))
        )

    def _walk(self, sources: pl.DataFrame, setup: pl.DataFrame) -> pl.DataFrame:
        """Both walks at once, to their fixpoint: `run` from the test functions (what the
        tests run), `setup` from fixtures and setUp (what only makes instances)."""
        run = sources.select(key=_key(pl.col("t"), pl.col("row")))["key"].unique()
        prep = setup.select(key=_key(pl.col("t"), pl.col("row")))["key"].unique()
        prep = prep.filter(~prep.is_in(run.implode()))
        allowed = self._allowed(pl.DataFrame(schema={"t": pl.Int32, "cls": pl.Int32}))["key"]
        allowed = allowed.unique()
        blocked = pl.DataFrame(schema={"layer": pl.Int8, "t": _I64, "d": pl.Int32, "o": _I64})
        fr = pl.DataFrame({"key": pl.concat([run, prep]),
                           "layer": [0] * run.len() + [1] * prep.len()},
                          schema={"key": _I64, "layer": pl.Int8})  # fmt: skip
        depth = [pl.Series("depth", [0] * run.len(), dtype=pl.Int16)]
        for level in range(1, 10_000):
            if fr.is_empty():
                break
            at = fr.select("layer", t=pl.col("key") // _SHIFT,
                           s=(pl.col("key") % _SHIFT).cast(pl.Int32))  # fmt: skip
            made = at.join(self._makes, on="s").select(t=pl.col("t").cast(pl.Int32), cls="cls")
            new_allowed = (
                self._allowed(made.unique())
                .filter(~pl.col("key").is_in(allowed.implode()))["key"]
                .unique()
            )
            allowed = pl.concat([allowed, new_allowed])
            step = at.join(self._steps, on="s").filter(
                pl.col("home").is_null() | (pl.col("home") == pl.col("t"))
            ).select(
                "layer",
                "t",
                "d",
                o=pl.when(pl.col("owner").is_not_null()).then(_key(pl.col("t"), pl.col("owner"))),
            )
            ok = pl.col("o").is_null() | pl.col("o").is_in(allowed.implode())
            blocked = pl.concat([blocked, step.filter(~ok)])
            freed = blocked.filter(pl.col("o").is_in(new_allowed.implode()))
            if freed.height:
                blocked = blocked.filter(~pl.col("o").is_in(new_allowed.implode()))
            nxt = pl.concat([step.filter(ok), freed]).select(
                "layer", key=_key(pl.col("t"), pl.col("d"))
            )
            # a node the tests run leaves the setup layer; each node once per layer
            new_run = nxt.filter(pl.col("layer") == 0)["key"].unique()
            new_run = new_run.filter(~new_run.is_in(run.implode()))
            new_prep = nxt.filter(pl.col("layer") == 1)["key"].unique()
            new_prep = new_prep.filter(
                ~new_prep.is_in(prep.implode()) & ~new_prep.is_in(run.implode())
                & ~new_prep.is_in(new_run.implode())
            )  # fmt: skip
            run = pl.concat([run, new_run])
            depth.append(pl.Series("depth", [min(level, 32000)] * new_run.len(), dtype=pl.Int16))
            prep = pl.concat([prep, new_prep])
            fr = pl.concat([
                new_run.to_frame("key").with_columns(layer=pl.lit(0, pl.Int8)),
                new_prep.to_frame("key").with_columns(layer=pl.lit(1, pl.Int8)),
            ])  # fmt: skip
        return (
            run.to_frame("key")
            .with_columns(pl.concat(depth))
            .select(
                row=(pl.col("key") % _SHIFT).cast(pl.Int32),
                t=(pl.col("key") // _SHIFT).cast(pl.Int32),
                depth="depth",
            )
            .sort("row", "t")
        )

    def tests_of(self, rows: pl.Series) -> list[str]:
        """The test files whose test functions reach any of the node rows, the closest
        first (fewest calls from a test function; ties by path)."""
        return self.distances(rows)["path"].to_list()

    def distances(self, rows: pl.Series) -> pl.DataFrame:
        """(path, depth): each test file reaching the rows and the fewest calls it takes, the
        closest first. A test file close to a symbol runs it more surely: bench/testimpact.py
        measures how much."""
        hit = self.pairs.filter(pl.col("row").is_in(rows.cast(pl.Int32).implode()))
        return (
            hit.join(self.files, on="t")
            .group_by("path")
            .agg(pl.col("depth").min())
            .sort("depth", "path")
        )

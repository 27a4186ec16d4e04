"""The value flow solved again for an edit (ctxframe._resolve.flow_state) equals a full solve,
pair for pair and edge for edge; and the same facts give the same edges whatever order they
come in. Small packages of real Python, parsed for real, edited at random by hypothesis:
calls added, removed and retargeted, imports, classes, subclasses, decorators, attribute
reads and stores, across files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxframe._ingest.extract import extract_batch
from ctxframe._resolve import flow, flow_edges
from ctxframe._resolve import flow_state as fs
from ctxframe._resolve import flow_tables as ft
from ctxframe._store.build import _framed

# file -> blocks; a block is a list of variants (one variant: the block is on or off)
BLOCKS: dict[str, list[list[str]]] = {
    "pkg/__init__.py": [
        ["from pkg.base import Base\n", "from pkg.base import *\n"],
    ],
    "pkg/base.py": [
        ["__all__ = ['Base', 'helper', 'make']\n"],
        [
            "class Base:\n    kind = 'base'\n\n    def __init__(self, v=None):\n"
            "        self.v = v\n\n    def run(self, x):\n        return self.step(x)\n\n"
            "    def step(self, x):\n        return x\n"
        ],
        ["def helper(x):\n    return x\n", "def helper(x, y=None):\n    return y\n"],
        ["class Mid(Base):\n    def step(self, x):\n        return helper(x)\n"],
        ["def deco(f):\n    def inner(*a, **k):\n        return f(*a, **k)\n    return inner\n"],
        ["class Box:\n    def __call__(self, y):\n        return helper(y)\n"],
        [
            "def make():\n    return Base()\n",
            "def make():\n    return Mid()\n",
            "def make():\n    return Box()\n",
        ],
        ["class Other(Mid):\n    kind = 'other'\n", "class Other(Box):\n    pass\n"],
    ],
    "pkg/use.py": [
        [
            "from pkg.base import Base, helper\n",
            "from pkg.base import Base, Mid, helper, make, deco\n",
            "import pkg.base as b\nfrom pkg.base import Base\n",
        ],
        ["def go(o):\n    return o.run(1)\n"],
        [
            "def call_it():\n    return helper(Base())\n",
            "def call_it():\n    return make()(2)\n",
            "def call_it():\n    return go(Base())\n",
            "def call_it():\n    return b.make().step(3)\n",
        ],
        [
            "class Child(Base):\n    def step(self, x):\n        self.v = x\n"
            "        return super().step(x)\n"
        ],
        [
            "@deco\ndef wrapped(a):\n    return helper(a)\n",
            "@unknown_deco\ndef wrapped(a):\n    return helper(a)\n",
        ],
        ["def reads(o):\n    return o.v.kind\n"],
        [
            "def loop(items):\n    for it in items:\n        it.step(0)\n"
            "    return [Child(), Mid()]\n"
        ],
        ["def store(o):\n    o.extra = helper\n    return o.extra(1)\n"],
    ],
    "pkg/more.py": [
        ["from pkg.use import go, Child\n", "from pkg.use import *\n"],
        ["def again():\n    return go(Child())\n"],
        ["class Grand(Child):\n    def run(self, x):\n        return self.step(x)\n"],
        ["def attrs():\n    c = Child()\n    c.v = Grand()\n    return c.v.run(0)\n"],
        ["table = {'a': again}\n\n\ndef pick(k):\n    return table[k]()\n"],
    ],
}
_CHOICES = [(path, i) for path, blocks in BLOCKS.items() for i in range(len(blocks))]


def _render(state: dict) -> dict[str, str]:
    out = {}
    for path, blocks in BLOCKS.items():
        parts = [blocks[i][state[(path, i)] - 1] for i in range(len(blocks)) if state[(path, i)]]
        out[path] = "\n\n".join(parts)
    return out


def _extract(root: Path, paths: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    batch = _framed(extract_batch(str(root), [(p, None) for p in paths]))
    return batch.refs, batch.defs


def _files(paths: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"path": paths, "language": ["python"] * len(paths)})


def _py(facts: pl.DataFrame) -> pl.DataFrame:
    return facts.filter(pl.col("kind").str.starts_with("v.") | (pl.col("kind") == "call"))


def _same(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    cols = a.columns
    a, b = a.unique(), b.select(cols).unique()
    return (
        a.join(b, on=cols, how="anti", nulls_equal=True).is_empty()
        and b.join(a, on=cols, how="anti", nulls_equal=True).is_empty()
    )


def _exact(facts, defs, files) -> pl.DataFrame:
    cols = ["id", "kind", "label", "parent", "line_start"]
    return flow.solve(ft.build(facts, defs.select(cols), files)).exact


_state = st.fixed_dictionaries(
    {key: st.integers(0, len(BLOCKS[key[0]][key[1]])) for key in _CHOICES}
)
_edits = st.lists(st.tuples(st.sampled_from(_CHOICES), st.integers(0, 3)), min_size=1, max_size=4)


@settings(
    max_examples=int(os.environ.get("CTXFRAME_FLOW_EDITS", "10")),
    deadline=None,
    derandomize=not os.environ.get("CTXFRAME_FLOW_EDITS"),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(start=_state, edits=_edits)
def test_incremental_solve_equals_full(tmp_path_factory, start, edits) -> None:
    root = tmp_path_factory.mktemp("flowinc")
    paths = sorted(BLOCKS)
    state = dict(start)
    for path, text in _render(state).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    files = _files(paths)
    facts, defs = _extract(root, paths)
    before, flow_state = fs.solve(_py(facts), defs, files)
    for (path, block), pick in edits:
        n = len(BLOCKS[path][block])
        state[(path, block)] = pick % (n + 1)
        (root / path).write_text(_render(state)[path])
        new_facts, new_defs = _extract(root, [path])
        mine = pl.col("path") == path
        facts1 = pl.concat([facts.filter(~mine), new_facts])
        defs1 = pl.concat([defs.filter(~mine), new_defs])
        result = flow_state.update(
            [path], _py(facts.filter(mine)), defs.filter(mine), _py(new_facts), new_defs, files,
            defs1, lambda ps, f=facts1: _py(f.filter(pl.col("path").is_in(ps))),
        )  # fmt: skip
        full, fresh = fs.solve(_py(facts1), defs1, files)
        if result is None:  # a change it cannot vouch for: the caller solves everything
            flow_state = fresh
        else:
            solver = flow_state.solver
            got = solver.pairs_frame(solver.points.key)
            # an expression on a constant is a string's own: its rows stay when no file
            # writes it any more, and its values reach no other node
            pure = pl.Series(solver.N.hashes[solver.pure_nodes()], dtype=pl.UInt64).implode()
            got = got.filter(~pl.col("n").is_in(pure))
            want = _exact(_py(facts1), defs1, files).filter(~pl.col("n").is_in(pure))
            assert _same(want, got), f"pairs after {edits}"
            # the (ancestor, name) index of subclasses' slots, kept up by the edit, is the
            # one made from scratch
            down = solver.down
            kept = sorted(zip(down.key.tolist(), down["slot"].tolist(), strict=True))
            solver._down_index()
            down = solver.down
            remade = sorted(zip(down.key.tolist(), down["slot"].tolist(), strict=True))
            assert kept == remade, f"subclass slot index after {edits}"
            affected = pl.col("path").is_in(result.paths)
            mine_now = (result.calls, result.fallback, result.extends, result.unresolved)
            for name, whole, was, inc in zip(
                ("calls", "fallback", "extends", "unresolved"), full, before, mine_now,
                strict=True,
            ):  # fmt: skip
                assert _same(whole.filter(affected), inc), f"{name} after {edits}"
                assert _same(whole.filter(~affected), was.filter(~affected)), (
                    f"{name} of a file the solve left alone changed after {edits}"
                )
        facts, defs, before = facts1, defs1, full


@pytest.mark.parametrize(
    "edits",
    [
        [(("pkg/base.py", 1), 1)],  # a class in an empty package: its MRO, then its lookups
        [(("pkg/base.py", 1), 1), (("pkg/base.py", 3), 1)],  # and a subclass of it
        [(("pkg/base.py", 1), 1), (("pkg/base.py", 7), 1), (("pkg/base.py", 3), 1)],
    ],
)
def test_a_new_class_is_solved_incrementally(tmp_path_factory, monkeypatch, edits) -> None:
    """New classes (and subclasses of them) need no full solve, and equal one."""
    answers = []
    update = fs.FlowState.update

    def recorded(self, *args, **kwargs):
        result = update(self, *args, **kwargs)
        answers.append(self.stats.get("fallback") if result is None else "incremental")
        return result

    monkeypatch.setattr(fs.FlowState, "update", recorded)
    start = dict.fromkeys(_CHOICES, 0)
    test_incremental_solve_equals_full.hypothesis.inner_test(tmp_path_factory, start, edits)
    assert answers == ["incremental"] * len(edits)


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(start=_state, seed=st.integers(0, 2**31 - 1))
def test_same_facts_same_edges_in_any_order(tmp_path_factory, start, seed) -> None:
    """The facts' rows shuffled: the same pairs and the same edges."""
    root = tmp_path_factory.mktemp("floworder")
    paths = sorted(BLOCKS)
    for path, text in _render(start).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    files = _files(paths)
    facts, defs = _extract(root, paths)
    facts = _py(facts)
    shuffled = facts.sample(fraction=1.0, shuffle=True, seed=seed)
    defs2 = defs.sample(fraction=1.0, shuffle=True, seed=seed)
    assert _same(_exact(facts, defs, files), _exact(shuffled, defs2, files))
    for a, b in zip(flow_edges.python_edges(facts, defs, files),
                    flow_edges.python_edges(shuffled, defs2, files), strict=True):  # fmt: skip
        assert _same(a, b)


def test_a_state_survives_its_file(tmp_path: Path) -> None:
    """Written beside a version and read back (its hash checked); damaged, never read."""
    state = {key: 1 for key in _CHOICES}
    for path, text in _render(state).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    paths = sorted(BLOCKS)
    facts, defs = _extract(tmp_path, paths)
    _, state = fs.solve(_py(facts), defs, _files(paths))
    version = tmp_path / "v"
    version.mkdir()
    state.save(str(version))
    back = fs.load(str(version))
    assert back is not None
    arrays = [a for a in vars(back.solver).values() if isinstance(a, np.ndarray)]
    assert arrays and all(a.flags.writeable for a in arrays)  # an edit updates them in place
    assert _same(
        back.solver.pairs_frame(back.solver.points.key),
        state.solver.pairs_frame(state.solver.points.key),
    )
    data = (version / "cache" / "flow-state.pkl").read_bytes()
    (version / "cache" / "flow-state.pkl").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert fs.load(str(version)) is None


def test_a_state_an_edit_spent_answers_no_more(tmp_path: Path, monkeypatch) -> None:
    """An edit the solver cannot vouch for (Fallback) leaves it part of the way: the state
    answers None from then on and writes no file (the caller keeps a full solve's state)."""
    for path, text in _render({key: 1 for key in _CHOICES}).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    paths = sorted(BLOCKS)
    facts, defs = _extract(tmp_path, paths)
    _, state = fs.solve(_py(facts), defs, _files(paths))
    path = "pkg/base.py"
    (tmp_path / path).write_text(_render({key: 0 for key in _CHOICES})[path])
    new_facts, new_defs = _extract(tmp_path, [path])
    mine = pl.col("path") == path
    every = pl.concat([defs.filter(~mine), new_defs])

    def update():
        return state.update(
            [path], _py(facts.filter(mine)), defs.filter(mine), _py(new_facts), new_defs,
            _files(paths), every, lambda ps: _py(facts.filter(pl.col("path").is_in(ps))),
        )  # fmt: skip

    def refuse(*_a, **_k):
        raise fs.flow.Fallback("planted")

    monkeypatch.setattr(state.solver, "update", refuse)
    assert update() is None and state.stats["fallback"] == "planted"
    assert state.solver is None and update() is None
    (tmp_path / "v").mkdir()
    state.save(str(tmp_path / "v"))
    assert not (tmp_path / "v" / "cache").exists()


@pytest.mark.parametrize("damage", ["missing", "other format"])
def test_no_state_no_answer(tmp_path: Path, damage: str) -> None:
    (tmp_path / "cache").mkdir()
    if damage == "other format":
        (tmp_path / "cache" / "flow-state.json").write_text('{"format": -1}')
    assert fs.load(str(tmp_path)) is None


class _Runs:
    """A pickle that would call os.getcwd when loaded."""

    def __reduce__(self):
        import os

        return (os.getcwd, ())


def test_a_state_that_would_run_code_is_never_loaded(tmp_path: Path) -> None:
    """A store handed over by someone else: its state file, hash and key made to match, names
    a callable that is no part of a state; the load refuses it (and the index solves anew)."""
    import json
    import pickle
    import zlib

    (tmp_path / "cache").mkdir()
    data = pickle.dumps(_Runs(), protocol=5)
    (tmp_path / "cache" / "flow-state.pkl").write_bytes(data)
    key = {"format": fs.FORMAT, "code": fs._code(), "size": len(data), "head": len(data),
           "arrays": [], "crc32": zlib.crc32(data)}  # fmt: skip
    (tmp_path / "cache" / "flow-state.json").write_text(json.dumps(key))
    assert fs.load(str(tmp_path)) is None
    with pytest.raises(pickle.UnpicklingError, match=r"(os|posix)\.getcwd"):
        fs._Unpickler(__import__("io").BytesIO(data)).load()


_NAMED = {
    "a.py": "def f(x):\n    return x.runs_later()\n\n\ndef g():\n    return f(None)\n",
    "b.py": "class C:\n    def other(self):\n        return 1\n",
}


@pytest.mark.parametrize(
    "edit",
    [
        # a method of the name a call on an unknown receiver makes: matched by name elsewhere
        lambda t: t + "\n    def runs_later(self):\n        return 2\n",
        lambda t: t.replace("def other", "def runs_later"),
        lambda t: "from a import g\n" + t + "\n\ndef h():\n    return g(C().other())\n",
    ],
    ids=["new-method", "renamed-method", "import-and-call"],
)
@pytest.mark.parametrize("kept", ["in-process", "from-file"])
def test_delta_edits_equal_rebuild(tmp_path: Path, edit, kept: str) -> None:
    """A re-index solving the value flow again from the state kept with the version (this
    process's, or the file a CLI run reads: its arrays views of the bytes read) equals a
    rebuild, other files' edges matched by name included."""
    import ctxframe as cf
    from ctxframe._store import tables as _store

    repo = tmp_path / "repo"
    repo.mkdir()
    for name, text in _NAMED.items():
        (repo / name).write_text(text)
    store = str(tmp_path / "store")
    cf.index(str(repo), store=store, progress=False)
    if kept == "from-file":
        fs._MEMO.clear()
    (repo / "b.py").write_text(edit((repo / "b.py").read_text()))
    report = cf.index(str(repo), store=store, progress=False).report
    assert (report.mode, report.flow) == ("delta", "incremental")
    full = str(tmp_path / "full")
    cf.index(str(repo), store=full, rebuild=True, progress=False)
    for name in ("nodes", "edges"):
        got = _store.read_table(store, name).sort(pl.all(), nulls_last=True)
        want = _store.read_table(full, name).sort(pl.all(), nulls_last=True)
        assert got.equals(want), name

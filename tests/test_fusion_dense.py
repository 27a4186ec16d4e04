"""Fusion (`cf.rules.Fused`: reciprocal rank and weighted score fusion) and a dense rule over
an encoder the user brings (`cf.rules.Dense`), its vectors cached as Parquet in the store."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from _tree import write_tree

import ctxframe as cf
from ctxframe._rank.dense import EncoderError
from ctxframe._rank.tokens import tokenize
from ctxframe.rules import Dense, Fused

SOURCE = {
    "app/timing.py": '''
def elapsed_seconds(start, stop):
    """How long it took between two clock readings."""
    return stop - start


def parse_header(line):
    """Split a raw header line into a name and a value."""
    name, _, value = line.partition(":")
    return name.strip(), value.strip()
''',
    "app/replies.py": '''
def affirmative(answer):
    """Map a yes/no answer onto True or False."""
    return answer.lower() in ("y", "yes")


def render_table(rows):
    """Draw rows as a text table."""
    return "\\n".join(" | ".join(r) for r in rows)
''',
}

# a tiny encoder made for this test: words onto a few concepts, everything else nowhere
CONCEPTS = {
    "elapsed": 0, "duration": 0, "took": 0, "long": 0, "seconds": 0, "time": 0,
    "yes": 1, "no": 1, "boolean": 1, "agreeing": 1, "answer": 1, "affirmative": 1,
    "header": 2, "headers": 2, "table": 3, "rows": 3,
}  # fmt: skip


class Encoder:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        out = np.zeros((len(texts), 4), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in tokenize(t):
                if w in CONCEPTS:
                    out[i, CONCEPTS[w]] += 1
        return out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", SOURCE)
    cf.index(str(root), progress=False)
    return root


def _top(g: cf.Graph, text: str, rule) -> str:
    return g.rank(text, rule=rule, limit=3)["id"][0]


def test_dense_rule_bridges_words_the_code_does_not_say(repo) -> None:
    g = cf.open(str(repo))
    enc = Encoder()
    dense = Dense(encode=enc, key="concepts")
    assert _top(g, "what is the duration", dense) == "app/timing.py::elapsed_seconds"
    assert _top(g, "is the user agreeing", dense) == "app/replies.py::affirmative"
    # the default rule cannot: none of those words is in that code
    hits = g.rank("is the user agreeing", limit=3)
    assert "app/replies.py::affirmative" not in hits["id"].to_list()


def test_vectors_are_encoded_once_per_version_and_kept_in_the_store(repo) -> None:
    enc = Encoder()
    dense = Dense(encode=enc, key="concepts")
    g = cf.open(str(repo))
    g.rank("duration", rule=dense)
    n_nodes = len(enc.texts) - 1  # every node's text, then the question
    assert n_nodes >= 4
    files = list((Path(g._cache_dir) / "cache" / "vectors").glob("*.parquet"))
    assert len(files) == 1
    table = pl.read_parquet(files[0])
    assert table.columns == ["id", "hash", "vector"] and table.height == n_nodes
    enc.texts.clear()
    g2 = cf.open(str(repo))  # another process would read the same file
    g2.rank("duration", rule=dense)
    assert enc.texts == ["duration"]  # only the question
    # an edit: the next version encodes only what changed
    timing = repo / "app" / "timing.py"
    timing.write_text(timing.read_text() + '\n\ndef stopwatch():\n    """Time a block."""\n')
    enc.texts.clear()
    g3 = cf.index(str(repo), progress=False)
    g3.rank("duration", rule=dense)
    assert 1 <= len(enc.texts) - 1 < n_nodes


def test_dense_works_over_frames_without_a_store(repo) -> None:
    g = cf.open(str(repo))
    from ctxframe._graph.query import run_query

    res = run_query(g.nodes, g.edges, g._token_table(), "duration", rule=Dense(encode=Encoder()))
    assert res.hits["id"][0] == "app/timing.py::elapsed_seconds"


@pytest.mark.parametrize(
    ("encode", "message"),
    [
        (lambda texts: np.zeros((len(texts) + 1, 3)), "one vector per text"),
        (lambda texts: 1 / 0, "the encoder failed"),
    ],
)
def test_a_broken_encoder_says_so(repo, encode, message) -> None:
    g = cf.open(str(repo))
    with pytest.raises(EncoderError, match=message):
        g.rank("duration", rule=Dense(encode=encode, key="broken"))


class Fixed:
    """A rule ranking given node ids in a given order (scores 10, 9, ...)."""

    def __init__(self, name: str, order: list[str]) -> None:
        self.name = name
        self.order = order

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        return pl.DataFrame(
            {"node_id": self.order, "score": [10.0 - i for i in range(len(self.order))]}
        )


A = ["app/timing.py::elapsed_seconds", "app/timing.py::parse_header", "app/replies.py::affirmative"]
B = ["app/replies.py::affirmative", "app/timing.py::parse_header", "app/replies.py::render_table"]


def test_reciprocal_rank_fusion(repo) -> None:
    g = cf.open(str(repo))
    fused = Fused([Fixed("a", A), Fixed("b", B)], method="rrf", k=60)
    res = g.query("anything", rule=fused, limit=10, explain=True)
    got = dict(zip(res.hits["id"].to_list(), res.hits["score"].to_list(), strict=True))
    expect = {
        A[0]: 1 / 61,
        A[1]: 1 / 62 + 1 / 62,
        A[2]: 1 / 63 + 1 / 61,
        B[2]: 1 / 63,
    }
    assert got == pytest.approx(expect, abs=1e-6)
    assert res.hits["id"].to_list()[:2] == [A[2], A[1]]
    fusion = res.evidence.filter(pl.col("part") == "fusion")
    per = fusion.group_by("rank").agg(pl.col("contribution").sum()).sort("rank")
    assert np.allclose(per["contribution"].to_numpy(), res.hits["score"].to_numpy(), atol=1e-6)
    assert set(fusion["source"].to_list()) == {"a", "b"}
    assert fused.name == "rrf(a+b)"


def test_weighted_score_fusion(repo) -> None:
    g = cf.open(str(repo))
    fused = Fused([Fixed("a", A), Fixed("b", B)], method="score", weights=[3.0, 1.0])
    hits = g.rank("anything", rule=fused, limit=10)
    got = dict(zip(hits["id"].to_list(), hits["score"].to_list(), strict=True))
    assert got[A[0]] == pytest.approx(3.0)  # the best of a: 10 / 10 x 3
    assert got[A[1]] == pytest.approx(3 * 9 / 10 + 9 / 10)
    assert got[A[2]] == pytest.approx(3 * 8 / 10 + 1.0)
    assert hits["id"].to_list()[:3] == [A[1], A[2], A[0]]


def test_fusing_one_rule_keeps_its_order(repo) -> None:
    g = cf.open(str(repo))
    for text in ("parse a header line", "how long it took", "table rows"):
        plain = g.rank(text, limit=10)["id"].to_list()
        assert g.rank(text, rule=Fused(["idf-tiers"]), limit=10)["id"].to_list() == plain


def test_fused_with_a_dense_member_finds_both_kinds_of_answer(repo) -> None:
    g = cf.open(str(repo))
    hybrid = Fused(["idf-tiers", Dense(encode=Encoder(), key="concepts")])
    ids = g.rank("header parsing and yes answers", rule=hybrid, limit=3)["id"].to_list()
    assert "app/timing.py::parse_header" in ids and "app/replies.py::affirmative" in ids


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "borda"}, "method must be"),
        ({"weights": [1.0]}, "1 weights for 2 member rules"),
        ({"normalize": "z"}, "normalize must be"),
    ],
)
def test_fused_arguments_are_checked(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        Fused(["idf-tiers", "bm25"], **kwargs)


def test_nothing_is_downloaded_or_shipped() -> None:
    import ctxframe._rank.dense as dense

    text = Path(dense.__file__).read_text()
    for word in ("huggingface", "from_pretrained", "urllib", "requests"):
        assert word not in text
    assert not any(p.suffix in (".onnx", ".safetensors", ".bin") for p in
                   Path(os.path.dirname(cf.__file__)).rglob("*"))  # fmt: skip

"""Tokenizer: the examples of the spec, its properties, and Python/Polars agreement."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._core.schema import NODES, TOKENS, VOCAB
from ctxframe._rank import fields
from ctxframe._rank.fields import body_counts, token_table
from ctxframe._rank.tokens import (
    QUERY_STOPWORDS,
    build_tokens,
    dice,
    token_frequencies,
    tokenize,
    tokenize_query,
    tokenize_series,
    trigram_table,
    trigrams,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HTTPServer", ["http", "server"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        (
            "PaymentRefundProcessor.ProcessRefund",
            ["payment", "refund", "processor", "process", "refund"],
        ),
        ("processRefund", ["process", "refund"]),
        ("snake_case_name", ["snake", "case", "name"]),
        ("kebab-case-name", ["kebab", "case", "name"]),
        ("SCREAMING_SNAKE", ["screaming", "snake"]),
        ("PAYMENTS_API_KEY", ["payments", "api", "key"]),
        ("__dunder__", ["dunder"]),
        ("__init__", ["init"]),
        ("OnPath", ["on", "path"]),
        ("a.b.c", []),
        ("x", []),
        ("", []),
        (
            "apps/desktop/statusbar/StatusBar.ts",
            ["apps", "desktop", "statusbar", "status", "bar", "ts"],
        ),
        (
            "services/payments/refund_processor.py::PaymentRefundProcessor.ProcessRefund",
            [
                "services",
                "payments",
                "refund",
                "processor",
                "py",
                "payment",
                "refund",
                "processor",
                "process",
                "refund",
            ],
        ),
        ("module://requests", ["module", "requests"]),
        ("env:PAYMENTS_API_KEY", ["env", "payments", "api", "key"]),
        # digits stick to the letters before them; a capital after a digit starts a token
        ("v2", ["v2"]),
        ("getV2Api", ["get", "v2", "api"]),
        ("utf8", ["utf8"]),
        ("utf8Decode", ["utf8", "decode"]),
        ("UTF8Decoder", ["utf8", "decoder"]),
        ("Base64Encoder", ["base64", "encoder"]),
        ("sha256sum", ["sha256sum"]),
        ("getHTTP2Response", ["get", "http2", "response"]),
        ("x86_64", ["x86", "64"]),
        ("error404", ["error404"]),
        ("2fa", ["2fa"]),
        ("step_1", ["step"]),  # a lone digit is a single character
        # unicode letters are kept and lowercased
        ("naïveCafé", ["naïve", "café"]),
        ("ÜberWagen", ["über", "wagen"]),
        ("ΑΣ ΣΑ", ["ας", "σα"]),
        ("日本Server", ["日本", "server"]),
        ("данныеПользователя", ["данные", "пользователя"]),
    ],
)
def test_tokenize_examples(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected
    assert tokenize_series(pl.Series([text])).item().to_list() == expected


def test_query_stopwords_are_query_only() -> None:
    assert tokenize_query("where is the refund handler") == ["refund", "handler"]
    assert tokenize_query("on path") == ["path"]
    assert tokenize("OnPath") == ["on", "path"]  # nodes keep `on`
    assert "on" in QUERY_STOPWORDS
    # a query made only of stopwords keeps them rather than becoming empty
    assert tokenize_query("where is it") == ["where", "is", "it"]
    assert tokenize_query("How does the Checkout work?") == ["checkout", "work"]


def test_none_and_empty() -> None:
    assert tokenize(None) == []
    assert tokenize_query("") == []


def test_trigrams_and_dice() -> None:
    assert trigrams("ab") == {"  a", " ab", "ab ", "b  "}
    assert dice(trigrams("refnud"), trigrams("refund")) == 0.5
    assert dice(trigrams("refund"), trigrams("refund")) == 1.0
    assert dice([], []) == 0.0
    table = trigram_table(pl.DataFrame({"token": ["refund", "aaaa"]}))
    for token in ("refund", "aaaa"):
        got = set(table.filter(pl.col("token") == token)["tri"].to_list())
        assert got == trigrams(token)


def _nodes(rows: list[tuple]) -> pl.DataFrame:
    """(id, kind, label, qualname, path[, signature, doc]) tuples -> a NODES frame."""
    recs = []
    for r in rows:
        r = (*r, None, None)[:7]
        recs.append(
            {
                "id": r[0],
                "kind": r[1],
                "label": r[2],
                "qualname": r[3],
                "language": "python",
                "path": r[4],
                "line_start": 1,
                "line_end": 2,
                "signature": r[5],
                "doc": r[6],
                "parent": None,
                "producer": "test",
            }
        )
    return pl.DataFrame(recs, schema=NODES)


def _decoded(nodes: pl.DataFrame, content: pl.DataFrame | None = None) -> dict:
    table = token_table(nodes, content)
    rows = table.decoded(nodes["id"])
    out: dict = {}
    for node_id, field, token, tf in rows.iter_rows():
        out.setdefault(node_id, {}).setdefault(field, {})[token] = tf
    return out


def test_token_table_fields_codes_and_counts() -> None:
    nodes = _nodes(
        [
            (
                "svc/pay.py::Refunder.go",
                "method",
                "go",
                "Refunder.go",
                "svc/pay.py",
                "def go(self, secret_arg)",
                "Undocumented words here",
            ),
            ("module://requests", "module", "requests", "requests", None),
            ("svc/pay.py", "file", "pay.py", None, "svc/pay.py"),
        ]
    ).sort("id")
    body = body_counts(
        pl.DataFrame({"node_id": ["svc/pay.py::Refunder.go"], "text": ["# refund refund\nsend()"]})
    )
    table = token_table(nodes, body)
    assert table.tokens.schema == TOKENS
    assert table.vocab.schema == VOCAB
    vocab = table.vocab["token"]
    assert vocab.is_sorted() and vocab.n_unique() == vocab.len()
    assert table.tokens.height == table.tokens.unique(["node", "field", "token"]).height
    assert table.tokens.select("node", "field", "token").equals(
        table.tokens.select("node", "field", "token").sort(pl.all())
    )
    got = _decoded(nodes, body)
    go = got["svc/pay.py::Refunder.go"]
    assert go["name"] == {"go": 1}
    assert go["qualname"] == {"refunder": 1}  # the enclosing names
    assert go["path"] == {"svc": 1, "pay": 1, "py": 1}
    assert go["signature"] == {"def": 1, "go": 1, "self": 1, "secret": 1, "arg": 1}
    assert go["doc"] == {"undocumented": 1, "words": 1, "here": 1}
    assert go["body"] == {"refund": 2, "send": 1}  # counts, split like names
    assert got["module://requests"] == {"name": {"requests": 1}}
    assert "qualname" not in got["svc/pay.py"]  # a file's qualname is its path


@pytest.mark.parametrize("keys", ["strings", "categories"])
def test_token_table_carries_stored_rows_for_unread_files(keys: str, monkeypatch) -> None:
    """A re-index carries the rows of files it did not read (their bodies exist only in the
    stored table) and the result equals a table made from scratch; with the body counts'
    keys as categories (a large tree) and the name fields counted a slice at a time, too."""
    coded = pl.Categorical(pl.Categories.random()) if keys == "categories" else None
    if coded is not None:
        monkeypatch.setattr(fields, "_SLICE", 2)

    def counts(frame: pl.DataFrame) -> pl.DataFrame:  # the body counts, keyed as this case
        return body_counts(frame, coded)

    rows = [
        ("a.py::f", "function", "f", "f", "a.py", "def f()", None),
        ("a.py", "file", "a.py", None, "a.py"),
        ("b.py::g", "function", "g", "g", "b.py", "def g()", None),
        ("b.py", "file", "b.py", None, "b.py"),
    ]
    nodes = _nodes(rows).sort("id")
    bodies = pl.DataFrame(
        {"node_id": ["a.py::f", "b.py::g"], "text": ["alpha beta", "gamma delta"]}
    )
    full = token_table(nodes, counts(bodies))
    # b.py changes: a new function; a.py is not read again
    rows2 = [*rows, ("b.py::h", "function", "h", "h", "b.py", "def h()", None)]
    nodes2 = _nodes(rows2).sort("id")
    bodies2 = pl.DataFrame(
        {"node_id": ["a.py::f", "b.py::g", "b.py::h"], "text": ["alpha beta", "gamma", "omega"]}
    )
    scratch = token_table(nodes2, counts(bodies2))
    carried = token_table(
        nodes2,
        counts(bodies2.filter(pl.col("node_id").str.starts_with("b.py"))),
        previous=full,
        previous_ids=nodes["id"],
        carry=pl.Series(["a.py", "a.py::f"]),
    )
    assert carried.tokens.equals(scratch.tokens)
    assert carried.vocab.equals(scratch.vocab)
    assert "delta" not in carried.vocab["token"].to_list()  # no token without a row
    plain = token_table(nodes2, body_counts(bodies2))
    assert scratch.tokens.equals(plain.tokens) and scratch.vocab.equals(plain.vocab)


def test_token_frequencies_idf_formula() -> None:
    tokens = pl.DataFrame(
        {"node_id": ["a", "a", "b", "c"], "token": ["pay", "refund", "pay", "zip"]}
    )
    freq = token_frequencies(tokens, n_nodes=10)
    row = dict(zip(freq["token"], freq["df"], strict=True))
    assert row == {"pay": 2, "refund": 1, "zip": 1}
    idf = dict(zip(freq["token"], freq["idf"], strict=True))
    assert idf["pay"] == pytest.approx(0.1 + math.log(10 / 3))
    assert idf["refund"] == pytest.approx(0.1 + math.log(10 / 2))


# ------------------------------------------------------------------ properties

IDENT_ALPHABET = st.sampled_from(
    [*"abcxyzABCXYZ0129_-./: ", "é", "É", "ß", "Σ", "σ", "ς", "İ", "ǅ", "日", "\u0301"]
)
identifiers = st.text(IDENT_ALPHABET, max_size=40)
anything = st.text(max_size=40)
texts = st.one_of(identifiers, anything)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_tokens_are_lowercase_and_not_single_letters(text: str) -> None:
    for tok in tokenize(text):
        assert tok == tok.lower()
        assert len(tok) >= 2


@settings(max_examples=300, deadline=None)
@given(texts)
def test_tokenize_is_idempotent(text: str) -> None:
    toks = tokenize(text)
    assert tokenize(" ".join(toks)) == toks


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, max_size=30))
def test_python_and_polars_tokenizers_agree(batch: list[str]) -> None:
    vectorized = tokenize_series(pl.Series(batch, dtype=pl.String)).to_list()
    assert [list(v) for v in vectorized] == [tokenize(t) for t in batch]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(identifiers, identifiers), min_size=1, max_size=10))
def test_build_tokens_matches_python_tokenizer(pairs: list[tuple[str, str]]) -> None:
    rows = [(f"n{i}", "function", label, label, path) for i, (label, path) in enumerate(pairs)]
    tokens = build_tokens(_nodes(rows))
    got = {k: set(v) for k, v in tokens.group_by("node_id").agg("token").iter_rows()}
    for node_id, _, label, _, path in rows:
        expected = set(tokenize(label)) | set(tokenize(path))
        assert got.get(node_id, set()) == expected


@settings(max_examples=50, deadline=None)
@given(st.lists(texts, min_size=1, max_size=10))
def test_body_counts_match_python_tokenizer(bodies: list[str]) -> None:
    """Counting words first and splitting only the distinct ones gives what tokenizing every
    body whole gives."""
    frame = pl.DataFrame({"node_id": [f"n{i}" for i in range(len(bodies))], "text": bodies})
    got = {
        (n, t): tf
        for n, _f, t, tf in body_counts(frame).select("node_id", "field", "token", "tf").iter_rows()
    }
    want: dict = {}
    for i, text in enumerate(bodies):
        for tok in tokenize(text):
            want[(f"n{i}", tok)] = want.get((f"n{i}", tok), 0) + 1
    assert got == want


_U32 = st.integers(0, 2**32 - 1)


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 255), _U32, st.integers(0, 9)),
             max_size=60),
    st.sampled_from([0, 2**20, 2**32 - 3001]),
    st.booleans(),
)  # fmt: skip
def test_sorted_tokens_sorts_as_the_three_columns(rows, base, wide) -> None:
    """The one-key sort of token rows equals the sort on (node, field, token), whether the
    nodes fit the key's 24 bits or not (`wide` puts one row 2**24 nodes away)."""
    frame = pl.DataFrame(
        [(base + n, f, t, tf) for n, f, t, tf in rows], schema=dict(TOKENS), orient="row"
    )
    if wide and frame.height and base < 2**24:
        frame = pl.concat([frame, frame.head(1).with_columns(node=pl.lit(base + 2**24, pl.UInt32))])
    frame = frame.unique(["node", "field", "token"])
    assert fields.sorted_tokens(frame).equals(frame.sort("node", "field", "token"))

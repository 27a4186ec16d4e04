"""One redaction pass for rows and for every way out: credentials are masked in place, rows
and lines that cannot hold one are left as they are, the vectorised frame pass agrees with the
text pass, and no masked value survives in the bytes an Arrow IPC file writes."""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._ingest import redact as r
from ctxframe._ingest.redact import redact_frame, redact_line, redact_obj, redact_rows, redact_text

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("faults_bench", ROOT / "bench" / "faults_bench.py")
fb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fb)

PW = "Pw9zQ7xLongEnoughToLiveInABuffer"
FORMS = fb.planted_forms()


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"https://admin:{PW}@db.test/x", "https://***@db.test/x"),
        (f"git+https://{PW}@git.test/o/r.git", "git+https://***@git.test/o/r.git"),
        (f"https://db.test/x?access_token={PW}&a=1", "https://db.test/x?access_token=***&a=1"),
        (f"run --password={PW} now", "run --password=*** now"),
        (f"cli -token {PW}", "cli -token ***"),
        (f"mysql -uroot -p{PW} shop", "mysql -uroot -p*** shop"),
        (f'run(["mysql", "-p{PW}", "shop"])', 'run(["mysql", "-p***", "shop"])'),
        (f'run(["deploy-tool", "--token", "{PW}"])', 'run(["deploy-tool", "--token", "***"])'),
        (f'connect(api_key: str = "{PW}")', 'connect(api_key: str = "***")'),
        (f'{{"api_key": "{PW}"}}', '{"api_key": "***"}'),
        (f"export API_TOKEN={PW}", "export API_TOKEN=***"),
        (f'h = {{"Authorization": "Bearer {PW}"}}', 'h = {"Authorization": "***"}'),
        (f'#define API_TOKEN "{PW}"', '#define API_TOKEN "***"'),
        (f"CREATE USER a IDENTIFIED BY '{PW}';", "CREATE USER a IDENTIFIED BY '***';"),
        ('k = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"', 'k = "***"'),
        ('t = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"', 't = "***"'),
        ('aws = "AKIAIOSFODNN7EXAMPLE"', 'aws = "***"'),
        ('art = "AKCp8jQ8e7bqZ8Ztz7gAPNnbn6"', "art = ***"),  # Artifactory's API token
        (
            "u = 'https://api.softlayer.com/soap/v3/" + "A" * 64 + "'",
            "u = 'https://api.softlayer.com/soap/v3/***'",
        ),
        ('service_key = "Zq8vLm2pXr7t"', 'service_key = "***"'),  # the keyword detector's
        ('"Zq8vLm2pXr7t" == db_pass', '"***" == db_pass'),
        # code that names a secret without holding one stays as it is
        ("authenticate(request, password=password)", "authenticate(request, password=password)"),
        ('x = os.environ["API_TOKEN"]', 'x = os.environ["API_TOKEN"]'),
        ('API_TOKEN=os.environ.get("X")', 'API_TOKEN=os.environ.get("X")'),
        ("the tokenizer splits words", "the tokenizer splits words"),
        ("plain text", "plain text"),
        (None, None),
    ],
)
def test_rules(text: str | None, masked: str | None) -> None:
    frame = pl.DataFrame({"v": [text]}, schema={"v": pl.String})
    assert redact_frame(frame)["v"][0] == masked
    assert redact_rows(frame, "v")["v"][0] == masked
    if text is not None:
        assert redact_text(text) == masked


@pytest.mark.parametrize(("form", "path", "text", "secret"), FORMS, ids=[f[0] for f in FORMS])
def test_every_planted_form_is_masked(form: str, path: str, text: str, secret: str) -> None:
    """Each planted form, read from its file (the path's rules) and as a stored row (no
    path; the file kinds the index never stores as text excepted): no byte of the value
    left, the line count kept."""
    out = redact_text(text, path)
    assert not [n for n in fb.planted_needles(secret) if n in out], out
    assert out.count("\n") == text.count("\n")
    if not path.endswith((".env", ".env.local", ".yaml", ".yml", ".json", ".toml", ".npmrc",
                          ".txt", ".env")):  # fmt: skip
        row = redact_rows(pl.DataFrame({"t": [text]}), "t")["t"][0]
        assert row == redact_text(text), "the frame pass and the text pass disagree"


def test_frame_pass_equals_text_pass_line_by_line() -> None:
    """The vectorised pass (rows, then lines, found by `needs`) gives what the text pass gives
    on every planted text: `needs` misses no line a rule changes."""
    texts = [t for _, _, t, _ in FORMS] + [f"x = 1\n{t}\ny = 2" for _, _, t, _ in FORMS]
    frame = pl.DataFrame({"t": texts})
    assert redact_rows(frame, "t")["t"].to_list() == [redact_text(t) for t in texts]


def test_frame_pass_equals_text_pass_through_the_gates() -> None:
    """With enough lines the frame pass also tests each rule's gate on them at once
    (`_gated`): the planted texts among lines that hold a rule's word but no secret still
    come out as the text pass makes them."""
    filler = ["key = cache.get(key)", "token = next(tokens)", "if password is None:",
              "see https://docs.test/auth", "pass"]  # fmt: skip
    texts = [t for _, _, t, _ in FORMS]
    texts += ["\n".join(filler[i % len(filler)] for i in range(r._GATED_FROM)) + "\n" + t
              for t in texts[:5]]  # fmt: skip
    frame = pl.DataFrame({"t": texts})
    lines = frame["t"].str.split("\n").explode()
    assert r._need_expr(lines).sum() >= r._GATED_FROM  # the gates run
    assert redact_rows(frame, "t")["t"].to_list() == [redact_text(t) for t in texts]


def test_row_order_other_columns_and_ipc_bytes() -> None:
    values = [f"row {i} with nothing to hide at all" for i in range(50)]
    values[17] = f"https://u:{PW}@api.test"
    frame = pl.DataFrame({"id": list(range(50)), "v": values, "n": values})
    out = redact_frame(frame, ("v",))
    assert out["id"].to_list() == list(range(50)) and out["n"].equals(frame["n"])
    assert out["v"][17] == "https://***@api.test"
    assert out.filter(pl.col("id") != 17)["v"].to_list() == [
        v for i, v in enumerate(values) if i != 17
    ]
    buf = io.BytesIO()
    out.drop("n").write_ipc(buf, compression="uncompressed")
    assert PW.encode() not in buf.getvalue()


@pytest.mark.parametrize(
    ("path", "text", "kept"),
    [
        (".env", "DEBUG=true\nAPI_TOKEN=abc123\n# comment=1\n", ["# comment=1"]),
        ("deploy/s.yaml", "kind: Secret\nmetadata:\n  name: db\ndata:\n  password: cGFz\n",
         ["name: db"]),
        ("deploy/s.yaml", "kind: Secret\nstringData:\n  cert: |\n    line1\n    line2\n", []),
        ("ci.yml", "env:\n  NPM_TOKEN: abc123\n  NODE: 20\n", ["NODE: 20"]),
        (".netrc", "machine h login u password abc123\n", ["machine h login u"]),
    ],
)  # fmt: skip
def test_file_kind_rules(path: str, text: str, kept: list[str]) -> None:
    out = redact_text(text, path)
    assert "abc123" not in out and "cGFz" not in out and "line1" not in out
    assert all(k in out for k in kept) and out.count("\n") == text.count("\n")


def test_private_key_body_masked_line_by_line() -> None:
    key = fb._synthetic_key(1)
    text = f'K = """-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----\n"""'
    out = redact_text(text)
    assert not [ln for ln in key.split("\n") if ln in out] and out.count("\n") == text.count("\n")
    assert redact_rows(pl.DataFrame({"t": [text]}), "t")["t"][0] == out


def test_redact_obj_walks_json() -> None:
    data = {"a": [f"https://u:{PW}@h", {"b": f"password='{PW}'"}], "n": 3, "x": None}
    assert PW not in str(redact_obj(data)) and redact_obj(data)["n"] == 3


def test_every_detect_secrets_plugin_is_known() -> None:
    """A newer detect-secrets that brings a plugin this module has no need for fails here:
    add it to `_PLUGIN_NEEDS` (or to the skipped ones)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    names = {c.__name__ for c in get_mapping_from_secret_type_to_class().values()}
    assert names - set(r._PLUGIN_NEEDS) - r.SKIPPED_PLUGINS == set()
    assert set(r._plugins()) == set(r._PLUGIN_NEEDS) & names


def _plugin_patterns() -> list:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    out = []
    for c in get_mapping_from_secret_type_to_class().values():
        if c.__name__ in r._PLUGIN_NEEDS:
            out += [p for p in getattr(c, "denylist", ()) if "(?<" not in p.pattern]
    return out


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.one_of(
        st.sampled_from([p for _, _, p, _ in r._LINE_RULES]).flatmap(
            lambda rx: st.from_regex(rx.pattern.replace("(?i)", ""), fullmatch=False)
        ),
        st.sampled_from(_plugin_patterns()).flatmap(lambda rx: st.from_regex(rx)),
        st.sampled_from([r._QUOTED_LONG, r._HEX_LONG]).flatmap(lambda rx: st.from_regex(rx)),
        st.sampled_from([t for _, _, t, _ in FORMS]).map(lambda t: t.split("\n")[0]),
    ).map(lambda s: s.replace("\n", " ").replace("\r", " "))
)
def test_needs_never_spare_a_line_a_rule_changes(text: str) -> None:
    """The test that lets rows and lines skip the rules holds for every text a rule or a
    detect-secrets plugin matches (texts drawn from their own patterns)."""
    if redact_line(text) != text:
        frame = pl.DataFrame({"v": [text]})
        assert r._need_expr(frame["v"])[0]
        assert _need_apart(frame["v"])[0], "the first pass on a large text spares it"
        assert r._gated(frame["v"])[0], "a rule's gate, vectorised, spares a line it changes"


def _need_apart(values: pl.Series) -> pl.Series:
    """`_need_expr` with its regexes run one by one, as on a megabyte of text or more."""
    from unittest import mock

    with mock.patch.object(r, "_NEED_APART_FROM", 0):
        return r._need_expr(values)


_ASCII = st.characters(min_codepoint=32, max_codepoint=126)


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.sampled_from(sorted(r._CHEAP_NEEDS)).flatmap(
        lambda name: st.tuples(
            st.just(name), st.from_regex(r._PLUGIN_NEEDS[name][1], alphabet=_ASCII)
        )
    )
)
def test_a_cheap_need_holds_where_its_gate_does(drawn: tuple[str, str]) -> None:
    """The first pass's stand-in for a slow gate is a part of it: every text the gate
    matches, the stand-in matches."""
    name, text = drawn
    assert re.search(r._CHEAP_NEEDS[name], text)
    assert r._need_expr(pl.Series([text]))[0] and _need_apart(pl.Series([text]))[0]


def _keyword_patterns() -> list:
    """detect-secrets' keyword detector's patterns (what `analyze_string` runs)."""
    from detect_secrets.plugins import keyword

    return list(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)


def _ungated(text: str) -> str:
    """`redact_line` with every rule and plugin run whatever its gate says."""
    from unittest import mock

    with (
        mock.patch.object(r, "_gate", lambda *a: True),
        mock.patch.object(r, "_need_rx", lambda: re.compile("")),
    ):
        return redact_line(text)


@settings(max_examples=400, deadline=None, database=None)
@given(
    st.one_of(
        st.sampled_from([p for _, _, p, _ in r._LINE_RULES]).flatmap(
            lambda rx: st.from_regex(rx.pattern.replace("(?i)", ""), alphabet=_ASCII)
        ),
        st.sampled_from(_plugin_patterns() + _keyword_patterns()).flatmap(
            lambda rx: st.from_regex(rx, alphabet=_ASCII)
        ),
    ),
    st.booleans(),
)
def test_gates_never_spare_an_ascii_line_a_rule_changes(text: str, separators: bool) -> None:
    """Each rule's and plugin's gate (its words and the core of its pattern, the keyword
    detector's denylisted names) spares no printable-ASCII text the rule or plugin changes,
    run ungated; the facts' separators (whitespace to Python, not to Rust) in place of
    spaces too."""
    if separators:
        text = text.replace(" ", "\x1f")
    want = _ungated(text)
    assert redact_line(text) == want
    if want != text:
        frame = pl.DataFrame({"v": [text]})
        assert r._gated(frame["v"])[0], "a rule's gate, vectorised, spares a line it changes"
        assert redact_rows(frame, "v")["v"][0] == want


@pytest.mark.parametrize(
    "line",
    [
        'x.py|password\x1f=\x1f"hunter2hunter2"',  # a fact's key: separators for spaces
        'db_password\x1f:\x1f"s3cr3t-value"',
        '"s3cr3t-value" == password',
        'private_key "abcdefabcdef";',
        "see https://user:pa55word@db.test/x",
    ],
)
def test_gated_lines_through_the_frame_pass(line: str) -> None:
    """Lines a rule changes, among enough others that the vectorised gates run."""
    text = "\n".join(["key = cache.get(key)"] * r._GATED_FROM + [line])
    frame = pl.DataFrame({"t": [text]})
    out = redact_rows(frame, "t")["t"][0]
    assert out == redact_text(text)
    assert out.split("\n")[-1] != line


def test_an_index_keeps_no_line_it_redacted(tmp_path: Path, monkeypatch) -> None:
    """The frame pass redacts a repeated line once a run (a class's body holds its methods');
    the lines it kept, a secret's among them, are dropped when the index ends: a watcher's
    process holds none between runs. The stored rows are masked all the same."""
    method = f'    def f(self):\n        api_key = "{PW}"\n        return api_key\n'
    (tmp_path / "m.py").write_text("class C:\n" + method)
    from ctxframe._store import build

    held = []
    forget = build.forget_lines
    size = r._redact_line_kept.cache_info
    monkeypatch.setattr(build, "forget_lines", lambda: held.append(size().currsize) or forget())
    build.index(str(tmp_path), progress=False, processes=1, history=False)
    assert held and held[0] > 0  # lines were kept during the run
    assert r._redact_line_kept.cache_info().currsize == 0
    store = tmp_path / ".ctxframe"
    assert not any(PW.encode() in f.read_bytes() for f in store.rglob("*") if f.is_file())

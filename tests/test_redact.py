"""Credentials inside strings are masked in place; rows that cannot hold one are left as they
are, and no masked value survives in the bytes an Arrow IPC file writes."""

from __future__ import annotations

import io

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxframe._ingest.redact import _LIKELY, RULES, redact_expr, redact_frame, redact_rows

PW = "Pw9zQ7xLongEnoughToLiveInABuffer"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"https://admin:{PW}@db.test/x", "https://***@db.test/x"),
        (f"git+https://{PW}@git.test/o/r.git", "git+https://***@git.test/o/r.git"),
        (f"https://db.test/x?access_token={PW}&a=1", "https://db.test/x?access_token=***&a=1"),
        (f"run --password={PW} now", "run --password=*** now"),
        (f"cli -token {PW}", "cli -token ***"),
        (f"mysql -uroot -p{PW} shop", "mysql -uroot -p*** shop"),
        (f'connect(api_key: str = "{PW}")', 'connect(api_key: str = "***")'),
        ("the tokenizer splits words", "the tokenizer splits words"),
        ("plain text", "plain text"),
        (None, None),
    ],
)
def test_rules(text: str | None, masked: str | None) -> None:
    frame = pl.DataFrame({"v": [text]}, schema={"v": pl.String})
    assert redact_frame(frame)["v"][0] == masked
    assert redact_rows(frame, "v")["v"][0] == masked


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



@settings(max_examples=120, deadline=None, database=None)
@given(st.sampled_from(RULES).flatmap(lambda rule: st.from_regex(rule[0])))
def test_prefilter_never_spares_a_row_a_rule_changes(text: str) -> None:
    """The one-pass test that lets rows skip the rules holds for every text a rule matches
    (texts drawn from the rules' own patterns, with anything around the match)."""
    frame = pl.DataFrame({"v": [text]}, schema={"v": pl.String})
    if frame.select(redact_expr("v"))["v"][0] != text:
        assert frame["v"].str.contains(_LIKELY)[0]

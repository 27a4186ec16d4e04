"""`context`: hits with their source packed into a budget that is never exceeded, sources checked
against the indexed hash, and the three renderings (md, xml, json)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxframe as cf
from ctxframe._graph.context import COMPACT_SHARE, Json, Markdown
from ctxframe._graph.excerpt import excerpt, gap_line, head_length, head_text, line_scores
from ctxframe._render.text import one_line
from ctxframe._render.tokencount import CHARS, token_counter
from ctxframe.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "data-samples"
QUESTIONS = [
    json.loads(line)["query"]
    for line in (SAMPLE / "queries.jsonl").read_text().splitlines()
    if line.strip() and not line.startswith("#")
] + [
    json.loads(line)["query"]
    for line in (SAMPLE / "prompts-noncode.jsonl").read_text().splitlines()
    if line.strip() and not line.startswith("#")
]
REFUND = "where is refund processing implemented"


# -- excerpt --------------------------------------------------------------------------------------

BODY = [
    "def process(order, amount):",
    '    """Refund an order."""',
    "    check(order)",
    "    total = 0",
    "    for line in order.lines:",
    "        total += line.price",
    "    refund_id = gateway.refund(order, amount)",
    "    log(refund_id)",
    "    audit(order)",
    "    return refund_id",
]


@pytest.mark.parametrize(
    ("cap", "tokens", "expected"),
    [
        # fits whole
        (20, ["refund"], ["L1-L10"]),
        # head + the best line with one line of context each side
        (4, ["gateway"], ["L1", "L6-L8"]),
        # nothing scores: the body from the top after the head
        (3, ["nothing"], ["L1-L3"]),
        # the head alone
        (1, ["refund"], ["L1"]),
    ],
)
def test_excerpt_keeps_head_and_relevant_lines(cap, tokens, expected):
    ex = excerpt(BODY, 1, tokens, cap)
    got = [f"L{a}" if a == b else f"L{a}-L{b}" for a, b in ex.ranges()]
    assert got == expected
    assert ex.shown == min(cap, len(BODY))
    assert ex.trimmed == (cap < len(BODY))


def test_excerpt_marks_gaps_and_lines_shown_above():
    ex = excerpt(BODY, 100, ["gateway"], 4, skip={102, 103, 104})
    assert (
        ex.lines()
        == [
            BODY[0],
            gap_line(101, 104),  # partly quoted above: a plain gap
            *BODY[5:8],
            gap_line(108, 109),
        ]
    )
    above = excerpt(BODY, 100, [], 3, skip=set(range(101, 110)))
    assert above.lines() == [BODY[0], gap_line(101, 109, above=True)]


@pytest.mark.parametrize(
    ("lines", "n"),
    [
        (["def f(a,", "      b):", "    pass"], 2),
        (["func (s *S) Run() error {", "  return nil"], 1),
        (["x = 1"], 1),
        (["class A:", "    pass"], 1),
    ],
)
def test_head_length(lines, n):
    assert head_length(lines) == n


@pytest.mark.parametrize(
    ("lines", "limit", "expected"),
    [
        # a Python signature spread over lines, joined up to the line that ends it
        (
            [
                "    def send(",
                "        self,",
                "        request: Request,",
                "",
                "    ) -> Response:",
                '        """Send a request."""',
            ],
            80,
            (5, "def send( self, request: Request, ) -> Response:"),
        ),
        # too long: the whole lines that fit, then an ellipsis
        (
            ["    def send(", "        self,", "        request: Request,", "    ):"],
            20,
            (2, "def send( self, …"),
        ),
        # a one-line head (Go, TypeScript): the first line only
        (
            ["func (s *Service) IssueRefund(id string) error {", "\treturn nil", "}"],
            80,
            (1, "func (s *Service) IssueRefund(id string) error {"),
        ),
        (
            ["export class RefundClient extends BaseClient {", "  submit() {}", "}"],
            80,
            (1, "export class RefundClient extends BaseClient {"),
        ),
        # no open bracket: a docstring line is not joined with what follows
        (['"""Refund processing.', "", "Usage:"], 80, (1, '"""Refund processing.')),
        # not even the first line fits
        (["def " + "x" * 40 + "():"], 20, (0, "")),
        ([], 20, (0, "")),
    ],
)
def test_head_text(lines, limit, expected):
    assert head_text(lines, limit) == expected


def test_line_scores_match_inflections():
    assert line_scores(["redirect_headers()", "nothing here", "REDIRECTING"], ["redirecting"]) == [
        1,
        0,
        1,
    ]


# -- budget ---------------------------------------------------------------------------------------


def words(text: str) -> int:
    """A tokenizer that is not additive: whitespace-separated words, and one per newline."""
    return len(text.split()) + text.count("\n")


@settings(max_examples=120, deadline=None, database=None)
@given(
    budget=st.integers(min_value=1, max_value=6000),
    question=st.sampled_from(QUESTIONS),
    fmt=st.sampled_from(["md", "xml", "json"]),
    tokenizer=st.sampled_from([None, words]),
)
def test_never_over_budget(shop_graph, budget, question, fmt, tokenizer):
    ctx = shop_graph.context(question, budget_tokens=budget, format=fmt, tokenizer=tokenizer)
    text = ctx.render()
    packed = ctx.packed()
    # JSON and XML stay whole documents: below their bare skeleton (no hits, the question
    # and the messages cut to "…") the skeleton is given, over the budget
    skeleton = fmt != "md" and not packed.shown and ('"…"' in text or 'question="…"' in text)
    assert ctx.counter.count(text) <= budget or skeleton
    if fmt == "json":
        json.loads(text)
    assert ctx.used_tokens == ctx.counter.count(text)
    if packed.shown and fmt == "json":
        data = json.loads(text)
        assert [h["id"] for h in data["hits"]] == [s.item.row["id"] for s in packed.detailed]
        more = [h["id"] for g in data["more"] for h in g["hits"]]  # grouped by file
        assert sorted(more) == sorted(s.item.row["id"] for s in packed.compact)
    if packed.shown and fmt == "xml":
        root = ET.fromstring(text)
        assert len(root.findall("hit")) == len(packed.detailed)
        assert len(root.findall("more/file/hit")) == len(packed.compact)
    # the shown hits are a rank prefix: detailed ones first, then the compact entries
    assert [s.item.row["rank"] for s in packed.shown] == list(range(1, len(packed.shown) + 1))
    assert packed.shown == packed.detailed + packed.compact
    if packed.shown and packed.left:  # the end says what was left out, in every format
        if fmt == "md":
            assert text.splitlines()[-1].startswith("… truncated:")
        elif fmt == "xml":
            assert ET.fromstring(text).find("truncated").text.startswith("… truncated:")
        else:
            assert json.loads(text)["truncated"]["hits"] == packed.left.hits


def test_marker_says_what_was_left_out(shop_graph):
    ctx = shop_graph.context(REFUND, budget_tokens=400)
    last = str(ctx).splitlines()[-1]
    left = ctx.packed().left
    assert last.startswith("… truncated: ")
    assert f"{left.hits} more hit{'s' if left.hits != 1 else ''} (rank {left.first_rank}+)" in last
    assert f"{left.compact} hit bodies (one-line entries)" in last
    assert "budget 400 tokens, chars/4" in last
    assert ctx.truncated


def test_nothing_left_out_has_no_marker(shop_graph):
    ctx = shop_graph.context("ProcessRefund", budget_tokens=20000, limit=3)
    assert not ctx.truncated or ctx.packed().left.unfetched
    big = shop_graph.context(REFUND, budget_tokens=100_000, limit=500)
    assert not big.packed().left.hits


def test_renderings_carry_the_same_hits(shop_graph):
    ctx = shop_graph.context(REFUND, budget_tokens=3000)
    md = ctx.packed("md")
    # the processor class (its docstring says "Processes customer refunds") or its method
    assert (
        md.shown[0]
        .item.row["id"]
        .endswith(("PaymentRefundProcessor", "PaymentRefundProcessor.ProcessRefund"))
    )
    data = ctx.to_dict()
    assert data["verb"] == "context" and data["status"] == "ok"
    assert data["hits"][0]["id"] == md.shown[0].item.row["id"]
    assert "def ProcessRefund(self, order_id, amount):" in data["hits"][0]["source"]
    root = ET.fromstring(ctx.render("xml"))
    src = root.find("hit/source").text
    assert 'refund_id = self.gateway.Refund(order["charge_id"], amount)' in src
    html = ctx._repr_html_()
    assert "ProcessRefund" in html and "<details" in html


def test_abstained_context_is_a_message(shop_graph):
    ctx = shop_graph.context("write me a haiku about autumn", abstain=True)
    assert ctx.abstained
    assert str(ctx).startswith("no structural match")
    assert ctx.to_dict()["hits"] == []
    assert len(ctx) == 0


@pytest.mark.parametrize("spec", ["nope", 3])
def test_unknown_tokenizer_is_a_clear_error(spec):
    with pytest.raises(cf.CtxframeError, match="tokenizer"):
        token_counter(spec)


def test_tiktoken_missing_says_how_to_install(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "tiktoken":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(cf.CtxframeError, match="pip install tiktoken"):
        token_counter("tiktoken")
    assert token_counter(None) is CHARS


# -- sources at the indexed hash -------------------------------------------------------------------


def _item(ctx, suffix):
    return next(it for it in ctx.items if it.row["id"].endswith(suffix))


def test_unchanged_file_is_quoted_as_indexed(shop_graph):
    ctx = shop_graph.context(REFUND)
    it = _item(ctx, "PaymentRefundProcessor.ProcessRefund")
    assert it.span.status == "ok" and it.span.note is None
    assert it.span.lines[0].strip() == "def ProcessRefund(self, order_id, amount):"


def test_changed_file_is_reread_and_flagged(indexed_shop):
    shop = indexed_shop
    g = cf.open(str(shop))
    path = shop / "services/payments/refund_processor.py"
    text = path.read_text()
    path.write_text("# a new first line\n# and another\n" + text)
    ctx = g.context(REFUND, budget_tokens=3000)
    it = _item(ctx, "PaymentRefundProcessor.ProcessRefund")
    assert it.span.status == "changed"
    assert "changed since indexing" in it.span.note and "now at L30" in it.span.note
    assert it.span.first == it.row["line_start"] + 2
    assert it.span.lines[0].strip().startswith("def ProcessRefund(")
    md = str(ctx)
    assert "> services/payments/refund_processor.py changed since indexing" in md
    assert "refund_processor.py:L30-L41" in md
    assert ctx.to_dict()["hits"][0]["status"] == "changed"


def test_definition_gone_is_not_quoted(indexed_shop):
    shop = indexed_shop
    g = cf.open(str(shop))
    path = shop / "services/payments/refund_processor.py"
    path.write_text(path.read_text().replace("def ProcessRefund(", "def process_refund("))
    ctx = g.context("PaymentRefundProcessor.ProcessRefund", budget_tokens=3000)
    it = _item(ctx, "PaymentRefundProcessor.ProcessRefund")
    assert it.span.status == "stale" and not it.span.lines
    assert "not found" in it.span.note
    block = str(ctx).split("## 2.")[0]
    assert "```" not in block  # no source quoted, only the indexed signature
    assert "`def ProcessRefund(self, order_id, amount):`" in block


def test_missing_file_is_flagged(indexed_shop):
    shop = indexed_shop
    g = cf.open(str(shop))
    (shop / "services/payments/refund_processor.py").unlink()
    ctx = g.context(REFUND)
    it = _item(ctx, "PaymentRefundProcessor.ProcessRefund")
    assert it.span.status == "stale"
    assert "missing" in it.span.note


# -- CLI ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["md", "xml", "json"])
def test_cli_output_within_budget(shop_graph, capsys, fmt):
    root = shop_graph.root
    assert main(["context", REFUND, "--repo", root, "--budget", "500", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert -(-len(out) // 4) <= 500
    if fmt == "json":
        assert json.loads(out)["hits"]
    if fmt == "xml":
        ET.fromstring(out)


def test_cli_json_flag_is_json(shop_graph, capsys):
    assert main(["context", REFUND, "--repo", shop_graph.root, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verb"] == "context"


def test_cli_bad_budget_is_one_line(shop_graph, capsys):
    assert main(["context", REFUND, "--repo", shop_graph.root, "--budget", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxframe: error: budget must be at least 1") and err.count("\n") == 1


def test_golden_context(shop_graph, golden):
    ctx = shop_graph.context(REFUND, budget_tokens=1200)
    root = shop_graph.root
    golden("context-refund.md", ctx.render("md").replace(root, "ROOT") + "\n")
    golden("context-refund.xml", ctx.render("xml").replace(root, "ROOT") + "\n")
    golden("context-refund.json", json.dumps(ctx.to_dict(), indent=2, ensure_ascii=False) + "\n")


# -- layout: detailed blocks, then one-line entries grouped by file -----------------------------


def test_layout_detailed_then_compact_by_file(shop_graph):
    ctx = shop_graph.context(REFUND, budget_tokens=2000)
    p = ctx.packed("md")
    assert p.detailed and p.compact
    md = ctx.render("md")
    head, more = md.split("\n\n## More hits (one line each: rank. name (kind) lines `first line`)")
    # detailed blocks before the section, in rank order; none after it
    ranks = [int(line.split(".")[0][3:]) for line in head.splitlines() if line.startswith("## ")]
    assert ranks == [s.item.row["rank"] for s in p.detailed]
    assert "```" not in more
    # one heading per file, each compact hit listed under its own file, files in order of
    # their best hit
    headings = [line[4:] for line in more.splitlines() if line.startswith("### ")]
    assert len(headings) == len(set(headings))
    firsts = {}
    for s in p.compact:
        firsts.setdefault(s.item.path, s.item.row["rank"])
    assert headings == sorted(firsts, key=firsts.get)
    sections = dict(zip(headings, more.split("\n\n### ")[1:], strict=True))
    for s in p.compact:
        it = s.item
        line = next(
            x for x in sections[it.path].splitlines() if x.startswith(f"- {it.row['rank']}. ")
        )
        assert f"({it.row['kind']}) {it.lines_text()} " in line
        # the entry quotes the declaration as it is in the file
        first = it.span.lines[0].strip()
        assert s.excerpt.runs and s.head.startswith(first) and f"`{s.head}`" in line


def test_compact_entry_quotes_the_declaration(shop_graph):
    ctx = shop_graph.context(REFUND, budget_tokens=2000)
    it = _item(ctx, "refund/stripe.go::StripeGateway.Refund")
    c = it.compact()
    assert (
        c.compact
        and c.head == "func (g *StripeGateway) Refund(chargeID string, amountCents int64) error {"
    )
    assert c.excerpt.ranges() == [[24, 24]] and c.excerpt.trimmed
    md = ctx.render("md")
    assert c in ctx.packed("md").compact
    assert f"- {it.row['rank']}. StripeGateway.Refund (method) L24-L41 `{c.head}`" in md


def test_compact_tier_reaches_further_down_the_ranking(shop_graph):
    ctx = shop_graph.context(REFUND, budget_tokens=4000)
    p = ctx.packed("md")
    md = ctx.render("md")
    # compact entries are cheap: many more hits than detailed ones, in rank order after them
    assert len(p.compact) > 2 * len(p.detailed)
    assert p.detailed[-1].item.row["rank"] + 1 == p.compact[0].item.row["rank"]
    # the detailed tier left room for the entries of the hits after it (up to the reserve)
    detailed = md.split("\n\n## More hits")[0]
    after = sum(len(Markdown().entry(it.compact())) for it in ctx.items[len(p.detailed) :])
    assert len(detailed) + min(COMPACT_SHARE * 4 * 4000, after) <= 4 * 4000
    assert p.left.compact == len(p.compact)
    assert f"{p.left.compact} hit bodies (one-line entries)" in md.splitlines()[-1]


def test_few_hits_are_all_detailed(shop_graph):
    ctx = shop_graph.context("PaymentRefundProcessor.ProcessRefund", budget_tokens=20000, limit=3)
    p = ctx.packed("md")
    assert len(p.detailed) == len(ctx.items) and not p.compact
    assert "## More hits" not in str(ctx)
    assert ctx.to_dict()["more"] == []
    assert ET.fromstring(ctx.render("xml")).find("more") is None


@pytest.mark.parametrize("fmt", ["xml", "json"])
def test_compact_entries_in_xml_and_json(shop_graph, fmt):
    ctx = shop_graph.context(REFUND, budget_tokens=2500, format=fmt)
    p = ctx.packed()
    assert p.compact
    by_id = {s.item.row["id"]: s for s in p.compact}
    if fmt == "json":
        data = ctx.to_dict()
        paths = [g["path"] for g in data["more"]]
        assert len(paths) == len(set(paths))
        for g in data["more"]:
            for h in g["hits"]:
                s = by_id[h["id"]]
                assert g["path"] == s.item.path and h["rank"] == s.item.row["rank"]
                assert h["source"] == s.head and "neighbours" not in h
                assert [h["line_start"], h["line_end"]] == list(s.item.lines_range())
    else:
        root = ET.fromstring(ctx.render())
        files = root.findall("more/file")
        assert len({f.get("path") for f in files}) == len(files)
        for f in files:
            for h in f.findall("hit"):
                s = by_id[h.get("id")]
                assert f.get("path") == s.item.path and h.find("source").text == s.head
                assert h.get("lines") == s.item.lines_text()


def test_compact_entry_of_a_gone_definition_is_flagged(indexed_shop):
    shop = indexed_shop
    g = cf.open(str(shop))
    path = shop / "gateway-go/refund/stripe.go"
    path.write_text(path.read_text().replace("Refund(chargeID", "Reverse(chargeID"))
    ctx = g.context(REFUND, budget_tokens=1500)
    it = _item(ctx, "refund/stripe.go::StripeGateway.Refund")
    c = it.compact()
    assert it.span.status == "stale"
    assert not c.excerpt.runs  # the indexed signature, not quoted as source
    assert c.head == one_line(it.row["signature"], 120)
    line = Markdown().entry(c)
    assert "[stale]" in line and f"`{c.head}`" in line
    assert '"status":"stale","signature"' not in Json().entry(c)
    entry = json.loads(Json().entry(c))
    assert entry["status"] == "stale" and entry["signature"] == c.head and "source" not in entry

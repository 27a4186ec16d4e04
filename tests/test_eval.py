"""cf.evaluate, query sets, metrics, paired comparison and `ctxframe eval`."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import ctxframe as cf
from ctxframe._apps.eval import all_in_top, first_rank, metrics, paired, rank_files, rank_functions
from ctxframe._rank.querysets import QuerySetError, load_queries
from ctxframe.cli import main

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "data-samples" / "queries.jsonl"


def test_metrics_by_hand() -> None:
    m = metrics([2, None], k=(1, 5))
    assert m["rr"] == 0.5
    assert m["acc@5"] == 0.0  # one gold item is missing
    assert m["recall@5"] == 0.5
    assert m["ndcg@1"] == 0.0
    assert m["ndcg@5"] == pytest.approx((1 / 1.5849625007211562) / (1 + 1 / 1.5849625007211562))
    m = metrics([1, 3], k=(1, 5))
    assert (m["rr"], m["acc@1"], m["acc@5"], m["recall@1"]) == (1.0, 0.0, 1.0, 0.5)
    assert metrics([None], k=(1,)) == {"rr": 0.0, "acc@1": 0.0, "recall@1": 0.0, "ndcg@1": 0.0}
    assert first_rank([None, 4, 2]) == 2 and all_in_top([None, 4]) is None
    assert all_in_top([4, 2]) == 4


def test_file_rank_is_the_best_node_rank() -> None:
    hits = pl.DataFrame(
        {
            "rank": [1, 2, 3, 4],
            "id": ["a.py::f", "a.py::g", "b.py", "c.py::C.m"],
            "kind": ["function", "function", "file", "method"],
            "qualname": ["f", "g", "b.py", "C.m"],
            "path": ["a.py", "a.py", "b.py", "c.py"],
        }
    )
    assert rank_files(hits, ["b.py", "a.py", "zz.py"]) == [2, 1, None]
    # functions rank among definitions only (the file node b.py is left out)
    assert rank_functions(hits, ["C.m", "a.py::g", "nope"]) == [3, 2, None]


def test_load_queries_formats_and_errors(tmp_path: Path) -> None:
    qs = load_queries(QUERIES)
    assert qs.height >= 40
    assert qs.columns == [
        "qid",
        "query",
        "repo",
        "store",
        "gold_ids",
        "gold_files",
        "gold_functions",
        "tags",
    ]
    assert qs["repo"][0] == str(ROOT / "data-samples" / "shop")  # relative to the file
    tags = {t for ts in qs["tags"].to_list() for t in ts}
    for needed in (
        "tier:named",
        "tier:exact",
        "tier:prefix",
        "tier:trigram",
        "intent:test",
        "intent:import",
        "intent:doc",
        "typo",
        "generic",
        "long",
        "no-answer",
    ):
        assert needed in tags, needed
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    with pytest.raises(QuerySetError, match="missing 'query'"):
        load_queries(bad)
    bad.write_text('{"query": "a"}\n{"query": "b", "gold": [1]}\n')
    with pytest.raises(QuerySetError, match="strings"):
        load_queries(bad)
    bad.write_text('{"id": "a", "query": "a"}\n{"id": "a", "query": "b"}\n')
    with pytest.raises(QuerySetError, match="duplicate"):
        load_queries(bad)
    rows = load_queries([{"query": "refund", "gold": "x.py::f"}])
    assert rows["gold_ids"].to_list() == [["x.py::f"]] and rows["qid"][0] == "q001"


def test_gold_of_the_sample_set_exists(shop_graph) -> None:
    qs = load_queries(QUERIES)
    ids = set(shop_graph.nodes["id"].to_list())
    files = set(shop_graph.files["path"].to_list())
    quals = set(shop_graph.nodes["qualname"].drop_nulls().to_list())
    for row in qs.iter_rows(named=True):
        assert set(row["gold_ids"]) <= ids, row["qid"]
        assert set(row["gold_files"]) <= files, row["qid"]
        assert set(row["gold_functions"]) <= quals, row["qid"]
        if "no-answer" in row["tags"]:
            assert not (row["gold_ids"] or row["gold_files"] or row["gold_functions"])


class MyRule:
    """A user-defined rule: count of distinct matched query tokens (exact only)."""

    name = "token-count"

    def score(self, matches: pl.DataFrame) -> pl.DataFrame:
        return (
            matches.filter(pl.col("tier") == 1)
            .group_by("node_id")
            .agg(score=pl.col("qtoken").n_unique().cast(pl.Float64))
        )


def test_evaluate_the_sample_set(shop_graph) -> None:
    ev = cf.evaluate(shop_graph, QUERIES, rules=["idf-tiers", "bm25", MyRule()], k=(1, 5, 10))
    s = ev.summary
    assert ev.rules == ["idf-tiers", "bm25", "token-count"]
    assert set(s["level"]) == {"node", "file", "function"}
    for col in ("mrr", "acc@1", "acc@5", "acc@10", "recall@5", "ndcg@10"):
        assert s[col].is_between(0, 1).all()
    # no-answer questions are not scored
    assert not ev.per_query.filter(pl.col("qid").str.starts_with("noans")).height
    file_mrr = dict(s.filter(pl.col("level") == "file").select("rule", "mrr").iter_rows())
    assert file_mrr["idf-tiers"] > file_mrr["bm25"]  # the default beats the baseline here
    acc = s.filter(pl.col("level") == "file", pl.col("rule") == "idf-tiers")["acc@10"].item()
    assert acc >= 0.9
    c = ev.compare("bm25", "idf-tiers")
    assert c["wins"] + c["losses"] + c["ties"] == c["n"] > 0
    assert c["ci_low"] <= c["diff"] <= c["ci_high"]
    d = ev.rank_differences("idf-tiers", "bm25")
    assert d.columns == ["qid", "query", "rank_a", "rank_b", "delta"]
    assert "idf-tiers" in str(ev)


def test_paired_bootstrap_is_deterministic() -> None:
    pq = pl.DataFrame(
        {
            "qid": ["a", "b", "c", "a", "b", "c"],
            "rule": ["x"] * 3 + ["y"] * 3,
            "level": ["file"] * 6,
            "rr": [1.0, 0.5, 0.0, 0.5, 0.5, 1.0],
        }
    )
    one = paired(pq, "x", "y")
    assert (one["wins"], one["losses"], one["ties"]) == (1, 1, 1)
    assert one["diff"] == pytest.approx(-0.5 / 3)
    assert one == paired(pq, "x", "y")


def test_evaluate_by_mapping_and_query_repo(shop_graph, tmp_path: Path) -> None:
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        json.dumps(
            {
                "id": "a",
                "query": "validate refund amount",
                "repo": "shop",
                "gold": ["services/payments/refund_processor.py::validate_refund_amount"],
            }
        )
        + "\n"
    )
    ev = cf.evaluate({"shop": shop_graph}, qfile, rules=["idf-tiers"])
    assert ev.per_query.filter(pl.col("level") == "node")["first"].item() == 1


def test_cli_eval(shop_graph, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    code = main(
        [
            "eval",
            str(QUERIES),
            "--repo",
            str(shop_graph.root),
            "--rule",
            "idf-tiers",
            "--rule",
            "bm25",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "idf-tiers" in text and "bm25" in text and "wins" in text
    summary = pl.read_parquet(out / "summary.parquet")
    assert set(summary["rule"]) == {"idf-tiers", "bm25"}
    assert (out / "per_query.parquet").is_file() and (out / "compare.parquet").is_file()
    assert main(["eval", str(QUERIES), "--repo", str(shop_graph.root), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"][0]["rule"] == "idf-tiers"
    assert main(["eval", str(QUERIES), "--repo", str(shop_graph.root), "--rule", "nope"]) == 2

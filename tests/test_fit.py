"""Fitting: a rule whose score is the base rule's evidence parts, each weighed
(`cf.rules.Fitted`), `cf.fit_rule` (coordinate ascent, cross-validated) and rule files (TOML)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import ctxframe as cf
from ctxframe._apps.fit import _Q, FitError, _ascend, _Model
from ctxframe._rank.fitted import RuleFileError
from ctxframe._rank.parts import PARTS
from ctxframe.rules import Fitted, IdfTiers

SAMPLE_QUERIES = Path(__file__).resolve().parent.parent / "data-samples" / "queries.jsonl"


@pytest.fixture(scope="module")
def graph(_shop_index_template: Path) -> cf.Graph:
    return cf.open(str(_shop_index_template))


def _questions() -> list[str]:
    return cf.load_queries(SAMPLE_QUERIES)["query"].to_list()


def test_weights_of_one_rank_as_the_base_rule(graph) -> None:
    fitted = Fitted(IdfTiers())
    for text in _questions():
        a = graph.rank(text, limit=30)
        b = graph.rank(text, limit=30, rule=fitted)
        assert a["id"].to_list() == b["id"].to_list(), text
        assert np.allclose(a["score"].to_numpy(), b["score"].to_numpy(), atol=2e-6)


@pytest.mark.parametrize("part", ["content", "name_exact", "parent", "hint_path"])
def test_a_weight_scales_its_part(graph, part) -> None:
    text = _questions()[-8]
    fitted = Fitted(IdfTiers(), part_weights={part: 0.0}, name="no-" + part)
    res = graph.query(text, limit=20, rule=fitted, explain=True)
    rows = res.evidence.filter(pl.col("part") == part)
    assert rows.height == 0 or rows["contribution"].abs().max() < 1e-12
    per = res.evidence.group_by("rank").agg(pl.col("contribution").sum()).sort("rank")
    assert np.allclose(per["contribution"].to_numpy(), res.hits["score"].to_numpy(), atol=2e-6)


def test_fitted_rule_round_trips_through_toml(tmp_path) -> None:
    base = IdfTiers(content=2.0, mix=0.3, weights=cf.rules.IdfTiers().weights.__class__(title=2.0))
    rule = Fitted(base, part_weights={"content": 1.5, "hint_path": 0.25}, test=0.3, name="mine",
                  fit={"metric": "mrr", "folds": 5})  # fmt: skip
    path = rule.save(str(tmp_path / "mine.toml"))
    back = cf.rules.load(path)
    assert back == rule
    assert back.weight_map["content"] == 1.5 and back.weight_map["name_exact"] == 1.0
    assert back.fit_info == {"metric": "mrr", "folds": 5}
    plain = cf.rules.load(cf.rules.save(IdfTiers(content=1.0, name="c1"), str(tmp_path / "c.toml")))
    assert plain == IdfTiers(content=1.0, name="c1")


def test_a_rule_file_is_a_rule_name(graph, tmp_path, capsys, indexed_shop) -> None:
    rule = Fitted(IdfTiers(), part_weights={"content": 0.0}, name="no-content")
    path = rule.save(str(tmp_path / "r.toml"))
    assert graph.rank("refund processing", rule=path, limit=3).height == 3
    assert hash(cf.rules.load(path)) == hash(rule)
    from ctxframe.cli import main

    code = main(["query", "refund processing", "--repo", str(indexed_shop), "--rule", path,
                 "--json", "--limit", "2"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0 and '"rule": "no-content"' in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not = [toml", "not TOML"),
        ('[rule]\nkind = "neural"\n', "kind must be"),
        ('[rule]\nkind = "fitted"\n[weights]\nvibes = 2.0\n', "unknown part 'vibes'"),
        ('[rule]\nkind = "fitted"\n[base]\nk3 = 1.0\n', "unknown IdfTiers parameter 'k3'"),
    ],
)
def test_bad_rule_files_say_what_is_wrong(tmp_path, text, message) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RuleFileError, match=message):
        cf.rules.load(str(path))


def test_unknown_part_weight_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown part 'speed'"):
        Fitted(IdfTiers(), part_weights={"speed": 2.0})


def _q(qid: str, x: list[list[float]], gold: int) -> _Q:
    x = np.array(x, dtype=float)
    m = x.shape[0]
    full = np.zeros((m, len(PARTS)))
    full[:, : x.shape[1]] = x
    return _Q(
        qid=qid,
        x=full,
        graph=np.zeros(m),
        flags=np.zeros((m, 3), dtype=bool),
        fixed=np.ones(m),
        named=np.zeros(m, dtype=bool),
        tie=np.arange(m),
        unit=np.arange(m),
        gold=[np.array([gold])],
        n_gold=1,
    )


def test_coordinate_ascent_moves_the_weight_that_misleads() -> None:
    # the gold is strong in part 0 (name_exact) and weak in part 1 (name_prefix); a distractor
    # the other way round wins at weights 1: the ascent must tip the balance
    qs = [_q(f"q{i}", [[1.0, 3.0], [2.0 + i / 10, 0.5]], gold=1) for i in range(6)]
    start = _Model(list(PARTS), np.ones(len(PARTS)), np.array([0.5, 0.25, 0.5]))
    model, best = _ascend(start, qs, ["name_exact", "name_prefix"], "rr", (1, 5), rounds=4)
    assert best == 1.0
    w = dict(zip(PARTS, model.w, strict=True))
    assert w["name_exact"] / max(w["name_prefix"], 1e-9) > 2.0


def test_fit_rule_reports_folds_and_heldout(graph) -> None:
    rule = cf.fit_rule(graph, SAMPLE_QUERIES, folds=3, metric="mrr", level="node", rounds=2)
    assert isinstance(rule, Fitted)
    rep = rule.report
    assert rep["fold"].to_list() == ["1", "2", "3", "all"]
    assert (rep["train_after"] >= rep["train_before"] - 1e-12).all()
    info = rule.fit_info
    assert info["metric"] == "mrr" and info["level"] == "node" and info["folds"] == 3
    assert info["questions"] == rep.filter(pl.col("fold") == "all")["train"].item()
    again = cf.fit_rule(graph, SAMPLE_QUERIES, folds=3, metric="mrr", level="node", rounds=2)
    assert again.part_weights == rule.part_weights  # deterministic


def test_fit_rule_refuses_unknown_params_and_metrics(graph) -> None:
    with pytest.raises(FitError, match="unknown parameter 'speed'"):
        cf.fit_rule(graph, SAMPLE_QUERIES, params=["speed"], folds=2)
    with pytest.raises(FitError, match="unknown metric"):
        cf.fit_rule(graph, SAMPLE_QUERIES, metric="accuracy", folds=2)

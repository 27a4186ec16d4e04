"""Scoring rules for `Graph.query`: the built-in rules, the registry and the `Rule` protocol,
fusion (`Fused`), a dense rule over an encoder you bring (`Dense`), fitted rules (`Fitted`,
from `ctxframe.fit_rule`) and rule files (`save`, `load`: TOML).

A rule is any object with ``name: str`` and ``score(matches) -> DataFrame(node_id, score)``;
docs/ranking.md and ``ctxframe._rank.rules`` describe the match table a rule receives.
"""

from ctxframe._rank.dense import Dense
from ctxframe._rank.fitted import Fitted
from ctxframe._rank.fitted import load_rule as load
from ctxframe._rank.fitted import save_rule as save
from ctxframe._rank.fusion import Fused
from ctxframe._rank.parts import PARTS
from ctxframe._rank.rules import (
    BM25,
    RULES,
    FlatNameBonus,
    IdfTiers,
    Rule,
    UnknownRule,
    get_rule,
)

__all__ = [
    "BM25",
    "PARTS",
    "RULES",
    "Dense",
    "Fitted",
    "FlatNameBonus",
    "Fused",
    "IdfTiers",
    "Rule",
    "UnknownRule",
    "get_rule",
    "load",
    "save",
]

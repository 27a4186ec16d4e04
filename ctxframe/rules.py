"""Scoring rules for `Graph.query`: the built-in rules, the registry and the `Rule` protocol.

A rule is any object with ``name: str`` and ``score(matches) -> DataFrame(node_id, score)``;
docs/ranking.md and ``ctxframe._rank.rules`` describe the match table a rule receives.
"""

from ctxframe._rank.rules import (
    BM25,
    RULES,
    FlatNameBonus,
    IdfTiers,
    Rule,
    UnknownRule,
    get_rule,
)

__all__ = ["BM25", "RULES", "FlatNameBonus", "IdfTiers", "Rule", "UnknownRule", "get_rule"]

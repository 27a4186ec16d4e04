"""Any way of naming a rule -> the rule: ``None`` (the default), a registry name, a rule file
(``*.toml``, ctxframe._rank.fitted.save_rule), a rule class or a rule object."""

from __future__ import annotations

from typing import Any

from ctxframe._rank import rules as _rules

__all__ = ["resolve"]


def resolve(rule: Any = None) -> Any:
    """The rule ``rule`` names (see the module docstring)."""
    if isinstance(rule, str) and rule.endswith(".toml"):
        from ctxframe._rank.fitted import load_rule

        return load_rule(rule)
    return _rules.get_rule(rule)

"""A fitted rule: another rule's evidence parts, each with its own weight.

:class:`Fitted` scores a question with its ``base`` rule (the default :class:`IdfTiers` unless
told otherwise), which records the parts of every score (ctxframe._rank.parts: name tiers,
content, the parent's words, hints, ...), and adds them up with its ``weights`` (1 for a part it
does not name): at query time a handful of multiplications over the frame the base rule builds
anyway. Its intent multipliers (``test``, ``stub``, ``doc``) may differ from the base's.
``cf.fit_rule`` (ctxframe._apps.fit) finds the weights on labelled questions.

Rules save to and load from TOML (:func:`save_rule`, :func:`load_rule`): a fitted rule, or an
``IdfTiers`` with its parameters (only those that differ from the defaults are written), with
what the fit measured under ``[fit]`` (the part weights are ``part_weights``; ``weights`` is,
as for ``IdfTiers``, the long-question evidence weights)::

    [rule]
    kind = "fitted"
    name = "fitted-swe"
    base = "idf-tiers"
    test = 0.5

    [base]            # IdfTiers parameters
    content_long = 3.0

    [base.weights]    # its EvidenceWeights
    title = 1.5

    [weights]         # part -> weight
    content = 1.3
    hint_path = 0.75
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ctxframe._core.errors import CtxframeError
from ctxframe._rank.evidence import EvidenceWeights
from ctxframe._rank.parts import HINT_KINDS, PARTS, Trace, add_missing, part_sum
from ctxframe._rank.rules import IdfTiers

__all__ = ["INTENTS", "Fitted", "RuleFileError", "load_rule", "save_rule"]

INTENTS = ("test", "stub", "doc")  # the intent multipliers a fit may weigh too
_FORMAT = 1


class RuleFileError(CtxframeError, ValueError):
    """A rule file that cannot be read (not TOML, unknown kind, unknown parameter)."""


@dataclass(frozen=True)
class Fitted:
    """``base``'s parts, each times its weight (see the module docstring). ``weights`` maps a
    part of :data:`ctxframe._rank.parts.PARTS` to its weight (1 when absent); ``test``,
    ``stub``, ``doc``: the intent multipliers (None: the base's). ``fit`` holds what the fit
    measured (metric, folds, held-out figures) and ``report`` its per-fold table."""

    base: Any = field(default_factory=IdfTiers)
    part_weights: tuple[tuple[str, float], ...] = ()
    test: float | None = None
    stub: float | None = None
    doc: float | None = None
    name: str = "fitted"
    fit: tuple[tuple[str, Any], ...] = ()
    report: pl.DataFrame | None = field(default=None, compare=False, repr=False, hash=False)
    explains = True

    def __post_init__(self) -> None:
        if not getattr(self.base, "explains", False):
            raise TypeError("a fitted rule weighs the parts of a rule that records them (IdfTiers)")
        if isinstance(self.part_weights, dict):
            object.__setattr__(self, "part_weights", tuple(sorted(self.part_weights.items())))
        unknown = sorted({p for p, _w in self.part_weights} - set(PARTS))
        if unknown:
            raise ValueError(f"unknown part {unknown[0]!r}; parts: {', '.join(PARTS)}")
        fit = self.fit.items() if isinstance(self.fit, dict) else self.fit
        object.__setattr__(
            self, "fit", tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in fit)
        )
        for name in INTENTS:
            if getattr(self, name) is None:
                object.__setattr__(self, name, float(getattr(self.base, name)))

    def __getattr__(self, name: str) -> Any:
        # what the pipeline reads of a rule (match options, graph weights, evidence weights)
        if name.startswith("__") or name in ("base", "part_weights"):
            raise AttributeError(name)
        return getattr(self.base, name)

    @property
    def weight_map(self) -> dict[str, float]:
        """Part -> weight (1 for the parts not listed)."""
        return {p: 1.0 for p in PARTS} | dict(self.part_weights)

    @property
    def fit_info(self) -> dict[str, Any]:
        """What the fit measured (metric, level, folds, questions, held-out figures)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.fit}

    def score(self, matches: pl.DataFrame, content: Any = None, trace: Trace | None = None):
        """The base rule's parts, weighed and summed."""
        own = Trace()
        scored = self.base.score(matches, content, trace=own)
        if own.nodes is None:
            raise TypeError(f"rule {self.base!r} recorded no parts for this question")
        w = self.weight_map
        parts = add_missing(own.nodes)
        total = parts.select("node_row", score=part_sum(w))
        out = scored.select("node_row", "tier").join(total, on="node_row", how="inner")
        if trace is not None:
            trace.nodes = parts.with_columns(pl.col(p) * w[p] for p in PARTS)
            trace.tokens = [
                t.with_columns(
                    contribution=pl.col("contribution")
                    * pl.col("part").replace_strict(w, default=1.0, return_dtype=pl.Float64)
                )
                for t in own.tokens
            ]
            if own.hints is not None:
                kinds = {k: w[f"hint_{k}"] for k in HINT_KINDS}
                trace.hints = own.hints.with_columns(
                    bonus=pl.col("bonus")
                    * pl.col("kind").replace_strict(kinds, default=1.0, return_dtype=pl.Float64)
                )
        return out

    def save(self, path: str) -> str:
        """Write this rule as TOML (see the module docstring); the path written."""
        return save_rule(self, path)


# --------------------------------------------------------------------------- TOML


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a TOML basic string
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _table(name: str, values: dict[str, Any]) -> list[str]:
    lines = [f"[{name}]"]
    for k, v in values.items():
        if v is None:
            continue
        lines.append(f"{k} = {_toml_value(v)}")
    return [*lines, ""]


def _changed(obj: Any) -> dict[str, Any]:
    """A dataclass's fields that differ from their defaults (nested dataclasses apart)."""
    default = type(obj)()
    out = {}
    for f in dataclasses.fields(obj):
        v, d = getattr(obj, f.name), getattr(default, f.name)
        if dataclasses.is_dataclass(v) or v == d or f.name == "name":
            continue
        out[f.name] = v
    return out


def save_rule(rule: Any, path: str) -> str:
    """Write ``rule`` (a :class:`Fitted` or an :class:`IdfTiers`) to ``path`` as TOML."""
    if isinstance(rule, IdfTiers):
        head = {"kind": "idf-tiers", "name": rule.name, "format": _FORMAT}
        base, fitted = rule, None
    elif isinstance(rule, Fitted):
        if not isinstance(rule.base, IdfTiers):
            raise TypeError("only a rule fitted over IdfTiers can be written to TOML")
        head = {"kind": "fitted", "name": rule.name, "base": "idf-tiers", "format": _FORMAT}
        head |= {k: getattr(rule, k) for k in INTENTS}
        base, fitted = rule.base, rule
    else:
        raise TypeError(f"cannot write a {type(rule).__name__} to TOML (Fitted or IdfTiers)")
    lines = ["# a ctxframe ranking rule (ctxframe.rules.load)", ""]
    lines += _table("rule", head)
    lines += _table("base", _changed(base))
    ev = _changed(base.weights)
    if ev:
        lines += _table("base.weights", ev)
    if fitted is not None:
        lines += _table("weights", dict(fitted.part_weights))
        info = {k: v for k, v in fitted.fit if isinstance(v, bool | int | float | str | tuple)}
        if info:
            lines += _table("fit", info)
    text = "\n".join(lines)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


def _idf_tiers(table: dict[str, Any], where: str) -> IdfTiers:
    table = dict(table)
    ev = table.pop("weights", {}) or {}
    known = {f.name for f in dataclasses.fields(IdfTiers)} - {"weights"}
    bad = sorted(set(table) - known)
    if bad:
        raise RuleFileError(f"{where}: unknown IdfTiers parameter {bad[0]!r}")
    known_ev = {f.name for f in dataclasses.fields(EvidenceWeights)}
    bad = sorted(set(ev) - known_ev)
    if bad:
        raise RuleFileError(f"{where}: unknown evidence weight {bad[0]!r}")
    return IdfTiers(**table, weights=EvidenceWeights(**ev))


def load_rule(path: str) -> Any:
    """The rule a TOML file written by :func:`save_rule` describes."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise RuleFileError(f"cannot read rule file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RuleFileError(f"{path}: not TOML ({exc})") from None
    head = data.get("rule") or {}
    kind = head.get("kind")
    base = _idf_tiers(data.get("base") or {}, path)
    if kind == "idf-tiers":
        return dataclasses.replace(base, name=head.get("name", base.name))
    if kind != "fitted":
        raise RuleFileError(f"{path}: [rule] kind must be 'fitted' or 'idf-tiers', not {kind!r}")
    weights = data.get("weights") or {}
    bad = sorted(set(weights) - set(PARTS))
    if bad:
        raise RuleFileError(f"{path}: unknown part {bad[0]!r} in [weights]")
    return Fitted(
        base=base,
        part_weights={k: float(v) for k, v in weights.items()},
        name=str(head.get("name", "fitted")),
        fit=dict(data.get("fit") or {}),
        **{k: float(head[k]) for k in INTENTS if k in head},
    )

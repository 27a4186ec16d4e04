"""The `[audit]` table of `.ctxframe/config.toml` (or `[tool.ctxframe.audit]`), checked.

```toml
[audit]
package_depth = 2                  # fold packages to this many parts (default: automatic)
exclude = ["docs/**"]              # paths the audit leaves out (globs)
whitelist = ["handle_*", "pkg.mod.Class.method"]   # never dead code: names, qualnames, globs
entry_decorators = ["my_registry.add"]             # decorators that register what they decorate

[audit.thresholds]                 # when a function is a complexity outlier
cyclomatic = 15
nesting = 4
lines = 100
params = 6

[[audit.contracts]]                # import-linter's vocabulary
name = "Layers"
type = "layers"                    # layers | forbidden | independence
layers = ["shop.api", "shop.services", "shop.data"]   # high to low; "a | b" are siblings
containers = []                    # optional: layers named relative to each container
ignore_imports = ["shop.data.cache -> shop.api.app"]
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxframe._core.errors import ConfigError

THRESHOLDS = {"cyclomatic": 15, "nesting": 4, "lines": 100, "params": 6}
CONTRACT_TYPES = ("layers", "forbidden", "independence")
_KEYS = {"package_depth", "exclude", "whitelist", "entry_decorators", "thresholds", "contracts"}
_CONTRACT_KEYS = {
    "layers": {"name", "type", "layers", "containers", "ignore_imports", "exhaustive"},
    "forbidden": {"name", "type", "source_modules", "forbidden_modules", "ignore_imports",
                  "allow_indirect_imports"},
    "independence": {"name", "type", "modules", "ignore_imports"},
}  # fmt: skip


@dataclass(frozen=True)
class Contract:
    """One import contract, as import-linter reads it."""

    name: str
    type: str
    layers: tuple[tuple[str, ...], ...] = ()  # high to low; each: its sibling modules
    independent: tuple[bool, ...] = ()  # per layer: may its siblings import one another?
    containers: tuple[str, ...] = ()
    source_modules: tuple[str, ...] = ()
    forbidden_modules: tuple[str, ...] = ()
    allow_indirect: bool = False
    modules: tuple[str, ...] = ()
    ignore_imports: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AuditConfig:
    """What `[audit]` says (defaults when absent)."""

    package_depth: int | None = None
    exclude: tuple[str, ...] = ()
    whitelist: tuple[str, ...] = ()
    entry_decorators: tuple[str, ...] = ()
    thresholds: dict[str, int] = field(default_factory=lambda: dict(THRESHOLDS))
    contracts: tuple[Contract, ...] = ()
    source: str | None = None


def _strings(table: dict, key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return tuple(v.strip() for v in value if v.strip())


def parse(table: dict | None, source: str | None = None) -> AuditConfig:
    """Check and read the `[audit]` table; a mistake is one ConfigError naming the fix."""
    if not table:
        return AuditConfig(source=source)
    where = f"{source or 'config'} [audit]"
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(
            f"{where}: unknown setting(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(_KEYS))}"
        )
    depth = table.get("package_depth")
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 1):
        raise ConfigError(f"{where}: `package_depth` must be a whole number of at least 1")
    thresholds = dict(THRESHOLDS)
    given = table.get("thresholds", {})
    if not isinstance(given, dict):
        raise ConfigError(f"{where}: `thresholds` must be a table ([audit.thresholds])")
    for key, value in given.items():
        if key not in THRESHOLDS:
            raise ConfigError(
                f"{where}: unknown threshold {key!r}; known: {', '.join(sorted(THRESHOLDS))}"
            )
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{where}: threshold `{key}` must be a whole number of at least 1")
        thresholds[key] = value
    raw = table.get("contracts", [])
    if not isinstance(raw, list) or not all(isinstance(c, dict) for c in raw):
        raise ConfigError(f"{where}: `contracts` must be an array of tables ([[audit.contracts]])")
    contracts = tuple(_contract(c, i, where) for i, c in enumerate(raw, 1))
    return AuditConfig(
        package_depth=depth,
        exclude=_strings(table, "exclude", where),
        whitelist=_strings(table, "whitelist", where),
        entry_decorators=_strings(table, "entry_decorators", where),
        thresholds=thresholds,
        contracts=contracts,
        source=source,
    )


def _contract(raw: dict, n: int, where: str) -> Contract:
    kind = raw.get("type")
    name = raw.get("name") or f"contract {n}"
    here = f"{where} contract {name!r}"
    if kind not in CONTRACT_TYPES:
        raise ConfigError(f"{here}: `type` must be one of {', '.join(CONTRACT_TYPES)}")
    unknown = set(raw) - _CONTRACT_KEYS[kind]
    if unknown:
        raise ConfigError(
            f"{here}: unknown key(s) {', '.join(sorted(unknown))} for a {kind} contract"
        )
    ignore = []
    for text in _strings(raw, "ignore_imports", here):
        importer, arrow, imported = text.partition("->")
        if not arrow or not importer.strip() or not imported.strip():
            raise ConfigError(f"{here}: ignore_imports entry {text!r} must read 'a.b -> c.d'")
        ignore.append((importer.strip(), imported.strip()))
    common = {"name": str(name), "type": kind, "ignore_imports": tuple(ignore)}
    if kind == "layers":
        layers, independent = [], []
        for text in _strings(raw, "layers", here):
            siblings = text.replace(":", "|").split("|")
            layers.append(tuple(s.strip().strip("()") for s in siblings if s.strip()))
            independent.append(":" not in text)
        if len(layers) < 2:
            raise ConfigError(f"{here}: `layers` must name at least two layers, high to low")
        return Contract(
            **common,
            layers=tuple(layers),
            independent=tuple(independent),
            containers=_strings(raw, "containers", here),
        )
    if kind == "forbidden":
        sources = _strings(raw, "source_modules", here)
        forbidden = _strings(raw, "forbidden_modules", here)
        if not sources or not forbidden:
            raise ConfigError(f"{here}: needs `source_modules` and `forbidden_modules`")
        allow = raw.get("allow_indirect_imports", False)
        if not isinstance(allow, bool):
            raise ConfigError(f"{here}: `allow_indirect_imports` must be true or false")
        return Contract(
            **common, source_modules=sources, forbidden_modules=forbidden, allow_indirect=allow
        )
    mods = _strings(raw, "modules", here)
    if len(mods) < 2:
        raise ConfigError(f"{here}: `modules` must name at least two modules")
    return Contract(**common, modules=mods)

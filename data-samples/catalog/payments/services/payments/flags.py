"""Feature flags, switched in ops/feature-flags.json (an adapter puts them in the graph)."""

import json
from pathlib import Path

FLAGS_FILE = Path(__file__).resolve().parents[2] / "ops" / "feature-flags.json"


def flag_enabled(name):
    """True when the named flag is switched on."""
    flags = json.loads(FLAGS_FILE.read_text())["flags"]
    return bool(flags.get(name, {}).get("enabled", False))


def strict_reconcile():
    """Stop reconciliation at the first mismatch."""
    return flag_enabled("strict_reconcile")


def ledger_export_v2():
    """Use the v2 ledger export layout."""
    return flag_enabled("ledger_export_v2")

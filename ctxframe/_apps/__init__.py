"""Layer 7: programs on top of `Graph` — notebook explorer, local server, rule evaluation."""

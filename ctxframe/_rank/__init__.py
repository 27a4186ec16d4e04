"""Layer 3: the ranker — token table, match tiers, rules, query-side evidence, abstain."""

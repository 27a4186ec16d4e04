"""Layer 0: what every stage shares — errors, the on-disk schema, configuration, languages."""

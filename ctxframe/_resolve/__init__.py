"""Layer 2: raw references to edges with confidence, as joins over the whole repository."""

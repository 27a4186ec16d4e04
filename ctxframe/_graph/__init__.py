"""Layer 6: the `Graph` facade, its lookup indexes, traversal, verbs and result types."""

"""Layer 4: the on-disk store — build (full and incremental), tables, caches, status."""

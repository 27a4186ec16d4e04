"""Layer 1: from files to raw rows — walk, per-file extraction, documents, boundaries, adapters."""

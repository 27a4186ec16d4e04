"""Just above `_core`: text, HTML (Jinja2 templates) and pictures from plain dicts and frames;
it knows nothing of `Graph`, so every result type, the store's included, renders through it."""

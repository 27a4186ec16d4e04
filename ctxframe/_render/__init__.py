"""Layer 5: text, HTML and pictures from frames; knows nothing of `Graph`."""

"""How common a word is in English: Zipf frequencies from ``wordfreq`` (a kept library).

``zipf("the")`` is about 7.7, ``zipf("redirect")`` 3.2, ``zipf("punycode")`` 0 (not listed). The
abstain decision (ctxframe._rank.abstain) compares a word's share of a code base with its share
of English: ``response`` is common English and far more common in httpx, ``coffee`` is not.

Reading wordfreq's English list takes about a second, so the table (321k words) is kept as an
Arrow file under the user's cache directory (``CTXFRAME_CACHE_DIR``, else
``$XDG_CACHE_HOME/ctxframe``, else ``~/.cache/ctxframe``), keyed by wordfreq's data file, and
memory-mapped by later processes; when that directory is not writable the table lives in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache

import polars as pl

__all__ = ["cache_dir", "zipf"]


def cache_dir() -> str:
    """Where ctxframe keeps derived data that belongs to no store."""
    env = os.environ.get("CTXFRAME_CACHE_DIR")
    if env:
        return os.path.expanduser(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ctxframe")


def _build() -> pl.DataFrame:
    import wordfreq

    freqs = wordfreq.get_frequency_dict("en", wordlist="best")
    words = [w for w in freqs if " " not in w]
    return (
        pl.DataFrame({"word": words, "zipf": [wordfreq.freq_to_zipf(freqs[w]) for w in words]})
        .with_columns(pl.col("zipf").cast(pl.Float32))
        .sort("word")
    )


def _source_key() -> str:
    """The installed wordfreq English list's size and modification time: a key that changes
    with the data, found by a stat (asking for the distribution's version scans every installed
    package, a cold process's slowest step here)."""
    from importlib.util import find_spec

    spec = find_spec("wordfreq")
    try:
        data = os.path.join(os.path.dirname(spec.origin or ""), "data", "large_en.msgpack.gz")
        st = os.stat(data)
    except (AttributeError, OSError):  # another layout: the version will do
        from importlib.metadata import version

        return version("wordfreq")
    return f"{st.st_size}-{st.st_mtime_ns}"


@lru_cache(maxsize=1)
def _table() -> pl.DataFrame:
    path = os.path.join(cache_dir(), f"english-zipf-wordfreq-{_source_key()}.arrow")
    try:
        return pl.read_ipc(path)
    except (OSError, pl.exceptions.PolarsError):
        pass
    table = _build()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        table.write_ipc(tmp)
        os.replace(tmp, path)
    except OSError:
        pass
    return table


def zipf(words: Iterable[str]) -> dict[str, float]:
    """Each word's Zipf frequency in English (0 when wordfreq does not list it)."""
    words = sorted(set(words))
    if not words:
        return {}
    table = _table()
    probe = pl.Series(words, dtype=pl.String)
    at = table["word"].search_sorted(probe, side="left").to_list()
    out = {}
    n = table.height
    col_w, col_z = table["word"], table["zipf"]
    for w, i in zip(words, at, strict=True):
        out[w] = float(col_z[i]) if i < n and col_w[i] == w else 0.0
    return out

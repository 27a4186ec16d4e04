"""A dense rule: the user's encoder, cosine similarity, vectors cached per store version.

``Dense(encode=f)`` ranks nodes by the cosine between the question's vector and each node's,
``f`` being any function from a list of texts to vectors (a NumPy array, a list of lists, a
tensor with ``.numpy()``): sentence-transformers' ``model.encode``, a model2vec ``StaticModel``,
an API client. ctxframe ships no model and downloads none; without an encoder the default path
stays model-free.

A node's text (``text``): ``"source"`` — its source lines read from the repository (up to
``max_chars``), ``"summary"`` — kind, qualified name, signature, doc and path (what the store
holds without the repository), ``"auto"`` (default) — the source when the repository is there,
else the summary; or a function from the nodes frame to one text per row.

Node texts are encoded once per store version: the vectors are kept as Parquet in the version's
cache folder (``STORE/v-…/cache/vectors/<key>.parquet``: ``id``, ``hash`` of the text,
``vector``) and read back by later processes; a new version encodes only the nodes whose text
changed (the previous version's file is looked up by id and text hash). ``key`` names the
encoder (default: its module and qualified name; give one when that does not identify the model
and its settings). Without a store (frames only) the vectors live in memory.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ctxframe._core.errors import CtxframeError

__all__ = ["DENSE_TIER", "Dense", "node_texts"]

DENSE_TIER = 6  # the `tier` of a node found by a dense rule
TEXT_MODES = ("auto", "source", "summary")
_SKIP_PREFIX = "module://"  # module stubs: no text of their own


class EncoderError(CtxframeError, ValueError):
    """An encoder that fails or returns something that is not one vector per text."""


def _as_matrix(out: Any, n: int) -> np.ndarray:
    if hasattr(out, "detach"):  # a torch tensor
        out = out.detach()
    if hasattr(out, "cpu"):
        out = out.cpu()
    if hasattr(out, "numpy") and not isinstance(out, np.ndarray):
        out = out.numpy()
    arr = np.asarray(out, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise EncoderError(
            f"the encoder returned shape {arr.shape} for {n} texts: it must return one vector "
            "per text (an array of shape (texts, dimensions))"
        )
    return arr


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms > 0, norms, 1.0)


def _summary(nodes: pl.DataFrame) -> list[str]:
    parts = [
        pl.col("kind").fill_null(""),
        pl.coalesce("qualname", "label").fill_null(""),
        pl.col("signature").fill_null(""),
        pl.col("doc").fill_null(""),
        pl.col("path").fill_null(""),
    ]
    return nodes.select(pl.concat_str(parts, separator="\n")).to_series().to_list()


def _source(nodes: pl.DataFrame, root: str, max_chars: int) -> list[str]:
    """Each node's source lines from the repository (its summary when the file is not there)."""
    summary = _summary(nodes)
    out = list(summary)
    by_file: dict[str, list[int]] = {}
    paths = nodes["path"].to_list()
    for i, p in enumerate(paths):
        if p:
            by_file.setdefault(p, []).append(i)
    starts, ends = nodes["line_start"].to_list(), nodes["line_end"].to_list()
    for path, rows in by_file.items():
        try:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        for i in rows:
            a, b = starts[i], ends[i]
            span = lines if a is None or b is None else lines[max(0, a - 1) : b]
            text = "\n".join(span)
            if text.strip():
                out[i] = f"{summary[i]}\n{text}"[:max_chars]
    return out


def node_texts(
    nodes: pl.DataFrame, text: Any = "auto", root: str | None = None, max_chars: int = 2000
) -> list[str]:
    """One text per row of ``nodes`` (see the module docstring)."""
    if callable(text):
        out = list(text(nodes))
        if len(out) != nodes.height:
            raise ValueError(f"the text function gave {len(out)} texts for {nodes.height} nodes")
        return [str(t) for t in out]
    if text not in TEXT_MODES:
        raise ValueError(f"text must be one of {', '.join(TEXT_MODES)} or a function")
    if text == "summary" or (text == "auto" and not (root and os.path.isdir(root))):
        return _summary(nodes)
    if not root or not os.path.isdir(root):
        raise CtxframeError("text='source' needs the repository: open the graph from it")
    return _source(nodes, root, max_chars)


def _hash(texts: Sequence[str]) -> list[int]:
    return [
        int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "big")
        for t in texts
    ]


def _encode(rule: Dense, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    chunks = []
    for i in range(0, len(texts), max(1, rule.batch)):
        part = texts[i : i + rule.batch]
        try:
            out = rule.encode(part)
        except Exception as exc:  # the user's encoder: say which step failed
            raise EncoderError(f"the encoder failed on {len(part)} node texts: {exc}") from exc
        chunks.append(_as_matrix(out, len(part)))
    dims = {c.shape[1] for c in chunks}
    if len(dims) != 1:
        raise EncoderError(f"the encoder returned vectors of different sizes: {sorted(dims)}")
    return np.vstack(chunks)


def _read(path: str) -> pl.DataFrame | None:
    try:
        return pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError):
        return None


def _previous(vector_dir: str, name: str) -> list[str]:
    """The same encoder's vector files of the store's other versions, newest first."""
    version = os.path.dirname(os.path.dirname(vector_dir))
    store = os.path.dirname(version)
    found = []
    try:
        entries = os.listdir(store)
    except OSError:
        return []
    for entry in entries:
        path = os.path.join(store, entry, "cache", "vectors", name)
        other = os.path.join(store, entry) != version
        if entry.startswith("v-") and other and os.path.isfile(path):
            found.append(path)
    return sorted(found, key=lambda p: os.stat(p).st_mtime, reverse=True)


def _write(vector_dir: str, name: str, frame: pl.DataFrame) -> None:
    """Best effort, atomic: a read-only store just means no vector cache."""
    try:
        cache = os.path.dirname(vector_dir)
        if not os.path.isdir(os.path.dirname(cache)):
            return  # the version is gone
        for d in (cache, vector_dir):
            if not os.path.isdir(d):
                os.mkdir(d)
        tmp = os.path.join(vector_dir, f".{name}.{os.getpid()}.tmp")
        frame.write_parquet(tmp)
        os.replace(tmp, os.path.join(vector_dir, name))
    except (OSError, pl.exceptions.PolarsError):
        return


def vectors(index, rule: Dense) -> tuple[np.ndarray, np.ndarray]:
    """``(node rows, unit vectors)`` of the index's nodes under ``rule``'s encoder and text,
    built once per index (and per store version on disk, see the module docstring)."""
    memo = index.__dict__.setdefault("_dense_vectors", {})
    key = (rule.cache_key, rule.text if isinstance(rule.text, str) else id(rule.text))
    if key in memo:
        return memo[key]
    nodes = index.nodes
    keep = ~nodes["id"].str.starts_with(_SKIP_PREFIX).fill_null(False)
    if rule.kinds:
        keep = keep & nodes["kind"].is_in(list(rule.kinds))
    rows = np.flatnonzero(keep.to_numpy())
    picked = nodes[rows]
    texts = node_texts(picked, rule.text, getattr(index, "source_root", None), rule.max_chars)
    hashes = pl.Series("hash", _hash(texts), dtype=pl.UInt64)
    ids = picked["id"]
    want = pl.DataFrame({"id": ids, "hash": hashes, "_i": np.arange(len(texts))})
    vector_dir = getattr(index, "vector_dir", None)
    name = f"{rule.cache_key}.parquet"
    have = None
    if vector_dir:
        sources = [os.path.join(vector_dir, name), *_previous(vector_dir, name)]
        for path in sources:
            got = _read(path)
            if got is not None and {"id", "hash", "vector"} <= set(got.columns):
                have = got if have is None else pl.concat([have, got]).unique(["id", "hash"])
                if have.join(want, on=["id", "hash"], how="semi").height == want.height:
                    break
    matrix = None
    missing = want
    if have is not None and have.height:
        found = want.join(have, on=["id", "hash"], how="inner").unique("_i").sort("_i")
        if found.height:
            dims = {len(v) for v in found["vector"].head(1).to_list()}
            d = dims.pop()
            matrix = np.zeros((len(texts), d), dtype=np.float32)
            matrix[found["_i"].to_numpy()] = np.asarray(found["vector"].to_list(), dtype=np.float32)
            missing = want.join(found.select("_i"), on="_i", how="anti")
    if missing.height:
        new = _encode(rule, [texts[i] for i in missing["_i"].to_list()])
        if matrix is None:
            matrix = np.zeros((len(texts), new.shape[1]), dtype=np.float32)
        elif new.shape[1] != matrix.shape[1]:  # another model under the same key: start over
            matrix = np.zeros((len(texts), new.shape[1]), dtype=np.float32)
            missing = want
            new = _encode(rule, texts)
        matrix[missing["_i"].to_numpy()] = new
        if vector_dir:
            table = want.drop("_i").with_columns(
                vector=pl.Series(matrix.tolist(), dtype=pl.List(pl.Float32))
            )
            _write(vector_dir, name, table)
    if matrix is None:
        matrix = np.zeros((0, 0), dtype=np.float32)
    out = (rows.astype(np.uint32), _normalise(matrix))
    memo[key] = out
    return out


@dataclass(frozen=True)
class Dense:
    """Rank nodes by the cosine of their vectors with the question's (see the module
    docstring). ``kinds``: only nodes of these kinds get vectors (None: every node but module
    stubs); ``depth``: at most this many nodes scored per question; ``min_score``: cosines
    below this are left out."""

    encode: Callable[[list[str]], Any]
    name: str = "dense"
    key: str | None = None
    text: Any = "auto"
    kinds: tuple[str, ...] | None = None
    max_chars: int = 2000
    batch: int = 256
    depth: int = 1000
    min_score: float = 0.0
    fuzzy = False
    reads_content = True
    lean = True
    part = "dense"  # its evidence row in explain

    @property
    def cache_key(self) -> str:
        """The encoder's name in the vector cache (``key``, else its module and name)."""
        if self.key:
            base = self.key
        else:
            fn = self.encode
            owner = getattr(fn, "__self__", None)
            label = getattr(fn, "__qualname__", None) or type(fn).__qualname__
            mod = getattr(fn, "__module__", None) or type(fn).__module__
            if owner is not None:  # a bound method: the model's class
                label = f"{type(owner).__qualname__}.{getattr(fn, '__name__', 'encode')}"
            base = f"{mod}.{label}"
        safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in base)
        text = self.text if isinstance(self.text, str) else "custom"
        kinds = "-".join(self.kinds) if self.kinds else "all"
        return f"{safe}--{text}--{kinds}"

    def score(self, matches: pl.DataFrame, content: Any = None) -> pl.DataFrame:
        """Cosine of every node's vector with the question's, the best ``depth``."""
        schema = {"node_row": pl.UInt32, "score": pl.Float64, "tier": pl.Int8}
        if content is None:
            return pl.DataFrame(schema=schema)
        ix = content.index
        rows, matrix = vectors(ix, self)
        if not rows.size or not matrix.size:
            return pl.DataFrame(schema=schema)
        qv = _as_matrix(self.encode([content.question.text]), 1)
        if qv.shape[1] != matrix.shape[1]:
            raise EncoderError(
                f"the question's vector has {qv.shape[1]} dimensions, the nodes' {matrix.shape[1]}"
            )
        sims = matrix @ _normalise(qv)[0]
        keep = np.flatnonzero(sims > self.min_score)
        if keep.size > self.depth:
            keep = keep[np.argpartition(-sims[keep], self.depth - 1)[: self.depth]]
        return pl.DataFrame(
            {
                "node_row": rows[keep],
                "score": sims[keep].astype(np.float64),
                "tier": np.full(keep.size, DENSE_TIER, dtype=np.int8),
            },
            schema=schema,
        )

"""`card` answered from the card cache (ctxframe._store.cardcache) without importing Polars:
what a fresh `ctxframe card` process runs first. The same lookup order as `SymbolIndex.find`,
the same arrows as `Lookups.arrows` (a class's constructor callers merged in, as `verbs.card`
does) and the same text and JSON as `verbs.Card`. Whenever it cannot be sure to answer as the
normal path would — no cache, a damaged one, no name matched (the suggestions need the full
index), arrows whose order only a sort with ties would decide — it returns None and the
caller takes the normal path. `save` builds the cache after a normal-path card.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import zlib
from typing import Any

from ctxframe._render.budget import DEFAULT_BUDGET_TOKENS, fit_blocks
from ctxframe._render.text import card_section, doc_summary, location, name_of
from ctxframe._store import cardcache

CANDIDATE_COLS = ("id", "kind", "label", "qualname", "path", "line_start", "line_end")
_LISTED = ("calls", "contains", "extends", "implements", "imports", "mentions")
_ORDER = ("direction", "edge_kind", "other_label", "other_id")  # the merge sort of verbs.card


def _find(con, name: str) -> list[str]:
    """`SymbolIndex.find(name).ids` over the cache's indexed columns."""
    name = name.strip()
    if con.execute("SELECT 1 FROM card WHERE id = ?", (name,)).fetchone():
        return [name]

    def ids(col: str, key: str) -> list[str]:
        sql = f"SELECT id FROM card WHERE {col} = ? ORDER BY id"
        return [i for (i,) in con.execute(sql, (key,))]

    if "::" in name:
        path, _, qual = name.rpartition("::")
        found = [i for i in ids("qualname", qual) if i.split("::", 1)[0].endswith(path)]
        if found:
            return found
    for col, key in (("qualname", name), ("label", name), ("low", name.lower())):
        found = ids(col, key)
        if found:
            return found
    return []


def _display(ident: str, kind: str | None, qualname: str | None, label: str | None) -> str:
    """How an arrow names a node (`edges._display_label_expr`): a file by its path, else its
    qualified name, label or id."""
    if kind == "file":
        return ident
    return qualname if qualname is not None else label if label is not None else ident


def _arrows(db, node_id: str, cols: dict | None, include_ambiguous: bool) -> list[dict]:
    """A node's arrows (packed per node) as rows of `NEIGHBOURS_SCHEMA`, the other ends
    looked up by row."""
    if cols is None:
        return []
    others = sorted({r for r in cols["other"] if r is not None})
    ends: dict[int, tuple[str, str, str | None]] = {}
    for i in range(0, len(others), 500):
        chunk = others[i : i + 500]
        sql = (
            "SELECT row, id, kind, qualname, label FROM card "
            f"WHERE row IN ({','.join('?' * len(chunk))})"
        )
        for r, ident, kind, qual, label in db.execute(sql, chunk):
            ends[r] = (ident, _display(ident, kind, qual, label), kind)
    rows = []
    for direction, kind, conf, other, other_id, other_label, line, via in zip(
        *(cols[c] for c in cardcache.PACKED_COLS), strict=True
    ):
        if not include_ambiguous and conf == "AMBIGUOUS":
            continue
        other_kind = None
        if other is not None:
            other_id, other_label, other_kind = ends[other]
        rows.append(
            {
                "hit_id": node_id,
                "direction": direction,
                "edge_kind": kind,
                "confidence": conf,
                "other_id": other_id,
                "other_label": other_label,
                "other_kind": other_kind,
                "line": line,
                "via": via,
            }
        )
    return rows


def _key(row: dict[str, Any]) -> tuple:
    return tuple((row[c] is None, row[c] or "") for c in _ORDER)  # nulls last


def _with_constructor(cache, node: dict, arrows: list[dict], include_ambiguous: bool):
    """A class's arrows with its own `__init__`'s callers merged in and sorted as `verbs.card`
    sorts them; None when two different rows tie on the sort key (an unstable sort orders
    those, and only the normal path can say how)."""
    found = cache.db.execute(
        "SELECT row FROM card WHERE id = ?", (f"{node['id']}.__init__",)
    ).fetchone()
    if found is None:
        return arrows
    init = cache.payload(found[0])
    ctor = [
        r
        for r in _arrows(cache.db, node["id"], init["arrows"], include_ambiguous)
        if r["direction"] == "in" and r["edge_kind"] == "calls"
    ]
    merged = sorted(arrows + ctor, key=_key)
    for a, b in itertools.pairwise(merged):
        if _key(a) == _key(b) and a != b:
            return None
    return merged


def _section(arrows: list[dict], direction: str, kinds: tuple[str, ...], listed: bool = True):
    return [
        r for r in arrows if r["direction"] == direction and (r["edge_kind"] in kinds) == listed
    ]


def _ok_text(node: dict, arrows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """`Card.header()` and `Card.blocks()` of a found symbol."""
    parent = _section(arrows, "in", ("contains",))
    lines = [f"{name_of(node)}  [{node['kind']}]  {location(node)}", f"  id: {node['id']}"]
    if node.get("signature"):
        lines.append(f"  sig: {node['signature']}")
    if node.get("doc"):
        lines.append(f"  doc: {doc_summary(node['doc'])}")
    if parent:
        lines.append(f"  parent: {parent[0]['other_label']}")
    sections = [
        ("callers", _section(arrows, "in", ("calls",)), "←"),
        ("callees", _section(arrows, "out", ("calls",)), "→"),
        ("members", _section(arrows, "out", ("contains",)), "→"),
        ("extends/implements", _section(arrows, "out", ("extends", "implements")), "→"),
        ("subtypes", _section(arrows, "in", ("extends", "implements")), "←"),
        ("imports", _section(arrows, "out", ("imports",)), "→"),
        ("imported by", _section(arrows, "in", ("imports",)), "←"),
        ("mentioned by", _section(arrows, "in", ("mentions",)), "←"),
        ("touches", _section(arrows, "out", _LISTED, listed=False), "→"),
        ("touched by", _section(arrows, "in", _LISTED, listed=False), "←"),
    ]
    blocks = []
    for title, rows, arrow in sections:
        if not rows:
            continue
        blocks += card_section(title, rows, arrow, node.get("language"))
    return lines, blocks


def answer(
    store: str, name: str, *, include_ambiguous: bool, as_json: bool, budget: int | None
) -> tuple[str, int] | None:
    """(what `ctxframe card` prints, its exit code), or None for the normal path."""
    cache = cardcache.open_cache(cardcache.version_dir(store))
    if cache is None:
        return None
    try:
        return _answer(cache, name, include_ambiguous, as_json, budget or DEFAULT_BUDGET_TOKENS)
    except (KeyError, TypeError, ValueError, sqlite3.Error, zlib.error, cardcache.Damaged):
        return None  # a cache that does not hold what it should: the normal path answers
    finally:
        cache.close()


def _answer(cache, name: str, include_ambiguous: bool, as_json: bool, budget: int):
    ids = _find(cache.db, name)
    if not ids:
        return None
    where = ",".join("?" * len(ids))
    rows = dict(cache.db.execute(f"SELECT id, row FROM card WHERE id IN ({where})", ids))
    if len(ids) > 1:
        cands = [{c: cache.payload(rows[i])["node"][c] for c in CANDIDATE_COLS} for i in ids]
        header = [
            f"{len(cands)} symbols are named {name!r}; ask again with a qualified name or an id:"
        ]
        if as_json:
            err = {"code": "ambiguous", "message": header[0], "candidates": cands}
            out = {"verb": "card", "status": "ambiguous", "name": name, "error": err}
            return json.dumps(out, indent=2, default=str), 1
        blocks = [[f"  {r['id']}  [{r['kind']}]"] for r in cands]
        return fit_blocks(blocks, budget_tokens=budget, noun="lines", header=header).text, 1
    payload = cache.payload(rows[ids[0]])
    node = payload["node"]
    arrows = _arrows(cache.db, node["id"], payload["arrows"], include_ambiguous)
    if node["kind"] == "class":
        arrows = _with_constructor(cache, node, arrows, include_ambiguous)
        if arrows is None:
            return None
    if as_json:
        out = {"verb": "card", "status": "ok", "name": name, "node": node, "arrows": arrows}
        return json.dumps(out, indent=2, default=str), 0
    header, blocks = _ok_text(node, arrows)
    return fit_blocks(blocks, budget_tokens=budget, noun="lines", header=header).text, 0


def save(graph) -> None:
    """Build the card cache of a graph's version after a normal-path card, when the version
    has no intact one (best effort)."""
    import polars as pl

    version = graph._cache_dir
    lookups = graph.__dict__.get("_lookups")
    if version is None or lookups is None:
        return
    if cardcache.intact(version):
        return
    ei = lookups.edge_index
    common = ["direction", "edge_kind", "confidence", "other", "other_id", "other_label", "line",
              "via"]  # fmt: skip
    inn = ei.inn.select(
        row="_d",
        direction=pl.lit("in"),
        edge_kind="kind",
        confidence="confidence",
        other="_s",
        other_id="src",
        other_label=pl.coalesce("src_label", "src"),
        line="line",
        via="via",
    )
    out = ei.out.select(
        row="_s",
        direction=pl.lit("out"),
        edge_kind="kind",
        confidence="confidence",
        other="_d",
        other_id="dst",
        other_label=pl.coalesce("dst_label", "name", "dst"),
        line="line",
        via="via",
    )
    arrows = pl.concat([inn, out]).with_columns(seq=pl.int_range(pl.len()))
    cardcache.build(version, graph.nodes, arrows.select("row", "seq", *common))

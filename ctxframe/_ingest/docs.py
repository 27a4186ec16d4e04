"""Documents: Markdown and reStructuredText headings become `section` nodes under one `document`
node per file, nested by level, found by a small line scanner (no grammar, no Polars: this runs in
pool workers like ctxframe._ingest.extract).

Fenced code (``` and ~~~ in Markdown; literal blocks, which are indented, in reST) holds no
headings and no mentions. A section's own text (up to its first subsection) yields `mention`
references for what it names in backticks and links; ctxframe._resolve turns those into
INFERRED (or AMBIGUOUS) `mentions` edges, and drops the names that match nothing.
"""

from __future__ import annotations

import posixpath
import re

_DOC_CHARS = 1000
_SIG_CHARS = 200
_MAX_SECTIONS = 5000  # a generated document with more headings keeps the first ones

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_OR_QUOTE = re.compile(r"^ {0,3}(?:[-+*][ \t]|\d{1,9}[.)][ \t]|>)")
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_MD_LINK = re.compile(r"\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
_RST_ADORN = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
_RST_LITERAL = re.compile(r"``(.+?)``")
_RST_ROLE = re.compile(r":([\w:.+-]+):`([^`]+)`")
# Sphinx roles whose target is neither code nor a file: a label, a term, an option, a document
_RST_NOT_CODE = {"ref", "numref", "term", "option", "doc", "envvar", "keyword", "abbr",
                 "command", "dfn", "guilabel", "kbd", "samp", "pep", "rfc"}  # fmt: skip
# `interpreted text` (Sphinx's default role, often `obj`), not ``literal`` nor `a link`_
_RST_DEFAULT = re.compile(r"(?<![`:\w])`([^`\s][^`]*)`(?![`_\w])")
_SYMBOL = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$~][\w$]*)*(?:\(.*\))?$")
_PATHLIKE = re.compile(r"^[\w.@~+-]*(?:/[\w.@~+-]+)+/?$|^[\w@~+-]+\.[A-Za-z][\w]{0,5}$")
_FILE_EXTS = set(
    "py pyi js jsx mjs cjs ts tsx mts go java c h cc cpp cxx hpp hh cs rs zig sql md markdown "
    "rst txt json yaml yml toml ini cfg sh bash rb kt kts swift php scala lua html css scss "
    "xml proto mod lock".split()
)
_EXTERNAL = ("http://", "https://", "mailto:", "ftp://", "#", "data:")


def extract_document(res, lang, data: bytes) -> None:
    """Fill `res.defs` (document + sections) and `res.refs` (mentions) of one document."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    heads = _rst_headings(lines) if lang.name == "rst" else _md_headings(lines)
    code = heads.pop()  # set of line indexes inside fences / literal blocks
    path = res.path
    n = max(len(lines), 1)
    title = next((h[2] for h in heads if h[1] == 1), None) or posixpath.basename(path)
    doc_id = f"{path}::document"
    res.defs.append(
        (doc_id, "document", title, title, lang.name, path, 1, n, None, None, path)
    )  # fmt: skip
    used = {"document": 1}
    stack: list[tuple[int, str, str]] = []  # (level, id, qualname)
    sections: list[tuple[str, int, int]] = []  # (id, first line index, body start index)
    rows = []
    for i, (start, level, heading, body) in enumerate(heads[:_MAX_SECTIONS]):
        while stack and stack[-1][0] >= level:
            stack.pop()
        qual = f"{stack[-1][2]} > {heading}" if stack else heading
        k = used.get(qual, 0) + 1
        used[qual] = k
        sid = f"{path}::{qual}" if k == 1 else f"{path}::{qual}#{k}"
        end = n
        for later in heads[i + 1 :]:
            if later[1] <= level:
                end = later[0]  # the line before the next heading of this level or higher
                break
        nxt = heads[i + 1][0] if i + 1 < len(heads) else n
        parent = stack[-1][1] if stack else doc_id
        sig = lines[start].strip()[:_SIG_CHARS] if start < len(lines) else heading
        doc = _first_paragraph(lines, body, nxt, code)
        rows.append(
            (sid, "section", heading, qual, lang.name, path, start + 1, end, sig, doc, parent)
        )
        sections.append((sid, body, nxt))
        stack.append((level, sid, qual))
    res.defs.extend(rows)
    first = heads[0][0] if heads else len(lines)
    spans = [(doc_id, 0, first)] + [(sid, a, b) for sid, a, b in sections]
    rst = lang.name == "rst"
    for src, a, b in spans:
        seen: set[str] = set()
        for j in range(a, min(b, len(lines))):
            if j in code:
                continue
            for name, cands in _mentions(lines[j], path, rst):
                if name in seen:
                    continue
                seen.add(name)
                res.refs.append(
                    (src, path, lang.name, "mention", name, None, None, j + 1, None, None,
                     "\n".join(cands) or None, None, None, None, None)
                )  # fmt: skip


def _first_paragraph(lines: list[str], a: int, b: int, code: set[int]) -> str | None:
    out: list[str] = []
    for j in range(a, min(b, len(lines))):
        if j in code:
            if out:
                break
            continue
        s = lines[j].strip()
        if not s:
            if out:
                break
            continue
        out.append(s)
    return "\n".join(out)[:_DOC_CHARS] or None


def _md_headings(lines: list[str]) -> list:
    """[(line index, level, text, body start index)…, code line set] of a Markdown file."""
    heads: list = []
    code: set[int] = set()
    fence: tuple[str, int] | None = None
    para_start: int | None = None  # first line of the open paragraph (setext candidate)
    i = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for j in range(1, len(lines)):
            if lines[j].strip() in ("---", "..."):
                code.update(range(0, j + 1))
                i = j + 1
                break
    while i < len(lines):
        line = lines[i]
        if fence is not None:
            code.add(i)
            m = _FENCE.match(line)
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= fence[1]
                and not m.group(2).strip()
            ):
                fence = None
            i += 1
            continue
        m = _FENCE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            code.add(i)
            para_start = None
            i += 1
            continue
        m = _ATX.match(line)
        if m:
            heads.append((i, len(m.group(1)), (m.group(2) or "").strip() or "#", i + 1))
            para_start = None
            i += 1
            continue
        m = _SETEXT.match(line)
        if m and para_start is not None:
            text = " ".join(s.strip() for s in lines[para_start:i])
            heads.append((para_start, 1 if m.group(1)[0] == "=" else 2, text, i + 1))
            para_start = None
            i += 1
            continue
        if not line.strip():
            para_start = None
        elif (
            para_start is None
            and not line.startswith(("    ", "\t"))
            and not _LIST_OR_QUOTE.match(line)
            and not line.lstrip().startswith("<")
        ):
            para_start = i
        i += 1
    heads.append(code)
    return heads


def _rst_headings(lines: list[str]) -> list:
    """[(line index, level, text, body start index)…, code line set] of a reST file.

    A heading is a line of text at column 0 underlined (and maybe overlined) by one repeated
    punctuation character at least as long as the text; levels follow the order in which the
    adornment styles first appear. Indented lines (literal blocks, directives' content) are code."""
    heads: list = []
    code: set[int] = set()
    styles: dict[tuple[str, bool], int] = {}
    literal = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith((" ", "\t")) and line.strip():
            if literal:
                code.add(i)
            i += 1
            continue
        if line.strip():
            literal = line.rstrip().endswith("::") or line.startswith(".. code")
        over = _RST_ADORN.match(line)
        if (
            over
            and i + 2 < len(lines)
            and lines[i + 1].strip()
            and (under := _RST_ADORN.match(lines[i + 2]))
            and under.group(1) == over.group(1)
        ):
            text = lines[i + 1].strip()
            style = (over.group(1), True)
            level = styles.setdefault(style, len(styles) + 1)
            heads.append((i, level, text, i + 3))
            i += 3
            continue
        if (
            line.strip()
            and not line[0].isspace()
            and not over
            and i + 1 < len(lines)
            and (under := _RST_ADORN.match(lines[i + 1]))
            and len(lines[i + 1].rstrip()) >= len(line.rstrip())
            and (i == 0 or not lines[i - 1].strip())
        ):
            style = (under.group(1), False)
            level = styles.setdefault(style, len(styles) + 1)
            heads.append((i, level, line.strip(), i + 2))
            i += 2
            continue
        i += 1
    heads.append(code)
    return heads


def _mentions(line: str, path: str, rst: bool):
    """(name as written, path candidates) for each code span / link of one line of text."""
    if rst:
        spans = [m.group(1) for m in _RST_LITERAL.finditer(line)]
        bare = _RST_LITERAL.sub("", _RST_ROLE.sub("", line))
        roles = [(m.group(1), m.group(2)) for m in _RST_ROLE.finditer(line)]
        for role, target in [*roles, *(("", m.group(1)) for m in _RST_DEFAULT.finditer(bare))]:
            if role.rpartition(":")[2] in _RST_NOT_CODE:
                continue
            if "<" in target and target.endswith(">"):
                target = target[target.rindex("<") + 1 : -1]
            spans.append(target.lstrip("~!.").removesuffix("()"))
        links: list[str] = []
    else:
        spans = [m.group(2).strip() for m in _CODE_SPAN.finditer(line)]
        links = []
        for m in _MD_LINK.finditer(line):
            label, target = m.group(1).strip(), m.group(2)
            if not target.startswith(_EXTERNAL) and "://" not in target:
                links.append(target.split("#", 1)[0])
            if not label.startswith("`"):
                spans.append(label)
    for s in spans:
        s = s.strip()
        if len(s) < 3 or len(s) > 200:
            continue
        if _PATHLIKE.match(s) and ("/" in s or s.rsplit(".", 1)[-1].lower() in _FILE_EXTS):
            yield s, _path_candidates(s, path)
        elif _SYMBOL.match(s):
            yield s, ()
    for target in links:
        if target:
            yield target, _path_candidates(target, path)


def _path_candidates(spec: str, path: str) -> tuple[str, ...]:
    spec = spec.rstrip("/")
    here = posixpath.dirname(path)
    cands = []
    if spec.startswith("/"):
        cands.append(spec.lstrip("/"))
    else:
        rel = posixpath.normpath(posixpath.join(here, spec))
        if not rel.startswith(".."):
            cands.append(rel)
        cands.append(posixpath.normpath(spec))
        cands.append("/" + posixpath.normpath(spec).lstrip("./"))
    return tuple(dict.fromkeys(c for c in cands if c and not c.startswith("..")))

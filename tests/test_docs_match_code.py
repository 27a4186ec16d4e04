"""The docs say what the code does: every CLI option the README shows exists, MCP tools name
their arguments as the CLI does, every rule is listed, every path the docs cite exists."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from ctxframe.cli import _parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = {p.relative_to(ROOT).as_posix(): p.read_text() for p in (ROOT / "docs").glob("*.md")}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command and sub-command: ("catalog", "index") -> its parser."""
    out: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    todo = [((), _parser())]
    while todo:
        path, parser = todo.pop()
        out[path] = parser
        todo += [((*path, name), sub) for name, sub in _subparsers(parser).items()]
    return out


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for a in parser._actions for o in a.option_strings}


def _readme_commands() -> list[tuple[tuple[str, ...], list[str], str]]:
    """(command path, options, line) for every `ctxframe …` line in the README's code blocks."""
    fenced = re.findall(r"^```(\w*)\n(.*?)^```", README, flags=re.S | re.M)
    blocks = [body for lang, body in fenced if lang in ("bash", "sh", "")]
    prose = re.findall(r"`(ctxframe [^`]+)`", README)
    lines = [ln for b in blocks for ln in b.splitlines()] + prose
    commands = _commands()
    out = []
    for line in lines:
        m = re.search(r"\bctxframe ((?:[a-z][\w-]*\s*)+)(.*)$", line.split("#")[0])
        if not m or "pip install" in line:
            continue
        words = m.group(1).split()
        path: tuple[str, ...] = ()
        for w in words:
            if (*path, w) in commands:
                path = (*path, w)
            else:
                break
        if not path:
            continue
        command = line.split("#")[0].split(" -- ")[0]  # a question after `--` is no option
        options = re.findall(r"(?<![\w-])(--[a-z][\w-]*)", command)
        out.append((path, options, line.strip()))
    return out


README_COMMANDS = _readme_commands()


def test_the_readme_shows_many_commands() -> None:
    shown = {path[0] for path, _, _ in README_COMMANDS}
    assert {"index", "query", "card", "affected", "boundaries", "catalog", "watch", "mcp"} <= shown


@pytest.mark.parametrize(
    ("path", "options", "line"), README_COMMANDS, ids=[" ".join(c[0]) for c in README_COMMANDS]
)
def test_every_readme_option_exists(path: tuple[str, ...], options: list[str], line: str) -> None:
    parser = _commands()[path]
    missing = [o for o in options if o not in _options(parser)]
    assert not missing, f"`{line}`: ctxframe {' '.join(path)} has no {missing}"


def test_every_option_a_verb_takes_is_helped() -> None:
    """`--help` says what each option does (none is bare: `--include-ambiguous` was)."""
    bare = [
        f"{' '.join(path)} {action.option_strings[0]}"
        for path, parser in _commands().items()
        for action in parser._actions
        if action.option_strings and action.help is None
    ]
    assert bare == []


def test_the_rule_lists_name_every_registered_rule() -> None:
    from ctxframe._rank.rules import RULES

    commands = _commands()
    for path in (("query",), ("context",), ("eval",)):
        rule = next(a for a in commands[path]._actions if "--rule" in a.option_strings)
        assert all(name in rule.help for name in RULES), path
    line = next(ln for p, o, ln in README_COMMANDS if p == ("query",) and "--rule" in o)
    assert all(name in line for name in RULES), line


# -- MCP: the same names as the CLI -----------------------------------------------------------

# MCP tool -> the CLI command it answers like
MCP_TO_CLI = {"change_plan": "change-plan"}
# what a CLI positional is called in JSON (argparse dests: `text`, `name`, `a`, `b`)


def test_mcp_arguments_are_named_as_the_cli_names_them() -> None:
    from ctxframe._apps.mcp import TOOLS

    commands = _commands()
    for tool in TOOLS:
        parser = commands[(MCP_TO_CLI.get(tool.name, tool.name),)]
        cli = {a.dest for a in parser._actions if a.dest != "help"}
        args = set(tool.schema["properties"])
        assert args <= cli, f"{tool.name}: {sorted(args - cli)} are not the CLI's names"


def test_mcp_old_argument_names_are_still_taken(shop_graph) -> None:
    from ctxframe._apps.mcp import ALIASES, BY_NAME, validate

    for tool, names in ALIASES.items():
        for old, new in names.items():
            value = 3 if new == "limit" else "refund"
            assert validate(BY_NAME[tool], {old: value}) == {new: value}


# -- paths the docs cite ------------------------------------------------------------------------

_CITED = re.compile(r"(?<![\w./-])((?:ctxframe|bench|tests|docs|notebooks|data-samples)/[\w./-]+"
                    r"\.(?:py|md|scm|j2|ipynb|jsonl))")  # fmt: skip


def _cited() -> list[tuple[str, str]]:
    sources = {"README.md": README, **DOCS}
    for p in (ROOT / "data-samples").glob("*.jsonl"):
        sources[p.relative_to(ROOT).as_posix()] = "\n".join(
            ln for ln in p.read_text().splitlines() if ln.startswith("#")
        )
    return sorted({(src, m) for src, text in sources.items() for m in _CITED.findall(text)})


@pytest.mark.parametrize(("source", "path"), _cited())
def test_every_cited_path_exists(source: str, path: str) -> None:
    assert (ROOT / path).exists(), f"{source} cites {path}, which does not exist"


def test_readme_install_commands_work_from_a_clone() -> None:
    """ctxframe is not on a package index: extras install from the clone (`.[mcp]`)."""
    texts = {"README.md": README, **DOCS}
    wrong = [src for src, text in texts.items() if "ctxframe[" in text]
    assert wrong == []


def test_schema_says_refresh_re_indexes_by_default() -> None:
    import inspect

    from ctxframe._graph.graph import Graph

    assert inspect.signature(Graph.refresh).parameters["reindex"].default is None
    text = " ".join(DOCS["docs/schema.md"].split())
    assert "the default does not" not in text
    assert "by default it first runs an incremental `index`" in text

"""HTML for notebooks and pages: Jinja2 templates in `templates/` (autoescaped), rendered from
plain dicts and frames — this layer knows no Graph."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ctxframe._render.palette import kind_colour, text_colour
from ctxframe._render.text import (
    callee_label,
    doc_summary,
    first_line,
    hit_name,
    location,
    name_of,
    one_line,
    unresolved_tag,
)


def _conf_text(conf: str | None) -> str:
    return (conf or "unresolved").lower()


@lru_cache(maxsize=1)
def environment():
    """The one Jinja2 environment: package templates, autoescape on, the shared filters."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("ctxframe._render", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
        keep_trailing_newline=False,
    )
    env.filters.update(
        location=location,
        name=name_of,
        hit_name=hit_name,
        kind_colour=kind_colour,
        text_colour=text_colour,
        one_line=one_line,
        first_line=first_line,
        doc_summary=doc_summary,
        callee_label=callee_label,
        unresolved_tag=unresolved_tag,
        conf_text=_conf_text,
    )
    return env


def render(template: str, **context: Any) -> str:
    """Render `templates/<template>.html.j2` with plain values (dicts, lists, numbers)."""
    return environment().get_template(f"{template}.html.j2").render(**context).strip()


def render_svg(template: str, **context: Any) -> str:
    """Render `templates/<template>.svg.j2` (autoescaped as XML: names never break out)."""
    return environment().get_template(f"{template}.svg.j2").render(**context).strip()

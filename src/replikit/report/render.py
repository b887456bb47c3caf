"""Render the report: one self-contained HTML file (jinja2, autoescaped) and its JSON twin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from markupsafe import Markup

from .blocks import SectionOutput, to_jsonable

__all__ = ["render_html", "render_json", "environment"]


def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=PackageLoader("replikit.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["svg"] = lambda s: Markup(s)  # only replikit-made SVG is passed here
    return env


def render_html(meta: dict[str, Any], sections: list[SectionOutput]) -> str:
    env = environment()
    css = (Path(__file__).parent / "templates" / "style.css").read_text(encoding="utf-8")
    return env.get_template("report.html.j2").render(meta=meta, sections=sections, css=Markup(css))


def render_json(meta: dict[str, Any], sections: list[SectionOutput]) -> str:
    doc = {"meta": to_jsonable(meta), "sections": [s.json() for s in sections]}
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)

"""Render the report: one self-contained HTML file (jinja2, autoescaped) and its JSON twin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from markupsafe import Markup

from .blocks import SectionOutput, to_jsonable

__all__ = ["render_html", "render_json", "environment", "neutralize_bidi"]


# Unicode bidirectional controls (and the invisible marks) in a label could reorder what the
# reader sees ("Trojan Source"); the report shows them as visible code points instead.
_BIDI = {c: f"⟨U+{c:04X}⟩" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A),
                                      0x200E, 0x200F, 0x061C)}


def neutralize_bidi(text: str) -> str:
    """Replace bidirectional control characters by a visible ``⟨U+202E⟩`` marker."""
    return text.translate(_BIDI)


def _finalize(value):
    if isinstance(value, Markup):
        return Markup(neutralize_bidi(str(value)))
    if isinstance(value, str):
        return neutralize_bidi(value)
    return value


def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=PackageLoader("replikit.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    # only replikit-made SVG is passed here; its text comes from user labels, so bidi controls
    # are neutralized in it too
    env.filters["svg"] = lambda s: Markup(neutralize_bidi(s))
    return env


def render_html(meta: dict[str, Any], sections: list[SectionOutput]) -> str:
    env = environment()
    css = (Path(__file__).parent / "templates" / "style.css").read_text(encoding="utf-8")
    return env.get_template("report.html.j2").render(meta=meta, sections=sections, css=Markup(css))


def render_json(meta: dict[str, Any], sections: list[SectionOutput]) -> str:
    doc = {"meta": to_jsonable(meta), "sections": [s.json() for s in sections]}
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)

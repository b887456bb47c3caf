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
    env.filters["num"] = _num
    env.filters["split_blocks"] = split_blocks
    env.filters["more_label"] = more_label
    env.filters["brief"] = brief
    return env


def split_blocks(blocks) -> tuple[list, list]:
    """A section's blocks in two parts: what a reader sees first — every callout (verdicts and
    warnings are short), the first paragraph (what was done), the first key-value list
    (settings), the first table and the first figure — and the rest, shown on demand under
    one "More" disclosure at the end of the section. Order is kept within each part."""
    main, more, seen = [], [], set()
    for b in blocks:
        kind = getattr(b, "kind", "")
        if kind == "callout" or kind not in seen:
            main.append(b)
            seen.add(kind)
        else:
            more.append(b)
    return main, more


def brief(sentence: str, limit: int = 260) -> str:
    """A card's verdict cut to about ``limit`` characters at a clause boundary ("; " or ". "),
    with "… (see the section)" — the full sentence stays in the section and the JSON."""
    text = str(sentence)
    if len(text) <= limit:
        return text
    cut = max(text.rfind("; ", 0, limit), text.rfind(". ", 0, limit))
    if cut < limit // 3:
        cut = text.rfind(" ", 0, limit)
    return text[:cut].rstrip(" ;,.") + " … (see the section)."


def more_label(blocks) -> str:
    """What the "More" disclosure holds, e.g. ``3 tables, 2 figures, notes``."""
    counts = {}
    for b in blocks:
        counts[b.kind] = counts.get(b.kind, 0) + 1
    parts = [f"{counts[k]} {name}{'s' if counts[k] > 1 else ''}"
             for k, name in (("table", "table"), ("figure", "figure")) if counts.get(k)]
    if counts.get("paragraph") or counts.get("keyvalues"):
        parts.append("notes")
    return ", ".join(parts)


def _num(value) -> str:
    """A number to 3 significant digits for the summary cards (no wrapping, no e-notation
    between 1e-3 and 1e5)."""
    from .blocks import format_value

    return format_value(value, 3)


def _methods(sections: list[SectionOutput]) -> list[dict[str, str]]:
    """The Methods block: per section that ran, what was done (its first paragraph) and the
    papers behind it."""
    from .._references import SECTION_REFERENCES, citation_text
    from .blocks import Paragraph

    out = []
    for s in sections:
        if s.skipped or s.key not in SECTION_REFERENCES:
            continue
        text = next((b.text for b in s.blocks if isinstance(b, Paragraph)), "")
        out.append({"key": s.key, "title": s.title, "text": text,
                    "cite": citation_text(SECTION_REFERENCES[s.key])})
    return out


def render_html(meta: dict[str, Any], sections: list[SectionOutput]) -> str:
    from .summary import summary_cards

    env = environment()
    here = Path(__file__).parent / "templates"
    css = (here / "style.css").read_text(encoding="utf-8")
    script = (here / "report.js").read_text(encoding="utf-8")
    return env.get_template("report.html.j2").render(
        meta=meta, sections=sections, css=Markup(css), script=Markup(script),
        cards=summary_cards(sections), methods=_methods(sections))


def render_json(meta: dict[str, Any], sections: list[SectionOutput]) -> str:
    from .summary import SCHEMA_VERSION, summary_cards

    doc = {"meta": to_jsonable(meta),
           "summary": to_jsonable({"schema_version": SCHEMA_VERSION,
                                   "cards": summary_cards(sections)}),
           "sections": [s.json() for s in sections]}
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)

"""Render the report: one self-contained HTML file (jinja2, autoescaped) and its JSON twin."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from .._labels import MAX_LABEL, Abbreviations, visible_controls
from .blocks import SectionOutput, to_jsonable
from .summary import STATE_WORDS  # re-exported: the words of a card's light

__all__ = ["render_html", "render_json", "render_cards", "environment", "neutralize_bidi",
           "cited_keys"]


def neutralize_bidi(text: str) -> str:
    """Replace bidirectional control characters, and control characters other than tab and
    line breaks, by a visible ``⟨U+202E⟩`` marker (:func:`replikit._labels.visible_controls`:
    a label could reorder what the reader sees, "Trojan Source", and HTML and SVG cannot carry
    a NUL)."""
    return visible_controls(text)


def _finalizer(labels: Abbreviations | None = None):
    """What jinja does to every value it writes: bidi and control characters made visible,
    and (``labels``) the long labels of the input shortened in every text."""
    shorten = labels.apply if labels else (lambda text: text)

    def finalize(value):
        if isinstance(value, Markup):
            return Markup(neutralize_bidi(str(value)))
        if isinstance(value, str):
            return neutralize_bidi(shorten(value))
        return value

    return finalize


def environment(labels: Abbreviations | None = None):
    """The report's jinja environment; ``labels``: the long labels to shorten in every text
    (:class:`replikit._labels.Abbreviations`, from a report's ``meta['labels']``)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=PackageLoader("replikit.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalizer(labels),
    )
    # only replikit-made SVG is passed here; its text comes from user labels, so bidi controls
    # are neutralized in it too
    env.filters["svg"] = lambda s: Markup(neutralize_bidi(s))
    env.filters["num"] = _num
    env.filters["split_blocks"] = split_blocks
    env.filters["more_label"] = more_label
    env.filters["brief"] = brief
    env.filters["tall"] = tall
    return env


def split_blocks(blocks) -> tuple[list, list]:
    """A section's blocks in two parts: what a reader sees at once — every callout (the verdict
    and warnings: short) and the first figure (the key figure) — and the detail (what was done,
    settings, tables, the other figures), shown on demand under one closed disclosure at the end
    of the section. Order is kept within each part."""
    main, more = [], []
    figure_shown = False
    for b in blocks:
        kind = getattr(b, "kind", "")
        if kind == "callout" or (kind == "figure" and not figure_shown):
            main.append(b)
            figure_shown = figure_shown or kind == "figure"
        else:
            more.append(b)
    return main, more


#: A figure taller than this (CSS px) is shown in a box that scrolls (``.figscroll`` in
#: style.css: 640 px high), so that one figure of many studies does not make the page long.
TALL_FIGURE = 760
_SVG_HEIGHT = re.compile(r'<svg\b[^>]*?\sheight="([\d.]+)(pt|px)?"')


def tall(svg: str) -> bool:
    """Whether an inline SVG is taller than :data:`TALL_FIGURE` CSS pixels."""
    match = _SVG_HEIGHT.search(svg[:2000])
    if not match:
        return False
    height = float(match.group(1)) * (4 / 3 if match.group(2) == "pt" else 1)
    return height > TALL_FIGURE


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
    """What the detail disclosure holds, e.g. ``what was done, 3 tables, 2 figures``."""
    counts: dict[str, int] = {}
    for b in blocks:
        counts[b.kind] = counts.get(b.kind, 0) + 1
    parts = ["what was done"] if counts.get("paragraph") or counts.get("keyvalues") else []
    parts += [f"{counts[k]} {name}{'s' if counts[k] > 1 else ''}"
              for k, name in (("table", "table"), ("figure", "figure")) if counts.get(k)]
    return ", ".join(parts)


def _num(value) -> str:
    """A number for the summary cards: 3 significant digits in plain notation (1,110)."""
    from .._format import number

    return number(value, 3)


def _texts(section: SectionOutput):
    """Every sentence a section shows: its summary, paragraphs, callouts, captions, facts and
    its verdict."""
    yield section.summary
    for b in section.blocks:
        yield getattr(b, "text", "") or getattr(b, "caption", "")
        if getattr(b, "kind", "") == "keyvalues":
            yield from (f"{k} {v}" for k, v in b.items.items())
    verdict = section.data.get("verdict") if isinstance(section.data, dict) else None
    if isinstance(verdict, dict):
        yield str(verdict.get("sentence") or "")
        yield from (str(c) for c in verdict.get("caveats") or [])


def cited_keys(sections: list[SectionOutput]) -> list[str]:
    """The bibliography keys of the papers behind the sections that ran: each section's
    :data:`~replikit._references.SECTION_REFERENCES`, then every other paper their text cites
    as Author (Year), in order of first appearance."""
    from .._references import BIBTEX, SECTION_REFERENCES

    keys: list[str] = []
    ran = [s for s in sections if not s.skipped]
    for s in ran:
        keys += SECTION_REFERENCES.get(s.key, ())
    text = "\n".join(t for s in ran for t in _texts(s) if t)
    keys += [k for k, (short, _) in BIBTEX.items() if short in text]
    return list(dict.fromkeys(keys))


def _methods(sections: list[SectionOutput]) -> tuple[list[dict[str, str]], list[str]]:
    """The Methods block: per section that ran, what was done (its first paragraph) and the
    papers behind it as Author (Year); and the References list of every paper the report
    cites, in full."""
    from .._references import SECTION_REFERENCES, citation_text, reference_list
    from .blocks import Paragraph

    out = []
    for s in sections:
        if s.skipped or s.key not in SECTION_REFERENCES:
            continue
        text = next((b.text for b in s.blocks if isinstance(b, Paragraph)), "")
        out.append({"key": s.key, "title": s.title, "text": text,
                    "cite": citation_text(SECTION_REFERENCES[s.key])})
    return out, reference_list(cited_keys(sections))


def render_cards(cards: list[dict[str, Any]], *, title: str = "Replicability audit",
                 path: str = "") -> str:
    """The summary cards as a self-contained HTML fragment (a notebook's view of an audit)."""
    here = Path(__file__).parent / "templates"
    css = (here / "cards.css").read_text(encoding="utf-8")
    return environment().get_template("notebook.html.j2").render(
        cards=cards, title=title, path=path, css=Markup(css), words=STATE_WORDS)


def _labels(meta: dict[str, Any]) -> Abbreviations:
    """The long labels a report shortens: ``meta['labels']`` (short form -> label)."""
    return Abbreviations.from_lookup(meta.get("labels") if isinstance(meta, dict) else None)


def render_html(meta: dict[str, Any], sections: list[SectionOutput]) -> str:
    """The report as one self-contained HTML page; the input's long labels (``meta['labels']``)
    shortened in every text, table and figure."""
    from .summary import summary_cards

    labels = _labels(meta)
    env = environment(labels)
    here = Path(__file__).parent / "templates"
    css = "\n".join((here / name).read_text(encoding="utf-8")
                    for name in ("style.css", "cards.css"))
    script = (here / "report.js").read_text(encoding="utf-8")
    methods, references = _methods(sections)
    return env.get_template("report.html.j2").render(
        meta=meta, sections=sections, css=Markup(css), script=Markup(script),
        cards=labels.apply_deep(summary_cards(sections)), methods=methods,
        references=references, words=STATE_WORDS, max_label=MAX_LABEL)


def render_json(meta: dict[str, Any], sections: list[SectionOutput]) -> str:
    from .summary import SCHEMA_VERSION, summary_cards

    # the input's long labels shortened in the sentences, whole where a value is the label
    # (meta["labels"] maps each short form to its label)
    labels = _labels(meta)
    doc = labels.apply_deep({"meta": to_jsonable(meta),
                             "summary": to_jsonable({"schema_version": SCHEMA_VERSION,
                                                     "cards": summary_cards(sections)}),
                             "sections": [s.json() for s in sections]}, keep_exact=True)
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)

"""Report rendering: self-contained HTML, escaping, JSON twin, section registry."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from replikit._plotting import new_figure, svg_inline
from replikit.data.userdata import dataset_from_frame
from replikit.report import (
    Callout,
    Figure,
    Paragraph,
    SectionOutput,
    Table,
    discover_sections,
    run_audit,
)
from replikit.report.blocks import format_value, to_jsonable
from replikit.report.render import render_html, render_json


def test_registry_has_overview_first():
    sections = discover_sections()
    assert sections[0].key == "overview"
    assert len({s.key for s in sections}) == len(sections)
    assert [s.order for s in sections] == sorted(s.order for s in sections)


def test_svg_is_inline_ready_and_deterministic():
    def draw():
        fig = new_figure()
        ax = fig.add_subplot()
        ax.plot([0, 1], [1, 0])
        ax.set_title("a < b & c")
        return svg_inline(fig)

    svg = draw()
    assert svg.startswith("<svg") and "http" not in svg and "<?xml" not in svg
    assert "a &lt; b &amp; c" in svg
    assert draw() == svg


def test_html_escapes_every_block_and_json_matches():
    evil = "<img src=x onerror=alert(1)>"
    out = SectionOutput(key="k", title=evil, summary=evil, blocks=[
        Paragraph(evil), Callout(evil, "bad"),
        Table(pd.DataFrame({"name": [evil], "value": [0.123456]}), caption=evil),
    ], data={"x": np.float64(0.5), "bad": float("nan")})
    meta = {"dataset_name": evil, "replikit_version": "0", "random_state": 0, "n_rows": 1,
            "n_studies": 1, "task": "regression"}
    html = render_html(meta, [out])
    assert evil not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 6
    doc = json.loads(render_json(meta, [out]))
    assert doc["sections"][0]["data"] == {"x": 0.5, "bad": None}
    assert doc["sections"][0]["tables"]["table_0"]["rows"][0]["name"] == evil


def test_figure_block_is_not_escaped():
    svg = '<svg width="1" height="1"><rect width="1" height="1"/></svg>'
    meta = {"dataset_name": "d", "replikit_version": "0", "random_state": 0, "n_rows": 1,
            "n_studies": 1, "task": "regression"}
    html = render_html(meta, [SectionOutput("k", "t", [Figure(svg, "cap")])])
    assert svg in html


def test_overview_numbers_match_data(tmp_path):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(size=90), "g": np.repeat(["b", "a", "c"], 30)})
    df["y"] = rng.normal(size=90)
    df.loc[5, "x"] = np.nan
    ds = dataset_from_frame(df, target="y", study="g")
    rep = run_audit(ds, tmp_path, sections=["overview"])
    doc = json.loads(rep.json_path.read_text())
    sec = doc["sections"][0]
    assert sec["data"]["n_rows"] == 89 and sec["data"]["n_dropped"] == 1
    rows = {r["study"]: r for r in sec["tables"]["table_0"]["rows"]}
    assert rows["b"]["n"] == 29 and rows["a"]["n"] == 30
    assert rows["a"]["mean"] == pytest.approx(float(df.loc[df.g == "a", "y"].mean()), rel=1e-14)
    html = rep.html_path.read_text()
    assert "<svg" in html and not re.search(r"https?://", html)


def test_format_value_and_jsonable():
    assert format_value(1234567) == "1,234,567"
    assert format_value(float("nan")) == "–"
    assert format_value(True) == "yes"
    assert format_value(0.000012345) == "1.234e-05"
    assert to_jsonable({"a": np.int64(3), "b": [np.inf]}) == {"a": 3, "b": [None]}


def test_bidi_overrides_in_labels_are_shown_neutralized():
    """A right-to-left override in a study or model name must not reorder the report's text;
    the JSON keeps the raw label."""
    rlo = "\u202e"
    label = f"site{rlo}evil"
    fig = new_figure()
    fig.add_subplot().bar([label], [1.0])
    out = SectionOutput(key="k", title=label, summary=label, blocks=[
        Paragraph(label), Table(pd.DataFrame({"study": [label]})),
        Figure(svg_inline(fig), label)])
    meta = {"dataset_name": label, "replikit_version": "0", "random_state": 0, "n_rows": 1,
            "n_studies": 1, "task": "regression"}
    html = render_html(meta, [out])
    assert rlo not in html
    assert html.count("site⟨U+202E⟩evil") >= 5
    assert json.loads(render_json(meta, [out]))["sections"][0]["title"] == label

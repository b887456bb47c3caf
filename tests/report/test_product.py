"""The report as a product: summary cards first, detail on demand, Methods and
BibTeX for the paper, a Reproduce block, print styles — checked on the HTML and the JSON twin.
(The browser test opens the same reports in headless Chromium.)"""

import json
import re

import numpy as np
import pandas as pd
import pytest

from replikit._references import BIBTEX, SECTION_REFERENCES, bibtex_for
from replikit.report import SectionOutput, Table, run_audit
from replikit.report.blocks import Callout, Paragraph
from replikit.report.render import render_html, render_json
from replikit.report.summary import QUESTIONS, SCHEMA_VERSION, STATES, summary_cards
from replikit.results import Verdict

META = {"dataset_name": "d", "replikit_version": "0", "random_state": 1, "n_rows": 10,
        "n_studies": 2, "task": "regression"}


def _section(key, level="good", caveats=("c1", "c2"), estimate=0.41):
    v = Verdict(f"{key} holds", "R²", level, estimate, 0.3, 0.5, caveats)
    return SectionOutput(key, key.title(), blocks=[Paragraph(f"What {key} did."),
                                                   Callout(v.sentence, level)],
                         data={"verdict": v.to_dict()}, summary=v.sentence)


def test_cards_follow_the_verdicts_in_question_order():
    secs = [_section("generalize", "bad"), _section("compare", "warn"),
            SectionOutput("replicate", "R", skipped="one study", advice="give --study"),
            SectionOutput("overview", "O")]
    cards = summary_cards(secs)
    assert [c["key"] for c in cards] == ["compare", "replicate", "generalize"]
    c = cards[0]
    assert c["question"] == QUESTIONS["compare"] and c["state"] == "warn"
    assert (c["estimate"], c["ci_low"], c["ci_high"], c["metric"]) == (0.41, 0.3, 0.5, "R²")
    assert c["caveat"] == "c1" and c["caveats"] == ["c1", "c2"] and c["link"] == "#compare"
    assert cards[1]["state"] == "skipped" and cards[1]["sentence"] == "one study"
    assert {c["state"] for c in cards} <= set(STATES)


def test_json_twin_has_the_versioned_summary_with_stable_keys():
    doc = json.loads(render_json(META, [_section("compare"), _section("resampling", "info")]))
    assert doc["summary"]["schema_version"] == SCHEMA_VERSION == 1
    keys = {"key", "question", "state", "sentence", "metric", "label", "estimate", "ci_low",
            "ci_high", "tolerance", "caveat", "caveats", "link"}
    assert all(set(c) == keys for c in doc["summary"]["cards"])
    assert [c["key"] for c in doc["summary"]["cards"]] == ["resampling", "compare"]


def test_html_summary_cards_link_to_sections_and_sentence_not_repeated():
    html = render_html(META, [_section("compare"), _section("multistudy", "warn")])
    assert html.index('id="summary"') < html.index('id="compare"')
    assert 'href="#compare"' in html and 'class="card state-warn"' in html
    assert "[0.3, 0.5]" in html
    # the section shows its verdict once (the callout), not again as a summary line
    body = html[html.index('<section id="compare"'):]
    assert body[:body.index("</section>")].count("compare holds") == 1


def test_long_tables_collapse_and_tables_sort():
    big = pd.DataFrame({"study": [f"s{i}" for i in range(30)], "n": np.arange(30)})
    small = pd.DataFrame({"a": [1, 2]})
    out = SectionOutput("k", "K", blocks=[Table(big, "Per study"), Table(small, "Small")])
    html = render_html(META, [out])
    assert re.search(r"<details class=\"table-details\"><summary>Per study · 30 rows", html)
    assert html.count("<details class=\"table-details\">") == 1
    assert html.count('class="sortable"') == 2 and "aria-sort" in html  # the inline script
    assert "<script src" not in html and "http" not in html.split("<style>")[0]


def test_print_styles_put_the_summary_first_and_keep_figures_whole():
    html = render_html(META, [_section("compare")])
    css = html[html.index("<style>"):html.index("</style>")]
    assert "@media print" in css and "#summary { break-after: page; }" in css
    assert "break-inside: avoid" in css
    assert "beforeprint" in html  # <details> open for printing


def test_methods_block_cites_and_bibtex_entries_are_well_formed():
    html = render_html(META, [_section("compare"), _section("replicate")])
    methods = html[html.index('id="methods"'):]
    assert "What compare did." in methods and "Gardner &amp; Brooks (2017)" in methods
    bib = bibtex_for(SECTION_REFERENCES["compare"] + SECTION_REFERENCES["replicate"])
    entries = re.findall(r"^@\w+\{(\w+),", bib, flags=re.M)
    assert entries == list(dict.fromkeys(SECTION_REFERENCES["compare"]
                                         + SECTION_REFERENCES["replicate"]))
    for key, (_, entry) in BIBTEX.items():
        assert entry.count("{") == entry.count("}"), key
        assert re.search(r"year\s*=\s*\{\d{4}\}", entry), key


@pytest.mark.slow
def test_audit_writes_bibtex_methods_and_reproduce(tmp_path):
    from replikit.report import example_dataset

    rep = run_audit(example_dataset("nwtco_binary"), tmp_path, quick=True, random_state=3,
                    sections=["overview", "compare"],
                    command="replikit audit --example nwtco_binary")
    assert rep.bib_path.read_text().startswith("@inproceedings{gardner2017")
    html = rep.html_path.read_text()
    assert "replikit audit --example nwtco_binary" in html and "scikit-learn" in html
    doc = json.loads(rep.json_path.read_text())
    assert doc["meta"]["references"][0] == "gardner2017"
    assert doc["summary"]["cards"][0]["key"] == "compare"
    assert doc["summary"]["cards"][0]["metric"] == "ROC AUC"


def test_each_section_shows_its_verdict_and_key_figure_and_folds_the_rest():
    from replikit.report.blocks import Figure, KeyValues
    from replikit.report.render import split_blocks

    blocks = [Paragraph("what was done"), Callout("verdict", "good"), KeyValues({"a": 1}),
              Table(pd.DataFrame({"x": [1, 2]}), caption="t1"), Figure("<svg></svg>", "f1"),
              Paragraph("more detail"), Table(pd.DataFrame({"x": [3]}), caption="t2"),
              Callout("a warning", "warn"), Figure("<svg></svg>", "f2")]
    main, more = split_blocks(blocks)
    assert [getattr(b, "text", getattr(b, "caption", "")) for b in main] \
        == ["verdict", "f1", "a warning"]
    assert [b.kind for b in more] == ["paragraph", "keyvalues", "table", "paragraph", "table",
                                      "figure"]
    assert sorted(map(id, main + more)) == sorted(map(id, blocks))
    html = render_html(META, [SectionOutput("compare", "C", blocks=blocks)])
    sec = html[html.index('<section id="compare"'):]
    sec = sec[:sec.index("</section>")]
    more_at = sec.index('<details class="section-more">')
    assert "Details: what was done, 2 tables, 1 figure" in sec
    assert sec.index("verdict") < sec.index("f1") < sec.index("a warning") < more_at \
        < sec.index("what was done</p>") < sec.index("more detail")
    assert "<details class=\"section-more\" open" not in sec  # closed by default


def test_cards_label_the_key_number():
    v = Verdict("lr beats dummy.", "ROC AUC", "good", 0.1234, 0.1, 0.15,
                label="best minus runner-up, ROC AUC")
    sec = SectionOutput("compare", "C", data={"verdict": v.to_dict()})
    bare = Verdict("pooled.", "test R2", "warn", 1110.3, 1000.0, 1234.5)
    sec2 = SectionOutput("replicate", "R", data={"verdict": bare.to_dict()})
    cards = summary_cards([sec, sec2])
    assert cards[0]["label"] == "best minus runner-up, ROC AUC"
    assert cards[1]["label"] == "pooled estimate, test R2"  # made from the metric
    html = render_html(META, [sec, sec2])
    summary = html[html.index('id="summary"'):html.index("</section>")]
    assert "best minus runner-up, ROC AUC" in summary and "0.123" in summary
    assert "pooled estimate, test R2" in summary and "1,110" in summary and "e+03" not in summary


def test_long_card_sentences_are_cut_at_a_clause_in_html_only():
    from replikit.report.render import brief

    long = "; ".join(f"lr better than m{i} (Holm p = 0.0{i})" for i in range(12)) + "."
    short = brief(long)
    assert len(short) < 300 and short.endswith("… (see the section).")
    assert long.startswith(short.split(" … ")[0])
    assert brief("short.") == "short."
    secs = [_section("compare")]
    secs[0].data["verdict"]["sentence"] = long
    doc = json.loads(render_json(META, secs))
    assert doc["summary"]["cards"][0]["sentence"] == long  # the JSON keeps it whole


def test_every_cited_reference_has_a_wellformed_bibtex_entry():
    keys = {k for ks in SECTION_REFERENCES.values() for k in ks}
    assert keys <= set(BIBTEX)
    for key in keys:
        short, entry = BIBTEX[key]
        assert entry.startswith("@") and entry.split("{", 1)[1].startswith(key + ",")
        assert entry.count("{") == entry.count("}"), key
        assert not any(ord(ch) < 32 and ch not in "\n" for ch in entry), key  # no stray escapes
        assert short.endswith(")") and any(ch.isdigit() for ch in short)


def test_a_tall_figure_scrolls_in_its_box_and_a_normal_one_does_not():
    from replikit.report.blocks import Figure

    tall = '<svg width="460.8pt" height="1080pt" viewBox="0 0 460.8 1080"></svg>'
    short = '<svg width="460.8pt" height="345.6pt" viewBox="0 0 460.8 345.6"></svg>'
    html = render_html(META, [SectionOutput("compare", "C", blocks=[
        Figure(tall, "sixty-five studies"), Figure(short, "five models")])])
    assert html.count('<div class="figscroll"') == 1
    assert html.index('class="figscroll"') < html.index(tall) < html.index("sixty-five")
    css = html[html.index("<style>"):html.index("</style>")]
    assert ".figscroll { max-height: 640px; overflow: auto;" in css

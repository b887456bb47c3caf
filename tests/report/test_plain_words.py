"""The report speaks plain words: no source-paper file number, no "seed", no issue number and
no internal id in what a reader sees — the HTML's visible text (the figures' labels included),
the JSON twin's sentences and the Methods block — and papers are cited as Author (Year) with a
References list. Checked on the quick reports of ``conftest.py``, which run every section."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from _checks import INTERNAL_IDS, assert_plain

pytestmark = pytest.mark.slow


class _Visible(HTMLParser):
    """The text a reader sees, by part: ``text`` (everything outside <style>/<script>),
    ``svg`` (the figures' labels), ``captions`` (figure captions, headings, summaries)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.svg, self.captions, self.methods = [], [], [], []
        self._stack: list[str] = []
        self._in_methods = 0

    def handle_starttag(self, tag, attrs):
        self._stack.append(tag)
        if tag == "section" and dict(attrs).get("id") == "methods":
            self._in_methods = len(self._stack)

    def handle_endtag(self, tag):
        while self._stack:
            top = self._stack.pop()
            if self._in_methods and len(self._stack) < self._in_methods:
                self._in_methods = 0
            if top == tag:
                break

    def handle_data(self, data):
        if not data.strip() or any(t in ("style", "script") for t in self._stack):
            return
        self.text.append(data)
        if "svg" in self._stack:
            self.svg.append(data)
        elif any(t in ("figcaption", "h1", "h2", "h3", "summary", "caption", "dt")
                 for t in self._stack):
            self.captions.append(data)
        if self._in_methods:
            self.methods.append(data)


def _visible(path) -> _Visible:
    parser = _Visible()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _json_words(doc: dict) -> list[str]:
    """The JSON twin's strings meant for a reader (not its ids and table cells)."""
    out = [doc["meta"].get("primary_metric_rule") or "", *doc["meta"].get("data_notes", [])]
    for card in doc["summary"]["cards"]:
        out += [card["question"], card["sentence"], card.get("label") or "",
                card.get("metric") or "", *card["caveats"]]
    for s in doc["sections"]:
        out += [s["title"], s["summary"] or "", s["skipped"] or "", s["advice"] or ""]
        out += [t["caption"] for t in s["tables"].values()]
        data = s["data"] or {}
        out += [str(n) for n in data.get("notes") or []]
        verdict = data.get("verdict") or {}
        out += [verdict.get("sentence") or "", verdict.get("label") or "",
                *(verdict.get("caveats") or [])]
    return out


@pytest.mark.parametrize("name", ["hostile", "binary"])
def test_report_speaks_plain_words(quick_reports, name):
    path = quick_reports[name]
    seen = _visible(path)
    assert_plain("\n".join(seen.text), f"the visible text of the {name} report")
    doc = json.loads((path.parent / "report.json").read_text(encoding="utf-8"))
    assert_plain("\n".join(_json_words(doc)), f"the JSON twin of the {name} report")
    ids = sorted({m.group(0) for t in seen.captions + seen.svg
                  for m in INTERNAL_IDS.finditer(t)})
    assert not ids, f"internal ids in the captions, headings or figures of the {name} " \
        f"report: {ids}"


@pytest.mark.parametrize("name", ["hostile", "binary"])
def test_methods_cite_author_year_with_references(quick_reports, name):
    path = quick_reports[name]
    methods = " ".join(_visible(path).methods)
    assert_plain(methods, "the Methods block")
    assert re.search(r"\w \(\d{4}\)", methods), "the Methods block cites no Author (Year)"
    assert "References" in methods
    html = path.read_text(encoding="utf-8")
    refs = re.findall(r"<li>([^<]*\(\d{4}\)\.[^<]*)</li>", html[html.index('id="methods"'):])
    assert len(refs) >= 5 and all(re.match(r"[A-ZÀ-ž][\w\-' ]+, ", r) for r in refs), refs[:3]
    bib = (path.parent / "references.bib").read_text(encoding="utf-8")
    assert bib.count("\n@") + bib.startswith("@") == len(refs)
    # every paper cited in the visible text is in the References list
    from replikit._references import BIBTEX

    text = " ".join(_visible(path).text)
    cited = [short for short, _ in BIBTEX.values() if short in text]
    listed = " ".join(refs)
    for short in cited:
        author = short.split(" ")[0].rstrip(",")
        assert author in listed, f"{short} is cited but not in the References list"


def test_header_and_reproduce_say_random_state_in_words(quick_reports):
    seen = _visible(quick_reports["binary"])
    text = " ".join(seen.text)
    assert "random state 0" in text
    assert not re.search(r"\brandom_state \d", text)

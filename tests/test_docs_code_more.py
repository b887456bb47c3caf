"""The code of the pages test_docs_code.py leaves to this file (its ``ELSEWHERE``: the longest
to run), run the same way; split so that the two halves run on both workers of the suite."""

from __future__ import annotations

import pytest

from test_docs_code import (  # noqa: F401 (samples: the module fixture, for this file too)
    ELSEWHERE,
    PAGES,
    page_blocks,
    run_page,
    runnable_pages,
    samples,
)


def test_the_two_files_run_every_page_with_code_once():
    here, there = runnable_pages(here=True), runnable_pages(here=False)
    assert {p.name for p in there} == set(ELSEWHERE)  # a renamed page is not lost
    assert not set(here) & set(there)
    assert set(here) | set(there) == {p for p in PAGES if any(b.runs for b in page_blocks(p))}


@pytest.mark.slow
@pytest.mark.parametrize("page", runnable_pages(here=False), ids=lambda p: p.name)
def test_page_code_runs(page, samples, tmp_path, monkeypatch):  # noqa: F811
    run_page(page, samples, tmp_path, monkeypatch)

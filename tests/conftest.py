"""Fixtures shared by every capability's tests."""

from __future__ import annotations

import pytest

from _checks import assert_plain


@pytest.fixture(autouse=True)
def _output_width_from_defaults(monkeypatch):
    """Human output at its documented width for pipes (120 columns) in every test.

    A test run sets ``COLUMNS`` in some environments (pytest-xdist's workers export 80), and
    the command line honours it; tests that assert on wrapped prose would then depend on who
    runs them. Tests of the width itself set ``COLUMNS`` explicitly.
    """
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def cli(capsys):
    """Run ``replikit ARGS...`` in-process: ``code, out, err = cli("meta", path, ...)``.

    Every error line a run prints is checked for words a user cannot know
    (``_checks.JARGON``): the error messages of the whole suite are scanned this way.
    """
    from replikit.cli import main

    def run(*args):
        with pytest.raises(SystemExit) as exc:
            main([str(a) for a in args])
        out, err = capsys.readouterr()
        errors = "\n".join(ln for ln in err.splitlines() if ln.startswith("replikit: error:"))
        assert_plain(errors, "an error message")
        return exc.value.code, out, err

    return run


#: The suite's longest files (a minute or more each: whole audits, kill-and-resume soaks, the
#: browser, the docs' code), run first: ``make test`` sends whole files to its two workers in
#: collection order (``--dist loadfile``), and these files at the end left one worker running
#: alone for minutes while the other waited.
LONG_FILES = (
    "tests/corpus/test_audit_corpus.py", "tests/corpus/test_store.py",
    "tests/corpus/test_audit_store.py", "tests/test_docs_code.py",
    "tests/test_docs_code_more.py", "tests/test_tutorial.py", "tests/report/test_browser.py",
    "tests/report/test_audit_engine.py", "tests/validity/test_validity_suite.py",
    "tests/validity/test_validity_suite_others.py",
)


def pytest_collection_modifyitems(session, config, items):
    """Collect the :data:`LONG_FILES` first (the order within each file is kept)."""
    rank = {name: i for i, name in enumerate(LONG_FILES)}

    def key(item):
        path = item.nodeid.split("::", 1)[0]
        return rank.get(path, len(rank))

    items.sort(key=key)  # stable: every other file keeps its place

"""Fixtures shared by every capability's tests."""

from __future__ import annotations

import pytest

from _checks import assert_plain


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

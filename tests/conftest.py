"""Fixtures shared by every capability's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def cli(capsys):
    """Run ``replikit ARGS...`` in-process: ``code, out, err = cli("meta", path, ...)``."""
    from replikit.cli import main

    def run(*args):
        with pytest.raises(SystemExit) as exc:
            main([str(a) for a in args])
        out, err = capsys.readouterr()
        return exc.value.code, out, err

    return run

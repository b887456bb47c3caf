"""The corpus of bad and odd inputs: every case ends in a clear error or an honest result.

A *clear error* is exit code 2 with exactly one line on stderr, ``replikit: error: ...``, that
names the flag, column or parameter at fault, and no traceback. An *honest result* is exit code
0 (warnings on stderr allowed, each on its own line). Exit code 1 (replikit's catch-all for an
unexpected exception) always fails a corpus case: it is a bug.
"""

from __future__ import annotations

import pytest


def _lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip()]


def assert_clear_error(result, *mentions: str) -> str:
    """``result = cli(...)`` ended in exit 2 with one line naming each of ``mentions``."""
    code, out, err = result
    assert "Traceback" not in err, err
    assert code == 2, f"exit code {code}, stderr:\n{err}\nstdout:\n{out[:2000]}"
    errors = [ln for ln in _lines(err) if ln.startswith("replikit: error:")]
    assert len(errors) == 1, f"expected one error line, got:\n{err}"
    line = errors[0]
    for m in mentions:
        assert m.lower() in line.lower(), f"{m!r} not named in: {line}"
    return line


def assert_ok(result) -> str:
    """``result = cli(...)`` succeeded; returns stdout."""
    code, out, err = result
    assert "Traceback" not in err, err
    assert code == 0, f"exit code {code}, stderr:\n{err}\nstdout:\n{out[:2000]}"
    return out


@pytest.fixture
def write_csv(tmp_path):
    """``write_csv(frame_or_text, name='data.csv') -> path`` in the test's temporary directory."""
    import pandas as pd

    def write(data, name: str = "data.csv"):
        path = tmp_path / name
        if isinstance(data, pd.DataFrame):
            data.to_csv(path, index=False)
        else:
            path.write_text(data)
        return path

    return write

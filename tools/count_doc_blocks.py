"""Print how many code blocks of README.md and docs/*.md the test suite runs, per page.

The counting is ``tests/test_docs_code.py``'s own (which blocks run, which carry
``<!-- not run: why -->``); run: ``.venv/bin/python tools/count_doc_blocks.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_docs_code import tally_table  # noqa: E402


def main() -> None:
    print(tally_table())


if __name__ == "__main__":
    main()

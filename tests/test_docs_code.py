"""The Python in README.md and docs/*.md runs as a reader would paste it.

Each page's ```python blocks run in order, in one namespace, in an empty temporary directory,
with a non-interactive matplotlib backend. A block the reader cannot run as shown (it needs
the reader's own file) is preceded by ``<!-- not run: why -->`` and is left out, the reason
being on the page for the reader too.
"""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(<!--\s*not run:[^>]*-->\s*\n)?```python\n(.*?)```", re.S)


def blocks(page: pathlib.Path) -> list[str]:
    return [code for skip, code in BLOCK.findall(page.read_text()) if not skip]


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_page_code_runs(page, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for i, code in enumerate(blocks(page), 1):
        try:
            exec(compile(code, f"{page.name} block {i}", "exec"), namespace)
        except Exception as exc:  # the message says which block of which page
            pytest.fail(f"{page.name}, python block {i} fails: {type(exc).__name__}: {exc}")

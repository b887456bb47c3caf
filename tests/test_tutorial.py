"""docs/tutorial.ipynb runs from top to bottom as a reader would run it, and shows the audit's
cards at every entry level (executed with nbclient in a fresh kernel, in an empty directory)."""

from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "tutorial.ipynb"


def test_notebook_is_the_one_the_script_writes():
    import importlib.util

    import nbformat

    spec = importlib.util.spec_from_file_location("make_tutorial",
                                                  ROOT / "tools" / "make_tutorial.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    build = module.build
    stored = nbformat.read(NOTEBOOK, as_version=4)
    assert [c.source for c in stored.cells] == [c.source for c in build().cells], (
        "docs/tutorial.ipynb is out of date: run python tools/make_tutorial.py")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_tutorial_runs_and_shows_the_cards(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors, errors
    audits = [c for c in nb.cells if c.cell_type == "code" and "replikit.audit(" in c.source]
    assert len(audits) == 5  # one per entry level
    for cell in audits:
        html = next(o["data"]["text/html"] for o in cell.outputs if "data" in o
                    and "text/html" in o["data"])
        assert 'class="replikit-audit"' in html and "card" in html, cell.source
    # no figure leaks out of an audit as its own output: the cards are what a cell shows
    assert not [o for c in audits for o in c.outputs if "data" in o and "image/png" in o["data"]]
    assert (tmp_path / "tutorial-audit" / "report.html").exists()

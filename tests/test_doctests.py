"""Every Example in replikit's docstrings runs and gives what it shows.

One parametrized test per module of the package, found by walking it, so a new module's
examples are checked without touching this file.
"""

import doctest
import importlib
import pkgutil

import pytest

import replikit

MODULES = sorted(m.name for m in pkgutil.walk_packages(replikit.__path__, "replikit.")
                 if not m.name.endswith("__main__"))


def test_the_walk_finds_the_capabilities():
    for name in ("replikit.compare.resampled", "replikit.replicate.meta",
                 "replikit.multistudy.measures", "replikit.generalize.nstar",
                 "replikit.resampling.error", "replikit.experiment.runner"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

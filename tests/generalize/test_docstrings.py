"""The Examples in the docstrings of replikit.generalize run and give what they show."""

import doctest
import importlib

import pytest

MODULES = ["rankings", "kernels", "mmd", "nstar", "spec", "plots"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"replikit.generalize.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0

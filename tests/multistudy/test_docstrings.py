"""The Examples in the docstrings of replikit.multistudy run and give what they show."""

import doctest
import importlib

import pytest

MODULES = ["_data", "utilities", "measures", "inference", "training", "analysis"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"replikit.multistudy.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0

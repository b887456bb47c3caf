"""Every public result is on one base (DESIGN.md, API conventions) and keeps its contract.

Each capability's ``tests/<capability>/test_results_contract.py`` builds one instance of each of
its result types (``FACTORIES``: class name -> zero-argument callable) and runs
``_checks.check_result`` on it; this file checks that the base is there for every public result
type and that every one of them is built by some contract test.
"""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

from _checks import public_result_types
from replikit.results import ConfidenceInterval, Result, TestResult, Verdict

TESTS = pathlib.Path(__file__).resolve().parents[1]
RESULT_TYPES = public_result_types()


def _contract_factories() -> dict[str, object]:
    out = {}
    for path in sorted(TESTS.glob("*/test_results_contract.py")):
        spec = importlib.util.spec_from_file_location(f"_contract_{path.parent.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.update(getattr(module, "FACTORIES", {}))
    return out


@pytest.mark.parametrize("key", sorted(RESULT_TYPES))
def test_every_public_result_is_on_the_base(key):
    cls = RESULT_TYPES[key]
    assert issubclass(cls, Result), f"{key} does not subclass replikit.results.Result"
    for method in ("to_frame", "to_dict", "_repr_html_", "__str__"):
        assert callable(getattr(cls, method, None)), f"{key} has no {method}"


def test_every_public_result_is_built_by_a_contract_test():
    built = set(_contract_factories())
    missing = sorted(k for k, cls in RESULT_TYPES.items() if cls.__name__ not in built)
    assert not missing, "result types no contract test builds: " + ", ".join(missing)


def test_a_result_without_table_still_prints():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Broken(Result):
        x: float

        def to_frame(self):
            raise RuntimeError("no table")

    assert "no table" in str(Broken(1.0))
    assert "RuntimeError" in Broken(1.0)._repr_html_()


def test_html_escapes_user_strings():
    v = Verdict("<script>alert(1)</script> holds.", "R²", "warn")
    assert "<script>" not in v._repr_html_()
    r = TestResult(statistic=1.0, pvalue=0.3, df=None, estimate=0.1, se=0.1,
                   method="<img src=x onerror=alert(1)>")
    assert "<img" not in r._repr_html_()


def test_interval_is_plain_floats_and_unpacks():
    import numpy as np

    ci = ConfidenceInterval(np.float64(0.1), np.float64(0.2))
    low, high = ci
    assert type(low) is float and type(high) is float
    assert str(ci) == "[0.1, 0.2]"

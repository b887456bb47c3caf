"""The core results keep the contract of a public result (``_checks.check_result``)."""

from __future__ import annotations

import pytest

from _checks import check_result
from replikit.results import TestResult, Verdict

FACTORIES = {
    "TestResult": lambda: TestResult(statistic=2.0, pvalue=0.07, df=9, estimate=1.0, se=0.5,
                                     method="paired t-test"),
    "Verdict": lambda: Verdict("lr is better than dummy.", "ROC AUC", "good", 0.1, 0.05, 0.15,
                               label="difference in ROC AUC"),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    check_result(FACTORIES[name]())

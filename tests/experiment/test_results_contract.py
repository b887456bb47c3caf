"""Every public result of the experiment layer keeps the contract of
:class:`replikit.results.Result` (``_checks.check_result``): the survival metrics' results."""

from __future__ import annotations

import numpy as np
import pytest

from _checks import check_result


def _survival(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=200)
    t = rng.exponential(np.exp(-x))
    c = rng.exponential(2.0, 200)
    return np.minimum(t, c), t <= c, x


def _concordance():
    from replikit.experiment import concordance_index

    t, e, x = _survival()
    return concordance_index(t, e, x)


def _auc():
    from replikit.experiment import cumulative_dynamic_auc

    t, e, x = _survival()
    return cumulative_dynamic_auc(t, e, t, e, x, np.quantile(t[e], [0.25, 0.5, 0.75]))


def _brier():
    from replikit.experiment import brier_score

    t, e, x = _survival()
    times = np.quantile(t[e], [0.25, 0.5])
    surv = np.exp(-np.outer(np.exp(x), times))  # the true survival of the simulated model
    return brier_score(t, e, t, e, surv, times)


#: One small real instance of each public result type of replikit.experiment.
FACTORIES = {
    "ConcordanceResult": _concordance,
    "CumulativeDynamicAUCResult": _auc,
    "BrierScoreResult": _brier,
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    check_result(FACTORIES[name]())


def test_the_concordance_holds_its_interval():
    res = FACTORIES["ConcordanceResult"]()
    ci = res.confidence_interval()
    assert ci.low <= res.estimate <= ci.high and 0 <= ci.low and ci.high <= 1

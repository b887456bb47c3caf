"""The Bayesian signed-rank test over datasets (Benavoli et al. 2014, 2017).

Reference: baycomp 1.0.3 ``two_on_multiple`` computed live on the published nbc/j48 accuracies
(tests/reference/compare/baycomp_accuracies.txt, averaged per data set), and the value printed in
baycomp's documentation (docs/functions.rst: ``two_on_multiple(nbc, j48, rope=1)`` gives
``(0.23014, 0.00674, 0.76312)``), both within Monte-Carlo error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from replikit.compare import BayesianComparison, bayesian_signed_rank_test
from replikit.errors import DataError, ParameterError

REF = Path(__file__).parents[1] / "reference" / "compare"


def baycomp_data() -> dict[str, np.ndarray]:
    """Classifier -> (54, 100) fold accuracies in %, in the published order."""
    data, name = {}, None
    for line in (REF / "baycomp_accuracies.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) == 1:
            name = parts[0]
            data[name] = []
        elif parts:
            data[name].append(np.array(parts[1:], dtype=float))
    return {k: np.vstack(v) for k, v in data.items()}


def test_matches_baycomp_documentation():
    d = baycomp_data()
    nbc, j48 = d["nbc"].mean(axis=1), d["j48"].mean(axis=1)
    res = bayesian_signed_rank_test((j48, nbc), tolerance=1, random_state=0)
    assert isinstance(res, BayesianComparison)
    # baycomp's x = nbc, y = j48 and its "left" is y - x < -rope: our a = j48 worse
    published = (0.23014, 0.00674, 0.76312)
    for ours, ref, se in zip(res.probabilities, published, res.mc_se, strict=True):
        assert abs(ours - ref) < 4 * np.sqrt(2) * se + 1e-9
    assert res.n_datasets == 54 and res.n_draws == 50_000
    assert res.estimate == pytest.approx(np.mean(j48 - nbc))


@pytest.mark.parametrize("rope", [0.0, 0.5, 2.0])
def test_matches_baycomp_live(rope):
    baycomp = pytest.importorskip("baycomp")
    d = baycomp_data()
    for ca, cb in (("nbc", "j48"), ("aode", "hnb")):
        x, y = d[ca].mean(axis=1), d[cb].mean(axis=1)
        ref = np.asarray(baycomp.two_on_multiple(x, y, rope=rope, nsamples=20_000,
                                                 random_state=1))
        ours = bayesian_signed_rank_test((y, x), tolerance=rope, n_resamples=20_000,
                                         random_state=1)
        se = np.sqrt(np.maximum(ref * (1 - ref), 1e-4) / 20_000)
        assert np.all(np.abs(np.array(ours.probabilities) - ref) < 4 * np.sqrt(2) * se), \
            (ca, cb, rope, ours.probabilities, ref)


def test_swap_mirrors_exactly_and_seed_is_deterministic():
    rng = np.random.default_rng(0)
    x, y = rng.normal(0.8, 0.05, 25), rng.normal(0.81, 0.05, 25)
    r1 = bayesian_signed_rank_test((x, y), tolerance=0.01, n_resamples=2000, random_state=3)
    r2 = bayesian_signed_rank_test((y, x), tolerance=0.01, n_resamples=2000, random_state=3)
    r3 = bayesian_signed_rank_test((x, y), tolerance=0.01, n_resamples=2000, random_state=3)
    assert (r1.p_left, r1.p_rope, r1.p_right) == (r2.p_right, r2.p_rope, r2.p_left)
    np.testing.assert_array_equal(r1.samples, r3.samples)
    assert np.allclose(r1.samples.sum(axis=1), 1.0)


def test_table_and_scores_inputs_agree():
    rng = np.random.default_rng(2)
    rows = []
    for s in range(6):
        for f in range(5):
            rows += [(f"s{s}", "rf", 0, f, "acc", 0.8 + 0.03 * s + rng.normal(0, 0.01), 80, 20),
                     (f"s{s}", "lr", 0, f, "acc", 0.79 + 0.03 * s + rng.normal(0, 0.01), 80,
                      20)]
    scores = pd.DataFrame(rows, columns=["study", "model", "repeat", "fold", "metric", "value",
                                         "n_train", "n_test"])
    table = scores.pivot_table(index="study", columns="model", values="value")
    r1 = bayesian_signed_rank_test(scores, "rf", "lr", n_resamples=1000, random_state=0)
    r2 = bayesian_signed_rank_test(table, "rf", "lr", n_resamples=1000, random_state=0)
    assert r1.probabilities == r2.probabilities and (r1.a, r1.b) == ("rf", "lr")
    assert r1.metric == "acc"
    frame = r1.to_frame()
    assert list(frame[["a", "b", "n_datasets"]].iloc[0]) == ["rf", "lr", 6]
    assert "P(rf better)" in str(r1)


def test_decision_and_errors():
    rng = np.random.default_rng(0)
    b = rng.uniform(0.7, 0.9, 40)
    res = bayesian_signed_rank_test((b + 0.05, b), tolerance=0.01, n_resamples=2000,
                                    random_state=0)
    assert res.decision() == "a better"
    eq = bayesian_signed_rank_test((b + 0.001, b), tolerance=0.05, n_resamples=2000,
                                   random_state=0)
    assert eq.decision() == "equivalent"
    with pytest.raises(ParameterError, match="`tolerance`"):
        bayesian_signed_rank_test((b, b), tolerance=-1)
    with pytest.raises(DataError, match="at least 2 datasets"):
        bayesian_signed_rank_test(([0.1], [0.2]))
    with pytest.raises(ParameterError, match="`a`"):
        bayesian_signed_rank_test(pd.DataFrame({"x": b, "y": b, "z": b}), "q", "x")


@pytest.mark.parametrize("rope, rounded", [(0.01, False), (0.0, True), (0.02, True)])
def test_signed_rank_masses_equal_the_quadratic_forms(rope, rounded):
    # the O(n) sums of Benavoli et al. (2014) eq. 8 against the n x n quadratic forms, ties on
    # the rope's edge included (rounded differences)
    from replikit.compare.bayesian import _signed_rank_bounds, _signed_rank_masses

    rng = np.random.default_rng(3)
    z = np.concatenate([[0.0], rng.normal(0.01, 0.02, 150)])
    if rounded:
        z = np.round(z, 2)
    sums = z[:, None] + z[None, :]
    right = (sums > 2 * rope) + 0.5 * (sums == 2 * rope)
    left = (-sums > 2 * rope) + 0.5 * (-sums == 2 * rope)
    w = rng.dirichlet(np.ones(z.size), size=40)
    got_left, got_right = _signed_rank_masses(w, *_signed_rank_bounds(z, rope))
    np.testing.assert_allclose(got_left, ((w @ left) * w).sum(axis=1), rtol=0, atol=1e-14)
    np.testing.assert_allclose(got_right, ((w @ right) * w).sum(axis=1), rtol=0, atol=1e-14)


def test_identical_models_without_tolerance_are_not_called_better():
    """Every difference exactly 0 and no region of equivalence: each draw puts 1/2 on each
    side, a tie; it used to be counted for the first region, so one of two identical models
    (BIG-bench's PaLM 535b and 64b rows are identical) read "practically better"."""
    from replikit.compare import bayesian_signed_rank_test, compare_benchmark

    x = np.linspace(0.5, 0.9, 30)
    res = bayesian_signed_rank_test((x, x.copy()), tolerance=0.0, n_resamples=1000,
                                    random_state=0)
    assert (res.p_left, res.p_rope, res.p_right) == (0.5, 0.0, 0.5)
    assert res.decision() == "undecided"
    table = pd.DataFrame({"a": x, "b": x, "c": x - 0.1})
    dec = compare_benchmark(table, tolerance=0.0, n_resamples=1000,
                            random_state=0).decisions()
    assert dec.loc[(dec["a"] == "a") & (dec["b"] == "b"), "decided"].item() is False

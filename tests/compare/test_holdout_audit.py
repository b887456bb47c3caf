"""The comparison on one held-out test set (predictions from a single split).

References: the metric differences computed here with scikit-learn, Holm's adjustment by
statsmodels' ``multipletests``, the one-pair tests of :mod:`replikit.compare.testset` (checked
against exact enumeration and plain loops in test_testset.py), and constructed cases whose
decision is known (a large difference; identical predictions on many rows).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, r2_score, roc_auc_score

import replikit
from replikit.compare import audit_test_set, is_single_split
from replikit.errors import NotApplicableError, ParameterError


def _classes(n=600, accs=(0.88, 0.8, 0.79), seed=0, study=None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    frames = []
    for j, acc in enumerate(accs):
        pred = np.where(rng.random(n) < acc, y, 1 - y)
        p1 = np.clip(0.5 + (pred - 0.5) * rng.uniform(0.2, 0.9, n), 0, 1)
        frames.append(pd.DataFrame({"model": f"m{j}", "row": np.arange(n), "y_true": y,
                                    "y_pred": pred, "proba_0": 1 - p1, "proba_1": p1}))
    out = pd.concat(frames, ignore_index=True)
    if study is not None:
        out.insert(0, "study", study)
    return out


def test_single_split_is_recognised():
    p = _classes()
    assert is_single_split(p.assign(study="s", repeat=0, fold=0))
    assert not is_single_split(p.assign(study="s", repeat=0, fold=p["row"] % 5))


def test_differences_and_holm_match_independent_references():
    from statsmodels.stats.multitest import multipletests

    p = _classes()
    res = audit_test_set(p, metric="balanced_accuracy", n_resamples=1000, random_state=1)
    f = res.comparisons
    for r in f.itertuples():
        ya = p[p.model == r.a]
        yb = p[p.model == r.b]
        ref = (balanced_accuracy_score(ya.y_true, ya.y_pred)
               - balanced_accuracy_score(yb.y_true, yb.y_pred))
        assert r.estimate == pytest.approx(ref, abs=1e-12)
        assert r.ci_low <= r.eq_low <= r.estimate <= r.eq_high <= r.ci_high
    holm = multipletests(f["pvalue"], method="holm")[1]
    np.testing.assert_allclose(f["pvalue_adjusted"], holm, rtol=1e-12)
    # m0 is clearly better than both (by construction); the light waits for m1 vs m2
    assert f.loc[f["a"] == "m0", "conclusion"].tolist() == ["m0 better", "m0 better"]
    assert res.best == "m0" and res.verdict.level == "warn"
    assert "Dietterich" in res.verdict.caveats[0]


def test_roc_auc_reads_the_positive_class_probability():
    p = _classes(accs=(0.9, 0.75))
    res = audit_test_set(p, metric="roc_auc", n_resamples=500, random_state=0)
    a, b = p[p.model == "m0"], p[p.model == "m1"]
    ref = roc_auc_score(a.y_true, a.proba_1) - roc_auc_score(b.y_true, b.proba_1)
    assert res.comparisons["estimate"].iloc[0] == pytest.approx(ref, abs=1e-12)


def test_identical_models_on_many_rows_are_shown_equivalent():
    rng = np.random.default_rng(3)
    n = 20_000
    y = rng.normal(size=n)
    pred = y + rng.normal(0, 0.6, n)
    p = pd.concat([pd.DataFrame({"model": m, "row": np.arange(n), "y_true": y,
                                 "y_pred": pred + (0 if m == "a" else rng.normal(0, 1e-3, n))})
                   for m in ("a", "b")])
    res = audit_test_set(p, n_resamples=500, random_state=0)
    assert res.metric == "r2"
    assert res.comparisons["conclusion"].tolist() == ["equivalent"]
    assert res.verdict.level == "good"
    d = r2_score(y, pred) - r2_score(y, p[p.model == "b"].y_pred)
    assert res.comparisons["estimate"].iloc[0] == pytest.approx(d, abs=1e-12)


def test_several_studies_and_reproducibility():
    p = pd.concat([_classes(300, seed=1, study="s1"), _classes(300, seed=2, study="s2")])
    r1 = audit_test_set(p, n_resamples=300, random_state=7)
    # the test rows in another order within each study and model: paired on (fold, row)
    shuffled = p.groupby(["study", "model"], sort=False, group_keys=False).sample(
        frac=1, random_state=0)
    r2 = audit_test_set(shuffled, n_resamples=300, random_state=7)
    assert len(r1.comparisons) == 6
    pd.testing.assert_frame_equal(r1.comparisons, r2.comparisons)


def test_refusals_name_what_is_wrong():
    p = _classes()
    with pytest.raises(NotApplicableError, match="several folds"):
        audit_test_set(p.assign(fold=p["row"] % 5))
    with pytest.raises(NotApplicableError, match="1 model"):
        audit_test_set(p[p.model == "m0"])
    with pytest.raises(ParameterError, match="`metric`"):
        audit_test_set(p, metric="nonsense")
    with pytest.raises(ParameterError, match="`tolerance`"):
        audit_test_set(p, tolerance=-1)


def test_the_audit_uses_it_for_predictions_from_one_split():
    p = _classes(400)
    a = replikit.audit(predictions=p, quick=True, random_state=0, sections=["compare"])
    s = next(x for x in a.sections if x.key == "compare")
    assert not s.skipped and s.data["scheme"] == "one test set"
    ref = audit_test_set(p.assign(study="all", repeat=0, fold=0), n_resamples=1000,
                         random_state=0)
    np.testing.assert_allclose(s.data["comparisons"]["estimate"], ref.comparisons["estimate"])
    assert s.data["verdict"]["level"] in ("good", "warn")

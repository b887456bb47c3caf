"""R2 by sample type: defaults, warnings and closed forms."""

import warnings

import numpy as np
import pandas as pd
import pytest

from replikit.errors import ParameterError, ValidityWarning
from replikit.replicate import (
    Estimate,
    consistency,
    difference,
    estimates_from_table,
    from_folds,
    from_predictions,
    from_summary,
    inconsistency,
    r2_confidence_interval,
    r2_se,
)
from replikit.replicate.estimates import r2_delta_se


def _preds(n=300, random_state=0, slope=0.8):
    rng = np.random.default_rng(random_state)
    s = rng.standard_normal(n)
    y = s + rng.standard_normal(n)
    return y, slope * s + 0.3 * rng.standard_normal(n)


def _no_validity_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ValidityWarning)
        return fn()


def test_closed_forms():
    # Olkin-Finn (the paper's eq. 1) and Cohen et al. (psychometric::CI.Rsq) at published values
    assert r2_se(0.41, 667) == pytest.approx(np.sqrt(4 * .41 * .59 ** 2 / 667))
    assert r2_se(0.5032, 62, 4, method="cohen") == pytest.approx(0.0804, abs=5e-5)
    ci = r2_confidence_interval(0.5032, 62, 4, method="cohen")
    assert (ci.low, ci.high) == pytest.approx((0.3457, 0.6607), abs=5e-5)
    # the delta-method SE is the SD of the influence function of 1 - A/B over sqrt(n)
    y, yhat = _preds()
    d2, yc2 = (y - yhat) ** 2, (y - y.mean()) ** 2
    a, b = d2.mean(), yc2.mean()
    infl = (d2 - a - a / b * (yc2 - b)) / b
    assert r2_delta_se(y, yhat) == pytest.approx(infl.std(ddof=1) / np.sqrt(y.size))


def test_delta_se_agrees_with_olkin_finn_for_calibrated_predictions_and_the_bootstrap():
    rng = np.random.default_rng(1)
    n = 20000
    s = rng.standard_normal(n) * np.sqrt(0.4)
    y = s + rng.standard_normal(n) * np.sqrt(0.6)
    r2 = 1 - np.sum((y - s) ** 2) / np.sum((y - y.mean()) ** 2)
    # calibrated yhat = E[y|x] under normality: Var(IF) = 4 R2 (1 - R2)^2 (Olkin-Finn)
    assert r2_delta_se(y, s) == pytest.approx(r2_se(r2, n), rel=0.03)
    # any predictor: the bootstrap SE of the same R2 (an independent estimate of the SD)
    y2, yhat2 = _preds(n=600, random_state=2, slope=1.6)
    boot = from_predictions(y2, yhat2, se_method="bootstrap", n_resamples=3000, random_state=0)
    assert r2_delta_se(y2, yhat2) == pytest.approx(boot.se, rel=0.08)


def test_defaults_by_sample_type():
    y, yhat = _preds()
    e = _no_validity_warning(lambda: from_predictions(y, yhat, k=3))
    assert (e.sample, e.source, e.interval) == ("test_set", "delta", "wald")
    assert e.se == pytest.approx(r2_delta_se(y, yhat))
    ins = _no_validity_warning(lambda: from_predictions(y, yhat, k=3, sample="in_sample"))
    assert (ins.sample, ins.source, ins.interval) == ("in_sample", "olkin_finn", "lee")
    s = _no_validity_warning(lambda: from_summary(r2=0.4, n=133, k=36, sample="in_sample"))
    assert s.interval == "lee"
    ci = s.confidence_interval()
    ref = r2_confidence_interval(0.4, 133, 36, method="lee", sample="in_sample")
    assert (ci.low, ci.high) == (ref.low, ref.high)
    assert _no_validity_warning(lambda: from_summary(r2=0.4, n=133)).interval == "wald"
    cv = _no_validity_warning(lambda: from_folds([.5, .47, .52, .49], 134))
    assert cv.sample == "cross_validated"
    assert Estimate(0.3, 0.02).sample == "test_set"
    assert "sample" in e.to_frame().columns and e.with_label("x").sample == "test_set"
    with pytest.raises(ParameterError, match="sample"):
        Estimate(0.3, 0.02, sample="holdout")
    with pytest.raises(ParameterError, match="`k`"):
        from_summary(r2=0.4, n=133, sample="in_sample")
    # r2_confidence_interval: Lee by default for an in-sample R2
    assert _no_validity_warning(lambda: r2_confidence_interval(
        0.4, 133, 36, sample="in_sample")) == ref


@pytest.mark.parametrize("make, words", [
    (lambda: from_summary(r2=0.4, n=133, k=36, interval="lee"), "test-set R2"),
    (lambda: from_summary(r2=0.4, n=133, k=36, sample="in_sample", interval="wald"),
     "in-sample R2"),
    (lambda: r2_confidence_interval(0.4, 133, 36, method="lee"), "Lee"),
    (lambda: r2_confidence_interval(0.4, 133, 36, method="cohen", sample="in_sample"),
     "cohen"),
    (lambda: from_predictions(*_preds(), k=3, sample="in_sample", se_method="bootstrap",
                              n_resamples=50, random_state=0), "bootstrap"),
    (lambda: Estimate(0.4, 0.05, 100, 3, interval="lee", sample="cross_validated"),
     "cross-validated"),
])
def test_a_method_wrong_for_the_sample_type_warns(make, words):
    with pytest.warns(ValidityWarning, match=words):
        make()


def test_difference_defaults_and_warnings():
    y1, p1 = _preds(random_state=3)
    y2, p2 = _preds(random_state=4)
    o, r = from_predictions(y1, p1), from_predictions(y2, p2)
    d = _no_validity_warning(lambda: difference(o, r))
    assert d.interval == "wald" and d.se == pytest.approx(np.hypot(o.se, r.se))
    ob = from_predictions(y1, p1, se_method="bootstrap", n_resamples=200, random_state=0)
    rb = from_predictions(y2, p2, se_method="bootstrap", n_resamples=200, random_state=1)
    assert _no_validity_warning(lambda: inconsistency(ob, rb)).difference.interval == "basic"
    assert consistency(ob, rb).difference.interval == "basic"
    # the paper's literal test: Olkin-Finn SEs of reported test R2s
    with pytest.warns(ValidityWarning, match="olkin_finn"):
        inconsistency(from_summary(r2=0.4, n=133), from_summary(r2=0.3, n=133))
    with pytest.warns(ValidityWarning, match="no common parameter"):
        difference(from_summary(r2=0.4, n=133, k=5, sample="in_sample"), r)
    # a reported SE is the user's: no warning
    _no_validity_warning(lambda: inconsistency(from_summary(r2=0.4, se=0.05),
                                               from_summary(r2=0.3, se=0.05)))


def test_estimates_from_table_sample():
    df = pd.DataFrame({"study": ["a", "b"], "r2": [0.4, 0.35], "n": [200, 220], "k": [5, 5]})
    ests = estimates_from_table(df, sample="in_sample")[("model", "reported")]
    assert [e.interval for e in ests] == ["lee", "lee"]
    assert all(e.sample == "in_sample" for e in ests)
    with pytest.raises(ParameterError, match="sample"):
        estimates_from_table(df, sample="train")


def test_analyze_replications_warns_once_per_message():
    from replikit.replicate import analyze_replications

    df = pd.DataFrame({"study": list("abcd"), "r2": [0.41, 0.35, 0.45, 0.40],
                       "n": [667, 700, 650, 600]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = analyze_replications(estimates_from_table(df), "a")
    validity = [w for w in caught if issubclass(w.category, ValidityWarning)]
    assert len(validity) == 1 and "olkin_finn" in str(validity[0].message)
    assert res.interval == "wald" and len(res.table) == 3

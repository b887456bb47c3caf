"""Bounded metrics on a transformed scale: transforms against metafor's ``transf`` functions
(``tests/testthat/test_misc_transf.r`` in github:wviechtb/metafor, git 71ae8f5a), the delta
method against numerical derivatives, the Olkin-Finn closed form, and properties."""

import numpy as np
import pytest

from replikit.errors import DataError, ParameterError
from replikit.replicate import (
    SCALES,
    default_scale,
    from_scale,
    meta_analysis,
    meta_analysis_on_scale,
    to_scale,
)


def test_values_test_misc_transf():
    # test_misc_transf.r:9 transf.rtoz(.5) = 0.549306; :12 transf.logit(.1) = -2.197225
    assert to_scale([0.5], [0.1], "fisher_z")[0][0] == pytest.approx(0.549306, abs=5e-7)
    assert to_scale([0.1], [0.01], "logit")[0][0] == pytest.approx(-2.197225, abs=5e-7)
    # :10, :13 round trips
    assert from_scale(0.549306, "fisher_z") == pytest.approx(0.5, abs=1e-6)
    assert from_scale(-2.197225, "logit") == pytest.approx(0.1, abs=1e-6)


@pytest.mark.parametrize("scale", SCALES)
def test_round_trip_and_delta_method(scale):
    x = {"logit": 0.83, "fisher_z": -0.4, "r2_z": 0.37, "log": 2.5, "identity": -1.3}[scale]
    y, s = to_scale([x], [0.01], scale)
    assert from_scale(y, scale)[0] == pytest.approx(x, rel=1e-12)
    h = 1e-6
    num = (to_scale([x + h], [1.0], scale)[0][0] - to_scale([x - h], [1.0], scale)[0][0]) / (2 * h)
    assert s[0] == pytest.approx(abs(num) * 0.01, rel=1e-6)


def test_r2_z_with_olkin_finn_se_is_one_over_sqrt_n():
    # Vijayakumar & Cheung (2021), eq. 1: Var(R2) ~ 4 R2 (1 - R2)^2 / N  =>  se of atanh(sqrt(R2)) = 1 / sqrt(N)
    r2 = np.array([0.1, 0.4, 0.75])
    n = np.array([50.0, 120.0, 400.0])
    se = np.sqrt(4 * r2 * (1 - r2) ** 2 / n)
    _, s = to_scale(r2, se, "r2_z")
    np.testing.assert_allclose(s, 1 / np.sqrt(n), rtol=1e-12)


def test_pooled_interval_stays_in_range_and_identity_is_plain():
    auc = [0.97, 0.99, 0.95, 0.985]
    se = [0.02, 0.008, 0.03, 0.01]
    res = meta_analysis_on_scale(auc, se, metric="roc_auc")
    assert res.scale == "logit"
    ci = res.confidence_interval()
    pi = res.prediction_interval()
    assert 0 < ci.low < res.estimate < ci.high < 1 and 0 < pi.low and pi.high < 1
    plain = meta_analysis(auc, se=se)
    same = meta_analysis_on_scale(auc, se, scale="identity")
    assert same.estimate == pytest.approx(plain.estimate)
    assert set(res.to_frame().columns) >= {"estimate", "ci_low", "ci_high", "scale"}
    assert len(res.study_frame()) == 4


def test_default_scales():
    assert default_scale("r2") == "r2_z"
    assert default_scale("ROC AUC") == "logit"
    assert default_scale("accuracy") == "logit"
    assert default_scale("rmse") == "log"
    assert default_scale("anything else") == "identity"


def test_errors():
    with pytest.raises(DataError, match="in \\(0, 1\\)"):
        to_scale([1.0], [0.1], "logit")
    with pytest.raises(DataError, match="se"):
        to_scale([0.5], [0.0], "logit")
    with pytest.raises(ParameterError):
        to_scale([0.5], [0.1], "probit")

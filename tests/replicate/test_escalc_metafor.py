"""effects_from_reported against metafor's escalc (Viechtbauer 2010), values printed by R.

The reference values were made once, not by the suite, with metafor 5.1-12 (the GitHub source of
wviechtb/metafor at commit 71ae8f5, installed with ``R CMD INSTALL`` next to Debian's metafor
3.8-1, which has no R2/ZR2/AUC measures; its PR/PLO/PAS/COR/ZCOR values are the same) and
printed at 15 significant digits with

    p <- function(tag, e) cat(tag, sprintf("%.15g", e$yi), sprintf("%.15g", e$vi), "\\n")
    r <- c(0.12, -0.35, 0.6, 0.05); n <- c(50, 120, 33, 1000)
    p("COR", escalc("COR", ri=r, ni=n)); p("ZCOR", escalc("ZCOR", ri=r, ni=n))
    r2 <- c(0.10, 0.445, 0.7); n2 <- c(100, 457, 60); m2 <- c(3, 5, 2)
    p("R2", escalc("R2", r2i=r2, ni=n2, mi=m2)); p("ZR2", escalc("ZR2", r2i=r2, ni=n2, mi=m2))
    xi <- c(40, 87, 0, 150, 13); ni <- c(50, 100, 30, 150, 20)
    for (m in c("PR", "PLO", "PAS")) p(m, escalc(m, xi=xi, ni=ni))
    a <- c(0.85, 0.7, 0.93); n1 <- c(51, 30, 200); n0 <- c(58, 70, 300)
    p("AUC_LS2", escalc("AUC", ai=a, n1i=n1, n2i=n0, vtype="LS2"))
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from replikit.errors import DataError, ParameterError
from replikit.replicate import effects_from_reported

R = [0.12, -0.35, 0.6, 0.05]
N_R = [50, 120, 33, 1000]
R2 = [0.10, 0.445, 0.7]
N_R2 = [100, 457, 60]
XI = np.array([40, 87, 0, 150, 13])
NI = np.array([50, 100, 30, 150, 20])
AUC = [0.85, 0.7, 0.93]
N_POS = np.array([51, 30, 200])
N_NEG = np.array([58, 70, 300])

METAFOR = {
    "COR": ([0.12, -0.35, 0.6, 0.05],
            [0.01982464, 0.00647064075630252, 0.0128, 0.000996002252252252]),
    "ZCOR": ([0.120581028408444, -0.365443754271396, 0.693147180559945, 0.0500417292784913],
             [0.0212765957446809, 0.00854700854700855, 0.0333333333333333,
              0.00100300902708124]),
    "R2": ([0.1, 0.445, 0.7], [0.00324, 0.00119974726477024, 0.0042]),
    "ZR2": ([0.327450150237258, 0.80546909708235, 1.20993512133595],
            [0.01, 0.00218818380743982, 0.0166666666666667]),
    "PR": ([0.8, 0.87, 0.0161290322580645, 0.996688741721854, 0.65],
           [0.0032, 0.001131, 0.000511899566983317, 2.18562506408021e-05, 0.011375]),
    "PLO": ([1.38629436111989, 1.90095876119305, -4.11087386417331, 5.70711026474887,
             0.619039208406224],
            [0.125, 0.0884173297966401, 2.0327868852459, 2.00664451827243, 0.21978021978022]),
    "PAS": ([1.10714871779409, 1.20193334256827, 0, 1.5707963267949, 0.937744490405147],
            [0.005, 0.0025, 0.00833333333333333, 0.00166666666666667, 0.0125]),
}
#: metafor's escalc("AUC", vtype="LS2"): Hanley & McNeil's formula over (n1 - 1)(n2 - 1)
METAFOR_AUC_LS2 = [0.00150812047745686, 0.00378903308526732, 0.000172973166970675]


def _inputs(measure):
    if measure in ("COR", "ZCOR"):
        return R, {"n": N_R}
    if measure in ("R2", "ZR2"):
        return R2, {"n": N_R2}
    return XI / NI, {"n": NI}


@pytest.mark.parametrize("measure", sorted(METAFOR))
def test_matches_metafor(measure):
    values, sizes = _inputs(measure)
    out = effects_from_reported(values, measure=measure, **sizes)
    yi, vi = METAFOR[measure]
    np.testing.assert_allclose(out["yi"], yi, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out["vi"], vi, rtol=1e-12)
    assert (out["measure"] == measure).all() and out.attrs["measure"]


def test_auc_is_metafor_ls2_rescaled():
    """Hanley & McNeil (1982) divide by n_pos n_neg; metafor's LS2 (Cho et al. 2019) by
    (n_pos - 1)(n_neg - 1) with the same numerator."""
    out = effects_from_reported(AUC, measure="AUC", n_pos=N_POS, n_neg=N_NEG)
    rescaled = np.array(METAFOR_AUC_LS2) * (N_POS - 1) * (N_NEG - 1) / (N_POS * N_NEG)
    np.testing.assert_allclose(out["vi"], rescaled, rtol=1e-12)
    np.testing.assert_allclose(out["yi"], AUC)


def test_auc_variance_is_exact_for_exponential_scores():
    """Hanley & McNeil's Q1 = A/(2-A), Q2 = 2A²/(1+A) are exact when the scores are
    exponential, so their formula is then the exact variance of the Mann-Whitney AUC
    (Hanley & McNeil 1982, p. 32): checked by simulation."""
    rng = np.random.default_rng(2024)
    a, n_pos, n_neg, reps = 0.8, 20, 30, 40_000
    lam = (1 - a) / a  # P(Exp(lam) > Exp(1)) = 1 / (1 + lam) = a
    pos = rng.exponential(1 / lam, size=(reps, n_pos))
    neg = rng.exponential(1.0, size=(reps, n_neg))
    ranks = stats.rankdata(np.concatenate([pos, neg], axis=1), axis=1)[:, :n_pos]
    auc = (ranks.sum(axis=1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    formula = effects_from_reported([a], measure="AUC", n_pos=n_pos, n_neg=n_neg)["vi"][0]
    # the variance of a sample variance: relative SE sqrt(2 / reps) = 0.7% (normal scores)
    assert auc.var(ddof=1) == pytest.approx(formula, rel=0.04)


def test_auclo_is_the_delta_method_of_auc():
    raw = effects_from_reported(AUC, measure="AUC", n_pos=N_POS, n_neg=N_NEG)
    lo = effects_from_reported(AUC, measure="AUCLO", n_pos=N_POS, n_neg=N_NEG)
    a = np.array(AUC)
    np.testing.assert_allclose(lo["yi"], np.log(a / (1 - a)))
    np.testing.assert_allclose(lo["vi"], raw["vi"] / (a * (1 - a)) ** 2)


def test_prevalence_gives_the_class_sizes():
    by_counts = effects_from_reported(AUC, measure="AUC", n_pos=N_POS, n_neg=N_NEG)
    n = N_POS + N_NEG
    by_share = effects_from_reported(AUC, measure="AUC", n=n, prevalence=N_POS / n)
    np.testing.assert_allclose(by_share["vi"], by_counts["vi"], rtol=1e-12)


def test_table_columns_and_labels():
    table = pd.DataFrame({"study": ["a", "b", "c", "d"], "ri": R, "size": N_R})
    out = effects_from_reported(table, measure="ZCOR", estimate="ri", n="size")
    assert list(out["study"]) == ["a", "b", "c", "d"]
    np.testing.assert_allclose(out["vi"], METAFOR["ZCOR"][1], rtol=1e-12)


def test_errors_name_the_column():
    table = pd.DataFrame({"study": ["a", "b", "c", "d"], "r": R, "n": [50, 3, 33, 1000]})
    with pytest.raises(DataError, match=r"column 'n'.*study 'b'.*>= 4"):
        effects_from_reported(table, measure="ZCOR")
    with pytest.raises(DataError, match=r"`estimate`: no column 'r2'"):
        effects_from_reported(table, measure="R2")
    with pytest.raises(DataError, match=r"`n`: column 'size' not found"):
        effects_from_reported(table, measure="COR", n="size")
    with pytest.raises(ParameterError, match=r"`measure`"):
        effects_from_reported(table, measure="XYZ")
    with pytest.raises(ParameterError, match=r"`n_pos`, `n_neg`"):
        effects_from_reported(table.assign(auc=0.7), measure="AUC")


def test_out_of_range_values_are_refused():
    with pytest.raises(DataError, match=r"`estimate`.*position 1.*\(-1, 1\)"):
        effects_from_reported([0.2, 1.0], measure="COR", n=50)
    with pytest.raises(DataError, match="R² < 1"):
        effects_from_reported([0.0], measure="R2", n=50)
    with pytest.raises(DataError, match=r"proportion in \[0, 1\]"):
        effects_from_reported([1.2], measure="PLO", n=50)

"""Multilevel (multivariate) meta-analysis and cluster-robust inference against R.

Reference values: R 4, metafor 3.8-1, clubSandwich 0.5.8, printed with
``options(digits = 17)`` by ``tests/reference/replicate/metafor_rma_mv.R`` (each value below
sits next to its R command). The data sets are ``tests/reference/replicate/
dat_konstantopoulos2011.csv`` and ``dat_berkey1998.csv`` (see the README there).

metafor maximises the likelihood with ``nlminb`` at its default tolerance: refitting with four
other optimizers moves its variances by up to 4e-8 (relative), so the variances, estimates and
SEs are compared at 1e-6 relative; the log-likelihood (flat at the maximum) and QE at 1e-9;
the profile intervals (computed with ``confint(fit, control = list(tol = 1e-12))``) at 1e-7.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pandas as pd
import pytest

from replikit.errors import DataError, ParameterError, ReplikitError
from replikit.replicate import meta_analysis, multilevel_meta_analysis

REF = pathlib.Path(__file__).parents[1] / "reference" / "replicate"
REL = 1e-6


@pytest.fixture(scope="module")
def konst():
    return pd.read_csv(REF / "dat_konstantopoulos2011.csv")


@pytest.fixture(scope="module")
def berkey():
    b = pd.read_csv(REF / "dat_berkey1998.csv")
    # V <- bldiag(lapply(split(dat[,c("v1i","v2i")], dat$trial), as.matrix))
    V = np.zeros((len(b), len(b)))
    for t in b.trial.unique():
        idx = np.flatnonzero(b.trial.to_numpy() == t)
        V[np.ix_(idx, idx)] = b.loc[idx, ["v1i", "v2i"]].to_numpy()
    b = b.assign(id=np.arange(1, len(b) + 1))
    return b, V


@pytest.fixture(scope="module")
def reml(konst):
    return multilevel_meta_analysis(konst.yi, konst.vi,
                                    clusters=[konst.district, konst.school])


def close(a, b, rel=REL, abs_=0.0):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rel, atol=abs_)


# --- dat.konstantopoulos2011 ---------------------------------------------------------------

def test_konstantopoulos_reml(reml):
    # f <- rma.mv(yi, vi, random = ~ 1 | district/school, data = dat.konstantopoulos2011)
    # cat(f$sigma2, f$beta, f$se, f$zval, f$pval, f$ci.lb, f$ci.ub, logLik(f), f$QE, f$QEp)
    close(reml.sigma2, [0.065061944275311659, 0.032736517027935085])
    close(reml.estimate, 0.18471316367288151)
    close(reml.se, 0.084555918742059658)
    close(reml.statistic, 2.1845089784472038)
    close(reml.pvalue, 0.028924868257709964)
    close([reml.ci_low, reml.ci_high], [0.01898660825874926, 0.35043971908701377])
    close(reml.loglik, -7.9587240337109684, rel=1e-9)
    close(reml.qe, 578.86401795822337, rel=1e-9)
    close(reml.qe_pvalue, 1.7968303019347725e-88, rel=1e-7)
    assert reml.qe_df == 55 and reml.n_clusters == (11, 56)
    assert reml.levels == ("district", "school")


def test_konstantopoulos_profile_intervals(reml):
    # confint(f, control = list(tol = 1e-12)): [[1]]$random[1, ], [[2]]$random[1, ]
    (a, b) = reml.sigma2_ci
    close([a.low, a.high], [0.0222396906665036, 0.207241619212353], rel=1e-7)
    close([b.low, b.high], [0.0162652550139237, 0.0628275803300841], rel=1e-7)
    # confint(f, level = 90, control = list(tol = 1e-12))
    (a, b) = reml.sigma2_confidence_interval(0.90)
    close([a.low, a.high], [0.026668506636943673, 0.16929293027460202], rel=1e-7)
    close([b.low, b.high], [0.01832161248080388, 0.056613805821414391], rel=1e-7)


def test_konstantopoulos_ml(konst):
    # f <- rma.mv(yi, vi, random = ~ 1 | district/school, data = dat, method = "ML")
    f = multilevel_meta_analysis(konst.yi, konst.vi, clusters=[konst.district, konst.school],
                                 tau2_method="ML")
    close(f.sigma2, [0.057738358858479465, 0.032864791861375371])
    close(f.estimate, 0.18445538396562336)
    close(f.se, 0.080481682165568155)
    close(f.statistic, 2.2918927512742453)
    close(f.pvalue, 0.0219118326527806)
    close([f.ci_low, f.ci_high], [0.026714185505910204, 0.34219658242533652])
    close(f.loglik, -8.3949355712629803, rel=1e-9)
    # confint(f, control = list(tol = 1e-12))
    (a, b) = f.sigma2_ci
    close([a.low, a.high], [0.019810021187553938, 0.17593873344110689], rel=1e-7)
    close([b.low, b.high], [0.016330842831311206, 0.063111531854470534], rel=1e-7)
    # robust(f, cluster = district): se, tval, pval, dfs
    r = f.robust()
    close(r.se, 0.084409901039189564)
    close(r.statistic, 2.1852339796013385)
    close(r.pvalue, 0.053767585197368968)
    assert float(r.df[0]) == 10


def test_konstantopoulos_t_test(konst):
    # rma.mv(yi, vi, random = ~ 1 | district/school, data = dat, test = "t"):
    # se, zval (t), pval, ci.lb, ci.ub; dfs = "residual" (k - p = 55)
    f = multilevel_meta_analysis(konst.yi, konst.vi, clusters=[konst.district, konst.school],
                                 interval="t")
    assert f.df == 55
    close(f.se, 0.084555918742059658)
    close(f.statistic, 2.1845089784472038)
    close(f.pvalue, 0.033205018794974485)
    close([f.ci_low, f.ci_high], [0.015259315821635921, 0.35416701152412711])


def test_konstantopoulos_robust(konst, reml):
    # r1 <- robust(f, cluster = district): se, tval, pval, ci.lb, ci.ub, dfs
    r = reml.robust()
    assert r.method == "CR1" and r.n_clusters == 11 and float(r.df[0]) == 10
    close(r.se, 0.0845022171523695)
    close(r.statistic, 2.1858972450369851)
    close(r.pvalue, 0.0537073136367331)
    close([r.ci_low, r.ci_high], [-0.0035695094432939, 0.3729958367890569])
    # the same clusters given explicitly
    close(reml.robust(cluster=konst.district).se, 0.0845022171523695)
    # robust(f, cluster = district, adjust = FALSE)
    close(reml.robust(adjust=False).se, 0.0805697027630915)
    # robust(f, cluster = interaction(district, school)): se, dfs
    r = reml.robust(cluster=konst.district.astype(str) + "." + konst.school.astype(str))
    close(r.se, 0.055061898217233188)
    assert float(r.df[0]) == 55


def test_konstantopoulos_cr2(reml):
    # r2 <- robust(f, cluster = district, clubSandwich = TRUE): se, tval, pval, ci, dfs;
    # equal to clubSandwich::coef_test(f, vcov = "CR2", cluster = dat$district)
    r = reml.robust(method="CR2")
    close(r.se, 0.08445799543476257)
    close(r.statistic, 2.18704176818355212)
    close(r.pvalue, 0.05396674247064655)
    close(r.df, 9.86315623331838154)
    close([r.ci_low, r.ci_high], [-0.00382548351676679, 0.37325181086252979])


# --- dat.berkey1998: a known sampling covariance V -----------------------------------------

def test_berkey_intercept_only(berkey):
    b, V = berkey
    # g <- rma.mv(yi, V, random = ~ 1 | trial/id, data = dat.berkey1998 with id = 1:10)
    # cat(g$sigma2, g$beta, g$se, logLik(g), g$QE)
    # 2.4206290250492388e-11 0.16576751116847527 0.015028426320996316 0.13234841892382376
    # -4.825466781686373 784.60780768543339
    f = multilevel_meta_analysis(b.yi, V=V, clusters=[b.trial, b.id])
    # the trial variance is on the boundary: metafor's log-scale optimizer stops at 2.4e-11,
    # replikit at 0 with a higher log-likelihood (by 4e-10), which moves sigma2.id by 1.3e-6
    close(f.sigma2[0], 0.0, abs_=1e-9)
    close(f.sigma2[1], 0.16576751116847527, rel=5e-6)
    assert f.loglik >= -4.825466781686373
    close(f.loglik, -4.825466781686373, rel=1e-9)
    close(f.estimate, 0.015028426320996316)
    close(f.se, 0.13234841892382376, rel=5e-6)
    close(f.qe, 784.60780768543339, rel=1e-9)
    # confint(g, control = list(tol = 1e-12))
    (a, c) = f.sigma2_ci
    close([a.low, a.high], [0.0, 0.19444011903358108], rel=1e-7)
    close([c.low, c.high], [0.071696161285354484, 0.50388523972928578], rel=1e-7)


@pytest.fixture(scope="module")
def berkey_mods(berkey):
    b, V = berkey
    mods = pd.get_dummies(b.outcome).astype(float)
    return multilevel_meta_analysis(b.yi, V=V, clusters=[b.trial, b.id], moderators=mods,
                                    intercept=False)


def test_berkey_moderators(berkey_mods):
    # g <- rma.mv(yi, V, mods = ~ outcome - 1, random = ~ 1 | trial/id, data = dat)
    # cat(g$sigma2, g$beta, g$se, logLik(g), g$QE, g$QEp)
    f = berkey_mods
    assert f.names == ("AL", "PD")
    close(f.sigma2, [0.013236814837548632, 0.011783600580231928], rel=5e-6)
    close(f.beta, [-0.3379611663189262, 0.36359418242101188])
    close(f.se, [0.078179434313292467, 0.078762498783596618])
    close(f.loglik, 3.310561109743924, rel=1e-9)
    close(f.qe, 128.2267162129676, rel=1e-9)
    close(f.qe_pvalue, 6.5931313322888932e-24, rel=1e-7)
    # confint(g, control = list(tol = 1e-12))
    (a, c) = f.sigma2_ci
    close([a.low, a.high], [0.0, 0.1253688438475547], rel=1e-7)
    close([c.low, c.high], [0.0018019935003559726, 0.073538603437177899], rel=1e-7)


def test_berkey_robust(berkey_mods):
    # r1 <- robust(g, cluster = trial): cat(se, zval, pval, dfs, ci.lb, ci.ub)
    r = berkey_mods.robust()
    close(r.se, [0.10398285467764527, 0.073082643450761028])
    close(r.statistic, [-3.2501624173199652, 4.9751098927610791])
    close(r.pvalue, [0.047483697722782638, 0.015604359111899486])
    close(r.df, [3, 3])
    close(r.ci_low, [-0.66888101800065125, 0.13101259379077079])
    close(r.ci_high, [-0.0070413146372011459, 0.59617577105125297])
    # r2 <- robust(g, cluster = trial, clubSandwich = TRUE)
    r = berkey_mods.robust(method="CR2")
    close(r.se, [0.092162396486180687, 0.062908184129220487])
    close(r.statistic, [-3.6670179943682548, 5.7797596203722641])
    close(r.pvalue, [0.024020467027079131, 0.0047302815249699046])
    close(r.df, [3.7472849798962775, 3.9213812608278489])
    close(r.ci_low, [-0.60079650882960611, 0.18754334238045337])
    close(r.ci_high, [-0.075125823808246339, 0.53964502246157042])


def test_berkey_ml(berkey):
    b, V = berkey
    # gm <- rma.mv(yi, V, mods = ~ outcome - 1, random = ~ 1 | trial/id, data = dat,
    #              method = "ML"); cat(gm$sigma2, gm$beta, gm$se, logLik(gm))
    f = multilevel_meta_analysis(b.yi, V=V, clusters=[b.trial, b.id],
                                 moderators=pd.get_dummies(b.outcome).astype(float),
                                 intercept=False, tau2_method="ML")
    close(f.sigma2, [0.010917215323033148, 0.0088223956363590334], rel=5e-6)
    close(f.beta, [-0.33680667649468188, 0.36047171113341075])
    close(f.se, [0.070592764816120035, 0.07159040138870254])
    close(f.loglik, 5.2055574070081594, rel=1e-9)


# --- properties ----------------------------------------------------------------------------

def test_one_effect_per_cluster_is_the_random_effects_model():
    # with one level and one effect per cluster the model is rma.uni's (REML and ML)
    rng = np.random.default_rng(3)
    y = rng.normal(0.3, 0.3, 15)
    v = rng.uniform(0.01, 0.05, 15)
    for method in ("REML", "ML"):
        m = multilevel_meta_analysis(y, v, clusters=[np.arange(15)], tau2_method=method)
        r = meta_analysis(y, v, tau2_method=method)
        close(m.sigma2[0], r.tau2, rel=1e-8)
        close(m.estimate, r.estimate, rel=1e-10)
        close(m.se, r.se, rel=1e-8)
        close(m.qe, r.q, rel=1e-12)


def test_dense_diagonal_V_and_permutation_give_the_same_fit(konst):
    base = multilevel_meta_analysis(konst.yi, konst.vi, clusters=[konst.district, konst.school])
    dense = multilevel_meta_analysis(konst.yi, V=np.diag(konst.vi),
                                     clusters=[konst.district, konst.school])
    perm = np.random.default_rng(0).permutation(len(konst))
    k2 = konst.iloc[perm]
    shuffled = multilevel_meta_analysis(k2.yi, k2.vi, clusters=[k2.district, k2.school])
    for other in (dense, shuffled):
        close(other.sigma2, base.sigma2, rel=1e-8)
        close(other.estimate, base.estimate, rel=1e-10)
        close(other.robust(method="CR2").se, base.robust(method="CR2").se, rel=1e-8)
    # inner labels need only be unique within their outer cluster (R's district/school)
    relabeled = multilevel_meta_analysis(konst.yi, konst.vi,
                                         clusters={"d": konst.district, "s": konst.school + 0})
    assert relabeled.n_clusters == (11, 56)


def test_robust_cr2_equals_cr1_scaled_for_balanced_intercept_model():
    # a property: with equal blocks, CR1 without adjustment <= CR2 (bias reduction inflates)
    rng = np.random.default_rng(1)
    g = np.repeat(np.arange(12), 3)
    y = rng.normal(size=g.size) + rng.normal(size=12)[g]
    fit = multilevel_meta_analysis(y, np.full(g.size, 0.5), clusters=[g])
    assert fit.robust(method="CR2").se >= fit.robust(adjust=False).se


def test_tables_and_text(reml):
    frame = reml.to_frame()
    assert frame["quantity"].tolist() == ["intercept", "sigma2.district", "sigma2.school"]
    d = reml.to_dict()
    import json
    json.dumps(d, allow_nan=False)
    text = str(reml)
    assert "σ² district (11 clusters)" in text and "QE(55)" in text
    assert "CR2" in str(reml.robust(method="CR2"))
    assert reml.robust().to_frame()["df"].tolist() == [10.0]


def test_thousands_of_effects_are_fast():
    import time

    rng = np.random.default_rng(5)
    n_outer = 800
    sizes = rng.integers(2, 6, n_outer)
    outer = np.repeat(np.arange(n_outer), sizes)
    inner = np.concatenate([rng.integers(0, 2, s) for s in sizes])
    n = outer.size
    y = 0.2 + rng.normal(0, 0.3, n_outer)[outer] + rng.normal(0, 0.1, n) + rng.normal(0, 0.1, n)
    t0 = time.perf_counter()
    fit = multilevel_meta_analysis(y, np.full(n, 0.01), clusters=[outer, inner])
    fit.robust(method="CR2")
    assert time.perf_counter() - t0 < 10
    assert n > 2000 and abs(fit.estimate - 0.2) < 0.1


# --- input validation ----------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(v=None), ParameterError, "`v`"),
    (dict(V=np.eye(6)), ParameterError, "exactly one"),
    (dict(v=[0.1] * 5), DataError, "`v`"),
    (dict(v=None, V=np.eye(5)), DataError, "`V`"),
    (dict(v=None, V=np.triu(np.ones((6, 6))) * 0.1 + np.eye(6)), DataError, "symmetric"),
    (dict(v=None, V=np.ones((6, 6))), DataError, "positive definite"),
    (dict(clusters=[[1, 1, 1, 1, 1, 1]]), DataError, "at least 2"),
    (dict(clusters=[[1, 1, 2, 2, 3]]), DataError, "clusters"),
    (dict(clusters=[[1, 1, 2, None, 3, 3]]), DataError, "missing"),
    (dict(clusters=None), ParameterError, "`clusters`"),
    (dict(tau2_method="DL"), ParameterError, "`tau2_method`"),
    (dict(interval="knha"), ParameterError, "`interval`"),
])
def test_bad_input(kwargs, exc, words):
    args = dict(v=[0.1] * 6, clusters=[[1, 1, 2, 2, 3, 3]])
    args.update(kwargs)
    with pytest.raises(exc) as info:
        multilevel_meta_analysis([0.1, 0.2, 0.3, 0.1, 0.5, 0.2], **args)
    assert words in str(info.value)
    assert isinstance(info.value, ReplikitError)


def test_bad_robust_input(reml, konst):
    with pytest.raises(ParameterError, match="`method`"):
        reml.robust(method="CR3")
    with pytest.raises(DataError, match="`cluster`"):
        reml.robust(cluster=[1, 2, 3])
    # CR2 needs every block of M inside one cluster: schools split the districts
    with pytest.raises(ParameterError, match="CR2"):
        reml.robust(cluster=np.arange(len(konst)), method="CR2")
    assert math.isfinite(reml.robust(cluster=np.arange(len(konst))).se)


def test_random_effects_meta_analysis_robust():
    bcg = pd.read_csv(REF / "dat_bcg.csv")
    res = meta_analysis(bcg.yi, bcg.vi)
    # f <- rma(yi, vi, data = dat.bcg); r <- robust(f, cluster = trial): se, dfs, pval
    r = res.robust(cluster=bcg.trial)
    close(r.se, 0.17918138445578549)
    assert float(r.df[0]) == 12
    close(r.pvalue, 0.0018009411204839944)
    close(res.robust().se, 0.17918138445578549)  # default: each study its own cluster
    # robust(f, cluster = alloc)
    r = res.robust(cluster=bcg.alloc)
    close(r.se, 0.1878177256220849)
    close(r.pvalue, 0.062667523222345381)
    # robust(f, cluster = alloc, clubSandwich = TRUE)
    r = res.robust(cluster=bcg.alloc, method="CR2")
    close(r.se, 0.21319265556578298)
    close(r.df, 1.7249519248892147)
    close(r.pvalue, 0.095961580340998651)


def test_a_flat_likelihood_near_its_optimum_converges_as_metafor():
    """Two variances hardly told apart (6 studies, 11 effects): Fisher scoring used to wander
    around the optimum in steps of rounding size and give up after 200 of them.

    R 4, metafor 3.8-1::

        d <- read.csv("fail.csv")   # the rows below
        f <- rma.mv(y, v, random = ~ 1 | st/inner, data = d)
        sprintf("%.10g", c(f$sigma2, f$b, f$se, f$QE, logLik(f)))
    """
    y = [0.16761638035046386, -0.11504364260747824, 0.3056622318792896, 0.29247510442330416,
         0.12946252098059802, 0.30278352458989477, 0.1313039869158761, 0.3729183323707474,
         0.27161177882999626, 0.5201700168862683, 0.6698468988355943]
    v = [0.006374518287284421, 0.015801336633740233, 0.021074186309102513,
         0.006441300374259724, 0.006255084218014379, 0.00904436727142367,
         0.017361866963682623, 0.014240301543324094, 0.011885631816689994,
         0.01133783953225761, 0.022177205125750162]
    st = [0, 1, 1, 1, 1, 2, 3, 4, 5, 5, 5]
    inner = [0, 0, 1, 2, 3, 0, 0, 0, 0, 1, 2]
    fit = multilevel_meta_analysis(y, v, clusters=[st, inner])
    np.testing.assert_allclose(fit.sigma2, [0.009953462702, 0.01293848226], rtol=1e-6)
    assert fit.estimate == pytest.approx(0.2713417839, rel=1e-8)
    assert fit.se == pytest.approx(0.06556735284, rel=1e-6)
    assert fit.qe == pytest.approx(28.81750619, rel=1e-9)
    assert fit.loglik == pytest.approx(2.454687472, rel=1e-9)

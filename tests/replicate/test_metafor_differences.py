"""Two places where replikit differed from metafor, fixed and checked against metafor's values.

1. Cumulative meta-analysis under Knapp–Hartung: the one-study row is that study's z interval
   (the adjustment needs two studies; metafor's ``rma`` falls back to ``test="z"`` at k = 1),
   and t(k - 1) from the second row on.
2. A text moderator whose values look like numbers ("11", "12", "108") is a factor, as R's
   ``model.matrix`` makes a character column; a numeric column stays a slope. On the command line
   a CSV column of numbers is numeric and ``--factor`` makes it a factor.

Every reference number below was computed with metafor 3.8-1 (R 4.2.2, the Debian packages
``r-cran-metafor`` and ``r-base-core``) by the R lines quoted above it, printed with
``sprintf("%.12g", ...)``. ML/REML fits pass ``control=list(threshold=1e-12)`` in R so that both
sides are converged (replikit's default tolerance is 1e-12); every value is compared to 1e-6.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from replikit.replicate import cumulative, meta_analysis, meta_regression

REF = Path(__file__).parents[1] / "reference" / "replicate"
BCG_PATH = REF / "dat_bcg.csv"
BCG = pd.read_csv(BCG_PATH)  # dat.bcg with escalc(measure="RR", ...): yi, vi
Y, V = BCG["yi"].to_numpy(), BCG["vi"].to_numpy()
ATOL = 1e-6

# cumulative output column -> metafor's cumul() element
CUMUL_COLUMNS = {"estimate": "estimate", "se": "se", "statistic": "tval", "pvalue": "pvals",
                 "ci_low": "ci.lb", "ci_high": "ci.ub", "q": "Q", "tau2": "tau2", "i2": "I2",
                 "h2": "H2"}

# library(metafor)
# dat <- escalc(measure="RR", ai=tpos, bi=tneg, ci=cpos, di=cneg, data=dat.bcg)
# x <- unclass(cumul(rma(yi, vi, data=dat, test="knha", control=list(threshold=1e-12)),
#                    order=dat$year))
BCG_CUMUL_KNHA_REML = {
    "estimate": [-0.88931133392, -1.32500344224, -0.972079931813, -1.0010961745, -1.10142578521,
                 -0.973463894382, -0.901251100273, -0.788565503719, -0.865607438786,
                 -0.785210367857, -0.708205992371, -0.794767604516, -0.714532342158],
    "se": [0.570600354893, 0.336820105221, 0.227561768179, 0.185630354866, 0.160915970046,
           0.174460306014, 0.205112554308, 0.205301444549, 0.203327907785, 0.187298331474,
           0.185569902873, 0.182295106551, 0.180791744093],
    "tval": [-1.55855376937, -3.93386089995, -4.27171901322, -5.39295512967, -6.84472638045,
             -5.57985891818, -4.39393436113, -3.8410129332, -4.25719935949, -4.19229771924,
             -3.81638391466, -4.3597857318, -3.95223988652],
    "pvals": [0.119102032292, 0.158474192846, 0.0506724592393, 0.0124935317658,
              0.00238409399386, 0.00254834410958, 0.00459839275829, 0.00636617059225,
              0.00277191039872, 0.00233315931937, 0.003393572185, 0.0011367003557,
              0.00192001509606],
    "ci.lb": [-2.00766747908, -5.60470865844, -1.95119919486, -1.59185481149, -1.54820014259,
              -1.42192838806, -1.40314344023, -1.27402627839, -1.33448243494, -1.20890862998,
              -1.12168150272, -1.19599642879, -1.10844371369],
    "ci.ub": [0.229044811236, 2.95470177395, 0.00703933122973, -0.410337537505,
              -0.654651427828, -0.524999400702, -0.399358760318, -0.303104729051,
              -0.396732442633, -0.361512105732, -0.29473048202, -0.39353878024,
              -0.320620970631],
    "Q": [0, 0.931479077449, 3.18791164119, 3.86137000488, 7.64153655127, 10.1853645892,
          13.2116048413, 19.5748888403, 22.8207789508, 34.1203009592, 39.6121545405,
          67.9858114991, 152.233008082],
    "tau2": [0, 0, 0.0872067928387, 0.0762623088688, 0.0857551704919, 0.104604181564,
             0.120459721859, 0.178027348267, 0.202335086897, 0.200545845816, 0.228091928169,
             0.273182929387, 0.313243258136],
    "I2": [0, 0, 40.7091050987, 33.9756362166, 48.4128268879, 60.0007890723, 59.9975614628,
           72.3903628269, 73.5064569179, 81.4028370143, 83.0108675202, 87.0313627396,
           92.2213845213],
    "H2": [1, 1, 1.68659960634, 1.51459240604, 1.9384663661, 2.50004931799, 2.49984760071,
           3.62192372805, 3.77450459118, 5.37716425225, 5.88611573421, 7.71091040576,
           12.8557582353],
}

# x <- unclass(cumul(rma(yi, vi, data=dat, test="knha", method="DL"), order=dat$year))
BCG_CUMUL_KNHA_DL = {
    "estimate": [-0.88931133392, -1.32500344224, -0.961535321868, -0.952394742615,
                 -1.09932228716, -0.953994240734, -0.897733365876, -0.78193644937,
                 -0.85313341625, -0.764461261121, -0.688123065938, -0.790086599854,
                 -0.714117222073],
    "se": [0.570600354893, 0.336820105221, 0.22323752826, 0.171925639675, 0.160867437556,
           0.170976708491, 0.199806874568, 0.198696089006, 0.197279680753, 0.180490718739,
           0.178683018123, 0.180066489906, 0.180696628336],
    "tval": [-1.55855376937, -3.93386089995, -4.30722974475, -5.53957364601, -6.83371541103,
             -5.57967368278, -4.49300539742, -3.93533890517, -4.32448700745, -4.23546023009,
             -3.851082622, -4.38774921566, -3.95202294947],
    "pvals": [0.119102032292, 0.158474192846, 0.0499016104047, 0.0115958411236,
              0.00239847914321, 0.00254871672193, 0.00413463029416, 0.00563693509974,
              0.00253071284309, 0.00218890166664, 0.00320655275194, 0.00108504754913,
              0.00192076676705],
    "ci.lb": [-2.00766747908, -5.60470865844, -1.92204888222, -1.49953885938, -1.54596189675,
              -1.3935038619, -1.3866431752, -1.25177804013, -1.30806117586, -1.17275963334,
              -1.08625364081, -1.18641027197, -1.10782135417],
    "ci.ub": [0.229044811236, 2.95470177395, -0.00102176151592, -0.40525062585,
              -0.652682677573, -0.514484619571, -0.408823556555, -0.312094858609,
              -0.398205656642, -0.356162888907, -0.289992491069, -0.39376292774,
              -0.320413089978],
    "Q": [0, 0.931479077449, 3.18791164119, 3.86137000488, 7.64153655127, 10.1853645892,
          13.2116048413, 19.5748888403, 22.8207789508, 34.1203009592, 39.6121545405,
          67.9858114991, 152.233008082],
    "tau2": [0, 0, 0.0754398658604, 0.0425515188278, 0.0831890729084, 0.0723190647751,
             0.0965329091796, 0.121975549645, 0.135103560759, 0.127880155398, 0.138234413464,
             0.210885232575, 0.308760262862],
    "I2": [0, 0, 37.2630039629, 22.3073676906, 47.6545067453, 50.9099555918, 54.5853810185,
           64.2398991018, 64.9442290412, 73.622741456, 74.7552231986, 83.8201534152,
           92.1173468546],
    "H2": [1, 1, 1.5939558206, 1.28712333496, 1.91038413782, 2.03707291785, 2.20193414021,
           2.79641269147, 2.85259736885, 3.79114455103, 3.96121545405, 6.1805283181,
           12.6860840069],
}

# dat.molloy2014 (16 studies, a dataset the rest of the suite does not use; years tied):
# m <- escalc(measure="ZCOR", ri=ri, ni=ni, data=dat.molloy2014)
# sprintf("%.17g", m$yi); sprintf("%.17g", m$vi); m$year
MOLLOY = pd.DataFrame({
    "year": [2009, 2011, 2010, 1999, 1995, 2004, 2005, 2007, 2006, 2011, 1997, 2007, 2003, 2012,
             2004, 1997],
    "yi": [0.1892266425309288, 0.16343991846488676, 0.35409252896224302, 0.33164710870513214,
           0.27686382265510007, 0.0, 0.17682002012178921, 0.050041729278491313,
           0.26610840687365411, 0.010000333353334718, -0.090244187856146837,
           0.38842309971829619, 0.0, 0.15114043593646675, 0.24477411265935289,
           0.040021353836768282],
    "vi": [0.009433962264150943, 0.0013404825737265416, 0.019230769230769232,
           0.0096153846153846159, 0.014492753623188406, 0.016129032258064516,
           0.0058479532163742687, 0.0030959752321981426, 0.018181818181818181,
           0.0013020833333333333, 0.018867924528301886, 0.011363636363636364,
           0.0088495575221238937, 0.0018726591760299626, 0.0064516129032258064,
           0.016129032258064516]})

# x <- unclass(cumul(rma(yi, vi, data=m, test="knha", control=list(threshold=1e-12)),
#                    order=m$year))
MOLLOY_CUMUL_KNHA_REML = {
    "estimate": [0.276863822655, 0.0992687869396, 0.0829417339871, 0.153243823062,
                 0.119255053064, 0.101641552978, 0.128084883805, 0.138337805061,
                 0.150066887065, 0.134107723406, 0.156234094678, 0.159021899693,
                 0.169767568701, 0.168086779739, 0.151374009403, 0.149917148518],
    "se": [0.120385853086, 0.183457252589, 0.107747083706, 0.0988321769921, 0.081826225026,
           0.070051462565, 0.0620829152891, 0.0527833648176, 0.0487054162178,
           0.0437275652735, 0.046083182889, 0.0418578541463, 0.0410513755229,
           0.0362891415028, 0.0360852974522, 0.0327697722478],
    "tval": [2.29980363605, 0.541100368281, 0.769781706699, 1.55054586194, 1.45741848687,
             1.45095547268, 2.06312611462, 2.6208599156, 3.08111291758, 3.06689207522,
             3.39026267032, 3.79909345416, 4.13549038341, 4.63187534282, 4.19489432237,
             4.57486086214],
    "pvals": [0.0214593473741, 0.68424626093, 0.521917492669, 0.21879540908, 0.218736053155,
              0.206495288802, 0.0846892347476, 0.0343661966205, 0.0150914325841,
              0.01342124407, 0.0068827962012, 0.00294790673367, 0.00138189712586,
              0.000469704267298, 0.000899427488198, 0.00036472906075],
    "ci.lb": [0.0409118863589, -2.23177662479, -0.380656549843, -0.16128427345,
              -0.107930968886, -0.0784314642511, -0.0238265373699, 0.0135249805325,
              0.0377519958598, 0.0351890984106, 0.05355436446, 0.0668933838832,
              0.0803243050362, 0.0896888558662, 0.0739787437981, 0.0800700323519],
    "ci.ub": [0.512815758951, 2.43031419867, 0.546540017817, 0.467771919573, 0.346441075014,
              0.281714570208, 0.279996304979, 0.263150629589, 0.26238177827, 0.233026348401,
              0.258913824896, 0.251150415502, 0.259210832366, 0.246484703611,
              0.228769275008, 0.219764264683],
    "Q": [0, 4.03973476707, 4.28575974093, 8.12355465454, 10.6978751321, 11.5764673538,
          13.6612731972, 13.8021342969, 14.4784426819, 17.2462694832, 22.7633971015,
          22.9379131045, 25.0188203555, 25.0345474822, 37.7338624091, 38.1595154236],
    "tau2": [0, 0.050703806615, 0.0187024881667, 0.0244598795968, 0.0207916473357,
             0.0169192688783, 0.0149453728849, 0.0103616513998, 0.00887535358785,
             0.00822394004978, 0.0119580948415, 0.0098496087297, 0.0101883982036,
             0.00725582946047, 0.00998430655926, 0.0081095608243],
    "I2": [0, 75.2458996033, 53.2829659052, 63.2192853454, 61.9871958203, 56.1948901489,
           56.255070128, 49.8772307169, 44.7909816313, 47.6491767266, 56.5841553219,
           51.8060405622, 51.6160876129, 50.0994472108, 63.6924023072, 61.7296546892],
    "H2": [1, 4.03973476707, 2.1405468463, 2.7188161225, 2.63069253, 2.28283869941,
           2.28597920473, 1.99510125698, 1.81129827979, 1.91018963499, 2.30330656334,
           2.07494883522, 2.06680268433, 2.003985816, 2.75424446548, 2.61298922672],
}


def _check_cumul(out, ref):
    assert out["k"].tolist() == list(range(1, len(out) + 1))
    for ours, theirs in CUMUL_COLUMNS.items():
        np.testing.assert_allclose(out[ours], ref[theirs], rtol=0, atol=ATOL, err_msg=ours)


@pytest.mark.parametrize(("method", "ref"), [("REML", BCG_CUMUL_KNHA_REML),
                                             ("DL", BCG_CUMUL_KNHA_DL)])
def test_cumulative_knha_every_row_equals_metafor_bcg(method, ref):
    res = meta_analysis(Y, V, tau2_method=method, interval="knha")
    _check_cumul(cumulative(res, order=BCG["year"]), ref)


def test_cumulative_knha_every_row_equals_metafor_molloy_with_tied_years():
    res = meta_analysis(MOLLOY["yi"], MOLLOY["vi"], interval="knha")
    _check_cumul(cumulative(res, order=MOLLOY["year"]), MOLLOY_CUMUL_KNHA_REML)


def test_cumulative_first_row_is_the_studys_z_interval_whatever_the_interval():
    # the definition: one study, its estimate +- z * sqrt(v), two-sided normal p-value
    from scipy import stats

    i = int(np.argmin(BCG["year"]))
    z = stats.norm.ppf(0.95)
    for interval in ("wald", "knha"):
        for method in ("FE", "DL", "REML"):
            res = meta_analysis(Y, V, tau2_method=method, interval=interval)
            first = cumulative(res, order=BCG["year"], confidence_level=0.90).iloc[0]
            assert first["ci_low"] == pytest.approx(Y[i] - z * np.sqrt(V[i]), rel=1e-12)
            assert first["ci_high"] == pytest.approx(Y[i] + z * np.sqrt(V[i]), rel=1e-12)
            assert first["pvalue"] == pytest.approx(
                2 * stats.norm.sf(abs(Y[i]) / np.sqrt(V[i])), rel=1e-12)
    # from the second row on the Knapp-Hartung rows use t(k - 1): wider than z at equal SE
    knha = cumulative(meta_analysis(Y, V, interval="knha"), order=BCG["year"]).iloc[1]
    t1 = stats.t.ppf(0.975, 1)
    assert knha["ci_high"] - knha["estimate"] == pytest.approx(t1 * knha["se"], rel=1e-12)


def test_cumulative_first_row_z_also_with_the_knha_floor():
    res = meta_analysis(Y, V, interval="knha", knha_floor=True)
    first = cumulative(res).iloc[0]
    assert first["ci_high"] - first["estimate"] == pytest.approx(1.959963984540054 *
                                                                 np.sqrt(V[0]), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# moderators whose values look like numbers

# dat$x <- rep(c("11", "12", "108"), length.out=13)   # character; levels(factor(dat$x)) is
# dat$xn <- as.numeric(dat$x)                          # "108" "11" "12"
X_TEXT = np.array(["11", "12", "108"] * 5)[:13]
CTL = "control=list(threshold=1e-12)"


def _ref(estimate, se, pval, qm, qm_p, qe, tau2, se_tau2, r2):
    return dict(estimate=estimate, se=se, pval=pval, qm=qm, qm_p=qm_p, qe=qe, tau2=tau2,
                se_tau2=se_tau2, r2=r2)


METAREG_REFS = {
    # r <- rma(yi, vi, mods = ~ factor(x), data=dat, control=list(threshold=1e-12))
    # c(r$beta); r$se; r$pval; r$QM; r$QMp; r$QE; r$tau2; r$se.tau2; r$R2
    ("REML", "wald"): _ref([-0.606518443936, -0.455042263668, 0.185470504129],
                           [0.326123377098, 0.427900115662, 0.431754679951],
                           [0.0629163501016, 0.287586524002, 0.667505689638],
                           2.75414922319, 0.252315595584, 48.4955151878, 0.269143009521,
                           0.164702926518, 14.0785946609),
    # r <- rma(yi, vi, mods = ~ factor(x), data=dat, test="knha", control=list(threshold=1e-12))
    ("REML", "knha"): _ref([-0.606518443936, -0.455042263668, 0.185470504129],
                           [0.338760707174, 0.444481309717, 0.448485238954],
                           [0.103658943497, 0.330076100617, 0.68793363242],
                           1.27624857956, 0.320884944625, 48.4955151878, 0.269143009521,
                           0.164702926518, 14.0785946609),
    # r <- rma(yi, vi, mods = ~ factor(x), data=dat, method="DL")
    ("DL", "wald"): _ref([-0.62308318389, -0.440559347453, 0.24619284267],
                         [0.265372954047, 0.349428419495, 0.346610185296],
                         [0.0188769106905, 0.207380917782, 0.477525940044],
                         4.73708319155, 0.0936171584265, 48.4955151878, 0.153698468762,
                         0.130200306021, 50.2207740929),
}
# r <- rma(yi, vi, mods = ~ factor(xn), data=dat, control=list(threshold=1e-12))
# (the numbers as a factor: levels 11, 12, 108)
NUMERIC_AS_FACTOR = _ref([-1.0615607076, 0.640512767797, 0.455042263668],
                         [0.277023558374, 0.395976891326, 0.427900115662],
                         [0.000127093741444, 0.105759422836, 0.287586524002],
                         2.75414922319, 0.252315595584, 48.4955151878, 0.269143009521,
                         0.164702926518, 14.0785946609)
# r <- rma(yi, vi, mods = ~ xn, data=dat, control=list(threshold=1e-12))
NUMERIC_SLOPE = _ref([-0.784068359447, 0.0017549145084], [0.2510756072, 0.00438813733205],
                     [0.00179116520046, 0.68921365724], 0.159937943345, 0.68921365724,
                     129.91057355, 0.352420020252, 0.193380008718, 0.0)


def _check_fit(fit, ref):
    np.testing.assert_allclose(fit.beta, ref["estimate"], rtol=0, atol=ATOL)
    frame = fit.to_frame()
    np.testing.assert_allclose(frame["se"], ref["se"], rtol=0, atol=ATOL)
    np.testing.assert_allclose(frame["pvalue"], ref["pval"], rtol=0, atol=ATOL)
    assert fit.qm == pytest.approx(ref["qm"], abs=ATOL)
    assert fit.qm_test.pvalue == pytest.approx(ref["qm_p"], abs=ATOL)
    assert fit.qe == pytest.approx(ref["qe"], abs=ATOL)
    assert fit.tau2 == pytest.approx(ref["tau2"], abs=ATOL)
    assert fit.se_tau2 == pytest.approx(ref["se_tau2"], abs=ATOL)
    assert fit.r2 == pytest.approx(ref["r2"], abs=1e-5)  # a percentage


@pytest.mark.parametrize(("method", "interval"), sorted(METAREG_REFS))
@pytest.mark.parametrize("dtype", [object, "string"])
def test_text_moderator_that_looks_numeric_is_a_factor_as_metafor(method, interval, dtype):
    mods = pd.DataFrame({"x": pd.Series(X_TEXT, dtype=dtype)})
    fit = meta_regression(Y, V, moderators=mods, tau2_method=method, interval=interval)
    # R's factor() of text: levels sorted as text, "108" first (the reference)
    assert fit.names == ("intercept", "x[11]", "x[12]")
    assert fit.terms == {"x": (1, 2)}
    _check_fit(fit, METAREG_REFS[method, interval])


def test_numeric_column_stays_a_slope_and_a_categorical_is_a_factor():
    xn = X_TEXT.astype(int)
    for column in (xn, xn.astype(float), pd.Series(list(xn), dtype=object)):
        # numbers are a slope, also when an object column holds them as numbers (not text)
        slope = meta_regression(Y, V, moderators=pd.DataFrame({"x": column}))
        assert slope.names == ("intercept", "x")
        _check_fit(slope, NUMERIC_SLOPE)
    as_factor = meta_regression(Y, V, moderators=pd.DataFrame({"x": xn}).astype("category"))
    assert as_factor.names == ("intercept", "x[12]", "x[108]")
    _check_fit(as_factor, NUMERIC_AS_FACTOR)
    # a formula's C(x) is the same model
    formula = meta_regression(Y, V, moderators="~ C(x)", data=pd.DataFrame({"x": xn}))
    np.testing.assert_allclose(formula.beta, NUMERIC_AS_FACTOR["estimate"], rtol=0, atol=ATOL)


def test_factor_predictions_take_the_levels_as_text_or_numbers():
    fit = meta_regression(Y, V, moderators=pd.DataFrame({"x": X_TEXT}))
    est = NUMERIC_AS_FACTOR["estimate"]  # intercept = level 11, then 12 and 108 offsets
    want = [est[0], est[0] + est[1], est[0] + est[2]]
    for new in ({"x": ["11", "12", "108"]}, {"x": [11, 12, 108]}):
        np.testing.assert_allclose(fit.predict(new)["estimate"], want, atol=ATOL)


# ---------------------------------------------------------------------------------------------
# the command line: a CSV column of numbers is numeric; --factor makes it a factor

@pytest.fixture
def bcg_x_csv(tmp_path):
    path = tmp_path / "bcg_x.csv"
    BCG.assign(x=X_TEXT, site=[f"s{v}" for v in X_TEXT]).to_csv(path, index=False)
    return path


def _coefficients(cli, *args):
    import json

    code, out, err = cli("--format", "json", "meta", *args)
    assert code == 0, err
    data = json.loads(out)
    return pd.DataFrame(data["meta_regression"]), data["meta_regression_summary"][0]


def test_cli_csv_numbers_are_a_slope_and_factor_makes_them_a_factor(cli, bcg_x_csv):
    coef, summary = _coefficients(cli, bcg_x_csv, "--moderator", "x")
    assert coef["term"].tolist() == ["intercept", "x"]
    np.testing.assert_allclose(coef["estimate"], NUMERIC_SLOPE["estimate"], atol=ATOL)
    assert summary["qm"] == pytest.approx(NUMERIC_SLOPE["qm"], abs=ATOL)
    for args in (("--factor", "x"), ("--moderator", "x", "--factor", "x")):
        coef, summary = _coefficients(cli, bcg_x_csv, *args)
        assert coef["term"].tolist() == ["intercept", "x[12]", "x[108]"]
        np.testing.assert_allclose(coef["estimate"], NUMERIC_AS_FACTOR["estimate"], atol=ATOL)
        np.testing.assert_allclose(coef["se"], NUMERIC_AS_FACTOR["se"], atol=ATOL)
        assert summary["qm"] == pytest.approx(NUMERIC_AS_FACTOR["qm"], abs=ATOL)
    # a text column is a factor without the flag
    coef, _ = _coefficients(cli, bcg_x_csv, "--moderator", "site")
    assert coef["term"].tolist() == ["intercept", "site[s11]", "site[s12]"]
    np.testing.assert_allclose(coef["estimate"], METAREG_REFS["REML", "wald"]["estimate"],
                               atol=ATOL)


def test_cli_factor_errors_and_files(cli, bcg_x_csv, tmp_path):
    code, _, err = cli("meta", bcg_x_csv, "--factor", "nosuch")
    assert code == 2 and "`--factor`: no column 'nosuch'" in err
    code, _, err = cli("meta", bcg_x_csv, "--factor", "x,")
    assert code == 2 and "`--factor`: empty column name" in err
    out_dir = tmp_path / "out"
    code, _, err = cli("meta", bcg_x_csv, "--factor", "x", "--out", out_dir)
    assert code == 0, err
    # no numeric moderator: no bubble plot, and the message does not claim one
    assert sorted(p.name for p in out_dir.iterdir()) == ["forest.svg", "meta.csv",
                                                          "metareg.csv"]
    assert "bubble.svg" not in err

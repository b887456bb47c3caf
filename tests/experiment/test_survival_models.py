"""LifelinesModel and survival_probabilities against lifelines, scikit-survival and R.

References: lifelines 0.30 (its own predictions and C-index), scikit-survival 0.28 (Cox
coefficients, survival functions, integrated Brier score) and R's survival 3.5-3 on the Rossi
recidivism data (432 released prisoners, weeks to re-arrest; lifelines' ``load_rossi`` is
carData's ``Rossi`` with its factors coded 0/1 — checked in R, see ``R_ROSSI``).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("lifelines")
pytest.importorskip("sksurv")

from lifelines import (  # noqa: E402
    AalenAdditiveFitter,
    CoxPHFitter,
    KaplanMeierFitter,
    LogLogisticAFTFitter,
    LogNormalAFTFitter,
    WeibullAFTFitter,
)
from lifelines.datasets import load_rossi  # noqa: E402
from sksurv.util import Surv  # noqa: E402

from replikit.errors import DataError, ParameterError, ParameterTypeError  # noqa: E402
from replikit.experiment import (  # noqa: E402
    LifelinesModel,
    StepFunction,
    concordance_index,
    integrated_brier_score,
    survival_probabilities,
)

COVARIATES = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]

# R 4, survival 3.5-3 (carData 3.0):
#   library(survival)
#   d <- with(carData::Rossi, data.frame(week = week, arrest = arrest,
#     fin = as.numeric(fin == "yes"), age = age, race = as.numeric(race == "black"),
#     wexp = as.numeric(wexp == "yes"), mar = as.numeric(mar == "married"),
#     paro = as.numeric(paro == "yes"), prio = prio))
#   # all.equal(d, lifelines' load_rossi()[, names(d)]) is TRUE
#   fit <- coxph(Surv(week, arrest) ~ fin + age + race + wexp + mar + paro + prio, data = d,
#                ties = "efron")
#   coef(fit)
#   predict(fit, type = "lp", reference = "zero")[1:5]                # x'beta, uncentred
#   summary(survfit(fit, newdata = d[1:3, ], ctype = 1),              # Breslow's baseline
#           times = c(5, 10.5, 20, 40, 52))$surv
R_ROSSI = {
    "coef": [-0.3794221664858867, -0.0574377426840623, 0.3138997878424986,
             -0.1497956976665371, -0.4337038779373086, -0.0848710825003947,
             0.0914970809852960],
    "lp_zero": [-1.0472991041716904, -0.0728740150886498, -0.1365218383552680,
                -1.9634640374957655, -1.0514926482082276],
    "times": [5, 10.5, 20, 40, 52],
    "surv": [[0.988085191411732, 0.968739461018904, 0.970638539681722],  # a row per time,
             [0.964222577519789, 0.907978315564830, 0.913399428795650],  # a column per
             [0.902910168259770, 0.762910962961520, 0.775748703175072],  # subject 1-3
             [0.789848476676007, 0.535214116096849, 0.556247149463844],
             [0.715699317203610, 0.412180926779812, 0.435334756652986]],
}


@pytest.fixture(scope="module")
def rossi():
    df = load_rossi()
    X = df[COVARIATES]
    y = Surv.from_arrays(event=df["arrest"].to_numpy() == 1, time=df["week"].to_numpy(float))
    return df, X, y


@pytest.fixture(scope="module")
def cox(rossi):
    _, X, y = rossi
    return LifelinesModel(CoxPHFitter()).fit(X, y)


def _lifelines_cox(df):
    return CoxPHFitter().fit(df[[*COVARIATES, "week", "arrest"]], "week", "arrest")


AFT = (WeibullAFTFitter, LogNormalAFTFitter, LogLogisticAFTFitter)


@pytest.fixture(scope="module")
def aft(rossi):
    """Each AFT fitter as a LifelinesModel and fitted by lifelines itself (fitted once)."""
    df, X, y = rossi
    return {make.__name__: (LifelinesModel(make()).fit(X, y),
                            make().fit(df[[*COVARIATES, "week", "arrest"]], "week", "arrest"))
            for make in AFT}


# -- scikit-learn compatibility --------------------------------------------------------------

def test_clone_get_params_round_trip(rossi):
    from sklearn.base import clone

    _, X, y = rossi
    fitter = CoxPHFitter(penalizer=0.1)
    model = LifelinesModel(fitter, prediction="expectation", fit_params={"robust": True})
    params = model.get_params()
    assert params == {"fitter": fitter, "prediction": "expectation",
                      "fit_params": {"robust": True}}
    assert model.get_params(deep=True).keys() == params.keys()
    twin = clone(model)
    assert twin.fitter is not fitter and twin.fitter.penalizer == 0.1
    assert twin.get_params()["prediction"] == "expectation"
    assert twin.set_params(prediction="risk") is twin and twin.prediction == "risk"
    assert model.prediction == "expectation"
    model.fit(X, y)
    assert not hasattr(fitter, "params_")  # the user's fitter is never fitted
    assert model.fitter_ is not fitter and model.fitter_.penalizer == 0.1
    assert "LifelinesModel" in repr(model)
    again = pickle.loads(pickle.dumps(model))  # the runner's process backends pickle models
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert model.n_features_in_ == 7
    assert model.feature_names_in_.tolist() == COVARIATES
    np.testing.assert_array_equal(model.unique_times_, np.unique(y["time"]))
    plain = LifelinesModel(CoxPHFitter()).fit(X.to_numpy(), y)
    assert not hasattr(plain, "feature_names_in_")
    assert plain.fitter_.params_.index.tolist() == [f"x{j}" for j in range(7)]


def test_score_is_harrells_c_and_serves_cross_val_score(rossi, cox):
    from sklearn.model_selection import KFold, cross_val_score

    _, X, y = rossi
    assert cox.score(X, y) == concordance_index(y, cox.predict(X)).estimate
    scores = cross_val_score(LifelinesModel(CoxPHFitter()), X, y,
                             cv=KFold(3, shuffle=True, random_state=0))
    assert scores.shape == (3,) and np.all((0.55 < scores) & (scores < 0.75))


# -- risk scores -----------------------------------------------------------------------------

def test_cox_risk_is_lifelines_log_partial_hazard(rossi, cox):
    df, X, y = rossi
    own = _lifelines_cox(df)
    risk = cox.predict(X)
    np.testing.assert_allclose(risk, own.predict_log_partial_hazard(X).to_numpy(),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.exp(risk), own.predict_partial_hazard(X).to_numpy(),
                               rtol=1e-10)
    # an array X gives the same numbers (columns x0..x6); so does one row
    arr = LifelinesModel(CoxPHFitter()).fit(X.to_numpy(), y)
    np.testing.assert_allclose(arr.predict(X.to_numpy()), risk, rtol=0, atol=1e-10)
    np.testing.assert_allclose(cox.predict(X.iloc[[4]]), risk[[4]], rtol=0, atol=1e-12)


def test_cox_c_index_sign_convention_matches_lifelines(rossi, cox):
    from lifelines.utils import concordance_index as lifelines_c

    df, X, _ = rossi
    risk = cox.predict(X)
    # lifelines scores survival (larger: later event), replikit and scikit-survival risk
    ours = concordance_index(df["week"], df["arrest"], risk).estimate
    theirs = lifelines_c(df["week"], -risk, df["arrest"])
    assert ours == pytest.approx(theirs, abs=1e-12)
    assert ours == pytest.approx(cox.fitter_.concordance_index_, abs=1e-12)
    assert ours == pytest.approx(0.64033, abs=1e-5) and ours > 0.5  # risk points the right way


def test_cox_coefficients_agree_with_scikit_survival_and_r(rossi, cox):
    from sksurv.linear_model import CoxPHSurvivalAnalysis

    _, X, y = rossi
    ours = cox.fitter_.params_.to_numpy()
    sk = CoxPHSurvivalAnalysis(ties="efron").fit(X.to_numpy(float), y).coef_
    np.testing.assert_allclose(ours, sk, rtol=0, atol=1e-7)  # observed 4e-9
    np.testing.assert_allclose(ours, R_ROSSI["coef"], rtol=0, atol=1e-7)
    # R's x'beta, centred at the training means as lifelines centres: the risk
    centred = np.array(R_ROSSI["lp_zero"]) - X.to_numpy().mean(axis=0) @ R_ROSSI["coef"]
    np.testing.assert_allclose(cox.predict(X.iloc[:5]), centred, rtol=0, atol=1e-7)


@pytest.mark.parametrize("name", [f.__name__ for f in AFT])
def test_aft_risk_is_minus_log_median(rossi, aft, name):
    _, X, y = rossi
    model, own = aft[name]
    median = own.predict_median(X).to_numpy()
    np.testing.assert_allclose(model.predict(X), -np.log(median), rtol=1e-10)
    if name == "WeibullAFTFitter":  # the other kinds of prediction
        np.testing.assert_allclose(
            LifelinesModel(WeibullAFTFitter(), prediction="median").fit(X, y).predict(X),
            -median, rtol=1e-10)
        np.testing.assert_allclose(
            LifelinesModel(WeibullAFTFitter(), prediction="expectation").fit(X, y).predict(X),
            -own.predict_expectation(X).to_numpy(), rtol=1e-10)


def test_ph_risk_without_partial_hazard_is_the_linear_predictor_up_to_a_constant(rossi):
    _, X, y = rossi
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lifelines' spline baseline warns about its knots
        model = LifelinesModel(CoxPHFitter(baseline_estimation_method="spline",
                                           n_baseline_knots=3)).fit(X, y)
    beta = model.fitter_.params_.loc["beta_"].reindex(COVARIATES).to_numpy()
    gap = model.predict(X) - X.to_numpy() @ beta  # log H0(t_ref): one constant
    assert np.ptp(gap) < 1e-8


def test_other_fitters_risk_is_minus_the_mean_survival_time(rossi):
    df, X, y = rossi
    model = LifelinesModel(AalenAdditiveFitter()).fit(X, y)
    own = AalenAdditiveFitter().fit(df[[*COVARIATES, "week", "arrest"]], "week", "arrest")
    np.testing.assert_allclose(model.predict(X), -own.predict_expectation(X).to_numpy(),
                               rtol=1e-10)


def test_column_names_never_collide_with_time_and_event(rossi, cox):
    _, X, y = rossi
    renamed = X.rename(columns={"fin": "time", "age": "event", "race": "_time_"})
    model = LifelinesModel(CoxPHFitter()).fit(renamed, y)
    np.testing.assert_allclose(model.predict(renamed), cox.predict(X), rtol=0, atol=1e-10)
    # columns in another order are matched by name
    np.testing.assert_allclose(model.predict(renamed[renamed.columns[::-1]]),
                               cox.predict(X), rtol=0, atol=1e-10)


def test_strata_keep_the_rows_in_order(rossi):
    df, X, y = rossi
    model = LifelinesModel(CoxPHFitter(), fit_params={"strata": ["wexp"]}).fit(X, y)
    own = CoxPHFitter().fit(df[[*COVARIATES, "week", "arrest"]], "week", "arrest",
                            strata=["wexp"])
    np.testing.assert_allclose(model.predict(X), own.predict_log_partial_hazard(X).to_numpy(),
                               rtol=0, atol=1e-10)
    grid = model.unique_times_
    theirs = own.predict_survival_function(X, times=grid)[X.index].to_numpy().T
    np.testing.assert_allclose(survival_probabilities(model, X, grid), theirs, rtol=0,
                               atol=1e-10)


# -- survival probabilities ------------------------------------------------------------------

def test_cox_survival_agrees_with_r_survfit(rossi, cox):
    _, X, _ = rossi
    ours = survival_probabilities(cox, X.iloc[:3], R_ROSSI["times"])
    np.testing.assert_allclose(ours, np.array(R_ROSSI["surv"]).T, rtol=0, atol=1e-7)


def test_cox_survival_agrees_with_lifelines_as_a_step_function(rossi, cox):
    df, X, _ = rossi
    own = _lifelines_cox(df)
    grid = cox.unique_times_  # lifelines' timeline: every training time
    np.testing.assert_array_equal(grid, own.baseline_cumulative_hazard_.index.to_numpy())
    theirs = own.predict_survival_function(X, times=grid).to_numpy().T
    ours = survival_probabilities(cox, X, grid)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)
    np.testing.assert_allclose(cox.predict_survival_function(X, return_array=True), ours,
                               rtol=0, atol=0)
    # between training times the step keeps the earlier value (lifelines interpolates);
    # before the first one S = 1, after the last one it keeps the last value
    between = survival_probabilities(cox, X, [0.5, 10.5, 30.25, 52.0, 80.0])
    np.testing.assert_array_equal(between[:, 0], 1.0)
    np.testing.assert_allclose(between[:, 1:],
                               own.predict_survival_function(X, times=[10, 30, 52, 52])
                               .to_numpy().T, rtol=0, atol=1e-10)
    curves = cox.predict_survival_function(X.iloc[:4])
    assert all(isinstance(f, StepFunction) for f in curves)
    np.testing.assert_allclose(np.vstack([f([0.5, 10.5, 30.25, 52.0, 80.0]) for f in curves]),
                               between[:4], rtol=0, atol=0)


@pytest.mark.parametrize("name", [f.__name__ for f in AFT])
def test_parametric_survival_agrees_with_lifelines_at_any_time(rossi, aft, name):
    _, X, _ = rossi
    model, own = aft[name]
    times = np.array([0.3, 1.0, 7.7, 25.0, 52.0, 70.5])
    theirs = own.predict_survival_function(X, times=times).to_numpy().T
    np.testing.assert_allclose(survival_probabilities(model, X, times), theirs, rtol=0,
                               atol=1e-10)
    np.testing.assert_allclose(survival_probabilities(model, X, times[::-1]), theirs[:, ::-1],
                               rtol=0, atol=1e-10)  # any order of times
    curves = model.predict_survival_function(X.iloc[:3])
    np.testing.assert_allclose(np.vstack([f(times) for f in curves]), theirs[:3], rtol=0,
                               atol=1e-10)
    assert curves[0](7.7) == pytest.approx(theirs[0, 2], abs=1e-10)
    np.testing.assert_allclose(np.vstack([f.y for f in curves]),
                               model.predict_survival_function(X.iloc[:3], return_array=True),
                               rtol=0, atol=0)


def _sksurv_models():
    from sksurv.ensemble import (
        ComponentwiseGradientBoostingSurvivalAnalysis,
        GradientBoostingSurvivalAnalysis,
        RandomSurvivalForest,
    )
    from sksurv.linear_model import CoxnetSurvivalAnalysis, CoxPHSurvivalAnalysis

    return {
        "CoxPHSurvivalAnalysis": CoxPHSurvivalAnalysis(ties="efron"),
        "CoxnetSurvivalAnalysis": CoxnetSurvivalAnalysis(fit_baseline_model=True,
                                                         n_alphas=20),
        "RandomSurvivalForest": RandomSurvivalForest(n_estimators=10, min_samples_leaf=15,
                                                     random_state=0),
        "GradientBoostingSurvivalAnalysis": GradientBoostingSurvivalAnalysis(
            n_estimators=20, max_depth=2, random_state=0),
        "ComponentwiseGradientBoostingSurvivalAnalysis":
            ComponentwiseGradientBoostingSurvivalAnalysis(n_estimators=20, random_state=0),
    }


@pytest.mark.parametrize("name", list(_sksurv_models()))
def test_survival_probabilities_agree_with_scikit_survival(rossi, name):
    _, X, y = rossi
    Xa = X.to_numpy(float)
    model = _sksurv_models()[name].fit(Xa[:300], y[:300])
    test = Xa[300:]
    grid = model.unique_times_
    times = np.concatenate([grid, (grid[:-1] + grid[1:]) / 2])  # on and between the steps
    theirs = np.vstack([f(times) for f in model.predict_survival_function(test)])
    np.testing.assert_allclose(survival_probabilities(model, test, times), theirs, rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(survival_probabilities(model, test, grid),
                               model.predict_survival_function(test, return_array=True),
                               rtol=0, atol=1e-12)
    outside = survival_probabilities(model, test, [grid[0] / 2, grid[-1] * 2])
    np.testing.assert_array_equal(outside[:, 0], 1.0)  # scikit-survival: its first value
    np.testing.assert_allclose(outside[:, 1], theirs[:, grid.size - 1], rtol=0, atol=1e-12)


def test_a_pipeline_is_evaluated_through_its_last_step(rossi):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    _, X, y = rossi
    pipe = make_pipeline(StandardScaler(), LifelinesModel(WeibullAFTFitter())).fit(X, y)
    times = [5.0, 30.0]
    direct = survival_probabilities(pipe[-1], pipe[0].transform(X), times)
    np.testing.assert_allclose(survival_probabilities(pipe, X, times), direct, rtol=0, atol=0)


def test_integrated_brier_score_of_a_lifelines_model_matches_scikit_survival(rossi):
    from sksurv.linear_model import CoxPHSurvivalAnalysis
    from sksurv.metrics import integrated_brier_score as sk_ibs

    _, X, y = rossi
    train, test = np.arange(432) % 3 != 0, np.arange(432) % 3 == 0
    times = np.arange(4.0, 50.0, 3.0)  # within the test follow-up
    ibs = {}
    for fitter in (CoxPHFitter(), CoxPHFitter(penalizer=0.1), WeibullAFTFitter()):
        model = LifelinesModel(fitter).fit(X[train], y[train])
        probs = survival_probabilities(model, X[test], times)
        ours = integrated_brier_score(y[train], y[test], probs, times)
        assert ours == pytest.approx(sk_ibs(y[train], y[test], probs, times), abs=1e-12)
        ibs[(type(fitter).__name__, fitter.penalizer)] = ours
    # lifelines' and scikit-survival's Cox models, fitted to the same precision, predict the
    # same survival
    sk = CoxPHSurvivalAnalysis(ties="efron", tol=1e-12).fit(X[train].to_numpy(float), y[train])
    sk_probs = survival_probabilities(sk, X[test].to_numpy(float), times)
    cox = LifelinesModel(CoxPHFitter(),  # lifelines' default precision: coefficients 1e-5 apart
                         fit_params={"fit_options": {"precision": 1e-12}}).fit(X[train], y[train])
    np.testing.assert_allclose(survival_probabilities(cox, X[test], times), sk_probs, rtol=0,
                               atol=1e-9)
    assert all(0.05 < v < 0.15 for v in ibs.values())


# -- errors ----------------------------------------------------------------------------------

def test_fitters_that_are_not_lifelines_regression_fitters_are_refused(rossi):
    from sklearn.linear_model import LinearRegression

    _, X, y = rossi
    with pytest.raises(ParameterTypeError, match=r"`fitter`.*not a lifelines fitter.*"
                                                 "scikit-survival"):
        LifelinesModel(LinearRegression()).fit(X, y)
    with pytest.raises(ParameterTypeError, match=r"`fitter`.*not a lifelines fitter"):
        LifelinesModel("cox").fit(X, y)
    with pytest.raises(ParameterTypeError, match=r"`fitter`.*the class CoxPHFitter"):
        LifelinesModel(CoxPHFitter).fit(X, y)
    with pytest.raises(ParameterTypeError, match=r"`fitter`: KaplanMeierFitter has no "
                                                 r"fit\(df, duration_col, event_col\)"):
        LifelinesModel(KaplanMeierFitter()).fit(X, y)


def test_bad_parameters_are_named(rossi):
    _, X, y = rossi
    with pytest.raises(ParameterError, match="`prediction` must be one of"):
        LifelinesModel(CoxPHFitter(), prediction="hazard").fit(X, y)
    with pytest.raises(ParameterTypeError, match="`fit_params` must be a dict"):
        LifelinesModel(CoxPHFitter(), fit_params=[("robust", True)]).fit(X, y)
    with pytest.raises(ParameterError, match="`fit_params` must not set duration_col"):
        LifelinesModel(CoxPHFitter(), fit_params={"duration_col": "week"}).fit(X, y)
    with pytest.raises(ParameterError, match="`fit_params`: CoxPHFitter.fit has no argument"):
        LifelinesModel(CoxPHFitter(), fit_params={"robustt": True}).fit(X, y)
    with pytest.raises(DataError, match="`prediction`='median'.*infinite"):
        LifelinesModel(CoxPHFitter(), prediction="median").fit(X, y).predict(X)


def test_bad_data_is_named(rossi, cox):
    _, X, y = rossi
    with pytest.raises(DataError, match="`y` must be a survival target"):
        LifelinesModel(CoxPHFitter()).fit(X, y["time"])
    with pytest.raises(DataError, match="`y`: every subject is censored"):
        LifelinesModel(CoxPHFitter()).fit(X, (y["time"], np.zeros(432, bool)))
    with pytest.raises(DataError, match="`y` has 431 subjects but `X` has 432 rows"):
        LifelinesModel(CoxPHFitter()).fit(X, y[:431])
    holes = X.astype(float).copy()
    holes.iloc[3, 2] = np.nan
    with pytest.raises(DataError, match="`X` has 1 missing or infinite value.*row 3, column 2"):
        LifelinesModel(CoxPHFitter()).fit(holes, y)
    with pytest.raises(DataError, match="`X` has 1 missing"):
        cox.predict(holes)
    with pytest.raises(DataError, match="`X` has 6 features, but the model was fitted with 7"):
        cox.predict(X.iloc[:, :6])
    with pytest.raises(DataError, match="`X` has 6 features"):
        survival_probabilities(cox, X.iloc[:, :6].to_numpy(), [10.0])
    with pytest.raises(DataError, match="`X` has columns"):
        cox.predict(X.rename(columns={"fin": "financial_aid"}))
    with pytest.raises(DataError, match="`X` must hold numeric features; column"):
        LifelinesModel(CoxPHFitter()).fit(X.assign(fin=X["fin"].map({0: "no", 1: "yes"})), y)


def test_models_without_a_survival_function_are_named(rossi, cox):
    from sklearn.linear_model import LinearRegression
    from sksurv.linear_model import CoxnetSurvivalAnalysis, CoxPHSurvivalAnalysis
    from sksurv.svm import FastSurvivalSVM

    _, X, y = rossi
    Xa = X.to_numpy(float)
    for model in (FastSurvivalSVM(max_iter=20, random_state=0).fit(Xa, y),
                  CoxnetSurvivalAnalysis(n_alphas=10).fit(Xa, y),
                  LinearRegression().fit(Xa, y["time"])):
        name = type(model).__name__
        with pytest.raises(ParameterError, match=rf"`estimator`: {name} .*integrated Brier "
                                                 "score needs them"):
            survival_probabilities(model, Xa, [10.0])
    with pytest.raises(ParameterError, match="`estimator`: CoxPHSurvivalAnalysis is not fitted"):
        survival_probabilities(CoxPHSurvivalAnalysis(), Xa, [10.0])
    with pytest.raises(ParameterError, match="`estimator`: LifelinesModel is not fitted"):
        survival_probabilities(LifelinesModel(CoxPHFitter()), Xa, [10.0])
    with pytest.raises(ParameterError, match="`times` must be >= 0"):
        survival_probabilities(cox, X, [-1.0, 2.0])
    with pytest.raises(DataError, match="`times` must be finite"):
        survival_probabilities(cox, X, [np.nan])

"""The cross-study replicability and generalizability sections on the entries other than data:
a benchmark table, per-fold scores and out-of-fold predictions.

References are independent of the sections' formatting: the capability's own entry on the same
study scores (the report adds no number of its own), per-study means and squared errors
computed here with numpy / pandas, the light rules applied by hand to the bounds the section
reports, and constructed cases whose light is known.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import replikit

GEN, MS = "generalize", "multistudy"


def _section(audit, key):
    return next(s for s in audit.sections if s.key == key)


def _benchmark(n, m, gap, noise, seed=0) -> pd.DataFrame:
    """Datasets x models, model j scoring ``-gap * j`` plus noise (wide, a dataset column)."""
    rng = np.random.default_rng(seed)
    x = -gap * np.arange(m) + rng.normal(0, noise, (n, m))
    return (pd.DataFrame(x, index=[f"d{i}" for i in range(n)],
                         columns=[f"m{j}" for j in range(m)])
            .rename_axis("dataset").reset_index())


def _scores(n_studies=8, n_folds=3, n_repeats=2, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_studies):
        for j, model in enumerate(("a", "b", "c")):
            for r in range(n_repeats):
                for f in range(n_folds):
                    for metric, base in (("roc_auc", 0.8 - 0.03 * j), ("accuracy", 0.7)):
                        rows.append({"study": f"s{s}", "model": model, "repeat": r, "fold": f,
                                     "metric": metric,
                                     "value": base + rng.normal(0, 0.04),
                                     "n_train": 200, "n_test": 100})
    return pd.DataFrame(rows)


def _predictions(n, sds, *, folds=1, seed=0) -> pd.DataFrame:
    """Two rules on the units of len(sds) studies: y ~ N(0, 1); 'good' predicts y with error
    N(0, sd_k²), 'worse' with N(0, (sd_k + 0.5)²)."""
    rng = np.random.default_rng(seed)
    frames = []
    for k, sd in enumerate(sds):
        y = rng.normal(size=n)
        for model, extra in (("good", 0.0), ("worse", 0.5)):
            frames.append(pd.DataFrame({
                "study": f"s{k}", "model": model, "repeat": 0, "fold": np.arange(n) % folds,
                "row": np.arange(n), "y_true": y,
                "y_pred": y + rng.normal(0, sd + extra, n)}))
    return pd.concat(frames, ignore_index=True)


# -- generalize: the same numbers as the capability --------------------------------------------

def test_benchmark_nstar_is_the_capabilitys_on_the_datasets_as_studies():
    wide = _benchmark(12, 4, 0.05, 0.05)
    a = replikit.audit(benchmark=wide, quick=True, random_state=3, sections=[GEN])
    s = _section(a, GEN)
    long = wide.melt(id_vars="dataset", var_name="model", value_name="score").rename(
        columns={"dataset": "study"})
    ref = replikit.generalize.audit(long, metric="score", higher_is_better=True, quick=True,
                                    random_state=3)
    got = s.data["nstar"]
    pd.testing.assert_series_equal(got["nstar"], ref.nstar["nstar"])
    pd.testing.assert_series_equal(got["ci_high"], ref.nstar["ci_high"])
    assert s.data["N"] == 12 == ref.N
    assert s.data["verdict"]["level"] == ref.verdict.level
    assert "Each dataset of the benchmark table is one study" in s.blocks[0].text


def test_benchmark_lower_is_better_reverses_the_ranking():
    wide = _benchmark(10, 3, 0.1, 0.02)
    up = _section(replikit.audit(benchmark=wide, quick=True, random_state=0, sections=[GEN]),
                  GEN)
    down = _section(replikit.audit(benchmark=wide, higher_is_better=False, quick=True,
                                   random_state=0, sections=[GEN]), GEN)
    best_up = up.data["per_model"].sort_values("mean rank (1 = best)")["model"].iloc[0]
    best_down = down.data["per_model"].sort_values("mean rank (1 = best)")["model"].iloc[0]
    assert (best_up, best_down) == ("m0", "m2")  # m0 scores highest by construction


def test_scores_study_score_is_the_mean_over_repeats_and_folds():
    frame = _scores()
    a = replikit.audit(scores=frame, quick=True, random_state=5, sections=[GEN])
    s = _section(a, GEN)
    # the reference: means by pandas, then the capability on the study-score frame
    means = (frame[frame["metric"] == "roc_auc"].groupby(["study", "model"])["value"].mean()
             .rename("score").reset_index())
    ref = replikit.generalize.audit(means, metric="roc_auc", higher_is_better=True, quick=True,
                                    random_state=5)
    pd.testing.assert_series_equal(s.data["nstar"]["nstar"], ref.nstar["nstar"])
    got_means = s.data["per_model"].set_index("model")["mean roc_auc"]
    want = means.groupby("model")["score"].mean().round(4)
    pd.testing.assert_series_equal(got_means.sort_index(), want.sort_index(),
                                   check_names=False)
    assert "Each task of the per-fold scores" in s.blocks[0].text


def test_predictions_study_scores_are_the_mean_fold_r2_through_the_capability():
    from replikit.experiment.scoring import primary_metric_of, scores_from_predictions

    preds = _predictions(60, (1, 1, 1.2, 1.4, 1, 1.1), folds=3)
    a = replikit.audit(predictions=preds, quick=True, random_state=2, sections=[GEN])
    s = _section(a, GEN)
    sc = scores_from_predictions(preds).frame
    metric = primary_metric_of(preds)
    assert metric == "r2"
    # R² per fold by hand: 1 - SSE/SST on the fold's rows, then the mean per study and model
    def r2(g):
        return 1 - ((g.y_true - g.y_pred) ** 2).sum() / ((g.y_true - g.y_true.mean()) ** 2).sum()
    by_hand = (preds.groupby(["study", "model", "repeat", "fold"]).apply(r2, include_groups=False)
               .groupby(["study", "model"]).mean().rename("score").reset_index())
    mine = (sc[sc["metric"] == metric].groupby(["study", "model"])["value"].mean()
            .rename("score").reset_index())
    np.testing.assert_allclose(mine["score"], by_hand["score"], rtol=1e-12)
    ref = replikit.generalize.audit(by_hand, metric="r2", higher_is_better=True, quick=True,
                                    random_state=2)
    np.testing.assert_allclose(s.data["nstar"]["nstar"], ref.nstar["nstar"], rtol=1e-12)


# -- generalize: the light --------------------------------------------------------------------

@pytest.mark.parametrize("design, level", [
    ((40, 3, 0.1, 0.02), "good"),   # the same ranking in every dataset: n* ~ 1
    ((8, 6, 0.0, 1.0), "bad"),      # six exchangeable models on 8 datasets: n* far beyond 8
    ((12, 4, 0.05, 0.05), "warn"),  # the best model's interval straddles 12
])
def test_generalize_light_on_constructed_benchmarks(design, level):
    from replikit.generalize.audit import card_light

    s = _section(replikit.audit(benchmark=_benchmark(*design), quick=True, random_state=0,
                                sections=[GEN]), GEN)
    t = s.data["nstar"]
    assert s.data["verdict"]["level"] == level
    # the rule by hand: green iff every upper bound <= N, red iff some lower bound > N
    N = s.data["N"]
    hi = t["ci_high"].fillna(np.inf).to_numpy()
    lo = t["ci_low"].fillna(-np.inf).to_numpy()
    by_hand = "good" if (hi <= N).all() else ("bad" if (lo > N).any() else "warn")
    assert by_hand == level == card_light(t["ci_low"], t["ci_high"], N)[0]


# -- multistudy: predictions as rules ---------------------------------------------------------

@pytest.mark.parametrize("n, sds, tolerance, level", [
    (1500, (1, 1, 1), "25%", "good"),   # the same error distribution everywhere
    (300, (1, 1, 2), None, "bad"),      # MSE 1, 1 and 4
    (300, (1, 1, 1.15), None, "warn"),  # MSE 1 against 1.32: bounds straddle 10%
])
def test_multistudy_light_and_numbers_from_predictions(n, sds, tolerance, level):
    preds = _predictions(n, sds)
    a = replikit.audit(predictions=preds, quick=True, random_state=0, sections=[MS],
                       tolerances=None if tolerance is None else {MS: tolerance})
    d = _section(a, MS).data
    assert d["rule"] == "good"  # the higher mean utility (lower squared error) by construction
    g = preds[preds["model"] == "good"]
    mse = ((g.y_true - g.y_pred) ** 2).groupby(g.study).mean()
    studies = d["studies"].set_index("study")
    np.testing.assert_allclose(-studies["utility"], mse.loc[studies.index], rtol=1e-12)
    pooled = ((g.y_true - g.y_pred) ** 2).mean()
    np.testing.assert_allclose(d["pooled_loss"], pooled, rtol=1e-12)
    share = 0.10 if tolerance is None else 0.25
    np.testing.assert_allclose(d["tolerance"], share * pooled, rtol=1e-12)
    lo, hi, eps = d["spread_lower_bound"], d["smallest_epsilon_shown"], d["tolerance"]
    by_hand = "good" if hi <= eps else ("bad" if lo > eps else "warn")
    assert d["verdict"]["level"] == by_hand == level
    assert "cross_study_matrix" not in d


def test_multistudy_light_is_the_data_paths_rule():
    from replikit.multistudy.kernels import card_light

    d = _section(replikit.audit(predictions=_predictions(300, (1, 1, 1.15)), quick=True,
                                random_state=1, sections=[MS]), MS).data
    assert d["verdict"]["level"] == card_light(d["spread_lower_bound"],
                                               d["smallest_epsilon_shown"], d["tolerance"])


def test_multistudy_says_how_the_predictions_are_read():
    one = _section(replikit.audit(predictions=_predictions(100, (1, 1)), quick=True,
                                  random_state=0, sections=[MS]), MS)
    refit = _section(replikit.audit(predictions=_predictions(100, (1, 1), folds=5), quick=True,
                                    random_state=0, sections=[MS]), MS)
    assert one.data["verdict"]["caveats"][0].startswith(
        "the predictions are read as one fixed rule per model")
    first = refit.data["verdict"]["caveats"][0]
    assert "refitted per fold (5 folds" in first and "training procedure" in first
    assert "assesses that procedure" in refit.blocks[0].text
    assert "sec. 7.4" in one.blocks[0].text


# -- skipped, naming what to supply -----------------------------------------------------------

def test_benchmark_with_three_datasets_is_skipped_naming_what_to_supply():
    s = _section(replikit.audit(benchmark=_benchmark(3, 3, 0.1, 0.01), quick=True,
                                sections=[GEN]), GEN)
    assert s.skipped and "at least 4" in s.skipped
    assert "four or more datasets" in s.advice


def test_predictions_of_one_study_skip_multistudy_and_generalize():
    preds = _predictions(80, (1,))
    a = replikit.audit(predictions=preds, quick=True, sections=[MS, GEN])
    ms, gen = _section(a, MS), _section(a, GEN)
    assert ms.skipped and "one study" in ms.skipped and "--predictions" in ms.advice
    assert gen.skipped and "four or more studies" in gen.advice


def test_multistudy_on_a_benchmark_names_the_entries_it_reads():
    s = _section(replikit.audit(benchmark=_benchmark(10, 3, 0.1, 0.01), quick=True,
                                sections=[MS]), MS)
    assert s.skipped
    assert "--predictions" in s.advice and "--study" in s.advice


def test_generalize_on_estimates_names_the_entries_it_reads():
    est = pd.DataFrame({"study": ["a", "b", "c"], "r2": [0.3, 0.25, 0.2], "n": [100, 120, 90]})
    s = _section(replikit.audit(estimates=est, quick=True, sections=[GEN]), GEN)
    assert s.skipped
    for flag in ("--benchmark", "--scores", "--predictions", "--study"):
        assert flag in s.advice


# -- predictions made by replikit's runner ----------------------------------------------------

def test_within_study_cv_predictions_on_nwtco():
    from replikit.experiment import run
    from replikit.experiment.models import default_models
    from replikit.report import example_dataset

    d = example_dataset("nwtco_binary")
    res = run(default_models(d.task, quick=True), d.X, d.y, scheme="3x1", metrics=["roc_auc"],
              study=d.study.astype(str).to_numpy(), random_state=0)
    a = replikit.audit(predictions=res.predictions.frame, quick=True, random_state=0,
                       sections=[MS, GEN])
    ms, gen = _section(a, MS), _section(a, GEN)
    assert not ms.skipped and ms.data["utility"] == "brier"
    assert "refitted per fold (3 folds" in ms.data["verdict"]["caveats"][0]
    assert ms.data["verdict"]["level"] in ("good", "warn", "bad")
    assert gen.skipped and "2 studies" in gen.skipped  # nwtco has two trials


@pytest.mark.slow
def test_fixed_rule_predictions_on_anes_match_the_capability():
    from replikit.experiment import run
    from replikit.experiment.cross_study import StudyHoldOut
    from replikit.experiment.models import default_models
    from replikit.report import example_dataset

    d = example_dataset("anes")
    study = d.study.astype(str).to_numpy()
    res = run(default_models(d.task, quick=True), d.X, d.y, scheme=StudyHoldOut(0.5),
              metrics=["mse"], groups=study, random_state=0)
    f = res.predictions.frame
    f = f.assign(study=study[f["row"].to_numpy()])  # the runner's 'all': each unit's study
    a = replikit.audit(predictions=f, quick=True, random_state=4, sections=[MS])
    ms = _section(a, MS).data
    ref = replikit.multistudy.audit_predictions(f, quick=True, random_state=4)
    assert ms["rule"] == ref.rule
    assert ms["smallest_epsilon_shown"] == ref.smallest_tolerance
    assert ms["verdict"]["level"] == ref.verdict.level
    assert ms["verdict"]["caveats"][0].startswith("the predictions are read as one fixed rule")

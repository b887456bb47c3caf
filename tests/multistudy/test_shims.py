"""Old names of replikit.multistudy keep working for one release: each warns with a
FutureWarning and gives the same result as the new name."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from replikit.multistudy import (
    PermutationMethod,
    assess,
    benchmark_comparison,
    cross_study_matrix,
    distance_matrix,
    epsilon_test,
    from_arrays,
    from_predictions,
    get_metric,
    load_predictions,
    r_values,
    resample_replicability,
    study_utilities,
    total_variation,
)


@functools.cache
def _data():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 150)
    pred = np.where(rng.random(150) < 0.8, y, 1 - y)
    return from_arrays(y, pred, np.repeat(["a", "b", "c"], 50))


def _assess(**kw):
    return assess(_data(), "accuracy", n_resamples=30, permutation=PermutationMethod(19),
                  random_state=0, **kw)


def _same_frames(a, b):
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_permutation_method_is_the_core_one():
    import replikit
    import replikit.methods
    from replikit.multistudy.inference import PermutationMethod as FromInference

    assert PermutationMethod is replikit.methods.PermutationMethod is FromInference
    assert replikit.PermutationMethod is PermutationMethod


def test_assess_epsilon_and_options():
    new = _assess(tolerance=0.1)
    with pytest.warns(FutureWarning, match="`epsilon` is now `tolerance`"):
        old = _assess(epsilon=0.1)
    _same_frames(new, old)
    with pytest.warns(FutureWarning, match="`options` of .* is no longer used"):
        opt = _assess(tolerance=0.1, options={"utility": "--utility"})
    _same_frames(new, opt)
    with pytest.warns(FutureWarning, match="Assessment.epsilon"):
        assert new.epsilon == new.tolerance == 0.1


def test_resample_replicability_epsilon():
    new = resample_replicability(_data(), n_resamples=30, tolerance=0.1, random_state=0)
    with pytest.warns(FutureWarning):
        old = resample_replicability(_data(), n_resamples=30, epsilon=0.1, random_state=0)
    _same_frames(new, old)
    with pytest.warns(FutureWarning, match="ResampleResult.epsilon"):
        assert new.epsilon == 0.1
    with pytest.warns(FutureWarning):
        assert new.proportion_replicable(epsilon=0.1) == new.proportion_replicable(0.1)


def test_benchmark_comparison_epsilon():
    new = benchmark_comparison(_data(), 0.8, tolerance=0.1)
    with pytest.warns(FutureWarning):
        old = benchmark_comparison(_data(), 0.8, epsilon=0.1)
    _same_frames(new, old)
    assert "within_tolerance" in new.to_frame()
    with pytest.warns(FutureWarning, match="BenchmarkComparison.epsilon"):
        assert new.epsilon == 0.1


def test_epsilon_test_epsilon_se_spread():
    a = _assess()
    new = epsilon_test(a, tolerance=0.2, se_method="bootstrap", spread_method="plugin")
    with pytest.warns(FutureWarning) as caught:
        old = epsilon_test(a, epsilon=0.2, se="bootstrap", spread="plugin")
    assert len(caught) == 3
    _same_frames(new, old)
    with pytest.warns(FutureWarning, match="EpsilonTest.smallest_epsilon"):
        assert new.smallest_epsilon == new.smallest_tolerance
    with pytest.warns(FutureWarning, match="EpsilonTest.epsilon"):
        assert new.epsilon == 0.2


def test_smallest_epsilon_and_is_replicable():
    su = study_utilities(_data())
    with pytest.warns(FutureWarning, match="smallest_tolerance"):
        assert su.smallest_epsilon("relative") == su.smallest_tolerance("relative")
    with pytest.warns(FutureWarning):
        assert su.is_replicable(epsilon=0.05) == su.is_replicable(0.05)
    dm = distance_matrix(_data())
    with pytest.warns(FutureWarning, match="smallest_tolerance"):
        assert dm.smallest_epsilon() == dm.smallest_tolerance()
    with pytest.warns(FutureWarning):
        assert dm.is_replicable(epsilon=0.5) == dm.is_replicable(0.5)


def test_total_variation_p_q():
    with pytest.warns(FutureWarning):
        assert total_variation(p=[0.5, 0.5], q=[1.0, 0.0]) == total_variation([0.5, 0.5],
                                                                              [1.0, 0.0])


def test_r_values_tolerance():
    args = ([1e-6, 1e-5, 1e-3], [0.001, 0.04, 0.2])
    with pytest.warns(FutureWarning, match="`rtol`"):
        old = r_values(*args, n_features=1000, null_fraction=0.5, tolerance=1e-8)
    np.testing.assert_array_equal(old, r_values(*args, n_features=1000, null_fraction=0.5,
                                                rtol=1e-8))


def test_cross_study_matrix_cv():
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 1))
    y = X[:, 0] + rng.normal(size=60) * 0.1
    s = np.repeat(["a", "b"], 30)
    new = cross_study_matrix(LinearRegression(), X, y, s, n_folds=3, random_state=0)
    with pytest.warns(FutureWarning, match="`cv` is now `n_folds`"):
        old = cross_study_matrix(LinearRegression(), X, y, s, cv=3, random_state=0)
    _same_frames(new, old)
    with pytest.warns(FutureWarning, match="CrossStudyResult.cv"):
        assert new.cv == 3


def test_audit_fields():
    from sklearn.linear_model import LinearRegression

    from replikit.data.userdata import dataset_from_frame
    from replikit.multistudy import audit

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=120), "site": np.repeat(["a", "b", "c"], 40)})
    df["y"] = df.x + rng.normal(size=120)
    a = audit(dataset_from_frame(df, target="y", study="site"),
              models={"lr": LinearRegression()}, quick=True, random_state=0)
    with pytest.warns(FutureWarning, match="MultiStudyAudit.cv"):
        assert a.cv == a.n_folds == 3
    with pytest.warns(FutureWarning, match="MultiStudyAudit.smallest_epsilon"):
        assert a.smallest_epsilon == a.smallest_tolerance
    assert "smallest_tolerance" in a.rules


def test_cli_only_parameters(tmp_path):
    with pytest.warns(FutureWarning, match="`option` of .* is no longer used"):
        assert get_metric("r2", option="--metric").name == "r2"
    f = pd.DataFrame({"study": ["a", "b"], "model": "lr", "repeat": 0, "fold": 0,
                      "row": [0, 1], "y_true": [1, 0], "y_pred": [1, 1]})
    with pytest.warns(FutureWarning, match="`model_option`"):
        assert from_predictions(f, model_option="--model").K == 2
    path = tmp_path / "p.csv"
    f.to_csv(path, index=False)
    with pytest.warns(FutureWarning, match="`study_option`"):
        old = load_predictions(path, study_option="--study")
    pd.testing.assert_frame_equal(old.frame, load_predictions(path).frame)


@pytest.mark.parametrize("old,new", [(["--epsilon", "0.2"], ["--tolerance", "0.2"]),
                                     (["--resamples", "30"], ["--n-resamples", "30"])])
def test_multistudy_old_flags(cli, tmp_path, old, new):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 120)
    pd.DataFrame({"site": np.repeat(["a", "b", "c"], 40), "y_true": y,
                  "y_pred": np.where(rng.random(120) < 0.8, y, 1 - y)}).to_csv(
        tmp_path / "p.csv", index=False)
    base = ["--format", "json", "multistudy", str(tmp_path / "p.csv"), "--study", "site",
            "--permutation-resamples", "19"]
    code, out, err = cli(*base, *old)
    assert code == 0, err
    assert f"`{old[0]}` is now `{new[0]}`" in err
    code2, out2, _ = cli(*base, *new)
    assert code2 == 0 and out == out2


def test_crossstudy_old_cv_flag(cli, tmp_path):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(size=90), "school": np.repeat(["s1", "s2", "s3"], 30)})
    df["y"] = df.x + rng.normal(size=90)
    df.to_csv(tmp_path / "d.csv", index=False)
    base = ["--format", "json", "crossstudy", "--data", str(tmp_path / "d.csv"), "--target",
            "y", "--study", "school", "--models", "lr"]
    code, out, err = cli(*base, "--cv", "3")
    assert code == 0, err
    assert "`--cv` is now `--n-folds`" in err
    assert cli(*base, "--n-folds", "3")[1] == out

"""Study 2 simulation: design, reproducibility, properties, a small sklearn run, the CLI."""

import numpy as np
import pytest

from replikit.cli import main
from replikit.errors import ParameterError
from replikit.replicate.design import HoldOutCV
from replikit.replicate.plots import plot_simulation
from replikit.replicate.simulation import _sklearn_fits, simulate_replication


@pytest.fixture(scope="module")
def population():
    rng = np.random.default_rng(5)
    n, p = 3000, 5
    X = rng.normal(size=(n, p))
    y = X @ np.array([1.0, 0.8, -0.5, 0.3, 0.0]) + 1.2 * rng.normal(size=n)
    return X, y


def test_design_and_properties(population):
    X, y = population
    kw = dict(n_per_study=400, n_repeats=30, deltas=(0.1, 0.3), random_state=3)
    res = simulate_replication(X, y, **kw)
    again = simulate_replication(X, y, **kw)
    assert res.table.equals(again.table)  # same random_state -> identical
    t = res.table
    assert t["proportion"].between(0, 1).all()
    # population R2 = R2_old of least squares on the pool
    Xc = np.column_stack([np.ones(len(y)), X])
    beta = np.linalg.lstsq(Xc, y, rcond=None)[0]
    assert res.r2_population == pytest.approx(1 - np.var(y - Xc @ beta) / np.var(y))
    inc = t[(t.procedure == "inconsistency") & (t.model == "lr")]
    big = inc[(inc.delta == 0.3) & (inc.group == "nonreplication")]
    assert (big["proportion"] > 0.85).all()  # large reductions are detected
    reps = inc[inc.group == "replication"]
    # a true replication is judged inconsistent at about the nominal 5% for test R2
    test_rate = reps[reps.measure == "test"]["proportion"].mean()
    assert 0.0 <= test_rate < 0.15
    # replications do not depend on delta (common random numbers)
    g = reps.groupby(["measure", "stage1", "n_changed"])["proportion"].nunique()
    assert (g == 1).all()
    con = t[(t.procedure == "consistency") & (t.group == "replication")]
    by_tolerance = con.groupby("tolerance")["proportion"].mean()
    assert np.all(np.diff(by_tolerance.to_numpy()) >= 0)  # wider region -> more consistent
    assert (t["mc_se"] >= 0).all() and set(t["n_repeats"]) == {30}
    d = res.diagnostic()
    assert "diagnostic" in d and d["diagnostic"].between(-1, 1).all()
    axes = res.plot(measure="test", procedure="captured", stage2="fixed")
    assert axes.shape == (2,) and axes[0].figure is axes[1].figure
    same = plot_simulation(res, measure="test", procedure="consistency", tolerance=0.1)
    assert len(same) == 2 and "±0.1" in same[0].get_ylabel()
    with pytest.raises(ParameterError, match="deltas"):
        simulate_replication(X, y, n_per_study=400, deltas=(0.9,))


def test_sklearn_path_matches_design(population):
    from sklearn.linear_model import Lasso
    from sklearn.metrics import r2_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    # the scikit-learn models run through replikit.experiment.run on the design's fold labels
    # (the same splits as the batched linear models), every outcome of a study on one split
    X, y = population
    Xs = np.stack([X[:300], X[300:600]])
    Ys = np.stack([y[:300], y[300:600]])[..., None] * np.array([1.0, 0.5])  # two outcomes
    scheme = HoldOutCV(5)
    rng = np.random.default_rng(0)
    labels = np.stack([scheme.assign(rng.permutation(300)) for _ in range(2)])
    jobs = [(0, 0), (1, 0), (1, 1)]
    folds, test = _sklearn_fits("lasso", Xs, Ys, labels, jobs, 0, 1)
    assert folds.shape == (3, 5) and test.shape == (3,)
    for i, (s, j) in enumerate(jobs):
        train, hold = labels[s] >= 0, labels[s] < 0
        m = make_pipeline(StandardScaler(), Lasso(alpha=0.01)).fit(Xs[s][train], Ys[s, train, j])
        assert test[i] == pytest.approx(r2_score(Ys[s, hold, j], m.predict(Xs[s][hold])))
        f0 = labels[s] == 0
        m = make_pipeline(StandardScaler(), Lasso(alpha=0.01)).fit(Xs[s][train & ~f0],
                                                                   Ys[s, train & ~f0, j])
        assert folds[i, 0] == pytest.approx(r2_score(Ys[s, f0, j], m.predict(Xs[s][f0])))
    res = simulate_replication(X, y, models=("lasso",), n_per_study=150, n_studies=4,
                               n_changed=(2,), deltas=(0.2,), n_folds=3, random_state=0)
    assert set(res.table["model"]) == {"lasso"} and res.table["proportion"].notna().all()


def test_cli_simulate_replication(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "replication", "--n-repeats", "2", "--n-per-study", "300", "--out",
              str(tmp_path)])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    assert "Study 2 simulation" in out and "is now" not in err
    assert (tmp_path / "study2_table.csv").exists()
    assert (tmp_path / "fig9a_cv_inconsistency.svg").exists()


def test_small_studies_on_anes_run():
    # `simulate replication --n-repeats 3 --n-per-study 200` once ended in LinAlgError
    res = simulate_replication(n_per_study=200, n_repeats=3, random_state=0)
    assert res.table["proportion"].notna().all()
    assert res.n_repeats == 3


def test_tiny_studies_are_flagged(population):
    X, y = population
    res = simulate_replication(X, y, n_per_study=50, n_repeats=2, deltas=(0.1,),
                               random_state=1)
    assert res.table["proportion"].between(0, 1).all()
    # 10 folds of 3-4 rows: many fold R2 are below the Olkin-Finn floor; the result says so
    assert any("below" in note and "fold" in note for note in res.notes)
    assert "note:" in str(res)


def test_three_studies_default_changed_count(population):
    # `--n-studies 3` once passed the CLI range and then failed on `n_changed`
    X, y = population
    res = simulate_replication(X, y, n_studies=3, n_per_study=200, n_repeats=2,
                               deltas=(0.2,), random_state=0)
    assert res.n_changed == (1,)
    assert set(res.table["n_changed"]) == {1}
    assert simulate_replication(X, y, n_studies=5, n_per_study=200, n_repeats=1,
                                deltas=(0.2,)).n_changed == (2,)
    with pytest.raises(ParameterError, match="n_changed"):
        simulate_replication(X, y, n_studies=3, n_changed=(2,), n_per_study=200)


@pytest.mark.parametrize("kwargs, name", [
    ({"tau2_method": "XX"}, "tau2_method"), ({"models": ()}, "models"),
    ({"models": ("lr", "bogus")}, "models"), ({"n_repeats": 0}, "n_repeats"),
    ({"n_per_study": 10}, "n_per_study"), ({"n_studies": 2}, "n_studies"),
    ({"n_jobs": 0}, "n_jobs"), ({"deltas": ()}, "deltas"),
    ({"tolerances": (0.0,)}, "tolerances"), ({"n_folds": 1}, "n_folds"),
    ({"train_share": 1.0}, "train_share"),
])
def test_parameters_checked_up_front(population, kwargs, name):
    X, y = population
    with pytest.raises(ParameterError, match=name):
        simulate_replication(X, y, **{"n_per_study": 200, **kwargs})


def test_joblib_workers_match_serial(population):
    X, y = population
    kw = dict(models=("lasso",), n_per_study=120, n_studies=3, deltas=(0.2,), n_folds=3,
              random_state=4)
    serial = simulate_replication(X, y, **kw)
    par = simulate_replication(X, y, n_jobs=2, **kw)
    assert serial.table.equals(par.table)


def test_old_names_warn_and_agree(population, capsys, tmp_path):
    X, y = population
    new = simulate_replication(X, y, n_per_study=150, n_repeats=2, n_folds=3, deltas=(0.2,),
                               tolerances=(0.1,), random_state=2)
    with pytest.warns(FutureWarning, match="n_repeats"), \
            pytest.warns(FutureWarning, match="n_folds"), \
            pytest.warns(FutureWarning, match="tolerances"):
        old = simulate_replication(X, y, n_per_study=150, n_repetitions=2, n_splits=3,
                                   deltas=(0.2,), margins=(0.1,), random_state=2)
    assert old.table.equals(new.table)
    with pytest.warns(FutureWarning, match="n_repeats"):
        assert old.n_repetitions == 2
    with pytest.warns(FutureWarning, match="tolerances"):
        assert old.margins == (0.1,)
    with pytest.warns(FutureWarning, match="n_folds"):
        assert HoldOutCV(n_splits=4).n_folds == 4
    with pytest.warns(FutureWarning, match="n_folds"):
        assert HoldOutCV(4).n_splits == 4
    assert repr(HoldOutCV(4)).startswith("HoldOutCV(n_folds=4")
    # the old flags of the command line still work, with one warning line each
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "replication", "-R", "1", "--n", "200", "--studies", "3",
              "--tau2", "DL"])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    for old_flag, new_flag in (("-R", "--n-repeats"), ("--n", "--n-per-study"),
                               ("--studies", "--n-studies"), ("--tau2", "--tau2-method")):
        assert f"`{old_flag}` is now `{new_flag}`" in err

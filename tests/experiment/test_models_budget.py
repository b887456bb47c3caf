"""The time budget's pieces in the experiment layer: one-hot groups, level codes, the cost
model and the sized models (fast: no audit is run)."""

import numpy as np
import pandas as pd
import pytest

from replikit.errors import ParameterError
from replikit.experiment.budget import (
    TableSize,
    affordable_repeats,
    affordable_resamples,
    fit_seconds,
)
from replikit.experiment.encoding import LevelCodes, onehot_groups
from replikit.experiment.models import SIZING_STEPS, make_model, sized_models


def _table(n=300, levels=15, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"x": rng.normal(size=n), "flag": rng.integers(0, 2, n).astype(float),
                          "country": rng.choice([f"c{i:02d}" for i in range(levels)], n),
                          "sex": rng.choice(["f", "m"], n)})
    X = pd.get_dummies(frame, columns=["country", "sex"], drop_first=True, dtype=float)
    return frame, X


def test_onehot_groups_are_the_dummies_of_one_categorical():
    frame, X = _table()
    groups = onehot_groups(X)
    assert len(groups) == 1
    names = [X.columns[j] for j in groups[0]]
    assert all(name.startswith("country_") for name in names)
    assert len(names) == frame["country"].nunique() - 1
    # a numeric 0/1 column and a 2-level categorical are not a many-level group
    assert X.columns.get_loc("flag") not in groups[0]
    assert onehot_groups(X, min_columns=100) == ()


def test_columns_that_overlap_are_not_a_group():
    X = pd.DataFrame({"a_1": [1.0, 1, 0, 0], "a_2": [1.0, 0, 1, 0], "a_3": [0.0, 0, 0, 1]})
    assert onehot_groups(X, min_columns=2) == ()  # rows 0 has two of them


def test_level_codes_are_lossless_and_ordered_by_the_training_outcome():
    frame, X = _table(n=400)
    groups = onehot_groups(X)
    rng = np.random.default_rng(1)
    effect = {c: rng.normal() * 3 for c in frame["country"].unique()}
    y = frame["country"].map(effect).to_numpy() + rng.normal(size=len(frame)) * 0.1
    coded = LevelCodes(groups=groups).fit(X.to_numpy(), y)
    out = coded.transform(X.to_numpy())
    code = out[:, -1]
    assert out.shape[1] == X.shape[1] - len(groups[0]) + 1
    # lossless: one code per level, a different code for every level
    pairs = pd.DataFrame({"country": frame["country"], "code": code}).drop_duplicates()
    assert len(pairs) == frame["country"].nunique() == pairs["code"].nunique()
    # ordered by the level's mean outcome in the training rows
    means = pd.Series(y).groupby(frame["country"].to_numpy()).mean()
    order = pairs.set_index("country")["code"].reindex(means.index)
    assert np.array_equal(np.argsort(order.to_numpy()), np.argsort(means.to_numpy()))


def test_level_codes_use_the_training_rows_only():
    frame, X = _table(n=200)
    groups = onehot_groups(X)
    y = np.random.default_rng(2).normal(size=200)
    train = np.arange(200) < 150
    a = LevelCodes(groups=groups).fit(X.to_numpy()[train], y[train])
    changed = y.copy()
    changed[~train] += 100.0  # the test rows' outcomes cannot move the codes
    b = LevelCodes(groups=groups).fit(X.to_numpy()[train], changed[train])
    assert np.array_equal(a.transform(X.to_numpy()), b.transform(X.to_numpy()))


def test_an_unseen_level_gets_the_reference_code():
    X = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0]], dtype=float)
    codes = LevelCodes(groups=((0, 1, 2),)).fit(X, [5.0, 1.0, 3.0, 3.0])
    unseen = codes.transform(np.array([[0, 0, 1.0]]))[0, 0]
    reference = codes.transform(np.array([[0, 0, 0.0]]))[0, 0]
    assert unseen == reference


def test_each_sizing_step_is_stated_and_unknown_steps_are_refused():
    _, X = _table()
    assert sized_models("regression", X).notes == ()
    models = sized_models("regression", X, steps=SIZING_STEPS, reason="because")
    assert len(models.notes) == 4 and "because" in models.caveat()
    # the forest left out: no note describes its changes (only gb's codes, shorter boosting)
    assert models.notes[0].startswith("gb fitted on level codes of country (15 levels)")
    assert list(models) == ["lr", "gb", "dummy"] and "rf left out" in models.notes[3]
    assert not any(t.startswith("rf grows") for t in models.notes)
    # the shorter boosting: the same total step (iterations x learning rate), half the trees
    boost = models["gb"].steps[-1][1]
    assert (boost.max_iter, boost.learning_rate) == (50, 0.2)
    assert "50 boosting iterations at learning rate 0.2 instead of 100 at 0.1" in models.notes[1]
    # lasso's shorter solve is stated only while lasso is in the line-up
    assert any(t.startswith("lasso's solver") for t in
               sized_models("classification", X, steps=SIZING_STEPS[:3]).notes)
    assert not any("lasso's solver" in t for t in
                   sized_models("classification", X, steps=SIZING_STEPS).notes)
    kept = sized_models("regression", X, steps=SIZING_STEPS[:4])
    assert kept.notes[0].startswith("rf and gb fitted on level codes")
    assert "50 trees" in kept.notes[1] and kept["rf"].steps[-1][1].n_estimators == 50
    with pytest.raises(ParameterError, match="`steps`"):
        sized_models("regression", X, steps=["fewer"])
    # no many-level categorical: the codes step changes nothing and says nothing
    plain = sized_models("regression", X[["x", "flag"]], steps=["codes"])
    assert plain.notes == () and not hasattr(plain["rf"], "steps")


def test_sized_models_fit_and_predict_every_row():
    frame, X = _table(n=120)
    y = (frame["x"] > 0).astype(int).to_numpy()
    models = sized_models("classification", X, steps=SIZING_STEPS, quick=True)
    for est in models.values():
        proba = est.fit(X, y).predict_proba(X)
        assert proba.shape == (len(X), 2)


def test_the_cost_model_grows_with_the_table_and_shrinks_with_the_changes():
    _, X = _table(n=2_000, levels=60)
    size = TableSize.of(X)
    assert size.n_rows == 2_000 and size.n_binary >= 59 and 0 < size.split_weight < 1
    for alias in ("lr", "lasso", "rf", "gb", "knn"):
        model = make_model(alias, "regression")
        small = fit_seconds(model, size.with_rows(500), "regression")
        assert 0 < small < fit_seconds(model, size, "regression"), alias
    plain = sized_models("regression", X)
    cheap = sized_models("regression", X, steps=["codes", "forest"])
    for alias in ("rf", "gb"):
        assert fit_seconds(cheap[alias], size, "regression") < fit_seconds(
            plain[alias], size, "regression"), alias


def test_affordable_repeats_and_resamples_stay_within_their_bounds():
    costs = [0.001, 0.1, 1.0, 10.0, 1000.0]
    repeats = [affordable_repeats(c, 10, 10) for c in costs]
    assert repeats == sorted(repeats, reverse=True) and min(repeats) == 2 and max(repeats) == 10
    resamples = [affordable_resamples(c, 50, 10) for c in costs]
    assert resamples == sorted(resamples, reverse=True)
    assert min(resamples) == 10 and max(resamples) == 50

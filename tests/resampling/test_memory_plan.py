"""Large inputs: the bootstrap holds every resample's predictions, so its resamples (never its
rows) are capped by memory, the card says so, and the compact weights change no number."""

import numpy as np
import pandas as pd
import pytest

from replikit.data.userdata import Dataset
from replikit.experiment.models import make_models
from replikit.experiment.schemes import Bootstrap, RepeatedKFold
from replikit.resampling import bootstrap_plan
from replikit.resampling.audit import MEMORY_BYTES, memory_resamples


@pytest.mark.parametrize("scheme", [Bootstrap(30), RepeatedKFold(5, 2)])
def test_compact_weights_are_the_same_counts(scheme):
    W, T = scheme.masks(500, random_state=3)
    Wc, Tc = scheme.masks(500, random_state=3, compact=True)
    assert Wc.dtype == np.uint8 and W.dtype == float
    assert np.array_equal(Wc.astype(float), W) and np.array_equal(Tc, T)


def test_memory_cap_is_the_largest_count_within_the_bytes():
    for n, k in [(100_000, 0), (1_000_000, 0), (1_000_000, 2), (3_000_000, 5)]:
        r = memory_resamples(n, k)
        per = n * (8 * max(1, k) + 10)
        assert r >= 10
        assert r == 10 or (r * per <= MEMORY_BYTES < (r + 1) * per)


def _big(n):
    X = pd.DataFrame({"a": np.zeros(n), "b": np.arange(n, dtype=float) % 7})
    return Dataset("big", X, pd.Series(np.arange(n, dtype=float) % 3, name="y"), None,
                   "regression", 0)


def test_a_million_rows_get_fewer_resamples_not_fewer_rows():
    plan = bootstrap_plan(_big(1_000_000), make_models("lr,dummy", "regression"))
    for p in plan.values():
        assert p["rows"] == 1_000_000
        assert p["n_resamples"] == memory_resamples(1_000_000) < 200
        assert p["limited_by"] == "memory"
    small = bootstrap_plan(_big(20_000), make_models("lr,dummy", "regression"))
    assert all(p["limited_by"] is None and p["n_resamples"] == 200 for p in small.values())


def test_the_card_says_why_and_the_estimates_keep_every_row(monkeypatch):
    """A cap made small enough to bite on 3,000 rows: the notes and the caveat say so."""
    import sys

    from replikit.resampling import audit as audit_fn

    mod = sys.modules["replikit.resampling.audit"]
    monkeypatch.setattr(mod, "MEMORY_BYTES", 3_000 * 18 * 20)  # 20 resamples of 3,000 rows
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(3_000, 3)), columns=list("abc"))
    y = pd.Series(X["a"] + rng.normal(size=3_000), name="y")
    res = audit_fn(Dataset("toy", X, y, None, "regression", 0),
                   models=make_models("lr,dummy", "regression"), random_state=0)
    assert res.plans["lr"]["n_resamples"] == 20 and res.plans["lr"]["limited_by"] == "memory"
    assert (res.estimates["rows_used"] == 3_000).all()
    first = res.verdict.caveats[0]  # the one the summary card shows
    assert "20 bootstrap resamples" in first and "not fewer rows" in first
    assert any("fewer, to hold them in memory" in n for n in res.notes)

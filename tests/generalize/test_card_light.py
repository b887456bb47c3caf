"""The generalize card's earned light: every goal's 95% interval of n* against the N studies
at hand (green only when every upper bound is within N, red only when a lower bound is beyond
N, amber otherwise), the tolerance δ* from the audit, and the validity rows of the rule."""

import numpy as np
import pandas as pd

from replikit.generalize import audit
from replikit.generalize.audit import card_light


def test_card_light_on_constructed_intervals():
    N = 10
    # upper bounds inside -> good (the key is the largest upper bound)
    assert card_light([1.0, 2.0, 3.0], [4.0, 9.5, 10.0], N) == ("good", 2)
    # a lower bound beyond -> bad (the key is the largest lower bound)
    assert card_light([1.0, 11.0, 12.0], [4.0, 30.0, 25.0], N) == ("bad", 2)
    # straddling -> warn, even when the point estimate would be inside or beyond
    assert card_light([1.0, 3.0], [4.0, 45.0], N) == ("warn", 1)
    assert card_light([1.0, 10.0], [4.0, 45.0], N) == ("warn", 1)  # lower bound = N: not beyond
    # no interval (fewer than 5 studies): never green, never red
    assert card_light([np.nan, np.nan], [np.nan, np.nan], 4) == ("warn", 0)
    # vectorised over replications
    lv, key = card_light(np.array([[1.0], [12.0], [3.0]]), np.array([[9.0], [20.0], [15.0]]), N)
    assert lv.tolist() == ["good", "bad", "warn"] and key.tolist() == [0, 0, 0]


def _scores(n_studies=12, spread=0.05, random_state=0):
    rng = np.random.default_rng(random_state)
    base = np.linspace(0.8, 0.6, 4)
    return pd.DataFrame([{"study": f"s{i:02d}", "model": m, "score": b + rng.normal(0, spread)}
                         for i in range(n_studies) for m, b in zip("abcd", base, strict=True)])


def test_tolerance_is_the_delta_of_the_audit_and_reaches_the_card(tmp_path):
    df = _scores(spread=0.1, random_state=2)
    loose = audit(df, tolerance=0.2, random_state=0, quick=True)
    tight = audit(df, tolerance=0.05, random_state=0, quick=True)
    assert loose.tolerance == 0.2 and (loose.nstar["tolerance"] == 0.2).all()
    # a larger δ* needs fewer studies, goal by goal
    assert (loose.nstar["nstar"].to_numpy() <= tight.nstar["nstar"].to_numpy() + 1e-9).all()
    assert "δ* = 0.2" in loose.verdict.tolerance

    from replikit.report import example_dataset, run_audit

    ds = example_dataset("anes")
    rep = run_audit(ds, tmp_path / "r", quick=True, random_state=0, sections=["generalize"],
                    tolerances={"generalize": 0.3})
    sec = next(s for s in rep.sections if s.key == "generalize")
    assert sec.data["tolerance"] == 0.3
    assert "δ* = 0.3" in sec.data["verdict"]["tolerance"]
    assert sec.data["verdict"]["tolerance"].startswith("judged against the ")


def test_validity_card_rows_inside_their_bands():
    from replikit._random import root_seed_sequence
    from replikit.generalize.validity import _card_rows

    t = pd.DataFrame(_card_rows(root_seed_sequence(0), 300))
    cal = t[t["claim"] == "calibrated"]
    assert len(cal) == 4 and cal["within"].all(), cal[["setting", "estimate"]]
    # power: N = 10 studies where n* is about 5 are shown enough almost always
    green = t[(t["quantity"] == "power") & t["setting"].str.startswith("N=10, mallows")]
    assert (green["estimate"] > 0.9).all()

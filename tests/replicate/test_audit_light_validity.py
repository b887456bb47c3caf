"""The replication card's light in simulation (``replikit.replicate.validity``, card-light
rows): with large studies, the previous rule (one replication shown consistent) is green most of
the time when 4 of 9 replications are .20 lower, the card's rule almost never; and the rule turns
green when the truth holds. The full table is in docs/replicate.md."""

import pandas as pd

from replikit._random import root_seed_sequence
from replikit.replicate import validity as rv


def test_card_light_rows_separate_the_rules():
    rows = pd.DataFrame(rv._light_cell(rv.task_rng(root_seed_sequence(0), ("t",)), 10, 10000,
                                       120))
    rows["truth"] = rows["setting"].str.extract(r"truth=([^,]+)")[0]
    green = rows[rows["method"] == "green (pooled or all replications)"].set_index("truth")
    old = rows[rows["method"].str.startswith("green, previous rule")].set_index("truth")
    lower = "4 of 9 replications 0.2 lower"
    assert old.loc[lower, "estimate"] > 0.5 and green.loc[lower, "estimate"] == 0
    assert green.loc[lower, "claim"] == "calibrated" and old.loc[lower, "claim"] == "invalid"
    assert green.loc["the truth holds (all equal)", "estimate"] > 0.6  # power
    assert green.loc["every replication at the tolerance", "within"]


def test_card_light_cells_cover_the_settings():
    keys = [key for key, fn, _ in rv._cells("full") if key[0] == "light"]
    assert {(k, n) for _, k, n in keys} == {(k, n) for k in (5, 10)
                                            for n in (50, 200, 2000, 10000)}

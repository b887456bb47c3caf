"""replikit.generalize on odd inputs: clear errors naming the parameter, flagged results, and
ranks for people counted from 1 = best."""

import numpy as np
import pandas as pd
import pytest

from replikit.errors import DataError, ParameterError
from replikit.generalize import Kernel, StudySpec, analyze, estimate_nstar, parse_goal, prepare
from replikit.generalize.rankings import rank_scores


def _frame(n_alt=4, n_cond=10, random_state=0):
    rng = np.random.default_rng(random_state)
    return pd.DataFrame([{"alt": f"a{i}", "cond": f"c{j}", "s": rng.normal(0.2 * i, 0.3)}
                         for i in range(n_alt) for j in range(n_cond)])


def test_ranks_for_people_are_tiers_plus_one():
    df = _frame()
    df.loc[3, "s"] = np.nan
    prep = prepare(df, StudySpec("alt", "s", "cond"))
    s = prep.samples[0]
    wide = s.to_frame(wide=True)
    np.testing.assert_array_equal(wide.to_numpy(), rank_scores(s.scores) + 1)
    assert wide.to_numpy().min() == 1
    long = s.to_frame()
    assert len(long) == s.scores.size and long["rank"].min() == 1
    assert long["imputed"].sum() == 1
    # the missing result ranks last in its condition
    row = long[long["imputed"]].iloc[0]
    assert row["rank"] == long[long["cond"] == row["cond"]]["rank"].max()
    summ = s.summary()
    np.testing.assert_allclose(summ["mean_rank"], (rank_scores(s.scores) + 1).mean(axis=0))
    assert summ["n_best"].sum() >= len(s.conditions)     # ties may share first place
    res = analyze(prep, kernels=["mallows"], n_resamples=20, random_state=0)
    pd.testing.assert_frame_equal(res.summary(), prep.summary())
    assert res.ranks()["rank"].min() == 1


def test_numeric_text_labels_keep_numeric_order():
    df = _frame(n_cond=12)
    df["cond"] = df["cond"].str[1:]                    # '0' .. '11' as text
    prep = prepare(df, StudySpec("alt", "s", "cond"))
    assert list(prep.samples[0].conditions) == [str(i) for i in range(12)]
    num = prepare(df.assign(cond=df["cond"].astype(int)), StudySpec("alt", "s", "cond"))
    np.testing.assert_array_equal(prep.samples[0].ranks, num.samples[0].ranks)


def test_lookalike_labels_kept_apart_and_noted():
    df = _frame(n_alt=3)
    df["alt"] = df["alt"].map({"a0": "05", "a1": "5", "a2": "5.0"})
    prep = prepare(df, StudySpec("alt", "s", "cond"))
    assert len(prep.samples[0].alternatives) == 3
    assert any("'05'" in n and "'5.0'" in n for n in prep.notes)


@pytest.mark.parametrize("value,match", [("n/a?", "n/a"), ("good", "n/a")])
def test_bad_scores_refused_naming_the_option(value, match):
    df = _frame().astype({"s": object})
    df.loc[2, "s"] = value
    if value == "good":
        df["s"] = "good"
        match = "no numbers"
    with pytest.raises(DataError, match=match) as err:
        prepare(df, StudySpec("alt", "s", "cond"))
    assert "`score`" in str(err.value)


def test_infinite_scores_rank_as_extremes_and_are_noted():
    df = _frame(n_alt=4)
    df.loc[0, "s"] = -np.inf          # a0 in c0: worst observed
    df.loc[10, "s"] = np.nan          # a1 in c0: missing, below every observed score
    df.loc[20, "s"] = -np.inf         # a2 in c0: ties with a0
    prep = prepare(df, StudySpec("alt", "s", "cond"))
    r = prep.samples[0].to_frame(wide=True).loc["c0"]
    assert r["a0"] == r["a2"] and r["a1"] == r["a0"] + 1 and r["a3"] == 1
    assert any("infinite" in n for n in prep.notes)
    with pytest.raises(DataError, match="rbf"):
        analyze(prep, kernels=["rbf"], n_resamples=5)


def test_missing_columns_name_their_role():
    df = _frame()
    for field in ("alternative", "score", "factors"):
        kw = {"alternative": "alt", "score": "s", "factors": "cond", field: "nope"}
        with pytest.raises(DataError, match=f"`{field}`"):
            prepare(df, StudySpec(**kw))


def test_one_alternative_and_one_condition():
    with pytest.raises(DataError, match="at least 2"):
        prepare(_frame(n_alt=1), StudySpec("alt", "s", "cond"))
    with pytest.raises(DataError, match="single level"):
        prepare(_frame(n_cond=1), StudySpec("alt", "s", "cond"))
    with pytest.raises(DataError, match="at least 2 alternatives"):
        estimate_nstar(np.zeros((6, 1), int), Kernel("mallows"))


def test_notes_ties_unscored_alternative_and_small_design():
    df = _frame()
    df["d"] = "big"
    df.loc[df["alt"] == "a1", "s"] = np.nan
    lone = _frame(n_cond=1).assign(d="lone")
    tied = _frame().assign(s=0.5, d="tied")
    prep = prepare(pd.concat([df, lone, tied]), StudySpec("alt", "s", "cond", design=["d"]))
    text = " | ".join(prep.notes)
    assert "'a1'" in text and "no result" in text
    assert "'lone'" in text and "single condition" in text
    assert "'tied'" in text and "tie" in text
    res = analyze(prep, kernels=["mallows"], n_resamples=20, random_state=0)
    assert set(res.table["d"]) == {"big", "tied"}
    assert res.table.loc[res.table["d"] == "tied", "nstar"].iloc[0] == 1


def test_few_conditions_are_flagged():
    kw = dict(alternative="alt", score="s", factors="cond", kernels=["mallows"],
              n_resamples=20, random_state=0)
    res = analyze(_frame(n_cond=3), **kw)
    assert any("fewer than 5 conditions" in n for n in res.notes)
    assert np.isnan(res.table["ci_low"].iloc[0])
    res = analyze(_frame(n_cond=3), estimator="loglog", **kw)
    assert any("single subsample size" in n for n in res.notes)
    res = analyze(_frame(n_cond=8), **kw)
    assert not any("fewer than 5" in n or "single subsample" in n for n in res.notes)
    assert np.isfinite(res.table["ci_low"].iloc[0])


@pytest.mark.parametrize("k", [4, 10])
def test_jaccard_k_checked_against_alternatives(k):
    with pytest.raises(ParameterError, match="smaller than the number of alternatives"):
        analyze(_frame(), alternative="alt", score="s", factors="cond",
                kernels=[Kernel("jaccard", k=k)], n_resamples=20)
    # k = 3 < 4 alternatives is a real goal
    analyze(_frame(), alternative="alt", score="s", factors="cond",
            kernels=[Kernel("jaccard", k=3)], n_resamples=20, random_state=0)


def test_goal_level_and_tolerance_messages_name_the_parameter():
    for bad in ["foo", "jaccard:0", "jaccard:x", "rbf:-1", "borda", ""]:
        with pytest.raises(ParameterError, match="`goal`"):
            parse_goal(bad)
        with pytest.raises(ParameterError, match="`kernels`"):
            analyze(_frame(), alternative="alt", score="s", factors="cond", kernels=[bad],
                    n_resamples=5)
    with pytest.raises(ParameterError, match="`confidence_level`"):
        analyze(_frame(), alternative="alt", score="s", factors="cond", confidence_level=1.0,
                n_resamples=5)
    with pytest.raises(ParameterError, match="`tolerance`"):
        analyze(_frame(), alternative="alt", score="s", factors="cond", tolerance=[0.05, 0],
                n_resamples=5)


def test_rbf_refuses_overflowing_scores():
    df = _frame()
    df.loc[0, "s"] = 1e300
    with pytest.raises(DataError, match="rescale"):
        analyze(df, alternative="alt", score="s", factors="cond", kernels=["rbf"], n_resamples=5)
    # rankings are unaffected by the size of a score
    analyze(df, alternative="alt", score="s", factors="cond", kernels=["mallows"], n_resamples=5,
            random_state=0)


def test_held_constant_level_without_results():
    df = _frame().assign(tuning="full")
    with pytest.raises(DataError, match="no result has tuning = 'none'"):
        prepare(df, StudySpec("alt", "s", "cond", held_constant={"tuning": "none"}))
    # a numeric column matches a level given as text (command line)
    df["shots"] = 0
    prep = prepare(df, StudySpec("alt", "s", "cond", held_constant={"shots": "0"}))
    assert prep.samples[0].ranks.shape == (10, 4)


def test_same_random_state_same_table_after_the_checks():
    kw = dict(alternative="alt", score="s", factors="cond", kernels=["mallows", "jaccard"],
              n_resamples=50, random_state=3)
    pd.testing.assert_frame_equal(analyze(_frame(), **kw).table, analyze(_frame(), **kw).table)

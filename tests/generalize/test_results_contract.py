"""Every public result of replikit.generalize keeps the contract of replikit.results.Result, and
every old name of the package keeps working for one release with a FutureWarning."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from _checks import check_result
from replikit import BootstrapMethod
from replikit.generalize import (
    GeneralizabilityAudit,
    Kernel,
    MMDDistribution,
    PreparedStudy,
    StudySpec,
    analyze,
    audit,
    estimate_nstar,
    iterate_nstar,
    mmd,
    mmd_distribution,
    mmd_from_gram,
    parse_goal,
    prepare,
)

#: Public functions of replikit.generalize that compute no statistical method (so cite no paper).
NO_METHOD = {
    "parse_goal": "a parser: a goal string such as 'jaccard:1' into a Kernel",
    "check_applicable": "a guard: refuses fewer than 4 studies or 2 models before any fit",
}

RANKS = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [0, 1, 2]] * 5)


def _table(n_cond=8, n_alt=3, random_state=0):
    rng = np.random.default_rng(random_state)
    return pd.DataFrame({"alt": np.tile([f"a{i}" for i in range(n_alt)], n_cond),
                         "cond": np.repeat([f"c{j}" for j in range(n_cond)], n_alt),
                         "s": np.tile(np.linspace(0.8, 0.6, n_alt), n_cond)
                         + rng.normal(0, 0.05, n_cond * n_alt)})


def _study_scores():
    df = _table()
    return df.rename(columns={"alt": "model", "cond": "study", "s": "score"})


FACTORIES = {
    "NStarResult": lambda: estimate_nstar(RANKS, Kernel("jaccard"), n_resamples=50,
                                          random_state=0),
    "MMDDistribution": lambda: mmd_distribution(np.eye(6), n_resamples=10, random_state=0),
    "GeneralizabilityResult": lambda: analyze(_table(), alternative="alt", score="s",
                                              factors="cond", kernels=["mallows", "jaccard"],
                                              n_resamples=30, random_state=0),
    "GeneralizabilityAudit": lambda: audit(_study_scores(), metric="AUC", n_resamples=30,
                                           random_state=0),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    check_result(FACTORIES[name]())


def test_audit_interval_is_the_hardest_goals_and_the_verdicts():
    res = FACTORIES["GeneralizabilityAudit"]()
    ci = res.confidence_interval()
    assert (ci.low, ci.high) == pytest.approx((res.verdict.ci_low, res.verdict.ci_high))
    assert res.verdict.label.endswith(res.hardest["goal"])
    assert res.verdict.estimate == pytest.approx(res.hardest["nstar"])


def test_result_dicts_name_the_tolerance():
    assert {"confidence_level", "tolerance"} <= set(FACTORIES["NStarResult"]().table.columns)
    data = FACTORIES["GeneralizabilityResult"]().to_dict()
    assert set(data) == {"nstar", "alternatives", "dropped_alternatives", "dropped_conditions",
                         "imputed_worst", "notes"}
    assert "tolerance" in data["nstar"][0] and "delta" not in data["nstar"][0]
    a = FACTORIES["GeneralizabilityAudit"]().to_dict()
    assert a["tolerance"] == 0.05 and a["verdict"]["label"]
    assert {"study", "model", "score", "rank"} <= set(a["ranks"][0])


# -- old names: a FutureWarning and the same result -----------------------------------------

def _old(call):
    with pytest.warns(FutureWarning, match="0.3"):
        return call()


def _same(a, b):
    pd.testing.assert_frame_equal(a.table, b.table)


def test_old_tolerance_name():
    new = estimate_nstar(RANKS, Kernel("jaccard"), tolerance=0.1, n_resamples=30, random_state=1)
    old = _old(lambda: estimate_nstar(RANKS, Kernel("jaccard"), delta=0.1, n_resamples=30,
                                      random_state=1))
    _same(new, old)
    kw = dict(alternative="alt", score="s", factors="cond", n_resamples=20, random_state=0)
    _same(analyze(_table(), tolerance=0.1, **kw),
          _old(lambda: analyze(_table(), delta=0.1, **kw)))
    a_new = audit(_study_scores(), tolerance=0.1, n_resamples=20, random_state=0)
    a_old = _old(lambda: audit(_study_scores(), delta=0.1, n_resamples=20, random_state=0))
    pd.testing.assert_frame_equal(a_new.nstar, a_old.nstar)
    assert _old(lambda: a_new.delta) == a_new.tolerance == 0.1
    fields = {f: getattr(a_new, f) for f in GeneralizabilityAudit.__dataclass_fields__}
    fields["delta"] = fields.pop("tolerance")
    assert _old(lambda: GeneralizabilityAudit(**fields)).tolerance == 0.1

    def run(rng):
        return RANKS[rng.integers(0, len(RANKS))]

    r_new, x_new = iterate_nstar(run, RANKS[:6], Kernel("mallows"), tolerance=0.1,
                                 n_resamples=20, random_state=3)
    r_old, x_old = _old(lambda: iterate_nstar(run, RANKS[:6], Kernel("mallows"), delta=0.1,
                                              n_resamples=20, random_state=3))
    _same(r_new, r_old)
    np.testing.assert_array_equal(x_new, x_old)
    k = Kernel("mallows")
    np.testing.assert_array_equal(_old(lambda: k.epsilon(delta=0.1, n_a=4)),
                                  k.epsilon(tolerance=0.1, n_a=4))
    from replikit.generalize.nstar import check_delta, check_tolerance

    np.testing.assert_array_equal(_old(lambda: check_delta([0.1])), check_tolerance([0.1]))


def test_old_mmd_estimator_name():
    K = Kernel("mallows").gram(RANKS)
    new = mmd_from_gram(K, [0, 1], [2, 3], mmd_estimator="unbiased")
    np.testing.assert_array_equal(
        _old(lambda: mmd_from_gram(K, [0, 1], [2, 3], method="unbiased")), new)
    assert _old(lambda: mmd(RANKS[:3], RANKS[3:6], Kernel("mallows"), method="unbiased")) == \
        mmd(RANKS[:3], RANKS[3:6], Kernel("mallows"), mmd_estimator="unbiased")
    d_new = mmd_distribution(K, n_resamples=10, mmd_estimator="unbiased", random_state=0)
    d_old = _old(lambda: mmd_distribution(K, n_resamples=10, method="unbiased", random_state=0))
    np.testing.assert_array_equal(d_new.values, d_old.values)
    assert _old(lambda: d_new.method) == d_new.mmd_estimator == "unbiased"
    assert _old(lambda: MMDDistribution(n=d_new.n, values=d_new.values, N=d_new.N,
                                        method="unbiased")).mmd_estimator == "unbiased"
    e_new = estimate_nstar(RANKS, Kernel("jaccard"), n_resamples=20, mmd_estimator="unbiased",
                           random_state=0)
    e_old = _old(lambda: estimate_nstar(RANKS, Kernel("jaccard"), n_resamples=20,
                                        method="unbiased", random_state=0))
    _same(e_new, e_old)
    kw = dict(alternative="alt", score="s", factors="cond", n_resamples=20, random_state=0)
    _same(analyze(_table(), mmd_estimator="unbiased", **kw),
          _old(lambda: analyze(_table(), method="unbiased", **kw)))


def test_old_ci_resamples_is_a_bootstrap_method():
    new = estimate_nstar(RANKS, Kernel("jaccard"), n_resamples=20,
                         bootstrap=BootstrapMethod(n_resamples=7), random_state=0)
    old = _old(lambda: estimate_nstar(RANKS, Kernel("jaccard"), n_resamples=20,
                                      ci_resamples=7, random_state=0))
    _same(new, old)
    np.testing.assert_array_equal(new.bootstrap, old.bootstrap)
    none = _old(lambda: estimate_nstar(RANKS, Kernel("jaccard"), n_resamples=20,
                                       ci_resamples=0, random_state=0))
    assert none.bootstrap is None
    kw = dict(alternative="alt", score="s", factors="cond", n_resamples=20, random_state=0)
    a = analyze(_table(), bootstrap=BootstrapMethod(n_resamples=3), **kw)
    b = _old(lambda: analyze(_table(), ci_resamples=3, **kw))
    _same(a, b)
    from replikit.errors import ParameterTypeError

    with pytest.raises(ParameterTypeError, match="`bootstrap`"):
        estimate_nstar(RANKS, Kernel("jaccard"), bootstrap=5)
    with pytest.raises(ParameterTypeError, match="give `bootstrap` only"):
        estimate_nstar(RANKS, Kernel("jaccard"), bootstrap=None, ci_resamples=5)


def test_cli_only_keywords_are_ignored_with_a_warning():
    spec = StudySpec("alt", "s", "cond")
    new = prepare(_table(), spec)
    old = _old(lambda: prepare(_table(), spec, options={"score": "--score"}))
    np.testing.assert_array_equal(new.samples[0].ranks, old.samples[0].ranks)
    assert _old(lambda: new.options) == {}
    rebuilt = _old(lambda: PreparedStudy(spec=new.spec, samples=new.samples,
                                         dropped_conditions=new.dropped_conditions,
                                         dropped_alternatives=(), n_imputed=0, options={}))
    assert rebuilt.samples == new.samples
    assert _old(lambda: parse_goal("jaccard:2", option="--goal")) == parse_goal("jaccard:2")
    assert _old(lambda: parse_goal(text="mallows")) == Kernel("mallows")
    k = Kernel("borda", alternative="a1")
    assert _old(lambda: k.check(["a0", "a1"], option="--goal")) is k
    assert _old(lambda: k.resolve_index(["a0", "a1"], option="x")) == k.resolve_index(
        ["a0", "a1"]) == 1


def test_old_plot_names():
    from replikit._plotting import new_axes
    from replikit.generalize.plots import plot_generalizability, plot_nstar, plot_quantile_fit

    res = estimate_nstar(RANKS, Kernel("jaccard"), tolerance=[0.05, 0.1], n_resamples=20,
                         random_state=0)
    for fn in (plot_quantile_fit, plot_generalizability):
        ax = _old(lambda fn=fn: fn(res, delta=0.1, ax=new_axes()))
        assert ax.get_title() == fn(res, tolerance=0.1, ax=new_axes()).get_title()
    ax = _old(lambda: plot_nstar(res.to_frame(), by="delta", ax=new_axes()))
    assert ax.get_xlabel() == "tolerance δ*"


def test_no_warning_from_the_new_names():
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        for make in FACTORIES.values():
            make()


def test_cli_old_flags_warn_and_give_the_same_table(cli, tmp_path):
    path = tmp_path / "results.csv"
    _table(n_cond=10).to_csv(path, index=False)
    base = ("generalize", path, "--alternative", "alt", "--score", "s", "--factor", "cond",
            "--format", "json")
    code, new, err = cli(*base, "--tolerance", "0.1", "--n-resamples", "20",
                         "--bootstrap-resamples", "2")
    assert code == 0 and "warning: `--" not in err
    code, old, err = cli(*base, "--delta", "0.1", "--resamples", "20", "--ci-resamples", "2")
    assert code == 0 and new == old
    for flag, renamed in (("--delta", "--tolerance"), ("--resamples", "--n-resamples"),
                          ("--ci-resamples", "--bootstrap-resamples")):
        assert f"`{flag}` is now `{renamed}`" in err

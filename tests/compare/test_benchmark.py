"""Comparisons across datasets from a benchmark table (one score per model and dataset).

References: Demšar (2006) Table 6 (AUC of four C4.5 variants on 14 UCI data sets, published CD
1.25 at alpha 0.05) and the 10x10-CV accuracies of five classifiers on 54 UCI data sets
published with baycomp (averaged per data set), both in tests/reference/compare/; the oracles
are scipy.stats.friedmanchisquare and autorank (a dev extra) computed live.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from replikit.compare import BenchmarkComparison, compare_benchmark, read_benchmark
from replikit.errors import DataError, ParameterError

REF = Path(__file__).parents[1] / "reference" / "compare"


def demsar_wide() -> pd.DataFrame:
    d = json.loads((REF / "demsar2006.json").read_text())
    wide = pd.DataFrame(d["auc"], columns=d["models"])
    wide.insert(0, "dataset", d["datasets"])
    return wide


def baycomp_long() -> pd.DataFrame:
    """Classifier x data set mean accuracy (%) over the 100 published fold accuracies; the
    second of the two data sets printed as 'credit' is labelled 'credit (2)'."""
    rows, name, seen = [], None, set()
    for line in (REF / "baycomp_accuracies.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) == 1:
            name, seen = parts[0], set()
        elif parts:
            label = parts[0] if parts[0] not in seen else parts[0] + " (2)"
            seen.add(parts[0])
            rows.append((label, name, float(np.mean(np.array(parts[1:], dtype=float)))))
    return pd.DataFrame(rows, columns=["dataset", "model", "accuracy"])


def test_demsar_table_against_scipy_autorank_and_the_paper():
    wide = demsar_wide()
    res = compare_benchmark(wide, n_resamples=2000, random_state=0)
    assert isinstance(res, BenchmarkComparison)
    values = wide.drop(columns="dataset").to_numpy()
    ref = stats.friedmanchisquare(*values.T)
    assert res.friedman.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert res.friedman.pvalue == pytest.approx(ref.pvalue, rel=1e-8)
    assert res.nemenyi.critical_distance == pytest.approx(1.25, abs=0.005)  # Demšar 3.2.2
    autorank = pytest.importorskip("autorank")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ar = autorank.autorank(wide.set_index("dataset"), alpha=0.05,
                               force_mode="nonparametric", verbose=False)
    assert ar.omnibus == "friedman"
    assert res.friedman.pvalue == pytest.approx(ar.pvalue, rel=1e-8)
    assert res.nemenyi.critical_distance == pytest.approx(ar.cd, rel=1e-4)
    for model, rank in ar.rankdf["meanrank"].items():
        assert res.friedman.mean_ranks[model] == pytest.approx(rank, rel=1e-12)
    assert res.skipped and "fold scores" in next(iter(res.skipped.values()))


def test_long_and_wide_give_the_same_numbers():
    long = baycomp_long()
    wide = long.pivot(index="dataset", columns="model", values="accuracy")
    wide = wide[["j48", "nbc", "hnb", "aode", "j48gr"]].reset_index()  # another model order
    rl = compare_benchmark(long, tolerance=1.0, n_resamples=4000, random_state=3)
    rw = compare_benchmark(wide, tolerance=1.0, n_resamples=4000, random_state=3)
    assert rl.table.shape == (54, 5)
    assert rl.friedman.statistic == pytest.approx(rw.friedman.statistic, rel=1e-12)
    assert rl.nemenyi.critical_distance == rw.nemenyi.critical_distance
    ref = stats.friedmanchisquare(*rl.table.to_numpy().T)
    assert rl.friedman.statistic == pytest.approx(ref.statistic, rel=1e-10)
    fl = rl.to_frame().set_index(["a", "b"])
    fw = rw.to_frame().set_index(["a", "b"])
    for (a, b), row in fl.iterrows():
        other = fw.loc[(a, b)] if (a, b) in fw.index else None
        if other is None:  # the same pair the other way round
            other = fw.loc[(b, a)]
            assert row["rank_difference"] == pytest.approx(-other["rank_difference"])
        else:
            assert row["rank_difference"] == pytest.approx(other["rank_difference"])
        assert row["holm_pvalue"] == pytest.approx(other["holm_pvalue"], rel=1e-12)
    # one pair, same random_state: the Bayesian test's probabilities are identical
    one_l = compare_benchmark(long, "nbc", "j48", tolerance=1.0, n_resamples=4000)
    one_w = compare_benchmark(wide, "nbc", "j48", tolerance=1.0, n_resamples=4000)
    pd.testing.assert_frame_equal(one_l.bayesian, one_w.bayesian)
    # baycomp's documentation: two_on_multiple(nbc, j48, rope=1) = (0.23014, 0.00674, 0.76312),
    # its left being j48 worse; here a = nbc, so the order turns round
    got = one_l.bayesian.iloc[0][["p_worse", "p_rope", "p_better"]].to_numpy(dtype=float)
    published = np.array([0.76312, 0.00674, 0.23014])
    se = np.sqrt(published * (1 - published) / 4000)
    assert np.all(np.abs(got - published) < 4 * np.sqrt(2) * se + 1e-9)


def test_lower_is_better_mirrors_higher_is_better():
    wide = baycomp_long().pivot(index="dataset", columns="model", values="accuracy")
    errors = 100 - wide
    up = compare_benchmark(wide, tolerance=1.0, n_resamples=3000, random_state=1)
    down = compare_benchmark(errors, higher_is_better=False, tolerance=1.0, n_resamples=3000,
                             random_state=1)
    pd.testing.assert_series_equal(up.friedman.mean_ranks, down.friedman.mean_ranks)
    np.testing.assert_allclose(up.bayesian[["p_worse", "p_rope", "p_better"]],
                               down.bayesian[["p_worse", "p_rope", "p_better"]], atol=1e-12)
    assert list(up.bayesian["decision"]) == list(down.bayesian["decision"])


def test_bad_input_names_the_column_or_parameter():
    long = baycomp_long()
    with pytest.raises(DataError, match="`dataset_column`.*'nope'"):
        read_benchmark(long, dataset_column="nope")
    with pytest.raises(DataError, match="`score_column`.*found 2"):
        read_benchmark(long.assign(extra=1.0))
    with pytest.raises(DataError, match="one value per model and dataset"):
        read_benchmark(pd.concat([long, long]))
    with pytest.raises(DataError, match="per-fold scores"):
        read_benchmark(long.assign(fold=0))
    with pytest.raises(DataError, match="misses 1 score.*'j48'"):
        read_benchmark(long.drop(index=long.index[long["model"] == "j48"][0]))
    with pytest.raises(ParameterError, match="`a`: no model 'svm'"):
        compare_benchmark(long, "svm", n_resamples=100)


def _write(tmp_path, frame):
    path = tmp_path / "bench.csv"
    frame.to_csv(path, index=False)
    return path


def test_cli_benchmark_json_matches_scipy(tmp_path, cli):
    wide = baycomp_long().pivot(index="dataset", columns="model", values="accuracy")
    code, out, err = cli("--format", "json", "compare", _write(tmp_path, wide.reset_index()),
                         "--tolerance", "1")
    assert code == 0, err
    got = json.loads(out)
    ref = stats.friedmanchisquare(*wide.to_numpy().T)
    assert got["entry"] == "benchmark"
    assert got["friedman"]["statistic"] == pytest.approx(ref.statistic, rel=1e-10)
    assert got["friedman"]["pvalue"] == pytest.approx(ref.pvalue, rel=1e-8)
    assert "corrected resampled tests" in got["skipped"]
    assert len(got["pairs"]) == 10


def test_cli_benchmark_columns_by_flag_and_errors_exit_2(tmp_path, cli):
    long = baycomp_long().rename(columns={"dataset": "uci", "model": "learner_name"})
    path = _write(tmp_path, long)
    code, out, err = cli("compare", path, "--dataset", "uci", "--model-column", "learner_name",
                         "--tolerance", "1")
    assert code == 0, err
    assert "54 datasets" in out and "Skipped: corrected resampled tests" in err
    code, out, err = cli("compare", path, "--dataset", "nope", "--model-column", "learner_name")
    assert code == 2 and "`--dataset`" in err and "'nope'" in err
    code, out, err = cli("compare", path)  # no model column recognised
    assert code == 2 and "`--model-column`" in err
    code, out, err = cli("compare", path, "--dataset", "uci", "--model-column", "learner_name",
                         "--study", "x")
    assert code == 2 and "`--study`" in err


def test_missing_scores_column_is_not_named_as_a_flag(tmp_path, cli):
    path = tmp_path / "scores.csv"
    pd.DataFrame({"study": ["s"], "model": ["a"], "repeat": [0], "value": [1.0]}).to_csv(
        path, index=False)
    code, out, err = cli("compare", path)
    assert code == 2
    assert "'fold', 'metric'" in err and "`--metric`" not in err


def test_columns_mapping_reads_scores_not_a_benchmark(tmp_path, cli):
    """A per-fold table in another layout, mapped with --columns, is compared as Scores."""
    long = baycomp_long()
    two = long[long["model"].isin(["nbc", "j48"]) & long["dataset"].isin(["iris", "wine"])]
    rows = [dict(task=r.dataset, algo=r.model, cv_fold=f, measure="accuracy",
                 score=r.accuracy / 100 - 0.1 * f) for r in two.itertuples() for f in range(5)]
    path = _write(tmp_path, pd.DataFrame(rows))
    code, out, err = cli("compare", path, "--columns",
                         "study=task,model=algo,fold=cv_fold,metric=measure,value=score")
    assert code == 0, err
    assert "Benchmark" not in out and "Benchmark table" not in err


def test_benchmark_with_missing_cells_runs_skillings_mack(tmp_path, cli):
    long = baycomp_long()
    drop = long.index[(long["model"] == "j48")][:3]
    holes = long.drop(index=drop)
    res = compare_benchmark(holes, n_resamples=200, random_state=0)
    assert len(res.missing) == 3 and "Skillings-Mack" in res.friedman.method
    assert "Missing cells (3" in str(res)
    frame = res.to_frame()
    assert {"n", "rank_biserial", "rank_biserial_ci_low", "mean_difference_ci_high"} <= set(frame)
    path = _write(tmp_path, holes)
    code, out, err = cli("compare", str(path), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["missing"]) == 3 and "rank_biserial" in data["pairs"][0]
    code, out, err = cli("compare", str(path))
    assert code == 0 and "Missing cells (3" in err and "Skillings-Mack" in out
    assert "rank-biserial" in out


def test_an_infinite_score_is_named_as_such():
    """BIG-bench's 0-shot table holds a -inf score: it is not a missing one."""
    from replikit.compare import read_benchmark

    long = pd.DataFrame({"task": ["t1", "t1", "t2", "t2"], "model": ["a", "b"] * 2,
                         "score": [0.5, -np.inf, 0.4, 0.3]})
    for allow in (False, True):
        with pytest.raises(DataError, match=r"1 infinite score.*'t1', model 'b' \(-inf\)"):
            read_benchmark(long, allow_missing=allow)

"""CD diagram (Demšar 2006, Figure 1a) and the forest plot of tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from replikit._plotting import new_figure, svg_inline
from replikit.compare.multiple import nemenyi_test
from replikit.compare.plots import plot_cd_diagram, plot_comparisons
from replikit.compare.predictions import mcnemar_test_from_table
from replikit.errors import DataError, ParameterTypeError

DEMSAR = json.loads((Path(__file__).parents[1] / "reference" / "compare" / "demsar2006.json")
                    .read_text())


def _lines(ax, gid):
    return [line for line in ax.get_lines() if line.get_gid() == gid]


@pytest.fixture
def printed_ranks():
    return pd.DataFrame(DEMSAR["printed_ranks"], columns=DEMSAR["models"])


@pytest.mark.parametrize("alpha,n_cliques", [(0.05, 1), (0.10, 2)])
def test_cd_diagram_demsar_figure1(printed_ranks, alpha, n_cliques):
    res = nemenyi_test(printed_ranks, alpha=alpha, higher_is_better=False, tie_correction=False)
    ax = plot_cd_diagram(res)
    bars = _lines(ax, "clique")
    assert len(bars) == n_cliques
    # each bar spans the mean ranks of its clique (the diagram's x is the rank axis)
    for bar, group in zip(bars, res.cliques(), strict=True):
        xs = bar.get_xdata()
        ranks = res.mean_ranks[list(group)]
        assert min(xs) < ranks.min() and max(xs) > ranks.max()
        assert max(xs) - min(xs) < res.critical_distance + 0.1
    assert len(_lines(ax, "model")) == 4
    # best ranks on the right: the x axis is reversed
    left, right = ax.get_xlim()
    assert left > right
    texts = [t.get_text() for t in ax.texts]
    assert "CD" in texts and any("C4.5+m+cf" in t for t in texts)
    cd_line = _lines(ax, "cd")[0]
    assert np.ptp(cd_line.get_xdata()) == pytest.approx(res.critical_distance)


def test_cd_diagram_no_clique_when_all_differ():
    # 40 datasets with the same strict order: mean ranks 1, 2, 3 > CD apart
    x = np.tile([3.0, 2.0, 1.0], (40, 1))
    res = nemenyi_test(x)
    assert res.significant.to_numpy().sum() == 6
    ax = plot_cd_diagram(res)
    assert _lines(ax, "clique") == []


def test_cd_diagram_on_given_axes_renders_svg(printed_ranks):
    fig = new_figure(6, 3)
    ax = fig.add_subplot()
    out = plot_cd_diagram(nemenyi_test(printed_ranks, higher_is_better=False), ax=ax,
                          title="AUC")
    assert out is ax and ax.get_title(loc="left") == "AUC"
    svg = svg_inline(fig)
    assert svg.startswith("<svg") and "C4.5+cf" in svg


def test_cd_diagram_type_error():
    with pytest.raises(ParameterTypeError, match="NemenyiResult"):
        plot_cd_diagram(pd.DataFrame({"a": [1]}))


def _table():
    return pd.DataFrame({
        "test": ["corrected_repeated_kfold_t", "combined_f_5x2cv", "naive_paired_t"],
        "a": "rf", "b": "lr", "metric": "accuracy",
        "estimate": [0.02, 0.02, 0.02], "ci_low": [-0.005, np.nan, 0.012],
        "ci_high": [0.045, np.nan, 0.028], "valid": [True, True, False],
        "pvalue": [0.11, 0.25, 1e-5],
    })


def test_plot_comparisons_rows_and_grey_invalid():
    ax = plot_comparisons(_table())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["corrected repeated k-fold t-test", "5x2cv combined F test",
                      "naive paired t-test (invalid)"]
    valid_lines, invalid_lines = _lines(ax, "valid"), _lines(ax, "invalid")
    assert len(valid_lines) + len(invalid_lines) == 3 and len(invalid_lines) == 1
    assert invalid_lines[0].get_color() == "0.6"
    # the interval drawn is the one given; the F test has no interval
    drawn = [line for line in valid_lines if len(line.get_xdata())]
    assert len(drawn) == 1 and list(drawn[0].get_xdata()) == [-0.005, 0.045]
    notes = [t.get_text() for t in ax.texts]
    assert any("invalid" in t for t in notes)
    assert any("p < 0.001" in t for t in notes) and any("p = 0.11" in t for t in notes)


def test_plot_comparisons_labels_vary_with_pairs_and_metrics():
    t = pd.concat([_table(), _table().assign(metric="auc", a="knn")], ignore_index=True)
    ax = plot_comparisons(t)
    labels = [x.get_text() for x in ax.get_yticklabels()]
    assert labels[0] == "corrected repeated k-fold t-test: rf − lr, accuracy"
    assert labels[3] == "corrected repeated k-fold t-test: knn − lr, auc"


def test_plot_comparisons_from_result_and_errors():
    res = mcnemar_test_from_table([[50, 12], [4, 30]])
    ax = plot_comparisons(res)
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "McNemar's test (Edwards' correction)"]
    with pytest.raises(DataError, match="valid"):
        plot_comparisons(_table().drop(columns="valid"))
    with pytest.raises(ParameterTypeError):
        plot_comparisons([1, 2, 3])
    with pytest.raises(DataError, match="no rows"):
        plot_comparisons(_table().iloc[:0])

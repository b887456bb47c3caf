"""The validity-table helpers of replikit._calibration: row bands (closed forms), stacking,
the check the suite fails on, the text table and the figure."""

import math
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from replikit._calibration import (
    COLUMNS,
    QUANTITIES,
    bias_row,
    check_table,
    format_table,
    plot_validity,
    rate_row,
    stack_tables,
)
from replikit._plotting import save_svg
from replikit.errors import DataError, ParameterError, ParameterTypeError


def _table():
    return stack_tables([[
        rate_row("replicate", "R2 CI", "lee", "n=133", "coverage", hits=946,
                 n_replications=1000, nominal=0.95),
        rate_row("replicate", "R2 CI", "olkin_finn", "n=133", "coverage", hits=220,
                 n_replications=1000, nominal=0.95),
        rate_row("replicate", "R2 CI", "cohen", "n=133", "coverage", hits=100,
                 n_replications=1000, nominal=0.95, claim="documented"),
    ], [
        rate_row("compare", "null", "paired_t_5x2cv", "n=300", "size", hits=27,
                 n_replications=300, nominal=0.05, claim="invalid"),
        rate_row("compare", "null", "corrected_resampled_t", "n=300", "size", hits=3,
                 n_replications=300, nominal=0.05),
        rate_row("compare", "alternative", "corrected_resampled_t", "n=300", "power",
                 hits=200, n_replications=300, nominal=0.05),
        bias_row("generalize", "n*", "mallows", "N=20", estimates=[36.0, 38.0, 37.0, 39.0],
                 truth=37.0, tolerance=0.1),
    ]])


# --- rows ------------------------------------------------------------------------------------

def test_rate_row_band_closed_form():
    r = rate_row("c", "s", "m", "x", "coverage", hits=925, n_replications=1000, nominal=0.95)
    half = 3 * math.sqrt(0.95 * 0.05 / 1000)
    assert r["lower"] == pytest.approx(0.95 - half) and r["upper"] == pytest.approx(0.95 + half)
    assert r["mc_se"] == pytest.approx(math.sqrt(0.925 * 0.075 / 1000))
    assert r["within"] is False  # 0.925 < 0.95 - 0.0207
    s = rate_row("c", "s", "m", "x", "size", hits=0, n_replications=400, nominal=0.05,
                 slack=0.01)
    assert s["lower"] == 0.0 and s["upper"] == pytest.approx(0.05 + 3 * math.sqrt(
        0.05 * 0.95 / 400) + 0.01)
    assert s["within"] is True  # a conservative test holds its level
    p = rate_row("c", "s", "m", "x", "power", hits=10, n_replications=400, nominal=0.05)
    assert (p["lower"], p["upper"]) == (0.0, 1.0)


def test_band_holds_a_calibrated_rate_about_997_in_1000():
    # a calibrated method (true rate = nominal) leaves the 3-SE band with probability
    # P(|Z| > 3) = 0.0027 (binomial, n = 400: a little more at the discrete edges)
    hits = np.random.default_rng(0).binomial(400, 0.95, size=4000)
    outside = np.mean([not rate_row("c", "s", "m", "x", "coverage", hits=int(h),
                                    n_replications=400, nominal=0.95)["within"]
                       for h in hits])
    assert outside < 0.01


def test_bias_row_closed_form():
    values = np.array([46.0, 50.0, 48.0, 52.0])
    r = bias_row("g", "n*", "jaccard", "N=10", estimates=values, truth=37.0, tolerance=0.1)
    assert r["estimate"] == pytest.approx((values.mean() - 37) / 37)
    assert r["mc_se"] == pytest.approx(values.std(ddof=1) / 2 / 37)
    assert r["upper"] == pytest.approx(0.1 + 3 * r["mc_se"]) and r["within"] is False
    a = bias_row("g", "n*", "jaccard", "N=10", estimates=values, truth=37.0, relative=False,
                 tolerance=1.0)
    assert a["quantity"] == "bias" and a["estimate"] == pytest.approx(12.0)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(hits=11, n_replications=10, nominal=0.95), "`hits`"),
    (dict(hits=1, n_replications=0, nominal=0.95), "`n_replications`"),
    (dict(hits=1, n_replications=10, nominal=95), "`nominal`"),
])
def test_rate_row_refuses_impossible_counts(kwargs, needle):
    with pytest.raises(ParameterError, match=needle):
        rate_row("c", "s", "m", "x", "coverage", **kwargs)


def test_unknown_quantity_or_claim():
    with pytest.raises(ParameterError, match="`quantity`"):
        rate_row("c", "s", "m", "x", "bias", hits=1, n_replications=10, nominal=0.5)
    with pytest.raises(ParameterError, match="`claim`"):
        rate_row("c", "s", "m", "x", "size", hits=1, n_replications=10, nominal=0.05,
                 claim="fine")


# --- tables ----------------------------------------------------------------------------------

def test_stack_keeps_order_columns_and_extras():
    extra = pd.DataFrame([rate_row("compare", "s", "m", "x", "size", hits=1,
                                   n_replications=10, nominal=0.05)]).assign(note="hi")
    t = stack_tables([_table(), extra])
    assert list(t.columns) == [*COLUMNS, "note"]
    assert list(t["capability"]) == ["replicate"] * 3 + ["compare"] * 3 + ["generalize",
                                                                           "compare"]
    assert t.index.tolist() == list(range(8))
    assert stack_tables([]).columns.tolist() == list(COLUMNS)


def test_stack_refuses_a_table_that_is_not_validity_rows():
    with pytest.raises(DataError, match="lacks the validity column.*mc_se"):
        stack_tables([_table().drop(columns="mc_se")])
    with pytest.raises(DataError, match="`claim` holds \\['fine'\\]"):
        stack_tables([_table().assign(claim="fine")])
    with pytest.raises(DataError, match="`quantity` holds"):
        stack_tables([_table().assign(quantity="rate")])
    with pytest.raises(ParameterTypeError, match="DataFrame"):
        stack_tables(["not a table"])


def test_check_table_returns_the_calibrated_rows_outside_their_band():
    t = _table()
    failing = check_table(t)
    # olkin_finn (calibrated, .22) fails; cohen (documented) and the 5x2 t (invalid) do not;
    # power rows have no band; the bias row is inside
    assert failing.index.tolist() == [1]
    assert failing["method"].tolist() == ["olkin_finn"]


def test_check_table_recomputes_the_band_and_fails_nan():
    t = _table()
    t.loc[1, "within"] = True  # a stale flag is not trusted
    t.loc[0, "estimate"] = float("nan")  # a calibrated method that gives no number fails
    assert check_table(t).index.tolist() == [0, 1]
    assert check_table(t[t["claim"] != "calibrated"]).empty


def test_format_table_status_and_numbers():
    text = format_table(_table())
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["capability", "study"] and len(lines) == 8
    by_method = {line.split()[3] if line.startswith("replicate") else "": line
                 for line in lines[1:]}
    assert by_method["olkin_finn"].rstrip().endswith("FAIL")
    assert "0.220 ± 0.013" in by_method["olkin_finn"]
    assert by_method["cohen"].rstrip().endswith("outside")
    assert by_method["lee"].rstrip().endswith("ok")
    bias_line = next(line for line in lines if line.startswith("generalize"))
    assert "+0.014 ±" in bias_line and "relative_bias" in bias_line
    one = format_table(_table().iloc[:1])
    assert not one.startswith("capability")  # one capability: no column for it


# --- figure ----------------------------------------------------------------------------------

def test_plot_one_panel_per_quantity_in_order(tmp_path):
    t = _table()
    axes = plot_validity(t)
    wanted = [q for q in QUANTITIES if q in set(t["quantity"])]
    assert len(axes) == len(wanted) == 4
    assert [a.get_xlabel().split(" ")[0] for a in axes] == ["coverage", "type", "power",
                                                            "relative"]
    labels = [tick.get_text() for tick in axes[0].get_yticklabels()]
    assert labels[0] == "replicate · R2 CI: lee (n=133)"  # top row first
    fail = [tick for tick in axes[0].get_yticklabels() if "olkin_finn" in tick.get_text()]
    assert fail[0].get_fontweight() == "bold"
    ok = [tick for tick in axes[0].get_yticklabels() if "lee" in tick.get_text()]
    assert ok[0].get_fontweight() != "bold"
    root = ET.parse(save_svg(axes[0].figure, tmp_path / "v.svg")).getroot()
    assert root.tag.endswith("svg")


def test_plot_on_given_axes():
    from replikit._plotting import new_figure

    t = _table()
    one = t[t["quantity"] == "coverage"]
    fig = new_figure()
    ax = fig.add_subplot()
    assert plot_validity(one, ax=ax) == [ax]
    with pytest.raises(ParameterError, match="4 quantities"):
        plot_validity(t, ax=ax)
    with pytest.raises(DataError, match="no rows"):
        plot_validity(t.iloc[:0])

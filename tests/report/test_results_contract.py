"""The audit's result keeps the contract of :class:`replikit.results.Result`
(``_checks.check_result``): a real report, written by ``run_audit`` on a small dataset, prints
its summary, shows its cards in a notebook and has one row per section in ``to_frame()``; and
the keywords ``run_audit`` no longer needs keep working for one release, with a FutureWarning.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
import warnings

import numpy as np
import pandas as pd
import pytest

from _checks import assert_plain, check_result


def _frame(n=80, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "site": np.repeat(["a", "b", "c", "d"], n // 4)})
    df["y"] = df["x"] - 0.5 * df["z"] + rng.normal(size=n)
    return df


@functools.cache
def _audit_report():
    from sklearn.dummy import DummyRegressor
    from sklearn.linear_model import LinearRegression

    from replikit.data.userdata import dataset_from_frame
    from replikit.report import run_audit

    ds = dataset_from_frame(_frame(), target="y", study="site", name="toy")
    out = tempfile.mkdtemp(prefix="replikit-contract-")
    atexit.register(shutil.rmtree, out, True)
    return run_audit(ds, out,
                     models={"lr": LinearRegression(), "dummy": DummyRegressor()},
                     sections=["overview", "resampling", "compare"], quick=True,
                     random_state=0, n_jobs=1)


@functools.cache
def _audit():
    import replikit

    table = pd.DataFrame({"dataset": [f"d{i}" for i in range(6)],
                          "a": [0.81, 0.77, 0.90, 0.66, 0.72, 0.85],
                          "b": [0.79, 0.78, 0.88, 0.61, 0.70, 0.80]})
    return replikit.audit(benchmark=table, sections=["overview", "compare"], random_state=0)


FACTORIES = {"AuditReport": _audit_report, "Audit": _audit}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    check_result(FACTORIES[name]())


def test_audit_report_shows_its_cards_and_one_row_per_section():
    report = _audit_report()
    frame = report.to_frame()
    assert list(frame["section"]) == ["overview", "resampling", "compare"]
    assert set(frame["state"]) <= {"good", "warn", "bad", "info", "skipped"}
    compare = frame.set_index("section").loc["compare"]
    assert compare["label"] and compare["sentence"]
    html = report._repr_html_()
    assert html.count('class="card ') == 2 and "rk-cards" in html  # resampling, compare
    assert compare["label"] in html
    text = str(report)
    assert text.startswith("Replicability audit") and compare["label"] in text
    assert_plain(text + html, "the audit report's views")
    data = report.to_dict()
    assert [c["key"] for c in data["summary"]] == ["resampling", "compare"]
    assert data["html_path"].endswith("report.html")


def test_old_option_keywords_of_run_audit_warn_and_still_work(tmp_path):
    from replikit.data.userdata import dataset_from_frame
    from replikit.errors import OutputExistsError
    from replikit.report import run_audit

    ds = dataset_from_frame(_frame(40), target="y", study="site")
    (tmp_path / "report.html").write_text("")
    with pytest.raises(OutputExistsError, match="`out_dir`.*`overwrite`"):
        run_audit(ds, tmp_path, sections=["overview"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(OutputExistsError, match="`out_dir`.*`overwrite`"):
            run_audit(ds, tmp_path, sections=["overview"], out_option="--out",
                      overwrite_option="--overwrite")
    assert [w.category for w in caught] == [FutureWarning, FutureWarning]

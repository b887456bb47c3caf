"""Audit section and command line of replikit.generalize."""

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from replikit.cli import app, main
from replikit.report.audit import example_dataset
from replikit.report.context import AuditContext
from replikit.report.sections.generalize import build

REF = Path(__file__).resolve().parents[1] / "reference" / "generalize"


def test_audit_section_on_anes_quick():
    ctx = AuditContext(dataset=example_dataset("anes"), random_state=0, quick=True)
    out = build(ctx)
    assert not out.skipped
    t = out.data["nstar"]
    assert set(t["kernel"]) >= {"mallows", "jaccard(k=1)"}
    assert np.all(t["nstar"] >= 1) and out.data["N"] == 10
    # ranks shown to users: 1 = best, dense per study
    r = out.data["ranks"].drop(columns="study").to_numpy()
    assert r.min() == 1 and np.all(r.min(axis=1) == 1)
    json.dumps(out.json(), allow_nan=False)


def test_section_skips_single_study():
    d = example_dataset("anes")
    one = type(d)(name=d.name, X=d.X, y=d.y, study=None, task=d.task, n_dropped=0)
    assert "studies" in build(AuditContext(dataset=one, quick=True)).skipped


def test_cli_json_and_errors(tmp_path, capsys):
    runner = CliRunner()
    args = ["generalize", str(REF / "encoders_results.csv.gz"), "--alternative", "encoder",
            "--score", "cv_score", "--factor", "dataset", "--design", "scoring",
            "--hold", "model=DTC", "--hold", "tuning=full", "--goal", "jaccard:1",
            "--goal", "borda:OHE", "--n-resamples", "200", "--grid", "even", "--out", str(tmp_path)]
    res = runner.invoke(app, ["--format", "json", *args])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    rows = data["nstar"]
    assert len(rows) == 8 and {r["kernel"] for r in rows} == {"jaccard(k=1)", "borda(OHE)"}
    acc = [r for r in rows if r["scoring"] == "ACC" and r["kernel"] == "jaccard(k=1)"][0]
    assert 22 < acc["nstar"] < 34   # paper: 28
    assert (tmp_path / "generalize_nstar.csv").exists()
    assert any(p.suffix == ".svg" for p in tmp_path.iterdir())
    with pytest.raises(SystemExit) as exc:
        main([*args[:-2], "--goal", "borda:NOPE"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "NOPE" in err[0]


def test_plots_draw_dollar_labels_literally():
    """A `$` in a label is text, not mathtext (before: ParseSyntaxException on '$^$'), whether
    the figure is rendered by replikit (svg_document) or by the user's own savefig; log-axis
    ticks are plain numbers either way."""
    import io
    import xml.etree.ElementTree as ET

    from replikit._plotting import svg_document
    from replikit.generalize import Kernel, estimate_nstar
    from replikit.generalize.plots import plot_generalizability, plot_nstar, plot_quantile_fit

    r = np.array([[0, 1, 2], [1, 0, 2], [0, 0, 1], [2, 1, 0]] * 4)
    res = estimate_nstar(r, Kernel("borda", alternative="$^$"), alternatives=["$^$", "b", "c"],
                         n_resamples=30, random_state=0)
    for ax in (plot_quantile_fit(res), plot_generalizability(res),
               plot_nstar(res.to_frame().assign(kernel="borda($m1$)"))):
        buf = io.StringIO()
        ax.figure.savefig(buf, format="svg")          # mathtext enabled: must not raise
        svg = svg_document(ax.figure)
        ET.fromstring(svg.encode())
        assert "$^$" in svg or "$m1$" in svg
        assert "mathdefault" not in svg and "\\$" not in svg

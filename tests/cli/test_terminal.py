"""Terminal output: every command's human output fits 120 columns without
splitting a number, plain text off a terminal; JSON unchanged; progress bars only on a
terminal; ``audit --open``."""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from replikit.cli import _common
from replikit.cli._common import (
    OutputFormat,
    fmt_interval,
    fmt_number,
    fmt_pvalue,
    frame_table,
    progress,
    render,
    state,
)

WIDTH = 120


@pytest.fixture(autouse=True)
def _width(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    yield
    state.format, state.quiet = OutputFormat.human, False


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Small inputs for every command (the same draws as the outputs captured before the
    change, whose JSON values are checked below)."""
    d = tmp_path_factory.mktemp("terminal")
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "site": np.repeat(["north", "south", "east"], n // 3)})
    df["y"] = df.x1 + 0.5 * rng.normal(size=n)
    df["label"] = np.where(df.y + 0.5 * rng.normal(size=n) > 0, "pos", "neg")
    df.to_csv(d / "small.csv", index=False)
    pd.DataFrame({"study": [f"Study {i}" for i in range(8)], "yi": rng.normal(0.3, 0.2, 8),
                  "vi": rng.uniform(0.01, 0.05, 8)}).to_csv(d / "meta.csv", index=False)
    rows = []
    means = {"lr": 0.7, "rf": 0.75, "gb": 0.76, "knn": 0.6, "a_very_long_model_name": 0.74}
    for k in range(12):
        for m, mu in means.items():
            rows.append({"dataset": f"ds{k}", "model": m, "score": rng.normal(mu, 0.03)})
    pd.DataFrame(rows).to_csv(d / "gen.csv", index=False)
    pd.DataFrame({"study": ["original", "rep A", "rep B", "rep C"],
                  "value": [0.31, 0.28, 0.22, 0.35], "n": [500, 400, 800, 300],
                  "k": [5] * 4}).to_csv(d / "rep.csv", index=False)
    return d


@pytest.fixture(scope="module")
def fitted(files):
    """Scores and predictions of three models on small.csv (written by `replikit run`)."""
    from replikit.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--quiet", "run", "--data", str(files / "small.csv"), "--target", "y",
              "--study", "site", "--scheme", "5x2", "--models", "lr,ridge,dummy",
              "--out", str(files / "scores.csv"), "--predictions", str(files / "preds.csv")])
    assert exc.value.code == 0
    return files


def _commands(d: Path) -> dict:
    return {
        "estimate": ["estimate", "--data", d / "small.csv", "--target", "label",
                     "--n-resamples", "50"],
        "run": ["run", "--data", d / "small.csv", "--target", "y", "--study", "site",
                "--scheme", "5x2", "--models", "lr,dummy", "--out", d / "run_out.csv",
                "--overwrite"],
        "compare": ["compare", d / "scores.csv"],
        "compare_fit": ["compare", "--data", d / "small.csv", "--target", "label",
                        "--models", "lr,knn", "--scheme", "5x2"],
        "replicate": ["replicate", d / "rep.csv"],
        "meta": ["meta", d / "meta.csv", "--leave-one-out"],
        "multistudy": ["multistudy", d / "preds.csv", "--n-resamples", "50",
                       "--permutation-resamples", "49", "--model", "lr"],
        "crossstudy": ["crossstudy", "--data", d / "small.csv", "--target", "label",
                       "--study", "site", "--models", "lr", "--stacking"],
        "generalize": ["generalize", d / "gen.csv", "--alternative", "model", "--score",
                       "score", "--factor", "dataset", "--n-resamples", "50"],
        "simulate_resampling": ["simulate", "resampling", "--n-experiments", "20"],
        "simulate_tests": ["simulate", "tests", "--n-datasets", "10", "--differences", "0,0.1",
                           "--n-repeats", "2", "--tests",
                           "corrected_resampled_t,paired_t_5x2cv"],
        "simulate_replication": ["simulate", "replication", "--n-repeats", "2",
                                 "--n-studies", "3", "--n-per-study", "200", "--models", "lr"],
    }


# a number as the tables print it: -0.0009727, 5795, 7.20e-09, 0.01
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]\d+)?")


def _check_fits(out: str) -> None:
    lines = out.split("\n")
    too_long = [line for line in lines if len(line) > WIDTH]
    assert not too_long, "\n".join(too_long)
    assert "\x1b" not in out  # plain text off a terminal


def _assert_whole(out: str, numbers) -> None:
    """Each formatted number appears whole on one line (none split across lines)."""
    lines = out.split("\n")
    for text in numbers:
        if text == "–":
            continue
        assert any(re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", ln) for ln in lines), (
            f"{text!r} not whole on any line")


@pytest.mark.parametrize("name", list(_commands(Path("."))))
def test_every_command_fits_120_columns(cli, fitted, name):
    code, out, err = cli(*_commands(fitted)[name])
    assert code == 0, err
    assert out.strip()
    _check_fits(out)


def test_compare_numbers_are_never_split(cli, fitted):
    code, out, err = cli("compare", fitted / "scores.csv")
    assert code == 0, err
    _check_fits(out)
    code, js, _ = cli("--format", "json", "compare", fitted / "scores.csv")
    records = json.loads(js)
    nan = float("nan")
    _assert_whole(out, [fmt_number(r["estimate"]) for r in records])
    _assert_whole(out, [fmt_pvalue(r["pvalue"] if r["pvalue"] is not None else nan)
                        for r in records])
    _assert_whole(out, [fmt_interval(r["ci_low"], r["ci_high"]) for r in records
                        if r["ci_low"] is not None])
    # the Bayesian posterior probabilities: three numbers, none cut
    for r in records:
        if r["test"] == "bayesian_correlated_t":
            _assert_whole(out, [f"{r['p_left']:.2f}", f"{r['p_rope']:.2f}"])


def test_meta_and_replicate_numbers_whole(cli, fitted):
    code, out, _ = cli("meta", fitted / "meta.csv", "--leave-one-out")
    code, js, _ = cli("--format", "json", "meta", fitted / "meta.csv", "--leave-one-out")
    loo = json.loads(js)["leave_one_out"]
    _assert_whole(out, [fmt_number(r[k]) for r in loo for k in ("estimate", "ci_low", "tau2")])
    code, out, _ = cli("replicate", fitted / "rep.csv")
    code, js, _ = cli("--format", "json", "replicate", fitted / "rep.csv")
    reps = json.loads(js)["replications"]
    _assert_whole(out, [fmt_number(r[k]) for r in reps for k in ("difference", "ci_low")])


# --------------------------------------------------------------------------- JSON unchanged

# `replikit --format json estimate --data small.csv --target label --n-resamples 50` as printed
# before the terminal output went through rich (commit e127cc8)
ESTIMATE_BEFORE = [
    ("resubstitution", 0.09333333333333334, None, 1, "fast"),
    # the SE of K-fold is now that of its default interval (nested cross-validation)
    ("kfold", 0.11333333333333333, 0.018079681150262414, 10, "fast"),
    ("bootstrap", 0.11586582048957389, None, 50, "fast"),
    ("loo_bootstrap", 0.11925783603221683, None, 50, "fast"),
    (".632+", 0.11011388159263771, None, 50, "fast"),
]
ESTIMATE_KEYS = ["method", "estimate", "se", "ci_low", "ci_high", "interval", "loss", "n",
                 "n_resamples", "path", "n_folds", "n_repeats", "interval_center",
                 "interval_nested_estimate", "interval_bias", "interval_nested_repeats",
                 "rows_never_out_of_bag", "apparent", "loo_bootstrap", "no_information",
                 "overfitting_rate", "weight", "confidence_level", "interval_method"]


def test_estimate_json_as_before(cli, files):
    code, out, err = cli("--format", "json", "estimate", "--data", files / "small.csv",
                         "--target", "label", "--n-resamples", "50")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == ["model", "data", "estimates"]
    assert list(data["estimates"][0]) == ESTIMATE_KEYS
    got = [(r["method"], r["estimate"], r["se"], r["n_resamples"], r["path"])
           for r in data["estimates"]]
    assert got == ESTIMATE_BEFORE  # bit-identical


def test_json_ignores_the_width(cli, fitted, monkeypatch):
    """JSON is the data alone: the same bytes at any width, on or off a terminal."""
    outs = []
    for columns in ("40", "200"):
        monkeypatch.setenv("COLUMNS", columns)
        for name in ("compare", "meta", "replicate"):
            code, out, _ = cli("--format", "json", *_commands(fitted)[name])
            assert code == 0
            outs.append(out)
    assert outs[:3] == outs[3:]
    assert json.loads(outs[1])["result"][0]["k"] == 8


def test_replicate_json_structure(cli, fitted):
    code, out, _ = cli("--format", "json", "replicate", fitted / "rep.csv")
    data = json.loads(out)
    assert list(data)[:7] == ["original", "bounds", "interval", "tau2_method", "meta_interval",
                              "replications", "pooled"]
    first = data["replications"][0]
    assert first["replication"] == "rep A"
    assert first["difference"] == pytest.approx(-0.03)
    assert first["ci_low"] == pytest.approx(-0.1305568112951801)


# ------------------------------------------------------------------------------- formatting

def test_fmt_number_significant_digits():
    assert fmt_number(0.87594) == "0.8759"
    assert fmt_number(-0.00097271) == "-0.0009727"
    assert fmt_number(123456.7) == "123457"
    assert fmt_number(0.5) == "0.5"
    assert fmt_number(3) == "3" and fmt_number(np.int64(12)) == "12"
    assert fmt_number(2.5e-7) == "2.5e-07" and fmt_number(3.2e9) == "3.2e+09"
    assert fmt_number(float("nan")) == "–" and fmt_number(None) == "–"
    assert fmt_number(-1e-12) == "-1e-12" and fmt_number(0.0) == "0"
    assert fmt_number(True) == "True" and fmt_number("lr") == "lr"
    assert fmt_number(0.123456, 2) == "0.12"
    assert fmt_pvalue(0.04999) == "0.0500" and fmt_pvalue(1e-20) == "1.00e-20"
    assert fmt_interval(0.1, float("nan")) == "–"


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_frame_table_wraps_text_not_numbers(width):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({
        "model pair": ["gradient_boosting - random_forest", "lr - knn", "x" * 30],
        "estimate": rng.normal(size=3) * 1e-3,
        "p": [1e-9, 0.5, 0.04],
        "interval": ["[-0.001234, 0.005678]", "[0.1, 0.2]", "–"],
        "conclusion": ["practically equivalent; P(<,=,>) = 0.01 / 0.99 / 0.00",
                       "no difference shown", "random_forest better"],
    })
    out = render(frame_table(frame, formats={"p": "p"}, no_wrap=("interval",), width=width),
                 width=width)
    lines = out.split("\n")
    if width >= 80:
        assert max(len(line) for line in lines) <= width
    else:  # too narrow for the numbers: as narrow as it can be without cutting one
        assert max(len(line) for line in lines) == 62
    _assert_whole(out, [fmt_number(v) for v in frame["estimate"]])
    _assert_whole(out, ["1.00e-09", "0.5000", "[-0.001234, 0.005678]", "0.01", "0.99"])
    # text wraps at spaces or after underscores before breaking inside a word
    if width >= 80:
        assert "gradient_boosting" in out


def test_frame_table_wide_numbers_overflow_rather_than_split():
    """When the numbers alone do not fit, the table is printed wider than the output rather
    than cutting a number."""
    frame = pd.DataFrame({f"c{i}": [123456.789 + i] for i in range(8)})
    out = render(frame_table(frame, width=40), width=40)
    _assert_whole(out, [fmt_number(123456.789 + i) for i in range(8)])


def test_frame_table_index_title_and_max_rows():
    frame = pd.DataFrame({"a": range(10)}, index=pd.Index([f"r{i}" for i in range(10)],
                                                         name="row"))
    out = render(frame_table(frame, index=True, title="Ten rows:", max_rows=4))
    lines = out.split("\n")
    assert lines[0] == "Ten rows:" and lines[1].split() == ["row", "a"]
    assert "r3" in out and "r4" not in out and lines[-1] == "... and 6 more rows"


def test_render_prose_wraps_at_spaces():
    text = "estimate = 0.2511 (SE 0.08497), 95% CI [0.08453, 0.4176]; " * 5
    out = render(text, width=50)
    assert all(len(line) <= 50 for line in out.split("\n"))
    _assert_whole(out, ["0.08497", "[0.08453,", "0.4176]"])


def test_width_policy(monkeypatch):
    monkeypatch.setenv("COLUMNS", "97")
    assert _common.output_width() == 97
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(sys, "stdout", _FakeStream(tty=False))
    assert _common.output_width() == 120
    monkeypatch.setattr(sys, "stdout", _FakeStream(tty=True))
    monkeypatch.setattr(_common.shutil, "get_terminal_size",
                        lambda fallback=(120, 24): __import__("os").terminal_size((88, 30)))
    assert _common.output_width() == 88


class _FakeStream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.written: list[str] = []

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass


# --------------------------------------------------------------------------------- progress

def _bar_on(monkeypatch, *, tty=True, fmt=OutputFormat.human, quiet=False):
    stream = _FakeStream(tty)
    monkeypatch.setattr(sys, "stderr", stream)
    state.format, state.quiet = fmt, quiet
    return stream


@pytest.mark.parametrize("case", ["not a tty", "quiet", "json"])
def test_progress_is_silent_off_a_terminal(monkeypatch, case):
    stream = _bar_on(monkeypatch, tty=case != "not a tty", quiet=case == "quiet",
                     fmt=OutputFormat.json if case == "json" else OutputFormat.human)
    assert not state.progress
    with progress("steps", total=3) as advance:
        advance()
        advance(0, total=5)
        advance.step("renamed")
    assert stream.written == []


def test_progress_counts_on_a_terminal(monkeypatch):
    _bar_on(monkeypatch)
    assert state.progress
    with progress("steps") as advance:  # indeterminate until a total is given
        advance(0, total=4)
        advance(3)
        advance.step("last step")
        advance()
        bar = advance._bar
        task = bar.tasks[0]
        assert (task.total, task.completed, task.description) == (4, 4, "last step")


def _split(n: int, size: int) -> list[int]:
    return [min(size, n - a) for a in range(0, n, size)]


@pytest.mark.parametrize("generic", [False, True])
def test_estimate_errors_progress_counts_fits(generic):
    from sklearn.linear_model import LogisticRegression

    from replikit.resampling.error import estimate_errors

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 2, 60)
    calls = []

    def hook(n=1, total=None):
        calls.append((n, total))

    kwargs = dict(methods=["resubstitution", "kfold", "bootstrap", ".632+", "loo_bootstrap"],
                  n_resamples=20, random_state=1, fast=False if generic else None,
                  interval="wald")  # nested CV (the default) would add 50 x 55 fits
    with_hook = estimate_errors(LogisticRegression(), X, y, progress=hook, **kwargs)
    without = estimate_errors(LogisticRegression(), X, y, **kwargs)
    # the full-data fit, 10 folds and 20 bootstrap resamples (shared by the bootstrap methods)
    assert calls[0] == (0, 31)
    assert sum(n for n, _ in calls) == 31
    steps = [n for n, _ in calls[1:]]
    if generic:  # per chunk of fits (resamples of one scheme, a size set by the rows)
        from replikit.resampling.error import _chunk_size

        assert sorted(steps) == sorted([1, *_split(10, _chunk_size(60)),
                                        *_split(20, _chunk_size(60))])
    else:  # per batched fit
        assert steps == [1, 10, 20]
    pd.testing.assert_frame_equal(with_hook.to_frame(), without.to_frame())


def test_simulate_resampling_progress_counts_datasets():
    from replikit.resampling.simulation import simulate_resampling

    calls = []
    res = simulate_resampling(n_experiments=120, random_state=2,
                              progress=lambda n=1, total=None: calls.append((n, total)))
    assert calls[0] == (0, 120) and [n for n, _ in calls[1:]] == [50, 50, 20]
    pd.testing.assert_frame_equal(res.table,
                                  simulate_resampling(n_experiments=120, random_state=2).table)


def test_commands_print_no_bar_when_piped(cli, files):
    code, out, err = cli("estimate", "--data", files / "small.csv", "--target", "label",
                         "--n-resamples", "20")
    assert code == 0
    assert "\x1b" not in err and "━" not in err


# -------------------------------------------------------------------------------- --open

class _Report:
    def __init__(self, out: Path) -> None:
        self.html_path = out / "report.html"
        self.json_path = out / "report.json"
        self.sections, self.skipped, self.seconds = [], [], 0.1


def _fake_audit(monkeypatch, tmp_path, *, browser: bool):
    import webbrowser

    import replikit.report as report

    opened = []

    def run_audit(dataset, out, **kwargs):
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.html").write_text("<html></html>")
        (out / "report.json").write_text("{}")
        return _Report(out)

    def fake_open(uri, *args, **kwargs):
        path = Path(uri.removeprefix("file://"))
        opened.append((uri, path.exists()))
        return browser

    monkeypatch.setattr(report, "run_audit", run_audit)
    monkeypatch.setattr(webbrowser, "open", fake_open)
    return opened


def test_audit_open_opens_the_written_report(cli, files, tmp_path, monkeypatch):
    opened = _fake_audit(monkeypatch, tmp_path, browser=True)
    out = tmp_path / "audit"
    code, stdout, err = cli("audit", "--data", files / "small.csv", "--target", "y",
                            "--out", out, "--open")
    assert code == 0, err
    assert opened == [((out / "report.html").resolve().as_uri(), True)]  # after writing
    assert "no web browser" not in err


def test_audit_open_without_a_browser_is_a_note(cli, files, tmp_path, monkeypatch):
    opened = _fake_audit(monkeypatch, tmp_path, browser=False)
    code, stdout, err = cli("audit", "--data", files / "small.csv", "--target", "y",
                            "--out", tmp_path / "audit", "--open")
    assert code == 0 and len(opened) == 1
    notes = [line for line in err.splitlines() if "no web browser" in line]
    assert len(notes) == 1 and "report.html" in notes[0]


def test_audit_without_open_opens_nothing(cli, files, tmp_path, monkeypatch):
    opened = _fake_audit(monkeypatch, tmp_path, browser=True)
    code, _, err = cli("audit", "--data", files / "small.csv", "--target", "y",
                       "--out", tmp_path / "audit")
    assert code == 0, err
    assert opened == []


def test_audit_open_is_not_reached_when_the_audit_fails(cli, files, tmp_path, monkeypatch):
    opened = _fake_audit(monkeypatch, tmp_path, browser=True)
    code, _, err = cli("audit", "--data", files / "small.csv", "--target", "nope",
                       "--out", tmp_path / "audit", "--open")
    assert code == 2 and opened == []

"""Messages that must say the right thing about odd files: a table too short to fit anything,
a tab- or semicolon-separated file named ``.csv``, control characters in names, labels a
hundred thousand characters long, and the warnings of the libraries replikit calls."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .conftest import assert_clear_error


def _table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"height": rng.normal(170, 10, n), "weight": rng.normal(70, 8, n),
                       "clinic": np.repeat(["Leeds", "Hull", "York"], n // 3)})
    df["pressure"] = 0.3 * df["weight"] + rng.normal(0, 5, n)
    return df


# --- a table too short to fit anything ---------------------------------------------------

@pytest.mark.parametrize("command, needed", [("audit", "20"), ("run", "2")])
def test_one_row_says_the_file_has_one_row(cli, tmp_path, write_csv, command, needed):
    path = write_csv("height,weight,pressure\n171.5,68.2,120.4\n", "one.csv")
    out = tmp_path / ("o" if command == "audit" else "scores.csv")
    line = assert_clear_error(cli(command, "--data", path, "--target", "pressure", "--out",
                                  out), "--data", "one.csv has 1 row", f"at least {needed}")
    assert "missing" not in line  # nothing is missing: the file is short


def test_few_rows_for_an_audit_says_how_many_it_needs(cli, tmp_path, write_csv):
    path = write_csv(_table(12))
    line = assert_clear_error(cli("audit", "--data", path, "--target", "pressure", "--out",
                                  tmp_path / "o"), "--data", "12 rows", "at least 20")
    assert "missing" not in line


def test_missing_values_leaving_too_few_rows_name_the_columns(cli, tmp_path, write_csv):
    df = _table()
    df.loc[:45, "weight"] = np.nan
    line = assert_clear_error(cli("audit", "--data", write_csv(df), "--target", "pressure",
                                  "--out", tmp_path / "o"),
                              "--data", "14 rows of 60 are complete", "at least 20", "weight (46 missing)")
    assert "none" not in line


def test_library_names_the_parameter_and_its_minimum():
    from replikit.data.userdata import dataset_from_frame
    from replikit.errors import DataError

    with pytest.raises(DataError, match=r"`data`: clinics has 1 row; at least 2 are needed"):
        dataset_from_frame(_table().head(1), target="pressure", name="clinics")
    ds = dataset_from_frame(_table().head(5), target="pressure", min_rows=5)
    assert len(ds.y) == 5
    with pytest.raises(DataError, match="at least 6 are needed"):
        dataset_from_frame(_table().head(5), target="pressure", min_rows=6)


# --- control characters in names ----------------------------------------------------------

def _with_header(df: pd.DataFrame, header: list[str]) -> str:
    """``df`` as CSV text under ``header`` (names pandas would not write as they are)."""
    body = df.to_csv(index=False, header=False)
    return ",".join(header) + "\n" + body


def test_a_nul_in_the_header_is_escaped_and_named(cli, tmp_path, write_csv):
    df = _table()[["height", "weight", "clinic", "pressure"]]
    path = write_csv(_with_header(df, ["height\x00cm", "weight", "clinic", "pressure"]))
    code, out, err = result = cli("audit", "--data", path, "--target", "bp", "--out",
                                  tmp_path / "o")
    line = assert_clear_error(result, "--target", "'bp'", r"'height\x00cm'",
                              "holds a control character")
    assert "\x00" not in err and "\x00" not in line


def test_an_escape_sequence_in_a_class_label_cannot_reach_the_terminal(cli, tmp_path,
                                                                         write_csv):
    df = _table()
    df["pressure"] = np.where(df["pressure"] > df["pressure"].median(), "high\x1b[31m", "low")
    code, out, err = cli("audit", "--data", write_csv(df), "--target", "pressure",
                         "--sections", "overview", "--quick", "--out", tmp_path / "o")
    assert code == 0, err
    assert "\x1b" not in err and "\x1b" not in out
    assert r"high\x1b[31m → 0" in err  # the note on the encoding, escaped


def test_library_message_quotes_the_odd_name():
    from replikit.data.userdata import dataset_from_frame
    from replikit.errors import DataError

    df = _table().rename(columns={"weight": "weight\x1b[0m"})
    with pytest.raises(DataError) as exc:
        dataset_from_frame(df, target="bp")
    assert r"'weight\x1b[0m'" in str(exc.value) and "\x1b" not in str(exc.value)


def test_a_control_character_in_a_study_label_is_visible_in_the_report(cli, tmp_path,
                                                                       write_csv):
    df = _table()
    df["clinic"] = np.repeat(["Leeds\x1b[31m", "Hull", "York"], 20)
    out = tmp_path / "o"
    code, _, err = cli("audit", "--data", write_csv(df), "--target", "pressure", "--study",
                       "clinic", "--sections", "overview", "--out", out)
    assert code == 0, err
    html = (out / "report.html").read_text()
    assert "\x1b" not in html and "Leeds⟨U+001B⟩[31m" in html


# --- a tab- or semicolon-separated file named .csv ---------------------------------------

@pytest.mark.parametrize("sep, word", [("\t", "tab-separated"), (";", "semicolon-separated")])
def test_a_csv_with_another_separator_is_read_as_such_with_a_note(cli, tmp_path, sep, word):
    path = tmp_path / "clinics.csv"
    _table().to_csv(path, sep=sep, index=False)
    code, out, err = cli("run", "--data", path, "--target", "pressure", "--study", "clinic",
                         "--models", "lr", "--scheme", "5x2", "--out", tmp_path / "s.csv")
    assert code == 0, err
    said = [ln for ln in err.splitlines() if word in ln]
    assert said == [f"replikit: warning: `--data`: clinics.csv is {word} (its header read with "
                    f"commas is one column holding {'tabs' if sep == chr(9) else 'semicolons'})"
                    f": read with {'tabs' if sep == chr(9) else 'semicolons'} between the "
                    "fields" + (" (name it .tsv to say so)." if sep == "\t" else ".")]
    scores = pd.read_csv(tmp_path / "s.csv")  # the columns read as columns
    assert set(scores["study"]) == {"Leeds", "Hull", "York"}


def test_a_semicolon_file_with_decimal_commas_is_refused_naming_the_column(cli, tmp_path,
                                                                          write_csv):
    text = "height;weight;pressure\n" + "\n".join(
        f"{170 + i % 7},{i % 10};{60 + i % 9},5;{110 + i},{i % 4}" for i in range(40))
    assert_clear_error(cli("audit", "--data", write_csv(text, "eu.csv"), "--target",
                           "pressure", "--out", tmp_path / "o"),
                       "--data", "semicolon-separated", "decimal comma", "'height'", "'170,0'")


def test_library_reads_a_tab_separated_csv_and_warns(tmp_path):
    import warnings

    from replikit.data import read_frame
    from replikit.errors import ReplikitWarning

    p = tmp_path / "t.csv"
    p.write_text("a\tb\tc\n1\t2\tx\n3\t4\ty\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read_frame(p)
    assert list(frame.columns) == ["a", "b", "c"] and frame["b"].tolist() == [2, 4]
    assert [w.category for w in caught] == [ReplikitWarning]
    assert "t.csv is tab-separated" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the caller, not inside replikit
    q = tmp_path / "q.csv"
    q.write_text('"a;b"\nfoo\nbar\n')  # a quoted name holding a semicolon: one column
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(read_frame(q).columns) == ["a;b"]


# --- library warnings on the command line ---------------------------------------------------

def _unscaled(n=120, seed=1):
    """A classification table whose features differ in scale by 10^4: lbfgs needs many steps."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 100.0, 10_000.0]
    df = pd.DataFrame(X, columns=["dose", "weight", "income"])
    df["relapse"] = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    return df


_LR = ("--model", "lr=sklearn.linear_model:LogisticRegression", "--param", "lr.max_iter=3")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_model_that_does_not_converge_gets_one_note(cli, tmp_path, write_csv, jobs):
    import warnings

    from sklearn.linear_model import LogisticRegression

    from replikit.experiment import run

    shown, filters = warnings.showwarning, list(warnings.filters)
    code, out, err = cli("run", "--data", write_csv(_unscaled()), "--target", "relapse",
                         *_LR, "--scheme", "5x2", "--n-jobs", jobs, "--out",
                         tmp_path / "s.csv")
    assert code == 0, err
    assert "ConvergenceWarning" not in err and "lbfgs" not in err and ".py:" not in err
    notes = [ln for ln in err.splitlines() if ln.startswith("replikit: note:")]
    assert len(notes) == 1, err
    assert notes[0].startswith("replikit: note: lr did not converge in 3 iterations on 10 of "
                               "10 fits")
    # the policy is the command line's: Python's warnings are left as they were, and the
    # library shows scikit-learn's own warnings, once per fit, as Python does
    assert warnings.showwarning is shown and warnings.filters == filters
    df = _unscaled()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run({"lr": LogisticRegression(max_iter=3)}, df[["dose", "weight", "income"]],
            df["relapse"], scheme="5x2", metrics="accuracy", random_state=0,
            backend="joblib" if jobs == "2" else "serial", n_jobs=int(jobs))
    assert sum(w.category.__name__ == "ConvergenceWarning" for w in caught) == 10


def test_numpy_runtime_warnings_are_quiet_unless_debug(cli, tmp_path, write_csv):
    df = _table()
    df["pressure"] = (df["pressure"] > df["pressure"].median()).astype(int)
    df["constant"] = 1.0  # zero variance: GaussianNB without smoothing takes log(0)
    path = write_csv(df)
    args = ("run", "--data", path, "--target", "pressure", "--model",
            "nb=sklearn.naive_bayes:GaussianNB", "--param", "nb.var_smoothing=0", "--scheme",
            "5x2", "--metrics", "accuracy")
    code, out, err = cli(*args, "--out", tmp_path / "a.csv")
    assert code == 0, err
    assert "RuntimeWarning" not in err and "divide by zero" not in err
    assert [ln for ln in err.splitlines() if ln.strip()] == [
        "Running nb under 5x2 (every split drawn from --random-state 0) on 60 rows; metrics "
        "accuracy."]
    code, out, err = cli("--debug", *args, "--out", tmp_path / "b.csv")
    assert code == 0, err
    assert "RuntimeWarning: divide by zero encountered in log" in err


# --- labels a hundred thousand characters long --------------------------------------------

_TRUST = "Regional Hospital Trust, Outpatient Clinic of Cardiology " * 350  # 20,300 characters


def test_long_study_labels_are_shortened_in_the_report_and_kept_whole_in_its_json(
        cli, tmp_path, write_csv):
    import json
    import re

    df = _table(90)
    df["clinic"] = np.repeat([_TRUST + "Leeds", _TRUST + "Hull", "York"], 30)
    out = tmp_path / "o"
    code, stdout, err = cli("audit", "--data", write_csv(df), "--target", "pressure",
                            "--study", "clinic", "--sections", "overview,multistudy",
                            "--quick", "--out", out)
    assert code == 0, err
    html = (out / "report.html").read_text()
    assert _TRUST not in html and len(html) < 400_000
    # the two labels alike for 20,000 characters read differently, in 40 characters
    shown = set(re.findall(r"Regional Hospital Trust[^<>\"]*?…[^<>\"&;]*?(?:Leeds|Hull)",
                           html))
    assert len(shown) == 2 and all(len(s) <= 40 for s in shown), shown
    assert "2 labels longer than 40 characters are shortened" in html
    report = json.loads((out / "report.json").read_text())
    assert sorted(report["meta"]["labels"].values()) == [_TRUST + "Hull", _TRUST + "Leeds"]
    assert set(report["meta"]["labels"]) == shown
    assert _TRUST + "Leeds" in json.dumps(report["sections"])  # values keep the label
    assert all(len(line) < 400 for line in (stdout + err).splitlines())


def test_a_figure_shortens_long_labels_distinctly_and_fast():
    import re
    import time

    from replikit._labels import Abbreviations, shortened
    from replikit._plotting import new_axes, svg_document

    ticks = ["x" * 100_000 + "1", "x" * 100_000 + "2", "north"]

    def drawn(labels=None):
        ax = new_axes()
        ax.barh(range(3), [1.0, 2.0, 3.0])
        ax.set_yticks(range(3), ticks)
        ax.set_title(f"Error in {ticks[0]}")
        start = time.perf_counter()
        with shortened(labels):
            svg = svg_document(ax.figure)
        return re.findall(r"<text[^>]*>([^<]*)</text>", svg), time.perf_counter() - start

    texts, seconds = drawn()  # no labels known: the ticks still fit, and differ
    long = [t for t in texts if "xxx" in t]
    assert len(set(long)) == 3 and all(len(t) <= 120 for t in long)  # 2 ticks, the title
    assert seconds < 5
    ab = Abbreviations(ticks)  # the audit's labels: the same short form everywhere
    texts, _ = drawn(ab)
    assert {ab.short[ticks[0]], ab.short[ticks[1]], "north",
            f"Error in {ab.short[ticks[0]]}"} <= set(texts)


def test_abbreviations_are_distinct_and_never_take_a_label_shown_whole():
    from replikit._labels import Abbreviations

    same = "s" * 60
    ab = Abbreviations([same + "a", same + "b", "s" * 39 + "…", "north", same + "a"])
    forms = list(ab.short.values())
    assert len(ab.short) == 2 and len(set(forms)) == 2
    assert all(len(f) <= 40 for f in forms) and "s" * 39 + "…" not in forms
    twins = Abbreviations(["q" * 80 + "z" * 20, "q" * 81 + "z" * 19, "q" * 82 + "z" * 18])
    assert len(set(twins.short.values())) == 3  # alike at both ends: numbered


def test_a_study_left_out_for_a_rare_class_names_the_users_label_not_its_code():
    # odd.csv (labels maybe/no/yes): "Left out: south (class 0 too rare)" — the user never
    # saw a class 0; the codes are sorted labels, so 0 was 'maybe'
    import numpy as np
    import pandas as pd

    from replikit.data.userdata import dataset_from_frame
    from replikit.report.preflight import preflight

    rng = np.random.default_rng(0)
    y = np.array(["yes", "no"] * 30 + ["maybe"] * 6, dtype=object)
    study = np.array(["a"] * 33 + ["b"] * 33, dtype=object)
    y[33:] = np.where(y[33:] == "maybe", "no", y[33:])  # study b: no 'maybe' at all
    y[:3] = "maybe"
    frame = pd.DataFrame({"x": rng.normal(size=66), "y": y, "site": study})
    plan = preflight(dataset_from_frame(frame, target="y", study="site"))
    kept, dropped = plan.usable_studies(9, min_per_class=3)
    assert kept == ["a"] and dropped == [("b", "class maybe too rare")]

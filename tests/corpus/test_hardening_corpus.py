"""Corpus: what an acceptance corpus of odd inputs across every command still found — each
class of internal error, silently wrong result or unclear message, with a small case of its
own: a binary Parquet column, a constant or underflowing target, numbers written with a
decimal comma, rows named as the user counts them.

Each case runs through the command line (exit 2 with one ``replikit: error:`` line naming the
flag or column and what was found) or through the library entry.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replikit.data.userdata import dataset_from_frame
from replikit.errors import DataError

from .conftest import assert_clear_error


def lakes(n=60, seed=7):
    """Lakes sampled in three regions: depth and area predict the clarity (m, continuous)."""
    rng = np.random.default_rng(seed)
    f = pd.DataFrame({"depth": rng.gamma(3.0, 4.0, n), "area": rng.normal(2.0, 0.5, n),
                      "region": np.resize(["alpine", "boreal", "coastal"], n)})
    f["clarity"] = 0.2 * f.depth + f.area + rng.normal(0, 0.5, n)
    return f


# ---------------------------------------------------------------- binary (bytes) columns
@pytest.mark.parametrize("column", ["feature", "target"])
def test_a_binary_parquet_column_is_one_clear_line(cli, tmp_path, column):
    f = lakes()
    name = "photo" if column == "feature" else "clarity"
    f[name] = [bytes([200 + i % 50, i % 7]) for i in range(len(f))]
    path = tmp_path / "lakes.parquet"
    f.to_parquet(path, index=False)
    line = assert_clear_error(cli("run", "--data", path, "--target", "clarity", "--scheme", "5x2",
                                  "--out", tmp_path / "s.csv"), name, "bytes", "data row 1")
    assert "internal error" not in line


def test_library_binary_column_raises_data_error():
    f = lakes()
    f["blob"] = [b"\x80\x81"] * len(f)
    with pytest.raises(DataError, match="'blob' holds raw bytes"):
        dataset_from_frame(f, target="clarity")


# ---------------------------------------------------------------- constant / underflowing targets
@pytest.mark.parametrize("value", ["1.0", "-0.0"])
def test_a_constant_number_target_says_constant_without_numpy_reprs(cli, write_csv, tmp_path,
                                                                   value):
    f = lakes()
    f["clarity"] = float(value)
    line = assert_clear_error(cli("run", "--data", write_csv(f), "--target", "clarity",
                                  "--out", tmp_path / "s.csv"), "--target", "constant")
    assert "np." not in line and "float64" not in line, line


def test_a_constant_text_target_says_constant(cli, write_csv):
    f = lakes()
    f["clarity"] = "murky"
    line = assert_clear_error(cli("estimate", "--data", write_csv(f), "--target", "clarity"),
                              "--target", "constant", "'murky'")
    assert "class" not in line, line


def test_a_target_whose_differences_underflow_is_named(cli, write_csv, tmp_path):
    f = lakes()
    f["clarity"] = f["clarity"] * 1e-200
    assert_clear_error(cli("run", "--data", write_csv(f), "--target", "clarity", "--scheme",
                           "5x2", "--out", tmp_path / "s.csv"), "--target", "clarity",
                       "rescale")


def test_library_tiny_target_is_refused_but_a_small_one_is_not():
    f = lakes()
    f["clarity"] = f["clarity"] * 1e-200
    with pytest.raises(DataError, match="underflow"):
        dataset_from_frame(f, target="clarity")
    f["clarity"] = f["clarity"] * 1e190  # 1e-10: small, but its squares are fine
    assert dataset_from_frame(f, target="clarity").task == "regression"


# ---------------------------------------------------------------- decimal commas
def test_a_target_with_decimal_commas_is_not_called_an_identifier(cli, write_csv, tmp_path):
    f = lakes()
    f["clarity"] = f["clarity"].map(lambda v: f"{v:.4f}".replace(".", ","))
    line = assert_clear_error(cli("run", "--data", write_csv(f), "--target", "clarity",
                                  "--out", tmp_path / "s.csv"), "--target", "decimal comma")
    assert "identifier" not in line, line


def test_a_feature_with_decimal_commas_is_refused_not_left_out(write_csv):
    f = lakes()
    f["depth"] = f["depth"].map(lambda v: f"{v:.3f}".replace(".", ","))
    with pytest.raises(DataError, match="'depth' holds numbers written with a decimal comma"):
        dataset_from_frame(f, target="clarity")


# ---------------------------------------------------------------- rows as the user counts them
def test_infinite_and_huge_cells_are_named_by_their_data_row(cli, write_csv, tmp_path):
    f = lakes().astype({"area": object})
    f.loc[4, "area"] = "inf"  # the fifth row below the header
    line = assert_clear_error(cli("run", "--data", write_csv(f), "--target", "clarity",
                                  "--out", tmp_path / "s.csv"), "'area'", "data row 5")
    assert "[4]" not in line, line
    f = lakes()
    f.loc[[0, 9], "clarity"] = 1e200
    assert_clear_error(cli("run", "--data", write_csv(f), "--target", "clarity",
                           "--out", tmp_path / "s.csv"), "--target", "data rows 1, 10")


# ---------------------------------------------------------------- files that hide their columns
def test_a_target_name_with_spaces_around_it_in_the_header_is_pointed_at(cli, write_csv):
    f = lakes().rename(columns={"clarity": " clarity "})
    assert_clear_error(cli("estimate", "--data", write_csv(f), "--target", "clarity"),
                       "--target", "' clarity '", "spaces")


def test_a_study_name_in_another_case_is_pointed_at(cli, write_csv, tmp_path):
    assert_clear_error(cli("run", "--data", write_csv(lakes()), "--target", "clarity",
                           "--study", "Region", "--out", tmp_path / "s.csv"),
                       "--study", "'region'", "upper/lower case")


def test_a_pipe_separated_file_says_so(cli, write_csv):
    path = write_csv(lakes().to_csv(index=False, sep="|"))
    assert_clear_error(cli("estimate", "--data", path, "--target", "clarity"),
                       "--target", "single column", "pipes")


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_a_file_not_in_utf8_says_so_and_how_to_fix_it(cli, tmp_path, encoding):
    f = lakes()
    f["region"] = f["region"].str.replace("alpine", "alpé")
    path = tmp_path / "lakes.csv"
    path.write_bytes(f.to_csv(index=False).encode(encoding))
    line = assert_clear_error(cli("estimate", "--data", path, "--target", "clarity"),
                              "--data", "not UTF-8", "save it as UTF-8")
    assert "codec" not in line, line


def test_dates_in_a_message_are_written_as_dates():
    f = lakes()
    f["clarity"] = pd.date_range("2021-03-01", periods=len(f), freq="D")
    with pytest.raises(DataError) as exc:
        dataset_from_frame(f, target="clarity")
    assert "2021-03-01" in str(exc.value) and "datetime.datetime(" not in str(exc.value)


# ---------------------------------------------------------------- a class too rare to split
def test_stratified_splits_with_a_one_row_class_do_not_advise_stratifying(cli, write_csv,
                                                                           tmp_path):
    f = lakes()
    f["clarity"] = np.where(np.arange(len(f)) == 3, "turbid", "clear")
    line = assert_clear_error(cli("run", "--data", write_csv(f), "--target", "clarity",
                                  "--scheme", "5x2", "--stratify", "--metrics", "accuracy",
                                  "--out", tmp_path / "s.csv"),
                              "--scheme", "smallest class", "1 of 60 rows")
    assert "--stratify" not in line, line


# ---------------------------------------------------------------- models that tie exactly
def test_scores_that_tie_on_every_fold_of_every_study_are_compared_not_refused(cli, write_csv):
    rows = [dict(study=f"lake{s}", model=m, repeat=0, fold=k, metric="accuracy",
                 value=0.75 + 0.01 * s, n_train=80, n_test=20)
            for s in range(6) for m in ("tree", "forest") for k in range(5)]
    code, out, err = cli("compare", write_csv(pd.DataFrame(rows), "scores.csv"))
    assert code == 0, err
    assert "signed-rank" in out and "equivalent" in out
    assert "the same within each study" in out + err


@pytest.mark.parametrize("flag", [["--lower-is-better"], ["--score", "value"]])
def test_a_benchmark_flag_on_per_fold_scores_names_the_flag(cli, write_csv, flag):
    rows = [dict(study=f"lake{s}", model=m, repeat=0, fold=k, metric="accuracy",
                 value=0.7 + 0.05 * (m == "forest") + 0.01 * k, n_train=80, n_test=20)
            for s in range(3) for m in ("tree", "forest") for k in range(5)]
    line = assert_clear_error(cli("compare", write_csv(pd.DataFrame(rows), "scores.csv"),
                                  *flag), flag[0], "benchmark table", "leave the flag out")
    assert "give them in the Scores layout" not in line, line


# ---------------------------------------------------------------- meta-regression moderators
def trials(k=8, seed=5):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"trial": [f"t{i}" for i in range(k)], "yi": rng.normal(0.3, 0.1, k),
                         "vi": rng.uniform(0.005, 0.02, k), "dose": np.arange(k) * 10.0,
                         "arm": np.resize(["low", "high"], k)})


def test_the_effect_column_as_its_own_moderator_is_refused(cli, write_csv):
    assert_clear_error(cli("meta", write_csv(trials()), "--moderator", "yi"),
                       "--moderator", "'yi' is the effect column")


@pytest.mark.parametrize("flags", [["--moderator", "trial"], ["--factor", "dose"]])
def test_a_factor_with_a_level_per_study_is_refused_naming_it(cli, write_csv, flags):
    assert_clear_error(cli("meta", write_csv(trials()), *flags), flags[0],
                       repr(flags[1]), "different value for every study")


def test_too_many_coefficients_are_counted_per_moderator(cli, write_csv):
    f = trials(k=5)
    f["site"] = ["a", "b", "c", "d", "a"]
    assert_clear_error(cli("meta", write_csv(f), "--moderator", "site,dose"),
                       "--moderator", "site 3", "dose 1", "got 5")


def test_generalize_names_an_infinite_score_by_its_data_row(cli, write_csv):
    rows = [dict(model=m, lake=f"l{d}", score=0.5 + 0.1 * j + 0.01 * d)
            for d in range(6) for j, m in enumerate(("tree", "forest", "knn"))]
    f = pd.DataFrame(rows)
    f.loc[2, "score"] = -np.inf  # the third row below the header
    code, out, err = cli("generalize", write_csv(f), "--alternative", "model", "--score",
                         "score", "--factor", "lake", "--n-resamples", "20")
    assert code == 0, err
    assert "(data row 3)" in err and "rows [2]" not in err, err


def test_a_missing_moderator_value_is_named_by_its_study_and_row(cli, write_csv):
    f = trials()
    f.loc[3, "dose"] = np.nan  # trial t3, the fourth row
    line = assert_clear_error(cli("meta", write_csv(f), "--moderator", "dose", "--label", "trial"),
                              "--moderator", "'dose'", "'t3'", "row 4")
    assert "positions" not in line, line


# ---------------------------------------------------------------- an audit of many tiny studies
def test_an_audit_of_studies_too_small_to_split_says_why_sections_are_skipped(
        cli, write_csv, tmp_path):
    import json

    f = lakes(n=80)
    f["region"] = [f"pond{i // 2}" for i in range(len(f))]  # 40 studies of 2 rows
    out = tmp_path / "audit"
    code, _, err = cli("audit", "--quick", "-j", "1", "--data", write_csv(f), "--target",
                       "clarity", "--study", "region", "--sections", "compare,generalize",
                       "--out", out)
    assert code == 0, err
    skipped = {s["key"]: s["skipped"] for s in json.loads((out / "report.json").read_text())
               ["sections"] if s.get("skipped")}
    assert set(skipped) >= {"compare", "generalize"}, skipped
    for why in skipped.values():
        assert "`X`" not in why and "the largest with 2 rows" in why, why


# ---------------------------------------------------------------- flags and labels that were lost
def test_a_bad_rounding_is_refused_even_without_a_hold_out(cli, write_csv):
    assert_clear_error(cli("estimate", "--data", write_csv(lakes()), "--target", "clarity",
                           "--methods", "kfold", "--interval", "wald", "--rounding", "up"),
                       "--rounding", "'up'")


def test_leave_one_study_out_scores_say_which_study_each_fold_left_out(cli, write_csv,
                                                                       tmp_path):
    f = lakes()
    f["region"] = f["region"].map({"alpine": "=Alp", "boreal": "Boreal", "coastal": "boreal "})
    out = tmp_path / "s.csv"
    code, _, err = cli("run", "--data", write_csv(f), "--target", "clarity", "--study",
                       "region", "--scheme", "loso", "--models", "lr", "--out", out)
    assert code == 0, err
    from replikit.data.io import read_frame

    s = read_frame(out)
    assert s.groupby("fold")["held_out"].nunique().eq(1).all()
    assert sorted(s["held_out"].unique()) == ["=Alp", "Boreal", "boreal "]
    assert "'=Alp" in out.read_text()  # spreadsheet-safe on disk


@pytest.mark.parametrize("kind", ["dates", "durations"])
def test_a_date_or_duration_target_is_named_as_such(tmp_path, cli, kind):
    f = lakes()
    f["clarity"] = (pd.date_range("2021-03-01", periods=len(f), freq="D") if kind == "dates"
                    else pd.to_timedelta(np.arange(len(f)), unit="h"))
    path = tmp_path / "lakes.parquet"
    f.to_parquet(path, index=False)
    line = assert_clear_error(cli("estimate", "--data", path, "--target", "clarity"),
                              "--target", f"holds {kind}")
    assert "identifier" not in line, line

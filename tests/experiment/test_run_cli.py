"""`replikit run` and the model registry."""

import numpy as np
import pandas as pd
import pytest

from replikit.cli import main
from replikit.data import Scores
from replikit.errors import DataError, ParameterError
from replikit.experiment import run
from replikit.experiment.models import MODEL_ALIASES, make_model, parse_model_options


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"])
    df["y"] = (df.a + rng.normal(size=80) > 0).astype(int)
    df["site"] = np.repeat(["p", "q"], 40)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    return path


def cli(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    return exc.value.code, *capsys.readouterr()


def test_run_cli_writes_scores(capsys, csv, tmp_path):
    out = tmp_path / "s.parquet"
    code, stdout, _ = cli(capsys, "--quiet", "run", "--data", str(csv), "--target", "y",
                          "--study", "site", "--models", "lr,dummy", "--scheme", "5x2",
                          "--model", "tree=sklearn.tree:DecisionTreeClassifier",
                          "--param", "tree.max_depth=2", "--out", str(out))
    assert code == 0, stdout
    s = Scores.read(out)
    assert set(s.models) == {"lr", "dummy", "tree"} and set(s.metrics) == {"accuracy", "roc_auc"}
    assert len(s) == 3 * 2 * 10 * 2


@pytest.mark.parametrize("args,needle", [
    (["--models", "nope"], "unknown model 'nope'"),
    (["--model", "x=os:system"], "not a scikit-learn estimator class"),
    (["--model", "x=sklearn.tree:DecisionTreeClassifier", "--param", "x.bogus=1"], "bad parameters"),
    (["--param", "x.C=1"], "--param"),
    (["--scheme", "7y"], "cannot read '7y'"),
    (["--metrics", "r3"], "unknown metric 'r3'"),
])
def test_run_cli_errors(capsys, csv, tmp_path, args, needle):
    code, _, err = cli(capsys, "run", "--data", str(csv), "--target", "y", "--out",
                       str(tmp_path / "o.csv"), *args)
    assert code == 2 and needle in err and "Traceback" not in err


def test_param_values_are_literals_not_code():
    est = parse_model_options(["m=sklearn.linear_model:LogisticRegression"],
                              ["m.C=0.5", "m.penalty=l2", "m.class_weight={'a': 1}"])["m"]
    assert est.C == 0.5 and est.penalty == "l2" and est.class_weight == {"a": 1}
    est = parse_model_options(["m=sklearn.linear_model:LogisticRegression"],
                              ["m.penalty=__import__('os')"])["m"]
    assert est.penalty == "__import__('os')"  # kept as a plain string, never evaluated


def test_every_alias_builds_for_its_tasks():
    for alias in MODEL_ALIASES:
        for task in ("regression", "classification"):
            if alias == "lda" and task == "regression":
                with pytest.raises(ParameterError):
                    make_model(alias, task)
                continue
            est = make_model(alias, task)
            assert hasattr(est, "fit") and hasattr(est, "predict")


def test_study_with_fewer_rows_than_folds_names_the_study():
    X = np.zeros((23, 1))
    y = np.arange(23.0)
    study = np.array(["big"] * 20 + ["tiny"] * 3)
    from sklearn.dummy import DummyRegressor

    with pytest.raises(DataError, match=r"study 'tiny' \(3 rows\): `n_folds`=5 exceeds"):
        run({"d": DummyRegressor()}, X, y, scheme="5", metrics="mse", study=study)

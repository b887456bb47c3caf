"""``replikit audit`` in the terminal: the summary cards printed after the run (checked
against the JSON twin the same run wrote), ``--format json`` with the cards, tables laid out
as scores, predictions or estimates refused before any fit with a pointer to their command,
and ``--models`` given an estimator by import path."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from replikit.cli._common import OutputFormat, state
from replikit.cli.audit import misplaced_layout
from replikit.errors import ParameterError
from replikit.experiment.models import make_models
from replikit.report.render import STATE_WORDS

QUICK = ("--quick", "--sections", "overview,resampling,compare", "--n-jobs", "1",
         "--random-state", "3")


@pytest.fixture(autouse=True)
def _human():
    yield
    state.format, state.quiet = OutputFormat.human, False


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A small regression table whose columns include ``value`` (a real feature, not a
    scores table) and ``n``."""
    d = tmp_path_factory.mktemp("audit_terminal")
    rng = np.random.default_rng(5)
    n = 90
    x = rng.normal(size=(n, 3))
    frame = pd.DataFrame({"dose": x[:, 0], "value": x[:, 1], "n": rng.integers(1, 9, n),
                          "y": x[:, 0] + 0.5 * x[:, 1] + rng.normal(size=n)})
    frame.to_csv(d / "data.csv", index=False)
    return d


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_cards_printed_as_in_the_json_twin(cli, data):
    out_dir = data / "human"
    code, out, err = cli("audit", "--data", data / "data.csv", "--target", "y", *QUICK,
                         "--models", "lr,dummy,sklearn.linear_model:Ridge", "--out", out_dir)
    assert code == 0, err
    assert "\x1b[" not in out  # plain text when piped
    report = json.loads((out_dir / "report.json").read_text())
    cards = report["summary"]["cards"]
    assert [c["key"] for c in cards] == ["resampling", "compare"]
    flat = _flat(out)
    positions = []
    for card in cards:
        head = f"[{STATE_WORDS[card['state']]}] {card['question']}"
        assert head in out
        positions.append(out.index(head))
        assert _flat(card["sentence"]) in flat
        if card["tolerance"]:
            assert "Tolerance: " + _flat(card["tolerance"]) in flat
        if card["caveat"]:
            assert "Caveat: " + _flat(card["caveat"]) in flat
        # the key number with its interval, as the report's JSON has it (3 significant digits)
        est, low, high = card["estimate"], card["ci_low"], card["ci_high"]
        assert est is not None and low is not None and high is not None
        line = next(ln for ln in out.splitlines() if ln.startswith(f"  {card['label']}: "))
        numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?",
                                                line.split(": ", 1)[1])]
        assert numbers == pytest.approx([est, low, high], rel=5e-3, abs=1e-12)
        assert low <= est <= high
    assert positions == sorted(positions)
    # the files come last
    assert out.rstrip().splitlines()[-2:] == [f"Report written to {out_dir / 'report.html'}",
                                              f"JSON twin: {out_dir / 'report.json'}"]
    assert max(positions) < out.index("Report written to")
    # the import-path model was fitted under its class name
    models = json.dumps(report["sections"])
    assert '"Ridge"' in models


def test_json_output_has_the_cards(cli, data):
    out_dir = data / "json"
    code, out, err = cli("--format", "json", "audit", "--data", data / "data.csv", "--target",
                         "y", "--quick", "--sections", "overview,compare", "--n-jobs", "1",
                         "--models", "lr,dummy", "--out", out_dir)
    assert code == 0, err
    payload = json.loads(out)
    report = json.loads((out_dir / "report.json").read_text())
    assert payload["cards"] == report["summary"]["cards"]
    assert [c["key"] for c in payload["cards"]] == ["compare"]
    assert payload["json"] == str(out_dir / "report.json")


@pytest.mark.parametrize(("columns", "rows", "pointer"), [
    ("study,model,repeat,fold,metric,value", ["s1,lr,0,0,accuracy,0.8",
                                              "s1,rf,0,0,accuracy,0.9"], "replikit audit --scores"),
    ("task_id,learner_id,resampling_id,iteration,classif.ce",
     ["sonar,classif.rpart,cv,1,0.3", "sonar,classif.ranger,cv,1,0.2"], "replikit audit --scores"),
    ("Key_Dataset,Key_Run,Key_Fold,Key_Scheme,Key_Scheme_options,Percent_correct",
     ["iris,1,1,trees.J48,-C 0.25,95.3", "iris,1,1,bayes.NaiveBayes,,94.0"], "replikit audit --scores"),
    ("study,model,repeat,fold,row,y_true,y_pred", ["a,lr,0,0,0,1.0,0.7", "b,lr,0,0,1,0.0,0.2"],
     "replikit audit --predictions"),
    ("y_true,proba_yes", ["yes,0.8", "no,0.3"], "replikit audit --predictions"),
    ("study,r2,n", ["original,0.31,500", "replication,0.22,800"], "replikit audit --estimates"),
    ("label,auc,se,role", ["Smith,0.71,0.02,original", "Lee,0.69,0.03,replication"],
     "replikit audit --estimates"),
])
def test_misplaced_tables_refused_with_a_pointer(cli, data, columns, rows, pointer):
    path = data / "misplaced.csv"
    path.write_text("\n".join([columns, *rows]) + "\n")
    out_dir = data / "never"
    code, out, err = cli("audit", "--data", path, "--target", "value", "--out", out_dir)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replikit: error: `--data`")
    assert f"{pointer} {path}" in lines[0]
    assert out == ""
    assert not (out_dir / "report.json").exists()  # refused before any fit


@pytest.mark.parametrize("frame", [
    # a dataset with a column called value (and a model column) is data
    pd.DataFrame({"model": ["a", "b"], "value": [1.0, 2.0], "y": [0, 1]}),
    pd.DataFrame({"fold": [1, 2], "value": [1.0, 2.0], "metric": ["x", "y"], "y": [0, 1]}),
    # a metric-named column with n, but many rows per study: raw data
    pd.DataFrame({"study": ["a", "a", "b"], "accuracy": [0.1, 0.2, 0.3], "n": [1, 2, 3]}),
    # y_true alone (no predictions)
    pd.DataFrame({"y_true": [1, 0], "x": [0.1, 0.2]}),
    # mlr3's id columns without a measure
    pd.DataFrame({"task_id": ["t"], "learner_id": ["l"], "iteration": [1], "y": [0.0]}),
])
def test_data_tables_are_not_mistaken(frame):
    assert misplaced_layout(frame) is None


def test_import_path_models():
    from sklearn.linear_model import Ridge

    models = make_models("lr, sklearn.linear_model:Ridge", "regression")
    assert list(models) == ["lr", "Ridge"]
    assert type(models["Ridge"]) is Ridge
    assert models["Ridge"].get_params() == Ridge().get_params()
    clf = make_models(["sklearn.naive_bayes:GaussianNB"], "classification")["GaussianNB"]
    assert hasattr(clf, "predict_proba")


@pytest.mark.parametrize(("spec", "words"), [
    ("os:system", "not an estimator class"),            # a function, never called
    ("subprocess:Popen", "not an estimator class"),     # a class without fit/predict
    ("../../etc/passwd:x", "neither a model alias nor an import path"),
    ("sklearn.linear_model:Ridge()", "neither a model alias nor an import path"),
    ("__import__('os').system:x", "neither a model alias nor an import path"),
    ("no_such_module_xyz:Model", "cannot import module"),
    ("sklearn.linear_model:NoSuchModel", "has no"),
    ("sklearn.linear_model:LogisticRegression", "is a classifier"),
])
def test_import_path_models_refused(spec, words):
    with pytest.raises(ParameterError, match=re.escape(words)) as exc:
        make_models(spec, "regression")
    assert "`models`" in str(exc.value)


def test_import_path_model_refused_on_the_command_line(cli, data):
    code, out, err = cli("audit", "--data", data / "data.csv", "--target", "y", "--models",
                         "lr,os:system", "--out", data / "refused")
    assert code == 2
    assert "`--models`" in err and "not an estimator class" in err


def test_skipped_card_printed_with_what_to_do(cli, data):
    out_dir = data / "skipped"
    code, out, err = cli("audit", "--data", data / "data.csv", "--target", "y", "--quick",
                         "--sections", "overview,replicate", "--n-jobs", "1", "--models",
                         "lr,dummy", "--out", out_dir)
    assert code == 0, err
    (card,) = json.loads((out_dir / "report.json").read_text())["summary"]["cards"]
    assert card["state"] == "skipped" and card["caveat"]
    assert f"[not answered] {card['question']}" in out
    assert "What to do: " + _flat(card["caveat"]) in _flat(out)


def test_misplaced_parquet_refused(cli, tmp_path):
    path = tmp_path / "scores.parquet"
    pd.DataFrame({"study": ["s"] * 2, "model": ["lr", "rf"], "repeat": [0, 0], "fold": [0, 0],
                  "metric": ["accuracy"] * 2, "value": [0.8, 0.9]}).to_parquet(path)
    code, out, err = cli("audit", "--data", path, "--target", "value", "--out", tmp_path / "o")
    assert code == 2
    assert f"replikit audit --scores {path}" in err and len(err.strip().splitlines()) == 1

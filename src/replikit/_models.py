"""Named scikit-learn estimators, so the command line and the audit can say ``--models lr,rf``.

Each alias maps to a factory per task; factories return fresh, unfitted estimators.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import ParameterError

__all__ = ["MODEL_ALIASES", "make_model", "make_models", "default_models"]


def _lr(task: str):
    if task == "classification":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    from sklearn.linear_model import LinearRegression

    return LinearRegression()


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
    if task == "classification":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=100, min_samples_leaf=5, n_jobs=1)
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=100, min_samples_leaf=5, n_jobs=1)


def _gb(task: str):
    if task == "classification":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=100)
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(max_iter=100)


def _knn(task: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        from sklearn.neighbors import KNeighborsClassifier

        return make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=15))
    from sklearn.neighbors import KNeighborsRegressor

    return make_pipeline(StandardScaler(), KNeighborsRegressor(n_neighbors=15))


def _tree(task: str):
    if task == "classification":
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(min_samples_leaf=10)
    from sklearn.tree import DecisionTreeRegressor

    return DecisionTreeRegressor(min_samples_leaf=10)


def _dummy(task: str):
    if task == "classification":
        from sklearn.dummy import DummyClassifier

        return DummyClassifier(strategy="prior")
    from sklearn.dummy import DummyRegressor

    return DummyRegressor()


MODEL_ALIASES: dict[str, Callable[[str], object]] = {
    "lr": _lr, "ridge": _ridge, "lda": _lda, "rf": _rf, "gb": _gb, "knn": _knn, "tree": _tree,
    "dummy": _dummy,
}


def make_model(alias: str, task: str):
    """A fresh estimator for ``alias`` (see :data:`MODEL_ALIASES`) and ``task``."""
    if alias not in MODEL_ALIASES:
        raise ParameterError(
            f"`models`: unknown model {alias!r}; choose from {', '.join(MODEL_ALIASES)}."
        )
    return MODEL_ALIASES[alias](task)


def make_models(spec: str | list[str], task: str) -> dict[str, object]:
    """``'lr,rf'`` or ``['lr', 'rf']`` -> ``{'lr': ..., 'rf': ...}``."""
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    names = [n for n in names if n]
    if not names:
        raise ParameterError("`models`: give at least one model alias.")
    if len(set(names)) != len(names):
        raise ParameterError(f"`models`: a model is named twice in {names}.")
    return {n: make_model(n, task) for n in names}


def default_models(task: str) -> dict[str, object]:
    """The audit's default line-up: a linear model, a random forest and a trivial baseline."""
    return make_models(["lr", "rf", "dummy"], task)

"""Meta-regression: mixed-effects models of study estimates on study-level moderators.

:func:`meta_regression` fits ``y_i = x_i' beta + u_i + e_i`` with ``u_i ~ N(0, tau2)`` and
``e_i ~ N(0, v_i)`` (Raudenbush 2009, eq. 16.9; Viechtbauer 2005, 2010; metafor's ``rma.uni``
with ``mods``), with every τ² estimator of :func:`~replikit.replicate.meta_analysis`: the
coefficient table, the omnibus test of moderators QM (chi-square, or F under Knapp-Hartung), the
test of residual heterogeneity QE, residual τ² with its SE and Q-profile interval, I², H², the
pseudo-R² (proportion of τ² explained), predicted effects with confidence and prediction
intervals, and a bubble plot.

The numbers come from the one engine :mod:`replikit.replicate._rma` (weighted least squares
through the QR decomposition of ``W^(1/2) X``, never the normal equations, so that a moderator
such as a publication year next to the intercept loses no accuracy); without moderators it is
the meta-analysis of :func:`~replikit.replicate.meta_analysis`, number for number. This module
turns moderators (a frame, a dict, an array or a formula) into the model matrix and presents the
fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._compat import renamed, renamed_fields
from .._format import number, percent
from .._validation import check_confidence_level, check_float
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval, Result, TestResult, wald_interval
from . import _draw, _rma
from ._rma import RANK_TOL
from .meta import Heterogeneity, heterogeneity_of, model_name

__all__ = ["MetaRegression", "ModeratorTest", "Heterogeneity", "meta_regression"]


# ---------------------------------------------------------------------------------------------
# design matrices from moderators


@dataclass(frozen=True, slots=True)
class _Design:
    """A model matrix and how to rebuild it for new moderator values."""

    X: np.ndarray
    names: tuple
    terms: dict  # term -> tuple of column indices
    intercept: bool  # an intercept column was added (or the formula has one)
    encoders: tuple  # (term, 'numeric') or (term, 'categorical', levels) for frame input
    spec: object = None  # formulaic ModelSpec for formula input
    dropped: tuple = ()

    def matrix(self, newmods) -> np.ndarray:
        """Rows of the model matrix for new moderator values (see MetaRegression.predict)."""
        import pandas as pd

        p = len(self.names)
        if isinstance(newmods, dict):
            newmods = pd.DataFrame({key: np.atleast_1d(val) for key, val in newmods.items()})
        if isinstance(newmods, pd.Series):
            newmods = newmods.to_frame().T if newmods.name is None else newmods.to_frame()
        if isinstance(newmods, pd.DataFrame):
            if self.spec is not None:
                mm = self.spec.get_model_matrix(newmods)
                return np.asarray(mm, float)[:, [i for i in range(mm.shape[1])
                                                 if str(mm.columns[i]) in self.names]]
            cols = []
            if self.intercept:
                cols.append(np.ones(len(newmods)))
            for enc in self.encoders:
                term = enc[0]
                if term not in newmods.columns:
                    raise DataError(f"`newmods` needs the moderator column {term!r}; got "
                                    f"{list(newmods.columns)}.")
                if enc[1] == "numeric":
                    cols.append(pd.to_numeric(newmods[term], errors="raise").to_numpy(float))
                else:
                    values = newmods[term].astype(str).to_numpy()
                    unknown = sorted(set(values) - set(enc[2]))
                    if unknown:
                        raise DataError(f"`newmods`: {term!r} has level(s) {unknown} the model "
                                        f"was not fitted with; levels are {list(enc[2])}.")
                    cols.extend((values == lev).astype(float) for lev in enc[2][enc[3]:])
            X = np.column_stack(cols)
            keep = [i for i, nm in enumerate(self._all_names()) if nm in self.names]
            return X[:, keep]
        X = np.asarray(newmods, float)
        if X.ndim < 2:
            X = X.reshape(1, -1) if (X.size == p or (self.intercept and X.size == p - 1)) \
                else X.reshape(-1, 1)
        if self.intercept and X.shape[1] == p - 1:
            X = np.column_stack([np.ones(X.shape[0]), X])
        if X.shape[1] != p:
            raise DataError(f"`newmods` must have {p} columns ({', '.join(self.names)})"
                            + (f" or {p - 1} without the intercept" if self.intercept else "")
                            + f"; got {X.shape[1]}.")
        if not np.all(np.isfinite(X)):
            raise DataError("`newmods` must be finite.")
        return X

    def _all_names(self) -> list:
        names = ["intercept"] if self.intercept else []
        for enc in self.encoders:
            names += [enc[0]] if enc[1] == "numeric" else [f"{enc[0]}[{lev}]"
                                                            for lev in enc[2][enc[3]:]]
        return names


def _levels(values) -> tuple:
    """The levels of a factor column, the first being the reference: a categorical's own order,
    else the values as text, sorted as text ("108" before "11", as R's ``factor()`` of character
    values)."""
    import pandas as pd

    if isinstance(values.dtype, pd.CategoricalDtype):
        return tuple(str(c) for c in values.cat.categories if c in set(values))
    return tuple(sorted(pd.unique(values.astype(str))))


def _frame_design(frame, k: int, intercept: bool) -> tuple[list, list, list]:
    from pandas.api import types as ptypes

    cols, names, encoders = [], [], []
    for term in frame.columns:
        col = frame[term]
        name = str(term)
        if col.isna().any():
            bad = np.flatnonzero(col.isna().to_numpy())
            raise DataError(f"moderator {name!r} is missing for {bad.size} stud"
                            f"{'y' if bad.size == 1 else 'ies'} (positions "
                            f"{bad[:5].tolist()}); fill or drop them.")
        numeric = ptypes.is_numeric_dtype(col) and not ptypes.is_bool_dtype(col)
        if ptypes.is_bool_dtype(col):
            col = col.astype(int)
            numeric = True
        # a text or categorical column is a factor whatever its values look like ("11", "12",
        # "108" are three levels, as R's factor() makes them); numbers are a slope, also when
        # an object column holds them as numbers (not as text)
        if col.dtype == object and ptypes.infer_dtype(col, skipna=False) in (
                "integer", "floating", "mixed-integer-float", "decimal"):
            col, numeric = col.astype(float), True
        if numeric:
            x = col.to_numpy(float)
            if not np.all(np.isfinite(x)):
                raise DataError(f"moderator {name!r} must be finite; found NaN/inf.")
            cols.append(x)
            names.append(name)
            encoders.append((name, "numeric"))
        else:
            levels = _levels(col)
            values = col.astype(str).to_numpy()
            # dummies against the first level; without an intercept the first factor gets one
            # column per level (as R's model.matrix for ``~ 0 + factor``)
            first = 1 if (intercept or any(e[1] == "categorical" for e in encoders)) else 0
            encoders.append((name, "categorical", levels, first))
            for lev in levels[first:]:
                cols.append((values == lev).astype(float))
                names.append(f"{name}[{lev}]")
    return cols, names, encoders


def _design_iv(moderators, data, k: int, intercept: bool) -> _Design:
    import pandas as pd

    spec = None
    if isinstance(moderators, str):
        if data is None or not isinstance(data, pd.DataFrame):
            raise ParameterTypeError("a formula in `moderators` needs `data`, the DataFrame of "
                                     "study-level columns it names.")
        try:
            import formulaic
        except ImportError as exc:  # pragma: no cover - formulaic ships with statsmodels
            raise ParameterError("formulas in `moderators` need the package 'formulaic' "
                                 "(pip install formulaic); or pass a DataFrame of moderator "
                                 "columns.") from exc
        formula = moderators.strip()
        if "~" in formula:
            lhs, formula = formula.split("~", 1)
            if lhs.strip():
                raise ParameterError(f"`moderators`: give the right-hand side only "
                                     f"('~ ablat + alloc'); got {moderators!r}.")
        if len(data) != k:
            raise DataError(f"`data` must have one row per study ({k}); got {len(data)}.")
        try:
            mm = formulaic.model_matrix(formula, data.reset_index(drop=True))
        except Exception as exc:  # formulaic raises many types for bad formulas
            raise ParameterError(f"`moderators`: cannot build the model matrix of "
                                 f"{moderators!r}: {exc}") from None
        X = np.asarray(mm, float)
        names = [("intercept" if str(c) == "Intercept" else str(c)) for c in mm.columns]
        has_int = "intercept" in names
        terms = {}
        for term, sl in mm.model_spec.term_slices.items():
            name = str(term)
            if name == "1":
                continue
            terms[name] = tuple(range(sl.start, sl.stop))
        spec = mm.model_spec
        encoders = ()
    else:
        if moderators is None:
            cols, names, encoders = [], [], []
        else:
            if isinstance(moderators, pd.Series):
                moderators = moderators.to_frame(moderators.name or "x")
            elif isinstance(moderators, dict):
                moderators = pd.DataFrame({str(key): np.asarray(val).ravel()
                                           for key, val in moderators.items()})
            elif not isinstance(moderators, pd.DataFrame):
                arr = np.asarray(moderators)
                if arr.ndim == 1:
                    arr = arr[:, None]
                if arr.ndim != 2:
                    raise DataError(f"`moderators` must be a DataFrame, a dict of columns, a "
                                    f"formula or an array of shape (k, m); got shape "
                                    f"{arr.shape}.")
                names0 = ["x"] if arr.shape[1] == 1 else [f"x{j + 1}"
                                                          for j in range(arr.shape[1])]
                moderators = pd.DataFrame(arr, columns=names0)
            if len(moderators) != k:
                raise DataError(f"`moderators` must have one row per study ({k}); got "
                                f"{len(moderators)}.")
            cols, names, encoders = _frame_design(moderators.reset_index(drop=True), k,
                                                  intercept)
        if intercept:
            cols.insert(0, np.ones(k))
            names.insert(0, "intercept")
        if not cols:
            raise ParameterError("a model without moderators needs the intercept "
                                 "(`intercept=True`).")
        X = np.column_stack(cols)
        has_int = bool(intercept)
        terms, j = {}, 1 if intercept else 0
        for enc in encoders:
            n = 1 if enc[1] == "numeric" else len(enc[2]) - enc[3]
            terms[enc[0]] = tuple(range(j, j + n))
            j += n
        encoders = tuple(encoders)
    # drop columns that add nothing to the column space (as metafor does, with a warning)
    keep, dropped = [], []
    for j in range(X.shape[1]):
        trial = X[:, keep + [j]]
        s = np.linalg.svd(trial, compute_uv=False)
        if s[-1] > RANK_TOL * s[0] and np.any(X[:, j] != 0):
            keep.append(j)
        else:
            dropped.append(names[j])
    if dropped:
        import warnings

        from ..errors import ReplikitWarning

        warnings.warn(f"redundant moderator column(s) dropped from the model (collinear with "
                      f"the others or constant): {', '.join(dropped)}.", ReplikitWarning,
                      stacklevel=4)
        remap = {old: new for new, old in enumerate(keep)}
        terms = {t: tuple(remap[i] for i in idx if i in remap) for t, idx in terms.items()}
        terms = {t: idx for t, idx in terms.items() if idx}
        X = X[:, keep]
        names = [names[j] for j in keep]
    if X.shape[0] <= X.shape[1]:
        counts = ", ".join(f"{t} {len(idx)}" for t, idx in terms.items())
        raise DataError(f"`moderators`: a meta-regression with {X.shape[1]} coefficient(s) "
                        f"({'intercept 1, ' if has_int else ''}{counts}; a factor takes one per "
                        f"level after the first) needs more than {X.shape[1]} studies; got "
                        f"{X.shape[0]} — use fewer moderators or factor levels.")
    return _Design(X, tuple(names), terms, has_int, encoders, spec, tuple(dropped))


def _has_intercept_space(X) -> bool:
    """The constant vector lies in the column space of X (the model nests the intercept)."""
    ones = np.ones(X.shape[0])
    coef, *_ = np.linalg.lstsq(X, ones, rcond=None)
    return bool(np.allclose(X @ coef, ones, atol=1e-8))




# ---------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True, slots=True)
class ModeratorTest(TestResult):
    """Omnibus Wald test that a set of coefficients is zero (metafor's QM, ``anova(btt=)``).

    Parameters
    ----------
    statistic : float
        ``QM = b' Var(b)^-1 b`` over the tested coefficients (chi-square with ``df``), or
        ``QM / df`` (F with ``df`` and ``df2``) under Knapp-Hartung.
    pvalue : float
        The p-value.
    df : int
        Number of tested coefficients (the chi-square df, or the F numerator df).
    estimate, se : float
        The coefficient and its SE when one coefficient is tested; NaN otherwise.
    alternative : str, default 'two-sided'
        The test is two-sided.
    method : str, default 'Test of moderators'
        Name of the test.
    extra : dict
        Nothing else.
    df2 : int or None, default None
        Denominator df ``k - p`` of the F test (Knapp-Hartung), None for chi-square.
    coefficients : tuple of str, default ()
        The tested coefficients.
    distribution : {'chi2', 'F'}, default 'chi2'
        Reference distribution of the statistic.

    See Also
    --------
    MetaRegression.test_moderators : Builds it.

    References
    ----------
    .. [1] Raudenbush, S. W. (2009). Analyzing Effect Sizes: Random-Effects Models. In H.
       Cooper, L. V. Hedges & J. C. Valentine (Eds.), The Handbook of Research Synthesis and
       Meta-Analysis (2nd ed., pp. 295–315). Russell Sage Foundation.
    .. [2] Knapp, G. & Hartung, J. (2003). Improved Tests for a Random Effects Meta-Regression
       with a Single Covariate. Statistics in Medicine, 22(17), 2693–2710.

    Examples
    --------
    >>> fit = meta_regression([0.10, 0.30, 0.35, 0.65, 0.45, 0.15],
    ...                       [0.01, 0.02, 0.015, 0.01, 0.02, 0.03],
    ...                       moderators={"dose": [1, 2, 3, 6, 4, 1]})
    >>> test = fit.test_moderators()
    >>> test.coefficients, test.df, round(test.statistic, 3)
    (('dose',), 1, 16.886)
    """

    df2: int | None = None
    coefficients: tuple = ()
    distribution: str = "chi2"

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval of the tested coefficient (NaN when several are tested): z, or t(``df2``)
        under Knapp-Hartung.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        return wald_interval(self.estimate, self.se, confidence_level,
                             df=self.df2 if self.distribution == "F" else None)

    def to_frame(self, confidence_level: float = 0.95):
        """One row: the tested coefficients, ``statistic, df, df2, pvalue, distribution`` and
        the estimate with its interval where one coefficient is tested.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low, ci_high``.

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        frame = TestResult.to_frame(self, confidence_level)
        frame["coefficients"] = ", ".join(self.coefficients)
        return frame

    def __str__(self) -> str:
        which = ", ".join(self.coefficients)
        if self.distribution == "F":
            return (f"Test of moderators ({which}): F({self.df}, {self.df2}) = "
                    f"{number(self.statistic, 5)}, p {_p(self.pvalue)}")
        return (f"Test of moderators ({which}): QM({self.df}) = {number(self.statistic, 5)}, "
                f"p {_p(self.pvalue)}")


def _p(p: float) -> str:
    """``'= 0.031'`` or ``'< 0.001'`` for a sentence."""
    from .._format import pvalue

    text = pvalue(p)
    return text if text.startswith("<") else f"= {text}"


def _fmt_p(p: float) -> str:
    """A p-value in a coefficient table (metafor's printing)."""
    return "<.0001" if p < 1e-4 else f"{p:.4f}"


@renamed_fields(method="tau2_method", ci_method="interval", p="n_coefficients",
                values={"interval": {"z": "wald"}})
@dataclass(frozen=True, slots=True)
class MetaRegression(Result):
    """A fitted meta-regression (mixed-effects model; fixed-effects with ``tau2_method='FE'``).

    Parameters
    ----------
    names : tuple of str
        Coefficient names (``'intercept'``, numeric moderators, ``'factor[level]'`` dummies
        against the first level).
    beta, vcov : ndarray
        Coefficients and their covariance (Knapp-Hartung-scaled with ``interval='knha'``).
    tau2_method : str
        The residual τ² estimator, or ``'FE'``.
    interval : {'wald', 'knha'}
        Wald z tests, or Knapp-Hartung t and F tests.
    df : float or None
        Residual df ``k - p`` of the t and F tests (Knapp-Hartung), None for z tests.
    tau2, se_tau2 : float
        Residual between-study variance and its SE.
    qe, qe_df, qe_pvalue : float, int, float
        Test of residual heterogeneity (Cochran's QE with fixed-effect weights, chi-square with
        ``k - p`` df).
    qm_test : ModeratorTest
        Omnibus test of the moderators (every coefficient but the intercept by default).
    i2, h2 : float
        Residual I² and H² as metafor prints them.
    r2 : float or None
        Pseudo-R², percent of τ² explained: ``100 max(0, (tau2_0 - tau2) / tau2_0)`` with
        ``tau2_0`` from the model without moderators (Raudenbush 2009, eq. 16.17); for the
        fixed-effect model the adjusted R² of the weighted regression. None for models without
        an intercept in their column space or without moderators.
    k, n_coefficients : int
        Number of studies and of coefficients (metafor's ``p``).
    labels, y, v, X : tuple, ndarray
        Study labels, estimates, sampling variances and the model matrix.
    terms : dict
        Moderator -> indices of its coefficients (for tests of a factor).
    dropped : tuple of str
        Redundant model-matrix columns left out.
    pi_dist : str
        Reference distribution of prediction intervals (see :meth:`predict`).
    knha_floor : bool
        The Knapp-Hartung factor was floored at 1.
    tol : float
        Convergence tolerance of ML and REML.
    trp0 : float
        ``tr(P)`` under fixed-effect weights (for I² and H²).
    design : object
        How to rebuild the model matrix for new moderator values.

    See Also
    --------
    meta_regression : Builds it.
    MetaResult : The model without moderators.
    Heterogeneity : Residual heterogeneity with intervals.

    References
    ----------
    .. [1] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.

    Examples
    --------
    >>> fit = meta_regression([0.10, 0.30, 0.35, 0.65, 0.45, 0.15],
    ...                       [0.01, 0.02, 0.015, 0.01, 0.02, 0.03],
    ...                       moderators={"dose": [1, 2, 3, 6, 4, 1]})
    >>> fit.to_frame()[["term", "estimate"]].round(4)
            term  estimate
    0  intercept    0.0282
    1       dose    0.1050
    """

    names: tuple
    beta: np.ndarray = field(repr=False)
    vcov: np.ndarray = field(repr=False)
    tau2_method: str
    interval: str
    df: float | None
    tau2: float
    se_tau2: float
    qe: float
    qe_df: int
    qe_pvalue: float
    qm_test: ModeratorTest
    i2: float
    h2: float
    r2: float | None
    k: int
    n_coefficients: int
    labels: tuple = field(repr=False)
    y: np.ndarray = field(repr=False)
    v: np.ndarray = field(repr=False)
    X: np.ndarray = field(repr=False)
    terms: dict = field(repr=False)
    dropped: tuple = ()
    pi_dist: str = "z"
    knha_floor: bool = False
    tol: float = 1e-12
    trp0: float = field(default=float("nan"), repr=False)
    design: _Design | None = field(default=None, repr=False)

    # -- coefficients ---------------------------------------------------------------------
    @property
    def se(self) -> np.ndarray:
        """Standard errors of the coefficients."""
        return np.sqrt(np.diag(self.vcov))

    @property
    def statistic(self) -> np.ndarray:
        """z (or t) statistics of the coefficients.

        Under Knapp-Hartung with QE = 0 (every effect on the fitted model) the SEs are 0: a
        coefficient's t is then ±∞, as metafor prints it, except where the coefficient is 0
        exactly, as every coefficient but the intercept is when the effects are identical —
        there t is 0/0, NaN (metafor prints ±Inf for the rounding error of such a slope)."""
        se = self.se
        with np.errstate(divide="ignore", invalid="ignore"):
            t = self.beta / se
        if np.any(se == 0) and "intercept" in self.names and np.ptp(self.y) == 0:
            zero = (se == 0) & (np.asarray(self.names) != "intercept")
            t = np.where(zero, np.nan, t)
        return t

    @property
    def pvalue(self) -> np.ndarray:
        """Two-sided p-values of the coefficients."""
        return _rma.two_sided_p(self.statistic, self.df)

    @property
    def qm(self) -> float:
        """The omnibus statistic of :attr:`qm_test` (QM, or F under Knapp-Hartung)."""
        return self.qm_test.statistic

    @property
    def qm_pvalue(self) -> float:
        """The p-value of :attr:`qm_test`."""
        return self.qm_test.pvalue

    @property
    def intercept(self) -> bool:
        """The model has an intercept column."""
        return "intercept" in self.names

    @property
    def model_label(self) -> str:
        """metafor's model label: ``'Mixed-Effects Model (REML)'``, ``'RE Model (REML)'``."""
        if self.n_coefficients == 1 and self.intercept:
            return "FE Model" if self.tau2_method == "FE" else f"RE Model ({self.tau2_method})"
        return "FE Model with moderators" if self.tau2_method == "FE" else \
            f"Mixed-Effects Model ({self.tau2_method})"

    @property
    def title(self) -> str:
        kind = "Fixed-effects" if self.tau2_method == "FE" else "Mixed-effects"
        return f"{kind} meta-regression ({self.tau2_method}, k = {self.k})"

    def _crit(self, confidence_level: float) -> float:
        return _rma.quantile(check_confidence_level(confidence_level), self.df)

    def _model(self) -> _rma.Model:
        return _rma.Model(np.asarray(self.y, float), np.asarray(self.v, float),
                          np.asarray(self.X, float), tuple(self.labels), tuple(self.names),
                          self.tau2_method, self.interval, self.knha_floor, self.tol,
                          self.pi_dist)

    def _intervals(self, confidence_level: float):
        q = self._crit(confidence_level)
        return self.beta - q * self.se, self.beta + q * self.se

    def confidence_interval(self, confidence_level: float = 0.95,
                            coefficient=None) -> ConfidenceInterval:
        """Interval of one coefficient (z, or t(k - p) with Knapp-Hartung).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.
        coefficient : str or int, optional
            The coefficient (name or 0-based position). Default: the first moderator's (the
            intercept in a model without moderators). :meth:`to_frame` has every coefficient's
            interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        if coefficient is None:
            coefficient = 1 if self.intercept and self.n_coefficients > 1 else 0
        j = self._btt(coefficient)
        if len(j) != 1:
            raise ParameterError(f"`coefficient` must name one coefficient of "
                                 f"{list(self.names)}; got {coefficient!r}.")
        lo, hi = self._intervals(confidence_level)
        return ConfidenceInterval(float(lo[j[0]]), float(hi[j[0]]))

    def to_frame(self, confidence_level: float = 0.95):
        """The coefficient table: ``term, estimate, se, statistic, df, pvalue, ci_low,
        ci_high``, one row per coefficient.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of ``ci_low, ci_high``.

        Returns
        -------
        pandas.DataFrame
            One row per coefficient.
        """
        import pandas as pd

        lo, hi = self._intervals(confidence_level)
        return pd.DataFrame({"term": list(self.names), "estimate": self.beta, "se": self.se,
                             "statistic": self.statistic, "df": self.df,
                             "pvalue": self.pvalue, "ci_low": lo, "ci_high": hi})

    def summary_frame(self):
        """One tidy row of model statistics (k, p, τ², QE, QM, I², H², R², estimator).

        Returns
        -------
        pandas.DataFrame
            One row.
        """
        import pandas as pd

        return pd.DataFrame([{
            "tau2_method": self.tau2_method, "interval": self.interval, "k": self.k,
            "n_coefficients": self.n_coefficients, "tau2": self.tau2, "se_tau2": self.se_tau2,
            "qe": self.qe, "qe_df": self.qe_df, "qe_pvalue": self.qe_pvalue, "qm": self.qm,
            "qm_df": self.qm_test.df, "qm_df2": self.qm_test.df2, "qm_pvalue": self.qm_pvalue,
            "qm_distribution": self.qm_test.distribution, "i2": self.i2, "h2": self.h2,
            "r2": self.r2, "moderators": ", ".join(self.terms)}])

    def to_dict(self) -> dict:
        """The model statistics and the coefficient table in JSON types.

        Returns
        -------
        dict
            ``summary`` (the row of :meth:`summary_frame`) and ``coefficients`` (the rows of
            :meth:`to_frame`).
        """
        from ..results import to_jsonable

        return {"summary": to_jsonable(self.summary_frame().iloc[0].to_dict()),
                "coefficients": to_jsonable(self.to_frame())}

    # -- tests, predictions, heterogeneity -------------------------------------------------
    def test_moderators(self, coefficients=None) -> ModeratorTest:
        """Wald test that the given coefficients are all zero (metafor's ``anova(btt=)``).

        Parameters
        ----------
        coefficients : None, str, int or sequence of them
            Coefficient names or 0-based positions, or moderator names (a factor's dummies
            together). Default: every coefficient but the intercept.

        Returns
        -------
        ModeratorTest
            ``QM ~ chi2(m)``, or ``QM / m ~ F(m, k - p)`` with Knapp-Hartung.
        """
        idx = self._btt(coefficients)
        b = self.beta[idx]
        vb = self.vcov[np.ix_(idx, idx)]
        try:
            qm = float(b @ np.linalg.solve(vb, b))
        except np.linalg.LinAlgError:  # Var(b) = 0: Knapp-Hartung with QE = 0 (metafor: NA)
            qm = float("nan")
        m = len(idx)
        names = tuple(self.names[i] for i in idx)
        est = float(b[0]) if m == 1 else float("nan")
        se = float(math.sqrt(vb[0, 0])) if m == 1 else float("nan")
        if self.df is None:
            return ModeratorTest(statistic=qm, pvalue=float(_rma.chi2_sf(qm, m)), df=m,
                                 estimate=est, se=se, method="Test of moderators",
                                 coefficients=names, distribution="chi2")
        from scipy import special

        f = qm / m
        return ModeratorTest(statistic=f, pvalue=float(special.fdtrc(m, self.df, f)), df=m,
                             estimate=est, se=se, method="Test of moderators",
                             df2=int(self.df), coefficients=names, distribution="F")

    def _btt(self, coefficients) -> list:
        if coefficients is None:
            idx = [i for i, nm in enumerate(self.names) if nm != "intercept"]
            return idx or list(range(self.n_coefficients))
        items = [coefficients] if isinstance(coefficients, (str, int, np.integer)) \
            else list(coefficients)
        idx = []
        p = self.n_coefficients
        for it in items:
            if isinstance(it, (int, np.integer)) and not isinstance(it, bool):
                if not 0 <= int(it) < p:
                    raise ParameterError(f"`coefficients`: position {it} outside 0..{p - 1}"
                                         f" (coefficients {list(self.names)}).")
                idx.append(int(it))
            elif str(it) in self.names:
                idx.append(self.names.index(str(it)))
            elif str(it) in self.terms:
                idx.extend(self.terms[str(it)])
            else:
                raise ParameterError(f"`coefficients`: {it!r} is not a coefficient or "
                                     f"moderator; coefficients are {list(self.names)}.")
        return sorted(set(idx))

    def predict(self, newmods=None, *, confidence_level: float = 0.95,
                pi_dist: str | None = None):
        """Predicted (average) effects with confidence and prediction intervals.

        Parameters
        ----------
        newmods : DataFrame, dict or array-like, optional
            Moderator values: a frame or dict with the moderator columns (categories by label),
            or a model-matrix array with or without the intercept column, as metafor's
            ``newmods``. Default: the fitted values of the studies.
        confidence_level : float, default 0.95
            Level of the intervals.
        pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
            Prediction-interval reference: normal, t with ``k - p`` df, or t with
            ``k - p - 1`` df (metafor's ``predtype='Riley'``). Default: the model's.

        Returns
        -------
        pandas.DataFrame
            ``estimate, se, ci_low, ci_high, pi_low, pi_high`` (``pi = estimate ±
            q sqrt(se² + τ²)``, metafor's ``predict.rma``) and the moderator columns.
        """
        import pandas as pd

        level = check_confidence_level(confidence_level)
        Xn = self.X if newmods is None else self.design.matrix(newmods)
        est = Xn @ self.beta
        se = np.sqrt(np.einsum("ij,jk,ik->i", Xn, self.vcov, Xn))
        q = self._crit(level)
        dist = _rma.check_pi_dist(pi_dist or self.pi_dist, "pi_dist")
        half = _rma.pi_quantile(dist, level, self.k - self.n_coefficients) * \
            np.sqrt(se ** 2 + self.tau2)
        out = pd.DataFrame({"estimate": est, "se": se, "ci_low": est - q * se,
                            "ci_high": est + q * se, "pi_low": est - half,
                            "pi_high": est + half})
        for j, nm in enumerate(self.names):
            if nm != "intercept":
                out[nm] = Xn[:, j]
        if newmods is None:
            out.insert(0, "label", list(self.labels))
        return out

    def heterogeneity(self, confidence_level: float = 0.95) -> Heterogeneity:
        """Residual τ² (with SE), τ, I² and H² with Q-profile intervals (metafor's ``confint``
        of an ``rma.uni`` model).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the intervals.

        Returns
        -------
        Heterogeneity
            The estimates and their intervals.
        """
        level = check_confidence_level(confidence_level)
        return heterogeneity_of(self._model(), tau2=self.tau2, q=self.qe, trp0=self.trp0,
                                i2=self.i2, h2=self.h2, level=level,
                                residual=self.n_coefficients > 1 or not self.intercept)

    @property
    def fitted(self) -> np.ndarray:
        """``X beta``, the fitted value of every study."""
        return self.X @ self.beta

    @property
    def residuals(self) -> np.ndarray:
        """``y - X beta``."""
        return self.y - self.fitted

    @property
    def weights(self) -> np.ndarray:
        """Weights in percent, ``100 w_i / sum w`` with ``w_i = 1 / (v_i + tau2)``."""
        w = 1.0 / (self.v + self.tau2)
        return 100 * w / w.sum()

    def plot(self, moderator: str | None = None, *, ax=None, confidence_level: float = 0.95,
             prediction_interval: bool = True, transform=None, xlabel: str | None = None,
             ylabel: str = "estimate", title: str | None = None):
        """Bubble plot of the estimates against one moderator (metafor's ``regplot``).

        Points have area proportional to their weight in the model; the line is the predicted
        average effect with its confidence band (and the prediction band, dotted), other
        moderators held at their weighted means as metafor does.

        Parameters
        ----------
        moderator : str, optional
            A numeric moderator (default: the first one).
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        confidence_level : float, default 0.95
            Level of the bands.
        prediction_interval : bool, default True
            Draw the prediction band of a mixed-effects model.
        transform : callable, optional
            Back-transform of the drawn values (e.g. ``numpy.exp``).
        xlabel : str, optional
            Label of the x axis (default: the moderator).
        ylabel : str, default 'estimate'
            Label of the y axis.
        title : str, optional
            A title above the caption line.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        See Also
        --------
        replikit.replicate.bubble_plot : The same figure, with ``transform`` also a scale name.
        """
        from .._plotting import axes_or_new

        numeric = [t for t, idx in self.terms.items() if len(idx) == 1
                   and self.names[idx[0]] == t]
        if moderator is None:
            if not numeric:
                raise DataError("the bubble plot needs a numeric moderator; the model has "
                                f"{list(self.terms)}.")
            moderator = numeric[0]
        if moderator not in numeric:
            raise DataError(f"`moderator` must be one of the model's numeric moderators "
                            f"{numeric}; got {moderator!r}.")
        level = check_confidence_level(confidence_level)
        tf = transform or (lambda a: np.asarray(a, float))
        j = self.names.index(moderator)
        x = self.X[:, j]
        w = np.asarray(self.weights)
        grid = np.linspace(x.min(), x.max(), 100)
        Xn = np.tile((w[:, None] * self.X).sum(axis=0) / w.sum(), (grid.size, 1))
        Xn[:, j] = grid
        est = Xn @ self.beta
        se = np.sqrt(np.einsum("ij,jk,ik->i", Xn, self.vcov, Xn))
        q = self._crit(level)
        pi_band = None
        if prediction_interval and self.tau2_method != "FE":
            dist = _rma.check_pi_dist(self.pi_dist)
            half = _rma.pi_quantile(dist, level, self.k - self.n_coefficients) * \
                np.sqrt(se ** 2 + self.tau2)
            pi_band = (tf(est - half), tf(est + half))
        qm = self.qm_test
        note = (f"{self.model_label}; slope {number(self.beta[j], 4)} (SE "
                f"{number(self.se[j])}, p {_p(self.pvalue[j])})\n"
                + (f"R² = {percent(self.r2 / 100, 3)}; " if self.r2 is not None else "")
                + f"test of moderators p {_p(qm.pvalue)}")
        ax = axes_or_new(ax, 5.6, 4.0)
        return _draw.bubble(ax, x=x, y=tf(self.y), weights=w, grid=grid, est=tf(est),
                            ci_band=(tf(est - q * se), tf(est + q * se)), pi_band=pi_band,
                            level=level, xlabel=xlabel or moderator, ylabel=ylabel, note=note,
                            title=title)

    def __str__(self) -> str:
        lo, hi = self._intervals(0.95)
        resid = self.n_coefficients > 1 or not self.intercept
        kind = "Knapp-Hartung t and F tests" if self.interval == "knha" else "Wald z tests"
        lines = [f"{self.title}; {model_name(self.tau2_method)}; {kind}"]
        if self.tau2_method != "FE":
            lines.append(f"  τ² ({'residual' if resid else 'total'}) = {number(self.tau2, 4)} "
                         f"(SE = {number(self.se_tau2, 4)}), τ = "
                         f"{number(math.sqrt(self.tau2), 4)}")
        lines.append(f"  I² = {percent(self.i2 / 100, 4)}; H² = {number(self.h2, 4)}"
                     + ("" if self.r2 is None else f"; R² (heterogeneity accounted for) = "
                                                   f"{percent(self.r2 / 100, 4)}"))
        lines.append(f"  Test for {'residual ' if resid else ''}heterogeneity: "
                     f"QE({self.qe_df}) = {number(self.qe, 6)}, p {_p(self.qe_pvalue)}")
        if resid:
            lines.append("  " + str(self.qm_test))
        width = max(len(n) for n in self.names)
        stat = "t" if self.df is not None else "z"
        lines.append(f"  {'':<{width}}  {'estimate':>10} {'se':>9} {stat + 'val':>9} "
                     f"{'pval':>8} {'ci_low':>10} {'ci_high':>10}")
        for j, nm in enumerate(self.names):
            lines.append(f"  {nm:<{width}}  {self.beta[j]:10.4f} {self.se[j]:9.4f} "
                         f"{self.statistic[j]:9.4f} {_fmt_p(self.pvalue[j]):>8} "
                         f"{lo[j]:10.4f} {hi[j]:10.4f}")
        if self.dropped:
            lines.append(f"  redundant columns dropped: {', '.join(self.dropped)}")
        return "\n".join(lines)


@renamed(method="tau2_method", ci="interval", values={"interval": {"z": "wald"}})
def meta_regression(y, v=None, *, se=None, moderators=None, data=None, labels=None,
                    tau2_method: str = "REML", interval: str = "wald", knha_floor: bool = False,
                    intercept: bool = True, coefficients=None, pi_dist: str | None = None,
                    tol: float = 1e-12) -> MetaRegression:
    """Mixed-effects meta-regression of estimates on study-level moderators.

    Parameters
    ----------
    y : array-like of shape (k,)
        Study estimates.
    v, se : array-like of shape (k,), optional
        Sampling variances or standard errors (give one).
    moderators : DataFrame, dict, array-like or str, optional
        Study-level moderators, one row per study: numeric (and boolean) columns enter as
        slopes; text and categorical columns are factors whatever their values look like
        (``"11", "12", "108"`` are three levels, as metafor makes them), coded as dummies
        against their first level: a categorical's first category, else the first in sorted
        order (text sorts as text, ``"108"`` before ``"11"``, as R's ``factor()``). To make a
        numeric column a factor, pass it as a categorical (``frame.astype({"x": "category"})``,
        levels in numeric order) or write ``C(x)`` in a formula. An array gives columns
        ``x1, x2, ...``; a formula string (``'~ ablat + C(alloc)'``, needs the package
        ``formulaic``) is evaluated on ``data``. None fits the model without moderators (the
        random-effects model of :func:`~replikit.replicate.meta_analysis`).
    data : DataFrame, optional
        The study-level table a formula refers to.
    labels : sequence of str, optional
        Study labels.
    tau2_method : {'REML', 'ML', 'DL', 'HE', 'HS', 'SJ', 'PM', 'FE'}, default 'REML'
        Residual τ² estimator, or ``'FE'`` for the fixed-effects meta-regression.
    interval : {'wald', 'knha'}, default 'wald'
        Wald z tests and a chi-square QM, or Knapp & Hartung (2003): ``Var(b)`` scaled by
        ``QE(tau2) / (k - p)``, t(k - p) tests and an F(m, k - p) omnibus test.
    knha_floor : bool, default False
        Floor the Knapp-Hartung factor at 1 (metafor's ``test='adhoc'``).
    intercept : bool, default True
        Add an intercept column (ignored for formulas, which say it themselves).
    coefficients : optional
        Coefficients of the omnibus test QM (metafor's ``btt``); default all but the intercept.
    pi_dist : {'z', 't(k-1)', 't(k-2)'}, optional
        Prediction intervals: z, t(k - p) or t(k - p - 1). Default z with Wald tests, t(k - p)
        with Knapp-Hartung, as metafor's ``predict``.
    tol : float, default 1e-12
        Convergence tolerance of ML and REML Fisher scoring (change of τ²). metafor stops at an
        absolute change of 1e-5, which moves the 4th decimal of some printed numbers.

    Returns
    -------
    MetaRegression
        Coefficients, tests, residual heterogeneity and the pseudo-R².

    Raises
    ------
    DataError
        Moderators with the wrong number of rows or missing values, or too few studies for the
        coefficients.

    See Also
    --------
    meta_analysis : The model without moderators.
    influence : Diagnostics of every study, also for a meta-regression.
    regression_test : Funnel-plot asymmetry, a meta-regression on a precision measure.

    Notes
    -----
    Weights ``w_i = 1/(v_i + tau2)``; ``b = (X'WX)^-1 X'Wy``, ``Var(b) = (X'WX)^-1``
    (Raudenbush 2009, eqs. 16.10-16.11); ``QE = sum (y - X b_FE)^2 / v`` ~ chi2(k - p) under
    homogeneity (eq. 16.7); ``QM = b_2' Var(b_2)^-1 b_2`` (eq. 16.12); pseudo-R² eq. 16.17;
    residual ``I2 = 100 tau2 / (vt + tau2)`` with ``vt = (k - p) / tr(P)``. Viechtbauer (2010,
    sec. 3.3) and metafor's ``rma.uni`` define every printed number; the tests reproduce
    metafor's published examples. Meta-regression asks why studies differ, the step after the
    random-effects combination of Vijayakumar & Cheung (2021).

    References
    ----------
    .. [1] Raudenbush, S. W. (2009). Analyzing Effect Sizes: Random-Effects Models. In H.
       Cooper, L. V. Hedges & J. C. Valentine (Eds.), The Handbook of Research Synthesis and
       Meta-Analysis (2nd ed., pp. 295–315). Russell Sage Foundation.
    .. [2] Viechtbauer, W. (2005). Bias and Efficiency of Meta-Analytic Variance Estimators in
       the Random-Effects Model. Journal of Educational and Behavioral Statistics, 30(3),
       261–293.
    .. [3] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48.
    .. [4] Knapp, G. & Hartung, J. (2003). Improved Tests for a Random Effects Meta-Regression
       with a Single Covariate. Statistics in Medicine, 22(17), 2693–2710.
    .. [5] Thompson, S. G. & Sharp, S. J. (1999). Explaining Heterogeneity in Meta-Analysis: A
       Comparison of Methods. Statistics in Medicine, 18(20), 2693–2708.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0.10, 0.30, 0.35, 0.65, 0.45, 0.15])
    >>> v = np.array([0.01, 0.02, 0.015, 0.01, 0.02, 0.03])
    >>> fit = meta_regression(y, v, moderators={"dose": [1, 2, 3, 6, 4, 1]})
    >>> fit.names
    ('intercept', 'dose')
    >>> round(float(fit.beta[1]), 4), round(fit.qe, 4)
    (0.105, 0.3206)
    """
    method = _rma.check_method(tau2_method)
    kind = _rma.check_meta_interval(interval)
    pi_dist = _rma.check_pi_dist(pi_dist) if pi_dist is not None else \
        _rma.default_pi_dist(kind)
    y, v, labels = _rma.check_studies(y, v, se, labels)
    tol = check_float(tol, "tol")
    if not tol > 0:
        raise ParameterError(f"`tol` must be > 0; got {tol}.")
    k = y.size
    design = _design_iv(moderators, data, k, bool(intercept))
    X = design.X
    p = X.shape[1]
    only_intercept = design.names == ("intercept",)
    f = _rma.fit(y, v, None if only_intercept else X, method=method, interval=kind,
                 knha_floor=knha_floor, tol=tol)
    tau2 = float(f.tau2)
    qe = float(f.qe)
    trp0 = float(f.trp0)
    i2, h2 = (float(a) for a in _rma.i2_h2(qe, k - p, trp0, tau2, fixed=method == "FE"))
    r2 = None
    if p > 1 and _has_intercept_space(X):
        if method == "FE":
            q_tot = float(_rma.qe(y, v))
            r2 = 0.0 if q_tot <= 0 else 100 * max(0.0, 1 - (qe / (k - p)) / (q_tot / (k - 1)))
        else:
            tau2_0 = float(_rma.tau2(y, v, method=method, tol=tol))
            r2 = 0.0 if tau2_0 <= 0 else 100 * max(0.0, (tau2_0 - tau2) / tau2_0)
    se_t2 = _rma.se_tau2(y, v, X, method, tau2) if method != "FE" else float("nan")
    beta = np.asarray(f.beta).reshape(p)
    vcov = np.asarray(f.vb).reshape(p, p)
    res = MetaRegression(
        names=design.names, beta=beta, vcov=vcov, tau2_method=method, interval=kind,
        df=float(k - p) if kind == "knha" else None, tau2=tau2, se_tau2=se_t2, qe=qe,
        qe_df=int(k - p), qe_pvalue=float(_rma.chi2_sf(qe, k - p)),
        qm_test=ModeratorTest(statistic=0.0, pvalue=1.0, df=0, estimate=float("nan"),
                              se=float("nan")),
        i2=i2, h2=h2, r2=r2, k=k, n_coefficients=p, labels=tuple(labels), y=y, v=v, X=X,
        terms=dict(design.terms), dropped=design.dropped, pi_dist=pi_dist,
        knha_floor=bool(knha_floor), tol=tol, trp0=trp0, design=design)
    object.__setattr__(res, "qm_test", res.test_moderators(coefficients))
    return res

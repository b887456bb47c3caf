"""Seed 000, Study 2: how well do the replication procedures tell replications from
non-replications?

From a pooled dataset (the "population"), draw K studies of n rows; split each 2:1 into train and
test and run K-fold CV on the training part. In the last 2 or 4 studies reduce the population R2
by Delta by adding noise to y with ``sigma2_change = Var(y) (R2_old / R2_new - 1)``,
``R2_new = R2_old - Delta`` (seed, "Data and Simulation Design"). Then run, for each model and
each Delta:

* single studies vs the original (study 0): inconsistency (95% CI of the difference excludes 0)
  and consistency (90% CI inside +-margin) with study SEs from FE or RE pooling of the folds (CV)
  or Olkin-Finn (test) — the seed's own SEs, replayed as the seed ran them. On a test R2 of a
  fitted model Olkin-Finn is too small (it assumes calibrated predictions; see
  :mod:`replikit.replicate.validity` and docs/replicate.md, "R2 by sample type"), so the
  proportions judged inconsistent here are those of the seed's procedure, not of replikit's
  calibrated defaults (delta-method SEs from predictions);
* population: FE or RE meta-analysis of all studies; a study is *captured* if its 95% CI overlaps
  the population CI;

and report the proportion of replications and of non-replications judged inconsistent,
consistent, or captured, averaged over repetitions with Monte-Carlo SEs.

The linear models ('lr', 'ridge') are fitted in closed form for all studies, scenarios and
repetitions in batched array expressions (:mod:`._fits`); every noise level is one extra
right-hand side of the same solve. Other scikit-learn models ('lasso', 'enet', 'rf', 'svm',
'mlp') are fitted by :func:`replikit.experiment.run`, one (study, outcome) pair per task, on the
same splits (the fold labels of :class:`~replikit.replicate.design.HoldOutCV`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._random import root_seed_sequence, task_int_seed, task_rng
from .._threads import single_blas
from .._validation import check_choice, check_float, check_int
from ..errors import DataError, ParameterError, warn
from ._fits import ols_cv_test
from .design import HoldOutCV, LabeledFolds
from .meta import TAU2_METHODS, tau2_estimate

__all__ = ["ReplicationSimulation", "simulate_replication", "SIM_MODELS"]

LINEAR = {"lr": 0.0, "ridge": 10.0}
SIM_MODELS = ("lr", "ridge", "lasso", "enet", "rf", "svm", "mlp")
SEED_CHANGED = (2, 4)  # the seed's numbers of non-replicating studies
_R2_FLOOR = 1e-3  # Olkin-Finn needs R2 > 0: fold/test R2 below this get the SE of R2 = 1e-3


@dataclass(frozen=True, slots=True)
class ReplicationSimulation:
    """Result of :func:`simulate_replication`.

    Attributes
    ----------
    table : DataFrame
        Long table: ``model, measure ('cv'|'test'), stage1 ('fixed'|'random'|'-'), stage2
        ('-'|'fixed'|'random'), procedure ('inconsistency'|'consistency'|'captured'), margin,
        n_changed, delta, group ('replication'|'nonreplication'), proportion, mc_se,
        n_repetitions``.
    r2_population : float
        R2 of least squares on the pooled data (R2_old).
    deltas, n_changed, margins : tuple
    n_repetitions : int
    runtime_seconds : float
    settings : dict
    notes : tuple of str
        Caveats of this run (e.g. how many fold or test R2 fell below the Olkin-Finn floor or
        were undefined); empty when there are none.
    """

    table: pd.DataFrame
    r2_population: float
    deltas: tuple
    n_changed: tuple
    margins: tuple
    n_repetitions: int
    runtime_seconds: float
    settings: dict = field(default_factory=dict)
    notes: tuple = ()

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def diagnostic(self) -> pd.DataFrame:
        """Replications minus non-replications per procedure (the seed's Figures 9-10 measure):
        for inconsistency, non-replications minus replications judged inconsistent; for
        consistency and capture, replications minus non-replications."""
        keys = ["model", "measure", "stage1", "stage2", "procedure", "margin", "n_changed",
                "delta"]
        wide = self.table.pivot_table(index=keys, columns="group", values="proportion",
                                      dropna=False).reset_index()
        sign = np.where(wide["procedure"] == "inconsistency", -1.0, 1.0)
        wide["diagnostic"] = sign * (wide["replication"] - wide["nonreplication"])
        return wide.dropna(subset=["diagnostic"])

    def __str__(self) -> str:
        t = self.table
        lines = [f"Study-2 simulation (seed 000): {self.n_repetitions} repetition(s), "
                 f"population R2 = {self.r2_population:.3f}, runtime {self.runtime_seconds:.1f} s"]
        sub = t[(t["n_changed"] == max(self.n_changed))
                & (t["procedure"].isin(["inconsistency", "consistency"]))
                & (t["margin"].isin([0.0, 0.1]))]
        piv = sub.pivot_table(index=["model", "measure", "stage1", "procedure", "margin", "group"],
                              columns="delta", values="proportion")
        lines.append(f"Proportion judged inconsistent / consistent (+-0.1), {max(self.n_changed)} "
                     "changed studies, by R2 reduction:")
        lines.append(piv.to_string(float_format=lambda v: f"{v:.2f}"))
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)


class _Quiet:
    """A scikit-learn estimator whose ``fit`` silences convergence warnings (the MLP's early
    stopping at ``max_iter``), in the calling process and in runner workers alike."""

    def __init__(self, estimator):
        self.estimator = estimator

    def get_params(self, deep=True):
        out = {"estimator": self.estimator}
        if deep:
            out.update({f"estimator__{k}": v
                        for k, v in self.estimator.get_params(deep=True).items()})
        return out

    def set_params(self, **params):
        inner = {k.split("__", 1)[1]: v for k, v in params.items() if k.startswith("estimator__")}
        if "estimator" in params:
            self.estimator = params["estimator"]
        if inner:
            self.estimator.set_params(**inner)
        return self

    def fit(self, X, y):
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.estimator.fit(X, y)
        return self

    def predict(self, X):
        return self.estimator.predict(X)


def _sklearn_model(name: str):
    """The Study-2 model ``name`` with its fixed hyper-parameters; ``random_state`` is left
    ``None`` so that :func:`replikit.experiment.run` seeds it per task."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if name == "lasso":
        from sklearn.linear_model import Lasso
        return make_pipeline(StandardScaler(), Lasso(alpha=0.01))
    if name == "enet":
        from sklearn.linear_model import ElasticNet
        return make_pipeline(StandardScaler(), ElasticNet(alpha=0.01, l1_ratio=0.5))
    if name == "rf":
        from sklearn.ensemble import RandomForestRegressor
        return RandomForestRegressor(n_estimators=50, min_samples_leaf=5, max_features=0.5,
                                     n_jobs=1)
    if name == "svm":
        from sklearn.svm import SVR
        return make_pipeline(StandardScaler(), SVR(C=1.0, epsilon=0.1))
    from sklearn.neural_network import MLPRegressor
    return _Quiet(make_pipeline(StandardScaler(), MLPRegressor(
        hidden_layer_sizes=(16,), alpha=1e-3, max_iter=300, early_stopping=True)))


def _sklearn_fits(name, X, Y, folds, jobs, random_state, n_jobs):
    """Fold R2 (len(jobs), K) and test R2 (len(jobs),) of scikit-learn model ``name``: one
    :func:`replikit.experiment.run` over the (study, outcome) pairs ``jobs``, each a "study" of
    the runner whose splits are the study's fold labels (:class:`LabeledFolds`), so every
    outcome of a study is fitted on the same splits as the batched linear models.

    ``X`` (S, n, p), ``Y`` (S, n, M), ``folds`` (S, n).
    """
    from ..experiment import run

    n = X.shape[1]
    rows = np.concatenate([X[s] for s, _ in jobs])
    y = np.concatenate([Y[s, :, j] for s, j in jobs])
    labels = np.concatenate([folds[s] for s, _ in jobs])
    study = np.repeat([f"{s}:{j}" for s, j in jobs], n)
    res = run({name: _sklearn_model(name)}, rows, y, scheme=LabeledFolds(), metrics=["r2"],
              study=study, groups=labels, random_state=random_state,
              backend="joblib" if n_jobs > 1 else "serial", n_jobs=n_jobs,
              return_predictions=False)
    f = res.scores.frame
    k = int(folds.max()) + 1
    value = (f.assign(key=pd.Categorical(f["study"], categories=[f"{s}:{j}" for s, j in jobs]))
             .sort_values(["key", "fold"])["value"].to_numpy(float).reshape(len(jobs), k + 1))
    return value[:, :k], value[:, k]


def _of_var(r2, n):
    r = np.maximum(r2, _R2_FLOOR)
    return 4.0 * r * (1.0 - r) ** 2 / n


def _pool(y, v, method):
    """Pool the last axis: (estimate, variance), FE or RE with ``method`` tau2."""
    tau2 = 0.0 if method == "FE" else tau2_estimate(y, v, method)[..., None]
    w = 1.0 / (v + tau2)
    sw = w.sum(axis=-1)
    return (w * y).sum(axis=-1) / sw, 1.0 / sw


def _judge(est, var, changed, margins, z95, z90, tau2_method):
    """Boolean verdicts for arrays (..., S) of study estimates and variances."""
    d = est[..., 1:] - est[..., :1]
    se = np.sqrt(var[..., 1:] + var[..., :1])
    incons = np.abs(d) > z95 * se
    cons = {m: (d - z90 * se > -m) & (d + z90 * se < m) for m in margins}
    cap = {}
    for stage2, method in (("fixed", "FE"), ("random", tau2_method)):
        mu, pv = _pool(est, var, method)
        lo, hi = mu - z95 * np.sqrt(pv), mu + z95 * np.sqrt(pv)
        s_lo = est - z95 * np.sqrt(var)
        s_hi = est + z95 * np.sqrt(var)
        cap[stage2] = (s_hi >= lo[..., None]) & (s_lo <= hi[..., None])
    return incons, cons, cap


def _proportions(flag, group_mask):
    """Per-repetition proportion of flagged studies in ``group_mask`` (..., S) -> (R, ...)."""
    num = (flag & group_mask).sum(axis=-1)
    den = group_mask.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


@single_blas
def simulate_replication(X=None, y=None, *, models=("lr", "ridge"), n_studies: int = 8,
                         n_per_study: int = 2000, n_changed=None,
                         deltas=(0.05, 0.1, 0.15, 0.2, 0.3, 0.4),
                         margins=(0.05, 0.075, 0.1, 0.15), n_splits: int = 10,
                         train_share: float = 2 / 3, n_repetitions: int = 1,
                         tau2_method: str = "DL", random_state=None, n_jobs: int = 1,
                         progress=None) -> ReplicationSimulation:
    """Seed 000's Study 2: diagnostic performance of the replication procedures.

    Parameters
    ----------
    X, y : array-like, optional
        The pooled "population" (default: the built-in ``anes`` example, 13,440 rows).
    models : sequence of str
        From ``'lr', 'ridge'`` (batched closed form) and ``'lasso', 'enet', 'rf', 'svm',
        'mlp'`` (scikit-learn, one fit at a time). MARS is not included: the scikit-learn
        contrib package (sklearn-contrib-py-earth) was last released in 2017; newer
        re-implementations (mars-earth, py-earth2) are not project dependencies.
    n_studies, n_per_study : int
        K = 8 studies of n = 2000 rows (seed). Each study is drawn without replacement; studies
        are drawn independently, so they may share rows when K n exceeds the pool.
    n_changed : sequence of int, optional
        Numbers of non-replicating studies (the last ones), each at most ``n_studies - 2`` so
        that the original and at least one replication remain. Default: the seed's 2 and 4,
        those of them that fit (``n_studies = 5`` -> 2), or ``n_studies - 2`` when neither
        does (``n_studies = 3`` -> 1).
    deltas : sequence of float
        Reductions of the population R2 (seed: .05, .1, .15, .2, .3, .4).
    margins : sequence of float
        Regions of equivalence +-margin for the consistency test (seed: .05, .075, .1, .15).
    n_splits, train_share : int, float
        10-fold CV on a 2/3 training share (seed); every fold must hold at least 2 rows and the
        test part at least 3.
    n_repetitions : int
        Monte-Carlo repetitions (the seed ran one realization).
    tau2_method : str
        tau2 estimator of every random-effects step (default DL, the R *meta* package's default
        the seed used).
    random_state : None, int or Generator
        Root of every draw (studies, noise, splits, model seeds).
    n_jobs : int
        Workers for the scikit-learn models (the joblib backend of
        :func:`replikit.experiment.run`; the numbers do not depend on it).
    progress : callable, optional
        Called with the number of finished repetitions (progress bars).

    Returns
    -------
    ReplicationSimulation

    Notes
    -----
    Seed 000, Study 2 ("Data and Simulation Design", Figures 9-12). Olkin-Finn SEs need R2 > 0:
    fold or test R2 below 1e-3 (possible at Delta = .4, and common with small studies whose
    folds hold a few rows) are given the SE of R2 = 1e-3; the result's ``notes`` (and a
    :class:`~replikit.errors.ReplikitWarning`) say how many. All parameters are checked before
    any fitting. Batched numpy runs on one BLAS thread; the scikit-learn models are fitted by
    :func:`replikit.experiment.run` (one BLAS thread per fit, and one OpenMP thread in joblib
    workers: :mod:`replikit._threads`), seeded per task. Example:
    ``simulate_replication(n_repetitions=200, random_state=0)``.
    """
    t0 = time.perf_counter()
    from scipy import stats

    if X is None or y is None:
        from ..data.examples import anes

        ex = anes()
        X, y = ex.X, ex.y
    Xa = np.asarray(X, float)
    ya = np.asarray(y, float)
    if Xa.ndim != 2 or ya.shape != (Xa.shape[0],):
        raise DataError(f"`X` must be 2-D and `y` 1-D with one value per row; got {Xa.shape} and "
                        f"{ya.shape}.")
    models = tuple(models)
    if not models:
        raise ParameterError(f"`models` must name at least one of {list(SIM_MODELS)}; got none.")
    for m in models:
        if m not in SIM_MODELS:
            raise ParameterError(f"`models`: {m!r} is not one of {list(SIM_MODELS)}.")
    n_studies = check_int(n_studies, "n_studies", min_value=3)
    n_per_study = check_int(n_per_study, "n_per_study", min_value=50, max_value=Xa.shape[0])
    n_repetitions = check_int(n_repetitions, "n_repetitions", min_value=1)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    tau2_method = check_choice(str(tau2_method).upper(), "tau2_method", TAU2_METHODS)
    train_share = check_float(train_share, "train_share")
    n_train = int(round(n_per_study * train_share))
    if not 0 < train_share < 1 or n_per_study - n_train < 3:
        raise ParameterError(f"`train_share` must lie in (0, 1) and leave at least 3 test rows "
                             f"of n_per_study = {n_per_study}; got {train_share}.")
    n_splits = check_int(n_splits, "n_splits", min_value=2, max_value=max(2, n_train // 2))
    if n_changed is None:
        n_changed = [c for c in SEED_CHANGED if c <= n_studies - 2] or [n_studies - 2]
    n_changed = tuple(sorted({check_int(c, "n_changed", min_value=1, max_value=n_studies - 2)
                              for c in n_changed}))
    if not n_changed:
        raise ParameterError("`n_changed` must hold at least one count; got none.")
    deltas = tuple(check_float(d, "deltas") for d in deltas)
    margins = tuple(check_float(m, "margins") for m in margins)
    if not deltas:
        raise ParameterError("`deltas` must hold at least one R2 reduction; got none.")
    if not margins or any(m <= 0 for m in margins):
        raise ParameterError(f"`margins` must be one or more values > 0; got {margins}.")
    Xc = np.concatenate([np.ones((Xa.shape[0], 1)), Xa], axis=1)
    beta, *_ = np.linalg.lstsq(Xc, ya, rcond=None)
    r2_old = float(1 - np.var(ya - Xc @ beta) / np.var(ya))
    if any(not 0 < d < r2_old for d in deltas):
        raise ParameterError(f"`deltas` must lie in (0, R2_old = {r2_old:.3f}); got {deltas}.")
    scale = np.sqrt(np.var(ya) * (r2_old / (r2_old - np.asarray(deltas)) - 1.0))
    S, M = n_studies, 1 + len(deltas)
    scen = [(c, j) for c in n_changed for j in range(len(deltas))]
    changed = np.array([[s >= S - c for s in range(S)] for c, _ in scen])  # (n_sc, S)
    col = np.where(changed, np.array([j + 1 for _, j in scen])[:, None], 0)  # (n_sc, S)
    root = root_seed_sequence(random_state)
    scheme = HoldOutCV(n_splits, train_share=train_share)
    fold_n = np.diff(scheme.fold_bounds(n_per_study))
    test_n = n_per_study - scheme.n_train(n_per_study)
    fold_store = {m: [] for m in models}
    test_store = {m: [] for m in models}
    for r in range(n_repetitions):
        rng = task_rng(root, ("study2", r))
        idx = np.stack([rng.choice(Xa.shape[0], n_per_study, replace=False) for _ in range(S)])
        noise = rng.standard_normal((S, n_per_study))
        perm = np.argsort(rng.random((S, n_per_study)), axis=1)
        folds = np.stack([scheme.assign(p) for p in perm])  # the design's fold labels
        Xs = Xa[idx]
        ys = ya[idx][..., None] + noise[..., None] * np.concatenate([[0.0], scale])
        for m in models:
            if m in LINEAR:
                out = ols_cv_test(Xs, ys, folds, penalty=LINEAR[m])
                fr, tr = out["fold_r2"], out["test_r2"]  # (S, K, M), (S, M)
            else:
                fr = np.full((S, n_splits, M), np.nan)
                tr = np.full((S, M), np.nan)
                jobs = [(s, j) for s in range(S) for j in range(M)
                        if j == 0 or s >= S - max(n_changed)]
                f, t = _sklearn_fits(m, Xs, ys, folds, jobs,
                                     task_int_seed(root, ("study2-fit", r, m)), n_jobs)
                for i, (s, j) in enumerate(jobs):
                    fr[s, :, j], tr[s, j] = f[i], t[i]
            sidx = np.arange(S)
            fold_store[m].append(fr[sidx[None, :], :, col])     # (n_sc, S, K)
            test_store[m].append(tr[sidx[None, :], col])        # (n_sc, S)
        if progress is not None:
            progress(1)
    z95, z90 = stats.norm.ppf(0.975), stats.norm.ppf(0.95)
    group_rep = ~changed.copy()
    group_rep_single = group_rep[:, 1:]
    group_non_single = changed[:, 1:]
    rows = []

    def add(model, measure, stage1, stage2, procedure, margin, flags, rep_mask, non_mask):
        for gname, mask in (("replication", rep_mask), ("nonreplication", non_mask)):
            prop = _proportions(flags, mask[None])  # (R, n_sc)
            mean = prop.mean(axis=0)
            mc = prop.std(axis=0, ddof=1) / np.sqrt(prop.shape[0]) if prop.shape[0] > 1 \
                else np.full(prop.shape[1], np.nan)
            for i, (c, j) in enumerate(scen):
                rows.append({"model": model, "measure": measure, "stage1": stage1,
                             "stage2": stage2, "procedure": procedure, "margin": margin,
                             "n_changed": c, "delta": deltas[j], "group": gname,
                             "proportion": float(mean[i]), "mc_se": float(mc[i]),
                             "n_repetitions": prop.shape[0]})

    for m in models:
        fr = np.stack(fold_store[m])  # (R, n_sc, S, K)
        tr = np.stack(test_store[m])  # (R, n_sc, S)
        fv = _of_var(fr, fold_n)
        sets = []
        for stage1, method in (("fixed", "FE"), ("random", tau2_method)):
            est, var = _pool(fr, fv, method)
            sets.append(("cv", stage1, est, var))
        sets.append(("test", "-", tr, _of_var(tr, test_n)))
        for measure, stage1, est, var in sets:
            incons, cons, cap = _judge(est, var, changed, margins, z95, z90, tau2_method)
            add(m, measure, stage1, "-", "inconsistency", 0.0, incons, group_rep_single,
                group_non_single)
            for mg in margins:
                add(m, measure, stage1, "-", "consistency", mg, cons[mg], group_rep_single,
                    group_non_single)
            for stage2, flags in cap.items():
                add(m, measure, stage1, stage2, "captured", 0.0, flags, group_rep, changed)
    table = pd.DataFrame(rows)
    notes = _floor_notes(fold_store, test_store, fold_n, test_n)
    for note in notes:
        warn(note, stacklevel=4)  # the caller of the single_blas wrapper
    return ReplicationSimulation(
        table=table, r2_population=r2_old, deltas=deltas, n_changed=n_changed,
        margins=margins, n_repetitions=n_repetitions,
        runtime_seconds=time.perf_counter() - t0,
        settings={"models": list(models), "n_studies": S, "n_per_study": n_per_study,
                  "n_splits": n_splits, "train_share": train_share, "tau2_method": tau2_method,
                  "random_state": random_state if isinstance(random_state, (int, np.integer))
                  else None, "root_entropy": str(root.entropy),
                  "ridge_penalty": LINEAR["ridge"]},
        notes=notes)


def _floor_notes(fold_store, test_store, fold_n, test_n) -> tuple:
    """Say how many fold and test R2 fell below the Olkin-Finn floor or were undefined."""
    notes = []
    for what, store, sizes in (("CV fold", fold_store, fold_n), ("test", test_store, test_n)):
        vals = np.concatenate([np.ravel(np.stack(v)) for v in store.values()])
        n_nan = int(np.isnan(vals).sum())
        n_low = int((vals < _R2_FLOOR).sum())
        rows = np.unique(np.atleast_1d(sizes))
        size = f"{rows.min()}" if rows.size == 1 else f"{rows.min()}-{rows.max()}"
        if n_low:
            notes.append(f"{n_low} of the {vals.size} {what} R2 entering the judgments "
                         f"({100 * n_low / vals.size:.1f}%) were below {_R2_FLOOR:g} and were given the Olkin-Finn SE of R2 = "
                         f"{_R2_FLOOR:g} ({what} sets of {size} rows); proportions rest on "
                         "these floored SEs.")
        if n_nan:
            notes.append(f"{n_nan} of the {vals.size} {what} R2 entering the judgments were "
                         "undefined (a constant outcome in "
                         "the set); a comparison or pool that involves one is never judged "
                         "inconsistent, consistent or captured.")
    return tuple(notes)

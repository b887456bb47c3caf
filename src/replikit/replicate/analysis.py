"""One original and several replications: the three aims for every model at once.

:func:`estimates_from_table` turns a table of study estimates (entry level 1) or a Scores table
of CV folds (entry level 2) into :class:`~replikit.replicate.Estimate` objects;
:func:`analyse_replications` runs inconsistency, consistency and the FE/RE combination for each
group (model x CV/test). The command line and the audit report are thin layers over these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .._validation import check_choice
from ..errors import DataError, ParameterError
from .aims import consistency, inconsistency
from .estimates import Estimate, from_folds, from_summary
from .meta import MetaResult, meta_analysis

__all__ = ["ReplicationAnalysis", "analyse_replications", "estimates_from_table"]

_VALUE_COLS = ("value", "r2", "estimate", "yi")
_N_COLS = ("n", "n_test")


def _label(value) -> str:
    """A study label as text; integer-valued floats (2002.0 from a CSV reader) print as 2002."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "item"):
        return _label(value.item())
    return str(value)


def _pick(frame: pd.DataFrame, wanted: str | None, options, what: str, required=True):
    if wanted is not None:
        if wanted not in frame.columns:
            raise DataError(f"column {wanted!r} ({what}) not found; columns are "
                            f"{list(frame.columns)}.")
        return wanted
    for c in options:
        if c in frame.columns:
            return c
    if required:
        raise DataError(f"no {what} column: expected one of {list(options)}; got "
                        f"{list(frame.columns)}.")
    return None


def estimates_from_table(frame: pd.DataFrame, *, study: str = "study", value: str | None = None,
                         n: str | None = None, k: str | int | None = "k", se: str | None = "se",
                         metric: str = "r2", pooling: str = "random",
                         tau2_method: str = "REML", se_method: str = "olkin_finn",
                         ) -> dict[tuple[str, str], list[Estimate]]:
    """Estimates per (model, source) from a table of study estimates or of CV folds.

    Parameters
    ----------
    frame : DataFrame
        Either one row per study (``study``, a value column ``value``/``r2``/``estimate``, ``n``
        and optionally ``k``, ``se``, ``model``), or a Scores table (``study``, ``model``,
        ``fold``, ``metric``, ``value``, ``n_test``) whose folds are pooled per study.
    study, value, n : str
        Column names (value and n are detected when None).
    k : str or int, optional
        Column of predictor counts, or one count for all rows.
    se : str, optional
        Column of reported SEs (used when present).
    metric : str
        Metric of the estimates (rows of a Scores table with another metric are dropped).
    pooling : {'fixed', 'random'}
        Stage-1 pooling of folds (Scores input only).
    tau2_method, se_method : str

    Returns
    -------
    dict mapping ``(model, source)`` to a list of Estimates in table order; ``source`` is
    ``'cv'`` for pooled folds and ``'reported'`` for a study table.

    Notes
    -----
    Seed 000's entry points: a reported test R2 and n, or CV fold R2s (first stage). Example:
    ``estimates_from_table(pd.DataFrame({'study': ['a', 'b'], 'r2': [.4, .35], 'n': [600, 700]}))``.
    """
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise DataError("the estimates table is empty or not a table.")
    if study not in frame.columns:
        raise DataError(f"column {study!r} (study labels) not found; columns are "
                        f"{list(frame.columns)}.")
    pooling = check_choice(pooling, "pooling", ("fixed", "random"))
    is_scores = {"fold", "metric"} <= set(frame.columns)
    out: dict[tuple[str, str], list[Estimate]] = {}
    if is_scores:
        f = frame[frame["metric"] == metric]
        if f.empty:
            raise DataError(f"the Scores table has no rows with metric {metric!r}; metrics are "
                            f"{sorted(frame['metric'].astype(str).unique())}.")
        vcol = _pick(f, value, ("value",), "fold value")
        ncol = _pick(f, n, ("n_test", "n"), "fold size")
        models = f["model"] if "model" in f.columns else pd.Series("model", index=f.index)
        for m in pd.unique(models):
            sub = f[models == m]
            ests = []
            for s in pd.unique(sub[study]):
                g = sub[sub[study] == s]
                kk = k if isinstance(k, int) else None
                ests.append(from_folds(g[vcol].to_numpy(float), g[ncol].to_numpy(float),
                                       pooling=pooling, tau2_method=tau2_method, k=kk,
                                       metric=metric, se_method=se_method, label=_label(s)))
            out[(str(m), "cv")] = ests
        return out
    vcol = _pick(frame, value, _VALUE_COLS, "estimate")
    ncol = _pick(frame, n, _N_COLS, "sample size", required=False)
    secol = se if (se is not None and se in frame.columns) else None
    kcol = k if (isinstance(k, str) and k in frame.columns) else None
    if ncol is None and secol is None:
        raise DataError("the estimates table needs a sample-size column (`n`) or an `se` column;"
                        f" got {list(frame.columns)}.")
    models = frame["model"] if "model" in frame.columns else pd.Series("model", index=frame.index)
    for m in pd.unique(models):
        ests = []
        for _, row in frame[models == m].iterrows():
            kk = int(row[kcol]) if kcol is not None else (k if isinstance(k, int) else None)
            nn = int(row[ncol]) if ncol is not None else None
            s = float(row[secol]) if secol is not None and pd.notna(row[secol]) else None
            if metric == "r2":
                e = from_summary(r2=float(row[vcol]), se=s, n=nn, k=kk, se_method=se_method,
                                 label=_label(row[study]))
            else:
                e = from_summary(value=float(row[vcol]), se=s, n=nn, k=kk, metric=metric,
                                 label=_label(row[study]))
            ests.append(e)
        out[(str(m), "reported")] = ests
    return out


@dataclass(frozen=True, slots=True)
class ReplicationAnalysis:
    """Aims 1-3 for each group (model x source).

    Attributes
    ----------
    table : DataFrame
        One row per (model, source, replication): value, difference, its SE, the
        inconsistency CI and verdict, the consistency CI, TOST p and verdict.
    pooled : DataFrame
        One row per (model, source, pooling): estimate, SE, CI, tau2, Q, I2, estimator, CI
        method.
    estimates : DataFrame
        One row per (model, source, study): estimate, SE and CI.
    meta : dict
        ``(model, source, 'fixed'|'random') -> MetaResult``.
    original : str
    bounds : tuple
    method, tau2_method : str
    """

    table: pd.DataFrame
    pooled: pd.DataFrame
    estimates: pd.DataFrame
    meta: dict = field(repr=False)
    original: str = ""
    bounds: tuple = (-0.05, 0.05)
    method: str = "sa"
    tau2_method: str = "REML"

    def to_frame(self) -> pd.DataFrame:
        """The per-replication table."""
        return self.table.copy()

    def __str__(self) -> str:
        lines = [f"Replication of {self.original!r}: difference = replication - original; "
                 f"inconsistency: 95% CI excludes 0; consistency: 90% CI inside "
                 f"[{self.bounds[0]:.3g}, {self.bounds[1]:.3g}] (difference CI: {self.method})"]
        show = ["model", "source", "replication", "value", "difference", "ci_low", "ci_high",
                "inconsistency", "p_tost", "consistency"]
        lines.append(self.table[show].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        lines.append("Pooled (original + replications):")
        cols = ["model", "source", "pooling", "method", "ci_method", "estimate", "ci_low",
                "ci_high", "tau2", "i2_q"]
        lines.append(self.pooled[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        return "\n".join(lines)


def analyse_replications(groups: dict, original: str, *, margin: float = 0.05,
                         bounds: tuple[float, float] | None = None, method: str = "sa",
                         tau2_method: str = "REML", ci: str = "z") -> ReplicationAnalysis:
    """Inconsistency, consistency and combination for each group of study estimates.

    Parameters
    ----------
    groups : dict
        ``(model, source) -> list of Estimate`` (e.g. from :func:`estimates_from_table`).
    original : str
        Label of the original study; every other study is a replication.
    margin, bounds : region of equivalence (see :func:`~replikit.replicate.consistency`).
    method : {'sa', 'mover', 'bootstrap'}
        Difference interval.
    tau2_method : str
        Estimator of the random-effects combination.
    ci : {'z', 'knha'}

    Returns
    -------
    ReplicationAnalysis

    Notes
    -----
    Seed 000, Study 1: the three aims applied to each method's CV and test R2 (Figures 3-8).
    Example: ``analyse_replications(estimates_from_table(df), original='2002')``.
    """
    if not groups:
        raise DataError("no estimates to analyse.")
    rows, pooled, est_rows, meta = [], [], [], {}
    reg_bounds = None
    for (model, source), ests in groups.items():
        labels = [e.label for e in ests]
        if str(original) not in labels:
            raise ParameterError(f"`original`: study {original!r} not found among {labels}.")
        if len(ests) < 2:
            raise DataError(f"group {model}/{source} needs at least 2 studies; got {len(ests)}.")
        orig = ests[labels.index(str(original))]
        for e in ests:
            c = e.confidence_interval()
            est_rows.append({"model": model, "source": source, "study": e.label,
                             "estimate": e.value, "se": e.se, "ci_low": c.low, "ci_high": c.high,
                             "se_source": e.source, "original": e.label == str(original)})
        for e in ests:
            if e is orig:
                continue
            inc = inconsistency(orig, e, method=method)
            con = consistency(orig, e, margin=margin, bounds=bounds, method=method)
            reg_bounds = con.bounds
            rows.append({"model": model, "source": source, "replication": e.label,
                         "value": e.value, "difference": inc.estimate, "se": inc.se,
                         "ci_low": inc.ci.low, "ci_high": inc.ci.high, "pvalue": inc.pvalue,
                         "inconsistency": inc.verdict, "tost_ci_low": con.ci.low,
                         "tost_ci_high": con.ci.high, "p_tost": con.pvalue,
                         "consistency": con.verdict})
        for pooling, mth in (("fixed", "FE"), ("random", tau2_method)):
            res: MetaResult = meta_analysis([e.value for e in ests], se=[e.se for e in ests],
                                            labels=labels, method=mth, ci=ci)
            meta[(model, source, pooling)] = res
            c = res.confidence_interval()
            pooled.append({"model": model, "source": source, "pooling": pooling,
                           "method": res.method, "ci_method": res.ci_method, "k": res.k,
                           "estimate": res.estimate, "se": res.se, "ci_low": c.low,
                           "ci_high": c.high, "tau2": res.tau2, "q": res.q,
                           "q_pvalue": res.q_pvalue, "i2_q": res.i2_q})
    return ReplicationAnalysis(pd.DataFrame(rows), pd.DataFrame(pooled), pd.DataFrame(est_rows),
                               meta, str(original), tuple(reg_bounds or (-margin, margin)),
                               method, tau2_method)

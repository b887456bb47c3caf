"""Study specification (seed 004, sec. 3): alternatives, score, factors; results -> rankings."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import check_choice, check_float, check_probability
from ..errors import DataError, ParameterError
from .kernels import Kernel
from .nstar import estimate_nstar
from .rankings import rank_scores

__all__ = ["StudySpec", "RankingSample", "PreparedStudy", "prepare", "GeneralizabilityResult",
           "analyze"]


def _as_list(x) -> list[str]:
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    return list(x)


@dataclass(frozen=True, slots=True)
class StudySpec:
    """Which columns of a long results table play which role (seed 004, sec. 3.1).

    Parameters
    ----------
    alternative : str
        Column of the compared alternatives (e.g. ``encoder``, ``model``).
    score : str
        Column of the result (e.g. ``cv_score``).
    factors : str or list of str
        Generalizability factor(s): one experiment per level combination (e.g. ``dataset``).
    design : list of str
        Design factors: one analysis per level combination (e.g. ``model``, ``tuning``).
    held_constant : dict, optional
        ``{column: level}`` filters applied first.
    lower_is_better : bool, default False
    missing : {'worst', 'drop'}, default 'worst'
        ``'worst'`` (the paper, encoders study): a missing evaluation is ranked in a tier below
        every observed score. ``'drop'`` (the paper, BIG-bench): first keep the experimental
        conditions where at least ``min_condition_coverage`` of the alternatives have a result,
        then the alternatives with results in at least ``min_alternative_coverage`` of the kept
        conditions; what is still missing is ranked worst.
    min_condition_coverage, min_alternative_coverage : float, default 0.8
    tol : float, default 0.0
        Scores within ``tol`` tie (see :func:`rank_scores`).
    """

    alternative: str
    score: str
    factors: tuple | list | str
    design: tuple | list = ()
    held_constant: dict = field(default_factory=dict)
    lower_is_better: bool = False
    missing: str = "worst"
    min_condition_coverage: float = 0.8
    min_alternative_coverage: float = 0.8
    tol: float = 0.0

    def __post_init__(self):
        check_choice(self.missing, "missing", ("worst", "drop"))
        check_probability(self.min_condition_coverage, "min_condition_coverage",
                          open_interval=False)
        check_probability(self.min_alternative_coverage, "min_alternative_coverage",
                          open_interval=False)
        check_float(self.tol, "tol", min_value=0.0)
        if not _as_list(self.factors):
            raise ParameterError("`factors` must name at least one generalizability factor; got "
                                 "none.")


@dataclass(frozen=True, slots=True)
class RankingSample:
    """The results of one design combination as rankings.

    Attributes
    ----------
    design : dict
        The design-factor levels of this analysis.
    alternatives : tuple
        Column names of ``ranks``.
    conditions : pandas.Index
        The N experimental conditions (generalizability-factor levels), rows of ``ranks``.
    ranks : numpy.ndarray of int, shape (N, n_a)
    scores : numpy.ndarray of float, shape (N, n_a)
        Raw scores (NaN = missing).
    n_imputed : int
        Missing evaluations ranked worst.
    """

    design: dict
    alternatives: tuple
    conditions: pd.Index
    ranks: np.ndarray
    scores: np.ndarray
    n_imputed: int

    @property
    def label(self) -> str:
        return ", ".join(f"{v}" for v in self.design.values()) or "all"

    def filled_scores(self) -> np.ndarray:
        """Scores with each missing value set to its condition's worst observed score."""
        s = self.scores.copy()
        worst = np.nanmin(s, axis=1) if not np.isnan(s).all() else np.zeros(len(s))
        r, c = np.nonzero(np.isnan(s))
        s[r, c] = worst[r]
        return np.nan_to_num(s)


@dataclass(frozen=True, slots=True)
class PreparedStudy:
    """Rankings of every design combination plus what the missing-value policy did."""

    spec: StudySpec
    samples: tuple
    dropped_conditions: pd.DataFrame
    dropped_alternatives: tuple
    n_imputed: int
    n_averaged: int = 0

    def to_frame(self) -> pd.DataFrame:
        """One row per design combination: ``N``, ``n_alternatives``, ``n_imputed``."""
        rows = [dict(s.design, N=len(s.conditions), n_alternatives=len(s.alternatives),
                     n_imputed=s.n_imputed) for s in self.samples]
        return pd.DataFrame(rows)

    def __str__(self) -> str:
        return (f"{len(self.samples)} design combinations, {self.n_imputed} missing evaluations "
                f"ranked worst, {len(self.dropped_conditions)} conditions and "
                f"{len(self.dropped_alternatives)} alternatives dropped "
                f"({self.spec.missing} policy)"
                + (f"; {self.n_averaged} duplicated results averaged" if self.n_averaged else ""))


def prepare(data: pd.DataFrame, spec: StudySpec) -> PreparedStudy:
    """Turn a long results table into rankings, one sample per design combination.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per (alternative, condition); a Scores table's frame works
        (``alternative='model'``, ``score='value'``, ``factors='study'``).
    spec : StudySpec

    Returns
    -------
    PreparedStudy

    Notes
    -----
    Seed 004, sec. 3 (experimental factors) and sec. 5 (missing evaluations: imputation as worst
    for the encoders, the 80% coverage filter for BIG-bench). Duplicated (alternative, condition)
    rows are averaged. The coverage filter works on the whole table (conditions = all factor
    levels), so every design combination ranks the same alternatives, as in the paper.
    ``n_averaged`` counts the duplicated rows (a factor left out of the spec shows up here).

    Examples
    --------
    >>> df = pd.DataFrame({"m": list("abab"), "d": [1, 1, 2, 2], "s": [0.9, 0.8, 0.7, 0.75]})
    >>> prepare(df, StudySpec("m", "s", "d")).samples[0].ranks
    array([[0, 1],
           [1, 0]])
    """
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    factors = _as_list(spec.factors)
    design = _as_list(spec.design)
    held = dict(spec.held_constant or {})
    need = [spec.alternative, spec.score, *factors, *design, *held]
    missing_cols = [c for c in need if c not in data.columns]
    if missing_cols:
        raise DataError(f"Column(s) {', '.join(map(repr, missing_cols))} not found in the "
                        f"results; available: {', '.join(map(str, data.columns))}.")
    if set(factors) & set(design):
        raise ParameterError(f"A column cannot be both a factor and a design factor: "
                             f"{sorted(set(factors) & set(design))}.")
    df = data
    for col, lvl in held.items():
        df = df[df[col] == lvl]
    df = df[[spec.alternative, spec.score, *factors, *design]]
    if len(df) == 0:
        raise DataError("No results left after the held-constant filters.")
    score = pd.to_numeric(df[spec.score], errors="coerce")
    if score.isna().all():
        raise DataError(f"Column {spec.score!r} has no numeric scores.")
    df = df.assign(**{spec.score: score})
    conds = [*design, *factors]
    n_dup = int(df.duplicated([*conds, spec.alternative]).sum())
    wide = df.pivot_table(index=conds, columns=spec.alternative, values=spec.score,
                          aggfunc="mean", dropna=False, observed=True)
    wide = wide.dropna(how="all") if spec.missing == "worst" else wide
    # the pivot drops all-NaN rows only when asked; keep every observed condition
    present = df.groupby(conds, observed=True).size().index
    wide = wide.reindex(present)
    dropped_cond = pd.DataFrame(columns=conds)
    dropped_alt: tuple = ()
    if spec.missing == "drop":
        cov_c = wide.notna().mean(axis=1)
        keep_c = cov_c >= spec.min_condition_coverage - 1e-12
        dropped_cond = wide.index[~keep_c].to_frame(index=False)
        wide = wide[keep_c]
        if len(wide) == 0:
            raise DataError("No condition has the required coverage "
                            f"(min_condition_coverage={spec.min_condition_coverage}).")
        cov_a = wide.notna().mean(axis=0)
        keep_a = cov_a >= spec.min_alternative_coverage - 1e-12
        dropped_alt = tuple(wide.columns[~keep_a])
        wide = wide.loc[:, keep_a]
        if wide.shape[1] == 0:
            raise DataError("No alternative has the required coverage "
                            f"(min_alternative_coverage={spec.min_alternative_coverage}).")
    alts = tuple(wide.columns)
    samples = []
    total_imp = 0
    if design:
        groups = wide.groupby(level=list(range(len(design))), sort=True, observed=True)
    else:
        groups = [((), wide)]
    for key, block in groups:
        key = key if isinstance(key, tuple) else (key,)
        S = block.to_numpy(dtype=float)
        ranks = rank_scores(S, lower_is_better=spec.lower_is_better, tol=spec.tol)
        n_imp = int(np.isnan(S).sum())
        total_imp += n_imp
        cidx = block.index.droplevel(list(range(len(design)))) if design else block.index
        samples.append(RankingSample(design=dict(zip(design, key, strict=False)), alternatives=alts,
                                     conditions=cidx, ranks=ranks, scores=S, n_imputed=n_imp))
    return PreparedStudy(spec=spec, samples=tuple(samples), dropped_conditions=dropped_cond,
                         dropped_alternatives=dropped_alt, n_imputed=total_imp,
                         n_averaged=n_dup)


@dataclass(frozen=True, slots=True)
class GeneralizabilityResult:
    """n* for every design combination, kernel, alpha* and delta*.

    Attributes
    ----------
    table : pandas.DataFrame
        Design columns, ``kernel``, ``N``, ``alpha``, ``delta``, ``eps``, ``nstar``, ``beta0``,
        ``beta1``, ``nstar_observed``, ``nstar_bound``, ``sufficient``, ``ci_low``, ``ci_high``.
    details : dict
        ``{(design label, kernel label): NStarResult}`` (quantile tables, MMD distributions).
    prepared : PreparedStudy
    """

    table: pd.DataFrame
    details: dict = field(repr=False)
    prepared: PreparedStudy = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def __str__(self) -> str:
        t = self.table
        cols = [c for c in t.columns if c not in ("beta0", "beta1", "nstar_bound", "ci_low",
                                                  "ci_high", "eps")]
        with pd.option_context("display.width", 120, "display.max_rows", 60):
            body = t[cols].to_string(index=False, float_format=lambda v: f"{v:.3g}")
        return f"Generalizability (n* = experiments needed); {self.prepared}\n{body}"


def analyze(data, spec: StudySpec | None = None, kernels=("mallows",), *, alpha=0.95,
            delta=0.05, n_rep: int = 1000, n=None, estimator: str = "biased", n_boot: int = 0,
            random_state=None, **spec_kwargs) -> GeneralizabilityResult:
    """Generalizability analysis of a study: n* per design combination and goal.

    Parameters
    ----------
    data : pandas.DataFrame or PreparedStudy
        Long results table (or the output of :func:`prepare`).
    spec : StudySpec, optional
        Built from ``spec_kwargs`` when omitted.
    kernels : sequence of Kernel or goal strings
        E.g. ``[Kernel("jaccard", k=1), "mallows", "borda:OHE"]``.
    alpha, delta : float or sequence
    n_rep : int, default 1000
    n : None or 'even', optional
        Subsample sizes (see :func:`mmd_distribution`); default all of ``1..floor(N/2)``.
    estimator : {'biased', 'unbiased'}
    n_boot : int, default 0
        Bootstrap resamples for a CI of n*.
    random_state : None, int or numpy.random.Generator
        Each (design, kernel) analysis gets its own stream derived from it, so results do not
        depend on the order of analyses.

    Returns
    -------
    GeneralizabilityResult

    Notes
    -----
    Seed 004, secs. 4-5: one Gram matrix per (design combination, kernel), the MMD distribution
    for every n <= N/2 from it, and n* by Algorithm 1 for every (alpha*, delta*).

    Examples
    --------
    >>> df = pd.DataFrame({"m": list("ab") * 6, "d": np.repeat(range(6), 2),
    ...                    "s": [0.9, 0.8] * 5 + [0.1, 0.2]})
    >>> res = analyze(df, alternative="m", score="s", factors="d", kernels=["jaccard"],
    ...               n_rep=50, random_state=0)
    >>> res.table["N"].iloc[0]
    6
    """
    from .._random import root_seed_sequence, task_rng
    from .kernels import parse_goal

    if isinstance(data, PreparedStudy):
        prepared = data
    else:
        if spec is None:
            spec = StudySpec(**spec_kwargs)
        prepared = prepare(data, spec)
    ks = [parse_goal(k) if isinstance(k, str) else k for k in kernels]
    if not ks or not all(isinstance(k, Kernel) for k in ks):
        raise ParameterError(f"`kernels` must be Kernel objects or goal strings; got {kernels!r}.")
    root = root_seed_sequence(random_state)
    frames, details = [], {}
    for s in prepared.samples:
        if len(s.conditions) < 2:
            continue
        for k in ks:
            X = s.filled_scores() if k.kind == "rbf" else s.ranks
            rng = task_rng(root, (s.label, k.label))
            res = estimate_nstar(X, k, alpha=alpha, delta=delta, n_rep=n_rep, n=n,
                                 estimator=estimator, alternatives=s.alternatives,
                                 n_boot=n_boot, random_state=rng)
            details[(s.label, k.label)] = res
            t = res.to_frame()
            for i, (c, v) in enumerate(s.design.items()):
                t.insert(i, c, v)
            frames.append(t)
    if not frames:
        raise DataError("No design combination has at least 2 experiments.")
    return GeneralizabilityResult(table=pd.concat(frames, ignore_index=True), details=details,
                                  prepared=prepared)

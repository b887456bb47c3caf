"""Study specification (Matteucci et al. 2024, sec. 3): alternatives, score, factors; results ->
rankings -> n* per design combination and goal."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .._compat import dropped, renamed
from .._format import number
from .._threads import single_blas
from .._validation import check_choice, check_float, check_probability, lookalike_labels
from ..errors import DataError, ParameterError
from ..methods import BootstrapMethod
from ..results import Result
from .kernels import Kernel
from .nstar import (
    _old_ci_resamples,
    check_bootstrap,
    check_levels,
    check_tolerance,
    estimate_nstar,
)
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
    """Which columns of a long results table play which role.

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
    higher_is_better : bool, default True
        ``False`` for errors and losses.
    missing : {'worst', 'drop'}, default 'worst'
        ``'worst'`` (the paper, encoders study): a missing evaluation is ranked in a tier below
        every observed score. ``'drop'`` (the paper, BIG-bench): first keep the experimental
        conditions where at least ``min_condition_coverage`` of the alternatives have a result,
        then the alternatives with results in at least ``min_alternative_coverage`` of the kept
        conditions; what is still missing is ranked worst.
    min_condition_coverage, min_alternative_coverage : float, default 0.8
        The thresholds of ``missing='drop'``.
    tol : float, default 0.0
        Scores within ``tol`` tie (see :func:`rank_scores`).

    See Also
    --------
    prepare : The rankings of a results table under this specification.
    analyze : n* for every design combination and goal.

    Notes
    -----
    The experimental factors of Matteucci et al. (2024), sec. 3.1: the alternatives compared,
    the generalizability factors whose levels are the experimental conditions, the design
    factors (one study per level combination) and the held-constant factors.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> StudySpec("encoder", "cv_score", "dataset", design=["model"]).missing
    'worst'
    """

    alternative: str
    score: str
    factors: tuple | list | str
    design: tuple | list = ()
    held_constant: dict = field(default_factory=dict)
    higher_is_better: bool = True
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

    Parameters
    ----------
    design : dict
        The design-factor levels of this analysis.
    alternatives : tuple
        Column names of ``ranks``.
    conditions : pandas.Index
        The N experimental conditions (generalizability-factor levels), rows of ``ranks``.
    ranks : numpy.ndarray of int, shape (N, n_a)
        Tier indices of Def. 4.2 (the number of better score levels: 0 = best tier), the
        kernels' input. Tables for people (:meth:`to_frame`, :meth:`summary`) show
        ``rank = tier + 1``, so that 1 = best everywhere replikit prints a rank.
    scores : numpy.ndarray of float, shape (N, n_a)
        Raw scores (NaN = missing).
    n_imputed : int
        Missing evaluations ranked worst.

    See Also
    --------
    PreparedStudy : The samples of every design combination.
    rank_scores : The rankings with ties.

    Notes
    -----
    The rankings with ties of Matteucci et al. (2024), Definition 4.2, of the experimental
    conditions of one design combination (sec. 3.1).

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> df = pd.DataFrame({"m": list("abab"), "d": [1, 1, 2, 2], "s": [.9, .8, .7, .75]})
    >>> sample = prepare(df, StudySpec("m", "s", "d")).samples[0]
    >>> sample.label, sample.alternatives, len(sample.conditions)
    ('all', ('a', 'b'), 2)
    """

    design: dict
    alternatives: tuple
    conditions: pd.Index
    ranks: np.ndarray
    scores: np.ndarray
    n_imputed: int

    @property
    def label(self) -> str:
        """The design-factor levels as text (``'all'`` without design factors)."""
        return ", ".join(f"{v}" for v in self.design.values()) or "all"

    def filled_scores(self) -> np.ndarray:
        """Scores with each missing value set to its condition's worst observed score.

        Returns
        -------
        numpy.ndarray, shape (N, n_a)
            The scores without NaN (the RBF goal's input).
        """
        s = self.scores.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # rows without any score
            worst = np.nanmin(s, axis=1) if not np.isnan(s).all() else np.zeros(len(s))
        r, c = np.nonzero(np.isnan(s))
        s[r, c] = worst[r]
        return np.nan_to_num(s)

    def to_frame(self, wide: bool = False) -> pd.DataFrame:
        """Ranks for people: 1 = best, ties share a rank, a missing result ranks last.

        Parameters
        ----------
        wide : bool, default False
            ``True``: one row per condition, one column per alternative (values: ranks).
            ``False``: one row per (condition, alternative) with the design levels, the
            condition's factor levels, ``alternative``, ``score``, ``rank`` and ``imputed``
            (the result was missing and is ranked last).

        Returns
        -------
        pandas.DataFrame
            The ranks, wide or long.

        Examples
        --------
        >>> df = pd.DataFrame({"m": list("abab"), "d": [1, 1, 2, 2], "s": [.9, .8, .7, .75]})
        >>> prepare(df, StudySpec("m", "s", "d")).samples[0].to_frame(wide=True).to_numpy()
        array([[1, 2],
               [2, 1]])
        """
        rank = np.asarray(self.ranks) + 1
        names = list(self.alternatives)
        if wide:
            return pd.DataFrame(rank, index=self.conditions, columns=names)
        N, n_a = rank.shape
        cond = self.conditions.to_frame(index=False)
        cond = cond.loc[cond.index.repeat(n_a)].reset_index(drop=True)
        for i, (c, v) in enumerate(self.design.items()):
            cond.insert(i, c, v)
        cond["alternative"] = np.tile(np.asarray(names, dtype=object), N)
        cond["score"] = self.scores.ravel()
        cond["rank"] = rank.ravel()
        cond["imputed"] = np.isnan(self.scores).ravel()
        return cond

    def summary(self) -> pd.DataFrame:
        """One row per alternative: its mean score, mean rank and conditions ranked first.

        Returns
        -------
        pandas.DataFrame
            ``alternative``, ``mean_score`` (over observed results), ``mean_rank``
            (1 = best), ``n_best`` (conditions where it ranks first, ties included),
            ``n_missing`` (results missing, ranked last), after the design levels.
        """
        rank = np.asarray(self.ranks) + 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an alternative without scores
            mean_score = np.nanmean(self.scores, axis=0)
        out = pd.DataFrame({"alternative": list(self.alternatives), "mean_score": mean_score,
                            "mean_rank": rank.mean(axis=0), "n_best": (rank == 1).sum(axis=0),
                            "n_missing": np.isnan(self.scores).sum(axis=0)})
        for i, (c, v) in enumerate(self.design.items()):
            out.insert(i, c, v)
        return out


@dataclass(frozen=True, slots=True)
class PreparedStudy:
    """Rankings of every design combination plus what the missing-value policy did.

    Parameters
    ----------
    spec : StudySpec
        The specification the table was read with.
    samples : tuple of RankingSample
        One per design combination (those with fewer than 2 conditions included; the
        analysis leaves them out).
    dropped_conditions : pandas.DataFrame
        Conditions dropped by ``missing='drop'`` (their factor levels).
    dropped_alternatives : tuple
        Alternatives dropped by ``missing='drop'``.
    n_imputed : int
        Missing evaluations ranked worst.
    n_averaged : int
        Duplicated (alternative, condition) rows averaged.
    notes : tuple of str
        What the user should know: labels that look alike, alternatives without any result,
        rankings tied everywhere, design combinations too small to analyze.

    See Also
    --------
    prepare : The function that builds it.
    analyze : n* from it.

    Notes
    -----
    The missing-value policies are those of the two case studies of Matteucci et al. (2024),
    sec. 5: worst rank for the encoders, the 80% coverage filters for BIG-bench.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> df = pd.DataFrame({"m": list("abab"), "d": [1, 1, 2, 2], "s": [.9, .8, .7, .75]})
    >>> print(prepare(df, StudySpec("m", "s", "d")))
    1 design combination, 0 missing evaluations ranked worst, 0 conditions and 0 alternatives dropped (worst policy)
    """

    spec: StudySpec
    samples: tuple
    dropped_conditions: pd.DataFrame
    dropped_alternatives: tuple
    n_imputed: int
    n_averaged: int = 0
    notes: tuple = ()

    @property
    def options(self) -> dict:
        """Old attribute (no longer used: messages name the parameters; warns)."""
        from .._compat import REMOVED_IN

        warnings.warn("`PreparedStudy.options` is no longer used: messages name the "
                      "parameters, and the command line shows its flags; it will stop working "
                      f"in replikit {REMOVED_IN}.", FutureWarning, stacklevel=2)
        return {}

    def to_frame(self) -> pd.DataFrame:
        """One row per design combination.

        Returns
        -------
        pandas.DataFrame
            The design levels, ``N`` (conditions), ``n_alternatives``, ``n_imputed``.
        """
        rows = [dict(s.design, N=len(s.conditions), n_alternatives=len(s.alternatives),
                     n_imputed=s.n_imputed) for s in self.samples]
        return pd.DataFrame(rows)

    def ranks_frame(self) -> pd.DataFrame:
        """Every result with its rank (1 = best), for all the design combinations.

        Returns
        -------
        pandas.DataFrame
            :meth:`RankingSample.to_frame` of every design combination, stacked.
        """
        return pd.concat([s.to_frame() for s in self.samples], ignore_index=True)

    def summary(self) -> pd.DataFrame:
        """Mean score, mean rank and conditions ranked first, per alternative and design.

        Returns
        -------
        pandas.DataFrame
            :meth:`RankingSample.summary` of every design combination, stacked (mean rank
            1 = best).
        """
        return pd.concat([s.summary() for s in self.samples], ignore_index=True)

    def __str__(self) -> str:
        n = len(self.samples)
        return (f"{n:,} design combination{'s' if n != 1 else ''}"
                f", {self.n_imputed:,} missing evaluations ranked worst, "
                f"{len(self.dropped_conditions):,} conditions and "
                f"{len(self.dropped_alternatives):,} alternatives dropped "
                f"({self.spec.missing} policy)"
                + (f"; {self.n_averaged:,} duplicated results averaged" if self.n_averaged
                   else ""))


PreparedStudy.__init__ = dropped("options")(PreparedStudy.__init__)


def _natural_key(idx: pd.Index) -> pd.Index:
    """Sort key of labels read as text: numbers in numeric order when every label of the level
    is a number ('2' before '10', as if the column had been read as numbers)."""
    if ptypes.is_object_dtype(idx.dtype) or ptypes.is_string_dtype(idx.dtype):
        num = pd.to_numeric(pd.Series(idx, dtype=object), errors="coerce")
        if num.notna().all():
            return pd.Index(num.to_numpy(dtype=float))
    return idx


def _level_mask(col: pd.Series, level) -> pd.Series:
    """Rows of ``col`` equal to ``level``, comparing numbers as numbers when both are."""
    if ptypes.is_numeric_dtype(col) and not ptypes.is_bool_dtype(col):
        try:
            return col == float(level)
        except (TypeError, ValueError):
            pass
    return col.astype(str) == str(level)


def _scores(raw: pd.Series, col) -> pd.Series:
    """The score column as floats: stray text and an all-missing column refused."""
    if ptypes.is_bool_dtype(raw):
        score = raw.astype(float)
    elif ptypes.is_numeric_dtype(raw):
        score = raw.astype(float)
    else:
        present = raw.notna()
        text = raw[present].astype(str).str.strip()
        num = pd.to_numeric(text, errors="coerce")
        stray = text[num.isna()]
        if len(stray) and len(stray) == len(text):
            raise DataError(f"`score`: column {col!r} holds no numbers (values like "
                            f"{stray.unique()[:3].tolist()}); it must hold the scores.")
        if len(stray):
            raise DataError(f"`score`: column {col!r} is numeric except for {len(stray):,} "
                            f"value{'s' if len(stray) > 1 else ''} such as "
                            f"{stray.unique()[:3].tolist()}; leave a missing result empty (or "
                            "NA) or fix it — read as missing it would be ranked last.")
        score = pd.Series(np.nan, index=raw.index)
        score[present] = num.to_numpy(dtype=float)
    if score.isna().all():
        raise DataError(f"`score`: column {col!r} has no scores (all missing).")
    return score


def _infinite_note(score: pd.Series, col) -> str | None:
    inf = np.isinf(score.to_numpy())
    if not inf.any():
        return None
    idx = score.index
    if isinstance(idx, pd.RangeIndex) and idx.start == 0 and idx.step == 1:
        # rows as the user counts them in the file: from 1, below the header
        pos = np.flatnonzero(inf)[:5] + 1
        rows = f"data row{'s' if inf.sum() > 1 else ''} {', '.join(f'{p:,}' for p in pos)}"
    else:
        rows = f"index {idx[inf][:5].tolist()}"
    return (f"column {col!r} (`score`) holds {int(inf.sum()):,} infinite score"
            f"{'s' if inf.sum() > 1 else ''} ({rows}{' ...' if inf.sum() > 5 else ''}): "
            "ranked as the best or worst possible result (equal infinities tie)")


def _check_wide_memory(df, conds, alternative) -> None:
    """Refuse a results table whose conditions x alternatives matrix (pivoted, ranked, with
    pandas' temporaries: about 6 float copies) would not fit in memory."""
    from .._memory import check_memory

    n_alt = int(df[alternative].nunique())
    n_cond = int(df.groupby(conds, observed=True).ngroups) if len(df) else 0
    check_memory(6 * 8 * n_alt * n_cond,
                 what=f"the table of {n_cond:,} conditions x {n_alt:,} alternatives",
                 reduce="the alternatives (`alternative`) or the conditions (`factors` levels; "
                        "keep one level of a factor with `held_constant`)")


def _roles(spec: StudySpec) -> list[tuple[str, list]]:
    """(spec field, columns) of every role a column can play."""
    return [("alternative", [spec.alternative]), ("score", [spec.score]),
            ("factors", _as_list(spec.factors)), ("design", _as_list(spec.design)),
            ("held_constant", list(dict(spec.held_constant or {})))]


def _check_roles(data: pd.DataFrame, spec: StudySpec) -> None:
    """Every named column exists and plays one role."""
    roles = _roles(spec)
    avail = ", ".join(map(str, list(data.columns)[:30]))
    for role, cols in roles:
        for c in cols:
            if c not in data.columns:
                raise DataError(f"`{role}`: no column {c!r} in the results; available: "
                                f"{avail}.")
    both = sorted(set(roles[2][1]) & set(roles[3][1]), key=str)
    if both:
        raise ParameterError("`factors` and `design`: a column cannot be both a "
                             f"generalizability factor and a design factor: {both}.")
    roles_of: dict = {}
    for role, cols in roles[:4]:
        for c in cols:
            roles_of.setdefault(c, []).append(role)
    clash = {c: r for c, r in roles_of.items() if len(r) > 1}
    if clash:
        c, r = next(iter(clash.items()))
        raise ParameterError(f"`{r[0]}` and `{r[1]}` both name column {c!r}; each column "
                             "plays one role.")


def _hold(data: pd.DataFrame, held: dict) -> pd.DataFrame:
    """The rows at the held-constant levels."""
    df = data
    for col, lvl in held.items():
        mask = _level_mask(df[col], lvl)
        if not mask.any():
            levels = pd.unique(data[col].astype(str))
            raise DataError(f"`held_constant`: no result has {col} = {lvl!r} "
                            f"(levels: {', '.join(levels[:10])}"
                            f"{', ...' if len(levels) > 10 else ''}).")
        df = df[mask.to_numpy()]
    return df


def _lookalike_notes(df: pd.DataFrame, spec: StudySpec) -> list[str]:
    notes = []
    for role, cols in _roles(spec)[:4]:
        if role == "score":
            continue
        for c in cols:
            for group in lookalike_labels(pd.unique(df[c].dropna())):
                shown = ", ".join(repr(g) for g in group[:5])
                notes.append(f"column {c!r} (`{role}`): labels {shown} differ only as written "
                             "(case, spaces or number format); they are kept apart")
    return notes


def _pivot(df: pd.DataFrame, spec: StudySpec, conds: list) -> pd.DataFrame:
    """Conditions x alternatives, duplicates averaged, in natural order of labels."""
    wide = df.pivot_table(index=conds, columns=spec.alternative, values=spec.score,
                          aggfunc="mean", dropna=False, observed=True)
    wide = wide.dropna(how="all") if spec.missing == "worst" else wide
    # the pivot drops all-NaN rows only when asked; keep every observed condition
    present = df.groupby(conds, observed=True).size().index
    wide = wide.reindex(present).sort_index(key=_natural_key, kind="stable")
    ckey = _natural_key(wide.columns)
    if ckey is not wide.columns:
        wide = wide.iloc[:, np.argsort(ckey.to_numpy(), kind="stable")]
    return wide


def _coverage_filter(wide: pd.DataFrame, spec: StudySpec, conds: list):
    """``missing='drop'``: the conditions, then the alternatives, with enough results.

    Returns ``(wide, dropped conditions, dropped alternatives)``."""
    if spec.missing != "drop":
        return wide, pd.DataFrame(columns=conds), ()
    cov_c = wide.notna().mean(axis=1)
    keep_c = cov_c >= spec.min_condition_coverage - 1e-12
    dropped_cond = wide.index[~keep_c].to_frame(index=False)
    wide = wide[keep_c]
    if len(wide) == 0:
        raise DataError(f"`min_condition_coverage`: no condition has results for at least "
                        f"{spec.min_condition_coverage:.0%} of the alternatives (best: "
                        f"{cov_c.max():.0%}); lower it or use the worst-rank policy.")
    cov_a = wide.notna().mean(axis=0)
    keep_a = cov_a >= spec.min_alternative_coverage - 1e-12
    dropped_alt = tuple(wide.columns[~keep_a])
    wide = wide.loc[:, keep_a]
    if wide.shape[1] == 0:
        raise DataError(f"`min_alternative_coverage`: no alternative has results in at least "
                        f"{spec.min_alternative_coverage:.0%} of the kept conditions (best: "
                        f"{cov_a.max():.0%}).")
    return wide, dropped_cond, dropped_alt


def _samples(wide: pd.DataFrame, spec: StudySpec, design: list) -> list[RankingSample]:
    """One :class:`RankingSample` per design combination."""
    alts = tuple(wide.columns)
    if design:
        groups = wide.groupby(level=list(range(len(design))), sort=True, observed=True)
    else:
        groups = [((), wide)]
    samples = []
    for key, block in groups:
        key = key if isinstance(key, tuple) else (key,)
        S = block.to_numpy(dtype=float)
        ranks = rank_scores(S, higher_is_better=spec.higher_is_better, tol=spec.tol)
        cidx = block.index.droplevel(list(range(len(design)))) if design else block.index
        samples.append(RankingSample(design=dict(zip(design, key, strict=False)),
                                     alternatives=alts, conditions=cidx, ranks=ranks, scores=S,
                                     n_imputed=int(np.isnan(S).sum())))
    return samples


def _labels(items) -> str:
    return ", ".join(repr(s.label) for s in items[:5]) + (" ..." if len(items) > 5 else "")


def _sample_notes(samples: list, design: list, factors: list) -> list[str]:
    """Notes on the samples (alternatives never scored, single-condition and tied design
    combinations); refuses when no design combination has 2 conditions."""
    notes = []
    alts = samples[0].alternatives
    unscored = [(s.label, [a for a, col in zip(alts, s.scores.T, strict=True)
                           if np.isnan(col).all()]) for s in samples]
    unscored = [(lab, never) for lab, never in unscored if never]
    if unscored:
        where = "" if not design else (
            " of design combination" + ("s " if len(unscored) > 1 else " ")
            + "; ".join(f"{lab!r} ({', '.join(map(repr, nv[:5]))})" for lab, nv in unscored[:5])
            + (" ..." if len(unscored) > 5 else ""))
        never = list(dict.fromkeys(a for _, nv in unscored for a in nv))
        notes.append(f"alternative{'s' if len(never) > 1 else ''} "
                     f"{', '.join(map(repr, never[:5]))}{' ...' if len(never) > 5 else ''} "
                     f"ha{'ve' if len(never) > 1 else 's'} no result in any condition{where}; "
                     "ranked last there (missing = worst)")
    small = [s for s in samples if len(s.conditions) < 2]
    if len(small) == len(samples):
        levels = ", ".join(map(str, samples[0].conditions[:3]))
        where = "" if not design else " in every design combination"
        raise DataError(f"`factors`: {', '.join(map(repr, factors))} has a single level{where} "
                        f"({levels}); generalizability compares two disjoint sets of "
                        "experimental conditions, so at least 2 are needed (4 for a fit).")
    if small:
        notes.append(f"{len(small):,} design combination{'s' if len(small) > 1 else ''} "
                     f"({_labels(small)}) ha{'ve' if len(small) > 1 else 's'} a single "
                     "condition and cannot be analyzed")
    tied = [s for s in samples if len(s.conditions) >= 2 and np.all(s.ranks == 0)]
    if tied:
        notes.append(f"all alternatives tie in every condition of {len(tied):,} design "
                     f"combination{'s' if len(tied) > 1 else ''} ({_labels(tied)}): every "
                     "ranking is the same, so n* = 1 there says nothing about the "
                     "alternatives")
    return notes


@dropped("options")
def prepare(data: pd.DataFrame, spec: StudySpec) -> PreparedStudy:
    """Turn a long results table into rankings, one sample per design combination.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per (alternative, condition); a Scores table's frame works
        (``alternative='model'``, ``score='value'``, ``factors='study'``).
    spec : StudySpec
        Which column plays which role, and the missing-value policy.

    Returns
    -------
    PreparedStudy
        The rankings of every design combination and what was dropped, imputed or averaged.

    Raises
    ------
    DataError
        A named column is missing; the score column holds text that is not a number or no
        score at all; a held-constant level matches nothing; fewer than 2 alternatives remain;
        no design combination has 2 conditions. Messages name the :class:`StudySpec` field
        (``alternative``, ``score``, ``factors``, ...).

    See Also
    --------
    analyze : n* from the prepared rankings.
    rank_scores : The rankings with ties of one score matrix.

    Notes
    -----
    Matteucci et al. (2024), sec. 3 (experimental factors) and sec. 5 (missing evaluations:
    imputation as worst for the encoders, the 80% coverage filter for BIG-bench). Duplicated
    (alternative, condition) rows are averaged. The coverage filter works on the whole table
    (conditions = all factor levels), so every design combination ranks the same alternatives,
    as in the paper. ``n_averaged`` counts the duplicated rows (a factor left out of the spec
    shows up here). Labels are used as they are: text labels that differ only as written ('5'
    and '05', 'a' and 'a ') stay distinct and are listed in ``notes``.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

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
    _check_roles(data, spec)
    df = _hold(data, dict(spec.held_constant or {}))
    df = df[[spec.alternative, spec.score, *factors, *design]]
    score = _scores(df[spec.score], spec.score)
    df = df.assign(**{spec.score: score})
    notes: list[str] = []
    inf_note = _infinite_note(score, spec.score)
    if inf_note:
        notes.append(inf_note)
    notes.extend(_lookalike_notes(df, spec))
    conds = [*design, *factors]
    _check_wide_memory(df, conds, spec.alternative)
    n_dup = int(df.duplicated([*conds, spec.alternative]).sum())
    wide, dropped_cond, dropped_alt = _coverage_filter(_pivot(df, spec, conds), spec, conds)
    alts = tuple(wide.columns)
    if len(alts) < 2:
        raise DataError(f"`alternative`: column {spec.alternative!r} holds "
                        f"{len(alts)} alternative{'s' if len(alts) != 1 else ''} "
                        f"({', '.join(map(repr, alts))}); rankings need at least 2.")
    samples = _samples(wide, spec, design)
    notes.extend(_sample_notes(samples, design, factors))
    return PreparedStudy(spec=spec, samples=tuple(samples), dropped_conditions=dropped_cond,
                         dropped_alternatives=dropped_alt,
                         n_imputed=sum(s.n_imputed for s in samples), n_averaged=n_dup,
                         notes=tuple(notes))


@dataclass(frozen=True, slots=True)
class GeneralizabilityResult(Result):
    """The n* of every design combination, goal, alpha* and delta* of a study.

    Parameters
    ----------
    table : pandas.DataFrame
        Design columns, ``kernel``, ``N``, ``confidence_level`` (alpha*), ``tolerance``
        (delta*), ``eps``, ``nstar``, ``estimator``, ``nstar_loglog``, ``beta0``, ``beta1``,
        ``nstar_observed``, ``nstar_bound``, ``sufficient``, ``se_log``, ``ci_low``,
        ``ci_high`` (see :class:`~replikit.generalize.NStarResult`).
    details : dict
        ``{(design label, kernel label): NStarResult}`` (quantile tables, MMD distributions).
    prepared : PreparedStudy
        The rankings analyzed.
    notes : tuple of str
        The preparation's notes and the analysis' own (design combinations left out, n*
        resting on a single subsample size).

    See Also
    --------
    analyze : The function that computes it.
    NStarResult : The estimate of one design combination and goal.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> df = pd.DataFrame({"m": list("ab") * 6, "d": np.repeat(range(6), 2),
    ...                    "s": [0.9, 0.8] * 5 + [0.1, 0.2]})
    >>> res = analyze(df, alternative="m", score="s", factors="d", kernels=["jaccard"],
    ...               n_resamples=50, random_state=0)
    >>> res.to_frame()[["kernel", "N", "nstar"]].round(1)
             kernel  N  nstar
    0  jaccard(k=1)  6    6.7
    """

    table: pd.DataFrame
    details: dict = field(repr=False)
    prepared: PreparedStudy = field(repr=False)
    notes: tuple = ()

    @property
    def title(self) -> str:
        """A heading: what the table holds."""
        return "Generalizability: experiments needed (n*) per design combination and goal"

    def to_frame(self) -> pd.DataFrame:
        """The n* table.

        Returns
        -------
        pandas.DataFrame
            One row per design combination, goal, alpha* (``confidence_level``) and delta*
            (``tolerance``); see :attr:`table`.
        """
        return self.table.copy()

    def to_dict(self) -> dict:
        """The n* table, the alternatives and what was dropped, in plain JSON types.

        Returns
        -------
        dict
            ``nstar`` (the table's records), ``alternatives`` (:meth:`summary`),
            ``dropped_alternatives``, ``dropped_conditions`` (a count), ``imputed_worst``
            and ``notes``; what ``replikit generalize --format json`` prints.
        """
        from ..results import to_jsonable

        p = self.prepared
        return to_jsonable({"nstar": self.table, "alternatives": self.summary(),
                            "dropped_alternatives": p.dropped_alternatives,
                            "dropped_conditions": len(p.dropped_conditions),
                            "imputed_worst": p.n_imputed, "notes": list(self.notes)})

    def ranks(self) -> pd.DataFrame:
        """Every analyzed result with its rank (1 = best).

        Returns
        -------
        pandas.DataFrame
            See :meth:`PreparedStudy.ranks_frame`.
        """
        return self.prepared.ranks_frame()

    def summary(self) -> pd.DataFrame:
        """Per alternative and design combination: mean score, mean rank and more.

        Returns
        -------
        pandas.DataFrame
            Mean score, mean rank (1 = best), number of conditions ranked first and of
            missing results; see :meth:`PreparedStudy.summary`.
        """
        return self.prepared.summary()

    def plot(self, ax=None, *, by: str = "confidence_level"):
        """n* of every goal over the design combinations, per alpha* or delta*.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        by : {'confidence_level', 'tolerance'}, default 'confidence_level'
            The x axis.

        Returns
        -------
        matplotlib.axes.Axes
            See :func:`replikit.generalize.plots.plot_nstar`.
        """
        from .plots import plot_nstar

        return plot_nstar(self.table, by=by, ax=ax)

    def __str__(self) -> str:
        t = self.table
        cols = [c for c in t.columns if c not in ("beta0", "beta1", "nstar_bound", "eps",
                                                  "se_log", "estimator", "nstar_loglog", "kappa_inf")]
        with pd.option_context("display.width", 120, "display.max_rows", 60):
            body = t[cols].to_string(index=False, float_format=lambda v: f"{v:.3g}")
        return f"{self.title}; {self.prepared}\n{body}"


@renamed(delta="tolerance", method="mmd_estimator")
@_old_ci_resamples
def analyze(data, spec: StudySpec | None = None, kernels=("mallows",), *,
            confidence_level=0.95, tolerance=0.05, n_resamples: int = 1000, n=None,
            mmd_estimator: str = "biased", estimator: str | None = None,
            bootstrap: BootstrapMethod | None = None, random_state=None, progress=None,
            **spec_kwargs) -> GeneralizabilityResult:
    """Generalizability analysis of a study: n* per design combination and goal.

    Parameters
    ----------
    data : pandas.DataFrame or PreparedStudy
        Long results table (or the output of :func:`prepare`).
    spec : StudySpec, optional
        Built from ``spec_kwargs`` when omitted.
    kernels : sequence of Kernel or goal strings
        E.g. ``[Kernel("jaccard", k=1), "mallows", "borda:OHE"]``.
    confidence_level : float or sequence, default 0.95
        The desired generalizability ``alpha*`` (a probability level; a grid is allowed).
    tolerance : float or sequence, default 0.05
        The similarity threshold ``delta*`` of the paper (a grid is allowed): a practical
        tolerance on how dissimilar the results of two studies may be.
    n_resamples : int, default 1000
        Pairs of disjoint subsamples per subsample size.
    n : None or 'even', optional
        Subsample sizes (see :func:`mmd_distribution`); default all of ``1..floor(N/2)``.
    mmd_estimator : {'biased', 'unbiased'}, default 'biased'
        The MMD statistic (see :func:`mmd_from_gram`).
    estimator : {'gamma', 'loglog'}, optional
        The n* estimator (see :func:`estimate_nstar`): by default the moment-matched asymptotic
        quantile ``'gamma'`` with its jackknife 95% interval (``ci_low``/``ci_high``);
        ``'loglog'`` is Algorithm 1's extrapolation (biased upward at small N, no interval).
    bootstrap : replikit.BootstrapMethod, optional
        Bootstrap resamples of the whole estimator kept for inspection (default None: none;
        the interval is the jackknife one; see :func:`estimate_nstar`).
    random_state : None, int or numpy.random.Generator
        Each (design, kernel) analysis gets its own stream derived from it, so results do not
        depend on the order of analyses.
    progress : callable, optional
        ``progress(n, total=None)``: called once with ``n=0`` and the number of (design,
        kernel) analyses, then with ``n=1`` after each (the command line's progress bar).
    **spec_kwargs
        The fields of :class:`StudySpec` when ``spec`` is omitted.

    Returns
    -------
    GeneralizabilityResult
        n* for every design combination, goal, alpha* and delta*.

    See Also
    --------
    prepare : The rankings this analyzes.
    estimate_nstar : n* of one set of rankings and one goal.
    audit : The same question asked of models scored in several studies.

    Notes
    -----
    Matteucci et al. (2024), secs. 4-5: one Gram matrix per (design combination, kernel), the
    MMD distribution for every n <= N/2 from it, and n* for every (alpha*, delta*) — by
    default from the asymptotic law of the MMD (Gretton et al. (2012); :func:`gamma_nstar`),
    nearly unbiased where Algorithm 1's log-log extrapolation overshoots (docs/generalize.md).
    ``alternative`` and ``score`` of a Scores table are ``'model'`` and ``'value'``.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.
    .. [2] Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. & Smola, A. (2012). A
       Kernel Two-Sample Test. Journal of Machine Learning Research, 13, 723–773.

    Examples
    --------
    >>> df = pd.DataFrame({"m": list("ab") * 6, "d": np.repeat(range(6), 2),
    ...                    "s": [0.9, 0.8] * 5 + [0.1, 0.2]})
    >>> res = analyze(df, alternative="m", score="s", factors="d", kernels=["jaccard"],
    ...               n_resamples=50, random_state=0)
    >>> int(res.table["N"].iloc[0])
    6
    """
    from .._random import root_seed_sequence
    from . import _mmd
    from .kernels import RBF_MAX_SCORE, _parse_goal

    if isinstance(data, PreparedStudy):
        prepared = data
    else:
        if spec is None:
            spec = StudySpec(**spec_kwargs)
        prepared = prepare(data, spec)
    levels = check_levels(confidence_level)
    deltas = check_tolerance(tolerance)
    check_bootstrap(bootstrap)
    if isinstance(kernels, (str, Kernel)):
        kernels = [kernels]
    ks = [_parse_goal(k, "kernels") if isinstance(k, str) else k for k in kernels]
    if not ks or not all(isinstance(k, Kernel) for k in ks):
        raise ParameterError(f"`kernels` must be Kernel objects or goal strings; got {kernels!r}.")
    alternatives = prepared.samples[0].alternatives
    for k in ks:
        k.check(alternatives)
    runnable = [s for s in prepared.samples if len(s.conditions) >= 2]
    if not runnable:
        raise DataError("`factors`: no design combination has at least 2 experimental "
                        "conditions.")
    if any(k.kind == "rbf" for k in ks):
        with np.errstate(invalid="ignore"):
            big = max(float(np.nanmax(np.abs(s.scores), initial=0.0)) for s in runnable)
        if big > RBF_MAX_SCORE:
            raise DataError(f"`score`: the rbf goal squares score differences and scores reach "
                            f"{number(big)} (beyond ±{number(RBF_MAX_SCORE)}, where squares "
                            "overflow); "
                            f"rescale column {prepared.spec.score!r} or use a ranking goal.")
    _check_memory(runnable, ks, n_resamples, n)
    root = root_seed_sequence(random_state)
    if progress is not None:
        progress(0, total=len(runnable) * len(ks))
    checked = _mmd._CHECKED.set(True)
    try:
        frames, details = _run_analyses(runnable, ks, levels, deltas, n_resamples, n,
                                        mmd_estimator, estimator, bootstrap, root, progress)
    finally:
        _mmd._CHECKED.reset(checked)
    notes = list(prepared.notes) + _analysis_notes(runnable, details, ks[0].label)
    return GeneralizabilityResult(table=_stack_tables(frames), details=details,
                                  prepared=prepared, notes=tuple(notes))


def _analysis_notes(runnable, details, first_kernel) -> list[str]:
    """Notes on n* resting on a single subsample size or on fewer than 5 conditions."""
    loglog = details[(runnable[0].label, first_kernel)].table["estimator"].iloc[0] == "loglog"
    one_size = [s for s in runnable if loglog and
                len(details[(s.label, first_kernel)].distribution.n) < 2]
    few = [s for s in runnable if not loglog and len(s.conditions) < 5]
    notes = []
    if one_size:
        notes.append(f"n* of {len(one_size):,} design combination"
                     f"{'s' if len(one_size) > 1 else ''} ({_labels(one_size)}) rests on a "
                     f"single subsample size (N = {len(one_size[0].conditions)} conditions; "
                     "slope fixed at -2, Prop. A.4): a rough extrapolation; 6 or more "
                     "conditions give a fitted slope")
    if few:
        notes.append(f"n* of {len(few):,} design combination{'s' if len(few) > 1 else ''} "
                     f"({_labels(few)}) rests on fewer than 5 conditions: no interval (the "
                     "jackknife needs 5), and its bias was measured only from 10 conditions on")
    return notes


def _run_analyses(runnable, ks, levels, deltas, n_resamples, n, mmd_estimator, estimator,
                  bootstrap, root, progress):
    """n* of every (design combination, kernel), each with its own random stream."""
    from .._random import task_rng

    frames, details = [], {}
    with single_blas():
        for s in runnable:
            for k in ks:
                X = s.filled_scores() if k.kind == "rbf" else s.ranks
                rng = task_rng(root, (s.label, k.label))
                res = estimate_nstar(X, k, confidence_level=levels, tolerance=deltas,
                                     n_resamples=n_resamples, n=n, mmd_estimator=mmd_estimator,
                                     estimator=estimator, alternatives=s.alternatives,
                                     bootstrap=bootstrap, random_state=rng)
                details[(s.label, k.label)] = res
                frames.append((s, k.label, res))
                if progress is not None:
                    progress(1)
    return frames, details


def _check_memory(runnable, kernels, n_resamples, n) -> None:
    """Refuse, before any analysis, a study whose largest analysis (plus the MMD distributions
    kept for all of them) would not fit in memory: a clear error, not swapping."""
    from .._validation import check_int
    from ._mmd import check_analysis_memory, n_sizes

    R = check_int(n_resamples, "n_resamples", min_value=1)
    Ns = [len(s.conditions) for s in runnable]
    retained = 8 * R * len(kernels) * sum(n_sizes(N, n) for N in Ns)
    N = max(Ns)
    check_analysis_memory(
        N, len(runnable[0].alternatives), R, n_sizes(N, n), [k.kind for k in kernels],
        retained=retained, resamples="`n_resamples`",
        conditions="fewer `factors` levels, or split them by `design` or `held_constant`")


def _stack_tables(frames) -> pd.DataFrame:
    """One table from the (sample, kernel label, NStarResult) of every analysis: design
    columns, ``kernel``, ``N``, then the n* columns (as :meth:`NStarResult.to_frame` with the
    design inserted in front; one concatenation, not 5 column inserts per analysis)."""
    table = pd.concat([r.table for _, _, r in frames], ignore_index=True)
    reps = [len(r.table) for _, _, r in frames]

    def column(values):  # a list, so pandas infers the dtype as for the scalars inserted before
        return [v for v, k in zip(values, reps, strict=True) for _ in range(k)]

    table.insert(0, "kernel", column([lab for _, lab, _ in frames]))
    table.insert(1, "N", column([r.N for _, _, r in frames]))
    for i, c in enumerate(frames[0][0].design):
        table.insert(i, c, column([s.design[c] for s, _, _ in frames]))
    return table

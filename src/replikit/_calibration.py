"""Rows of a validity study: a Monte-Carlo rate or bias, its SE, and whether it is calibrated.

Every capability that ships a calibration study (``replikit.<capability>.validity``) reports
each cell as one row of the same tidy table, built here, so ``replikit simulate validity`` can
stack the capabilities' tables and the test suite can check them all the same way:

``capability, study, method, setting, quantity, estimate, mc_se, nominal, lower, upper,
n_replications, claim, within``

- ``quantity``: ``'coverage'`` (of a nominal ``confidence_level`` interval), ``'size'`` (type I
  error of a level-``alpha`` test), ``'power'``, ``'bias'`` or ``'relative_bias'``;
- ``lower``/``upper``: the tolerance band around ``nominal`` — the nominal value ± 3 Monte-Carlo
  SEs at the nominal rate, widened by ``slack`` (the method's documented asymptotic error at
  that sample size), one-sided for tests (a conservative test is within its band);
- ``claim``: ``'calibrated'`` when replikit claims the method is calibrated in that setting (the
  suite fails when such a row leaves its band), ``'documented'`` when the docs say where and
  how it is not (the row shows the failure), ``'invalid'`` for methods kept only for contrast;
- ``within``: whether ``estimate`` lies in ``[lower, upper]``.

:func:`stack_tables` stacks the capabilities' tables (checking the format),
:func:`check_table` returns the calibrated rows outside their band (what the test suite fails
on), :func:`format_table` prints a compact text table and :func:`plot_validity` draws the rates
with their Monte-Carlo SEs against the nominal values and the bands.
"""

from __future__ import annotations

import math

from .errors import DataError, ParameterError, ParameterTypeError

__all__ = ["COLUMNS", "QUANTITIES", "CLAIMS", "rate_row", "bias_row", "stack_tables",
           "check_table", "format_table", "plot_validity"]

COLUMNS = ("capability", "study", "method", "setting", "quantity", "estimate", "mc_se",
           "nominal", "lower", "upper", "n_replications", "claim", "within")
QUANTITIES = ("coverage", "size", "power", "bias", "relative_bias")
CLAIMS = ("calibrated", "documented", "invalid")


def _check(quantity: str, claim: str, n: int) -> None:
    if quantity not in QUANTITIES:
        raise ParameterError(f"`quantity` must be one of {QUANTITIES}; got {quantity!r}.")
    if claim not in CLAIMS:
        raise ParameterError(f"`claim` must be one of {CLAIMS}; got {claim!r}.")
    if n < 1:
        raise ParameterError(f"`n_replications` must be >= 1; got {n}.")


def rate_row(capability: str, study: str, method: str, setting: str, quantity: str, *,
             hits: int, n_replications: int, nominal: float, claim: str = "calibrated",
             slack: float = 0.0) -> dict:
    """One row for a Monte-Carlo rate: ``hits`` of ``n_replications`` (coverage, size, power).

    The band is ``nominal ± (3 · sqrt(nominal (1 − nominal) / n) + slack)`` for coverage;
    for ``'size'`` it is one-sided, ``[0, nominal + 3 SE + slack]`` (a conservative test holds
    its level); ``'power'`` has no band (``lower = 0``, ``upper = 1``).

    Parameters
    ----------
    capability, study, method, setting : str
        What was simulated (the first columns of the row).
    quantity : {'coverage', 'size', 'power'}
        What the rate is.
    hits : int
        Replications that covered (or rejected).
    n_replications : int
        Replications in the cell.
    nominal : float
        The rate a calibrated method gives (the confidence level, or ``alpha``).
    claim : {'calibrated', 'documented', 'invalid'}, default 'calibrated'
        What replikit says about the method in that cell.
    slack : float, default 0.0
        The method's documented finite-sample error, added to the band.

    Returns
    -------
    dict
        One row of :data:`COLUMNS`.

    See Also
    --------
    bias_row : A row for the bias of an estimator.

    Examples
    --------
    >>> r = rate_row("replicate", "R2 CI", "lee", "n=133", "coverage", hits=948,
    ...              n_replications=1000, nominal=0.95)
    >>> round(r["estimate"], 3), r["within"]
    (0.948, True)
    """
    _check(quantity, claim, n_replications)
    if not 0 <= hits <= n_replications:
        raise ParameterError(f"`hits` must lie in [0, n_replications={n_replications}]; got "
                             f"{hits}.")
    if not 0.0 < nominal < 1.0:
        raise ParameterError(f"`nominal` must be a rate in (0, 1); got {nominal!r}.")
    if quantity not in ("coverage", "size", "power"):
        raise ParameterError(f"`quantity`: rate_row is for coverage, size or power; got "
                             f"{quantity!r}.")
    p = hits / n_replications
    mc_se = math.sqrt(max(p * (1 - p), 1e-12) / n_replications)
    half = 3 * math.sqrt(nominal * (1 - nominal) / n_replications) + slack
    if quantity == "coverage":
        lower, upper = max(0.0, nominal - half), min(1.0, nominal + half)
    elif quantity == "size":
        lower, upper = 0.0, min(1.0, nominal + half)
    else:
        lower, upper = 0.0, 1.0
    return {"capability": capability, "study": study, "method": method, "setting": setting,
            "quantity": quantity, "estimate": p, "mc_se": mc_se, "nominal": nominal,
            "lower": lower, "upper": upper, "n_replications": int(n_replications),
            "claim": claim, "within": bool(lower <= p <= upper)}


def bias_row(capability: str, study: str, method: str, setting: str, *, estimates,
             truth: float, relative: bool = True, tolerance: float, claim: str = "calibrated"
             ) -> dict:
    """One row for the (relative) bias of an estimator: mean of ``estimates`` minus ``truth``
    (divided by ``truth`` when ``relative``), its Monte-Carlo SE, and the band ``±tolerance``
    widened by 3 SEs.

    Parameters
    ----------
    capability, study, method, setting : str
        What was simulated (the first columns of the row).
    estimates : array-like
        The estimator's value in each replication (non-finite values are left out).
    truth : float
        The true value.
    relative : bool, default True
        Report the relative bias ``(mean - truth) / truth``.
    tolerance : float
        The bias the method may have and still be called calibrated.
    claim : {'calibrated', 'documented', 'invalid'}, default 'calibrated'
        What replikit says about the method in that cell.

    Returns
    -------
    dict
        One row of :data:`COLUMNS`.

    See Also
    --------
    rate_row : A row for a coverage, size or power.

    Examples
    --------
    >>> r = bias_row("generalize", "n*", "mallows", "N=20", estimates=[36, 38, 37, 37],
    ...              truth=37, tolerance=0.2)
    >>> r["estimate"], r["within"]
    (0.0, True)
    """
    import numpy as np

    values = np.asarray(estimates, dtype=float)
    values = values[np.isfinite(values)]
    n = values.size
    quantity = "relative_bias" if relative else "bias"
    _check(quantity, claim, max(n, 1))
    scale = truth if relative else 1.0
    est = float((values.mean() - truth) / scale) if n else math.nan
    mc_se = float(values.std(ddof=1) / math.sqrt(n) / abs(scale)) if n > 1 else math.nan
    half = tolerance + (3 * mc_se if math.isfinite(mc_se) else 0.0)
    return {"capability": capability, "study": study, "method": method, "setting": setting,
            "quantity": quantity, "estimate": est, "mc_se": mc_se, "nominal": 0.0,
            "lower": -half, "upper": half, "n_replications": int(n), "claim": claim,
            "within": bool(n and -half <= est <= half)}


# --- tables of many rows --------------------------------------------------------------------

_STATUS = {"ok": "ok", "outside": "outside", "fail": "FAIL"}


def _as_frame(table, name: str = "table"):
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        frame = table
    elif isinstance(table, (list, tuple)) and all(isinstance(r, dict) for r in table):
        frame = pd.DataFrame(list(table), columns=list(COLUMNS) if not table else None)
    else:
        raise ParameterTypeError(f"`{name}` must be a pandas DataFrame of validity rows (or a "
                                 f"list of row dicts); got {type(table).__name__}.")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"`{name}` lacks the validity column(s) {', '.join(missing)}; a "
                        f"validity table has {', '.join(COLUMNS)}.")
    bad_q = sorted(set(frame["quantity"]) - set(QUANTITIES))
    if bad_q:
        raise DataError(f"`{name}`: column `quantity` holds {bad_q}; expected values in "
                        f"{QUANTITIES}.")
    bad_c = sorted(set(frame["claim"]) - set(CLAIMS))
    if bad_c:
        raise DataError(f"`{name}`: column `claim` holds {bad_c}; expected values in {CLAIMS}.")
    return frame


def _inside(frame):
    """Whether each row's estimate lies in its band, recomputed (a NaN estimate is outside)."""
    est = frame["estimate"].astype(float)
    return (frame["lower"].astype(float) <= est) & (est <= frame["upper"].astype(float))


def stack_tables(tables):
    """Stack validity tables (one per capability) into one, checking the row format.

    Parameters
    ----------
    tables : iterable of DataFrame or of lists of row dicts
        Tables of rows made by :func:`rate_row` / :func:`bias_row`.

    Returns
    -------
    pandas.DataFrame
        The rows in order, columns :data:`COLUMNS` first (extra columns kept after them), a
        fresh index, ``within`` recomputed from ``estimate``, ``lower`` and ``upper``.

    Raises
    ------
    DataError
        A table lacks a column of :data:`COLUMNS` or holds an unknown quantity or claim.

    Examples
    --------
    >>> a = [rate_row("replicate", "meta CI", "knha", "k=5", "coverage", hits=190,
    ...               n_replications=200, nominal=0.95)]
    >>> b = [rate_row("compare", "5x2 t", "paired_t_5x2cv", "n=300", "size", hits=12,
    ...               n_replications=200, nominal=0.05)]
    >>> stack_tables([a, b])[["capability", "estimate", "within"]]
      capability  estimate  within
    0  replicate      0.95    True
    1    compare      0.06    True
    """
    import pandas as pd

    frames = [_as_frame(t, f"tables[{i}]") for i, t in enumerate(tables)]
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    extra = [c for c in out.columns if c not in COLUMNS]
    out = out[list(COLUMNS) + extra].copy()
    out["within"] = _inside(out).to_numpy()
    return out


def check_table(table):
    """The calibrated rows outside their tolerance band: what the test suite fails on.

    A row fails when its ``claim`` is ``'calibrated'`` and its ``estimate`` is not in
    ``[lower, upper]`` (recomputed, not read from ``within``; a NaN estimate fails). Rows whose
    claim is ``'documented'`` or ``'invalid'`` never fail: the docs say where they are not
    calibrated.

    Parameters
    ----------
    table : DataFrame
        A validity table (:func:`stack_tables`, or a capability's ``validity(...)``).

    Returns
    -------
    pandas.DataFrame
        The failing rows, with the table's index; empty when every calibrated row holds.

    Examples
    --------
    >>> t = stack_tables([[
    ...     rate_row("replicate", "R2 CI", "lee", "in-sample", "coverage", hits=946,
    ...              n_replications=1000, nominal=0.95),
    ...     rate_row("replicate", "R2 CI", "olkin_finn", "in-sample", "coverage", hits=220,
    ...              n_replications=1000, nominal=0.95),
    ...     rate_row("replicate", "R2 CI", "wald", "in-sample", "coverage", hits=100,
    ...              n_replications=1000, nominal=0.95, claim="documented")]])
    >>> check_table(t)[["method", "estimate", "lower"]].round(3)
           method  estimate  lower
    1  olkin_finn      0.22  0.929
    """
    frame = _as_frame(table)
    return frame[(frame["claim"] == "calibrated") & ~_inside(frame)]


def _status(frame):
    import numpy as np

    inside = _inside(frame).to_numpy()
    calibrated = (frame["claim"] == "calibrated").to_numpy()
    return np.where(inside, _STATUS["ok"], np.where(calibrated, _STATUS["fail"],
                                                    _STATUS["outside"]))


def _num(value: float, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def format_table(table) -> str:
    """A compact text table of validity rows: ``estimate ± MC SE``, nominal, band, status.

    The status is ``ok`` (inside the band), ``outside`` (outside, but the row is documented or
    invalid: the docs say so) or ``FAIL`` (a calibrated row outside its band). Rates and
    biases are shown to three decimals (a relative bias of 0.120 is +12%).

    Examples
    --------
    >>> t = stack_tables([[rate_row("replicate", "meta PI", "knha", "k=5, tau2=0.01",
    ...                             "coverage", hits=181, n_replications=200, nominal=0.95)]])
    >>> print(format_table(t))
    study    method  setting         quantity  estimate ± MC SE  nominal  band            n    claim       status
    meta PI  knha    k=5, tau2=0.01  coverage  0.905 ± 0.021     0.950    [0.904, 0.996]  200  calibrated  ok
    """
    frame = _as_frame(table)
    if frame.empty:
        return "(no rows)"
    biased = frame["quantity"].isin(("bias", "relative_bias")).to_numpy()
    cols: dict[str, list[str]] = {}
    if frame["capability"].nunique() > 1:
        cols["capability"] = [str(v) for v in frame["capability"]]
    cols["study"] = [str(v) for v in frame["study"]]
    cols["method"] = [str(v) for v in frame["method"]]
    cols["setting"] = [str(v) for v in frame["setting"]]
    cols["quantity"] = [str(v) for v in frame["quantity"]]
    cols["estimate ± MC SE"] = [f"{_num(float(e), b)} ± {_num(float(s))}" for e, s, b in
                                zip(frame["estimate"], frame["mc_se"], biased, strict=True)]
    cols["nominal"] = [_num(float(v), b) for v, b in zip(frame["nominal"], biased,
                                                           strict=True)]
    cols["band"] = [f"[{_num(float(lo), b)}, {_num(float(hi), b)}]" for lo, hi, b in
                    zip(frame["lower"], frame["upper"], biased, strict=True)]
    cols["n"] = [str(int(v)) for v in frame["n_replications"]]
    cols["claim"] = [str(v) for v in frame["claim"]]
    cols["status"] = list(_status(frame))
    widths = {k: max(len(k), *(len(v) for v in vals)) for k, vals in cols.items()}
    lines = ["  ".join(k.ljust(widths[k]) for k in cols).rstrip()]
    for i in range(len(frame)):
        lines.append("  ".join(cols[k][i].ljust(widths[k]) for k in cols).rstrip())
    return "\n".join(lines)


# --- figure ---------------------------------------------------------------------------------

# Okabe & Ito (2008) colour-blind-safe palette; each claim also has its own marker, so the
# figure reads in grey scale too.
_CLAIM_STYLE = {"calibrated": ("#0072B2", "o"), "documented": ("#E69F00", "s"),
                "invalid": ("#CC79A7", "^")}
_FAIL_COLOUR = "#D55E00"
_XLABEL = {"coverage": "coverage of the nominal-level interval",
           "size": "type I error (rejection rate under the null)",
           "power": "power (rejection rate under the alternative)",
           "bias": "bias (estimate − truth)",
           "relative_bias": "relative bias ((estimate − truth) / truth)"}


def _labels(frame) -> list[str]:
    several = frame["capability"].nunique() > 1
    out = []
    for row in frame.itertuples(index=False):
        text = f"{row.study}: {row.method} ({row.setting})"
        out.append(f"{row.capability} · {text}" if several else text)
    return out


def plot_validity(table, ax=None):
    """Each row's rate (or bias) ± 1.96 Monte-Carlo SEs against its nominal value and band.

    One panel per quantity present (coverage, size, power, bias, relative bias), one line per
    row: the tolerance band as a grey bar, the nominal value as a black tick, the estimate as a
    marker whose colour and shape give the claim (Okabe–Ito colours: calibrated blue circles,
    documented orange squares, invalid purple triangles). A marker is hollow when the estimate
    lies outside the band; a calibrated row outside its band (a failure) has its label in bold
    vermilion. Power rows have no band.

    Parameters
    ----------
    table : DataFrame
        A validity table (:func:`stack_tables`, or a capability's ``validity(...)``).
    ax : matplotlib Axes or sequence of Axes, optional
        One axes per quantity present, in the order of :data:`QUANTITIES` (a single axes when
        the table holds one quantity). By default a new figure, its panel heights following
        the number of rows.

    Returns
    -------
    list of matplotlib.axes.Axes
        The panels, in the order of :data:`QUANTITIES`; ``axes[0].figure`` is the figure.

    Examples
    --------
    >>> t = stack_tables([[
    ...     rate_row("replicate", "meta CI", "knha", "k=5", "coverage", hits=190,
    ...              n_replications=200, nominal=0.95),
    ...     rate_row("compare", "5x2 t", "paired_t_5x2cv", "n=300", "size", hits=18,
    ...              n_replications=200, nominal=0.05, claim="documented")]])
    >>> axes = plot_validity(t)
    >>> [a.get_xlabel().split(" ")[0] for a in axes]
    ['coverage', 'type']
    """
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    frame = _as_frame(table)
    if frame.empty:
        raise DataError("`table` has no rows to plot.")
    quantities = [q for q in QUANTITIES if (frame["quantity"] == q).any()]
    counts = [int((frame["quantity"] == q).sum()) for q in quantities]
    if ax is None:
        from ._plotting import new_figure

        # rows of 9-pt labels (the figures' floor, _plotting.MIN_FONT_PT); the width leaves
        # the longest label its room beside a 4-inch plotting area
        longest = max((len(lab) for lab in _labels(frame)), default=10)
        height = sum(0.3 * c + 1.1 for c in counts) + 0.6
        fig = new_figure(min(18.0, max(8.0, 4.5 + 0.075 * longest)), height)
        grid = fig.add_gridspec(len(quantities), 1, height_ratios=[c + 3 for c in counts])
        axes = [fig.add_subplot(grid[i, 0]) for i in range(len(quantities))]
    else:
        axes = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        if len(axes) != len(quantities):
            raise ParameterError(f"`ax`: the table holds {len(quantities)} quantities "
                                 f"({', '.join(quantities)}), one axes each; got {len(axes)} "
                                 "axes.")
    status = _status(frame)
    labels = _labels(frame)
    for a, q in zip(axes, quantities, strict=True):
        sel = (frame["quantity"] == q).to_numpy()
        part = frame[sel]
        st = status[sel]
        n = len(part)
        y = np.arange(n)[::-1].astype(float)
        est = part["estimate"].astype(float).to_numpy()
        se = part["mc_se"].astype(float).fillna(0.0).to_numpy()
        lo = part["lower"].astype(float).to_numpy()
        hi = part["upper"].astype(float).to_numpy()
        nominal = part["nominal"].astype(float).to_numpy()
        banded = ~((lo <= 0.0) & (hi >= 1.0)) if q in ("coverage", "size", "power") else (
            np.ones(n, dtype=bool))
        a.barh(y[banded], (hi - lo)[banded], left=lo[banded], height=0.7, color="#DDDDDD",
               edgecolor="none", zorder=0)
        if q != "power":
            a.scatter(nominal, y, marker="|", s=120, color="black", linewidths=1.2, zorder=1)
        for claim, (colour, marker) in _CLAIM_STYLE.items():
            m = (part["claim"] == claim).to_numpy() & np.isfinite(est)
            if not m.any():
                continue
            a.errorbar(est[m], y[m], xerr=1.96 * se[m], fmt="none", ecolor=colour,
                       elinewidth=1.0, capsize=2, zorder=2)
            inside = st[m] == _STATUS["ok"]
            a.scatter(est[m][inside], y[m][inside], marker=marker, s=26, color=colour,
                      zorder=3)
            a.scatter(est[m][~inside], y[m][~inside], marker=marker, s=30, facecolors="white",
                      edgecolors=colour, linewidths=1.4, zorder=3)
        a.set_yticks(y, [lab for lab, keep in zip(labels, sel, strict=True) if keep],
                     fontsize=9)
        for tick, s in zip(a.get_yticklabels(), st, strict=True):
            if s == _STATUS["fail"]:
                tick.set_color(_FAIL_COLOUR)
                tick.set_fontweight("bold")
        a.set_ylim(-0.7, n - 0.3)
        finite = np.concatenate([est[np.isfinite(est)] + 1.96 * se[np.isfinite(est)],
                                 est[np.isfinite(est)] - 1.96 * se[np.isfinite(est)],
                                 lo[banded], hi[banded], nominal if q != "power" else []])
        if finite.size:
            left, right = float(finite.min()), float(finite.max())
            pad = 0.04 * max(right - left, 0.02)
            if q == "power":
                left, right = -0.02, 1.02
            elif q in ("coverage", "size"):
                left, right = max(-0.02, left - pad), min(1.02, right + pad)
            else:
                left, right = left - pad, right + pad
            a.set_xlim(left, right)
        a.set_xlabel(_XLABEL[q], fontsize=9)
        a.tick_params(axis="x", labelsize=9)
        a.grid(axis="x", color="#EEEEEE", lw=0.6, zorder=-1)
        a.set_axisbelow(True)
    present = [c for c in CLAIMS if (frame["claim"] == c).any()]
    handles = [Line2D([], [], ls="none", marker=_CLAIM_STYLE[c][1], color=_CLAIM_STYLE[c][0],
                      label=c) for c in present]
    handles += [Line2D([], [], ls="none", marker="o", markerfacecolor="white",
                       markeredgecolor="#555555", label="outside its band"),
                Patch(color="#DDDDDD", label="tolerance band"),
                Line2D([], [], ls="none", marker="|", markersize=9, color="black",
                       label="nominal"),
                Line2D([], [], color="#555555", lw=1.0, label="± 1.96 MC SE")]
    # a figure-level legend above the panels: constrained layout makes room for it (a legend
    # anchored to the first axes could be wider than the axes and collapse them)
    axes[0].figure.legend(handles=handles, fontsize=9, frameon=False,
                          ncols=min(len(handles), 4), loc="outside upper left")
    return axes

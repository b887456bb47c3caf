"""``replikit replicate`` (the three aims of a replication) and ``replikit simulate replication``
(Study 2 of Vijayakumar & Cheung 2021).

Every output is checked before any input is read: files this command would write are refused
if they exist, unless ``--overwrite``; other files in ``--out`` are never touched. CSVs and
standalone SVGs are written atomically. Library errors name parameters; the entry point shows
the flags (each flag is its parameter's name with dashes).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from ..errors import ParameterError
from ._common import (
    InputArg,
    OutOpt,
    OverwriteOpt,
    RandomStateOpt,
    TableOpt,
    emit,
    epilog,
    frame_table,
    info,
    renamed_flags,
    simulate_app,
)
from ._common import (
    check_out as _check_out,
)
from ._common import (
    choice as _choice,
)
from ._common import (
    warning_lines as _warning_lines,
)

#: The papers behind ``replikit replicate``.
REPLICATE_REFERENCES = ("vijayakumar2021", "anderson2016", "olkin1995", "cohen2003",
                        "zou2007", "schuirmann1987", "viechtbauer2010", "knapp2003")
#: The papers behind ``replikit simulate replication``.
SIMULATION_REFERENCES = ("vijayakumar2021", "olkin1995", "dersimonian1986", "viechtbauer2010")

Tau2Opt = Annotated[str, typer.Option(
    "--tau2-method", help="tau2 estimator of the random-effects model: DL, REML, ML, PM, HE, "
    "SJ, HS.")]

_REPLICATE_OUTPUTS = ("replications.csv", "pooled.csv", "inconsistency_*.svg",
                      "consistency_*.svg", "forest_*.svg")
_SIM_TABLES = ("study2_table.csv", "study2_diagnostic.csv")
_SIM_FIGURES = {"fig9a_cv_inconsistency": ("cv", "inconsistency", "random"),
                "fig9b_cv_consistency": ("cv", "consistency", "random"),
                "fig10a_test_inconsistency": ("test", "inconsistency", "random"),
                "fig10b_test_consistency": ("test", "consistency", "random"),
                "fig11_cv_population_random": ("cv", "captured", "random"),
                "fig11_cv_population_fixed": ("cv", "captured", "fixed"),
                "fig12_test_population_random": ("test", "captured", "random"),
                "fig12_test_population_fixed": ("test", "captured", "fixed")}


def _stems(keys) -> dict:
    """File-name stems for (model, source) groups: safe characters only, never colliding."""
    out, used = {}, set()
    for key in keys:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(map(str, key))).strip("._") or "group"
        stem, i = base, 2
        while stem.lower() in used:
            stem, i = f"{base}_{i}", i + 1
        used.add(stem.lower())
        out[key] = stem
    return out


def _old_value(value: str, flag: str, old: str, new: str) -> str:
    """``new`` for the old value ``old`` of ``flag``, with one warning line."""
    if value.lower() != old:
        return value
    info(f"replikit: warning: `{flag} {old}` is now `{flag} {new}`; the old name will stop "
         "working in replikit 0.3.")
    return new


# ---------------------------------------------------------------------------------------------
# replicate


def replicate(
    path: InputArg,
    original: Annotated[str | None, typer.Option("--original", help="Label of the original "
                                                 "study (default: the first).")] = None,
    study: Annotated[str, typer.Option("--study", help="Column of study labels.")] = "study",
    estimate: Annotated[str | None, typer.Option("--estimate", help="Column of estimates "
                                                 "(default: value, r2, estimate or yi; in a "
                                                 "Scores table: value).")] = None,
    metric: Annotated[str, typer.Option("--metric", help="Metric of the estimates.")] = "r2",
    tolerance: Annotated[float, typer.Option("--tolerance", help="Region of equivalence "
                                             "±tolerance (> 0, in the metric's units) of the "
                                             "consistency test.")] = 0.05,
    interval: Annotated[str, typer.Option("--interval", help="Interval of each difference: "
                                          "wald (simple asymptotic) or mover (Zou 2007).")
                        ] = "wald",
    pooling: Annotated[str, typer.Option("--pooling", help="Pooling of CV folds in a Scores "
                                         "table: fixed or random.")] = "random",
    tau2_method: Tau2Opt = "REML",
    meta_interval: Annotated[str, typer.Option("--meta-interval", help="Pooled interval: wald "
                                               "or knha (Knapp-Hartung).")] = "wald",
    se_method: Annotated[str, typer.Option("--se-method", help="SE of R2: olkin_finn or "
                                           "cohen.")] = "olkin_finn",
    table: TableOpt = None,
    out: OutOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Does a replication contradict, confirm, or combine with the original?

    Input: one row per study (study, value/r2/estimate, n, [k], [se], [model]);
    or a Scores table of CV folds (study, model, fold, metric, value, n_test), pooled per study.
    """
    from ..replicate import SE_METHODS, TAU2_METHODS

    _check_out(out, _REPLICATE_OUTPUTS, overwrite)
    interval = _choice(_old_value(interval, "--interval", "sa", "wald"), "--interval",
                       ("wald", "mover"))
    tau2_method = _choice(tau2_method, "--tau2-method", TAU2_METHODS, upper=True)
    meta_interval = _choice(_old_value(meta_interval, "--meta-interval", "z", "wald"),
                            "--meta-interval", ("wald", "knha"))
    se_method = _choice(se_method, "--se-method", SE_METHODS)
    pooling = _choice(pooling, "--pooling", ("fixed", "random"))
    if not tolerance > 0:
        raise ParameterError(f"`tolerance` must be > 0 (the region is ±tolerance); got "
                             f"{tolerance}.")

    from ..data.io import read_frame
    from ..replicate import analyze_replications, estimates_from_table

    frame = read_frame(path, table=table)
    with _warning_lines():
        groups = estimates_from_table(frame, study=study, estimate=estimate, metric=metric,
                                      pooling=pooling, tau2_method=tau2_method,
                                      se_method=se_method)
        if original is None:
            original = next(iter(groups.values()))[0].label
            info(f"Original study: {original!r} (the first; choose with --original).")
        res = analyze_replications(groups, original, tolerance=tolerance, interval=interval,
                                   tau2_method=tau2_method, meta_interval=meta_interval)
    if out is not None:
        _write_replication(res, out, metric)
    emit(_replication_human(res), res.to_dict())


def _replication_human(res) -> list:
    """The replication analysis for the terminal: its heading (the first line of the
    result's text) and the per-replication and pooled tables."""
    show = ["model", "source", "replication", "estimate", "difference", "ci_low", "ci_high",
            "inconsistency", "pvalue_tost", "consistency"]
    pooled = ["model", "source", "pooling", "tau2_method", "interval", "estimate", "ci_low",
              "ci_high", "tau2", "i2_q"]
    return [str(res).split("\n")[0],
            frame_table(res.table[show], formats={"pvalue_tost": "p"}),
            frame_table(res.pooled[pooled], title="Pooled (original + replications):")]


def _write_replication(res, out: Path, metric: str) -> None:
    from .._outputs import write_csv_atomic
    from .._plotting import new_axes, save_svg
    from ..replicate import forest_plot

    write_csv_atomic(out / "replications.csv", res.table)
    write_csv_atomic(out / "pooled.csv", res.pooled)
    written = ["replications.csv", "pooled.csv"]
    groups = list(res.table.groupby(["model", "source"], sort=False))
    stems = _stems([key for key, _ in groups])
    for (model, source), _ in groups:
        stem = stems[(model, source)]
        for aim in ("inconsistency", "consistency"):
            ax = res.plot(ax=new_axes(6.0, 1.2 + 0.3 * len(_)), model=model, source=source,
                          aim=aim)
            save_svg(ax.figure, out / f"{aim}_{stem}.svg")
        ax = forest_plot(res.meta[(model, source, "random")], xlabel=metric, refline=None)
        save_svg(ax.figure, out / f"forest_{stem}.svg")
        written += [f"inconsistency_{stem}.svg", f"consistency_{stem}.svg", f"forest_{stem}.svg"]
    info(f"Wrote {len(written)} files to {out}/")


# ---------------------------------------------------------------------------------------------
# simulate replication


def simulate_replication_cmd(
    models: Annotated[str, typer.Option("--models", help="Comma-separated: lr, ridge "
                                        "(batched), lasso, enet, rf, svm, mlp.")] = "lr,ridge",
    n_repeats: Annotated[int, typer.Option("--n-repeats", min=1,
                                           help="Monte Carlo repeats.")] = 200,
    n_studies: Annotated[int, typer.Option("--n-studies", min=3, help="Studies K (>= 3: the "
                                           "original, a replication and a changed study; "
                                           "with K < 6 fewer studies are changed).")] = 8,
    n_per_study: Annotated[int, typer.Option("--n-per-study", min=50, help="Rows per study "
                                             "(50 to the 13,440 rows of the population).")
                           ] = 2000,
    tau2_method: Annotated[str, typer.Option("--tau2-method", help="tau2 estimator (DL, as "
                                             "the R package meta the paper used).")] = "DL",
    random_state: RandomStateOpt = 0,
    n_jobs: Annotated[int, typer.Option("--n-jobs", "-j", min=1, help="Workers for the "
                                        "scikit-learn models.")] = 1,
    out: OutOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Study 2 of Vijayakumar & Cheung (2021): do the procedures tell replications from
    non-replications?"""
    from ..replicate import simulate_replication
    from ._common import progress

    _check_out(out, list(_SIM_TABLES) + [f"{name}.svg" for name in _SIM_FIGURES], overwrite)
    names = [m.strip() for m in models.split(",") if m.strip()]
    if not names:
        raise ParameterError(f"`models` names no model; got {models!r}.")
    info(f"Simulating {n_repeats:,} repeat(s) of {n_studies:,} studies x {n_per_study:,} rows, "
         f"models {', '.join(names)} (the ANES survey as the population).")
    with _warning_lines():
        with progress("Study 2 repeats", total=n_repeats) as advance:
            res = simulate_replication(models=names, n_repeats=n_repeats, n_studies=n_studies,
                                       n_per_study=n_per_study, tau2_method=tau2_method,
                                       random_state=random_state, n_jobs=n_jobs,
                                       progress=advance)
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import new_figure, save_svg

        write_csv_atomic(out / "study2_table.csv", res.table)
        write_csv_atomic(out / "study2_diagnostic.csv", res.diagnostic())
        width = 2.3 * len(names) + 0.8
        for name, (measure, procedure, stage2) in _SIM_FIGURES.items():
            fig = new_figure(width, 2.8)
            res.plot(measure=measure, procedure=procedure, stage2=stage2, fig=fig)
            save_svg(fig, out / f"{name}.svg")
        info(f"Wrote study2_table.csv, study2_diagnostic.csv and {len(_SIM_FIGURES)} figures to "
             f"{out}/")
    emit(_simulation_human(res), {"runtime_seconds": res.runtime_seconds,
                                  "r2_population": res.r2_population,
                                  "n_repeats": res.n_repeats, "settings": res.settings,
                                  "notes": list(res.notes), "table": res.table})


def _simulation_human(res) -> list:
    """Study 2 for the terminal: the result's text with its pivot table as a table."""
    t = res.table
    text = str(res).split("\n")
    changed = max(res.n_changed)
    sub = t[(t["n_changed"] == changed) & (t["procedure"].isin(["inconsistency", "consistency"]))
            & (t["tolerance"].isin([0.0, 0.1]))]
    piv = sub.pivot_table(index=["model", "measure", "stage1", "procedure", "tolerance",
                                 "group"], columns="delta", values="proportion")
    piv.columns = [f"{c:g}" for c in piv.columns]
    notes = [line for line in text if line.startswith("note: ")]
    return [text[0], text[1] if len(text) > 1 else None,
            frame_table(piv, index=True, formats=dict.fromkeys(piv.columns, "{:.2f}")),
            *notes]


def register(app: typer.Typer) -> None:
    app.command("replicate", epilog=epilog(
        examples=["replikit replicate studies.csv --original 2002",
                  "replikit replicate studies.csv --tolerance 0.1 --meta-interval knha"],
        references=REPLICATE_REFERENCES))(replicate)
    simulate_app.command("replication", epilog=epilog(
        examples=["replikit simulate replication --n-repeats 200 --out study2",
                  "replikit simulate replication --models lr,lasso --n-per-study 500"],
        references=SIMULATION_REFERENCES))(simulate_replication_cmd)
    renamed_flags("replicate", {"--margin": "--tolerance", "--tau2": "--tau2-method",
                                "--ci": "--meta-interval"})
    renamed_flags("simulate replication", {"--repetitions": "--n-repeats", "-R": "--n-repeats",
                                           "--n": "--n-per-study", "--studies": "--n-studies",
                                           "--tau2": "--tau2-method"})

"""``replikit estimate`` (prediction error of one model by resampling) and
``replikit simulate resampling`` (the experiment of Etherington & Lieske (2019))."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from ._common import (
    DataOpt,
    NJobsOpt,
    RandomStateOpt,
    TableOpt,
    TargetOpt,
    TaskOpt,
    emit,
    epilog,
    frame_table,
    info,
    progress,
    renamed_flags,
    simulate_app,
)

ESTIMATE_FILES = ("estimates.csv", "estimates.svg")
SIMULATION_FILES = ("resampling_table.csv", "resampling_errors.csv", "resampling_densities.svg")
REFERENCES = ("etherington2019", "verbyla1989", "efron1983", "efron1997",
              "bates2024", "nadeau2003", "clopper1934")


def estimate(
    data: DataOpt,
    target: TargetOpt,
    model: Annotated[str, typer.Option("--model", help="Model alias: lr, ridge, lasso, enet, "
                                       "lda, rf, gb, svm, mlp, knn, tree, dummy.")] = "lr",
    task: TaskOpt = None,
    methods: Annotated[str, typer.Option(
        "--methods", show_default=False, help="Comma-separated methods: resubstitution, "
        "holdout, kfold, loo, bootstrap, loo_bootstrap, .632, .632+ (default: resubstitution, "
        "kfold, bootstrap, loo_bootstrap, .632+).")] = "resubstitution,kfold,bootstrap,"
        "loo_bootstrap,.632+",
    loss: Annotated[str | None, typer.Option("--loss", help="zero_one, absolute, squared or log "
                                             "(default: zero_one / squared).")] = None,
    n_resamples: Annotated[int, typer.Option("--n-resamples", min=1,
                                             help="Number of bootstrap resamples.")] = 200,
    n_folds: Annotated[int, typer.Option("--n-folds", min=2, help="Folds K.")] = 10,
    n_repeats: Annotated[int | None, typer.Option("--n-repeats", min=1, help="Hold-out splits H "
                                                  "(default 200) or K-fold repeats (1).")] = None,
    test_size: Annotated[float, typer.Option("--test-size", help="Hold-out test share p.")] = 0.368,
    rounding: Annotated[str, typer.Option("--rounding", help="Hold-out test rows: ceil (default, "
                                          "scikit-learn's rule) or floor (the original code's "
                                          "int(n*p)) of n*p.")] = "ceil",
    interval: Annotated[str | None, typer.Option(
        "--interval", show_default=False, help="Kind of interval: nested (nested "
        "cross-validation, Bates, Hastie & Tibshirani 2024; the default for kfold), wald "
        "(naive; kfold, loo), t or exact (one hold-out split), corrected_t (repeated hold-out, "
        "Nadeau & Bengio 2003) or none; default: each method's own.")] = None,
    n_nested_repeats: Annotated[int | None, typer.Option(
        "--n-nested-repeats", min=1, help="Repetitions of nested cross-validation (default "
        "50; each refits the model K(K+1)/2 times).")] = None,
    confidence_level: Annotated[float, typer.Option(
        "--confidence-level", help="Level of the intervals.")] = 0.95,
    fast: Annotated[bool | None, typer.Option(
        "--fast/--generic", help="Require the batched fast path, or force the generic path (one "
        "cloned estimator per resample); default: the fast path when the model has one.")]
    = None,
    table: TableOpt = None,
    random_state: RandomStateOpt = 0,
    n_jobs: NJobsOpt = 1,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Directory for estimates.csv and estimates.svg (a bar chart of the "
        "estimates).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace estimates.csv and "
                                            "estimates.svg in --out.")] = False,
) -> None:
    """Estimate a model's prediction error by resampling: resubstitution, hold-out, K-fold,
    leave-one-out, the bootstrap (Etherington & Lieske (2019), eqs. 3-7), .632 and .632+."""
    from .._convergence import model_fits
    from .._outputs import check_output_dir
    from ..data.userdata import load_dataset
    from ..experiment.models import make_model
    from ..resampling.error import estimate_errors

    if out is not None:
        check_output_dir(out, ESTIMATE_FILES, option="--out", overwrite=overwrite)
    dataset = load_dataset(data, target=target, table=table, task=task)
    chosen = [m.strip() for m in methods.split(",") if m.strip()]
    est = make_model(model, dataset.task)
    info(f"Estimating the error of {model} on {dataset.name}: {len(dataset.y):,} rows, "
         f"{dataset.task}.")
    with progress(f"{model}: fits") as advance, model_fits(model):
        res = estimate_errors(est, dataset.X, dataset.y, methods=chosen, loss=loss,
                              n_resamples=n_resamples, n_folds=n_folds, n_repeats=n_repeats,
                              test_size=test_size, rounding=rounding, task=dataset.task,
                              interval=interval, n_nested_repeats=n_nested_repeats,
                              fast=fast, random_state=random_state, n_jobs=n_jobs,
                              progress=advance)
    frame = res.to_frame()
    if confidence_level != 0.95:
        cis = [res[m].confidence_interval(confidence_level) for m in frame["method"]]
        frame["ci_low"] = [c.low for c in cis]
        frame["ci_high"] = [c.high for c in cis]
    frame["confidence_level"] = confidence_level
    frame["interval_method"] = [res[m].interval_method if res[m].interval != "none"
                                else res[m].interval_note for m in frame["method"]]
    first = res[chosen[0]]
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import new_axes, save_svg

        write_csv_atomic(out / "estimates.csv", frame)
        ax = res.plot(ax=new_axes(6.0, 0.9 + 0.35 * len(frame)))
        ax.set_title(f"{model} on {dataset.name}", fontsize=9)
        save_svg(ax.figure, out / "estimates.svg")
        info(f"Wrote estimates.csv and estimates.svg to {out}/")
    title = (f"Prediction error of {model} on {dataset.name}: {first.loss} loss, "
             f"{first.n:,} rows, {first.path} path")
    from .._format import interval as fmt_interval

    shown = frame.assign(**{f"{confidence_level:.0%} interval": [
        fmt_interval(lo, hi, 4) for lo, hi in zip(frame["ci_low"], frame["ci_high"],
                                                     strict=True)]})
    shown = shown.rename(columns={"interval_method": "interval method"})
    emit(frame_table(shown[["method", "estimate", f"{confidence_level:.0%} interval",
                            "interval method", "n_resamples", "path"]],
                     title=title, no_wrap=[f"{confidence_level:.0%} interval"]),
         {"model": model, "data": str(data), "estimates": frame})


def simulate_resampling_cmd(
    n_experiments: Annotated[int, typer.Option("--n-experiments", min=1,
                                               help="Number of random datasets.")] = 1000,
    exact: Annotated[bool, typer.Option("--exact", help="Replay the original script's random "
                                        "stream (legacy RandomState) to reproduce the published "
                                        "figures.")] = False,
    random_state: Annotated[int, typer.Option(
        "--random-state", min=0, help="Makes the run reproducible (the paper used 1; the same "
        "number gives the same results, whatever --n-jobs).")] = 1,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for the table (CSV), the "
                                             "per-dataset errors and the figure (SVG).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the files in "
                                            "--out.")] = False,
    n_jobs: Annotated[int | None, typer.Option(
        "--n-jobs", "-j", min=1, help="Threads (default: one per CPU core, at most 8; the "
        "numbers do not depend on it).")] = None,
) -> None:
    """The experiment of Etherington & Lieske (2019): eight resampling estimators of the error
    of LDA on 1,000 datasets with no signal (true error 0.5)."""
    from .._outputs import check_output_dir
    from .._threads import usable_cores
    from ..resampling.simulation import simulate_resampling

    if out is not None:
        check_output_dir(out, SIMULATION_FILES, option="--out", overwrite=overwrite)
    _preload(plotting=out is not None)  # imported by a thread while the experiment computes
    with _retained_freed_memory(), \
            progress(f"Resampling experiment ({n_experiments:,} datasets)") as advance:
        res = simulate_resampling(n_experiments=n_experiments, exact=exact,
                                  random_state=random_state, progress=advance,
                                  n_jobs=n_jobs if n_jobs is not None else usable_cores())
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import new_axes, save_svg

        write_csv_atomic(out / "resampling_table.csv", res.table)
        write_csv_atomic(out / "resampling_errors.csv", res.errors)
        save_svg(res.plot(ax=new_axes(7.0, 4.2)).figure, out / "resampling_densities.svg")
        info(f"Wrote {out}/resampling_table.csv, resampling_errors.csv, resampling_densities.svg")
    human = frame_table(res.table, formats={c: "{:.3f}" for c in ("mean", "sd", "paper_mean",
                                                                  "paper_sd")},
                        title=f"{res.description}; {res.runtime_seconds:.2f} s")
    emit(human, {"n_experiments": res.n_experiments, "random_state": res.random_state,
                 "exact": res.exact, "runtime_seconds": res.runtime_seconds,
                 "table": res.table})


def _preload(*, plotting: bool) -> None:
    """Import pandas and the figure's modules (~0.7 s) in a daemon thread, overlapping the
    experiment's numpy work, which releases the GIL; the import lock makes a later import in
    the main thread wait for it rather than import twice."""
    import threading

    def load() -> None:
        try:
            import pandas  # noqa: F401

            if plotting:
                import matplotlib.backends.backend_svg  # noqa: F401
                import matplotlib.figure  # noqa: F401

                from .._plotting import new_figure  # noqa: F401
                from ..resampling.plots import plot_experiment_densities  # noqa: F401
        except Exception:  # noqa: BLE001 — the main thread imports again and reports errors
            pass

    threading.Thread(target=load, daemon=True).start()


@contextlib.contextmanager
def _retained_freed_memory():
    """Within the block, ask glibc's ``malloc`` to serve blocks up to 32 MiB from its heap and
    to keep freed memory (up to 256 MiB) for reuse instead of returning it to the system at
    once; glibc's defaults (128 KiB each) are set again on exit.

    The batched fits of the experiment allocate and free thousands of multi-megabyte
    temporaries; with glibc's defaults most of them are fresh ``mmap`` regions whose pages the
    kernel maps and zero-fills again every time: about 250,000 page faults, 0.6-0.9 s of system
    time in a 3 s ``replikit simulate resampling`` (measured; a second pass in the same process,
    after glibc's own threshold has adapted, has none). A no-op where the C library has no
    ``mallopt`` (macOS, Windows).
    """
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        yield
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 256 << 20)
    try:
        yield
    finally:
        mallopt(m_mmap_threshold, 128 << 10)
        mallopt(m_trim_threshold, 128 << 10)


def register(app: typer.Typer) -> None:
    app.command("estimate", epilog=epilog(
        examples=["replikit estimate --data survey.csv --target y --model lda",
                  "replikit estimate --data d.csv --target y --methods kfold,.632+ --n-folds 5"],
        references=REFERENCES))(estimate)
    simulate_app.command("resampling", epilog=epilog(
        examples=["replikit simulate resampling --exact --random-state 1",
                  "replikit simulate resampling --n-experiments 200 --out results/"],
        references=REFERENCES))(simulate_resampling_cmd)
    renamed_flags("estimate", {"--method": "--methods", "--resamples": "--n-resamples",
                               "--folds": "--n-folds", "-K": "--n-folds",
                               "--repeats": "--n-repeats"})
    renamed_flags("simulate resampling", {"--experiments": "--n-experiments"})

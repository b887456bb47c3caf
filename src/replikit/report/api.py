"""``replikit.audit(...)``: the audit from Python, on any of its five entry levels."""

from __future__ import annotations

from .audit import Audit, compute_audit
from .inputs import audit_input

__all__ = ["audit"]


def audit(data=None, *, target: str | None = None, study: str | None = None,
          scores=None, predictions=None, benchmark=None, estimates=None,
          models=None, columns: dict | None = None, n_folds: int | None = None,
          scheme: str | None = None, test_fraction: float | None = None,
          metric: str | None = None, higher_is_better: bool | None = None,
          original: str | None = None, task: str | None = None, table: str | None = None,
          time: str | None = None, event: str | None = None,
          random_state: int | None = 0, n_jobs: int | None = None, quick: bool = False,
          sections: list[str] | None = None, tolerances: dict | None = None,
          moderators: list[str] | None = None, progress: bool = False,
          client=None, store=None, clear_store: bool = False,
          backend: str | None = None) -> Audit:
    """Will these results hold up elsewhere? The replicability audit, from whatever you have.

    Give exactly one entry: a data table (the models are fitted here), per-fold scores,
    out-of-fold predictions, a benchmark table or reported estimates — each a pandas
    DataFrame or a path to a CSV, Parquet or DuckDB file. Every section answers what its entry
    allows and the others are marked skipped with the one thing to supply:

    ============  =====================================================================
    entry         sections answered
    ============  =====================================================================
    data          all six (error estimates, comparisons, replication, cross-study
                  replicability, generalizability; the last three need ``study``)
    scores        error estimates of the scores' mean, comparisons, generalizability
                  across the studies of the scores
    predictions   error estimates, comparisons, cross-study replicability of the rule
                  (with a study column), generalizability
    benchmark     comparisons across datasets, generalizability of the ranking
    estimates     replication of the original and meta-analysis
    ============  =====================================================================

    Parameters
    ----------
    data : DataFrame, path or Dataset, optional
        A table with an outcome ``target`` and features; ``study`` names the column of
        studies, sites or years. A table laid out as scores, predictions or estimates is
        refused with the entry it belongs to.
    target, study : str, optional
        The outcome column and the study column of ``data`` (``study`` also names the study
        column of ``predictions``).
    scores : DataFrame or path, optional
        Per-fold scores: the Scores layout (``study, model, [repeat,] fold, metric, value[,
        n_train, n_test]``), an mlr3 ``as.data.table(bmr$score())`` export or a Weka
        Experimenter CSV, recognised from their columns; ``columns`` maps any other layout.
    predictions : DataFrame or path, optional
        Out-of-fold predictions: ``study, model, repeat, fold, row, y_true, y_pred[,
        proba_<class>]``.
    benchmark : DataFrame or path, optional
        One score per model and dataset, long or wide (a paper's table, an OpenML study).
    estimates : DataFrame or path, optional
        One row per study: ``study``, a column named by its metric (``r2``, ``r``, ``auc``,
        ``accuracy`` or ``estimate``) with ``n`` or ``se`` / ``variance``; the original
        marked by a ``role`` column or ``original``.
    models : dict or str, optional
        With ``data``: name -> scikit-learn estimator, or aliases ``'lr,rf,dummy'``
        (default: the audit's line-up for the task).
    columns : dict, optional
        ``{entry_column: file_column}`` for a layout replikit does not recognise.
    n_folds : int, optional
        Folds per repeat of an mlr3 export of repeated cross-validation.
    scheme : {'kfold', 'holdout'}, optional
        How per-fold scores were made, where the file cannot say: the corrected tests need
        the test-to-training size ratio, and are skipped (never guessed) without it.
    test_fraction : float, optional
        The test share of a repeated hold-out scheme (implies ``scheme='holdout'``).
    metric : str, optional
        The primary metric of scores or predictions; the name of a benchmark table's score.
    higher_is_better : bool, optional
        Direction of a benchmark's score (default True).
    original : str, optional
        The original study among ``estimates``.
    task : {'classification', 'regression'}, optional
        Of ``data`` or ``predictions`` (default: inferred from the outcome).
    table : str, optional
        The table inside a DuckDB file.
    time, event : str, optional
        With ``data``: a survival outcome in place of ``target`` — the follow-up time column
        and the event column (1/0, true/false or yes/no). The audit then scores the models
        by the C-index and validates them across studies (Bernau et al. (2014)).
    random_state : int or None, default 0
        The same value gives the same numbers, whatever ``n_jobs``.
    n_jobs : int, optional
        Worker processes for model fits (default: one per core, at most 8).
    quick : bool, default False
        Fewer resamples: a preview.
    sections : list of str, optional
        The sections to run (default: all).
    tolerances : dict, optional
        Practical tolerances the lights are judged against, by section (see
        :func:`replikit.report.run_audit`).
    moderators : list of str, optional
        With ``data``: study-level columns for the replication section's meta-regression.
    progress : bool, default False
        Progress bars on stderr.
    client : dask.distributed.Client or str, optional
        A Dask client or a scheduler address: every fit of every section runs on that
        cluster (the numbers are the same as a serial audit's).
    store : path-like, optional
        A DuckDB file keeping every finished fit (data entry): the same call after an
        interruption refits nothing it finished; another audit's store is refused.
    clear_store : bool, default False
        Delete the results in ``store`` and start afresh.
    backend : {'serial', 'joblib', 'dask'}, optional
        Where the fits run (default: 'dask' with ``client``, else joblib with several
        workers).

    Returns
    -------
    Audit
        ``.cards`` (one per question), ``.sections``, ``.to_dict()`` (the JSON twin),
        ``.save(directory)`` (the HTML report, JSON and BibTeX); a notebook shows the cards.

    Raises
    ------
    ParameterError
        No entry or several, or an option that does not go with the entry.
    DataError
        The table lacks what its entry needs (the message names the column).

    See Also
    --------
    replikit.report.run_audit : The same on a Dataset, writing the report at once.
    replikit.compare.compare_scores : The tests of the comparison section, on scores.

    Examples
    --------
    >>> import replikit
    >>> from replikit.data.examples import score_export
    >>> result = replikit.audit(scores=score_export("mlr3"), quick=True)
    >>> [(c["key"], c["state"]) for c in result.cards][:2]  # doctest: +SKIP
    [('resampling', 'info'), ('compare', 'good')]
    >>> result.meta["entry"]
    'scores'
    """
    source = audit_input(data=data, target=target, study=study, scores=scores,
                         predictions=predictions, benchmark=benchmark, estimates=estimates,
                         columns=columns, n_folds=n_folds, scheme=scheme,
                         test_fraction=test_fraction, metric=metric,
                         higher_is_better=higher_is_better, original=original, task=task,
                         table=table, time=time, event=event)
    if models is not None and source.kind != "data":
        from ..errors import ParameterError

        raise ParameterError(f"`models` are fitted on `data`; the {source.kind} entry holds "
                             "results already made.")
    if isinstance(models, str):
        from ..experiment.models import make_models

        models = make_models(models, source.dataset.task)
    return compute_audit(source, models=models, random_state=random_state, n_jobs=n_jobs,
                         quick=quick, sections=sections, progress=progress,
                         moderators=moderators, tolerances=tolerances, client=client,
                         store=store, clear_store=clear_store, backend=backend)

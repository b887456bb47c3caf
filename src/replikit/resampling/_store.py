"""A resumable DuckDB store of finished runner tasks.

Layout: ``replikit_runs(spec_hash, spec)``, ``replikit_tasks(task_id)``, ``replikit_scores``
and ``replikit_predictions`` (long tables keyed by ``task_id``). Each finished task is written in
its own transaction, so an interrupted run loses only the tasks in flight. A store holds one run
specification; opening it with another is a :class:`~replikit.errors.StoreError` unless
``overwrite=True`` (which drops the stored results).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import StoreError

__all__ = ["TaskStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replikit_runs (spec_hash VARCHAR PRIMARY KEY, spec VARCHAR);
CREATE TABLE IF NOT EXISTS replikit_tasks (task_id VARCHAR PRIMARY KEY);
CREATE TABLE IF NOT EXISTS replikit_scores (
    task_id VARCHAR, study VARCHAR, model VARCHAR, "repeat" BIGINT, fold BIGINT,
    metric VARCHAR, value DOUBLE, n_train BIGINT, n_test BIGINT);
CREATE TABLE IF NOT EXISTS replikit_predictions (
    task_id VARCHAR, study VARCHAR, model VARCHAR, "repeat" BIGINT, fold BIGINT, "row" BIGINT,
    y_true VARCHAR, y_pred VARCHAR, proba VARCHAR);
"""


class TaskStore:
    def __init__(self, path, spec: dict, spec_hash: str, *, overwrite: bool = False) -> None:
        import duckdb

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(str(self.path))
        self.con.execute(_SCHEMA)
        stored = self.con.execute("SELECT spec_hash, spec FROM replikit_runs").fetchall()
        if stored and stored[0][0] != spec_hash:
            if not overwrite:
                old = json.loads(stored[0][1])
                diff = sorted(k for k in set(old) | set(spec) if old.get(k) != spec.get(k))
                self.con.close()
                raise StoreError(
                    f"`store`: {str(path)!r} holds results of a different run specification "
                    f"(differs in: {', '.join(diff)}); use another store or overwrite=True."
                )
            for table in ("replikit_runs", "replikit_tasks", "replikit_scores",
                          "replikit_predictions"):
                self.con.execute(f"DELETE FROM {table}")
            stored = []
        if not stored:
            self.con.execute("INSERT INTO replikit_runs VALUES (?, ?)",
                             [spec_hash, json.dumps(spec, sort_keys=True, default=str)])

    def done(self) -> set[str]:
        return {r[0] for r in self.con.execute("SELECT task_id FROM replikit_tasks").fetchall()}

    def commit(self, task_id: str, scores: pd.DataFrame, predictions: pd.DataFrame | None) -> None:
        """Write one finished task atomically."""
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            s = scores.assign(task_id=task_id)[["task_id", "study", "model", "repeat", "fold",
                                                "metric", "value", "n_train", "n_test"]]
            con.register("_s", s)
            con.execute("INSERT INTO replikit_scores SELECT * FROM _s")
            con.unregister("_s")
            if predictions is not None and len(predictions):
                proba_cols = [c for c in predictions.columns if str(c).startswith("proba_")]
                proba = (json.dumps({"columns": proba_cols,
                                     "values": predictions[proba_cols].to_numpy().tolist()})
                         if proba_cols else None)
                p = pd.DataFrame({
                    "task_id": task_id, "study": predictions["study"].astype(str),
                    "model": predictions["model"].astype(str), "repeat": predictions["repeat"],
                    "fold": predictions["fold"], "row": predictions["row"],
                    "y_true": [json.dumps(_py(v)) for v in predictions["y_true"]],
                    "y_pred": [json.dumps(_py(v)) for v in predictions["y_pred"]],
                    "proba": [proba] + [None] * (len(predictions) - 1),
                })
                con.register("_p", p)
                con.execute("INSERT INTO replikit_predictions SELECT * FROM _p")
                con.unregister("_p")
            con.execute("INSERT INTO replikit_tasks VALUES (?)", [task_id])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise

    def load(self, task_ids: list[str], with_predictions: bool):
        """Scores and predictions of ``task_ids`` as ``{task_id: (scores, predictions)}``."""
        out = {}
        scores = self.con.execute("SELECT * FROM replikit_scores").df()
        by_task_s = dict(tuple(scores.groupby("task_id", sort=False)))
        by_task_p = {}
        if with_predictions:
            preds = self.con.execute("SELECT * FROM replikit_predictions").df()
            by_task_p = dict(tuple(preds.groupby("task_id", sort=False)))
        for tid in task_ids:
            s = by_task_s[tid].drop(columns="task_id").reset_index(drop=True)
            p = None
            if with_predictions and tid in by_task_p:
                raw = by_task_p[tid].reset_index(drop=True)
                p = pd.DataFrame({c: raw[c] for c in ("study", "model", "repeat", "fold", "row")})
                p["y_true"] = [json.loads(v) for v in raw["y_true"]]
                p["y_pred"] = [json.loads(v) for v in raw["y_pred"]]
                first = raw["proba"].dropna()
                if len(first):
                    block = json.loads(first.iloc[0])
                    values = np.asarray(block["values"], float)
                    for j, c in enumerate(block["columns"]):
                        p[c] = values[:, j]
            out[tid] = (s, p)
        return out

    def close(self) -> None:
        self.con.close()


def _py(v):
    return v.item() if isinstance(v, np.generic) else v

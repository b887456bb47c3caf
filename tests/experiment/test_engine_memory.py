"""The memory-aware worker count of the local joblib engine (issue 28: the audit within
:data:`~replikit.experiment.engine.MEMORY_GOAL`): the rule, its note, and that the numbers do
not depend on it."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

from replikit.experiment.engine import (
    MEMORY_GOAL,
    REFIT_CELL_BYTES,
    WORKER_BASE_BYTES,
    Engine,
    memory_workers,
    refit_bytes,
    resident_bytes,
)
from replikit.experiment.runner import run

GiB = 2**30


def _square(task, offset):
    return task * task + offset


def test_refit_bytes_is_base_plus_cells():
    assert refit_bytes(0, 10) == WORKER_BASE_BYTES
    assert refit_bytes(1000, 20) == WORKER_BASE_BYTES + REFIT_CELL_BYTES * 20_000
    # the audit's million rows: gradient boosting's bootstrap refit about 1.5 GiB
    assert 1.3 * GiB < refit_bytes(1_000_000, 34) < 1.7 * GiB


@pytest.mark.parametrize(("n_jobs", "task", "resident", "expected"), [
    (2, GiB, GiB, 2),  # 1 + 2 x 1 = 3 GiB: both
    (2, 2 * GiB, GiB, 1),  # 1 + 2 x 2 = 5 GiB: one
    (4, GiB, 2 * GiB, 2),  # room for two of four
    (2, 10 * GiB, 0, 1),  # never below one (nothing refused that fits the machine)
    (2, GiB, 5 * GiB, 1),  # the caller already above the goal: one at a time
    (3, None, 3 * GiB, 3),  # no estimate: every worker
    (1, 10 * GiB, 0, 1),
])
def test_memory_workers_rule(n_jobs, task, resident, expected):
    assert memory_workers(n_jobs, task, resident=resident, goal=4 * GiB) == expected


def test_memory_workers_without_a_goal_keeps_every_worker():
    assert memory_workers(4, 10 * GiB, resident=10 * GiB, goal=None) == 4
    assert MEMORY_GOAL == 4 * GiB


def test_resident_bytes_measures_this_process():
    before = resident_bytes()
    block = np.ones(50_000_000 // 8)  # 50 MB, touched
    assert resident_bytes() - before > 30_000_000
    del block


def test_map_runs_fewer_workers_and_says_so():
    tasks = list(range(12))
    expected = [t * t + 1 for t in tasks]
    with Engine("joblib", 2) as engine:
        assert engine.map(_square, tasks, shared=(1,), task_bytes=1) == expected
        assert engine.last_workers == 2 and engine.memory_notes == []
        out = engine.map(_square, tasks, shared=(1,), task_bytes=100 * GiB, label="the squares")
        assert out == expected
        assert engine.last_workers == 1
        assert engine.memory_notes and engine.memory_notes[0].startswith(
            "ran the squares one at a time instead of 2 to stay within the 4 GiB memory goal")
    with Engine("joblib", 2, memory_goal=None) as engine:  # no goal: every worker
        engine.map(_square, tasks, shared=(1,), task_bytes=100 * GiB)
        assert engine.last_workers == 2 and engine.memory_notes == []
    with Engine("serial") as engine:  # the serial backend is not affected
        assert engine.map(_square, tasks, shared=(1,), task_bytes=100 * GiB) == expected
        assert engine.memory_notes == []


def test_run_is_identical_whatever_the_memory_goal():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + rng.normal(size=300)
    models = {"ols": LinearRegression(), "tree": DecisionTreeRegressor(max_depth=3)}
    free = run(models, X, y, scheme="5x2", metrics=["mse"], engine=Engine("joblib", 2),
               random_state=0, return_predictions=True)
    tight = Engine("joblib", 2, memory_goal=1)  # every fit "too big": one at a time
    limited = run(models, X, y, scheme="5x2", metrics=["mse"], engine=tight, random_state=0,
                  return_predictions=True)
    assert tight.last_workers == 1 and "one at a time" in tight.memory_notes[0]
    keys = ["model", "repeat", "fold"]
    a = free.scores.frame.sort_values(keys).reset_index(drop=True)
    b = limited.scores.frame.sort_values(keys).reset_index(drop=True)
    assert a.equals(b)
    pa = free.predictions.frame.sort_values([*keys, "row"]).reset_index(drop=True)
    pb = limited.predictions.frame.sort_values([*keys, "row"]).reset_index(drop=True)
    assert pa.equals(pb)


def test_one_at_a_time_counts_each_fit_once():
    """Tasks run in this process when the goal allows one worker: each fit is counted once
    (a worker's count is merged into this process's; here it already is)."""
    from replikit import _convergence

    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] + rng.normal(size=80)
    counts = []
    for goal in (None, 1):
        before = _convergence.tally()
        run({"ols": LinearRegression()}, X, y, scheme="5x1", metrics=["mse"],
            engine=Engine("joblib", 2, memory_goal=goal), random_state=0)
        counts.append(sum(f for f, _, _ in _convergence.since(before).values()))
    assert counts[0] == counts[1] == 5


def test_idle_workers_are_stopped_after_large_tasks():
    """After a map of tasks that each need a large share of the goal, the idle workers are
    stopped (they would hold their pages while this process assembles the results); after
    small tasks they stay for the next map."""
    from joblib.externals.loky import reusable_executor

    goal = resident_bytes() + 4 * GiB
    tasks = list(range(6))
    with Engine("joblib", 2, memory_goal=goal) as engine:
        engine.map(_square, tasks, shared=(0,), task_bytes=1)
        assert engine.last_workers == 2
        assert not reusable_executor._executor._flags.shutdown  # small tasks: kept
        out = engine.map(_square, tasks, shared=(0,), task_bytes=int(0.2 * goal))
        assert out == [t * t for t in tasks] and engine.last_workers == 2
        assert reusable_executor._executor._flags.shutdown  # large tasks: stopped
        assert engine.map(_square, tasks, shared=(0,)) == [t * t for t in tasks]  # restarts

"""Seeding: one root, one independent stream per task, whatever the order of execution.

A run has a root :class:`numpy.random.SeedSequence`. A task (say: model ``"lr"``, repeat 3,
fold 7) gets its own stream from the root entropy and a *stable task key*: the key is hashed
with BLAKE2b into 32-bit words that become the ``spawn_key`` of a child sequence. Because the
child depends only on (root entropy, key), it does not matter which worker runs the task or in
which order tasks run: results are bit-identical across serial, joblib and Dask backends.
How an estimator receives its task seed is :func:`replikit.experiment.fit.seed_estimator`.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Hashable

import numpy as np

from .errors import ParameterTypeError

__all__ = ["check_random_state", "root_seed_sequence", "task_seed_sequence", "task_rng",
           "stable_key_words", "task_int_seed"]

RandomStateLike = None | int | np.integer | np.random.Generator | np.random.SeedSequence


def check_random_state(random_state: RandomStateLike) -> np.random.Generator:
    """Normalise ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.SeedSequence
        ``None`` gives fresh OS entropy; an int or a SeedSequence seeds a new PCG64 generator;
        a Generator is returned as is (shared, not copied).
    """
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, bool):
        raise ParameterTypeError(
            f"`random_state` must be None, an int or a numpy.random.Generator; got bool {random_state!r}."
        )
    if isinstance(random_state, numbers.Integral):
        if int(random_state) < 0:
            raise ParameterTypeError(f"`random_state` must be a non-negative int; got {random_state}.")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise ParameterTypeError(
        "`random_state` must be None, an int or a numpy.random.Generator; "
        f"got {type(random_state).__name__}."
    )


def root_seed_sequence(random_state: RandomStateLike) -> np.random.SeedSequence:
    """Return the root :class:`~numpy.random.SeedSequence` of a run.

    An int gives ``SeedSequence(int)``; ``None`` draws fresh entropy (record ``.entropy`` in
    provenance to reproduce the run); a Generator contributes 128 bits drawn from it, so that a
    given generator state always yields the same root.
    """
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.Generator):
        words = random_state.integers(0, 2**32, size=4, dtype=np.uint64)
        return np.random.SeedSequence([int(w) for w in words])
    rng_check = check_random_state(random_state)  # validates type and sign
    del rng_check
    return np.random.SeedSequence(int(random_state))  # type: ignore[arg-type]


def stable_key_words(key: Hashable) -> tuple[int, ...]:
    """Hash a task key (str, int or nested tuples of them) to four stable 32-bit words.

    Uses ``repr`` of the key, so keys must be built from str/int/float/tuple (whose ``repr`` is
    stable across processes and Python versions) — not from sets or objects with memory ids.
    """
    digest = hashlib.blake2b(repr(key).encode("utf-8"), digest_size=16).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def task_seed_sequence(root: np.random.SeedSequence | int, key: Hashable) -> np.random.SeedSequence:
    """The seed sequence of the task named ``key`` under ``root``.

    The same (root, key) pair always gives the same sequence; different keys give independent
    streams (they differ in ``spawn_key``, which SeedSequence mixes into the state).
    """
    if not isinstance(root, np.random.SeedSequence):
        root = np.random.SeedSequence(int(root))
    return np.random.SeedSequence(
        entropy=root.entropy, spawn_key=tuple(root.spawn_key) + stable_key_words(key)
    )


def task_rng(root: np.random.SeedSequence | int, key: Hashable) -> np.random.Generator:
    """A generator for the task ``key`` (see :func:`task_seed_sequence`)."""
    return np.random.default_rng(task_seed_sequence(root, key))


def task_int_seed(root: np.random.SeedSequence | int, key: Hashable) -> int:
    """A 31-bit integer seed for the task ``key`` (for estimators taking ``random_state=int``)."""
    return int(task_seed_sequence(root, key).generate_state(1, dtype=np.uint32)[0] >> 1)

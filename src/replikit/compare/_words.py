"""Words a reader sees, in one place for the comparison package: the tests' names, the papers
in docstrings, and the old names that keep working for one release.

* :data:`TEST_NAMES` / :func:`test_name` — every test id of the package (the ``test`` column of
  the tables, kept as an id in tables and JSON) and the name figures, captions, verdicts and
  ``str()`` show instead;
* :func:`fill_doc` — fills a docstring's shared pieces and its ``{refs:key,...}`` line with the
  full references of :data:`replikit._references.BIBTEX`;
* :func:`interval_alias` — the old ``interval='marginal'|'simultaneous'`` of a result, now the
  flag ``simultaneous``.

Nothing here imports numpy, pandas or scipy: :mod:`replikit.compare.audit` is imported with the
package.
"""

from __future__ import annotations

import re

from .._compat import _warn, renamed

__all__ = ["TEST_NAMES", "test_name", "fill_doc", "interval_alias", "OLD_INTERVAL",
           "OLD_INTERVAL_VALUES", "p_is"]

#: Test id (the ``test`` column of the tables) -> the name a reader sees.
TEST_NAMES: dict[str, str] = {
    "corrected_repeated_kfold_t": "corrected repeated k-fold t-test",
    "corrected_resampled_t": "corrected resampled t-test",
    "paired_t_5x2cv": "5x2cv paired t-test",
    "combined_f_5x2cv": "5x2cv combined F test",
    "sorted_runs_t": "sorted-runs t-test",
    "equivalence_tost": "TOST equivalence test",
    "bayesian_correlated_t": "Bayesian correlated t-test",
    "naive_paired_t": "naive paired t-test",
    "proportions_z": "difference-of-proportions z test",
    "mcnemar_edwards": "McNemar's test (Edwards' correction)",
    "mcnemar": "McNemar's test (uncorrected)",
    "mcnemar_exact": "McNemar's exact test",
    "cochran_q": "Cochran's Q test",
    "looney_f": "Looney's F test",
    "paired_bootstrap": "paired bootstrap test",
    "randomization": "approximate randomization test",
    "unpaired_corrected_t": "unpaired corrected resampled t-test",
    "welch_t": "Welch t-test",
    "permutation_paired": "paired permutation test",
    "permutation_independent": "permutation test",
    "hierarchical": "Bayesian hierarchical model",
    "bayesian_signed_rank": "Bayesian signed-rank test",
    # the variants of the calibration study (replikit.compare.simulate_tests)
    "naive_paired_t_holdout": "naive paired t-test, 10 hold-outs",
    "naive_paired_t_kfold": "naive paired t-test, 10x10 CV",
    "sorted_runs_t_learner": "sorted-runs t-test, sorted by learner",
    "sorted_runs_t_difference": "sorted-runs t-test, sorted by difference",
    "mcnemar_uncorrected": "McNemar's test (uncorrected)",
}

#: ``interval=`` of the comparison functions and results is now ``simultaneous=``.
OLD_INTERVAL = {"interval": "simultaneous"}
OLD_INTERVAL_VALUES = {"simultaneous": {"marginal": False, "simultaneous": True}}

_REFS = re.compile(r"\{refs:([\w, ]+)\}")


def test_name(test: str) -> str:
    """The name a reader sees for a test id (the id itself when it has none).

    Parameters
    ----------
    test : str
        A test id, e.g. ``'corrected_repeated_kfold_t'``.

    Returns
    -------
    str
        E.g. ``'corrected repeated k-fold t-test'``.

    Examples
    --------
    >>> test_name("combined_f_5x2cv")
    '5x2cv combined F test'
    """
    return TEST_NAMES.get(str(test), str(test))


test_name.__test__ = False  # not a pytest test


def p_is(p: float, label: str = "p") -> str:
    """A p-value in a sentence: ``'p = 0.031'`` or ``'p < 0.001'``.

    Parameters
    ----------
    p : float
        The p-value.
    label : str, default 'p'
        What is written before it (``'Holm p'``).

    Returns
    -------
    str
        The label, the relation and the number (:func:`replikit._format.pvalue`).

    Examples
    --------
    >>> p_is(0.03104), p_is(2e-9, "Holm p")
    ('p = 0.031', 'Holm p < 0.001')
    """
    from .._format import pvalue

    text = pvalue(p)
    return f"{label} {text}" if text.startswith("<") else f"{label} = {text}"


def _reference_lines(keys: list[str], indent: str = "    ") -> str:
    """Numbered full references (``.. [1] Nadeau, C. & Bengio, Y. (2003). ...``) of
    bibliography keys, wrapped for a docstring."""
    import textwrap

    from .._references import full_citation

    out = []
    for i, key in enumerate(keys, 1):
        head = f".. [{i}] "
        out.append(textwrap.fill(full_citation(key), width=92, initial_indent=indent + head,
                                 subsequent_indent=indent + " " * len(head),
                                 break_long_words=False, break_on_hyphens=False))
    return "\n".join(out).lstrip()


def fill_doc(pieces: dict[str, str] | None = None):
    """Decorator: fill a docstring's ``{name}`` pieces from ``pieces`` and its
    ``{refs:key1,key2}`` line with the full references of those bibliography keys.

    Parameters
    ----------
    pieces : dict of str -> str, optional
        Text for each ``{name}``.

    Returns
    -------
    callable
        The decorator (it returns the object it decorates, docstring filled).
    """

    def decorate(obj):
        doc = obj.__doc__ or ""
        for key, text in (pieces or {}).items():
            doc = doc.replace("{" + key + "}", text)
        doc = _REFS.sub(lambda m: _reference_lines(
            [k.strip() for k in m.group(1).split(",") if k.strip()]), doc)
        obj.__doc__ = doc
        return obj

    return decorate


def interval_alias(cls):
    """Class decorator: the old ``interval`` keyword and attribute of a result whose flag
    ``simultaneous`` replaced it (``'marginal'`` is False, ``'simultaneous'`` True) keep working
    for one release, with a FutureWarning.

    Parameters
    ----------
    cls : type
        A dataclass with a ``simultaneous`` field.

    Returns
    -------
    type
        ``cls``, its ``__init__`` taking ``interval=`` and a read-only ``interval`` property.
    """
    cls.__init__ = renamed(OLD_INTERVAL, values=OLD_INTERVAL_VALUES)(cls.__init__)

    def interval(self) -> str:
        _warn(f"`{cls.__name__}.interval` is now `{cls.__name__}.simultaneous` (True for "
              "'simultaneous')", stacklevel=2)
        return "simultaneous" if self.simultaneous else "marginal"

    cls.interval = property(interval, doc="Old name of :attr:`simultaneous` (warns).")
    return cls

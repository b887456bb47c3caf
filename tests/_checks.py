"""Checks shared by every capability's tests: plain words, and the contract of a result.

``assert_plain(text)`` — no word a user cannot know: the source papers' file numbers ("seed
003"), issue numbers, the word "seed" for a random state, internal test ids.

``check_result(obj)`` — a public result honours the base (DESIGN.md, API conventions): it is a
:class:`replikit.results.Result`, its ``to_frame()`` is a DataFrame with string column names,
``to_dict()`` is strict JSON, ``str()`` and ``_repr_html_()`` say something (no script can run in
the HTML), ``confidence_interval()`` where it exists returns a ``ConfidenceInterval`` whose ends
are ordered and nest with the level, and ``plot()`` where it exists returns Axes (or an array of
them) without touching pyplot's state.
"""

from __future__ import annotations

import json
import math
import re

#: Words a user cannot know (source-paper file numbers, issue numbers, the word "seed").
JARGON = re.compile(r"\bseeds?[ -]?0{2}\d|\bseed\b|\bissues? #?\d+|\(#\d+\)")

#: Internal ids that must not label a figure or a caption (they are fine as allowed values of
#: a flag or in a table's id column).
INTERNAL_IDS = re.compile(
    r"\b(corrected_repeated_kfold_t|corrected_resampled_t|bayesian_correlated_t|"
    r"paired_t_5x2cv|combined_f_5x2cv|naive_paired_t\w*|sorted_runs_t|proportions_z)\b")


def jargon(text: str) -> list[str]:
    """The jargon in ``text``, each with its line."""
    return [f"{m.group(0)!r} in: {line.strip()[:160]}"
            for line in text.splitlines() for m in JARGON.finditer(line)]


def assert_plain(text: str, where: str = "") -> None:
    found = jargon(text)
    assert not found, f"words a user cannot know{' in ' + where if where else ''}:\n" + \
        "\n".join(found[:20])


def check_result(obj, *, plot: bool = True) -> None:
    """Assert ``obj`` keeps the contract of a public result (see the module docstring)."""
    import pandas as pd

    from replikit.results import ConfidenceInterval, Result

    name = type(obj).__name__
    assert isinstance(obj, Result), f"{name} is not on replikit.results.Result"
    frame = obj.to_frame()
    assert isinstance(frame, pd.DataFrame), f"{name}.to_frame() is a {type(frame).__name__}"
    assert all(isinstance(c, str) for c in frame.columns), f"{name}.to_frame() column names"
    data = obj.to_dict()
    assert isinstance(data, dict), f"{name}.to_dict() is a {type(data).__name__}"
    json.dumps(data, allow_nan=False)  # strict JSON
    text = str(obj)
    assert text.strip() and not text.startswith(f"{name}("), f"{name} has no readable str()"
    assert_plain(text, f"str({name})")
    html = obj._repr_html_()
    assert isinstance(html, str) and "<" in html, f"{name}._repr_html_()"
    assert "<script" not in html.lower(), f"{name}._repr_html_() holds a script"
    if hasattr(obj, "confidence_interval"):
        ci = obj.confidence_interval()
        assert isinstance(ci, ConfidenceInterval), \
            f"{name}.confidence_interval() is a {type(ci).__name__}"
        if all(math.isfinite(v) for v in ci if isinstance(v, float)):
            assert ci.low <= ci.high, f"{name}: interval {ci} is not ordered"
            wide = obj.confidence_interval(confidence_level=0.99)
            narrow = obj.confidence_interval(confidence_level=0.5)
            assert wide.low <= ci.low + 1e-12 and ci.high <= wide.high + 1e-12, \
                f"{name}: the 99% interval {wide} does not contain the 95% one {ci}"
            assert ci.low <= narrow.low + 1e-12 and narrow.high <= ci.high + 1e-12, \
                f"{name}: the 50% interval {narrow} is not inside the 95% one {ci}"
    if plot and hasattr(obj, "plot"):
        import sys

        import numpy as np
        from matplotlib.axes import Axes

        from replikit._plotting import new_axes

        before = _pyplot_figures()
        drawn = obj.plot(ax=new_axes())
        axes = list(np.ravel(drawn)) if isinstance(drawn, np.ndarray) else [drawn]
        assert axes and all(isinstance(a, Axes) for a in axes), \
            f"{name}.plot(ax=...) returned {type(drawn).__name__}, not Axes"
        assert _pyplot_figures() == before or "matplotlib.pyplot" not in sys.modules, \
            f"{name}.plot(ax=...) opened a pyplot figure"


def _pyplot_figures():
    import sys

    if "matplotlib.pyplot" not in sys.modules:
        return []
    return list(sys.modules["matplotlib.pyplot"].get_fignums())


#: The public modules whose ``__all__`` is replikit's API.
PUBLIC_MODULES = (
    "replikit", "replikit.errors", "replikit.results", "replikit.methods", "replikit.data",
    "replikit.data.examples",
    "replikit.experiment", "replikit.resampling", "replikit.compare", "replikit.replicate",
    "replikit.multistudy", "replikit.generalize", "replikit.report",
)
#: Public classes that are inputs, configurations or building blocks, not results.
NOT_RESULTS = re.compile(
    r"^(Resubstitution|HoldOut|RepeatedKFold|LeaveOneOut|FiveByTwo|Bootstrap|LeaveOneStudyOut|"
    r"CrossStudy|StudyHoldOut|StudyPlan|SplitBlock|Split|StudySpec|PreparedStudy|RankingSample|"
    r"HoldOutCV|LabeledFolds|Scores|Predictions|TaskStore|MultiStudyData|Section|Paragraph|"
    r"Callout|KeyValues|Table|Figure|SectionOutput|AuditContext|AuditInput|Paired|Example)$"
    r"|(Error|Warning|Scheme|Kernel|Utility|Method|Interval|Display)$")


def public_objects():
    """``{qualified name: (public name, object)}`` of every public function and class."""
    import importlib
    import inspect

    seen = {}
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", (f"{name}.{attr}", obj))
    return seen


def public_result_types():
    """The public result classes: dataclasses that are not inputs or building blocks."""
    import dataclasses
    import inspect

    return {key: obj for key, (_, obj) in public_objects().items()
            if inspect.isclass(obj) and dataclasses.is_dataclass(obj)
            and not NOT_RESULTS.search(obj.__name__)}


def audit_numbers(doc: dict) -> str:
    """An audit's JSON twin (``report.json`` or ``Audit.to_dict()``) without its timings and
    command line: the numbers a user reads, as one comparable string."""
    doc = json.loads(json.dumps(doc, default=str))
    for k in ("seconds", "section_seconds", "fit_seconds", "command"):
        doc["meta"].pop(k, None)

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if "seconds" not in str(k)}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o

    return json.dumps(strip(doc), sort_keys=True)

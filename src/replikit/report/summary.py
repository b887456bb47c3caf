"""The report's first screen: one card per question, from the sections' verdicts.

A card holds the question, a traffic-light ``state``, the verdict in one sentence, the key
number with its interval and its ``label`` (what the number is: ``"best minus runner-up, ROC
AUC"``), the metric it is about and the main caveat, and links to its section.
The same cards are the JSON twin's ``summary`` (schema below, versioned by
:data:`SCHEMA_VERSION`).

States (``docs/audit.md`` defines them for readers):

- ``good`` — the data show the result holds within the tolerance printed on the card (an
  upper confidence bound inside it, an equivalence shown);
- ``warn`` — the data cannot tell (the interval straddles the tolerance), or it holds only in
  part;
- ``bad`` — the data show it does not hold (a lower confidence bound beyond the tolerance);
- ``info`` — a description with nothing to judge (error estimates);
- ``skipped`` — the question could not be answered on these data (the reason is the sentence).

JSON schema of ``summary`` (version 1; keys may be added, existing ones keep their meaning —
``label`` and ``tolerance`` were added in replikit 0.2)::

    {"schema_version": 1,
     "cards": [{"key": str, "question": str, "state": str, "sentence": str,
                "metric": str | null, "label": str | null, "estimate": float | null,
                "ci_low": float | null, "ci_high": float | null,
                "tolerance": str | null, "caveat": str | null,
                "caveats": [str], "link": "#<key>"}]}
"""

from __future__ import annotations

from typing import Any

from .blocks import SectionOutput

__all__ = ["SCHEMA_VERSION", "QUESTIONS", "STATES", "summary_cards", "section_card",
           "card_lines"]

SCHEMA_VERSION = 1

#: section key -> the question its card answers, in report order
QUESTIONS = {
    "resampling": "How large is the prediction error, honestly estimated?",
    "compare": "Are the differences between the models real?",
    "replicate": "Do later studies reproduce the first one's result?",
    "multistudy": "Does one prediction rule serve every study alike?",
    "generalize": "Would the ranking of the models hold in new studies?",
}
STATES = ("good", "warn", "bad", "info", "skipped")
#: The word each state shows on a card (HTML, terminal, notebook).
STATE_WORDS = {"good": "holds up", "warn": "uncertain", "bad": "does not hold up",
               "info": "estimate", "skipped": "not answered"}


def _number(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v == v and abs(v) != float("inf") else None


#: section key -> what its key number is, when a verdict does not say (``{metric}`` filled in)
DEFAULT_LABELS = {
    "resampling": "best model's estimated error, {metric}",
    "compare": "best minus runner-up, {metric}",
    "replicate": "pooled estimate, {metric}",
    "multistudy": "largest difference between studies, {metric}",
    "generalize": "studies needed for the ranking to generalize",
}


def _label(key: str, verdict: dict) -> str | None:
    """What the key number is: the verdict's label, else one made from the metric."""
    label = str(verdict.get("label") or "").strip()
    if label:
        return label
    metric = str(verdict.get("metric") or "").strip()
    template = DEFAULT_LABELS.get(key)
    if template is None:
        return metric or None
    return template.format(metric=metric).rstrip(", ") if metric else template.split(",")[0]


def section_card(s: SectionOutput, question: str | None = None) -> dict[str, Any]:
    """The card of one section (see the module docstring for its keys): its verdict, or its
    reason and advice when it was skipped; a section without a verdict is ``info``."""
    key = s.key
    question = question or QUESTIONS.get(key, s.title)
    if s.skipped:
        return {"key": key, "question": question, "state": "skipped", "sentence": s.skipped,
                "metric": None, "label": None, "estimate": None, "ci_low": None,
                "ci_high": None, "tolerance": None, "caveat": s.advice or None,
                "caveats": [s.advice] if s.advice else [], "link": f"#{key}"}
    v = s.data.get("verdict") if isinstance(s.data, dict) else None
    v = v if isinstance(v, dict) else {}
    caveats = [str(c) for c in v.get("caveats") or []]
    level = v.get("level") if v.get("level") in STATES else "info"
    estimate = _number(v.get("estimate"))
    return {
        "key": key, "question": question, "state": level,
        "sentence": v.get("sentence") or s.summary, "metric": v.get("metric"),
        "label": _label(key, v) if estimate is not None else (v.get("label") or None),
        "estimate": estimate, "ci_low": _number(v.get("ci_low")),
        "ci_high": _number(v.get("ci_high")), "tolerance": v.get("tolerance") or None,
        "caveat": caveats[0] if caveats else None,
        "caveats": caveats, "link": f"#{key}",
    }


def summary_cards(sections: list[SectionOutput]) -> list[dict[str, Any]]:
    """One card per question whose section ran (or was skipped), in report order."""
    by_key = {s.key: s for s in sections}
    return [section_card(by_key[key], question) for key, question in QUESTIONS.items()
            if key in by_key]


def card_lines(card: dict[str, Any]) -> list[str]:
    """One summary card as plain-text lines, for a terminal: the light as a word and the
    question, then (indented) the sentence, the labelled key number with its interval, the
    tolerance the light was judged against and the main caveat (each line only when the card
    has it; a skipped card's caveat is its advice).

    Parameters
    ----------
    card : dict
        A card of :func:`summary_cards` (the JSON twin's ``summary.cards``).

    Returns
    -------
    list of str
        The lines, unwrapped (the caller wraps them to its width).

    See Also
    --------
    summary_cards : The cards.
    replikit.report.AuditReport : Prints its cards the same way.

    Examples
    --------
    >>> card = {"key": "compare", "question": "Are the differences between the models real?",
    ...         "state": "good", "sentence": "lr is better than dummy.", "metric": "ROC AUC",
    ...         "label": "best minus runner-up, ROC AUC", "estimate": 0.12, "ci_low": 0.08,
    ...         "ci_high": 0.16, "tolerance": "judged against 0.01 ROC AUC: 95% lower bound "
    ...         "0.08", "caveat": None}
    >>> print("\\n".join(card_lines(card)))
    [holds up] Are the differences between the models real?
      lr is better than dummy.
      best minus runner-up, ROC AUC: 0.12 [0.08, 0.16]
      Tolerance: judged against 0.01 ROC AUC: 95% lower bound 0.08
    """
    from .._format import interval, number

    state = card.get("state") if card.get("state") in STATE_WORDS else "info"
    lines = [f"[{STATE_WORDS[state]}] {card.get('question') or card.get('key', '')}"]
    sentence = " ".join(str(card.get("sentence") or "").split())
    if sentence:
        lines.append(f"  {sentence}")
    estimate = _number(card.get("estimate"))
    if estimate is not None:
        key = f"  {card.get('label') or card.get('metric') or 'estimate'}: {number(estimate)}"
        low, high = _number(card.get("ci_low")), _number(card.get("ci_high"))
        if low is not None and high is not None:
            key += f" {interval(low, high)}"
        lines.append(key)
    tolerance = " ".join(str(card.get("tolerance") or "").split())
    if tolerance:
        lines.append(f"  Tolerance: {tolerance}")
    caveat = " ".join(str(card.get("caveat") or "").split())
    if caveat:
        lines.append(f"  {'What to do' if state == 'skipped' else 'Caveat'}: {caveat}")
    return lines

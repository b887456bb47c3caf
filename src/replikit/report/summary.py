"""The report's first screen: one card per question, from the sections' verdicts.

A card holds the question, a traffic-light ``state``, the verdict in one sentence, the key
number with its interval, the metric it is about and the main caveat, and links to its section.
The same cards are the JSON twin's ``summary`` (schema below, versioned by
:data:`SCHEMA_VERSION`).

States (``docs/audit.md`` defines them for readers):

- ``good`` — the result holds up (e.g. the differences between models are shown; the ranking
  generalizes with the studies at hand);
- ``warn`` — uncertain, or holds only in part (no difference shown; some replications
  inconsistent; more studies needed);
- ``bad`` — does not hold up (most replications inconsistent; far more studies needed);
- ``info`` — a description with nothing to judge (error estimates);
- ``skipped`` — the question could not be answered on these data (the reason is the sentence).

JSON schema of ``summary`` (version 1)::

    {"schema_version": 1,
     "cards": [{"key": str, "question": str, "state": str, "sentence": str,
                "metric": str | null, "estimate": float | null, "ci_low": float | null,
                "ci_high": float | null, "caveat": str | null, "caveats": [str],
                "link": "#<key>"}]}
"""

from __future__ import annotations

from typing import Any

from .blocks import SectionOutput

__all__ = ["SCHEMA_VERSION", "QUESTIONS", "STATES", "summary_cards"]

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


def _number(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v == v and abs(v) != float("inf") else None


def summary_cards(sections: list[SectionOutput]) -> list[dict[str, Any]]:
    """One card per question whose section ran (or was skipped), in report order."""
    cards = []
    by_key = {s.key: s for s in sections}
    for key, question in QUESTIONS.items():
        s = by_key.get(key)
        if s is None:
            continue
        if s.skipped:
            cards.append({"key": key, "question": question, "state": "skipped",
                          "sentence": s.skipped, "metric": None, "estimate": None,
                          "ci_low": None, "ci_high": None, "caveat": s.advice or None,
                          "caveats": [s.advice] if s.advice else [], "link": f"#{key}"})
            continue
        v = s.data.get("verdict") if isinstance(s.data, dict) else None
        v = v if isinstance(v, dict) else {}
        caveats = [str(c) for c in v.get("caveats") or []]
        level = v.get("level") if v.get("level") in STATES else "info"
        cards.append({
            "key": key, "question": question, "state": level,
            "sentence": v.get("sentence") or s.summary, "metric": v.get("metric"),
            "estimate": _number(v.get("estimate")), "ci_low": _number(v.get("ci_low")),
            "ci_high": _number(v.get("ci_high")), "caveat": caveats[0] if caveats else None,
            "caveats": caveats, "link": f"#{key}",
        })
    return cards

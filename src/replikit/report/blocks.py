"""Content blocks a report section is made of. Templates render each kind; every string a block
holds is escaped on output (jinja2 autoescape), except the SVG of a :class:`Figure`, which
replikit's own plotting code produces (matplotlib escapes the text it writes into SVG)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Paragraph", "Table", "Figure", "KeyValues", "Callout", "SectionOutput", "to_jsonable"]


@dataclass(frozen=True)
class Paragraph:
    text: str
    kind: str = "paragraph"


@dataclass(frozen=True)
class Callout:
    """A highlighted verdict or warning. ``level``: ``'info'``, ``'good'``, ``'warn'``, ``'bad'``."""

    text: str
    level: str = "info"
    kind: str = "callout"


@dataclass(frozen=True)
class KeyValues:
    items: dict[str, Any]
    kind: str = "keyvalues"


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame
    caption: str = ""
    digits: int = 4
    kind: str = "table"

    def header(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    def rows(self) -> list[list[str]]:
        out = []
        for rec in self.frame.itertuples(index=False):
            out.append([format_value(v, self.digits) for v in rec])
        return out


@dataclass(frozen=True)
class Figure:
    svg: str
    caption: str = ""
    kind: str = "figure"


@dataclass
class SectionOutput:
    """What a section contributes: blocks for the HTML and numbers for the JSON twin.

    ``data`` should hold every number the blocks show (tables are added automatically).
    ``skipped`` explains why a section does not apply to this data or could not run (it is then
    shown as a note) and ``advice`` what the user can do about it.
    """

    key: str
    title: str
    blocks: list = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    skipped: str = ""
    advice: str = ""

    def json(self) -> dict[str, Any]:
        tables = {
            f"table_{i}": {"caption": b.caption, "rows": b.frame.to_dict("records")}
            for i, b in enumerate(b for b in self.blocks if isinstance(b, Table))
        }
        return to_jsonable({"key": self.key, "title": self.title, "summary": self.summary,
                            "skipped": self.skipped or None,
                            "advice": self.advice or None, "data": self.data, "tables": tables})


def format_value(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v != 0 and (abs(v) < 10 ** (-digits) or abs(v) >= 10 ** (digits + 2)):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}g}" if abs(v) >= 1 else f"{v:.{digits}f}".rstrip("0").rstrip(".") or "0"
    return str(value)


def to_jsonable(obj: Any) -> Any:
    """Convert numpy/pandas values to plain JSON types (NaN and inf become ``None``)."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, pd.DataFrame):
        return to_jsonable(obj.to_dict("records"))
    if isinstance(obj, pd.Series):
        return to_jsonable(obj.to_dict())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if np.isfinite(v) else None
    if obj is pd.NA or obj is pd.NaT:
        return None
    return obj

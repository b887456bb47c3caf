"""Content blocks a report section is made of. Templates render each kind; every string a block
holds is escaped on output (jinja2 autoescape), except the SVG of a :class:`Figure`, which
replikit's own plotting code produces (matplotlib escapes the text it writes into SVG)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..results import to_jsonable

__all__ = ["Paragraph", "Table", "Figure", "KeyValues", "Callout", "SectionOutput", "format_value",
           "to_jsonable"]


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of plain text in a report section (the first one of a section is what the
    Methods block quotes).

    Parameters
    ----------
    text : str
        The text (escaped on output).
    kind : str, default 'paragraph'
        The block's kind, for the templates.

    See Also
    --------
    Callout : A highlighted verdict or warning.
    SectionOutput : The section the blocks make.

    Examples
    --------
    >>> Paragraph("Every model was fitted on the same splits.").kind
    'paragraph'
    """

    text: str
    kind: str = "paragraph"


@dataclass(frozen=True)
class Callout:
    """A highlighted verdict or warning: shown at once, never folded under the section's
    details.

    Parameters
    ----------
    text : str
        The sentence.
    level : {'info', 'good', 'warn', 'bad'}, default 'info'
        Its colour: the verdict's light, or ``'warn'`` for a warning.
    kind : str, default 'callout'
        The block's kind, for the templates.

    See Also
    --------
    Paragraph : Plain text.

    Examples
    --------
    >>> Callout("Two studies were left out.", "warn").level
    'warn'
    """

    text: str
    level: str = "info"
    kind: str = "callout"


@dataclass(frozen=True)
class KeyValues:
    """Settings and facts as a list of name: value pairs.

    Parameters
    ----------
    items : dict
        Name -> value (both shown as text).
    kind : str, default 'keyvalues'
        The block's kind, for the templates.

    See Also
    --------
    Table : Rows and columns.

    Examples
    --------
    >>> KeyValues({"studies": 10, "rows used": "13,440"}).items["studies"]
    10
    """

    items: dict[str, Any]
    kind: str = "keyvalues"


@dataclass(frozen=True)
class Table:
    """A table of a report section: sortable in the HTML, its rows in the JSON twin.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows (column names are the header).
    caption : str, default ''
        What the table shows.
    digits : int, default 4
        Significant digits of the numbers shown (the JSON keeps them whole).
    kind : str, default 'table'
        The block's kind, for the templates.

    See Also
    --------
    Figure : A figure.
    KeyValues : Name: value pairs.

    Examples
    --------
    >>> t = Table(pd.DataFrame({"model": ["lr"], "error": [0.123456]}), "Errors")
    >>> t.header(), t.rows()
    (['model', 'error'], [['lr', '0.1235']])
    """

    frame: pd.DataFrame
    caption: str = ""
    digits: int = 4
    kind: str = "table"

    def header(self) -> list[str]:
        """The column names as text.

        Returns
        -------
        list of str
            One per column.
        """
        return [str(c) for c in self.frame.columns]

    def rows(self) -> list[list[str]]:
        """The cells as text (:func:`format_value`).

        Returns
        -------
        list of list of str
            One list per row.
        """
        return [[format_value(v, self.digits) for v in rec]
                for rec in self.frame.itertuples(index=False)]


@dataclass(frozen=True)
class Figure:
    """A figure of a report section, as inline SVG.

    Parameters
    ----------
    svg : str
        An ``<svg>`` element made by replikit's plotting code
        (:func:`replikit._plotting.svg_inline` of a result's ``plot()``); inserted unescaped.
        While an audit computes, a section may give the future of one instead
        (:func:`replikit._plotting.svg_later`); the audit puts the string in its place before
        the report is rendered.
    caption : str, default ''
        What the figure shows, in words (escaped).
    kind : str, default 'figure'
        The block's kind, for the templates.

    See Also
    --------
    Table : A table.

    Examples
    --------
    >>> Figure('<svg width="1" height="1"></svg>', "Error by model").caption
    'Error by model'
    """

    svg: str
    caption: str = ""
    kind: str = "figure"


@dataclass
class SectionOutput:
    """What a section contributes: blocks for the HTML and numbers for the JSON twin.

    The report shows every :class:`Callout` (the verdict, warnings) and the first
    :class:`Figure` (the key figure) at once; the other blocks go under the section's closed
    "Details" disclosure.

    Parameters
    ----------
    key : str
        The section's key (its anchor and JSON key).
    title : str
        The heading.
    blocks : list, optional
        :class:`Paragraph`, :class:`Callout`, :class:`KeyValues`, :class:`Table` and
        :class:`Figure` blocks, in order.
    data : dict, optional
        Every number the blocks show, for the JSON twin (tables are added automatically);
        ``data["verdict"]`` (a :meth:`replikit.results.Verdict.to_dict`) makes the summary
        card.
    summary : str, default ''
        One sentence (shown when the section has no callout).
    skipped : str, default ''
        Why the section does not apply to these data or could not run.
    advice : str, default ''
        What the user can do about it.

    See Also
    --------
    replikit.report.Section : Declares how a section is built.
    replikit.report.AuditReport : Holds every section's output.

    Examples
    --------
    >>> out = SectionOutput("notes", "Notes", [Paragraph("Nothing to add.")])
    >>> out.json()["title"], out.json()["skipped"]
    ('Notes', None)
    """

    key: str
    title: str
    blocks: list = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    skipped: str = ""
    advice: str = ""

    def json(self) -> dict[str, Any]:
        """The section in the JSON twin: its texts, ``data`` and every table's rows.

        Returns
        -------
        dict
            ``key, title, summary, skipped, advice, data, tables`` in plain JSON types.
        """
        tables = {
            f"table_{i}": {"caption": b.caption, "rows": b.frame.to_dict("records")}
            for i, b in enumerate(b for b in self.blocks if isinstance(b, Table))
        }
        return to_jsonable({"key": self.key, "title": self.title, "summary": self.summary,
                            "skipped": self.skipped or None,
                            "advice": self.advice or None, "data": self.data, "tables": tables})


def format_value(value: Any, digits: int = 4) -> str:
    """A table cell as text: integers whole with thousands separators, other numbers to
    ``digits`` significant digits in plain notation (tiny numbers in e-notation), booleans
    yes/no, missing values ``–``."""
    from .._format import number

    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not np.isfinite(v):
            return "–" if np.isnan(v) else ("∞" if v > 0 else "-∞")
        if v != 0 and abs(v) < 10 ** (-digits):
            return f"{v:.{digits - 1}e}"
        if abs(v) >= 1:
            return number(v, digits)
        return f"{v:.{digits}f}".rstrip("0").rstrip(".") or "0"
    return str(value)

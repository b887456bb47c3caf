"""Names a reader sees: column names, study labels, model names and class labels as messages
show them.

Labels come from the user's files, so they may hold anything: a NUL byte or an escape sequence
(a file saved in the wrong encoding, a header pasted from a terminal), a tab (a tab-separated
file read as comma-separated). One place decides how such a name is written in a message:

* :func:`shown` — a name as written when it is plain text, else its ``repr`` (quoted, the
  control characters escaped: ``'x\\x001'``), so nothing a name holds can act on a terminal
  or hide in a message;
* :func:`names_list` — a list of names for a message (``available columns: a, b, c``), with a
  sentence saying which name holds a control character.

Nothing here imports numpy or pandas.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["has_control", "shown", "names_list", "escape_controls", "visible_controls"]

# Unicode bidirectional controls (and the invisible marks) in a label could reorder what the
# reader sees ("Trojan Source"); the control characters a label may hold (a NUL, an escape; not
# tab and line breaks) cannot be written in HTML or SVG. Reports and figures show both as
# visible code points instead.
_VISIBLE = {c: f"⟨U+{c:04X}⟩" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A),
                                         0x200E, 0x200F, 0x061C, *range(0x00, 0x09), 0x0B,
                                         0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0))}


def visible_controls(text: str) -> str:
    """``text`` with bidirectional controls and control characters (but tab and line breaks)
    written as visible ``⟨U+001B⟩`` markers, for HTML and figures.

    Examples
    --------
    >>> visible_controls("a\x1b[31mb\u202e")
    'a⟨U+001B⟩[31mb⟨U+202E⟩'
    """
    return text.translate(_VISIBLE)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character that does not print: a control character (NUL, tab,
    newline, escape), a format character (a bidirectional override, a zero-width space) or an
    unassigned code point. A plain space prints."""
    return not str(text).isprintable()


def escape_controls(text: str) -> str:
    """``text`` with every character that does not print written as its escape (``\\x00``,
    ``\\t``, ``\\u202e``), the rest as it is.

    Examples
    --------
    >>> escape_controls("a\\x00b c\\x1b[31m")
    'a\\\\x00b c\\\\x1b[31m'
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(name: Any) -> str:
    """A name as a message writes it: as it is when it prints plainly, else its ``repr``.

    Examples
    --------
    >>> shown("height"), shown("x\\x001"), shown(3)
    ('height', "'x\\\\x001'", '3')
    """
    text = str(name)
    return text if text.isprintable() else repr(text)


def names_list(names: Iterable[Any], limit: int = 30, *, what: str = "the header") -> str:
    """Names for a message, comma-separated (:func:`shown`), the first ``limit`` of them with
    how many there are in all; when a name holds a control character, a sentence that says so.

    Parameters
    ----------
    names : iterable
        The names (column names, labels).
    limit : int, default 30
        How many to write.
    what : str, default 'the header'
        What holds the names, for the sentence about control characters.

    Returns
    -------
    str
        E.g. ``"x1, x2, y"`` or ``"'x\\x001', y (the header holds a control character in 'x\\x001';
        the file may be in another encoding or damaged)"``.

    Examples
    --------
    >>> names_list(["a", "b", "c"], limit=2)
    'a, b, ... (3 in all)'
    """
    names = [str(n) for n in names]
    text = ", ".join(shown(n) for n in names[:limit])
    if len(names) > limit:
        text += f", ... ({len(names)} in all)"
    odd = [n for n in names if has_control(n)]
    if odd:
        kinds = "a control character" if len(odd) == 1 else "control characters"
        text += (f" ({what} holds {kinds} in {', '.join(shown(n) for n in odd[:3])}"
                 + (f" and {len(odd) - 3} more" if len(odd) > 3 else "")
                 + "; the file may be in another encoding or damaged)")
    return text

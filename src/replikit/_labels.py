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

import contextlib
import contextvars
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["has_control", "shown", "names_list", "escape_controls", "visible_controls",
           "MAX_LABEL", "abbreviate", "Abbreviations", "shortened", "current"]

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


# ---------------------------------------------------------------------------------------------
# long labels: shortened where a reader sees them, whole where a program looks them up

#: The longest label shown whole in a report, a figure or a terminal line (characters).
MAX_LABEL = 40
_ELLIPSIS = "…"
_TAIL = 12  # characters of a label's end kept when two labels start alike


def abbreviate(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis, when it is longer.

    Examples
    --------
    >>> abbreviate("Survey of Health, Ageing and Retirement in Europe, wave 8", 30)
    'Survey of Health, Ageing and …'
    """
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + _ELLIPSIS


class Abbreviations:
    """Short forms of the long labels of one input (study labels, model names, column names,
    class labels), distinct from each other and from the labels shown whole.

    A label longer than ``limit`` characters is cut to its first ``limit - 1`` characters and
    an ellipsis; labels that would then read alike keep their ends too (``Survey…wave 7``,
    ``Survey…wave 8``), and any still alike are numbered (``…(1)``, ``…(2)``).

    Parameters
    ----------
    labels : iterable
        Every label of the input (short ones included: a short form never equals one of them).
    limit : int, default :data:`MAX_LABEL`
        The longest label kept whole.

    Examples
    --------
    >>> wave = "Survey of Health, Ageing and Retirement in Europe, wave "
    >>> ab = Abbreviations(["Leeds", wave + "7", wave + "8"], limit=30)
    >>> sorted(ab.short.values())
    ['Survey of Health, A…pe, wave 7', 'Survey of Health, A…pe, wave 8']
    >>> ab.apply("Leeds and " + wave + "8")
    'Leeds and Survey of Health, A…pe, wave 8'
    """

    def __init__(self, labels: Iterable[Any] = (), limit: int = MAX_LABEL) -> None:
        seen = list(dict.fromkeys(str(v) for v in labels))
        whole = {v for v in seen if len(v) <= limit}
        long = [v for v in seen if len(v) > limit]
        short = {v: abbreviate(v, limit) for v in long}
        taken = set(whole)
        for form in (self._head_tail, self._numbered):
            counts: dict[str, int] = {}
            for v in long:
                counts[short[v]] = counts.get(short[v], 0) + 1
            clash = [v for v in long if counts[short[v]] > 1 or short[v] in taken]
            for i, v in enumerate(clash, start=1):
                short[v] = form(v, limit, i)
        self.limit = limit
        #: full label -> its short form (long labels only)
        self.short: dict[str, str] = short
        self._order()

    def _order(self) -> None:
        # longest first: a label inside a longer one is replaced after it (no regular
        # expression: compiling one of a 100,000-character label takes seconds)
        self._longest = sorted(self.short, key=len, reverse=True)

    @staticmethod
    def _head_tail(label: str, limit: int, i: int) -> str:
        tail = min(_TAIL, limit // 3)
        return label[:limit - tail - 1] + _ELLIPSIS + label[-tail:]

    @staticmethod
    def _numbered(label: str, limit: int, i: int) -> str:
        mark = f"({i})"
        return label[:limit - len(mark) - 1] + _ELLIPSIS + mark

    def __bool__(self) -> bool:
        return bool(self.short)

    @classmethod
    def from_lookup(cls, lookup: dict[str, str] | None) -> Abbreviations:
        """The abbreviations a :meth:`lookup` describes (a report's ``meta['labels']``)."""
        ab = cls()
        ab.short = {str(full): str(s) for s, full in (lookup or {}).items()}
        ab._order()
        return ab

    def lookup(self) -> dict[str, str]:
        """Short form -> full label (what a report's JSON keeps, to look a label up)."""
        return {s: full for full, s in self.short.items()}

    def apply(self, text: Any) -> Any:
        """``text`` with every long label in it replaced by its short form (anything but a
        string is returned as it is)."""
        if not self.short or not isinstance(text, str) or len(text) <= self.limit:
            return text
        for label in self._longest:
            if len(label) <= len(text) and label in text:
                text = text.replace(label, self.short[label])
        return text

    def apply_deep(self, obj: Any, *, keep_exact: bool = False) -> Any:
        """:meth:`apply` to every string in ``obj`` (dicts, lists and tuples walked; keys
        too). With ``keep_exact``, a string that *is* a long label is kept whole (a value a
        program looks up), only the texts around labels are shortened."""
        if not self.short:
            return obj
        if isinstance(obj, str):
            return obj if keep_exact and obj in self.short else self.apply(obj)
        if isinstance(obj, dict):
            return {self.apply_deep(k, keep_exact=keep_exact):
                    self.apply_deep(v, keep_exact=keep_exact) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return type(obj)(self.apply_deep(v, keep_exact=keep_exact) for v in obj)
        return obj


_CURRENT: contextvars.ContextVar[Abbreviations | None] = contextvars.ContextVar(
    "replikit_abbreviations", default=None)


@contextlib.contextmanager
def shortened(abbreviations: Abbreviations | None) -> Iterator[None]:
    """Inside, figures shorten these labels (:func:`current`)."""
    token = _CURRENT.set(abbreviations)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> Abbreviations | None:
    """The abbreviations in force (:func:`shortened`), or None."""
    return _CURRENT.get()

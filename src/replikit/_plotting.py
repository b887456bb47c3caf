"""Figures for every capability: created without pyplot (so the user's backend is never
switched) and rendered to SVG, inline for the HTML report or as a standalone file.

``new_figure`` returns a :class:`matplotlib.figure.Figure` with its own Agg canvas; it never calls
``matplotlib.use``. ``svg_document`` gives a valid standalone SVG file (XML prologue, SVG and
xlink namespaces), ``svg_inline`` the same drawing fit for inlining in HTML (no prologue; the
HTML parser puts ``<svg>`` in the SVG namespace by itself). Both are deterministic: the same
figure gives the same bytes (fixed id salt, no dates or creator metadata).
"""

from __future__ import annotations

import io
import os
import re

__all__ = ["new_figure", "new_axes", "axes_or_new", "svg_document", "svg_inline", "save_svg"]

_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')


def new_figure(width: float = 6.4, height: float = 3.6):
    """A matplotlib figure with an Agg canvas, outside pyplot (no display needed)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def new_axes(width: float = 6.4, height: float = 3.6):
    """The single axes of a :func:`new_figure`."""
    return new_figure(width, height).add_subplot()


def axes_or_new(ax=None, width: float = 6.4, height: float = 3.6):
    """``ax`` if given, else the axes of a new figure (the ``ax=None`` convention of every
    plot function)."""
    return ax if ax is not None else new_axes(width, height)


def svg_document(fig) -> str:
    """Render ``fig`` as a standalone SVG document (valid XML, opens in any viewer).

    Mathtext is switched off for every text of the figure but the tick formatters' own
    ``$\\mathdefault{...}$`` labels: labels come from user data, and a ``$`` in a study or
    column name must print as a dollar sign.
    """
    import matplotlib
    from matplotlib.text import Text

    # Labels come from user data (study, model and column names): a '$' must print as a dollar,
    # not start mathtext (which raises on unbalanced or invalid TeX). Draw once with mathtext
    # off so that lazily made tick labels exist, then keep mathtext only for the formatters'
    # own '$\mathdefault{...}$' strings (log-axis ticks such as 10^2).
    with matplotlib.rc_context({"text.parse_math": False}):
        fig.draw_without_rendering()
    for text in fig.findobj(Text):
        label = text.get_text()
        text.set_parse_math(label.startswith("$") and label.endswith("$")
                            and "\\mathdefault" in label)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "replikit"}):
        fig.savefig(buf, format="svg", metadata={"Creator": None, "Date": None,
                                                 "Format": None, "Type": None})
    return re.sub(r"<metadata>.*?</metadata>", "", buf.getvalue(), flags=re.S)


def svg_inline(fig) -> str:
    """Render ``fig`` as an ``<svg>`` element for inlining in HTML: no XML prologue or DOCTYPE,
    namespace declarations dropped (the HTML parser supplies them)."""
    svg = svg_document(fig)
    svg = svg[svg.index("<svg"):]
    head_end = svg.index(">")
    return _XMLNS.sub("", svg[:head_end]) + svg[head_end:]


def save_svg(fig, path: str | os.PathLike) -> str:
    """Write ``fig`` to ``path`` as a standalone SVG file (atomically); return the path."""
    from ._outputs import write_text_atomic

    return str(write_text_atomic(path, svg_document(fig)))
